"""`depsync rule`: every rule has a page, generated from the one registry docs/check.md's rule table comes from."""

from __future__ import annotations

import json

import pytest
from support import depsync

from depsync.core.rules.docs import DOCS, render
from depsync.core.rules.registry import RULES


def test_every_rule_has_a_page_and_every_page_a_rule() -> None:
    assert set(DOCS) == set(RULES)
    for rule in RULES.values():
        page = DOCS[rule.id]
        assert page.why and page.example and page.fix, rule.id
        if rule.fixable:
            assert "--fix" in page.fix, rule.id  # the page says what the fix does


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_rule_page(rule_id: str) -> None:
    result = depsync("rule", rule_id)
    assert result.returncode == 0, result.stderr
    assert result.stdout == render(RULES[rule_id])
    assert result.stdout.startswith(f"# {rule_id} ({RULES[rule_id].severity})\n")
    assert RULES[rule_id].summary in result.stdout


def test_all_is_the_table() -> None:
    result = depsync("rule", "--all")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    for rule in RULES.values():
        (row,) = [line for line in lines if line.split()[:1] == [rule.id]]
        assert str(rule.severity) in row and rule.summary in row and (" yes " in row) == rule.fixable


def test_json() -> None:
    pages = json.loads(depsync("rule", "--all", "--output-format", "json").stdout)
    assert [p["id"] for p in pages] == list(RULES)
    (one,) = json.loads(depsync("rule", "lock-stale", "--format", "json").stdout)
    assert one["severity"] == "error" and one["fixable"] is False and "depsync lock" in one["fix"]


def test_unknown_rule_suggests_the_near_one() -> None:
    result = depsync("rule", "stale-no-install")
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "depsync: error: unknown rule 'stale-no-install' (did you mean 'docker-stale-no-install'?) (`depsync rule --all` lists them)"
    )
    neither = depsync("rule")
    assert neither.returncode == 2 and "--all" in neither.stderr
