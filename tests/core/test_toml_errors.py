"""TOML parse errors reported as uv and ruff report them: `file:line:column: message` on one
line, then the source line and a caret under the column (depsync/core/model/tomltext.py)."""

from __future__ import annotations

import tomllib

import pytest

from depsync.core.model.tomltext import decode_error_position, parse_toml, source_frame
from depsync.errors import DepsyncError


def error_of(text: str, where: str = "pyproject.toml") -> DepsyncError:
    """The error of a parse: rtoml's, re-derived with tomllib, so every error has the same form."""
    with pytest.raises(DepsyncError) as caught:
        parse_toml(text, where)
    return caught.value


def test_position_in_where_and_a_frame_with_a_caret_under_the_column() -> None:
    error = error_of('[project]\nname = "p"\ndependencies = [\n    "a",\nb = 1\n')
    assert error.where == "pyproject.toml:5:1"
    assert str(error) == "pyproject.toml:5:1: not valid TOML: Invalid value"
    assert error.frame.splitlines() == ["  |", '5 | b = 1', "  | ^"]


def test_the_gutter_fits_the_line_number_and_the_caret_its_column() -> None:
    text = "".join(f"k{i} = {i}\n" for i in range(99)) + "key value\n"
    error = error_of(text, "uv.lock")
    assert error.where == "uv.lock:100:5"
    assert error.frame.splitlines() == ["    |", "100 | key value", "    |     ^"]


def test_end_of_document_points_after_the_last_line() -> None:
    error = error_of('a = "x"\nb = [1,\n')
    message, line, column = decode_error_position(_decode_error('x = """never closed'), 'x = """never closed')
    assert (line, column) == (1, 20) and "end of document" not in message
    assert error.where.startswith("pyproject.toml:2:")


def _decode_error(text: str) -> tomllib.TOMLDecodeError:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return exc
    raise AssertionError("parsed")


def test_python_3_14_attributes_win_over_the_message() -> None:
    """3.14's TOMLDecodeError has msg, lineno and colno; before, the position is in the message."""

    class WithPosition(ValueError):
        msg, lineno, colno = "Invalid value", 7, 3

    assert decode_error_position(WithPosition("Invalid value (at line 7, column 3)"), "") == ("Invalid value", 7, 3)
    assert decode_error_position(_decode_error("a = 1\nb =\n"), "a = 1\nb =\n") == ("Invalid value", 2, 4)


def test_the_frame_shows_repository_text_safely() -> None:
    # a tab is one space in the line and under it alike; escapes and bidi controls become `?`
    assert source_frame("\tb c\n", 1, 4).splitlines() == ["  |", "1 |  b c", "  |    ^"]
    frame = source_frame('x = "\x1b[31mred\u202e"\n', 1, 6)
    assert "\x1b" not in frame and "\u202e" not in frame and "?[31mred?" in frame
    # a megabyte line (a minified lock): a window around the column, the caret still under it
    long = "k = [" + "1, " * 100_000 + "?]"
    lines = source_frame(long, 1, 150_000).splitlines()
    assert len(lines[1]) < 120 and lines[1].startswith("1 | ...") and lines[1].endswith("...")
    assert lines[1][lines[2].index("^")] == long[150_000 - 1]
    assert source_frame("a\n", 5, 1) == ""  # a position past the text: no frame, the line still says where


def test_a_clean_parse_is_untouched() -> None:
    assert parse_toml('\ufeffa = 1\n', "pyproject.toml") == {"a": 1}
