"""The dependency surface's part of the reconcile reports (Markdown sections, JSON entries).

Every change main made since the merge-base that dev does not have appears in exactly one of
two sections: "taken from main" (with the evidence) or "main's dependency changes not taken"
(package, table, main's value, why). Entries dev changed and main did not are counted, not
listed: they are dev's own work, kept.
"""

from __future__ import annotations

import re
from typing import Any

from depsync.core.names import canonicalize_name
from depsync.core.sync.metadata import MetadataUpdate
from depsync.core.sync.reconciliation import Reconciliation
from depsync.core.sync.surface import Entry, EntryDecision, main_changes

_FOLD = 30  # more rows than this: the table goes into <details>


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_MARKUP = str.maketrans({"|": "\\|", "`": "'", "<": "&lt;", ">": "&gt;", "[": "\\[", "]": "\\]", "*": "\\*", "_": "\\_", "!": "\\!"})


def _cell(text: str) -> str:
    """Repository text (requirement strings, file names, reasons naming them) as inert table text:
    no control or terminal characters, no Markdown or HTML that GitHub would render."""
    return _CONTROL.sub(" ", text).translate(_MARKUP)


def _code(text: str) -> str:
    """A value in a code span: only what would end the span or the table cell is changed."""
    return _CONTROL.sub(" ", text).replace("`", "'").replace("|", "\\|")


def _value(entry: Entry | None) -> str:
    return f"`{_code(entry.text())}`" if entry is not None else "absent"


def _evidence(d: EntryDecision, compact: bool) -> str:
    lines = list(d.evidence)[: 2 if compact else None]
    return "; ".join(_cell(line) for line in lines) or "-"


def _table(rows: list[EntryDecision], taken: bool, compact: bool) -> list[str]:
    head = "| review | package | table | main's value | dev's value | evidence |" if taken else "| review | package | table | main's value | kept | why | evidence |"
    lines = [head, "|---" * (6 if taken else 7) + "|"]
    for d in rows:
        flag = "**yes**" if d.needs_review else ""
        if taken:
            lines.append(f"| {flag} | `{_code(d.name)}` | `{_code(d.table)}` | {_value(d.main)} | {_value(d.dev)} | {_evidence(d, compact)} |")
        else:
            lines.append(f"| {flag} | `{_code(d.name)}` | `{_code(d.table)}` | {_value(d.main)} | {_value(d.result)} | {_cell(d.reason)} | {_evidence(d, compact)} |")
    return lines


def sections(result: Reconciliation, compact: bool = False) -> list[str]:
    """The Markdown of the surface: main's changes taken, main's changes not taken, dev's own."""
    if not result.dependencies and not result.surface_findings:
        return []
    changed = main_changes(result.dependencies)
    taken = [d for d in changed if not d.main_not_taken]
    declined = [d for d in changed if d.main_not_taken]
    own = [d for d in result.dependencies if d.differs and not d.main_changed]
    side = f'default-side = "{result.default_side}"'
    lines = [f"### Dependency surface (three-way per entry, {side})", ""]
    if not changed:
        lines.append("main changed no dependency entry that dev does not have.")
    for title, rows, is_taken in ((f"main's dependency changes not taken ({len(declined)})", declined, False), (f"Taken from main ({len(taken)})", taken, True)):
        if not rows:
            continue
        shown = sorted(rows, key=lambda d: not d.needs_review)
        if compact:
            shown = shown[:60]
        table = _table(shown, is_taken, compact)
        if len(shown) < len(rows):
            table.append(f"\n{len(rows) - len(shown)} rows left out to fit GitHub's limit (flagged first); the plan JSON has them all.")
        lines += ["", f"#### {title}", ""]
        lines += [f"<details><summary>{len(rows)} entries</summary>", "", *table, "", "</details>"] if len(rows) > _FOLD else table
    if result.surface_findings:
        lines += ["", "#### Consistency of the reconciled pyproject (and dev's Dockerfiles)", ""]
        lines += [f"- **{f.severity}** `{f.rule}` {_cell(f.file)}:{f.line}: {_cell(f.message)} (fix: {_cell(f.fix)})" for f in result.surface_findings]
    if own:
        lines += ["", f"{len(own)} entries dev changed and main did not are dev's, kept (the plan JSON lists them)."]
    return lines


def counts(result: Reconciliation) -> dict[str, Any]:
    """main's changes to the surface and what became of them (the plan JSON's `dependency_flags`)."""
    changed = main_changes(result.dependencies)
    flagged = sum(d.needs_review for d in changed)
    return {
        "main_changes": len(changed),
        "taken": sum(not d.main_not_taken for d in changed),
        "not_taken": sum(d.main_not_taken for d in changed),
        "flagged": flagged,
        "rate": round(flagged / len(changed), 4) if changed else 0.0,
    }


def review_lines(result: Reconciliation) -> list[str]:
    """One line per flagged surface entry, for the "Needs review" section."""
    lines = [f"- {_cell(f.file)}:{f.line} `{f.rule}`: {_cell(f.message)}" for f in result.surface_findings]
    return lines + [f"- `{_code(d.name)}` in `{_code(d.table)}`: {_cell(d.reason)}" for d in result.dependencies if d.needs_review]


def metadata_json(update: MetadataUpdate, result: Reconciliation) -> dict[str, Any]:
    """A metadata update of the plan JSON, with the fields a dependency entry has."""
    entry = next((d for d in result.dependencies if d.table == "tool.uv.dependency-metadata" and d.name == canonicalize_name(update.name)), None)
    return {
        "name": update.name,
        "action": update.action,
        "changes": [list(c) for c in update.changes],
        "reason": update.reason,
        "needs_review": update.needs_review,
        "table": "tool.uv.dependency-metadata",
        "base": _raw(entry.base) if entry else None,
        "dev": _raw(entry.dev) if entry else None,
        "main": _raw(entry.main) if entry else None,
        "case": entry.case if entry else "follows-source",
        "rule": entry.rule if entry else "follows the source decision",
        "taken_from": "main" if update.reason.startswith("main's") else "dev",
        "evidence": list(entry.evidence) if entry else [],
    }


def _raw(entry: Entry | None) -> Any:
    if entry is None:
        return None
    return list(entry.raw) if len(entry.raw) != 1 else entry.raw[0]


def to_json(result: Reconciliation) -> list[dict[str, Any]]:
    """One item per entry dev and main disagree on (the plan JSON's `dependencies`)."""
    return [
        {
            "table": d.table,
            "name": d.name,
            "kind": d.kind,
            "base": _raw(d.base),
            "dev": _raw(d.dev),
            "main": _raw(d.main),
            "result": _raw(d.result),
            "case": d.case,
            "rule": d.rule,
            "taken_from": d.taken_from,
            "reason": d.reason,
            "evidence": list(d.evidence),
            "needs_review": d.needs_review,
            "main_not_taken": d.main_not_taken,
        }
        for d in result.dependencies
        if d.differs
    ]
