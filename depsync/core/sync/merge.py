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
from dataclasses import dataclass, replace

from depsync.core.names import canonicalize_name

from depsync.core.config import Config
from depsync.errors import DepsyncError
from depsync.core.sync.metadata import MetadataUpdate, plan_metadata
from depsync.core.sync.pyproject_edit import align_metadata, apply_plan
from depsync.core.sync.sources import Evidence, Policy, SourceDecision, merge_sources, normalize, possible_sides


@dataclass(frozen=True)
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


def expected_pyproject(ours: str, base: str, dev: str, main: str, config: Config) -> str:
    """The pyproject the three-way merge gives, where each entry whose outcome depends on evidence
    only reconcile gathers (rev order, dev's history) takes the side `ours` has when the table
    allows that side: what the guard compares a pushed pyproject with."""
    (base_sources, _), (dev_sources, dev_meta), (main_sources, main_meta), (our_sources, _) = (uv_tables(t) for t in (base, dev, main, ours))
    policy, needs = policy_of(config), dev_requires(dev)
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
