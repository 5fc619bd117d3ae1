"""A Dockerfile as depsync needs it: per-stage variables, `uv` commands and the uv version pin.

Parsed with BuildKit's own parser (the `dockerfile` package), so heredocs, line
continuations and escape directives are read exactly as `docker build` reads them.
"""

from __future__ import annotations

import re
from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field, replace

from depsync import limits
from depsync.errors import DepsyncError
from depsync.model.shell import ExpansionBudget, Word, assignment, expand_bounded, split_commands

_UV_IMAGE = re.compile(r"ghcr\.io/astral-sh/uv:(\d+\.\d+\.\d+)")
_UV_PIP_PIN = re.compile(r"\buv==(\d+(?:\.\d+)*)")


@dataclass(frozen=True)
class Arg:
    """A flag value after ARG/ENV/shell expansion; `unresolved` names what could not be resolved."""

    value: str
    line: int
    unresolved: tuple[str, ...] = ()
    capped: bool = False  # unresolved because an expansion went past a cap of depsync/limits.py


@dataclass(frozen=True)
class UvCommand:
    """One `uv sync` / `uv pip install` / ... in a RUN instruction."""

    subcommand: str  # "sync", "pip install", "lock", "export", "run", ...
    line: int
    stage: str
    words: tuple[Arg, ...] = field(repr=False)
    text: str = ""

    def flag_values(self, *names: str) -> list[Arg]:
        """Values of a repeatable option (`--extra x`, `--extra=x`)."""
        values = []
        words = self.words
        for index, word in enumerate(words):
            for name in names:
                if word.value == name and index + 1 < len(words):
                    values.append(words[index + 1])
                elif word.value.startswith(name + "="):
                    values.append(replace(word, value=word.value[len(name) + 1 :]))
        return values

    def has_flag(self, *names: str) -> bool:
        return any(w.value in names for w in self.words)

    def unresolved(self) -> list[Arg]:
        return [w for w in self.words if w.unresolved]


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
        try:
            instructions = buildkit.parse_string(text)
        except buildkit.GoParseError as exc:
            raise DepsyncError(f"Dockerfile does not parse: {exc}", path) from None
        return _build(instructions, text.splitlines(), path, build_args or {})


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
        match = re.match(r"^#\s*escape\s*=\s*(\S)\s*$", line, re.IGNORECASE)
        if match:
            return match.group(1)
        if not re.match(r"^#\s*\w+\s*=", line):
            break
    return "\\"


def _run_script(instruction, source_lines: list[str], escape: str) -> tuple[str, int]:  # type: ignore[no-untyped-def]
    """The shell text a RUN executes and the file line its first character stands on."""
    if instruction.heredocs:
        # the body of the first heredoc starts on the line after the `<<EOF` line
        head = instruction.original.split("\n", 1)[0]
        offset = 1 + head.count("\n")
        return "\n".join(h.content for h in instruction.heredocs), instruction.start_line + offset
    if instruction.json:
        return " ".join(instruction.value), instruction.start_line
    # the parser joins continuation lines; take the raw lines so line numbers stay exact
    body = "\n".join(source_lines[instruction.start_line - 1 : instruction.end_line])
    if escape == "`":
        body = re.sub(r"`[ \t]*\n", "\\\n", body)
    body = re.sub(r"^\s*RUN\s+", "", body, flags=re.IGNORECASE)
    flags = _RUN_FLAGS.match(body)  # one match: cutting one flag at a time copied the body per flag
    return body[flags.end() :] if flags else body, instruction.start_line


_RUN_FLAGS = re.compile(r"(?:--\S+\s+)*")


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


def _uv_subcommand(words: list[str]) -> tuple[str, int] | None:
    """If words run uv, its subcommand and the index where options start."""
    start = 0
    while start < len(words) and assignment(Word(words[start], 0, False)):
        start += 1  # leading `VAR=x uv ...`
    rest = words[start:]
    if not rest:
        return None
    program = rest[0].rsplit("/", 1)[-1]
    if program in ("python", "python3") and rest[1:3] == ["-m", "uv"]:
        rest, start = rest[2:], start + 2
    elif program not in ("uv", "uvx"):
        return None
    if program == "uvx":
        return ("tool run", start + 1)
    if len(rest) > 2 and rest[1] == "pip":
        return (f"pip {rest[2]}", start + 3)
    if len(rest) > 1:
        return (rest[1], start + 2)
    return None


