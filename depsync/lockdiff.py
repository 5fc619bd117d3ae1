"""What changed between two locks, package by package (pure).

Forked resolutions put several entries with one name in a lock (Megatron's dev lock
has two `nvidia-cudnn-frontend 1.25.0`, one from the index and one from git), so
entries are compared as (version, source) sets per name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from depsync.model.lock import Lock, LockPackage


@dataclass(frozen=True)
class PackageChange:
    name: str
    kind: str  # added, removed, upgraded, downgraded, source-changed
    old: str  # "1.2.0 (registry)" or "" when added
    new: str
    direct: bool  # asked for by the project itself, not only by other packages


def _label(package: LockPackage) -> str:
    source = package.source
    if source.kind == "git":
        commit = str(package.raw.get("source", {}).get("git", "")).partition("#")[2][:8]
        where = f"git {commit}" if commit else "git"
    elif source.kind == "registry":
        where = "registry"
    else:
        where = f"{source.kind} {source.value}"
    return f"{package.version or '?'} ({where})"


def _identity(package: LockPackage) -> tuple[str | None, str]:
    return (package.version, _label(package))


def _compare(old: str | None, new: str | None) -> str:
    try:
        return "upgraded" if Version(new or "0") > Version(old or "0") else "downgraded"
    except InvalidVersion:
        return "upgraded"


def direct_names(lock: Lock) -> set[str]:
    """Names the root packages ask for directly (requires-dist and requires-dev)."""
    names: set[str] = set()
    for package in lock.packages:
        if not package.is_project_root():
            continue
        metadata = package.raw.get("metadata", {})
        tables: list = list(metadata.get("requires-dist", []))
        for group in metadata.get("requires-dev", {}).values():
            tables.extend(group)
        names.update(canonicalize_name(str(t.get("name", ""))) for t in tables if isinstance(t, dict))
    return names


def diff_locks(old: Lock, new: Lock, direct: Iterable[str] | None = None) -> list[PackageChange]:
    direct_set = set(direct) if direct is not None else direct_names(new) | direct_names(old)
    by_name_old: dict[str, list[LockPackage]] = {}
    by_name_new: dict[str, list[LockPackage]] = {}
    for package in old.packages:
        by_name_old.setdefault(package.name, []).append(package)
    for package in new.packages:
        by_name_new.setdefault(package.name, []).append(package)
    changes = []
    for name in sorted(set(by_name_old) | set(by_name_new)):
        before, after = by_name_old.get(name, []), by_name_new.get(name, [])
        if {_identity(p) for p in before} == {_identity(p) for p in after}:
            continue
        is_direct = name in direct_set
        if len(before) == 1 and len(after) == 1:
            a, b = before[0], after[0]
            kind = "source-changed" if a.version == b.version else _compare(a.version, b.version)
            changes.append(PackageChange(name, kind, _label(a), _label(b), is_direct))
            continue
        gone = [p for p in before if _identity(p) not in {_identity(q) for q in after}]
        came = [p for p in after if _identity(p) not in {_identity(q) for q in before}]
        changes += [PackageChange(name, "removed", _label(p), "", is_direct) for p in gone]
        changes += [PackageChange(name, "added", "", _label(p), is_direct) for p in came]
    return changes


def summarize(changes: Iterable[PackageChange]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return counts
