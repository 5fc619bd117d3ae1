"""The generated parts of docs/: written from the code, so the reference cannot drift from it.

    python -m depsync.cli.docs           rewrite the generated blocks in docs/
    python -m depsync.cli.docs --check   exit 1 when a block is out of date (tests/test_docs.py)

A generated block sits between two comment lines that name it:

    <!-- begin generated: cli-reference (python -m depsync.cli.docs) -->
    ...
    <!-- end generated: cli-reference -->

Everything outside the blocks is written by hand and left alone. The blocks are:

- cli-reference (docs/cli.md): every command, argument and option, from the argparse parser;
- config-keys (docs/configuration.md): every [tool.depsync] key, its type, default and readers;
- rules (docs/check.md): the rule table and every rule's page, from the rule registry;
- decision-table (docs/reconcile.md): reconcile's first-match table for sources, from the sync rules;
- surface-decision-table (docs/reconcile.md): the same for the rest of the dependency surface;
- layout (CONTRIBUTING.md): every module of the package with the first paragraph of its docstring.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from depsync.cli.common import HELP_WIDTH
from depsync.cli.parser import parser
from depsync.core.config import Config, DockerfileSpec, valid_keys
from depsync.records import fields, record

REGENERATE = "python -m depsync.cli.docs"


# -- the command line ----------------------------------------------------------------------------


@contextmanager
def _help_width() -> Iterator[None]:
    """argparse wraps usage lines at the terminal's width: fix it, so the page is the same everywhere."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(HELP_WIDTH)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def _subcommands(root: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line summary, parser) of each listed command, in --help's order.

    argparse has no public way to walk its subparsers; `_choices_actions` holds exactly the
    commands `--help` lists (an internal one registered without help= is not among them)."""
    (action,) = [a for a in root._actions if isinstance(a, argparse._SubParsersAction)]
    return [(choice.dest, choice.help or "", action.choices[choice.dest]) for choice in action._choices_actions]


def _code(text: str) -> str:
    return f"`{text}`"


def _spelling(action: argparse.Action) -> str:
    if not action.option_strings:
        return _code(str(action.metavar or action.dest))
    metavar = "" if action.nargs == 0 else f" {action.metavar or action.dest.upper()}"
    return ", ".join(_code(option + metavar) for option in action.option_strings)


def _default(action: argparse.Action) -> str | None:
    """The default, when the help text does not say it already and it is a value worth naming."""
    value = action.default
    if value in (None, False, [], argparse.SUPPRESS) or isinstance(action, argparse._CountAction):
        return None
    if "default" in (action.help or ""):
        return None
    return str(value)


def _option_line(action: argparse.Action) -> str:
    text = (action.help or "").replace("%%", "%")
    extras = []
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        extras.append("one of " + ", ".join(_code(str(c)) for c in action.choices))
    if isinstance(action, argparse._AppendAction) and "repeatable" not in text:
        extras.append("repeatable")
    default = _default(action)
    if default is not None:
        extras.append(f"default {_code(default)}")
    suffix = f" ({'; '.join(extras)})" if extras else ""
    return f"- {_spelling(action)}: {text}{suffix}"


def _groups(command: argparse.ArgumentParser) -> Iterator[tuple[str, list[argparse.Action]]]:
    for group in command._action_groups:  # argparse keeps the groups --help shows only here
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS and not isinstance(a, argparse._HelpAction)]
        if actions:
            yield group.title or "options", actions


def _command_section(name: str, summary: str, command: argparse.ArgumentParser) -> list[str]:
    about = " ".join(command.description.split()) if command.description else summary[:1].upper() + summary[1:] + "."
    lines = [f"### `depsync {name}`", "", about, ""]
    lines += ["```", command.format_usage().rstrip(), "```", ""]
    for title, actions in _groups(command):
        if title == "global options":
            lines += ["Global options: [`-q`, `-v`, `--color`, `--debug`](#global-options), before or after the command.", ""]
            continue
        lines += [f"**{'Arguments' if title == 'positional arguments' else title.capitalize()}**", ""]
        lines += [_option_line(a) for a in actions] + [""]
    if command.epilog:
        lines += ["```", command.epilog.rstrip(), "```", ""]
    return lines


def cli_reference() -> str:
    """Every command the parser lists, with its usage, arguments, options, examples and exit codes."""
    with _help_width():
        root = parser()
        commands = _subcommands(root)
        lines = ["### `depsync`", "", " ".join((root.description or "").split()), "", "```", root.format_usage().rstrip(), "```", ""]
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| [`{name}`](#depsync-{name}) | {summary} |" for name, summary, _ in commands] + [""]
        for title, actions in _groups(root):
            if isinstance(actions[0], argparse._SubParsersAction):
                continue
            lines += [f"#### {title.capitalize()}", ""] + [_option_line(a) for a in actions] + [""]
        if root.epilog:
            lines += ["```", root.epilog.rstrip(), "```", ""]
        for name, summary, command in commands:
            lines += _command_section(name, summary, command)
    return "\n".join(lines).rstrip() + "\n"


# -- [tool.depsync] ------------------------------------------------------------------------------


@record
class KeyDoc:
    type: str  # as TOML spells it
    read_by: tuple[str, ...]  # the commands whose behaviour the key changes


# Which commands read a key is not visible in Config; it is written here, next to the generator,
# and tests/test_docs.py fails when config.py has a key this table does not describe.
KEYS: dict[str, KeyDoc] = {
    "pyproject": KeyDoc("string (path)", ("check", "reconcile", "lock", "guard", "install", "merge driver")),
    "lock": KeyDoc("string (path)", ("check", "reconcile", "lock", "guard", "install", "merge driver")),
    "dockerfiles": KeyDoc("array of paths or `{ path, build-args }` tables", ("check", "reconcile", "lock", "guard", "merge driver")),
    "owner-ref": KeyDoc("string (git ref)", ("check", "reconcile", "guard", "merge driver")),
    "upstream-ref": KeyDoc("string (git ref)", ("reconcile", "guard", "merge driver")),
    "protected-paths": KeyDoc("array of strings (paths)", ("check", "reconcile", "guard")),
    "take-from-main": KeyDoc("array of strings (paths or globs)", ("reconcile", "guard")),
    "allowed-hosts": KeyDoc("array of strings (host names)", ("check",)),
    "severity": KeyDoc('table: rule id = `"error"`, `"warning"`, `"info"` or `"off"`', ("check",)),
    "conflict-policy": KeyDoc('string: `"dev"` or `"main"`', ("reconcile", "guard", "merge driver")),
    "default-side": KeyDoc('string: `"dev"` or `"main"`', ("reconcile",)),
    "owned-by-dev": KeyDoc("array of strings (package names)", ("reconcile", "guard", "merge driver")),
    "prefer": KeyDoc('table: package = `"dev"` or `"main"`', ("reconcile", "guard", "merge driver")),
    "image": KeyDoc("string (image reference)", ("check", "lock", "reconcile")),
    "image-version-policy": KeyDoc('string: `"release"`, `"exact"`, `"public"`, `"minor"`, `"major"` or `"off"`', ("check",)),
}


def _toml(value: object) -> str:
    """A default as it would be written in [tool.depsync]."""
    if isinstance(value, DockerfileSpec):
        return _toml(value.path) if not value.build_args else f"{{ path = {_toml(value.path)}, build-args = {_toml(value.build_args)} }}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f" {k} = {_toml(v)}" for k, v in value.items()) + (" }" if value else "}")
    return str(value)


def _defaults() -> dict[str, str]:
    config = Config()
    by_field = {f.name: getattr(config, f.name) for f in fields(config)}
    out = {}
    for key in valid_keys():
        value = by_field.get(key.replace("-", "_"))
        out[key] = "none" if value is None else _code(_toml(value))
    out["dockerfiles"] = "discovered ([the Dockerfiles that run uv on the project](#defaults-that-fit-any-repository))"
    return out


def config_keys() -> str:
    """The [tool.depsync] table: every key config.py accepts, with its type, default and readers."""
    descriptions, defaults = valid_keys(), _defaults()
    rows = ["| key | type | default | read by | what it sets |", "|---|---|---|---|---|"]
    for key, description in descriptions.items():
        doc = KEYS[key]
        cells = (f"`{key}`", doc.type, defaults[key], ", ".join(doc.read_by), description)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


# -- check rules and reconcile decisions ---------------------------------------------------------


def _shift_headings(markdown: str, levels: int) -> str:
    """Headings down by `levels` (a page inside a page); lines inside code fences are not headings."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def check_rules() -> str:
    """The rule table (`depsync rule --all`) and every rule's page (`depsync rule ID`)."""
    from depsync.core.rules.docs import render
    from depsync.core.rules.registry import RULES, rule_table

    pages = [_shift_headings(render(rule), 2).rstrip() for rule in RULES.values()]
    return rule_table() + "\n" + "\n\n".join(pages) + "\n"


