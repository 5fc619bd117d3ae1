"""Render check findings. JSON schema "depsync.check/1" is documented in README.md.

Off a terminal the human format is plain text written without rich (importing rich costs
more than a cached check): the same lines rich prints there, without colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from depsync import __version__
from depsync.findings import Finding, Severity
from depsync.redact import redact, redacted_json
from depsync.report.markdown import clean

SCHEMA = "depsync.check/1"


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {str(level) + "s": sum(1 for f in findings if f.severity == level) for level in (Severity.ERROR, Severity.WARNING, Severity.INFO)}


def to_json(findings: Sequence[Finding], *, project: str) -> str:

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
            }
            for f in findings
        ],
        "summary": counts(findings),
    }
    return redacted_json(document, indent=2)  # strings redacted before escaping


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(findings: Sequence[Finding], *, prefix: str = "") -> str:
    """GitHub Actions workflow commands (::error file=...,line=...::message)."""
    lines = []
    for f in findings:
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}[f.severity]
        props = [f"file={_escape_property(clean(prefix + f.file))}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property('depsync ' + f.rule)}")
        # control characters go first (an ESC sequence or a bare CR in the log), then the escapes
        lines.append(f"::{level} {','.join(props)}::{_escape_data(clean(redact(f'{f.message}. Fix: {f.fix}')))}")
    return "\n".join(lines)


def _lines(findings: Sequence[Finding]) -> list[tuple[str, str, Finding]]:
    """The human report as (kind, text, finding) rows, kind one of head, item, fix.

    Each finding is one `file:line severity rule message` row (the path on every row, so a
    terminal or an editor can jump to it) and its fix below it. Findings one fix covers (same
    file, rule, severity and fix) are one group: a head row `file:first-last ... N findings`,
    a row per finding, and the fix once."""
    from depsync.findings import FIXABLE, group

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


def _summary_line(findings: Sequence[Finding]) -> str:
    from depsync.findings import FIXABLE

    summary = counts(findings)
    fixable = sum(1 for f in findings if f.rule in FIXABLE)
    tail = f"; {fixable} fixable with `depsync check --fix`" if fixable else ""
    return f"depsync check: {summary['errors']} error(s), {summary['warnings']} warning(s), {summary['infos']} note(s){tail}"


def to_plain(findings: Sequence[Finding], *, project: str) -> str:
    """The human format without colour: what rich prints when stdout is not a terminal."""
    lines = [text for _, text, _ in _lines(findings)]
    lines.append(_summary_line(findings) if findings else f"depsync check: {project} is consistent")
    return "\n".join(lines) + "\n"


def print_human(findings: Sequence[Finding], stream: TextIO, *, project: str, color: bool | None = None) -> None:
    """The rows of _lines, sorted by file and line; a summary line last. Colour (rich) when
    color is True, or on a terminal when it is None."""
    terminal = color if color is not None else bool(getattr(stream, "isatty", lambda: False)())
    if not terminal:
        stream.write(to_plain(findings, project=project))
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
        console.print(f"[green]depsync check: {escape(project)} is consistent[/green]")
    else:
        console.print(_summary_line(findings))
