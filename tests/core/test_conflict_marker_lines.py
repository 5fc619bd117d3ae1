"""conflict_marker_lines: the cheap pre-test never hides a marker the full pattern finds."""

from __future__ import annotations

import pytest

from depsync.core.model.tomltext import CONFLICT_MARKER, conflict_marker_lines


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a = 1\n",
        "<<<<<<< HEAD\na = 1\n=======\na = 2\n>>>>>>> main\n",  # markers from the first line on
        "a = 1\n<<<<<<< HEAD\n",
        "a = 1\n=======",  # at the very end
        "a = 1\n|||||||\tbase\n",
        "a = 1\n>>>>>>>x\n",  # not a marker: no space after it
        "a = 1\n<=<=<=<\n",  # the pre-test's superset, not a marker
        "a = 1\n ======= \n",  # indented: not at the line start
        "a = '=======' \nb = '<<<<<<< x'\n",
        "a = 1\r\n=======\r\n",
        "<<<<<<<",
        "========",
    ],
)
def test_marker_lines_are_the_full_patterns(text: str) -> None:
    expected = [text.count("\n", 0, m.start()) + 1 for m in CONFLICT_MARKER.finditer(text)]
    assert conflict_marker_lines(text) == expected