def decision_table() -> str:
    """Reconcile's first-match table for `[tool.uv.sources]`."""
    from depsync.core.sync.sources import rules_markdown

    return rules_markdown()


def surface_decision_table() -> str:
    """Reconcile's first-match table for every other entry of the dependency surface."""
    from depsync.core.sync.surface import rules_markdown

    return rules_markdown()


# -- the code's layout --------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1]


def _summary(path: Path) -> str:
    """A module's docstring, its first paragraph on one line (the description CONTRIBUTING.md shows)."""
    import ast

    docstring = ast.get_docstring(ast.parse(path.read_text(), str(path))) or ""
    return " ".join(docstring.split("\n\n", 1)[0].split())


def layout() -> str:
    """Every module of the package with its docstring's first paragraph, folder by folder."""
    rows = ["| module | what it is |", "|---|---|"]
    modules = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts)
    for path in sorted(modules, key=lambda p: (len(p.relative_to(PACKAGE).parts) > 1, p.relative_to(PACKAGE).parent.as_posix(), p.name)):
        name = path.relative_to(PACKAGE.parent).as_posix()
        summary = _summary(path) or ("`python -m depsync`" if path.name == "__main__.py" else "")
        rows.append(f"| `{name}` | {summary.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


# -- writing the blocks --------------------------------------------------------------------------

BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "cli-reference": ("docs/cli.md", cli_reference),
    "config-keys": ("docs/configuration.md", config_keys),
    "rules": ("docs/check.md", check_rules),
    "decision-table": ("docs/reconcile.md", decision_table),
    "surface-decision-table": ("docs/reconcile.md", surface_decision_table),
    "layout": ("CONTRIBUTING.md", layout),
}


