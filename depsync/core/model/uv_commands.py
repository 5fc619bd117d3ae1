"""The uv commands one RUN instruction runs: found through shells (sh -c, heredocs) and program wrappers (env, sudo, timeout...), with their flags and words."""

from __future__ import annotations

import re
from collections import ChainMap
from typing import Protocol

from depsync.core.model.shell import (
    Command,
    ExpansionBudget,
    Word,
    assignment,
    expand_word,
    split_commands,
)
from depsync.records import field, record, replace

_UV_PIP_PIN = re.compile(r"\buv==(\d+(?:\.\d+)*)")


# Nesting of `sh -c "bash -c '...'"` followed. Real Dockerfiles nest one level; each level
# re-reads a value already bounded by the expansion caps, so this bounds the work too.
MAX_WRAPPER_DEPTH = 4


# uv's command line, as uv 0.13.9 (`uv help <command>`) and 0.7.2 accept it.
# Global options uv takes before the subcommand, and which of them take a value:
_UV_GLOBAL_VALUE = frozenset(
    {"--color", "--allow-insecure-host", "--directory", "--project", "--config-file", "--cache-dir", "--python-preference",
     "--preview-features", "--python-fetch", "--python-downloads"}
)  # fmt: skip


_UV_NOT_RUN = frozenset({"-V", "--version", "-h", "--help"})  # uv prints and exits


# Options of `uv run`/`sync`/`export`/`pip ...` that take a value (the word after them is
# not the command `uv run` runs):
VALUE_OPTIONS = frozenset(
    {"--allow-insecure-host", "--build-constraints", "--cache-dir", "--cert", "--color", "--config-file", "--config-setting",
     "--config-settings-package", "--constraints", "--default-index", "--depth", "--directory", "--editable", "--env-file",
     "--exclude-newer", "--exclude-newer-package", "--excludes", "--extra", "--extra-index-url", "--find-links", "--fork-strategy",
     "--format", "--group", "--index", "--index-strategy", "--index-url", "--keyring-provider", "--link-mode", "--no-binary",
     "--no-binary-package", "--no-build-isolation-package", "--no-build-package", "--no-editable-package", "--no-emit-package",
     "--no-extra", "--no-group", "--no-install-package", "--no-sources-package", "--only-binary", "--only-group", "--output-file",
     "--output-format", "--overrides", "--package", "--prefix", "--prerelease", "--prerelease-package", "--project", "--python",
     "--python-platform", "--python-version", "--refresh-package", "--reinstall-package", "--requirements", "--resolution",
     "--script", "--target", "--torch-backend", "--upgrade-group", "--upgrade-package", "--with", "--with-editable",
     "--with-requirements", "--python-preference", "--preview-features", "--python-downloads",
     "-C", "-P", "-b", "-c", "-d", "-e", "-f", "-i", "-o", "-p", "-r", "-t", "-w"}
)  # fmt: skip


_UV_RUN_FLAGS = frozenset({"--script", "-s", "--module", "-m"})  # flags of `uv run` that take a value elsewhere


_SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "mksh", "zsh", "busybox"})


_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)*)?\Z")


class _Wrapper:
    """A program that runs the command after its own options (`nice -n 5 uv sync`)."""

    def __init__(self, value_options: frozenset[str] = frozenset(), positionals: int = 0, no_command: frozenset[str] = frozenset()) -> None:
        self.value_options = value_options  # options taking the next word (or `=value`, or attached for short ones)
        self.positionals = positionals  # words before the command that are not options (`timeout 60 uv sync`)
        self.no_command = no_command  # options after which nothing is run (`command -v uv`)


_WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})),
    "nice": _Wrapper(frozenset({"-n", "--adjustment"})),
    "nohup": _Wrapper(),
    "time": _Wrapper(frozenset({"-f", "--format", "-o", "--output"})),
    "exec": _Wrapper(frozenset({"-a"})),
    "command": _Wrapper(no_command=frozenset({"-v", "-V"})),
    "builtin": _Wrapper(),
    "sudo": _Wrapper(
        frozenset({"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from", "-D", "--chdir",
                   "-R", "--chroot", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user"}),
        no_command=frozenset({"-l", "--list", "-v", "--validate", "-V", "--version", "-K", "--remove-timestamp"}),
    ),  # fmt: skip
    "doas": _Wrapper(frozenset({"-u", "-C"})),
    "runuser": _Wrapper(frozenset({"-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell", "-w", "--whitelist-environment"})),
    "timeout": _Wrapper(frozenset({"-s", "--signal", "-k", "--kill-after"}), positionals=1),
    "stdbuf": _Wrapper(frozenset({"-i", "--input", "-o", "--output", "-e", "--error"})),
    "ionice": _Wrapper(frozenset({"-c", "--class", "-n", "--classdata"}), no_command=frozenset({"-p", "--pid", "-P", "--pgid", "-u", "--uid"})),
    "xargs": _Wrapper(
        frozenset({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines", "-n", "--max-args", "-P",
                   "--max-procs", "-s", "--max-chars", "--process-slot-var"})
    ),  # fmt: skip
}


# `su [options] [user] -c SCRIPT` runs a script; these options take a value
_SU_VALUE = frozenset({"-c", "--command", "-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"})


@record
class Arg:
    """A flag value after ARG/ENV/shell expansion; `unresolved` names what could not be resolved."""

    value: str
    line: int
    unresolved: tuple[str, ...] = ()
    capped: bool = False  # unresolved because an expansion went past a cap of depsync/limits.py
    may_split: bool = False  # an unquoted unresolved word: it may stand for several words (`${FLAGS}`)
    word: Word | None = field(default=None, compare=False, repr=False)  # as written, for a script a shell runs


@record
class UvCommand:
    """One `uv sync` / `uv pip install` / ... that a build of the Dockerfile runs."""

    subcommand: str  # "sync", "pip install", "lock", "export", "run", ...
    line: int
    stage: str
    words: tuple[Arg, ...] = field(repr=False)  # uv's options after the subcommand (for `uv run`: before its command)
    text: str = ""
    env: tuple[tuple[str, str | None], ...] = ()  # UV_* variables uv sees; None: no single value
    exec_form: bool = False  # in `RUN ["uv", ...]`: no variable is expanded
    onbuild: bool = False
    # what the RUN's `--mount=type=secret` mounts give: the variables (env=NAME) and the files
    # (target=, default /run/secrets/<id>) a secret is read from; see reads_secret()
    secrets: frozenset[str] = frozenset()

    def reads_secret(self, unresolved: str) -> bool:
        """Is this unresolved name (`$TOKEN`, `$(cat /run/secrets/x)`) a BuildKit secret's value?"""
        name = unresolved.lstrip("$").strip("{}")
        if name in self.secrets:
            return True
        if unresolved.startswith(("$(", "`")):
            return "/run/secrets/" in unresolved or any(s.startswith("/") and s in unresolved for s in self.secrets)
        return False

    def flag_values(self, *names: str) -> list[Arg]:
        """Values of a repeatable option (`--extra x`, `--extra=x`, and for a short one `-Ex`)."""
        values = []
        words = self.words
        for index, word in enumerate(words):
            for name in names:
                if word.value == name and index + 1 < len(words):
                    values.append(words[index + 1])
                elif word.value.startswith(name + "="):
                    values.append(replace(word, value=word.value[len(name) + 1 :]))
                elif len(name) == 2 and name[0] == "-" and name[1] != "-" and word.value.startswith(name) and len(word.value) > 2:
                    values.append(replace(word, value=word.value[2:]))
        return values

    def has_flag(self, *names: str) -> bool:
        return any(w.value in names for w in self.words)

    def unresolved(self) -> list[Arg]:
        return [w for w in self.words if w.unresolved]

    def env_value(self, name: str) -> tuple[bool, str | None]:
        """(is the variable set for uv, its value or None when it has no single value)."""
        for key, value in self.env:
            if key == name:
                return True, value
        return False, None


@record
class UvPin:
    version: str
    line: int
    how: str  # "ARG UV_VERSION", "pip install uv==", "COPY --from=ghcr.io/astral-sh/uv"


class Collector(Protocol):
    """Where what a RUN instruction runs is collected (the Dockerfile's builder): the expansion
    budget shared by the whole file, and the uv pins and uv commands found."""

    budget: ExpansionBudget
    pins: list[UvPin]
    commands: list[UvCommand]



class _Run:
    """The uv commands of one RUN: its script, the scripts its shells run, its wrappers."""

    def __init__(self, builder: Collector, stage: str, onbuild: bool, variables: ChainMap[str, str | None], oversized: ChainMap[str, bool]) -> None:
        self.builder, self.stage, self.onbuild = builder, stage, onbuild
        self.variables, self.oversized = variables, oversized
        self.secrets: frozenset[str] = frozenset()

    def script(self, text: str, first_line: int, bodies: list[tuple[str, int]] | None, env: dict[str, str | None], depth: int) -> None:
        parsed = split_commands(text, first_line, bodies)
        own = self.variables.maps[0]
        exported: set[str] = set()
        # plain assignments in the script: one value is used, two different values are unresolved
        for command in parsed:
            if not command:
                continue
            head = command[0].text
            declaring = head in ("export", "declare", "local", "typeset", "readonly") and len(command) > 1 and not command[0].quoted
            if not (declaring or all(assignment(w) for w in command)):
                continue
            exporting = head == "export" or (head in ("declare", "typeset") and any(w.text.startswith("-") and "x" in w.text for w in command[1:]))
            for word in command[1:] if declaring else command:
                pair = assignment(word)
                if pair is None:
                    if exporting and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text):
                        exported.add(word.text)  # `export NAME`: the shell variable goes to the environment
                    continue
                name = pair[0]
                value = self.value(name, word.after(len(name) + 1))
                own[name] = value if own.get(name, value) == value else None
                if exporting:
                    exported.add(name)
        script_env = dict(env)
        for name in set(script_env) | exported:
            if name.startswith("UV_") and (name in own or name in exported) and name in self.variables:
                script_env[name] = self.variables.get(name)
        for command in parsed:
            self.command(command, script_env, depth)

    def value(self, name: str, word: Word) -> str | None:
        """A variable's value from the word after `NAME=` (None when any part is unresolved)."""
        result = expand_word(word, self.variables, self.builder.budget)
        self.oversized[name] = result.capped or any(self.oversized.get(n, False) for n in result.unresolved)
        return None if result.unresolved else result.text

    def command(self, command: Command, env: dict[str, str | None], depth: int) -> None:
        start = 0
        inline: dict[str, str | None] = {}
        while start < len(command):
            pair = assignment(command[start])
            if pair is None:
                break
            inline[pair[0]] = self.value(pair[0], command[start].after(len(pair[0]) + 1))
            start += 1
        words = command[start:]
        if not words and command.stdin is None:
            return
        self.pip_pins(words)
        args: list[Arg] = []
        for word in words:
            result = expand_word(word, self.variables, self.builder.budget)
            if not word.quoted and not result.unresolved and result.text != word.text:
                args += [Arg(part, word.line) for part in result.text.split()]  # field splitting of an unquoted expansion
            else:
                capped = result.capped or any(self.oversized.get(n, False) for n in result.unresolved)
                args.append(Arg(result.text, word.line, result.unresolved, capped, bool(result.unresolved) and not word.quoted, word))
        line = words[0].line if words else (command.stdin[1] if command.stdin else 0)
        self.interpret(args, command.stdin, {**env, **{k: v for k, v in inline.items() if k.startswith("UV_")}}, line, depth)

    def pip_pins(self, words: list[Word]) -> None:
        """`pip install uv==0.7.2` pins the image's uv (the words as written, as before)."""
        if any(w.text in ("pip", "pip3") or w.text.endswith("/pip") for w in words[:3]) or (
            len(words) > 2 and words[1].text == "-m" and words[2].text == "pip"
        ):
            for word in words:
                match = _UV_PIP_PIN.search(word.text)
                if match:
                    self.builder.pins.append(UvPin(match.group(1), word.line, "pip install uv=="))

    def interpret(
        self, args: list[Arg], stdin: tuple[str, int] | None, env: dict[str, str | None], line: int, depth: int, *, exec_form: bool = False
    ) -> None:
        """Look through wrappers to the program args run; record it when it is uv."""
        i = 0
        while i < len(args):
            program = args[i].value.rsplit("/", 1)[-1]
            if program in _WRAPPERS:
                found = self.unwrap(program, args, i + 1, env)
                if found is None:
                    return
                i = found
                continue
            if program == "su" or (program == "runuser" and any(a.value in ("-c", "--command") for a in args[i + 1 :])):
                self.su(args, i + 1, env, depth)
                return
            if program in _SHELLS:
                self.shell(args, i + 1, stdin, env, depth)
                return
            if program == "uv":
                self.uv(args, i + 1, env, exec_form)
                return
            if _PYTHON.match(program) and [a.value for a in args[i + 1 : i + 3]] == ["-m", "uv"]:
                self.uv(args, i + 3, env, exec_form)
                return
            return

    def unwrap(self, program: str, args: list[Arg], i: int, env: dict[str, str | None]) -> int | None:
        """Skip a wrapper's options; the index of the command it runs, None when it runs none.

        `env` is updated with what the wrapper does to the environment: `env -i` and `sudo`
        (which resets it unless -E) clear it, `env A=B` and `sudo A=B` set variables."""
        spec = _WRAPPERS[program]
        keep_env = program != "sudo"
        split_once = False
        while i < len(args):
            value = args[i].value
            if value == "--":
                i += 1
                break
            if program == "env" and value == "-":
                env.clear()
                i += 1
                continue
            if not value.startswith("-") or value == "-" or (program == "nice" and re.fullmatch(r"-\d+", value)):
                if program == "nice" and value.startswith("-"):
                    i += 1  # `nice -10 cmd`
                    continue
                break
            if value in spec.no_command:
                return None
            if program == "env" and value in ("-i", "--ignore-environment"):
                env.clear()
            if program == "env" and value in ("-u", "--unset") and i + 1 < len(args):
                env.pop(args[i + 1].value, None)
            if program == "sudo" and (value in ("-E", "--preserve-env") or value.startswith("--preserve-env=")):
                keep_env = True
            if program == "env" and value in ("-S", "--split-string") and i + 1 < len(args) and not split_once:
                # `env -S "A=1 uv sync"`: the string is split into words (once: a `-S` inside
                # it is left alone, so hostile nesting cannot make this quadratic)
                split = [Arg(part, args[i + 1].line, args[i + 1].unresolved, args[i + 1].capped) for part in args[i + 1].value.split()]
                args[i : i + 2] = split
                split_once = True
                continue
            if value.startswith("--"):
                i += 1 if "=" in value or value not in spec.value_options else 2
            elif value[:2] in spec.value_options:
                i += 1 if len(value) > 2 else 2  # `-n5` or `-n 5`
            else:
                i += 1
        if program in ("env", "sudo"):
            if not keep_env:
                env.clear()
            while i < len(args) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[i].value):
                name, _, value = args[i].value.partition("=")
                if name.startswith("UV_"):
                    env[name] = None if args[i].unresolved else value
                i += 1
        i += spec.positionals
        return i if i < len(args) else None

    def su(self, args: list[Arg], i: int, env: dict[str, str | None], depth: int) -> None:
        """`su app -c 'uv sync'`, `runuser -u app -c ...`: the -c script runs (a login shell resets the environment)."""
        script: Arg | None = None
        while i < len(args):
            value = args[i].value
            if value in ("-", "-l", "--login"):
                env.clear()
            if value in ("-c", "--command") and i + 1 < len(args):
                script = args[i + 1]
            elif value.startswith("--command="):
                script = replace(args[i], value=value.partition("=")[2])
            i += 2 if value in _SU_VALUE else 1
        if script is not None and depth < MAX_WRAPPER_DEPTH:
            self.script(_script_text(script), script.line, None, dict(env), depth + 1)

    def shell(self, args: list[Arg], i: int, stdin: tuple[str, int] | None, env: dict[str, str | None], depth: int) -> None:
        """`sh -c SCRIPT`, `bash -lc "..."`, `bash -ex <<EOF`: the script the shell runs."""
        command_mode = False
        if i < len(args) and args[i - 1].value.rsplit("/", 1)[-1] == "busybox":
            if args[i].value.rsplit("/", 1)[-1] not in _SHELLS - {"busybox"}:
                return
            i += 1  # `busybox sh -c ...`
        while i < len(args):
            value = args[i].value
            if value in ("--", "-"):
                i += 1
                break
            if value.startswith("--"):
                i += 2 if value in ("--rcfile", "--init-file") else 1
                continue
            if len(value) > 1 and value[0] in "-+":
                i += 1
                for flag in value[1:]:
                    if flag == "c":
                        command_mode = True
                    elif flag in "oO":
                        i += 1  # `-o pipefail`, `-euxo pipefail`: the option name is the next word
                continue
            break
        if depth >= MAX_WRAPPER_DEPTH:
            return
        if command_mode:
            if i < len(args):
                self.script(_script_text(args[i]), args[i].line, None, dict(env), depth + 1)
            return
        if i >= len(args) and stdin is not None:  # no script file: the shell reads the here-document
            self.script(stdin[0], stdin[1], None, dict(env), depth + 1)

    def uv(self, args: list[Arg], i: int, env: dict[str, str | None], exec_form: bool) -> None:
        # global options before the subcommand: `uv -q --directory src sync`
        while i < len(args):
            value = args[i].value
            if value in _UV_NOT_RUN:
                return
            if value in _UV_GLOBAL_VALUE:
                i += 2
            elif value.startswith("-"):
                i += 1  # `-q`, `-qq`, `--offline`, `--color=never`; an unknown one makes uv fail anyway
            else:
                break
        if i >= len(args):
            return
        subcommand, start = args[i].value, i + 1
        if subcommand in ("pip", "tool", "python", "cache", "self", "auth") and start < len(args):
            subcommand, start = f"{subcommand} {args[start].value}", start + 1
        words = args[start:]
        if subcommand == "run":
            words = words[: _run_options_end(words)]
        text = " ".join(a.value for a in args)
        self.builder.commands.append(
            UvCommand(subcommand, args[i].line, self.stage, tuple(words), text, tuple(sorted(env.items())), exec_form, self.onbuild, self.secrets)
        )


