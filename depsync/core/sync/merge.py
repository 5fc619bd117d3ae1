"""Pure: pyproject.toml merged the way reconcile does, for reconcile, the merge driver and the guard.

Three versions (base, dev = the owner's side, main) are first aligned: each gets the
three-way result for [tool.uv.sources] and for the dependency-metadata of the
decided packages. git's text merge of the aligned versions then only has to merge
everything else, where a real conflict stays a conflict.

Only reconcile gathers evidence from outside the texts (rev order upstream, dev's
history). What the texts themselves say (does dev depend on a package) is read here,
so the driver and the guard decide those rows the way reconcile does.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from depsync.core.config import Config
from depsync.core.names import canonicalize_name
from depsync.core.sync.document import Coupling, KeyDecision, couple, merge_document
from depsync.core.sync.document_edit import apply_document
from depsync.core.sync.metadata import MetadataUpdate, plan_metadata
from depsync.core.sync.pyproject_edit import align_metadata, apply_plan
from depsync.core.sync.sources import (
    Evidence,
    Policy,
    SourceDecision,
    merge_sources,
    normalize,
    possible_sides,
)
from depsync.core.sync.surface import (
    EntryDecision,
    SurfaceEvidence,
    conflict_names,
    merge_surface,
    requirement_key,
    requirement_tables,
    result_requires,
    taken_from_main,
)
from depsync.core.sync.surface_edit import apply_surface
from depsync.errors import DepsyncError
from depsync.records import record, replace


@record
class AlignedVersions:
    """The three versions a text merge gets, with sources and metadata already merged three-way."""

    ours: str
    base: str
    theirs: str
    decisions: tuple[SourceDecision, ...]
    metadata: tuple[MetadataUpdate, ...]


def policy_of(config: Config) -> Policy:
    return Policy(config.conflict_policy, frozenset(canonicalize_name(n) for n in config.owned_by_dev), {canonicalize_name(k): v for k, v in config.prefer.items()})


def uv_tables(text: str) -> tuple[dict, list]:
    """([tool.uv.sources], [[tool.uv.dependency-metadata]]) of a pyproject text: what reconcile may change."""
    uv = tomllib.loads(text).get("tool", {}).get("uv", {})
    return uv.get("sources", {}), uv.get("dependency-metadata", [])


def dev_requires(dev_text: str) -> frozenset[str]:
    """Normalized names dev's pyproject asks for (dependencies, extras, groups, overrides...)."""
    from depsync.core.model.pyproject import Pyproject
    from depsync.core.rules.sources import required_names

    try:
        return frozenset(required_names(Pyproject.from_text(dev_text)))
    except DepsyncError:
        return frozenset()  # a dev pyproject that does not validate: the rows that need this say "does not depend"


def reconciled_pyproject(
    base: str, dev: str, main: str, config: Config, evidence: Evidence | None = None, tables: list[tuple[dict, list]] | None = None
) -> tuple[str, list[SourceDecision], list[MetadataUpdate]]:
    """Dev's pyproject with the three-way sources and metadata applied (what reconcile writes).

    Without evidence, only what dev's text says is known (which packages dev depends on).
    tables: the texts' uv_tables() when the caller has them already."""
    (base_sources, _), (dev_sources, dev_meta), (main_sources, main_meta) = tables or [uv_tables(t) for t in (base, dev, main)]
    if evidence is None:
        evidence = Evidence(dev_requires=dev_requires(dev))
    decisions = merge_sources(base_sources, dev_sources, main_sources, policy_of(config), evidence)
    metadata = plan_metadata(dev_meta, main_meta, decisions)
    return apply_plan(dev, main, decisions, metadata), decisions, metadata


@record
class MergedPyproject:
    """What reconcile writes for pyproject.toml, and every decision that made it."""

    text: str
    sources: list[SourceDecision]
    metadata: list[MetadataUpdate]
    surface: list[EntryDecision]
    keys: list[KeyDecision]  # the rest of the file, three-way (depsync.core.sync.document)


def reconciled_pyproject_whole(
    texts: Mapping[str, str], data: Mapping[str, Mapping[str, Any]], config: Config, evidence: Evidence, surface_evidence: SurfaceEvidence, default_side: str = "dev"
) -> MergedPyproject:
    """The whole file three-way: the dependency surface on evidence (reconciled_surface), then
    every other key by git's rule (one side changed it: that side's; both: a flagged conflict)."""
    text, sources, metadata, surface = reconciled_surface(texts, data, config, evidence, surface_evidence, default_side)
    main_asks = frozenset(d.name for d in surface if d.kind == "requirement" and d.main is not None)
    keys = couple(merge_document(data["base"], data["dev"], data["main"], conflict_side=config.conflict_policy), Coupling(result_requires(surface), main_asks))
    return MergedPyproject(apply_document(text, texts["main"], keys), sources, metadata, surface, keys)


