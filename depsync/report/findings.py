"""Render check findings. JSON schema "depsync.check/1" is documented in README.md.

Off a terminal the human format is plain text written without rich (importing rich costs
more than a cached check): the same lines rich prints there, without colour.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import TextIO

from depsync import __version__
from depsync.findings import Finding, Severity
from depsync.redact import redact

SCHEMA = "depsync.check/1"


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    return {str(level) + "s": sum(1 for f in findings if f.severity == level) for level in (Severity.ERROR, Severity.WARNING, Severity.INFO)}


def to_json(findings: Sequence[Finding], *, project: str) -> str:
    import json

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
    return json.dumps(document, indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(findings: Sequence[Finding], *, prefix: str = "") -> str:
    """GitHub Actions workflow commands (::error file=...,line=...::message)."""
    lines = []
    for f in findings:
        level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}[f.severity]
        props = [f"file={_escape_property(prefix + f.file)}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={_escape_property('depsync ' + f.rule)}")
        lines.append(f"::{level} {','.join(props)}::{_escape_data(redact(f'{f.message}. Fix: {f.fix}'))}")
    return "\n".join(lines)


def _by_file(findings: Sequence[Finding]) -> list[tuple[str, list[Finding]]]:
    ordered = sorted(findings, key=lambda f: (f.file, f.line, f.rule))
    return [(file, list(items)) for file, items in groupby(ordered, key=lambda f: f.file)]


def _summary_line(findings: Sequence[Finding]) -> str:
    summary = counts(findings)
    return f"depsync check: {summary['errors']} error(s), {summary['warnings']} warning(s), {summary['infos']} note(s)"


def to_plain(findings: Sequence[Finding], *, project: str) -> str:
    """The human format without colour: what rich prints when stdout is not a terminal."""
    lines = []
    for file, items in _by_file(findings):
        lines.append(file)
        for f in items:
            where = f"{file}:{f.line}" if f.line else file
            lines.append(f"  {where} {f.severity} {f.rule} {redact(f.message)}")
            lines.append(f"      fix: {redact(f.fix)}")
    lines.append(_summary_line(findings) if findings else f"depsync check: {project} is consistent")
    return "\n".join(lines) + "\n"


def print_human(findings: Sequence[Finding], stream: TextIO, *, project: str, color: bool | None = None) -> None:
    """Findings grouped by file, sorted by line; a summary line last. Colour (rich) only on a terminal."""
    terminal = color if color is not None else bool(getattr(stream, "isatty", lambda: False)())
    if not terminal:
        stream.write(to_plain(findings, project=project))
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, force_terminal=color, highlight=False, soft_wrap=True)
    style = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
    for file, items in _by_file(findings):
        console.print(f"[bold]{escape(file)}[/bold]")
        for f in items:
            where = f"{file}:{f.line}" if f.line else file
            console.print(
                f"  [dim]{escape(where)}[/dim] [{style[f.severity]}]{f.severity}[/] [magenta]{f.rule}[/magenta] {escape(redact(f.message))}"
            )
            console.print(f"      [green]fix:[/green] {escape(redact(f.fix))}")
    if not findings:
        console.print(f"[green]depsync check: {escape(project)} is consistent[/green]")
    else:
        console.print(_summary_line(findings))
