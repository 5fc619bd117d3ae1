"""Workspace members the lock records that are in git submodules that are not checked out
(actions/checkout's default). One finding says so (members-not-checked-out), at the work tree and
at a ref alike; every rule that reads members says it cannot judge them, and none calls the lock
stale for them (uv would drop them from the lock, so relocking is not the fix)."""

from __future__ import annotations

from collections.abc import Iterator

from depsync.core.findings import Finding, listed
from depsync.core.model.lock import Lock
from depsync.core.names import canonicalize_name
from depsync.core.rules.inputs import CheckInputs

HINT = "`git submodule update --init`?"
FIX = "check out the submodules (`git submodule update --init`; in GitHub Actions, `actions/checkout` with `submodules: true`) and check again"


def missing_member_dirs(inputs: CheckInputs) -> dict[str, str]:
    """name -> lock path of each recorded workspace member in a submodule that is not checked out."""
    return dict(inputs.members_not_checked_out)


def missing_hint(missing: dict[str, str]) -> str:
    """`member directory missing: a, b (`git submodule update --init`?)`, the list cut to its first
    few; empty when none is."""
    return f"member directory missing: {listed(sorted(missing.values()))} ({HINT})" if missing else ""


def recorded_member_dirs(lock: Lock) -> dict[str, str]:
    """name -> lock path of each workspace member the lock records, the root (".") left out."""
    recorded = {canonicalize_name(str(m)) for m in lock.manifest.get("members", []) or []}
    return {
        p.name: p.source.value
        for p in lock.packages
        if p.name in recorded and p.source.kind in ("editable", "directory", "virtual") and p.source.value != "."
    }


def check(inputs: CheckInputs) -> Iterator[Finding]:
    from depsync.core.rules.registry import RULES

    missing = inputs.members_not_checked_out
    if not missing or inputs.lock is None:
        return
    paths = sorted(missing.values())
    count = len(paths)
    members = "workspace member is in a git submodule that is" if count == 1 else "workspace members are in git submodules that are"
    yield RULES["members-not-checked-out"].finding(
        inputs.config.lock,
        inputs.lock.line_of_key("members") or inputs.lock.line_of_table("manifest"),
        f"{count} {members} not checked out ({listed(paths)}), so what the lock records for "
        f"{'it' if count == 1 else 'them'} was not checked: `git submodule update --init`",
        FIX,
        tuple(paths),
    )
