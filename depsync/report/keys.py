"""The rest of pyproject's part of the reconcile reports: every key outside the dependency
surface that main changed (taken, or named with why not) and every conflict, flagged.

Keys dev changed and main did not are dev's own work: counted, not listed.
"""

from __future__ import annotations

import json
from typing import Any

from depsync.core.sync.document import KeyDecision
from depsync.core.sync.reconciliation import Reconciliation
from depsync.report import markdown

_SHOWN = 40  # rows in the Markdown table before the rest is a count (the plan JSON has all)
_VALUE = 80  # characters of a value in a cell


def _clipped(text: str) -> str:
    return markdown.code(text if len(text) <= _VALUE else text[: _VALUE - 1] + "…")


def _show(value: Any) -> str:
    if value is None:
        return "absent"
    return _clipped(json.dumps(value, default=str, ensure_ascii=False))


def _change(side: Any, base: Any) -> str:
    """A side's array as what it changed since the merge-base (`+ "x"`, `- "y"`), else its value."""
    if not isinstance(side, list) or not isinstance(base, list):
        return _show(side)
    added = [x for x in side if x not in base]
    removed = [x for x in base if x not in side]
    if not added and not removed:
        return _show(side) if side != base else "as at the merge-base"
    parts = [f"+ {json.dumps(x, default=str)}" for x in added] + [f"- {json.dumps(x, default=str)}" for x in removed]
    return _clipped(", ".join(parts))


def main_changes(result: Reconciliation) -> list[KeyDecision]:
    """The keys main changed since the merge-base that dev does not have as main has them."""
    return [d for d in result.keys if d.main_changed and d.differs]


def sections(result: Reconciliation, compact: bool = False) -> list[str]:
    changed = main_changes(result)
    own = [d for d in result.keys if d.differs and not d.main_changed]
    if not changed and not own:
        return []
    lines = ["### The rest of pyproject.toml (three-way per key)", ""]
    if changed:
        rows = sorted(changed, key=lambda d: not d.needs_review)
        shown = rows[: 15 if compact else _SHOWN]
        lines += ["| review | key | main's value | dev's value | kept | why |", "|---|---|---|---|---|---|"]
        for d in shown:
            kept = {"main": "main's", "dev": "dev's", "merged": "both merged", "none": "absent"}[d.taken_from]
            lines.append(f"| {'**yes**' if d.needs_review else ''} | {markdown.code(d.key)} | {_change(d.main, d.base)} | {_change(d.dev, d.base)} | {kept} | {markdown.text(d.reason)} |")
        if len(shown) < len(rows):
            lines.append(f"\nand {len(rows) - len(shown)} more keys (the plan JSON lists them all).")
    else:
        lines.append("main changed no other key that dev does not have.")
    if own:
        lines += ["", f"{len(own)} key{'s' if len(own) != 1 else ''} dev changed and main did not: dev's, kept."]
    return lines


def review_lines(result: Reconciliation) -> list[str]:
    return [f"- {markdown.code(d.key)}: {markdown.text(d.reason)}" for d in result.keys if d.needs_review]


def _key_json(d: KeyDecision) -> dict[str, Any]:
    """A key decision's own fields (a `uv_files` item's `keys` carry just these)."""
    return {
        "key": d.key, "case": d.case, "base": d.base, "dev": d.dev, "main": d.main, "result": d.result,
        "taken_from": d.taken_from, "reason": d.reason, "needs_review": d.needs_review,
    }  # fmt: skip


def to_json(result: Reconciliation) -> list[dict[str, Any]]:
    """One item per key dev and main disagree on, with the fields of a dependency entry."""
    return [
        {"table": d.table, "name": d.path[-1], "kind": "key", "rule": f"three-way/{d.case}", "evidence": [], "main_not_taken": d.main_not_taken, **_key_json(d)}
        for d in result.keys
        if d.differs or d.main_changed
    ]


# -- the other files uv reads ----------------------------------------------------------------


def files_section(result: Reconciliation, compact: bool = False) -> list[str]:
    if not result.uv_files:
        return []
    lines = ["### Other files uv reads (uv.toml, .python-version, workspace members)", ""]
    shown = sorted(result.uv_files, key=lambda d: not d.needs_review)[: 20 if compact else _SHOWN]
    lines += ["| review | file | kept | why | main's keys |", "|---|---|---|---|---|"]
    for d in shown:
        kept = {"main": "main's", "dev": "dev's", "merged": "merged", "none": "absent"}[d.taken_from]
        keys = ", ".join(markdown.code(k.key) for k in d.keys[:5]) + (f" and {len(d.keys) - 5} more" if len(d.keys) > 5 else "")
        lines.append(f"| {'**yes**' if d.needs_review else ''} | {markdown.code(d.path)} | {kept} | {markdown.text(d.reason)} | {keys or '-'} |")
    if len(shown) < len(result.uv_files):
        lines.append(f"\nand {len(result.uv_files) - len(shown)} more files (the plan JSON lists them all).")
    return lines


def files_review_lines(result: Reconciliation) -> list[str]:
    return [f"- {markdown.code(d.path)}: {markdown.text(d.reason)}" for d in result.uv_files if d.needs_review]


def files_json(result: Reconciliation) -> list[dict[str, Any]]:
    return [
        {
            "path": d.path,
            "kind": d.kind,
            "case": d.case,
            "taken_from": d.taken_from,
            "reason": d.reason,
            "needs_review": d.needs_review,
            "keys": [_key_json(k) for k in d.keys],
        }
        for d in result.uv_files
    ]