def _build(instructions, source_lines: list[str], path: str, build_args: dict[str, str]) -> Dockerfile:  # type: ignore[no-untyped-def]
    global_args: dict[str, str | None] = {}
    stage_vars: dict[str, str | None] = {}
    oversized: dict[str, bool] = {}  # see _assign
    budget = ExpansionBudget()  # one per file: every expansion below is charged to it
    escape = _escape_char(source_lines)
    stage = ""
    stage_count = 0
    commands: list[UvCommand] = []
    pins: list[UvPin] = []
    images: list[tuple[str, int]] = []
    for ins in instructions:
        if ins.cmd == "FROM":
            stage_count += 1
            words = list(ins.value)
            if not words:
                raise DepsyncError("FROM names no image", f"{path}:{ins.start_line}")
            image = expand_bounded(words[0], global_args, budget).text
            images.append((image, ins.start_line))
            stage = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(stage_count - 1)
            stage_vars = {}
            for match in _UV_IMAGE.finditer(image):
                pins.append(UvPin(match.group(1), ins.start_line, "FROM ghcr.io/astral-sh/uv"))
            continue
        if ins.cmd in ("ARG", "ENV"):
            scope = global_args if stage_count == 0 else stage_vars
            # a view, not a merged copy: a copy per instruction is quadratic in the number of ARGs
            visible: Mapping[str, str | None] = ChainMap(stage_vars, global_args) if stage_count else global_args
            for name, value in _split_assignments(tuple(ins.value), ins.cmd):
                if ins.cmd == "ARG" and name in build_args:
                    value = build_args[name]
                    oversized[name] = False
                elif value is None and ins.cmd == "ARG":
                    value = global_args.get(name)
                elif value is not None:
                    value = _assign(name, value, visible, budget, oversized)
                scope[name] = value
                if name == "UV_VERSION" and value:
                    pins.append(UvPin(value, ins.start_line, f"{ins.cmd} UV_VERSION"))
            continue
        if ins.cmd == "COPY":
            for match in _UV_IMAGE.finditer(" ".join(ins.flags)):
                pins.append(UvPin(match.group(1), ins.start_line, "COPY --from=ghcr.io/astral-sh/uv"))
            continue
        if ins.cmd != "RUN":
            continue
        script, first_line = _run_script(ins, source_lines, escape)
        parsed = split_commands(script, first_line)
        # the script's own assignments go in the first layer; stage_vars is never copied
        variables: ChainMap[str, str | None] = ChainMap({}, stage_vars)
        script_oversized: ChainMap[str, bool] = ChainMap({}, oversized)
        # plain assignments in the script: one value is used, two different values are unresolved
        for command in parsed:
            if all(assignment(w) for w in command) or (command[0].text in ("export", "declare", "local") and len(command) > 1):
                for word in command:
                    pair = assignment(word)
                    if not pair:
                        continue
                    name, text = pair
                    value = _assign(name, text, variables, budget, script_oversized)
                    previous = variables.get(name, value) if name in variables and name not in stage_vars else value
                    variables[name] = value if previous == value else None
        for command in parsed:
            expanded: list[Arg] = []
            for word in command:
                result = expand_bounded(word.text, variables, budget)
                whole_reference = word.text.startswith("$") and not word.quoted and not result.unresolved
                if whole_reference and result.text != word.text:
                    expanded += [Arg(part, word.line) for part in result.text.split()]
                else:
                    capped = result.capped or any(script_oversized.get(n, False) for n in result.unresolved)
                    expanded.append(Arg(result.text, word.line, result.unresolved, capped))
            found = _uv_subcommand([a.value for a in expanded])
            if found:
                subcommand, start = found
                commands.append(
                    UvCommand(subcommand, command[0].line, stage, tuple(expanded[start:]), " ".join(w.text for w in command))
                )
            elif any(w.text in ("pip", "pip3") or w.text.endswith("/pip") for w in command[:3]) or (
                len(command) > 2 and command[1].text == "-m" and command[2].text == "pip"
            ):
                for word in command:
                    match = _UV_PIP_PIN.search(word.text)
                    if match:
                        pins.append(UvPin(match.group(1), word.line, "pip install uv=="))
    args = {k: v for k, v in {**global_args, **stage_vars}.items() if v is not None}
    return Dockerfile(path, tuple(commands), tuple(pins), tuple(images), args)
