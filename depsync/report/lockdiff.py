"""Render lock changes: rich table, Markdown (collapsible when long), JSON. Used by diff, lock and reconcile."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from depsync.lockdiff import PackageChange, summarize

SCHEMA = "depsync.diff/1"
COLLAPSE_OVER = 15  # more changes than this go into <details> in Markdown


def _ordered(changes: Sequence[PackageChange]) -> list[PackageChange]:
    """Direct dependencies first, then by name."""
    return sorted(changes, key=lambda c: (not c.direct, c.name))


def counts_line(changes: Sequence[PackageChange]) -> str:
    counts = summarize(changes)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no package changed"


def print_table(changes: Sequence[PackageChange], stream: TextIO, title: str = "uv.lock changes") -> None:
    from rich.console import Console
    from rich.table import Table

    # a pipe or CI log has no width: do not truncate package names to 80 columns
    console = Console(file=stream, highlight=False, width=None if stream.isatty() else 160)
    if not changes:
        console.print("no package changed")
        return
    table = Table(title=title)
    for column in ("package", "change", "before", "after", "direct"):
        table.add_column(column)
    for change in _ordered(changes):
        table.add_row(change.name, change.kind, change.old, change.new, "yes" if change.direct else "")
    console.print(table)
    console.print(counts_line(changes))


def to_markdown(changes: Sequence[PackageChange], heading: str = "") -> str:
    lines = [heading, ""] if heading else []
    lines.append(counts_line(changes) + ".")
    if not changes:
        return "\n".join(lines) + "\n"
    direct = [c for c in changes if c.direct]
    rows = ["| package | change | before | after | direct |", "|---|---|---|---|---|"]
    rows += [f"| `{c.name}` | {c.kind} | {c.old} | {c.new} | {'yes' if c.direct else ''} |" for c in _ordered(changes)]
    if len(changes) > COLLAPSE_OVER:
        if direct:
            kinds: dict[str, list[str]] = {}
            for change in direct:
                kinds.setdefault(change.name, [])
                if change.kind not in kinds[change.name]:
                    kinds[change.name].append(change.kind)
            lines += ["", "Direct dependencies: " + ", ".join(f"`{name}` {'/'.join(k)}" for name, k in kinds.items()) + "."]
        lines += ["", f"<details><summary>All {len(changes)} package changes</summary>", "", *rows, "", "</details>"]
    else:
        lines += ["", *rows]
    return "\n".join(lines) + "\n"


def to_json(changes: Sequence[PackageChange], old: str, new: str) -> str:
    return json.dumps(
        {
            "schema": SCHEMA,
            "old": old,
            "new": new,
            "changes": [vars(c) for c in changes],
            "summary": summarize(changes),
        },
        indent=2,
    )
