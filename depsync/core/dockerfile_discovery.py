"""Which of a project's Dockerfiles are its CI Dockerfiles when none are configured (check, lock, reconcile, guard).

The candidates come from depsync/dockerfile_scan.py (bounded, inside the project, no
symlinks). One is checked when it runs uv against this project: a `uv sync`, `uv lock`,
`uv export` or `uv run` (which read the project's pyproject.toml and uv.lock), or a
`uv pip install` of the project itself (`.`, `-e .`, `-r pyproject.toml`, `--group`,
`--extra`). A Dockerfile in the directory of another pyproject.toml (a nested project, a
workspace member with its own image) is that project's. Every candidate not checked is
listed with its reason (`check -v`): nothing is dropped silently.

A candidate that was read but does not parse (BuildKit's parser or depsync's builder rejects
it) or is past depsync's bounds (core/limits.py) cannot be checked. When its raw text shows
a RUN that runs uv on the project (scan_text: the same commands as above, found in the words
of RUN instructions and their heredocs), it is a finding too (rule docker-unparsed): a CI
image that runs `uv sync` must not slip past the gate because its file is unreadable. A
candidate that shows no such command stays a `-v` line only.

decide() is pure: it gets the parsed Dockerfiles (or why one could not be read).
"""

from __future__ import annotations

from collections import deque
from pathlib import PurePosixPath
from typing import Literal

from depsync.core import limits
from depsync.core.lazy_pattern import LazyPattern
from depsync.core.model.dockerfile import Dockerfile, _escape_char
from depsync.core.model.uv_commands import _UV_GLOBAL_VALUE, _UV_NOT_RUN, UvCommand
from depsync.errors import DepsyncError
from depsync.records import field, record

_PROJECT_COMMANDS = frozenset({"sync", "lock", "export", "run"})
_PIP_INSTALLS = frozenset({"pip install", "pip sync", "pip compile"})


@record
class NotParsed:
    """A candidate read but not parsed: why, the line the error names (0: none), whether a bound
    of depsync's refused it (not its syntax), and what its raw text shows (scan_text)."""

    reason: str
    line: int
    bound: bool
    scan: TextScan


@record
class Unparsed:
    """A discovered Dockerfile that runs uv on the project and could not be checked."""

    path: str
    line: int  # the error's line; else an unterminated heredoc's instruction; else the first uv command
    line_is: Literal["error", "heredoc", "uv"]  # what that line is
    error: str
    bound: bool
    uv_command: str  # the first one: `uv sync`
    uv_line: int


