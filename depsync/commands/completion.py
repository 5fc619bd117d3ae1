"""`depsync completion bash|zsh|fish`: a static completion script, generated from the parser.

The script is made from the same argparse parser `--help` comes from, so a new option
completes as soon as it exists. Install it the usual way for each shell:

    depsync completion bash > ~/.local/share/bash-completion/completions/depsync
    depsync completion zsh > "${fpath[1]}/_depsync"
    depsync completion fish > ~/.config/fish/completions/depsync.fish
"""

from __future__ import annotations

import argparse
import re

from depsync.records import field, record

SHELLS = ("bash", "zsh", "fish")


@record
class Option:
    flags: tuple[str, ...]
    help: str
    takes_value: bool = False
    choices: tuple[str, ...] = ()
    kind: str = "any"  # what the value is: "file", "dir", "ref", "choice", "any" (free text), "" (no value)
    repeat: bool = False


@record
class Positional:
    name: str
    kind: str  # "file", "dir", "ref", "choice", "any"
    choices: tuple[str, ...] = ()


@record
class Command:
    name: str
    help: str
    options: tuple[Option, ...] = ()
    positionals: tuple[Positional, ...] = field(default=())


def _kind(action: argparse.Action) -> str:
    """What an option's value is, from its metavar and type: "dir" (the project path),
    "file", "ref" (a git ref) or "any"."""
    from pathlib import Path

    metavar = str(action.metavar or action.dest).upper()
    if metavar in ("DIR", "DIRECTORY", "PROJECT") or (not action.option_strings and metavar == "PATH"):
        return "dir"
    if metavar == "REF":
        return "ref"
    if action.type is Path or "PATH" in metavar or "FILE" in metavar or metavar in ("OLD", "NEW"):
        return "file"
    return "any"


def _help(action: argparse.Action) -> str:
    text = (action.help or "").split(";")[0].split(" (")[0]
    text = re.sub(r"%\(\w+\)s", "", text).replace("%%", "%")
    return " ".join(text.split())[:70]


def _choices_of(action: argparse.Action) -> tuple[str, ...]:
    if action.choices:
        return tuple(str(c) for c in action.choices)
    if str(action.metavar) == "RULE-ID":
        from depsync.core.rules.registry import RULES

        return tuple(RULES)
    return ()


def _options(parser: argparse.ArgumentParser) -> tuple[tuple[Option, ...], tuple[Positional, ...]]:
    options, positionals = [], []
    for action in parser._actions:  # argparse has no public way to list them
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if action.option_strings:
            takes = action.nargs != 0 and not isinstance(
                action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._CountAction, argparse._HelpAction, argparse._VersionAction, argparse._StoreConstAction)
            )
            choices = _choices_of(action) if takes else ()
            options.append(
                Option(tuple(action.option_strings), _help(action), takes, choices, ("" if not takes else "choice" if choices else _kind(action)), isinstance(action, argparse._AppendAction))
            )
        else:
            choices = _choices_of(action)
            positionals.append(Positional(action.dest, "choice" if choices else _kind(action), choices))
    return tuple(options), tuple(positionals)


def commands(parser: argparse.ArgumentParser) -> tuple[Command, tuple[Command, ...]]:
    """(the root with its global options, the visible commands)."""
    root_options, _ = _options(parser)
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in subparsers._choices_actions}
    out = []
    for name, sub in subparsers.choices.items():
        if name not in helps or helps[name] == argparse.SUPPRESS:
            continue  # hidden (merge-driver) or an alias
        options, positionals = _options(sub)
        out.append(Command(name, " ".join(str(helps[name]).split())[:70], options, positionals))
    return Command("depsync", "", root_options), tuple(out)


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    root, cmds = commands(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](root, cmds)


# -- bash ---------------------------------------------------------------------------------------


def _words(items: list[str] | tuple[str, ...]) -> str:
    return " ".join(items)


_GIT_REFS = "git for-each-ref --format='%(refname:short)' 2>/dev/null"


