"""docker-unparsed: a Dockerfile discovery found that runs uv on the project, but that depsync
could not check (depsync/core/dockerfile_discovery.py says which and why)."""

from __future__ import annotations

from collections.abc import Iterator

from depsync.core.dockerfile_discovery import Unparsed
from depsync.core.findings import Finding, Severity
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES
from depsync.records import replace

_LIST_THEM = "list the Dockerfiles to check in [tool.depsync] dockerfiles"
# a parser error may quote a whole line of the file (`can't find = in "..."`): an annotation keeps
# its start, `check -v` the whole message
_MAX_DETAIL = 300


def _clipped(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else f"{text[:_MAX_DETAIL]}... ({len(text)} characters; `check -v` shows all)"


def _where(item: Unparsed) -> str:
    """What the finding's line is, when the error itself names none."""
    if item.line_is == "heredoc":
        return f"; line {item.line} opens a heredoc that never ends"
    if item.line_is == "uv":
        return "; the error names no line"
    return ""


def check(inputs: CheckInputs) -> Iterator[Finding]:
    rule = RULES["docker-unparsed"]
    if inputs.dockerfile_scan_stopped:
        # a warning: no Dockerfile is known to be left out, and a large tree is no reason to fail the gate
        yield replace(rule.finding(
            ".",
            0,
            f"the search for Dockerfiles stopped after {inputs.dockerfile_scan_stopped} directory entries, so a Dockerfile past them was not found or checked",
            _LIST_THEM,
        ), severity=min(rule.severity, Severity.WARNING))
    for item in inputs.dockerfiles_unparsed:
        runs = f"runs `{item.uv_command}` (line {item.uv_line})"
        if item.bound:
            yield rule.finding(
                item.path,
                item.line,
                f"{runs} but is past depsync's bounds ({item.error}), so nothing in it was checked",
                f"simplify or split the Dockerfile (depsync's bounds are fixed), or {_LIST_THEM}",
            )
        else:
            detail = _clipped(item.error.removeprefix("Dockerfile does not parse: "))
            yield rule.finding(
                item.path,
                item.line,
                f"{runs} but does not parse ({detail}{_where(item)}), so nothing in it was checked",
                f"fix the syntax (docker build fails on it too), or {_LIST_THEM}",
            )
