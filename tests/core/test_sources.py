"""Three-way merge of [tool.uv.sources] (pure): the decision table, ownership, policy, the real snapshot."""

from __future__ import annotations

import tomllib

import pytest
from conftest import MEGATRON_SOURCE_CASES, megatron

from depsync.core.sync.sources import (
    RULES,
    EntryChange,
    Evidence,
    Ownership,
    Policy,
    RevOrder,
    combine_orders,
    describe,
    latest_changes,
    merge_sources,
    normalize,
    ownership_from,
    possible_sides,
    rev_pairs,
    rules_markdown,
    sources_table,
)

A = {"git": "https://example.com/a.git", "rev": "a" * 40}
B = {"git": "https://example.com/a.git", "rev": "b" * 40}
C = {"git": "https://example.com/a.git", "rev": "c" * 40}


ANCHOR = {"git": "https://example.com/anchor.git", "rev": "f" * 40}  # dev already uses example.com


def one(base, dev, main, **kw):
    sides = [{"anchor": ANCHOR} | ({} if v is None else {"pkg": v}) for v in (base, dev, main)]
    decisions = {d.name: d for d in merge_sources(*sides, **kw)}
    return decisions["pkg"]


def gathered(order: str = "unknown", owner: str | None = "main", depends: bool = False, removed: str | None = None) -> Evidence:
    return Evidence(
        dev_requires=frozenset({"pkg"} if depends else ()),
        ownership={"pkg": Ownership(owner, "history", "test")} if owner else {},
        rev_order={"pkg": RevOrder(order, "test")},
        removed_by_dev={"pkg": removed} if removed else {},
        gathered=True,
    )


# -- the table without evidence (merge driver, guard) --------------------------------------------


@pytest.mark.parametrize(
    "base, dev, main, case, result, review",
    [
        (A, A, A, "unchanged", A, False),
        (A, B, B, "same-change", B, False),
        (None, B, B, "same-change", B, False),
        (A, A, B, "main-changed", B, True),  # rev order not checked: main's taken, flagged
        (A, B, A, "dev-changed", B, False),
        (None, None, B, "main-added", B, False),
        (A, None, A, "dev-removed", None, False),
        (None, B, None, "dev-added", B, False),
        (A, B, C, "conflict", B, True),
        (None, B, C, "conflict", B, True),
        (A, None, B, "conflict", None, True),  # dev has none, main changed it: every conflict is flagged
        (A, A, None, "main-removed", None, False),
        (A, B, None, "conflict", B, True),  # main removed it, dev changed it: dev's kept, flagged (a conflict)
    ],
)
def test_three_way_table_without_evidence(base, dev, main, case, result, review) -> None:
    decision = one(base, dev, main)
    assert (decision.case, normalize(decision.result), decision.needs_review) == (case, normalize(result), review)


# -- the table acting on evidence (reconcile) ----------------------------------------------------


@pytest.mark.parametrize(
    "evidence, result, review, rule",
    [
        (gathered("main-newer"), B, False, "main-changed/fast-forward"),
        (gathered("same"), B, False, "main-changed/fast-forward"),
        (gathered("diverged"), A, True, "main-changed/diverged"),
        (gathered("dev-newer"), A, True, "main-changed/main's rev older"),
        (gathered("unknown"), A, True, "main-changed/order unknown"),
        (gathered("main-newer", owner="dev"), A, True, "main-changed/dev owns it (history), main's may be a fast-forward"),  # an inference: look
        (gathered("diverged", owner="dev"), A, True, "main-changed/dev owns it"),  # main's change not carried: flagged
        (gathered("unknown", owner=None), A, True, "main-changed/order unknown"),
    ],
)
def test_main_changed_acts_on_rev_order_and_ownership(evidence, result, review, rule) -> None:
    decision = one(A, A, B, evidence=evidence)
    assert (decision.result, decision.needs_review, decision.rule) == (result, review, rule)
    if evidence.rev_order["pkg"].order != "main-newer":
        assert any(line.startswith("rev order: ") for line in decision.evidence)  # the evidence is shown


def test_unknown_order_says_why() -> None:
    evidence = Evidence(rev_order={"pkg": RevOrder("unknown", "fetch failed: could not resolve host")}, gathered=True)
    decision = one(A, A, B, evidence=evidence)
    assert decision.needs_review and decision.result == A
    assert "rev order: unknown (fetch failed: could not resolve host)" in decision.evidence