def _bash_value_cases(options: tuple[Option, ...], indent: str) -> list[str]:
    lines = []
    for option in options:
        if not option.takes_value:
            continue
        pattern = "|".join(option.flags)
        if option.choices:
            action = f'COMPREPLY=($(compgen -W "{_words(option.choices)}" -- "$cur"))'
        elif option.kind == "file":
            action = 'COMPREPLY=($(compgen -f -- "$cur"))'
        elif option.kind == "dir":
            action = 'COMPREPLY=($(compgen -d -- "$cur"))'
        elif option.kind == "ref":
            action = "_depsync_refs"
        else:
            action = "COMPREPLY=()"
        lines.append(f"{indent}{pattern}) {action}; return ;;")
    return lines


def _bash_positional(command: Command) -> str:
    kinds = {p.kind for p in command.positionals}
    choices = [c for p in command.positionals for c in p.choices]
    if choices:
        return f'COMPREPLY=($(compgen -W "{_words(choices)}" -- "$cur"))'
    if "file" in kinds:
        return 'COMPREPLY=($(compgen -f -- "$cur"))'
    if "dir" in kinds:
        return 'COMPREPLY=($(compgen -d -- "$cur"))'
    return "COMPREPLY=()"


def _bash(root: Command, cmds: tuple[Command, ...]) -> str:
    names = [c.name for c in cmds]
    root_flags = [f for o in root.options for f in o.flags]
    lines = [
        "# bash completion for depsync (generated by `depsync completion bash`)",
        "_depsync_refs() {",
        "    # each ref name is one literal word: `compgen -W` would expand a name such as",
        "    # x$(touch${IFS}F), and run it; the names are matched here and quoted by readline",
        "    local ref",
        "    COMPREPLY=()",
        "    while IFS= read -r ref; do",
        '        [[ "$ref" == "$cur"* ]] && COMPREPLY+=("$ref")',
        f"    done < <({_GIT_REFS})",
        "}",
        "_depsync() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" command="" i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in',
        f"            {'|'.join(names)}) command=\"${{COMP_WORDS[i]}}\"; break ;;",
        "        esac",
        "    done",
        '    case "$command" in',
        '        "")',
        '            case "$prev" in',
        *_bash_value_cases(root.options, "                "),
        "            esac",
        f'            COMPREPLY=($(compgen -W "{_words(names + root_flags)}" -- "$cur"))',
        "            ;;",
    ]
    for command in cmds:
        flags = [f for o in command.options for f in o.flags]
        lines += [
            f"        {command.name})",
            '            case "$prev" in',
            *_bash_value_cases(command.options, "                "),
            "            esac",
            '            if [[ "$cur" == -* ]]; then',
            f'                COMPREPLY=($(compgen -W "{_words(flags)}" -- "$cur"))',
            "            else",
            f"                {_bash_positional(command)}",
            "            fi",
            "            ;;",
        ]
    lines += ["    esac", "}", "complete -o filenames -o bashdefault -F _depsync depsync", ""]
    return "\n".join(lines)


# -- zsh ----------------------------------------------------------------------------------------


def _zsh_text(text: str) -> str:
    """Text inside an _arguments spec: no brackets, colons or single quotes."""
    return text.replace("'", "").replace("[", "(").replace("]", ")").replace(":", " -").replace("\\", "")


def _zsh_option(option: Option) -> list[str]:
    if option.takes_value:
        if option.choices:
            value = f":{option.flags[-1].lstrip('-')}:({' '.join(option.choices)})"
        elif option.kind == "file":
            value = ":file:_files"
        elif option.kind == "dir":
            value = ":directory:_files -/"
        elif option.kind == "ref":
            value = ":ref:_depsync_refs"
        else:
            value = ":value: "
    else:
        value = ""
    star = "*" if option.repeat else ""
    help_ = _zsh_text(option.help)
    if len(option.flags) > 1:
        exclusive = " ".join(option.flags)
        flags = "{" + ",".join(f + ("=" if option.takes_value and f.startswith("--") else "") for f in option.flags) + "}"
        return [f"'({exclusive})'{star}{flags}'[{help_}]{value}'"]
    flag = option.flags[0] + ("=" if option.takes_value and option.flags[0].startswith("--") else "")
    return [f"'{star}{flag}[{help_}]{value}'"]


