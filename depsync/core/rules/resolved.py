"""Static freshness of a lock package without [package.metadata] (uv's preview lock format).

uv 0.13 with `preview = true` writes revision-5 locks whose packages record no requires-dist,
provides-extras or requires-dev. It then validates a lock by what was resolved (measured with
uv 0.13.9, `uv lock --check --offline -v`): a package's `dependencies`, each extra's and each
group's list must name exactly the requirements pyproject asks for (name, extras, marker, against
requires-python), each resolved to a version the specifier allows and from the source it names
("mismatched resolved dependencies"); the extras and the groups must be the same sets, empty ones
included ("mismatched extras"). Tightening `alpha>=1.0` to `alpha>=1.5` over a locked 2.0 is
fresh; to `alpha>=3` it is stale. Pure: the lock and the pyproject in, problems out.
"""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from depsync.core.findings import listed
from depsync.core.model.lock import Lock, LockPackage
from depsync.core.model.lowering import Context, lower
from depsync.core.model.markers import markers_equivalent
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.requirements import (
    REGISTRY,
    Req,
    Source,
    source_from_lock_table,
    sources_match,
    uv_requirement,
)
from depsync.core.names import canonicalize_name
from depsync.records import record

PREVIEW_REVISION = 5  # the first revision uv writes without [package.metadata] (with preview = true)


@record
class Problem:
    message: str
    pyproject_line: int = 0
    lock_line: int = 0


@record
class _Entry:
    """One resolved dependency of the lock: `{ name = "gamma", extra = ["x"], marker = "..." }`."""

    name: str
    extras: frozenset[str]
    marker: str | None
    package: LockPackage | None  # the locked package it resolved to; None: not one (ambiguous or absent)


def applies(package: LockPackage, lock: Lock) -> bool:
    """A package of a lock that records no metadata for it: compared by what was resolved."""
    return lock.revision >= PREVIEW_REVISION and "metadata" not in package.raw


def problems(project: Pyproject, package: LockPackage, lock: Lock, context: Context, *, member: bool) -> list[Problem]:
    """What uv would find mismatched between project and its lock package (empty: fresh)."""
    found: list[Problem] = []
    raw = package.raw
    lines = project.lines
    wanted = {"dependencies": [r for text in project.dependencies for r in lower(text, "dependencies", project, context)]}
    recorded: dict[str, Any] = {"dependencies": raw.get("dependencies", [])}
    extras = {canonicalize_name(k): v for k, v in (raw.get("optional-dependencies") or {}).items()}
    wanted_extras = {canonicalize_name(e) for e in project.optional_dependencies}
    if set(extras) != wanted_extras:
        added, removed = sorted(wanted_extras - set(extras)), sorted(set(extras) - wanted_extras)
        parts = ([f"added {listed(added)}"] if added else []) + ([f"removed {listed(removed)}"] if removed else [])
        found.append(Problem(f"{project.name} extras changed ({'; '.join(parts)})", lines.table("project.optional-dependencies")))
    for extra, texts in project.optional_dependencies.items():
        key = canonicalize_name(extra)
        if key in extras:
            # the lock lists an extra's requirements without the `extra == ...` clause: scope "" drops it
            wanted[f"extra {key}"] = [r for text in texts for r in lower(text, f"extra:{key}", project, context, scope="")]
            recorded[f"extra {key}"] = extras[key]
    if member:
        groups = {canonicalize_name(k): v for k, v in (raw.get("dev-dependencies") or {}).items()}
        wanted_groups = {canonicalize_name(g): [r for text in texts for r in lower(text, f"group:{canonicalize_name(g)}", project, context)]
                         for g, texts in project.groups().items()}
        for group in sorted(set(groups) ^ set(wanted_groups)):
            if group in groups:
                found.append(Problem(f"the lock records dependency group {group!r} of {project.name}, which pyproject no longer defines", lock_line=package.line))
            else:
                found.append(Problem(f"dependency group {group!r} of {project.name} is not in the lock", project.line_of_group(group)))
        for group in sorted(set(groups) & set(wanted_groups)):
            wanted[f"group {group}"], recorded[f"group {group}"] = wanted_groups[group], groups[group]
    for what in wanted:
        found += _compare(what, wanted[what], [_entry(e, lock) for e in recorded[what] if isinstance(e, dict)], project, package, lock)
    return found


def _entry(table: dict[str, Any], lock: Lock) -> _Entry:
    name = canonicalize_name(str(table.get("name", "")))
    candidates = lock.find(name)
    if "version" in table:
        candidates = [p for p in candidates if p.version == str(table["version"])]
    if "source" in table and isinstance(table["source"], dict):
        wanted = source_from_lock_table(table["source"])
        candidates = [p for p in candidates if p.source == wanted]
    extras = frozenset(canonicalize_name(str(e)) for e in table.get("extra", []) or [])
    return _Entry(name, extras, table.get("marker"), candidates[0] if len(candidates) == 1 else None)


def _compare(what: str, wanted: list[Req], entries: list[_Entry], project: Pyproject, package: LockPackage, lock: Lock) -> list[Problem]:
    requires_python = lock.requires_python or ""
    matched: set[int] = set()
    out: list[Problem] = []
    for req in wanted:
        hit = next((i for i, e in enumerate(entries) if e.name == req.name and e.extras == req.extras and markers_equivalent(req.marker, e.marker, requires_python)), None)
        line = project.line_of_requirement(req.text, req.origin) if req.text else 0
        if hit is None:
            out.append(Problem(f"{what}: pyproject asks for `{req.describe()}`; the lock resolved no such dependency", line, package.line))
            continue
        matched.add(hit)
        why = _unsatisfied(req, entries[hit].package, lock)
        if why:
            out.append(Problem(f"{what}: pyproject asks for `{req.describe()}`; {why}", line, package.line))
    for index, entry in enumerate(entries):
        if index not in matched and not any(r.name == entry.name and r.extras == entry.extras and markers_equivalent(r.marker, entry.marker, requires_python) for r in wanted):
            marker = f"; {entry.marker}" if entry.marker else ""
            extras = f"[{','.join(sorted(entry.extras))}]" if entry.extras else ""
            out.append(Problem(f"{what}: the lock resolved `{entry.name}{extras}{marker}`, which pyproject no longer asks for", lock_line=package.line))
    return out


def _unsatisfied(req: Req, locked: LockPackage | None, lock: Lock) -> str:
    """Why the locked package does not fulfil req ("" when it does)."""
    if locked is None:
        return f"the lock does not resolve {req.name} to one package"
    if not _same_source(req.source, locked.source):
        return f"the lock resolved {req.name} from {locked.source.describe()}"
    if req.source.kind in ("registry", "index") and req.text:
        parsed = uv_requirement(req.text)
        if parsed is not None and str(parsed.specifier) and locked.version is not None:
            try:
                allowed = parsed.specifier.contains(Version(locked.version), prereleases=True)
            except InvalidVersion:
                allowed = False
            if not allowed:
                return f"the lock resolved {req.name} {locked.version}, which `{parsed.specifier}` does not allow"
    return ""


def _same_source(expected: Source, recorded: Source) -> bool:
    if expected == REGISTRY:
        return recorded.kind == "registry"
    if expected.kind == "index":
        return recorded.kind == "registry" and recorded.value.rstrip("/") == expected.value.rstrip("/")
    if expected.kind == "git" and recorded.kind == "git":
        return expected.value == recorded.value and expected.subdirectory == recorded.subdirectory and (
            expected.ref is None or recorded.ref is None or expected.ref[1] == recorded.ref[1]
        )
    return sources_match(expected, recorded)
