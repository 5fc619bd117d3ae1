"""Check findings as SARIF 2.1.0, the format GitHub code scanning uploads (`--format sarif`).

One run; the driver lists every rule with its documentation (depsync/rules/docs.py), so an
alert on GitHub shows why the rule exists and how to fix it (`helpUri` links the rule
table). Paths are relative to the repository root (%SRCROOT%), which is what
github/codeql-action/upload-sarif expects, from whatever directory depsync runs in; outside
a repository they are relative to the working directory, and a project outside it gets file URIs.
tests/test_sarif.py validates the output against the official SARIF 2.1.0 JSON schema.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from depsync import HOMEPAGE, RULES_URL, __version__
from depsync.core.findings import Finding, Severity
from depsync.core.redact import redact

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _rules() -> list[dict[str, object]]:
    from depsync.core.rules.docs import DOCS, render
    from depsync.core.rules.registry import RULES

    out: list[dict[str, object]] = []
    for rule in RULES.values():
        page = DOCS[rule.id]
        out.append(
            {
                "id": rule.id,
                "name": "".join(part.capitalize() for part in rule.id.split("-")),
                "shortDescription": {"text": _plain(rule.summary)},
                "fullDescription": {"text": _plain(page.why)},
                "help": {"text": _plain(page.fix), "markdown": render(rule)},
                "helpUri": RULES_URL,
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {"tags": ["depsync", rule.id.split("-", 1)[0]], "fixable": rule.fixable},
            }
        )
    return out


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def _fingerprint(finding: Finding) -> str:
    """Stable across line moves: the rule, the file and the message (which names the subject)."""
    digest = hashlib.sha256("\0".join((finding.rule, finding.file, finding.message)).encode()).hexdigest()
    return digest[:32]


def _artifact(file: str, root: Path, base: Path) -> dict[str, str]:
    """The finding's file relative to base (%SRCROOT%) when the project is inside it, else an
    absolute file URI."""
    project = root.resolve()
    if project.is_relative_to(base):
        relative = (project / file).relative_to(base).as_posix()
        return {"uri": quote(relative), "uriBaseId": "%SRCROOT%"}
    return {"uri": (project / file).as_uri()}


def to_sarif(findings: Sequence[Finding], *, root: Path, base: Path) -> str:
    """The SARIF log of a check of the project at root, run from base (the checkout)."""
    base = base.resolve()
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for f in findings:
        location: dict[str, object] = {"artifactLocation": _artifact(f.file, root, base)}
        if f.line:
            location["region"] = {"startLine": f.line}
        result: dict[str, object] = {
            "ruleId": f.rule,
            "level": _LEVEL[f.severity],
            "message": {"text": redact(f"{f.message}. Fix: {f.fix}")},
            "locations": [{"physicalLocation": location}],
            "partialFingerprints": {"depsyncFinding/v1": _fingerprint(f)},
        }
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        results.append(result)
    run: dict[str, object] = {
        "tool": {
            "driver": {
                "name": "depsync",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": HOMEPAGE,
                "rules": rules,
            }
        },
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    run["originalUriBaseIds"] = {"%SRCROOT%": {"uri": base.as_uri().rstrip("/") + "/"}}
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2)