def reconciled_surface(
    texts: Mapping[str, str], data: Mapping[str, Mapping[str, Any]], config: Config, evidence: Evidence, surface_evidence: SurfaceEvidence, default_side: str = "dev"
) -> tuple[str, list[SourceDecision], list[MetadataUpdate], list[EntryDecision]]:
    """The whole surface three-way (reconcile): requirements, settings, indexes, conflicts and
    metadata first, then the sources decided with them (a source main added comes with the
    requirement main added, or stays out with it), then the metadata that follows the pins.

    texts and data: the three sides' pyproject texts and parsed tables ("base", "dev", "main")."""
    policy = policy_of(config)
    coupled = surface_evidence
    surface = merge_surface(data["base"], data["dev"], data["main"], policy, coupled, default_side)
    # entries that belong together, decided together: an index comes or stays out with the
    # requirements whose sources name it, a named group or extra comes with what names it ...
    needed, unneeded = {**_indexes_needed(surface, data["main"]), **_tables_needed(surface, data)}, _indexes_unneeded(surface, data["main"])
    moved = _moves_not_taken(surface)
    if needed or unneeded or moved:
        coupled = replace(coupled, needed={**coupled.needed, **needed}, unneeded={**coupled.unneeded, **unneeded}, moved={**coupled.moved, **moved})
        surface = merge_surface(data["base"], data["dev"], data["main"], policy, coupled, default_side)
    # ... and a conflict set stays out with an extra or group the merge did not take, or stays
    # while every extra and group it names does
    orphans, kept_sets = _conflicts_unneeded(surface, data["dev"]), _conflicts_still_named(surface, data["dev"])
    if orphans or kept_sets:
        coupled = replace(coupled, unneeded={**coupled.unneeded, **orphans}, needed={**coupled.needed, **kept_sets})
        surface = merge_surface(data["base"], data["dev"], data["main"], policy, coupled, default_side)
    kept = result_requires(surface)
    main_added = {d.name for d in surface if d.kind == "requirement" and d.main is not None and d.main_not_taken}
    # what dev depends on after the merge: a package whose every requirement main removed (taken)
    # is no longer one, so main's removal of its source follows (a source and its requirement go together)
    dropped = {d.name for d in surface if d.kind == "requirement" and d.dev is not None and d.result is None} - kept
    evidence = replace(evidence, dev_requires=evidence.dev_requires - dropped, requirement_taken=taken_from_main(surface), requirement_declined=frozenset(main_added - kept))
    uv = {side: data[side].get("tool", {}).get("uv", {}) for side in ("base", "dev", "main")}
    sources = {side: uv[side].get("sources", {}) for side in uv}
    decisions = merge_sources(sources["base"], sources["dev"], sources["main"], policy, evidence)
    metadata = plan_metadata(uv["dev"].get("dependency-metadata", []), uv["main"].get("dependency-metadata", []), decisions)
    surface = _indexes_with_sources(_metadata_with_sources(surface, decisions, metadata), decisions)
    text = apply_plan(texts["dev"], texts["main"], decisions, metadata)
    return apply_surface(text, texts["main"], surface), decisions, metadata, surface


def _moves_not_taken(surface: Sequence[EntryDecision]) -> dict[tuple[str, str], str]:
    """main's new entries of packages main moved from another table (removed there, added here
    in the same sync) where the merge keeps dev's entry: a move is one decision, so the package
    stays where dev has it instead of being declared twice. Never for project.dependencies:
    main making an optional package required is not a move dev's extra already covers."""
    kept_where = {}
    for d in surface:
        if d.kind == "requirement" and d.case == "main-removed" and d.result is not None:
            kept_where.setdefault(d.name, []).append(d.table)
    moved: dict[tuple[str, str], str] = {}
    for d in surface:
        if d.kind == "requirement" and d.case == "main-added" and d.table != "project.dependencies" and d.name in kept_where:
            tables = ", ".join(t for t in kept_where[d.name] if t != d.table)
            if tables:
                moved[(d.table, d.name)] = f"main removed {d.name} from {tables}, where dev keeps it"
    return moved


