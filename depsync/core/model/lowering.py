"""What uv records in uv.lock for a pyproject.toml ("lowering", in uv's words).

uv turns each requirement string plus [tool.uv.sources] into the requirement tables
it writes under the root package's [package.metadata] and [manifest]. This module
predicts those tables, so the freshness rule can compare them with the lock without
resolving anything.
"""

from __future__ import annotations

from typing import Any

from depsync.core.model.markers import conjoin, is_never, negate, parse_marker
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.requirements import (
    REGISTRY,
    Req,
    Source,
    git_source,
    normalize_url,
    parse_requirement,
    source_from_direct_url,
    specifier_key,
)
from depsync.core.names import canonicalize_name
from depsync.errors import DepsyncError
from depsync.records import record


@record
class ExpectedInputs:
    """The inputs uv would record for this pyproject.toml."""

    requires_dist: tuple[Req, ...]
    # requires_dist with the project's own extras expanded (`proj[utils]` inside extra `all`), None
    # when nothing refers to the project itself: what a build backend reports, and the form uv
    # also accepts for a package whose version is dynamic (uv's FlatRequiresDist)
    flat_requires_dist: tuple[Req, ...] | None
    provides_extras: frozenset[str]
    requires_dev: dict[str, tuple[Req, ...]]
    overrides: tuple[Req, ...]
    constraints: tuple[Req, ...]
    build_constraints: tuple[Req, ...]


def index_urls(project: Pyproject) -> dict[str, str]:
    """[[tool.uv.index]] URLs by name."""
    return {entry["name"]: normalize_url(entry["url"]) for entry in project.uv.get("index", []) if "name" in entry}


@record
class Context:
    """Where a pyproject.toml stands in its workspace, for lowering its requirements.

    uv records path sources relative to the workspace root, so a path written in a path
    package or member (`{ path = "../b" }` in libs/a) is joined to that package's directory
    (`libs/b`). Workspace members use the root's [tool.uv.sources] where they have no entry of
    their own and the root's [[tool.uv.index]] names; path packages that are not members get
    neither (measured with uv 0.13.9).
    """

    directory: str = "."  # the pyproject's directory relative to the workspace root
    inherited: dict[str, list[dict[str, Any]]] | None = None  # the root's sources, for a member
    indexes: dict[str, str] | None = None  # the root's index URLs by name, for a member


def join_path(directory: str, path: str) -> str:
    """path (as written in a pyproject in directory) relative to the workspace root; absolute
    paths and `file://` URLs stay as they are."""
    if directory in ("", ".") or path.startswith(("/", "file:")) or (len(path) > 1 and path[1] == ":"):
        return path
    return f"{directory.rstrip('/')}/{path}"


def _lower_source(table: dict[str, Any], indexes: dict[str, str], where: str, directory: str = ".") -> Source:
    """One [tool.uv.sources] table as the source uv records."""
    if "git" in table:
        ref_kind = next((k for k in ("rev", "tag", "branch") if k in table), None)
        return git_source(str(table["git"]), ref_kind, str(table[ref_kind]) if ref_kind else None, str(table.get("subdirectory", "")))
    if "path" in table:
        kind = "editable" if table.get("editable") else "path"
        return Source(kind, join_path(directory, str(table["path"]).rstrip("/") or "."))
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


