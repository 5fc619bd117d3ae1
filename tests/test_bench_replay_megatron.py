"""The judge of bench/replay_megatron.py: the maintainers' answer, agreement and flags (pure)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

from replay_megatron import DAY, judge  # noqa: E402
from replay_real import Plan  # noqa: E402


def project(*deps: str) -> dict[str, Any]:
    return {"project": {"name": "p", "dependencies": list(deps)}}


def verdicts(base: dict[str, Any], dev: dict[str, Any], main: dict[str, Any], landed: dict[str, Any], result: dict[str, Any], later: list[tuple[str, int, str, dict[str, Any]]] | None = None, plan: dict[str, Any] | None = None) -> dict[str, Any]:
    out = judge(base, dev, main, landed, later or [], 0, 14, result, Plan(plan or {}))
    return {v.unit[-1]: v for v in out if v.unit[0] == "req"}


def test_main_bump_dev_kept_is_a_silent_disagreement_when_depsync_takes_it() -> None:
    base, main = project("a~=1.0"), project("a~=2.0")
    v = verdicts(base, base, main, landed=base, result=main)["a"]
    assert (v.case, v.answer_main, v.took_main, v.agrees, v.flagged) == ("main-changed", False, True, False, False)
    assert v.eventually == "never (up to dev's tip)"


def test_dev_adopting_mains_value_within_the_window_makes_the_answer_mains() -> None:
    base, main = project("a~=1.0"), project("a~=2.0")
    later = [("c" * 40, 3 * DAY, "take a 2.0", main)]
    v = verdicts(base, base, main, landed=base, result=main, later=later)["a"]
    assert v.answer_main and v.agrees and v.adopted.startswith("cccccccccc")


def test_adoption_after_the_window_does_not_count_but_is_reported() -> None:
    base, main = project("a~=1.0"), project("a~=2.0")
    later = [("d" * 40, 20 * DAY, "late", main)]
    v = verdicts(base, base, main, landed=base, result=base, later=later)["a"]
    assert not v.answer_main and v.agrees and v.eventually.endswith("20 days after S")


def test_a_flagged_plan_entry_makes_the_disagreement_flagged_and_same_changes_are_not_mains() -> None:
    base, main = project("a~=1.0", "b"), project("a~=2.0", "b>=2")
    dev = project("a~=1.0", "b>=2")  # dev made main's change to b itself
    plan = {"dependencies": [{"table": "project.dependencies", "name": "a", "needs_review": True, "taken_from": "dev", "rule": "main-changed/dev chose it (history)"}]}
    found = verdicts(base, dev, main, landed=main, result=dev, plan=plan)
    assert set(found) == {"a"}
    assert found["a"].flagged and not found["a"].agrees and found["a"].rule == "main-changed/dev chose it (history)"


def test_a_specifier_that_excludes_devs_locked_version_is_said() -> None:
    from replay_megatron import against_lock

    assert against_lock("multi-storage-client~=0.50", ["0.45.1"]).endswith("EXCLUDES")
    assert against_lock("a>=1", ["1.2"]).endswith("admits")
    assert against_lock("zstandard", ["0.25.0"]) == "dev's lock has 0.25.0"
    assert against_lock("mock", []) == "not in dev's lock"