@pytest.mark.parametrize(
    "evidence, result, review",
    [
        (gathered(depends=True), None, True),  # dev takes it from the index: main's source declined
        (gathered(removed='commit 1234567890 "dev: te from PyPI" (2025-01-01)'), None, True),  # not carried: flagged
        (gathered(), B, False),  # inert on dev: added, said so
    ],
)
def test_main_added(evidence, result, review) -> None:
    decision = one(None, None, B, evidence=evidence)
    assert (decision.result, decision.needs_review) == (result, review)
    if result is B:
        assert "inert" in decision.reason
    if evidence.removed_by_dev:
        assert "dev removed this source itself" in decision.reason


@pytest.mark.parametrize(
    "evidence, result, review",
    [
        (gathered(owner="dev"), None, False),  # inert on dev: follow main
        (gathered(depends=True), A, True),  # main owns it by history, dev depends: kept, and said so
        (gathered(owner="dev", depends=True), A, True),  # dev chose it and depends on it: kept, main's removal listed
        (gathered(), None, False),
    ],
)
def test_main_removed(evidence, result, review) -> None:
    decision = one(A, A, None, evidence=evidence)
    assert (decision.result, decision.needs_review) == (result, review)


@pytest.mark.parametrize(
    "order, review",
    [("dev-newer", True), ("diverged", True), ("main-newer", True), ("unknown", True)],  # every conflict is flagged
)
def test_conflict_keeps_dev_and_flags_only_when_dev_may_be_behind(order, review) -> None:
    decision = one(A, B, C, evidence=gathered(order, owner="dev"))
    assert (decision.case, decision.result, decision.needs_review) == ("conflict", B, review)


def test_policy_conflict_main_and_per_package() -> None:
    assert one(A, B, C, policy=Policy(conflict="main")).result == C
    assert one(A, B, C, policy=Policy(prefer={"pkg": "main"})).result == C
    owned = one(A, A, B, policy=Policy(owned_by_dev=frozenset({"pkg"})))
    assert (owned.result, owned.needs_review, owned.rule) == (A, False, "main-changed/dev owns it (config)")
    assert "owned-by-dev" in owned.evidence[0]
    assert one(None, None, B, policy=Policy(owned_by_dev=frozenset({"pkg"}))).result is None
    # prefer main: main decides that package, even without a rev order; a downgrade is still flagged
    preferred = one(A, A, B, policy=Policy(prefer={"pkg": "main"}), evidence=gathered("unknown"))
    assert (preferred.result, preferred.needs_review) == (B, False)
    older = one(A, A, B, policy=Policy(prefer={"pkg": "main"}), evidence=gathered("dev-newer"))
    assert (older.result, older.needs_review) == (B, True)
    # config overrides dev's history
    assert one(A, A, B, policy=Policy(prefer={"pkg": "main"}), evidence=gathered("main-newer", owner="dev")).result == B


def test_every_rule_is_reachable_and_the_table_is_documented() -> None:
    table = rules_markdown()
    for rule in RULES:
        assert f"| {rule.case} | {rule.condition} |" in table
    # each case ends with a row that always applies: no entry is ever left without a decision
    for case in {r.case for r in RULES}:
        assert [r for r in RULES if r.case == case][-1].condition in ("always", "otherwise", "order unknown")


def test_possible_sides_are_what_evidence_could_decide() -> None:
    policy = Policy()
    assert possible_sides("pkg", A, A, B, policy, depends=False) == {"dev", "main"}
    assert possible_sides("pkg", None, None, B, policy, depends=True) == {"none"}
    assert possible_sides("pkg", None, None, B, policy, depends=False) == {"main", "none"}  # dev may have removed it
    assert possible_sides("pkg", A, A, B, Policy(owned_by_dev=frozenset({"pkg"})), depends=False) == {"dev"}


# -- shapes, names, hosts --------------------------------------------------------------------------


def test_list_sources_with_markers_and_key_order() -> None:
    linux = [{"git": "https://x/a.git", "tag": "v1", "marker": "sys_platform == 'linux'"}, {"path": "libs/a", "marker": "sys_platform != 'linux'"}]
    reordered = [{"marker": "sys_platform == 'linux'", "tag": "v1", "git": "https://x/a.git"}, {"marker": "sys_platform != 'linux'", "path": "libs/a"}]
    assert one(linux, reordered, linux).case == "unchanged"
    moved = [dict(linux[0], tag="v2"), linux[1]]
    assert one(linux, linux, moved).case == "main-changed"
    assert normalize([A]) == normalize(A)  # a one-element list is the table itself