def secret_mounts(flags: tuple[str, ...]) -> frozenset[str]:
    """The variables and files `RUN --mount=type=secret,id=x[,target=/p][,env=NAME]` provides."""
    out: set[str] = set()
    for flag in flags:
        if not flag.startswith("--mount="):
            continue
        fields = dict(part.partition("=")[::2] for part in flag[len("--mount=") :].split(","))
        if fields.get("type") != "secret":
            continue
        if fields.get("env"):
            out.add(fields["env"])
        target = fields.get("target") or fields.get("dst") or fields.get("destination")
        secret_id = fields.get("id")
        if target:
            out.add(target)
        elif secret_id:
            out.add(f"/run/secrets/{secret_id}")
    return frozenset(out)


def _script_text(arg: Arg) -> str:
    """The script a shell gets from `-c`: the word as written (its inner shell expands it, and
    its continuation lines keep their numbers), or the exec-form argument itself."""
    return arg.word.text if arg.word is not None else arg.value


def _run_options_end(words: list[Arg]) -> int:
    """Where uv's own options of `uv run` end: at `--` or at the command it runs."""
    i = 0
    while i < len(words):
        value = words[i].value
        if value == "--" or not value.startswith("-") or value == "-":
            return i
        if value in _UV_RUN_FLAGS or "=" in value:
            i += 1
        elif value in VALUE_OPTIONS:
            i += 2
        elif value[:2] in VALUE_OPTIONS and len(value) > 2 and value[1] != "-":
            i += 1  # `-p3.12`
        else:
            i += 1
    return i