def _indexes_needed(surface: Sequence[EntryDecision], main: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """[[tool.uv.index]] entries main's sources name for the packages whose requirement is taken from main."""
    sources = {canonicalize_name(str(k)): v for k, v in main.get("tool", {}).get("uv", {}).get("sources", {}).items()}
    needed: dict[tuple[str, str], str] = {}
    for package in sorted(taken_from_main(surface)):
        value = sources.get(package)
        for table in value if isinstance(value, list) else [value]:
            if isinstance(table, Mapping) and isinstance(table.get("index"), str):
                needed.setdefault(("tool.uv.index", table["index"]), f"main's source for {package} (its requirement is taken) uses index {table['index']!r}")
    return needed


def _tables_needed(surface: Sequence[EntryDecision], data: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """The entries of extras and groups that something taken from main names: main's
    `default-groups` (three-way, taken when dev did not change it), an `include-group` item, or a
    requirement on the project's own extras (`app[cuda]` inside another extra). A name that
    points at nothing makes the file one uv cannot lock, so the named table comes with it."""
    base_uv, dev_uv, main_uv = (data[s].get("tool", {}).get("uv", {}) for s in ("base", "dev", "main"))
    wanted: dict[str, str] = {}  # table -> why
    base_defaults = base_uv.get("default-groups") if isinstance(base_uv.get("default-groups"), list) else []
    if dev_uv.get("default-groups") == base_uv.get("default-groups") and isinstance(main_uv.get("default-groups"), list):
        for group in main_uv["default-groups"]:
            if isinstance(group, str) and group not in base_defaults:
                wanted[f"dependency-groups.{canonicalize_name(group)}"] = f"main's default-groups (taken) names group {group!r}"
    own = canonicalize_name(str(data["main"].get("project", {}).get("name", "")))
    for entry in surface:
        if entry.kind != "requirement" or entry.taken_from != "main" or entry.result is None:
            continue
        if entry.name.startswith("include-group:"):
            group = entry.name.split(":", 1)[1]
            wanted[f"dependency-groups.{group}"] = f"the include-group in {entry.table} (taken) names group {group!r}"
        elif own and entry.name == own:
            for raw in entry.result.raw:
                name, value = requirement_key(str(raw))
                for extra in value[0] if not name.startswith("?") else ():  # (extras, specifier, marker, url)
                    wanted[f"project.optional-dependencies.{extra}"] = f"{entry.table} (taken) asks for the project's own extra {extra!r}"
    # only tables dev does not have: a name that points at dev's own table is satisfied already
    dev_tables = set(requirement_tables(data["dev"]))
    return {(d.table, d.name): wanted[d.table] for d in surface if d.table in wanted and d.table not in dev_tables and d.main is not None and d.kind == "requirement"}


def _conflicts_unneeded(surface: Sequence[EntryDecision], dev: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Conflict sets main added that name an extra or group the merge does not have (main's new
    extra was not taken): the set stays out with it, or uv would refuse the file."""
    present = {d.table for d in surface if d.kind == "requirement" and d.result is not None} | set(requirement_tables(dev))
    out: dict[tuple[str, str], str] = {}
    for d in surface:
        if d.kind != "conflict" or d.case != "main-added" or d.main is None or not d.main.raw:
            continue
        missing = [label for label, table in conflict_names(d.main.raw[0])[0] if table not in present]
        if missing:
            out[("tool.uv.conflicts", d.name)] = f"it names {', '.join(missing)}, which the merge did not take"
    return out


def _conflicts_still_named(surface: Sequence[EntryDecision], dev: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Conflict sets main removed while every extra and group they name stays in the merge (main
    emptied one of them, dev keeps it): uv would resolve the two together again, so the set stays."""
    present = {d.table for d in surface if d.kind == "requirement" and d.result is not None}
    out: dict[tuple[str, str], str] = {}
    for d in surface:
        if d.kind != "conflict" or d.case != "main-removed" or d.dev is None or not d.dev.raw:
            continue
        named, other = conflict_names(d.dev.raw[0])
        if named and not other and all(table in present for _, table in named):
            out[("tool.uv.conflicts", d.name)] = f"every extra and group it names stays in the merge ({', '.join(t.rsplit('.', 1)[1] for _, t in named)})"
    return out


def _source_indexes(value: Any) -> set[str]:
    return {t["index"] for t in (value if isinstance(value, list) else [value]) if isinstance(t, Mapping) and isinstance(t.get("index"), str)}


def _indexes_unneeded(surface: Sequence[EntryDecision], main: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """Explicit indexes main added whose only users are main's sources for requirements that were
    not taken: they stay out with those requirements (an explicit index serves only its sources)."""
    sources = {canonicalize_name(str(k)): v for k, v in main.get("tool", {}).get("uv", {}).get("sources", {}).items()}
    declined = {d.name for d in surface if d.kind == "requirement" and d.main_not_taken and d.main is not None}
    kept = result_requires(surface)
    unneeded: dict[tuple[str, str], str] = {}
    for d in surface:
        if d.kind != "index" or d.case != "main-added" or d.main is None or not d.main.raw or not isinstance(d.main.raw[0], Mapping) or d.main.raw[0].get("explicit") is not True:
            continue
        users = sorted(package for package, value in sources.items() if d.name in _source_indexes(value))
        if users and all(package in declined and package not in kept for package in users):
            unneeded[("tool.uv.index", d.name)] = f"only main's sources for {', '.join(users)} name it, and those requirements were not taken"
    return unneeded


def _indexes_with_sources(surface: Sequence[EntryDecision], decisions: Sequence[SourceDecision]) -> list[EntryDecision]:
    """An index main removed stays while a kept source names it: a source and its index are one
    decision (uv cannot lock a source whose index is not declared)."""
    named: dict[str, list[str]] = {}
    for decision in decisions:
        for index in _source_indexes(decision.result):
            named.setdefault(index, []).append(decision.name)
    out = []
    for entry in surface:
        if entry.kind == "index" and entry.result is None and entry.dev is not None and entry.name in named:
            users = ", ".join(named[entry.name])
            entry = replace(entry, result=entry.dev, taken_from="dev", rule=f"{entry.rule} -> with the source",
                            reason=f"{entry.reason}; not applied: the kept source for {users} names this index, so it stays with it")
        out.append(entry)
    return out


def _metadata_with_sources(surface: Sequence[EntryDecision], decisions: Sequence[SourceDecision], metadata: Sequence[MetadataUpdate]) -> list[EntryDecision]:
    """A dependency-metadata entry describes the package at its pin: where the source decision
    kept dev's pin against main's, or already moved the metadata with it, the metadata follows
    that decision rather than its own three-way case."""
    by_source = {canonicalize_name(d.name): d for d in decisions}
    updates = {canonicalize_name(m.name): m for m in metadata}
    out = []
    for entry in surface:
        source = by_source.get(entry.name) if entry.kind == "metadata" else None
        update = updates.get(entry.name) if entry.kind == "metadata" else None
        if update is not None and update.action in ("add", "update") and update.reason.startswith("main's metadata"):
            entry = replace(entry, result=entry.main, taken_from="main", reason=f"main's metadata, with main's pin of {entry.name}", rule=f"{entry.rule} -> with the source", needs_review=False)
        elif source is not None and entry.changes_dev and (update is not None or (source.taken_from != "main" and source.differs)):
            why = f"the local version follows the new rev ({update.reason})" if update is not None else f"follows the source decision for {source.name}: {source.reason}"
            entry = replace(
                entry, result=entry.dev, taken_from="dev" if entry.dev is not None else "none", reason=f"{entry.reason}; not applied: {why}",
                rule=f"{entry.rule} -> with the source", needs_review=entry.needs_review or (source.needs_review and entry.main_not_taken),
            )
        out.append(entry)
    return out


def expected_pyproject(ours: str, base: str, dev: str, main: str, config: Config) -> str:
    """The pyproject the three-way merge gives, where each entry whose outcome depends on evidence
    only reconcile gathers (rev order, dev's history) takes the side `ours` has when the table
    allows that side: what the guard compares a pushed pyproject with."""
    (base_sources, _), (dev_sources, dev_meta), (main_sources, main_meta), (our_sources, _) = (uv_tables(t) for t in (base, dev, main, ours))
    # dev depends on a package while the pushed file still asks for it (reconcile drops a source
    # with the requirement main removed: dev_requires there is after the merge)
    policy, needs = policy_of(config), dev_requires(dev) & dev_requires(ours)
    decisions = merge_sources(base_sources, dev_sources, main_sources, policy, Evidence(dev_requires=needs))
    ours_by_name = {canonicalize_name(k): v for k, v in our_sources.items()}
    adjusted = []
    for decision in decisions:
        key = canonicalize_name(decision.name)
        mine = normalize(ours_by_name.get(key))
        sides = possible_sides(key, decision.base, decision.dev, decision.main, policy, key in needs)
        for side, value in (("dev", decision.dev), ("main", decision.main), ("none", None)):
            if side in sides and normalize(value) == mine and normalize(decision.result) != mine:
                decision = replace(decision, result=value, taken_from=side if value is not None else "none")
                break
        adjusted.append(decision)
    metadata = plan_metadata(dev_meta, main_meta, adjusted)
    return apply_plan(dev, main, adjusted, metadata)


def aligned_versions(base: str, ours: str, theirs: str, config: Config, ours_is_owner: bool = True) -> AlignedVersions:
    """base, ours and theirs with [tool.uv.sources] and its metadata merged three-way first, so a
    text merge of them (the merge driver's `git merge-file`) only has everything else to merge."""
    dev, main = (ours, theirs) if ours_is_owner else (theirs, ours)
    final_dev, decisions, metadata = reconciled_pyproject(base, dev, main, config)
    names = [d.name for d in decisions]

    def align(text: str) -> str:
        return align_metadata(apply_plan(text, main, decisions, (), dev_text=dev), final_dev, names)

    aligned_main, aligned_base = align(main), align(base)
    ours_text, theirs_text = (final_dev, aligned_main) if ours_is_owner else (aligned_main, final_dev)
    return AlignedVersions(ours_text, aligned_base, theirs_text, tuple(decisions), tuple(metadata))
