"""Three-way merge of [tool.uv.sources] (pure): every row of the DESIGN.md table, policy, the real snapshot."""

from __future__ import annotations

import tomllib

import pytest

from conftest import MEGATRON_SOURCE_CASES, megatron
from depsync.sources import Evidence, Policy, describe, merge_sources, normalize

A = {"git": "https://example.com/a.git", "rev": "a" * 40}
B = {"git": "https://example.com/a.git", "rev": "b" * 40}
C = {"git": "https://example.com/a.git", "rev": "c" * 40}


ANCHOR = {"git": "https://example.com/anchor.git", "rev": "f" * 40}  # dev already uses example.com


def one(base, dev, main, **kw):
    sides = [{"anchor": ANCHOR} | ({} if v is None else {"pkg": v}) for v in (base, dev, main)]
    decisions = {d.name: d for d in merge_sources(*sides, **kw)}
    return decisions["pkg"]


@pytest.mark.parametrize(
    "base, dev, main, case, result, review",
    [
        (A, A, A, "unchanged", A, False),
        (A, B, B, "same-change", B, False),
        (None, B, B, "same-change", B, False),
        (A, A, B, "main-changed", B, False),
        (A, B, A, "dev-changed", B, False),
        (None, None, B, "main-added", B, False),
        (A, None, A, "dev-removed", None, False),
        (None, B, None, "dev-added", B, False),
        (A, B, C, "conflict", B, True),
        (None, B, C, "conflict", B, True),
        (A, None, B, "conflict", None, True),
        (A, A, None, "main-removed", None, False),
    ],
)
def test_three_way_table(base, dev, main, case, result, review) -> None:
    decision = one(base, dev, main)
    assert (decision.case, normalize(decision.result), decision.needs_review) == (case, normalize(result), review)


def test_main_removed_but_dev_depends_keeps_it() -> None:
    decision = one(A, A, None, evidence=Evidence(dev_requires=frozenset({"pkg"})))
    assert (decision.case, decision.result, decision.needs_review) == ("main-removed", A, True)


def test_policy_conflict_main_and_per_package() -> None:
    assert one(A, B, C, policy=Policy(conflict="main")).result == C
    assert one(A, B, C, policy=Policy(prefer={"pkg": "main"})).result == C
    owned = one(A, A, B, policy=Policy(owned_by_dev=frozenset({"pkg"})))
    assert (owned.result, owned.needs_review) == (A, True)
    assert one(None, None, B, policy=Policy(owned_by_dev=frozenset({"pkg"}))).result is None


def test_never_downgrade_silently() -> None:
    decision = one(A, A, B, evidence=Evidence(rev_order={"pkg": "dev-newer"}))
    assert decision.result == A and decision.needs_review and "older" in decision.reason


def test_list_sources_with_markers_and_key_order() -> None:
    linux = [{"git": "https://x/a.git", "tag": "v1", "marker": "sys_platform == 'linux'"}, {"path": "libs/a", "marker": "sys_platform != 'linux'"}]
    reordered = [{"marker": "sys_platform == 'linux'", "tag": "v1", "git": "https://x/a.git"}, {"marker": "sys_platform != 'linux'", "path": "libs/a"}]
    assert one(linux, reordered, linux).case == "unchanged"
    moved = [dict(linux[0], tag="v2"), linux[1]]
    assert one(linux, linux, moved).case == "main-changed"
    assert normalize([A]) == normalize(A)  # a one-element list is the table itself


def test_unknown_shape_is_left_as_dev_has_it() -> None:
    odd = {"git": "https://x/a.git", "weird": True}
    decision = one(A, A, odd)
    assert (decision.case, decision.result, decision.needs_review) == ("unknown-shape", A, True)


def test_names_match_normalized() -> None:
    (decision,) = merge_sources({"Flash_MLA": A}, {"flash-mla": A}, {"flash_mla": B})
    assert (decision.name, decision.case) == ("flash-mla", "main-changed")


def test_megatron_snapshot_matches_design() -> None:
    def sources(side: str) -> dict:
        return tomllib.loads(megatron(side, "pyproject.toml"))["tool"]["uv"]["sources"]

    dev_requires = frozenset({"transformer-engine", "nemo-run", "emerging-optimizers", "flash-mla", "fast-hadamard-transform", "nvidia-cudnn-frontend", "mamba-ssm"})
    decisions = {d.name: d for d in merge_sources(sources("base"), sources("dev"), sources("main"), evidence=Evidence(dev_requires=dev_requires))}
    cases = {name: d.case for name, d in decisions.items()}
    assert cases == MEGATRON_SOURCE_CASES
    assert decisions["transformer-engine"].result["rev"].startswith("f031cf87")  # dev keeps its pin
    assert decisions["transformer-engine"].needs_review
    assert decisions["nemo-run"].result["rev"].startswith("e3935393")
    assert decisions["mamba-ssm"].result is None
    for name in ("deep_gemm", "nemo-lens", "torch-memory-saver"):
        assert "inert" in decisions[name].reason
    assert describe(decisions["nemo-run"].result) == "git Run@e3935393a290"


def test_source_from_a_new_host_needs_review() -> None:
    known = {"git": "https://github.com/org/a.git", "rev": "a" * 40}
    evil = {"git": "https://git.example.net/evil/a.git", "rev": "b" * 40}
    decisions = merge_sources({"a": known, "other": known}, {"a": known, "other": known}, {"a": evil, "other": known, "new": evil})
    by_name = {d.name: d for d in decisions}
    for name in ("a", "new"):
        assert by_name[name].taken_from == "main" and by_name[name].needs_review
        assert "new host git.example.net" in by_name[name].evidence[-1]
    assert not by_name["other"].needs_review
