"""Source policy for [tool.uv.sources]: full-commit pins, allowed hosts, inert sources."""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from depsync.findings import Finding
from depsync.rules import RULES, CheckInputs
from depsync.sources import host_of

_FULL_SHA = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")


def required_names(project) -> set[str]:  # type: ignore[no-untyped-def]
    """Names any requirement of the project asks for (dependencies, extras, groups, overrides...)."""
    names = set()
    for text, _ in project.all_requirement_strings():
        try:
            names.add(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return names


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    allowed = {h.lower() for h in inputs.config.allowed_hosts}
    needed = required_names(pyproject)
    written = pyproject.source_names()
    for name, tables in pyproject.sources().items():
        line = pyproject.line_of_source(name)
        shown = written.get(name, name)
        if name not in needed:
            yield RULES["source-inert"].finding(
                pyproject.path,
                line,
                f"source for {shown} is inert: no dependency, extra or group asks for {shown}, so uv ignores it",
                f"remove it, or add {shown} to the extra or group that needs it",
            )
        for table in tables:
            if "git" in table:
                pin = table.get("rev")
                if pin is None or not _FULL_SHA.match(str(pin).lower()):
                    kind, value = next(((k, table[k]) for k in ("rev", "tag", "branch") if k in table), ("", ""))
                    what = f"{kind} {value!r}" if kind else "no rev (the default branch)"
                    yield RULES["source-pin-not-commit"].finding(
                        pyproject.path,
                        line,
                        f"{shown} is pinned to {what}, which can move; the lock records a commit but a relock may silently pick another",
                        f"pin rev = \"<40-hex commit>\" (the lock has it after `#` in {shown}'s source)",
                    )
            url = table.get("git") or table.get("url")
            if allowed and isinstance(url, str) and host_of(url) not in allowed:
                yield RULES["source-host-not-allowed"].finding(
                    pyproject.path,
                    line,
                    f"{shown} comes from host {host_of(url) or '?'!r}, not in allowed-hosts ({', '.join(sorted(allowed))})",
                    "use an allowed host, or add this one to [tool.depsync] allowed-hosts after review",
                )
