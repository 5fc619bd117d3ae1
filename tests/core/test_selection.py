"""--select / --ignore (depsync/core/selection.py): rule ids, ALL, ignore wins, unknown ids."""

from __future__ import annotations

import pytest

from depsync.core.findings import Finding, Severity
from depsync.core.rules.registry import RULES
from depsync.core.selection import Selection, selection
from depsync.errors import DepsyncError


def finding(rule: str) -> Finding:
    return Finding("pyproject.toml", 3, rule, Severity.ERROR, "m", "f")


FINDINGS = [finding("lock-stale"), finding("docker-not-locked"), finding("source-inert")]


def test_nothing_given_keeps_everything() -> None:
    chosen = selection(None, None, RULES)
    assert chosen == Selection() and not chosen.narrows and chosen.keep(FINDINGS) == FINDINGS


def test_select_is_comma_separated_and_repeatable() -> None:
    chosen = selection(["lock-stale, docker-not-locked", "source-inert"], None, RULES)
    assert [f.rule for f in chosen.keep(FINDINGS)] == ["lock-stale", "docker-not-locked", "source-inert"]
    assert [f.rule for f in selection(["lock-stale"], None, RULES).keep(FINDINGS)] == ["lock-stale"]


def test_ignore_wins_over_select_and_all() -> None:
    chosen = selection(["ALL"], ["lock-stale,source-inert"], RULES)
    assert chosen.narrows and [f.rule for f in chosen.keep(FINDINGS)] == ["docker-not-locked"]
    assert selection(["lock-stale"], ["lock-stale"], RULES).keep(FINDINGS) == []


@pytest.mark.parametrize(
    ("select", "ignore", "needles"),
    [
        (["lock-stal"], None, ["--select: unknown rule id 'lock-stal'", "did you mean 'lock-stale'?"]),
        (None, ["docker-not-lockd"], ["--ignore: unknown rule id", "did you mean 'docker-not-locked'?"]),
        ([","], None, ["--select names no rule id"]),
        (["\x1b[31mred"], None, ["'\\x1b[31mred'"]),  # repr: no raw escape reaches the terminal
    ],
)
def test_unknown_ids_are_usage_errors(select: list[str] | None, ignore: list[str] | None, needles: list[str]) -> None:
    with pytest.raises(DepsyncError) as raised:
        selection(select, ignore, RULES)
    for needle in needles:
        assert needle in str(raised.value)
    assert "\x1b" not in str(raised.value)
