"""Check findings as a GitLab Code Quality report (`--format gitlab`), the shape ruff writes.

A JSON array with one issue per finding: `description`, `check_name` (the rule id),
`fingerprint`, `severity` (GitLab's scale: info, minor, major, critical, blocker) and
`location.path` / `location.lines.begin`. GitLab resolves the path from the project's
checkout (CI_PROJECT_DIR, the repository root), so paths carry the project's directory in
the repository (`prefix`). The job keeps it with
`artifacts: reports: codequality: depsync-quality.json`; the merge request widget then
lists what is new against the target branch, matched by fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from depsync.core.findings import Finding, Severity
from depsync.core.redact import redact

# errors rank above warnings in the widget; `critical`/`blocker` are left to security tools
_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _fingerprint(finding: Finding, path: str, occurrence: int) -> str:
    """Stable across line moves (rule, path, message), distinct for repeats of one message."""
    return hashlib.sha256("\0".join((finding.rule, path, finding.message, str(occurrence))).encode()).hexdigest()[:32]


def to_gitlab(findings: Sequence[Finding], *, prefix: str = "") -> str:
    issues = []
    seen: dict[tuple[str, str, str], int] = {}
    for f in findings:
        path = prefix + f.file
        key = (f.rule, path, f.message)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        issues.append(
            {
                "description": redact(f"{f.message}. Fix: {f.fix}"),
                "check_name": f.rule,
                "fingerprint": _fingerprint(f, path, occurrence),
                "severity": _SEVERITY[f.severity],
                "location": {"path": path, "lines": {"begin": max(f.line, 1)}},
            }
        )
    return json.dumps(issues, indent=2)
