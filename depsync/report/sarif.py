"""Check findings as SARIF 2.1.0, the format GitHub code scanning uploads (`--format sarif`).

One run; the driver lists every rule with its documentation (depsync/rules/docs.py), so an
alert on GitHub shows why the rule exists and how to fix it (`helpUri` links the rule
table). Paths are relative to the repository root (`uriBaseId` SRCROOT), which is what
github/codeql-action/upload-sarif expects, from whatever directory depsync runs in; outside
a repository they are relative to the working directory, or to the project when it is not
inside that. The log never names the absolute checkout path: `originalUriBaseIds` describes
SRCROOT without a `uri`, so the consumer (the upload, which knows the checkout) places it.
GitHub shows a result's `message.text` on the alert and cuts what is long: depsync sends the
first line, at most MESSAGE_LIMIT characters ending at a word, and the whole text in the
result's `properties.fullMessage` when it had to cut.
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
SRCROOT = "SRCROOT"
MESSAGE_LIMIT = 1000  # characters of message.text; the rest is in properties.fullMessage


def shown_message(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """The first line of text, cut at the last word boundary within limit (an ellipsis marks the cut)."""
    first = text.strip().split("\n", 1)[0].rstrip()
    if len(first) <= limit and first == text.strip():
        return first
    if len(first) > limit - 2:
        cut = first[: limit - 1]  # one more than fits: a word that ends exactly at the limit is kept whole
        space = cut.rfind(" ")
        first = (cut[:space] if space > limit // 2 else cut[: limit - 2]).rstrip(" ,;:.")
    return first + " …"


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


def _artifact(file: str, project: Path, base: Path) -> dict[str, str]:
    """The finding's file relative to base (SRCROOT), which contains the project."""
    relative = (project / file).relative_to(base).as_posix()
    return {"uri": quote(relative), "uriBaseId": SRCROOT}


def to_sarif(findings: Sequence[Finding], *, root: Path, base: Path) -> str:
    """The SARIF log of a check of the project at root, run from base (the checkout); a
    project outside base is its own SRCROOT."""
    project = root.resolve()
    base = base.resolve()
    if not project.is_relative_to(base):
        base = project
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for f in findings:
        location: dict[str, object] = {"artifactLocation": _artifact(f.file, project, base)}
        if f.line:
            location["region"] = {"startLine": f.line}
        full = redact(f"{f.message}. Fix: {f.fix}")
        shown = shown_message(full)
        result: dict[str, object] = {
            "ruleId": f.rule,
            "level": _LEVEL[f.severity],
            "message": {"text": shown},
            "locations": [{"physicalLocation": location}],
            "partialFingerprints": {"depsyncFinding/v1": _fingerprint(f)},
        }
        if f.rule in index:
            result["ruleIndex"] = index[f.rule]
        if shown != full:
            result["properties"] = {"fullMessage": full}
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
    # no `uri`: the checkout's absolute path is the consumer's to know (SARIF 3.14.14)
    run["originalUriBaseIds"] = {SRCROOT: {"description": {"text": "The root of the repository checked (outside a repository: the working directory, or the project)."}}}
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2)