def test_rev_pairs_and_combined_orders() -> None:
    assert rev_pairs(A, B)[0].dev.value == "a" * 40
    assert rev_pairs(A, {"git": "https://example.com/A/", "rev": "b" * 40})  # same repository, spelled differently
    assert "another repository" in rev_pairs(A, {"git": "https://fork.example/a.git", "rev": "b" * 40})
    assert "not git" in rev_pairs({"path": "x"}, {"path": "y"})
    assert combine_orders(["same", "main-newer"]) == "main-newer"
    assert combine_orders(["main-newer", "dev-newer"]) == "diverged"
    assert combine_orders(["main-newer", "unknown"]) == "unknown"


def test_unknown_shape_is_left_as_dev_has_it() -> None:
    odd = {"git": "https://x/a.git", "weird": True}
    decision = one(A, A, odd)
    assert (decision.case, decision.result, decision.needs_review) == ("unknown-shape", A, True)


def test_names_match_normalized() -> None:
    (decision,) = merge_sources({"Flash_MLA": A}, {"flash-mla": A}, {"flash_mla": B})
    assert (decision.name, decision.case) == ("flash-mla", "main-changed")


def test_source_from_a_new_host_needs_review() -> None:
    known = {"git": "https://github.com/org/a.git", "rev": "a" * 40}
    evil = {"git": "https://git.example.net/evil/a.git", "rev": "b" * 40}
    decisions = merge_sources({"a": known, "other": known}, {"a": known, "other": known}, {"a": evil, "other": known, "new": evil})
    by_name = {d.name: d for d in decisions}
    for name in ("a", "new"):
        assert by_name[name].taken_from == "main" and by_name[name].needs_review
        assert "new host git.example.net" in by_name[name].evidence[-1]
    assert not by_name["other"].needs_review


# -- dev's history of an entry -------------------------------------------------------------------


def change(new, main_value, merge=False) -> EntryChange:
    return EntryChange("c" * 40, "dev: te at the feature pin", 1_700_000_000, merge, new, main_value)


def test_ownership_from_the_latest_change() -> None:
    assert ownership_from(None).owner == "main"  # dev never changed it
    mine = ownership_from(change(B, A))
    assert (mine.owner, mine.commit) == ("dev", "c" * 40) and "chose this pin" in mine.detail and "cccccccccc" in mine.detail
    assert ownership_from(change(A, A)).owner == "main"  # a copy of main's pin of the time
    assert ownership_from(change(A, A, merge=True)).owner == "main"  # a sync that took main's value
    assert ownership_from(change(B, A, merge=True)).owner == "dev"  # a sync resolved to dev's own value
    removed = ownership_from(change(None, A))
    assert removed.owner == "dev" and "removed it" in removed.detail


class Version:
    def __init__(self, commit: str, old: str | None, new: str | None) -> None:
        self.commit, self.parents, self.time, self.subject, self.old_blob, self.new_blob = commit, (), 0, commit, old, new


def test_latest_changes_walks_newest_first_and_stops() -> None:
    texts = {
        "v1": '[tool.uv.sources]\npkg = { git = "https://example.com/a.git", rev = "' + "a" * 40 + '" }\n',
        "v2": '[tool.uv.sources]\npkg = { git = "https://example.com/a.git", rev = "' + "b" * 40 + '" }\nother = { path = "x" }\n',
        "v3": '[tool.uv.sources]\npkg = { git = "https://example.com/a.git", rev = "' + "b" * 40 + '" }\nother = { path = "y" }\n',
    }
    read: list[str | None] = []

    def sources_at(blob):
        read.append(blob)
        return {} if blob is None else sources_table(texts[blob])

    history = [Version("c3", "v2", "v3"), Version("c2", "v1", "v2"), Version("c1", None, "v1")]
    found = latest_changes(history, sources_at, ["pkg", "other"])
    assert {name: commit.commit for name, (commit, _) in found.items()} == {"other": "c3", "pkg": "c2"}
    assert read == ["v2", "v3", "v1", "v2"]  # both found at c2: the root commit is never read


