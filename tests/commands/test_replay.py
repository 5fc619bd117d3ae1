"""The replay harness (bench/replay.py) on a few generated syncs: real git histories, real upstream repositories.

bench/bench_reconcile.py --replay N runs many more; here a handful must already show that
reconcile agrees with the maintainer where the old rules and "keep dev's table" do not,
and that it never disagrees silently, with the evidence or without it.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import replay  # noqa: E402


def test_reconcile_agrees_with_the_maintainer_and_never_silently_disagrees(tmp_path: Path) -> None:
    tallies = replay.replay(scenarios=8, seed=7, offline=True, work=tmp_path)
    print("\n" + replay.report(tallies, 8))
    ours, offline, old, keep = (tallies[k] for k in ("reconcile", "reconcile offline", "old rules", "keep dev's table"))
    assert ours.entries >= 15  # enough decisions where dev and main differ to mean something
    assert ours.silent == 0 and offline.silent == 0
    assert ours.agree / ours.entries >= 0.95
    assert ours.agree > old.agree and ours.agree > keep.agree  # the two baselines each miss a kind of case
    assert ours.flagged < offline.flagged  # evidence removes flags; without it every main move is flagged
    assert old.silent > 0 and keep.silent > 0


def test_requirement_histories_per_table_and_for_a_branch_that_follows_main(tmp_path: Path) -> None:
    """Main adds requirements its code imports (or guards, or does not use), bumps pins
    dev never touched, drops some; dev pins its own, drops what main adds. Per table, reconcile
    agrees with the maintainer and never disagrees silently, for default-side dev and main."""
    for side in ("dev", "main"):
        by_table: dict[str, dict[str, replay.Tally]] = {}
        tallies = replay.replay(scenarios=6, seed=3, offline=False, work=tmp_path, side=side, by_table=by_table)
        print("\n" + replay.report(tallies, 6, by_table=by_table, side=side))
        requirement_tables = [t for t in by_table if t != "sources"]
        assert {"project.optional-dependencies", "dependency-groups"} <= set(requirement_tables)
        for table in requirement_tables:
            ours, keep = by_table[table]["reconcile"], by_table[table]["keep dev's table"]
            assert ours.silent == 0, (side, table, ours.misses)
            assert ours.agree >= keep.agree
        requirements = [by_table[t]["reconcile"] for t in requirement_tables]
        entries, agree = sum(t.entries for t in requirements), sum(t.agree for t in requirements)
        assert entries >= 10 and agree / entries >= 0.9
        assert tallies["reconcile"].silent == 0


def test_scenarios_are_reproducible(tmp_path: Path) -> None:
    first, second = (replay.Scenario(11, tmp_path / name) for name in ("a", "b"))
    for scenario in (first, second):
        scenario.generate()
    assert [c.message for c in first.commits] == [c.message for c in second.commits]
    assert [(t.name, t.why) for t in first.evaluated()] == [(t.name, t.why) for t in second.evaluated()]
    assert [(t.table, t.name, t.why) for t in first.evaluated_requirements()] == [(t.table, t.name, t.why) for t in second.evaluated_requirements()]