def begin_marker(name: str) -> str:
    return f"<!-- begin generated: {name} ({REGENERATE}) -->"


def end_marker(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def fill(text: str, name: str, content: str) -> str:
    """`text` with the block `name` holding `content`; ValueError when its markers are missing."""
    begin, end = begin_marker(name), end_marker(name)
    head, found, rest = text.partition(begin + "\n")
    body, found_end, tail = rest.partition(end)
    if not found or not found_end:
        raise ValueError(f"no block {name!r}: the file needs the lines {begin!r} and {end!r}")
    return f"{head}{begin}\n\n{content.rstrip()}\n\n{end}{tail}"


def regenerate(repo: Path, *, check: bool = False) -> list[str]:
    """Rewrite (or, with check, only compare) every generated block; the files that were stale."""
    stale = []
    for path in sorted({file for file, _ in BLOCKS.values()}):
        target = repo / path
        text = target.read_text()
        new = text
        for name, (file, generate) in BLOCKS.items():
            if file == path:
                new = fill(new, name, generate())
        if new != text:
            stale.append(path)
            if not check:
                target.write_text(new)
    return stale


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(prog=REGENERATE, description="Rewrite the generated blocks of docs/ from the code.")
    arguments.add_argument("--check", action="store_true", help="write nothing; exit 1 when a block is out of date")
    arguments.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[2], help="the depsync checkout (default: this one)")
    args = arguments.parse_args(argv)
    try:
        stale = regenerate(args.repo, check=args.check)
    except (OSError, ValueError) as exc:
        print(f"depsync docs: error: {exc}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"{path}: {'out of date (run `' + REGENERATE + '`)' if args.check else 'regenerated'}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
