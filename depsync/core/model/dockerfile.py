"""A Dockerfile as depsync needs it: per-stage variables, the `uv` commands a build runs, and the uv version pin.

Parsed with BuildKit's own parser (the `dockerfile` package), so heredocs, line
continuations and escape directives are read exactly as `docker build` reads them.
A uv command counts when BuildKit would run it:

- shell-form and exec-form `RUN` (`RUN ["uv", "sync"]`, `RUN ["/bin/sh", "-c", "..."]`)
  and `ONBUILD RUN` (run by images built FROM this one);
- comment and empty lines inside a `\\` continuation are dropped, as BuildKit drops them;
- a heredoc that is the whole command runs as a script (`#!` names its interpreter); any
  other heredoc goes to the shell with its line (`bash -ex <<EOF` runs the body, `cat
  <<EOF > f` does not);
- statically visible wrappers are looked through: `sh -c '...'`, `bash -lc "..."`, `env
  A=B`, `nice`, `nohup`, `time`, `exec`, `command`, `sudo`, `su -c`, `timeout`, `xargs`, ...;
- uv's global options may come before the subcommand (`uv -q --directory x sync`).

Each uv command records the UV_* environment variables it sees (ENV and ARG of its
stage, ENV inherited from a parent stage, `export`s of its script, inline `A=B uv`,
`env A=B uv`), because uv reads its flags from them too (UV_LOCKED, UV_FROZEN, ...).
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace

from depsync.core import limits
from depsync.errors import DepsyncError
from depsync.core.model.shell import Command, ExpansionBudget, Word, assignment, expand_bounded, expand_word, split_commands

_UV_IMAGE = re.compile(r"ghcr\.io/astral-sh/uv:(\d+\.\d+\.\d+)")
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


@dataclass(frozen=True)
class Arg:
    """A flag value after ARG/ENV/shell expansion; `unresolved` names what could not be resolved."""

    value: str
    line: int
    unresolved: tuple[str, ...] = ()
    capped: bool = False  # unresolved because an expansion went past a cap of depsync/limits.py
    may_split: bool = False  # an unquoted unresolved word: it may stand for several words (`${FLAGS}`)
    word: Word | None = field(default=None, compare=False, repr=False)  # as written, for a script a shell runs


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class UvPin:
    version: str
    line: int
    how: str  # "ARG UV_VERSION", "pip install uv==", "COPY --from=ghcr.io/astral-sh/uv"


@dataclass(frozen=True)
class Dockerfile:
    path: str
    uv_commands: tuple[UvCommand, ...]
    uv_pins: tuple[UvPin, ...]
    from_images: tuple[tuple[str, int], ...]  # (image after expansion, line)
    args: dict[str, str]  # ARG/ENV defaults of the last stage, after build args

    @classmethod
    def from_text(cls, text: str, path: str = "Dockerfile", build_args: dict[str, str] | None = None) -> Dockerfile:
        import dockerfile as buildkit

        # BuildKit's parser is superlinear on heredocs: refuse a file no CI image is built from
        limits.check_size(len(text.encode("utf-8", "replace")), path, limits.MAX_DOCKERFILE_BYTES, "Dockerfile")
        limits.check_nesting(text, path)  # the parser is cubic in `${` nesting
        try:
            instructions = buildkit.parse_string(text)
        except buildkit.GoParseError as exc:
            raise DepsyncError(f"Dockerfile does not parse: {exc}", path) from None
        return _Builder(text.splitlines(), path, build_args or {}).build(instructions)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _split_assignments(values: tuple[str, ...], instruction: str) -> list[tuple[str, str | None]]:
    """ARG a=1 b gives ("a=1", "b"); BuildKit gives ENV as flat key, value pairs (both ENV forms)."""
    if instruction == "ENV":
        return [(key, _unquote(value)) for key, value in zip(values[0::2], values[1::2])]
    out: list[tuple[str, str | None]] = []
    for item in values:
        name, sep, value = item.partition("=")
        out.append((name, _unquote(value) if sep else None))
    return out


def _escape_char(source_lines: list[str]) -> str:
    """The `# escape=` parser directive (only valid before any instruction or comment)."""
    for line in source_lines:
        match = re.match(r"^#\s*escape\s*=\s*(\S)\s*\Z", line, re.IGNORECASE)
        if match:
            return match.group(1)
        if not re.match(r"^#\s*\w+\s*=", line):
            break
    return "\\"


# -- the text of a RUN instruction ----------------------------------------------------------------

_KEYWORD = re.compile(r"\s*(?:ONBUILD\s+)?RUN\b", re.IGNORECASE)
_HEREDOC_ONLY = re.compile(r"^<<-?[ \t]*([\"']?)[^\s\"'<>|&;()]+\1[ \t]*\Z")
_TOKEN = re.compile(r"\S*")


def _instruction_text(source_lines: list[str], start: int, end: int, escape: str) -> str:
    """The lines start..end of an instruction as the shell gets them, line numbers kept.

    BuildKit drops comment and empty lines inside a continuation, and takes an escape
    followed by blanks as a continuation; each dropped line becomes a bare escape here,
    so the next line still continues the command and every line keeps its number.
    """
    lines = source_lines[start - 1 : end]
    out = lines[:1]
    for line in lines[1:]:
        stripped = line.strip()
        out.append(escape if not stripped or stripped.startswith("#") else line)
    cleaned = [line.rstrip(" \t") if line.rstrip(" \t").endswith(escape) else line for line in out]
    body = "\n".join(cleaned)
    if escape == "`":
        body = re.sub(r"`\n", "\\\n", body)
    return body


def _skip_blanks(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos] in " \t":
            pos += 1
        elif text.startswith("\\\n", pos):
            pos += 2
        else:
            break
    return pos


def _after_flags(text: str) -> int:
    """Index after `RUN` and its `--mount=...` flags, across continuations (BuildKit reads every
    leading `--` word as a flag, so the command never starts with one)."""
    match = _KEYWORD.match(text)
    pos = match.end() if match else 0
    while True:  # one token per flag: linear however many flags there are
        pos = _skip_blanks(text, pos)
        if not text.startswith("--", pos):
            break
        token = _TOKEN.match(text, pos)
        pos = token.end() if token else pos
    return _skip_blanks(text, pos)


def _interpreter(first_line: str) -> str:
    """The program a `#!` line names (`/usr/bin/env bash -e` gives bash)."""
    words = first_line[2:].split()
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return rest[0].rsplit("/", 1)[-1] if rest else ""
    return program


class _Script:
    def __init__(self, text: str, first_line: int, bodies: list[tuple[str, int]] | None = None) -> None:
        self.text, self.first_line = text, first_line
        self.bodies = bodies  # here-documents of the RUN line, in order


class _Exec:
    def __init__(self, argv: tuple[str, ...], line: int) -> None:
        self.argv, self.line = argv, line


def _run_program(ins, source_lines: list[str], escape: str) -> _Script | _Exec | None:  # type: ignore[no-untyped-def]
    """What a RUN (or ONBUILD RUN) hands to the shell, or the argv it executes."""
    if ins.json:
        return _Exec(tuple(ins.value), ins.start_line)
    if not ins.heredocs:
        text = _instruction_text(source_lines, ins.start_line, ins.end_line, escape)
        pos = _after_flags(text)
        return _Script(text[pos:], ins.start_line + text.count("\n", 0, pos))
    # heredoc bodies end the instruction, each followed by its terminator line
    sizes = [h.content.count("\n") + (1 if h.content and not h.content.endswith("\n") else 0) for h in ins.heredocs]
    head_end = max(ins.start_line, ins.end_line - sum(size + 1 for size in sizes))
    text = _instruction_text(source_lines, ins.start_line, head_end, escape)
    pos = _after_flags(text)
    head, head_line = text[pos:], ins.start_line + text.count("\n", 0, pos)
    bodies, line = [], head_end + 1
    for heredoc, size in zip(ins.heredocs, sizes):
        bodies.append((heredoc.content, line))
        line += size + 1
    if len(bodies) == 1 and _HEREDOC_ONLY.match(head.strip()):
        # `RUN <<EOF`: BuildKit runs the body itself, as a file when it starts with `#!`
        content, first = bodies[0]
        if content.startswith("#!") and _interpreter(content.split("\n", 1)[0]) not in _SHELLS:
            return None  # a Python (or other) script: not shell
        return _Script(content, first)
    return _Script(head, head_line, bodies)


# -- the build -------------------------------------------------------------------------------------


class _Stage:
    # plain classes for what never leaves this module: a dataclass costs ~1 ms at import
    def __init__(self, name: str, variables: dict[str, str | None], env: dict[str, str | None], posix_shell: bool = True) -> None:
        self.name = name
        self.variables = variables  # ARG and ENV of the stage: both are the environment of its RUNs
        self.env = env  # ENV alone: what a stage built FROM this one inherits
        self.posix_shell = posix_shell  # SHELL ["pwsh", ...] makes shell-form RUN not POSIX shell


def _assign(
    name: str, text: str, variables: Mapping[str, str | None], budget: ExpansionBudget, oversized: MutableMapping[str, bool]
) -> str | None:
    """The value a variable takes from text: None when any part of it is unresolved.

    Keeping a partly expanded text would hand `${X}` on as if it were a value; None makes
    every later use unresolved (reported). `oversized` remembers which names are None
    because a cap was hit, directly or through another such name, for the message.
    """
    result = expand_bounded(text, variables, budget)
    oversized[name] = result.capped or any(oversized.get(n, False) for n in result.unresolved)
    return None if result.unresolved else result.text


class _Builder:
    def __init__(self, source_lines: list[str], path: str, build_args: dict[str, str]) -> None:
        self.lines, self.path, self.build_args = source_lines, path, build_args
        self.escape = _escape_char(source_lines)
        self.budget = ExpansionBudget()  # one per file: every expansion below is charged to it
        self.oversized: dict[str, bool] = {}  # see _assign
        self.commands: list[UvCommand] = []
        self.pins: list[UvPin] = []

    def build(self, instructions) -> Dockerfile:  # type: ignore[no-untyped-def]
        global_args: dict[str, str | None] = {}
        stages: dict[str, _Stage] = {}
        stage: _Stage | None = None
        images: list[tuple[str, int]] = []
        for ins in instructions:
            if ins.cmd == "FROM":
                words = list(ins.value)
                if not words:
                    raise DepsyncError("FROM names no image", f"{self.path}:{ins.start_line}")
                image = expand_bounded(words[0], global_args, self.budget).text
                images.append((image, ins.start_line))
                name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
                parent = stages.get(image.lower())  # ENV (and SHELL) carry over to a stage built FROM a stage
                stage = _Stage(name, dict(parent.env) if parent else {}, dict(parent.env) if parent else {}, parent.posix_shell if parent else True)
                stages[name.lower()] = stage
                for match in _UV_IMAGE.finditer(image):
                    self.pins.append(UvPin(match.group(1), ins.start_line, "FROM ghcr.io/astral-sh/uv"))
                continue
            if ins.cmd in ("ARG", "ENV"):
                self.declare(ins, global_args, stage)
                continue
            if ins.cmd == "COPY":
                for match in _UV_IMAGE.finditer(" ".join(ins.flags)):
                    self.pins.append(UvPin(match.group(1), ins.start_line, "COPY --from=ghcr.io/astral-sh/uv"))
                continue
            if ins.cmd == "SHELL" and stage is not None and ins.value:
                stage.posix_shell = ins.value[0].rsplit("/", 1)[-1] in _SHELLS
                continue
            onbuild = ins.cmd == "ONBUILD" and (ins.sub_cmd or "").upper() == "RUN"
            if (ins.cmd == "RUN" or onbuild) and stage is not None:
                self.run(ins, stage, onbuild)
        last = stage.variables if stage else {}
        args = {k: v for k, v in {**global_args, **last}.items() if v is not None}
        return Dockerfile(self.path, tuple(self.commands), tuple(self.pins), tuple(images), args)

    def declare(self, ins, global_args: dict[str, str | None], stage: _Stage | None) -> None:  # type: ignore[no-untyped-def]
        scope = global_args if stage is None else stage.variables
        # a view, not a merged copy: a copy per instruction is quadratic in the number of ARGs
        visible: Mapping[str, str | None] = ChainMap(stage.variables, global_args) if stage else global_args
        for name, value in _split_assignments(tuple(ins.value), ins.cmd):
            if ins.cmd == "ARG" and name in self.build_args:
                value = self.build_args[name]
                self.oversized[name] = False
            elif value is None and ins.cmd == "ARG":
                value = global_args.get(name)
            elif value is not None:
                value = _assign(name, value, visible, self.budget, self.oversized)
            scope[name] = value
            if ins.cmd == "ENV" and stage is not None:
                stage.env[name] = value
            if name == "UV_VERSION" and value:
                self.pins.append(UvPin(value, ins.start_line, f"{ins.cmd} UV_VERSION"))

    def run(self, ins, stage: _Stage, onbuild: bool) -> None:  # type: ignore[no-untyped-def]
        program = _run_program(ins, self.lines, self.escape)
        if program is None or (isinstance(program, _Script) and not stage.posix_shell):
            return
        # ONBUILD runs in the child's build: only ENV reaches it, ARGs do not
        base = stage.env if onbuild else stage.variables
        env = {k: v for k, v in base.items() if k.startswith("UV_")}
        run = _Run(self, stage.name, onbuild, ChainMap({}, base), ChainMap({}, self.oversized))
        run.secrets = secret_mounts(tuple(getattr(ins, "flags", ()) or ()))
        if isinstance(program, _Exec):
            args = [Arg(value, program.line) for value in program.argv]
            run.interpret(args, None, env, program.line, 0, exec_form=True)
        else:
            run.script(program.text, program.first_line, program.bodies, env, 0)


class _Run:
    """The uv commands of one RUN: its script, the scripts its shells run, its wrappers."""

    def __init__(self, builder: _Builder, stage: str, onbuild: bool, variables: ChainMap[str, str | None], oversized: ChainMap[str, bool]) -> None:
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
