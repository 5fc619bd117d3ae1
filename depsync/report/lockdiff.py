"""Render lock changes: rich table, Markdown (collapsible when long), JSON. Used by diff, lock and reconcile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from depsync import __version__
from depsync.core.lockdiff import PackageChange, label, summarize
from depsync.core.redact import redacted_json
from depsync.report import markdown

# /2: each side is {"version", "source", "url"/"path", "commit"}, not one "1.2.0 (registry)" string
SCHEMA = "depsync.diff/2"
COLLAPSE_OVER = 15  # more changes than this go into <details> in Markdown


def _ordered(changes: Sequence[PackageChange]) -> list[PackageChange]:
    """Direct dependencies first, then by name."""
    return sorted(changes, key=lambda c: (not c.direct, c.name))


def _sides(change: PackageChange, registry: bool) -> tuple[str, str]:
    """Before and after as shown. registry=False leaves the usual case, the registry,
    unlabelled; a move from one index to another always names both indexes."""
    if change.old_source == change.new_source == "registry" and change.old_url != change.new_url:
        return f"{change.old_version} (registry {change.old_url})", f"{change.new_version} (registry {change.new_url})"
    old = label(change.old_version, change.old_source, change.old_url, change.old_commit, registry=registry)
    return old, label(change.new_version, change.new_source, change.new_url, change.new_commit, registry=registry)


def _name(change: PackageChange) -> str:
    return change.name + (" (forked)" if change.forked else "") + (f" ({change.entries} wheels)" if change.entries > 1 else "")


def counts_line(changes: Sequence[PackageChange]) -> str:
    counts = summarize(changes)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "no package changed"


def print_table(changes: Sequence[PackageChange], stream: TextIO, title: str = "uv.lock changes", *, registry: bool = True) -> None:
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
        table.add_row(*(markdown.clean(cell) for cell in (_name(change), change.kind, *_sides(change, registry))), "yes" if change.direct else "")
    console.print(table)
    console.print(counts_line(changes))


def to_markdown(changes: Sequence[PackageChange], heading: str = "", *, registry: bool = True) -> str:
    lines = [heading, ""] if heading else []
    lines.append(counts_line(changes) + ".")
    if not changes:
        return "\n".join(lines) + "\n"
    direct = [c for c in changes if c.direct]
    rows = ["| package | change | before | after | direct |", "|---|---|---|---|---|"]
    for c in _ordered(changes):
        old, new = _sides(c, registry)
        rows.append(f"| {markdown.code(c.name)}{_name(c)[len(c.name):]} | {c.kind} | {markdown.text(old)} | {markdown.text(new)} | {'yes' if c.direct else ''} |")
    if len(changes) > COLLAPSE_OVER:
        if direct:
            kinds: dict[str, list[str]] = {}
            for change in direct:
                kinds.setdefault(change.name, [])
                if change.kind not in kinds[change.name]:
                    kinds[change.name].append(change.kind)
            lines += ["", "Direct dependencies: " + ", ".join(f"{markdown.code(name)} {'/'.join(k)}" for name, k in kinds.items()) + "."]
        lines += ["", f"<details><summary>All {len(changes)} package changes</summary>", "", *rows, "", "</details>"]
    else:
        lines += ["", *rows]
    return "\n".join(lines) + "\n"


def _side(version: str | None, source: str, url: str, commit: str) -> dict[str, str | None] | None:
    if not source:
        return None
    side: dict[str, str | None] = {"version": version, "source": source}
    if url:
        side["path" if source in ("path", "directory", "editable", "virtual") else "url"] = url
    if commit:
        side["commit"] = commit
    return side


def to_json(changes: Sequence[PackageChange], old: str, new: str) -> str:
    """Schema depsync.diff/2 (depsync/schemas/diff-2.schema.json): a change is {name, kind, direct, forked, old, new}, each side
    null or {version, source, url or path, commit (git)}, and `entries` when the row stands for
    several lock entries (forked wheel URLs that moved alike; the URLs are the first's)."""
    return redacted_json(
        {
            "schema": SCHEMA,
            "depsync": __version__,
            "old": old,
            "new": new,
            "changes": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    "direct": c.direct,
                    "forked": c.forked,
                    "old": _side(c.old_version, c.old_source, c.old_url, c.old_commit),
                    "new": _side(c.new_version, c.new_source, c.new_url, c.new_commit),
                    **({"entries": c.entries} if c.entries > 1 else {}),
                }
                for c in changes
            ],
            "summary": summarize(changes),
        },
        indent=2,
    )
