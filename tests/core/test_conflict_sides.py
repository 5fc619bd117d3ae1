"""Both sides of a conflicted file, line numbers kept (pure, with hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from depsync.core.conflict_sides import conflict_sides


def test_both_sides_keep_their_line_numbers() -> None:
    data = b"a\n<<<<<<< HEAD\nours1\nours2\n=======\ntheirs\n>>>>>>> main\nz\n"
    ours, theirs = conflict_sides(data)  # type: ignore[misc]
    assert ours.split(b"\n") == [b"a", b"", b"ours1", b"ours2", b"", b"", b"", b"z", b""]
    assert theirs.split(b"\n") == [b"a", b"", b"", b"", b"", b"theirs", b"", b"z", b""]


def test_diff3_base_is_on_neither_side() -> None:
    data = b"<<<<<<< ours\nx = 1\n||||||| base\nx = 0\n=======\nx = 2\n>>>>>>> theirs\n"
    ours, theirs = conflict_sides(data)  # type: ignore[misc]
    assert b"x = 0" not in ours and b"x = 0" not in theirs and b"x = 1" in ours and b"x = 2" in theirs


def test_no_or_an_unfinished_conflict_is_none() -> None:
    assert conflict_sides(b"x = 1\n") is None
    assert conflict_sides(b"<<<<<<< HEAD\nx\n=======\n") is None  # never closed
    assert conflict_sides(b"s = '<<<<<<<'\n") is None  # not at a line start


_lines = st.lists(st.sampled_from([b"x = 1", b"import os", b"", b"# c", b"====="]), max_size=6)


@given(_lines, _lines, _lines, _lines)
def test_each_side_is_the_text_that_side_wrote(before: list[bytes], ours: list[bytes], theirs: list[bytes], after: list[bytes]) -> None:
    data = b"\n".join([*before, b"<<<<<<< HEAD", *ours, b"=======", *theirs, b">>>>>>> main", *after])
    mine, yours = conflict_sides(data)  # type: ignore[misc]
    assert [line for line in mine.split(b"\n") if line] == [line for line in [*before, *ours, *after] if line]
    assert [line for line in yours.split(b"\n") if line] == [line for line in [*before, *theirs, *after] if line]
    assert len(mine.split(b"\n")) == len(yours.split(b"\n")) == len(data.split(b"\n"))