@record
class Discovery:
    """What discovery found: the Dockerfiles to check and the candidates left out, with why."""

    checked: tuple[Dockerfile, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (path, reason)
    truncated: bool = False  # the scan stopped at dockerfile_scan.MAX_ENTRIES
    unparsed: tuple[Unparsed, ...] = ()  # of the skipped: those that run uv on the project (a finding)


def owning_project(path: str, projects: tuple[str, ...]) -> str | None:
    """The nearest pyproject.toml below the root whose directory holds path, if any."""
    parents = {p.rsplit("/", 1)[0] for p in projects}
    for parent in PurePosixPath(path).parents:
        if parent.as_posix() in parents:
            return f"{parent.as_posix()}/pyproject.toml"
    return None


def _names_project(value: str) -> bool:
    """A `uv pip install` word that installs from this project (`.`, `-r pyproject.toml`, `--group x`)."""
    return value in (".", "./") or value.endswith(("pyproject.toml", "uv.lock")) or value.startswith(("--group", "--extra", "--all-extras"))


def project_command(dockerfile: Dockerfile) -> UvCommand | None:
    """The first uv command of the Dockerfile that runs on the project (what makes it a CI Dockerfile)."""
    for command in dockerfile.uv_commands:
        if command.subcommand in _PROJECT_COMMANDS:
            return command
        if command.subcommand in _PIP_INSTALLS and any(_names_project(word.value) for word in command.words):
            return command
    return None


def runs_uv_on_project(dockerfile: Dockerfile) -> bool:
    return project_command(dockerfile) is not None


# -- the raw text of a Dockerfile that does not parse ------------------------------------------------

_INSTRUCTION = LazyPattern(r"[ \t]*(\w+)(?:[ \t]+(\w+))?")
# `<<EOF`, `<<-"EOF"`; not a here-string (`<<<`)
_HEREDOC = LazyPattern(r"(?<!<)<<(?!<)(-?)[ \t]*([\"']?)([^\s\"'<>|&;()]+)\2")
# the words of a command, and what ends one: a shell operator or a newline that no escape continues
_WORD = LazyPattern(r"(?<!\\)\n|[;&|()]+|[^\s\"',\[\]\\;&|()`]+")
_ENDS = frozenset("\n;&|()")
# uv's global options before the subcommand (`uv -q --directory src sync`): real commands have a
# few; the cap keeps `uv --directory uv --directory uv ...` from costing quadratic time
_MAX_GLOBAL_WORDS = 16


@record
class TextScan:
    """What the raw text of a Dockerfile shows, read line by line as BuildKit splits it."""

    uv: tuple[tuple[int, str], ...] = ()  # (line, "uv sync") of each uv command on the project a RUN shows
    open_heredoc: int = 0  # the line of the instruction whose heredoc never ends (0: none)


def scan_text(text: str) -> TextScan:
    """The uv commands on the project (the ones decide() checks a parsed file for) that the RUN
    instructions of text show, their heredoc bodies included, and an unterminated heredoc.

    For a file BuildKit's parser rejects: it reads no shell, so `echo "uv sync"` counts too;
    it errs on the side of the finding, which says the file was not checked. One pass, linear."""
    lines = text.splitlines()
    escape = _escape_char(lines)
    found: list[tuple[int, str]] = []
    opened: list[tuple[str, bool]] = []  # heredocs the current instruction opens: word, tabs stripped (`<<-`)
    pending: deque[tuple[str, bool]] = deque()  # those whose body is being read, in order
    run: list[str] = []  # the lines of the current RUN, bodies included (a comment line blanked)
    run_start = start = 0
    continued = heredocs = False
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if pending:
            word, tabs = pending[0]
            if (line.lstrip("\t") if tabs else line).rstrip("\r") == word:
                pending.popleft()
            if run:
                run.append("" if stripped.startswith("#") else line)
            continue
        if continued:  # BuildKit drops comment and empty lines inside a continuation
            if not stripped or stripped.startswith("#"):
                if run:
                    run.append(escape)
                continue
            if run:
                run.append(line.rstrip(" \t"))
        else:
            if run:
                found += _uv_commands("\n".join(run), run_start, escape)
                run = []
            if not stripped or stripped.startswith("#"):
                continue
            start = number
            match = _INSTRUCTION.match(line)
            keyword = (match.group(1) or "").upper() if match else ""
            if keyword == "ONBUILD" and match:
                keyword = (match.group(2) or "").upper()
            heredocs = keyword in ("RUN", "COPY", "ADD")  # the instructions BuildKit reads heredocs for
            if keyword == "RUN":
                run, run_start = [line.rstrip(" \t")], number
        if heredocs:
            opened += [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(line)]
        continued = line.rstrip(" \t").endswith(escape)
        if not continued:  # the instruction ends here: its heredoc bodies follow, in order
            pending, opened = deque(opened), []
    if run:
        found += _uv_commands("\n".join(run), run_start, escape)
    return TextScan(tuple(found), start if pending else 0)


def _uv_commands(text: str, first_line: int, escape: str) -> list[tuple[int, str]]:
    """(line, `uv sync`) of each uv command on the project in the words of text, which starts at
    first_line; uv's global options before the subcommand are skipped as uv_commands.py does."""
    if escape == "`":
        text = text.replace("`\n", "\\\n")
    words: list[tuple[str, int]] = []
    line, last = first_line, 0
    for match in _WORD.finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        words.append((match.group(), line))
    # for `uv pip install ...`: where each command ends, and how many words so far name the
    # project, so each install is judged in constant time (the scan stays linear)
    ends = [len(words)] * (len(words) + 1)
    for index in range(len(words) - 1, -1, -1):
        ends[index] = index if words[index][0][0] in _ENDS else ends[index + 1]
    naming = [0]
    for value, _ in words:
        naming.append(naming[-1] + _names_project(value))
    out = []
    for index, (word, where) in enumerate(words):
        if word != "uv" and not word.endswith("/uv"):
            continue
        i = index + 1
        while i < min(len(words), index + 1 + _MAX_GLOBAL_WORDS) and words[i][0] not in _UV_NOT_RUN and words[i][0][0] not in _ENDS:
            if words[i][0] in _UV_GLOBAL_VALUE:
                i += 2
            elif words[i][0].startswith("-"):
                i += 1
            else:
                break
        if i >= len(words) or words[i][0][0] in _ENDS or words[i][0] in _UV_NOT_RUN:
            continue
        subcommand = words[i][0]
        if subcommand in _PROJECT_COMMANDS:
            out.append((where, f"uv {subcommand}"))
        elif subcommand == "pip" and i + 2 <= ends[i] and f"pip {words[i + 1][0]}" in _PIP_INSTALLS:
            if naming[ends[i]] > naming[i + 2]:
                out.append((where, f"uv pip {words[i + 1][0]}"))
    return out


def not_parsed(text: str, error: DepsyncError) -> NotParsed:
    """What decide() needs of a candidate whose text Dockerfile.from_text refused with error."""
    where = error.where or ""
    _, _, tail = where.rpartition(":")
    # a file past the size bound is read up to MAX_TEXT_SCAN_CHARS (real ones are a few KiB)
    scan = scan_text(text[: limits.MAX_TEXT_SCAN_CHARS])
    return NotParsed(f"not read: {error.message}", int(tail) if tail.isdigit() else 0, isinstance(error, limits.LimitExceeded), scan)


def _unparsed(path: str, found: NotParsed) -> Unparsed | None:
    if not found.scan.uv:
        return None  # no uv command on the project shows: not a CI image of this project, no finding
    uv_line, command = found.scan.uv[0]
    line_is: Literal["error", "heredoc", "uv"]
    if found.line:
        line, line_is = found.line, "error"
    elif found.scan.open_heredoc and found.reason.endswith("unterminated heredoc"):
        line, line_is = found.scan.open_heredoc, "heredoc"
    else:
        line, line_is = uv_line, "uv"
    error = found.reason.removeprefix("not read: ")
    return Unparsed(path, line, line_is, error, found.bound, command, uv_line)


def decide(
    candidates: tuple[str, ...], projects: tuple[str, ...], parsed: dict[str, Dockerfile | NotParsed | str], truncated: bool = False
) -> Discovery:
    """parsed: for each candidate that is not another project's, its model, what its text shows
    when it does not parse (not_parsed), or why it was not read."""
    checked: list[Dockerfile] = []
    skipped: list[tuple[str, str]] = []
    unparsed: list[Unparsed] = []
    for path in candidates:
        owner = owning_project(path, projects)
        if owner is not None:
            skipped.append((path, f"belongs to the project of {owner}"))
            continue
        found = parsed.get(path)
        if found is None:
            skipped.append((path, "not read"))
        elif isinstance(found, str):
            skipped.append((path, found))
        elif isinstance(found, NotParsed):
            skipped.append((path, found.reason))
            finding = _unparsed(path, found)
            if finding is not None:
                unparsed.append(finding)
        elif runs_uv_on_project(found):
            checked.append(found)
        else:
            skipped.append((path, "runs no uv command on this project"))
    return Discovery(tuple(checked), tuple(skipped), truncated, tuple(unparsed))


# -- the one set of CI Dockerfiles every command uses (read by depsync/shell/ci_dockerfiles.py) ----------


@record
class CiDockerfiles:
    """The CI Dockerfiles of a project and how they were chosen."""

    how: Literal["configured", "discovered"]
    dockerfiles: tuple[Dockerfile, ...] = ()
    discovery: Discovery = field(default_factory=Discovery)  # empty when configured

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path of the set, the discovered ones that do not parse included (they are CI
        Dockerfiles too: reconcile keeps dev's, guard compares them)."""
        return tuple(dict.fromkeys((*(d.path for d in self.dockerfiles), *(u.path for u in self.discovery.unparsed))))

    def for_lock(self) -> Dockerfile | None:
        """The Dockerfile `lock` takes its uv version and image from: the first that pins uv, else the first."""
        return next((d for d in self.dockerfiles if d.uv_pins), self.dockerfiles[0] if self.dockerfiles else None)

    def why(self, dockerfile: Dockerfile) -> str:
        """`configured in [tool.depsync] dockerfiles` / `discovered: it runs `uv sync` on the project at line 7`."""
        if self.how == "configured":
            return "configured in [tool.depsync] dockerfiles"
        command = project_command(dockerfile)
        return f"discovered: it runs `uv {command.subcommand}` on the project at line {command.line}" if command else "discovered"

    def describe_lock(self) -> str:
        """One line for `depsync lock`: which Dockerfile gives the uv version and image, and why."""
        chosen = self.for_lock()
        if chosen is None:
            why = "[tool.depsync] dockerfiles is empty" if self.how == "configured" else "no Dockerfile in the project runs uv on it"
            return f"CI Dockerfile: none ({why})"
        pin = f"; it pins uv {chosen.uv_pins[0].version} ({chosen.uv_pins[0].how}, line {chosen.uv_pins[0].line})" if chosen.uv_pins else "; it pins no uv version"
        others = len(self.dockerfiles) - 1
        more = f"; {others} more CI Dockerfile{'s' if others != 1 else ''} checked by `depsync check`" if others else ""
        return f"CI Dockerfile: {chosen.path}, {self.why(chosen)}{pin}{more}"


def refuse_unparsed(ci: CiDockerfiles) -> None:
    """A relock needs the uv version its CI Dockerfile pins: a discovered one that runs uv on the
    project but does not parse (check's docker-unparsed error) stops it, uv.lock untouched."""
    for item in ci.discovery.unparsed:
        raise DepsyncError(
            f"runs `{item.uv_command}` (line {item.uv_line}) but does not parse ({item.error}), so the uv version it pins is unknown; "
            "fix it, or list the CI Dockerfiles in [tool.depsync] dockerfiles; uv.lock is unchanged",
            f"{item.path}:{item.line}" if item.line else item.path,
        )
