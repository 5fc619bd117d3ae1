"""Workspace members the lock records whose directory is not there (usually a git submodule that
is not checked out). Every rule that reads members says so instead of judging without them."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from depsync.core.model.lock import Lock
from depsync.core.rules.inputs import CheckInputs

HINT = "`git submodule update --init`?"
FIX = "check out the missing member directories (`git submodule update --init`) and check again"


def missing_member_dirs(inputs: CheckInputs) -> dict[str, str]:
    """name -> lock path of each recorded workspace member that has no pyproject.toml on disk."""
    lock, members = inputs.lock, inputs.workspace_members
    if lock is None or members is None:
        return {}
    recorded = {canonicalize_name(str(m)) for m in lock.manifest.get("members", []) or []}
    return {
        p.name: p.source.value
        for p in lock.packages
        if p.name in recorded - members and p.source.kind in ("editable", "directory", "virtual") and p.source.value not in inputs.local_projects
    }


def missing_hint(missing: dict[str, str]) -> str:
    """`member directory missing: a, b (`git submodule update --init`?)`, empty when none is."""
    return f"member directory missing: {', '.join(sorted(missing.values()))} ({HINT})" if missing else ""


def recorded_member_dirs(lock: Lock) -> dict[str, str]:
    """name -> lock path of each workspace member the lock records, the root (".") left out."""
    recorded = {canonicalize_name(str(m)) for m in lock.manifest.get("members", []) or []}
    return {
        p.name: p.source.value
        for p in lock.packages
        if p.name in recorded and p.source.kind in ("editable", "directory", "virtual") and p.source.value != "."
    }
