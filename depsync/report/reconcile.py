"""Render a reconciliation: Markdown for the PR body, JSON ("depsync.reconcile/1") for bots."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from depsync.report.lockdiff import to_markdown as lockdiff_markdown
from depsync.redact import redact
from depsync.sources import describe

if TYPE_CHECKING:
    from depsync.commands.reconcile import Reconciliation

SCHEMA = "depsync.reconcile/1"
_CASES = {
    "unchanged": "unchanged",
    "same-change": "same change on both sides",
    "dev-changed": "dev changed",
    "dev-added": "dev added",
    "dev-removed": "dev removed",
    "main-changed": "main changed",
    "main-added": "main added",
    "main-removed": "main removed",
    "conflict": "**conflict**",
    "unknown-shape": "**unknown shape**",
}


def _cell(text: str) -> str:
    return redact(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(result: Reconciliation) -> str:
    lines = [
        f"## depsync reconcile: `{result.main_ref}` into `{result.dev_ref}`" + (" (dry run)" if result.dry_run else ""),
        "",
        f"dev `{result.dev_ref}` at {result.dev_commit}, main `{result.main_ref}` at {result.main_commit}, merge-base {result.base_commit}.",
        "",
        "### Sources (`[tool.uv.sources]`, three-way)",
        "",
        "| package | base | dev | main | case | result | reason |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in result.decisions:
        reason = d.reason + ("".join(f"<br>{e}" for e in d.evidence) if d.evidence else "")
        lines.append(
            f"| `{d.name}` | {_cell(describe(d.base))} | {_cell(describe(d.dev))} | {_cell(describe(d.main))} | {_CASES.get(d.case, d.case)} "
            f"| {_cell(describe(d.result))} ({d.taken_from}) | {_cell(reason)} |"
        )
    review = [d for d in result.decisions if d.needs_review] + [m for m in result.metadata if m.needs_review]
    if review:
        lines += ["", "### Needs review", ""]
        for item in review:
            lines.append(f"- `{item.name}`: {_cell(item.reason)}")
    if result.metadata:
        lines += ["", "### Dependency metadata", ""]
        for m in result.metadata:
            changes = ", ".join(f"{f}: `{old}` -> `{new}`" for f, old, new in m.changes) or "no change made"
            lines.append(f"- `{m.name}` ({m.action}): {changes}; {m.reason}")
    lines += ["", "### Files restored to dev's version", ""]
    lines += [f"- `{p}`" for p in result.restored] or ["- none needed"]
    lines += ["", "### Lock", "", f"- {result.lock_note or 'not relocked (dry run)'}"]
    if result.lock_changes is not None:
        lines += ["", lockdiff_markdown(result.lock_changes).rstrip()]
    if not result.dry_run:
        lines += ["", "### depsync check", ""]
        lines += [f"- {f.severity} `{f.rule}` {f.file}:{f.line}: {_cell(f.message)}" for f in result.findings] or ["- clean"]
    lines += ["", f"**{'Needs review' if result.needs_review else 'Ready'}.**", ""]
    return "\n".join(lines)


def to_json(result: Reconciliation) -> str:
    def decision(d: Any) -> dict[str, Any]:
        return {
            "name": d.name,
            "case": d.case,
            "base": d.base,
            "dev": d.dev,
            "main": d.main,
            "result": d.result,
            "taken_from": d.taken_from,
            "reason": d.reason,
            "needs_review": d.needs_review,
            "evidence": list(d.evidence),
        }

    document = {
        "schema": SCHEMA,
        "dev": {"ref": result.dev_ref, "commit": result.dev_commit},
        "main": {"ref": result.main_ref, "commit": result.main_commit},
        "merge_base": result.base_commit,
        "dry_run": result.dry_run,
        "sources": [decision(d) for d in result.decisions],
        "metadata": [{"name": m.name, "action": m.action, "changes": [list(c) for c in m.changes], "reason": m.reason, "needs_review": m.needs_review} for m in result.metadata],
        "restored": result.restored,
        "lock": {
            "note": result.lock_note,
            "changes": None if result.lock_changes is None else [vars(c) for c in result.lock_changes],
        },
        "findings": [{"file": f.file, "line": f.line, "rule": f.rule, "severity": str(f.severity), "message": f.message} for f in result.findings],
        "needs_review": result.needs_review,
    }
    return redact(json.dumps(document, indent=2, default=str))
