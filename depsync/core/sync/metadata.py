"""Keep [[tool.uv.dependency-metadata]] in step with moved git pins (pure).

When a source takes main's value and main declares metadata for that package, main's
entry is taken (its public version may have moved too, e.g. TransformerEngine
2.14.0+f031cf87 -> 2.17.1+4329ff84). Otherwise a hex local segment that names the old
rev follows the new rev.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from depsync.core.names import canonicalize_name
from depsync.core.rules.metadata import follow_rev, local_sha
from depsync.core.sync.sources import SourceDecision
from depsync.records import record

_FIELDS = ("version", "requires-dist", "requires-python", "provides-extras")


@record
class MetadataUpdate:
    name: str  # as written in the entry
    action: str  # "update" or "add"
    changes: tuple[tuple[str, Any, Any], ...]  # (field, old, new)
    reason: str
    needs_review: bool = False


def _git_rev(value: Any) -> str | None:
    if isinstance(value, Mapping) and "git" in value:
        return str(value.get("rev") or value.get("tag") or value.get("branch") or "") or None
    return None


def plan_metadata(dev_entries: Sequence[Mapping[str, Any]], main_entries: Sequence[Mapping[str, Any]], decisions: Sequence[SourceDecision]) -> list[MetadataUpdate]:
    dev_meta = {canonicalize_name(str(e.get("name", ""))): e for e in dev_entries}
    main_meta = {canonicalize_name(str(e.get("name", ""))): e for e in main_entries}
    updates = []
    for decision in decisions:
        if not decision.changes_dev or decision.result is None:
            continue
        key = canonicalize_name(decision.name)
        mine, theirs = dev_meta.get(key), main_meta.get(key)
        if decision.taken_from == "main" and theirs is not None:
            if mine is None:
                updates.append(MetadataUpdate(str(theirs["name"]), "add", tuple((f, None, theirs[f]) for f in _FIELDS if f in theirs), "main's metadata for main's pin"))
                continue
            changes = tuple((f, mine.get(f), theirs.get(f)) for f in _FIELDS if mine.get(f) != theirs.get(f))
            if changes:
                updates.append(MetadataUpdate(str(mine["name"]), "update", changes, "main's metadata for main's pin"))
            continue
        if mine is None or "version" not in mine:
            continue
        version = str(mine["version"])
        sha, old_rev, new_rev = local_sha(version), _git_rev(decision.dev), _git_rev(decision.result)
        if not sha or not old_rev or not old_rev.lower().startswith(sha):
            continue
        new_version = follow_rev(version, new_rev or "")
        if new_version == version:
            updates.append(
                MetadataUpdate(str(mine["name"]), "update", (), f"version {version} names the old rev but the new pin {new_rev!r} is not a commit: set it by hand", True)
            )
        else:
            updates.append(MetadataUpdate(str(mine["name"]), "update", (("version", version, new_version),), "local version follows the new rev"))
    return updates
