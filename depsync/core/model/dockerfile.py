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

from depsync.core import limits
from depsync.core.model.shell import ExpansionBudget, expand_bounded
from depsync.core.model.uv_commands import (
    _SHELLS,
    Arg,
    UvCommand,
    UvPin,
    _Run,
    secret_mounts,
)
from depsync.core.suppression import Suppression, dockerfile_suppressions
from depsync.errors import DepsyncError
from depsync.records import record

_UV_IMAGE = re.compile(r"ghcr\.io/astral-sh/uv:(\d+\.\d+\.\d+)")


@record
class Dockerfile:
    path: str
    uv_commands: tuple[UvCommand, ...]
    uv_pins: tuple[UvPin, ...]
    from_images: tuple[tuple[str, int], ...]  # (image after expansion, line)
    args: dict[str, str]  # ARG/ENV defaults of the last stage, after build args
    # `# depsync: ignore[...]` comments, placed by the instruction spans and shell lines (core/suppression.py)
    suppressions: tuple[Suppression, ...] = ()

    @classmethod
    def from_text(cls, text: str, path: str = "Dockerfile", build_args: dict[str, str] | None = None) -> Dockerfile:
        from depsync.threads import import_buildkit

        buildkit = import_buildkit()  # its Go threads never take the process's signals

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


def _script_lines(ins, program: _Script) -> tuple[set[int], set[int]]:  # type: ignore[no-untyped-def]
    """(lines of a shell RUN on which a trailing ` # ...` is a comment for the shell, lines of
    its heredoc scripts). The first: the last line of a shell-form RUN (the lines before it end
    in the escape), and the lines of a heredoc the shell runs (`RUN <<EOF`, `RUN bash -ex
    <<EOF`) that do not continue."""
    if not ins.heredocs:
        return {ins.end_line}, set()
    bodies = [(program.text, program.first_line)] if program.bodies is None else program.bodies
    head = program.text.split(None, 1)[0].rsplit("/", 1)[-1] if program.bodies is not None and program.text.strip() else ""
    if program.bodies is not None and head not in _SHELLS:
        return set(), set()  # `cat <<EOF > file`: the body is data, not a script
    comment_lines: set[int] = set()
    body_lines: set[int] = set()
    for content, first in bodies:
        for offset, text in enumerate(content.split("\n")):
            body_lines.add(first + offset)
            if not text.rstrip().endswith("\\"):
                comment_lines.add(first + offset)
    return comment_lines, body_lines


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
        self.spans: list[tuple[int, int]] = []  # (first, last) line of each instruction
        self.shell_lines: set[int] = set()  # lines where a trailing `#` starts a shell comment
        self.script_lines: set[int] = set()  # lines of heredoc scripts (a comment line there is the shell's)

    def build(self, instructions) -> Dockerfile:  # type: ignore[no-untyped-def]
        global_args: dict[str, str | None] = {}
        stages: dict[str, _Stage] = {}
        stage: _Stage | None = None
        images: list[tuple[str, int]] = []
        for ins in instructions:
            self.spans.append((ins.start_line, ins.end_line))
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
        suppressions = dockerfile_suppressions(self.lines, self.path, self.spans, self.shell_lines, self.script_lines) if "depsync:" in "".join(self.lines) else []
        return Dockerfile(self.path, tuple(self.commands), tuple(self.pins), tuple(images), args, tuple(suppressions))

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
        if isinstance(program, _Script):
            comment_lines, body_lines = _script_lines(ins, program)
            self.shell_lines.update(comment_lines)
            self.script_lines.update(body_lines)
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
