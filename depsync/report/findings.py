"""Render check findings. JSON schema "depsync.check/2": depsync/schemas/check-2.schema.json, docs/check.md.

Off a terminal the human format is plain text written without rich (importing rich costs
more than a cached check): the same lines rich prints there, without colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from depsync import __version__
from depsync.core.findings import Finding, Severity
from depsync.core.redact import redact, redacted_json
from depsync.report.markdown import clean, log_line

SCHEMA = "depsync.check/2"  # 2: the summary counts `info` (1 said `infos`), the severity's one name

# the summary's keys: the severity names, errors and warnings counted in the plural, info as is
_COUNT_KEY = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "info"}


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {key: sum(1 for f in findings if f.severity == level) for level, key in _COUNT_KEY.items()}


def counted(level: Severity) -> str:
    """`error(s)`, `warning(s)`, `info`: a severity after a number, by the name it has everywhere."""
    return str(level) + ("" if level == Severity.INFO else "(s)")


def counts_text(findings: Sequence[Finding]) -> str:
    """`12 error(s), 6 warning(s), 0 info`."""
    summary = counts(findings)
    return ", ".join(f"{summary[key]} {counted(level)}" for level, key in _COUNT_KEY.items())


def to_json(findings: Sequence[Finding], *, project: str, image: dict[str, object] | None = None) -> str:
    """image: what `check --image` read of the CI base image (image_summary), the evidence its findings stand on."""

    document = {
        "schema": SCHEMA,
        "depsync": __version__,
        "project": project,
        "findings": [
            {
                "file": f.file,
                "line": f.line or None,
                "rule": f.rule,
                "severity": str(f.severity),
                "message": redact(f.message),
                "fix": redact(f.fix),
                **({"items": [redact(item) for item in f.items]} if f.items else {}),
            }
            for f in findings
        ],
        "summary": counts(findings),
    }
    document["image"] = image  # null without --image
    return redacted_json(document, indent=2)  # strings redacted before escaping


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


# GitHub shows at most 10 annotations of each level (error, warning, notice) per step; the
# rest are dropped without a word. Past that, findings one fix covers become one annotation
# (`line`..`endLine`), and what still does not fit becomes one annotation per level saying
# how many more there are; every finding is in the log (a collapsed group) whatever happens.
GITHUB_ANNOTATIONS_PER_LEVEL = 10
_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _annotation(level: str, file: str | None, line: int, end_line: int, title: str, message: str) -> str:
    props = []
    if file is not None:
        props.append(f"file={_escape_property(clean(file))}")
    if line:
        props.append(f"line={line}")
        if end_line > line:
            props.append(f"endLine={end_line}")
    props.append(f"title={_escape_property(title)}")
    # control characters go first (an ESC sequence or a bare CR in the log), line by line, then the escapes
    text = "\n".join(clean(line) for line in redact(message).split("\n"))
    return f"::{level} {','.join(props)}::{_escape_data(text)}"


def to_github(findings: Sequence[Finding], *, prefix: str = "") -> str:
    """GitHub Actions workflow commands (::error file=...,line=...::message).

    prefix: the project's directory from the repository root (`server/`), since GitHub
    resolves annotation paths from there. When some level has more findings than GitHub
    shows, a summary annotation with the counts comes first, findings one fix covers are
    grouped (`endLine`), and the complete list follows in a collapsed log group."""
    from depsync.core.findings import group

    if not findings:
        return ""
    per_level: dict[Severity, int] = {}
    for f in findings:
        per_level[f.severity] = per_level.get(f.severity, 0) + 1
    if all(n <= GITHUB_ANNOTATIONS_PER_LEVEL for n in per_level.values()):
        return "\n".join(
            _annotation(_GITHUB_LEVEL[f.severity], prefix + f.file, f.line, 0, f"depsync {f.rule}", f"{f.message}. Fix: {f.fix}")
            for f in findings
        )
    lines = [
        _annotation(
            "notice",
            None,
            0,
            0,
            "depsync check",
            f"{counts_text(findings)}; findings one fix covers are grouped, the full list is in the step's log",
        )
    ]
    budget = {level: GITHUB_ANNOTATIONS_PER_LEVEL - (1 if level == Severity.INFO else 0) for level in _GITHUB_LEVEL}
    groups = group(findings)
    for level in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        of_level = [g for g in groups if g.first.severity == level]
        shown = of_level if len(of_level) <= budget[level] else of_level[: budget[level] - 1]
        for g in shown:
            first = g.first
            if len(g.findings) == 1:
                message = f"{first.message}. Fix: {first.fix}"
            else:
                items = "\n".join(f"line {f.line}: {f.message}" if f.line else f.message for f in g.findings)
                message = f"{len(g.findings)} findings, one fix:\n{items}\nFix: {first.fix}"
            lines_of = g.lines
            lines.append(
                _annotation(_GITHUB_LEVEL[level], prefix + first.file, lines_of[0] if lines_of else 0, lines_of[-1] if lines_of else 0,
                            f"depsync {first.rule}", message)
            )
        rest = of_level[len(shown):]
        if rest:
            hidden = sum(len(g.findings) for g in rest)
            files = sorted({prefix + g.first.file for g in rest})
            lines.append(
                _annotation(_GITHUB_LEVEL[level], files[0], 0, 0, "depsync check",
                            f"{hidden} more {counted(level)} in {', '.join(files)}: see the step's log")
            )
    lines.append("::group::depsync: every finding")
    for f in findings:
        where = f"{prefix}{f.file}:{f.line}" if f.line else prefix + f.file
        lines.append(log_line(clean(redact(f"{where} {f.severity} {f.rule} {f.message}. Fix: {f.fix}"))))
    lines.append("::endgroup::")
    return "\n".join(lines)


def _lines(findings: Sequence[Finding]) -> list[tuple[str, str, Finding]]:
    """The human report as (kind, text, finding) rows, kind one of head, item, fix.

    Each finding is one `file:line severity rule message` row (the path on every row, so a
    terminal or an editor can jump to it) and its fix below it. Findings one fix covers (same
    file, rule, severity and fix) are one group: a head row `file:first-last ... N findings`,
    a row per finding, and the fix once."""
    from depsync.core.findings import FIXABLE, group

    rows: list[tuple[str, str, Finding]] = []

    def add(kind: str, text: str, finding: Finding) -> None:
        rows.append((kind, "  " * text.startswith("  ") + clean(text), finding))  # one line, no terminal escapes

    for grouped in group(findings):
        first = grouped.first
        fixable = " (`depsync check --fix`)" if first.rule in FIXABLE else ""
        if len(grouped.findings) == 1:
            add("head", f"{grouped.where()} {first.severity} {first.rule} {redact(first.message)}", first)
            add("fix", f"  fix{fixable}: {redact(first.fix)}", first)
            continue
        add("head", f"{grouped.where()} {first.severity} {first.rule} ({len(grouped.findings)} findings, one fix)", first)
        for f in grouped.findings:
            add("item", f"  line {f.line}: {redact(f.message)}" if f.line else f"  {redact(f.message)}", f)
        add("fix", f"  fix{fixable}, all {len(grouped.findings)}: {redact(first.fix)}", first)
    return rows


def dockerfiles_checked(count: int | None) -> str:
    """`; checked 2 Dockerfiles`, the end of the summary line (nothing when not counted)."""
    if count is None:
        return ""
    return f"; checked {count} Dockerfile" + ("" if count == 1 else "s")


def _summary_line(findings: Sequence[Finding], dockerfiles: int | None = None) -> str:
    from depsync.core.findings import FIXABLE

    fixable = sum(1 for f in findings if f.rule in FIXABLE)
    tail = f"; {fixable} fixable with `depsync check --fix`" if fixable else ""
    return f"depsync check: {counts_text(findings)}{tail}{dockerfiles_checked(dockerfiles)}"


def to_plain(findings: Sequence[Finding], *, project: str, dockerfiles: int | None = None) -> str:
    """The human format without colour: what rich prints when stdout is not a terminal.
    dockerfiles: how many Dockerfiles were checked (the summary line ends with it)."""
    lines = [text for _, text, _ in _lines(findings)]
    lines.append(_summary_line(findings, dockerfiles) if findings else f"depsync check: {project} is consistent{dockerfiles_checked(dockerfiles)}")
    return "\n".join(lines) + "\n"


def print_human(findings: Sequence[Finding], stream: TextIO, *, project: str, color: bool | None = None, dockerfiles: int | None = None) -> None:
    """The rows of _lines, sorted by file and line; a summary line last. Colour (rich) when
    color is True, or on a terminal when it is None."""
    terminal = color if color is not None else bool(getattr(stream, "isatty", lambda: False)())
    if not terminal:
        stream.write(to_plain(findings, project=project, dockerfiles=dockerfiles))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, force_terminal=color, highlight=False, soft_wrap=True)
    style = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
    for kind, text, f in _lines(findings):
        if kind == "head":
            where, _, rest = text.partition(f" {f.severity} {f.rule}")
            console.print(f"[bold]{escape(where)}[/bold] [{style[f.severity]}]{f.severity}[/] [magenta]{f.rule}[/magenta]{escape(rest)}")
        elif kind == "item":
            console.print(f"[dim]{escape(text)}[/dim]")
        else:
            label, _, fix = text.partition(": ")
            console.print(f"[green]{escape(label)}:[/green] {escape(fix)}")
    if not findings:
        console.print(f"[green]depsync check: {escape(project)} is consistent{escape(dockerfiles_checked(dockerfiles))}[/green]")
    else:
        console.print(escape(_summary_line(findings, dockerfiles)))
