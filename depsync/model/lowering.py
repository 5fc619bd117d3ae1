"""What uv records in uv.lock for a pyproject.toml ("lowering", in uv's words).

uv turns each requirement string plus [tool.uv.sources] into the requirement tables
it writes under the root package's [package.metadata] and [manifest]. This module
predicts those tables, so the freshness rule can compare them with the lock without
resolving anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.utils import canonicalize_name

from depsync.errors import DepsyncError
from depsync.model.markers import conjoin, is_never, parse_marker
from depsync.model.pyproject import Pyproject
from depsync.model.requirements import (
    REGISTRY,
    Req,
    Source,
    git_source,
    normalize_url,
    parse_requirement,
    source_from_direct_url,
    specifier_key,
)


@dataclass(frozen=True)
class ExpectedInputs:
    """The inputs uv would record for this pyproject.toml."""

    requires_dist: tuple[Req, ...]
    provides_extras: frozenset[str]
    requires_dev: dict[str, tuple[Req, ...]]
    overrides: tuple[Req, ...]
    constraints: tuple[Req, ...]
    build_constraints: tuple[Req, ...]


def _index_urls(project: Pyproject) -> dict[str, str]:
    return {entry["name"]: normalize_url(entry["url"]) for entry in project.uv.get("index", []) if "name" in entry}


def _lower_source(table: dict[str, Any], indexes: dict[str, str], where: str) -> Source:
    """One [tool.uv.sources] table as the source uv records."""
    if "git" in table:
        ref_kind = next((k for k in ("rev", "tag", "branch") if k in table), None)
        return git_source(str(table["git"]), ref_kind, str(table[ref_kind]) if ref_kind else None, str(table.get("subdirectory", "")))
    if "path" in table:
        kind = "editable" if table.get("editable") else "path"
        return Source(kind, str(table["path"]).rstrip("/") or ".")
    if "url" in table:
        return Source("url", normalize_url(str(table["url"])), subdirectory=str(table.get("subdirectory", "")))
    if "index" in table:
        name = str(table["index"])
        if name not in indexes:
            raise DepsyncError(f"source names index {name!r}, which no [[tool.uv.index]] declares", where)
        return Source("index", indexes[name])
    if table.get("workspace"):
        return Source("workspace")
    raise DepsyncError(f"source table {table!r} has no git, path, url, index or workspace key", where)


def lower(text: str, origin: str, project: Pyproject, inherited: dict[str, list[dict[str, Any]]] | None = None) -> list[Req]:
    """One requirement string as the Req(s) uv records.

    origin is "dependencies", "extra:NAME", "group:NAME" or a [tool.uv] list name;
    sources restricted with `extra =`/`group =` apply only there, and a list of
    sources with markers gives one Req per entry.
    """
    where = project.path
    requirement = parse_requirement(text, where)
    name = canonicalize_name(requirement.name)
    extras = frozenset(canonicalize_name(e) for e in requirement.extras)
    marker = conjoin(requirement.marker)
    if origin.startswith("extra:"):
        marker = conjoin(marker, f"extra == '{origin[6:]}'")
    spec = specifier_key(str(requirement.specifier))
    if requirement.url:
        return [Req(name, extras, frozenset(), marker, source_from_direct_url(requirement.url), text, origin)]
    indexes = _index_urls(project)
    applicable: list[dict[str, Any]] = []
    sources = {**(inherited or {}), **project.sources()}  # a member's own sources win over the root's
    for table in sources.get(name, []):
        if "extra" in table and origin != f"extra:{canonicalize_name(str(table['extra']))}":
            continue
        if "group" in table and origin != f"group:{canonicalize_name(str(table['group']))}":
            continue
        applicable.append(table)
    if not applicable:
        return [Req(name, extras, spec, marker, REGISTRY, text, origin)]
    out = []
    for table in applicable:
        source = _lower_source(table, indexes, where)
        # uv drops the version specifier for git, path and url sources, keeps it for an index
        keep_spec = spec if source.kind in ("index",) else frozenset()
        source_marker = parse_marker(table.get("marker"))  # validates it
        combined = conjoin(marker, source_marker)
        if source_marker is not None and combined is not None and is_never(combined):
            continue  # uv drops a source entry the requirement's own marker rules out
        out.append(Req(name, extras, keep_spec, combined, source, text, origin))
    return out


def _unique(reqs: list[Req]) -> tuple[Req, ...]:
    """uv records a requirement that comes out twice (same name, extras, specifier, source and an
    equivalent marker, e.g. `a; x` and `a` under a source limited to `x`) once."""
    out: list[Req] = []
    for req in reqs:
        if not any(req.matches(kept) and kept.source == req.source for kept in out):
            out.append(req)
    return tuple(out)


def expected_inputs(project: Pyproject, inherited: dict[str, list[dict[str, Any]]] | None = None) -> ExpectedInputs:
    """Inputs uv records for project; inherited: the workspace root's sources, for a member."""
    requires_dist: list[Req] = []
    for text in project.dependencies:
        requires_dist += lower(text, "dependencies", project, inherited)
    for extra, deps in project.optional_dependencies.items():
        for text in deps:
            requires_dist += lower(text, f"extra:{extra}", project, inherited)
    requires_dev = {
        group: _unique([r for text in deps for r in lower(text, f"group:{group}", project, inherited)])
        for group, deps in project.groups().items()
    }

    def lowered(key: str) -> tuple[Req, ...]:
        return tuple(r for text in project.uv.get(key, []) for r in lower(text, key, project))

    return ExpectedInputs(
        requires_dist=_unique(requires_dist),
        provides_extras=frozenset(project.optional_dependencies),
        requires_dev=requires_dev,
        overrides=lowered("override-dependencies"),
        constraints=lowered("constraint-dependencies"),
        build_constraints=lowered("build-constraint-dependencies"),
    )