@pytest.mark.parametrize("side", ["base", "dev", "main"])
def test_sources_table_fast_path_matches_tomllib(side: str) -> None:
    text = megatron(side, "pyproject.toml")
    expected = {k.replace("_", "-").lower(): v for k, v in tomllib.loads(text)["tool"]["uv"]["sources"].items()}
    assert sources_table(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '[tool.uv]\nsources = { a = { path = "x" } }\n',
        '[tool.uv.sources]\na = { path = "x" }\n[tool.uv.sources.b]\npath = "y"\n',
        '[project]\nname = "x"\n\n[tool]\nuv.sources.b = { path = "y" }\n',
        '[project]\nname = "x"\n[tool.uv.sources]\na = [\n  { path = "x", marker = "sys_platform == \'linux\'" },\n]\n[[tool.uv.index]]\nname = "i"\nurl = "https://i"\n',
    ],
)
def test_sources_table_other_layouts(text: str) -> None:
    expected = tomllib.loads(text)["tool"]["uv"]["sources"]
    assert sources_table(text) == expected
    assert sources_table("[tool.uv.sources\n") is None  # does not parse: no evidence from it


# -- the real snapshot -----------------------------------------------------------------------------


def test_megatron_snapshot_matches_design() -> None:
    def sources(side: str) -> dict:
        return tomllib.loads(megatron(side, "pyproject.toml"))["tool"]["uv"]["sources"]

    dev_requires = frozenset({"transformer-engine", "nemo-run", "emerging-optimizers", "flash-mla", "fast-hadamard-transform", "nvidia-cudnn-frontend", "mamba-ssm"})
    offline = Evidence(dev_requires=dev_requires, rev_order={"nemo-run": RevOrder("unknown", "not fetched (--no-fetch)"), "transformer-engine": RevOrder("unknown", "x")}, gathered=True)
    decisions = {d.name: d for d in merge_sources(sources("base"), sources("dev"), sources("main"), evidence=offline)}
    assert {name: d.case for name, d in decisions.items()} == MEGATRON_SOURCE_CASES
    assert decisions["transformer-engine"].result["rev"].startswith("f031cf87")  # dev keeps its pin
    assert decisions["transformer-engine"].needs_review
    assert decisions["nemo-run"].result["rev"].startswith("17ae86b6") and decisions["nemo-run"].needs_review  # no order: dev's, flagged
    assert decisions["mamba-ssm"].result is None
    for name in ("deep_gemm", "nemo-lens", "torch-memory-saver"):
        assert "inert" in decisions[name].reason and not decisions[name].needs_review
    online = Evidence(dev_requires=dev_requires, rev_order={"nemo-run": RevOrder("main-newer")}, gathered=True)
    moved = {d.name: d for d in merge_sources(sources("base"), sources("dev"), sources("main"), evidence=online)}["nemo-run"]
    assert moved.result["rev"].startswith("e3935393") and not moved.needs_review
    assert describe(moved.result) == "git Run@e3935393a290"


def test_url_sources_are_ordered_by_their_file_names_versions(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A wheel URL 0.1.26 -> 0.2.0 is an order: no repository to ask, and none needed."""
    from depsync.core.sync.url_order import url_order
    from depsync.shell.revs import orders_for

    base = "https://github.com/x/flash-attention/releases/download/v{v}/flash_attn-{v}+cu12torch2.8-cp311-cp311-linux_x86_64.whl"
    dev, main = {"url": base.format(v="2.8.1")}, {"url": base.format(v="2.8.3")}
    assert url_order(dev, main).order == "main-newer" and "2.8.1+cu12torch2.8 -> 2.8.3+cu12torch2.8" in url_order(dev, main).detail
    assert url_order(main, dev).order == "dev-newer" and url_order(dev, dev).order == "same"
    assert url_order(dev, {"url": "https://x/other-1.0.tar.gz"}) is None  # another package: no order
    assert url_order(dev, {"git": "https://x/flash-attention.git", "rev": "a" * 40}) is None
    both = [{"url": base.format(v="2.8.1"), "marker": "sys_platform == 'linux'"}], [{"url": base.format(v="2.8.3"), "marker": "sys_platform == 'linux'"}]
    assert url_order(*both).order == "main-newer"
    assert orders_for({"flash-attn": (dev, main)}, fetch=False, cache=tmp_path)["flash-attn"].order == "main-newer"