def lower(text: str, origin: str, project: Pyproject, context: Context = Context(), *, scope: str | None = None) -> list[Req]:
    """One requirement string as the Req(s) uv records.

    origin is "dependencies", "extra:NAME", "group:NAME" or a [tool.uv] list name;
    sources restricted with `extra =`/`group =` apply only there, and a list of
    sources with markers gives one Req per entry, plus one source-less Req for the
    environments no source marker covers (uv fills that space with the plain requirement).
    scope replaces the `extra == NAME` clause of an extra's requirement (flattening a
    self-referencing extra, see flatten_self_extras).
    """
    where = project.path
    requirement = parse_requirement(text, where)
    name = canonicalize_name(requirement.name)
    extras = frozenset(canonicalize_name(e) for e in requirement.extras)
    marker = conjoin(requirement.marker)
    if scope is not None:
        marker = conjoin(marker, scope)
    elif origin.startswith("extra:"):
        marker = conjoin(marker, f"extra == '{origin[6:]}'")
    spec = specifier_key(str(requirement.specifier))
    # the requirement as written: where no source applies (a direct URL is its own source)
    plain_spec, plain_source = (frozenset(), source_from_direct_url(requirement.url)) if requirement.url else (spec, REGISTRY)
    indexes = {**(context.indexes or {}), **index_urls(project)}
    applicable: list[dict[str, Any]] = []
    # a member's own entry for a package replaces the root's (uv merges per package name)
    sources = {**(context.inherited or {}), **project.sources()}
    for table in sources.get(name, []):
        if "extra" in table and origin != f"extra:{canonicalize_name(str(table['extra']))}":
            continue
        if "group" in table and origin != f"group:{canonicalize_name(str(table['group']))}":
            continue
        applicable.append(table)
    if not applicable:
        return [Req(name, extras, plain_spec, marker, plain_source, text, origin)]
    # a [tool.uv.sources] entry applies to a direct URL requirement too, and wins (measured with
    # uv 0.13.9: `zeta @ git+URL@c2` with `zeta = { git = URL, rev = c1 }` locks c1)
    out = []
    uncovered: list[str] | None = []  # the negated source markers; None: the sources cover everything
    for table in applicable:
        source = _lower_source(table, indexes, where, context.directory)
        # uv drops the version specifier for git, path and url sources, keeps it for an index
        keep_spec = spec if source.kind in ("index",) else frozenset()
        source_marker = parse_marker(table.get("marker"))  # validates it
        if source_marker is None:
            uncovered = None
        elif uncovered is not None:
            negated = negate(source_marker)  # None: the source marker is never true, it covers nothing
            uncovered = uncovered if negated is None else [*uncovered, negated]
        combined = conjoin(marker, source_marker)
        if source_marker is not None and combined is not None and is_never(combined):
            continue  # uv drops a source entry the requirement's own marker rules out
        out.append(Req(name, extras, keep_spec, combined, source, text, origin))
    if uncovered is not None:
        # uv: "fill the remaining space with the negation of the sources": the requirement as
        # written (specifier kept, default index) where no source marker holds, if anywhere
        remaining = conjoin(marker, *uncovered)
        if not is_never(remaining):  # None: the sources leave everything uncovered
            out.append(Req(name, extras, plain_spec, remaining, plain_source, text, origin))
    return out


def _unique(reqs: list[Req]) -> tuple[Req, ...]:
    """uv records a requirement that comes out twice (same name, extras, specifier, source and an
    equivalent marker, e.g. `a; x` and `a` under a source limited to `x`) once."""
    out: list[Req] = []
    # only requirements alike in all but the marker can be one: their markers are compared
    # (a project's hundred requirements were ~5,000 comparisons, each a marker proof)
    alike: dict[tuple[object, ...], list[Req]] = {}
    for req in reqs:
        kept = alike.setdefault((req.name, req.extras, req.specifier, req.source), [])
        if not any(req.matches(other) for other in kept):
            kept.append(req)
            out.append(req)
    return tuple(out)


# bound on the (extra, scope) pairs one flattening expands: chains of self-references are a
# handful deep in real projects; a hostile cycle with growing markers stops here
_MAX_FLATTENED = 512


def flatten_self_extras(project: Pyproject, context: Context, requires_dist: list[Req]) -> tuple[Req, ...] | None:
    """requires_dist with each `proj[x]` (the project's own extra x) replaced by x's requirements
    under the referring requirement's marker, transitively; self-references without a version
    specifier dropped (uv's FlatRequiresDist). None when there is no self-reference."""
    name = project.name
    if not name or all(r.name != name for r in requires_dist):
        return None
    flat = list(requires_dist)
    queue = [(extra, req.marker) for req in requires_dist if req.name == name for extra in sorted(req.extras)]
    seen: set[tuple[str, str | None]] = set()
    extras = project.optional_dependencies
    while queue and len(seen) < _MAX_FLATTENED:
        extra, scope = queue.pop(0)
        if (extra, scope) in seen:
            continue
        seen.add((extra, scope))
        for text in extras.get(extra, ()):
            for req in lower(text, f"extra:{extra}", project, context, scope=scope or "python_full_version >= '0'"):
                if req.name == name:
                    queue += [(e, req.marker) for e in sorted(req.extras)]
                else:
                    flat.append(req)
    return _unique([r for r in flat if r.name != name or r.specifier or r.source != REGISTRY])


def expected_inputs(project: Pyproject, context: Context = Context()) -> ExpectedInputs:
    """Inputs uv records for project (the root, a workspace member or a path package)."""
    requires_dist: list[Req] = []
    for text in project.dependencies:
        requires_dist += lower(text, "dependencies", project, context)
    for extra, deps in project.optional_dependencies.items():
        for text in deps:
            requires_dist += lower(text, f"extra:{extra}", project, context)
    requires_dev = {
        group: _unique([r for text in deps for r in lower(text, f"group:{group}", project, context)])
        for group, deps in project.groups().items()
    }

    def lowered(key: str) -> tuple[Req, ...]:
        return tuple(r for text in project.uv.get(key, []) for r in lower(text, key, project, context))

    return ExpectedInputs(
        requires_dist=_unique(requires_dist),
        flat_requires_dist=flatten_self_extras(project, context, requires_dist),
        provides_extras=frozenset(project.optional_dependencies),
        requires_dev=requires_dev,
        overrides=lowered("override-dependencies"),
        constraints=lowered("constraint-dependencies"),
        build_constraints=lowered("build-constraint-dependencies"),
    )