def _zsh_positionals(command: Command) -> list[str]:
    out = []
    for p in command.positionals:
        if p.choices:
            action = f"({' '.join(p.choices)})"
        elif p.kind == "dir":
            action = "_files -/"
        elif p.kind == "file":
            action = "_files"
        else:
            action = " "
        out.append(f"'::{_zsh_text(p.name)}:{action}'")
    return out


def _zsh(root: Command, cmds: tuple[Command, ...]) -> str:
    lines = [
        "#compdef depsync",
        "# zsh completion for depsync (generated by `depsync completion zsh`)",
        "",
        "_depsync_refs() {",
        "    local -a refs",
        f'    refs=(${{(f)"$({_GIT_REFS})"}})',
        "    compadd -a refs",
        "}",
        "",
        "_depsync() {",
        "    local curcontext=\"$curcontext\" state line",
        "    typeset -A opt_args",
        "    _arguments -C \\",
    ]
    lines += [f"        {spec} \\" for option in root.options for spec in _zsh_option(option)]
    lines += ["        '1: :->command' \\", "        '*:: :->arguments'", "", '    case "$state" in', "        command)", "            local -a commands", "            commands=("]
    lines += [f"                '{c.name}:{_zsh_text(c.help)}'" for c in cmds]
    lines += ["            )", "            _describe -t commands 'depsync command' commands", "            ;;", "        arguments)", '            case "${line[1]}" in']
    for command in cmds:
        specs = [spec for option in command.options for spec in _zsh_option(option)] + _zsh_positionals(command)
        lines.append(f"                {command.name})")
        lines.append("                    _arguments \\")
        lines += [f"                        {spec} \\" for spec in specs[:-1]]
        lines.append(f"                        {specs[-1]}" if specs else "                        ''")
        lines.append("                    ;;")
    lines += ["            esac", "            ;;", "    esac", "}", "", 'if [ "$funcstack[1]" = "_depsync" ]; then', '    _depsync "$@"', "else", "    compdef _depsync depsync", "fi", ""]
    return "\n".join(lines)


# -- fish ---------------------------------------------------------------------------------------


def _fish_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(option: Option, condition: str) -> str:
    parts = ["complete -c depsync", f"-n {_fish_text(condition)}"]
    for flag in option.flags:
        parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
    if option.takes_value:
        if option.choices:
            parts.append(f"-x -a {_fish_text(' '.join(option.choices))}")
        elif option.kind in ("file", "dir"):
            parts.append("-r -F")
        elif option.kind == "ref":
            parts.append(f"-x -a {_fish_text('(' + _GIT_REFS + ')')}")
        else:
            parts.append("-x")
    parts.append(f"-d {_fish_text(option.help)}")
    return " ".join(parts)


def _fish(root: Command, cmds: tuple[Command, ...]) -> str:
    names = " ".join(c.name for c in cmds)
    lines = [
        "# fish completion for depsync (generated by `depsync completion fish`)",
        "complete -c depsync -f",
        f"set -l __depsync_commands {names}",
    ]
    no_command = f"not __fish_seen_subcommand_from {names}"
    lines += [f"complete -c depsync -n {_fish_text(no_command)} -a {c.name} -d {_fish_text(c.help)}" for c in cmds]
    lines += [_fish_option(option, no_command) for option in root.options]
    for command in cmds:
        seen = f"__fish_seen_subcommand_from {command.name}"
        lines += [_fish_option(option, seen) for option in command.options]
        for positional in command.positionals:
            if positional.choices:
                lines.append(f"complete -c depsync -n {_fish_text(seen)} -a {_fish_text(' '.join(positional.choices))}")
            elif positional.kind in ("file", "dir"):
                lines.append(f"complete -c depsync -n {_fish_text(seen)} -F")
    return "\n".join(lines) + "\n"


def run(parser: argparse.ArgumentParser, shell: str) -> int:
    print(script(parser, shell), end="")
    return 0
