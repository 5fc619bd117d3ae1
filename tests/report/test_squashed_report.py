"""Squashed syncs in reconcile's summary and plan JSON, and guard's warning (pure)."""

from __future__ import annotations

import json

from depsync.core.sync.reconciliation import Reconciliation
from depsync.core.sync.squashed import SquashedSync, SquashScan
from depsync.report import squashed as squashed_report
from depsync.report.reconcile import next_steps, to_json, to_markdown

BASE, X = "f" * 40, "1234567890" + "a" * 30
SQUASH = SquashedSync("squash", ("5" * 40,), "Sync <b>main</b> @org/team\r\n::warning::x", 1_700_000_000, tuple(f"{i:040x}" for i in range(38)), ("c" * 40, "d" * 40), X)
REBASE = SquashedSync("rebase", ("6" * 40, "7" * 40, "8" * 40), "main: fix", 1_700_100_000, ("9" * 40, "a" * 40, "b" * 40), (), "b" * 40)


def _result(scan: SquashScan, **kw: object) -> Reconciliation:
    return Reconciliation("origin/dev", "origin/main", "d" * 40, "e" * 40, BASE, [], [], squashed=scan, **kw)  # type: ignore[arg-type]


def test_the_summary_says_which_commits_carry_main_and_the_repair() -> None:
    text = to_markdown(_result(SquashScan((SQUASH, REBASE), truncated=True, read=(5000, 1200)), merging=True))
    assert "### Syncs that landed on dev without main as a parent" in text
    assert "the merge-base is stuck at ffffffffff" in text.split("\n\n")[1]  # the headline says it
    assert "`5555555555` (Sync \\<b\\>main\\</b\\> @\u2060org/team ::warning::x, 2023-11-14): likely a squash-merged sync: carries 38 of main's 40 commits up to 1234567890; 2 left out" in text
    assert "`6666666666..8888888888` (3 commits)" in text and "rebase-merged sync (or cherry-picks, one by one)" in text
    assert "`git merge -s ours bbbbbbbbbb`" in text  # the newest finding's main commit
    assert "Read the newest 5000 of main's and 1200 of dev's commits" in text
    assert "\r" not in text and "<b>" not in text
    steps = next_steps(_result(SquashScan((SQUASH,)), merging=True))
    assert any("Merge this PR with a merge commit" in s and "`git merge --abort`, `git merge -s ours 1234567890` on dev" in s for s in steps)
    assert "2 commit(s) of main up to 1234567890 the copy left out" in to_markdown(_result(SquashScan((SQUASH,))))


def test_the_plan_json_lists_the_findings() -> None:
    document = json.loads(to_json(_result(SquashScan((SQUASH,), read=(40, 3)))))
    squashed = document["squashed_syncs"]
    assert squashed["merge_base"] == BASE and squashed["commits_read"] == {"main": 40, "dev": 3} and squashed["truncated"] is False
    [finding] = squashed["findings"]
    assert finding["kind"] == "squash" and finding["eligible"] == 40 and len(finding["carried"]) == 38
    assert finding["left_out"] == ["c" * 40, "d" * 40] and finding["repair"] == f"git merge -s ours {X}"
    assert any("git merge -s ours 1234567890" in step for step in document["next_steps"])


def test_nothing_found_nothing_said() -> None:
    result = _result(SquashScan())
    assert "without main as a parent" not in to_markdown(result)
    assert json.loads(to_json(result))["squashed_syncs"]["findings"] == []
    assert not any("merge -s ours" in s for s in next_steps(result))
    assert squashed_report.warning_lines(SquashScan(), BASE) == []


def test_guards_warning_is_plain_text_on_one_line_each() -> None:
    lines = squashed_report.warning_lines(SquashScan((SQUASH,)), BASE)
    assert lines[0].startswith("depsync guard: warning: dev carries main's commits without main as a parent") and "ffffffffff" in lines[0]
    assert lines[1].startswith('  5555555555 "Sync <b>main</b> @org/team ::warning::x": likely a squash-merged sync')
    assert all("\r" not in line and "\n" not in line for line in lines)
    assert any("git merge -s ours 1234567890" in line for line in lines)


def test_a_history_that_could_not_be_read_is_said() -> None:
    scan = SquashScan(error="git log: fatal: bad object")
    assert "Not looked for: git log: fatal: bad object" in to_markdown(_result(scan))
    assert json.loads(to_json(_result(scan)))["squashed_syncs"]["error"] == "git log: fatal: bad object"
    assert squashed_report.warning_lines(scan, BASE) == ["depsync guard: warning: squash-merged syncs in dev's history not looked for: git log: fatal: bad object"]
