"""Pure: pyproject.toml merged the way reconcile does, for reconcile, the merge driver and the guard.

Three versions (base, dev = the owner's side, main) are first aligned: each gets the
three-way result for [tool.uv.sources] and for the dependency-metadata of the
decided packages. git's text merge of the aligned versions then only has to merge
everything else, where a real conflict stays a conflict.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from depsync.config import Config
from depsync.metadata_sync import MetadataUpdate, plan_metadata
from depsync.pyproject_edit import align_metadata, apply_plan
from depsync.sources import Evidence, Policy, SourceDecision, merge_sources


@dataclass(frozen=True)
class AlignedVersions:
    """The three versions a text merge gets, with sources and metadata already merged three-way."""

    ours: str
    base: str
    theirs: str
    decisions: tuple[SourceDecision, ...]
    metadata: tuple[MetadataUpdate, ...]


def policy_of(config: Config) -> Policy:
    from packaging.utils import canonicalize_name

    return Policy(config.conflict_policy, frozenset(canonicalize_name(n) for n in config.owned_by_dev), {canonicalize_name(k): v for k, v in config.prefer.items()})


def uv_tables(text: str) -> tuple[dict, list]:
    """([tool.uv.sources], [[tool.uv.dependency-metadata]]) of a pyproject text: what reconcile may change."""
    uv = tomllib.loads(text).get("tool", {}).get("uv", {})
    return uv.get("sources", {}), uv.get("dependency-metadata", [])


def reconciled_pyproject(base: str, dev: str, main: str, config: Config, evidence: Evidence = Evidence()) -> tuple[str, list[SourceDecision], list[MetadataUpdate]]:
    """Dev's pyproject with the three-way sources and metadata applied (what reconcile writes)."""
    (base_sources, _), (dev_sources, dev_meta), (main_sources, main_meta) = (uv_tables(t) for t in (base, dev, main))
    decisions = merge_sources(base_sources, dev_sources, main_sources, policy_of(config), evidence)
    metadata = plan_metadata(dev_meta, main_meta, decisions)
    return apply_plan(dev, main, decisions, metadata), decisions, metadata


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
