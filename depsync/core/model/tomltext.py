"""Parse TOML text with clear errors, and find the line of a table or key for findings.

tomllib and rtoml give no positions of what they parsed, so lines are found by scanning the
text: good enough for findings ("pyproject.toml:57"), never used to edit. A parse error has
its position (`pyproject.toml:54:1:`) and a frame showing it, as uv and ruff report one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

_Parsed = TypeVar("_Parsed")
_LAST: dict[str, tuple[str, str, Any]] = {}  # kind -> (path, text, parsed): one entry per kind


def last_parse(kind: str, path: str, text: str, parse: Callable[[], _Parsed]) -> _Parsed:
    """parse(), unless the same text of the same path was the last one parsed for this kind: in
    one process the same bytes are often read twice (the config and the model of pyproject;
    reconcile's validation of dev's lock and its closing check). The models are frozen."""
    last = _LAST.get(kind)
    if last is not None and last[0] == path and last[1] == text:
        return last[2]  # type: ignore[no-any-return]
    parsed = parse()
    _LAST[kind] = (path, text, parsed)
    return parsed

from depsync.core.lazy_pattern import LazyPattern
from depsync.errors import DepsyncError

CONFLICT_MARKER = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(\s|$)", re.MULTILINE)
_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?\Z")
_KEY = re.compile(r"""^\s*("[^"]*"|'[^']*'|[A-Za-z0-9_.-]+)\s*=""")


# a cheap superset of CONFLICT_MARKER after the first line: one search, led by a newline (the
# regex engine looks for the literal first), where four substring searches cost three times more
_MAYBE_MARKER = re.compile(r"\n[<=>|]{7}")


def conflict_marker_lines(text: str) -> list[int]:
    """1-based lines that start with a git conflict marker."""
    if not CONFLICT_MARKER.match(text) and not _MAYBE_MARKER.search(text):
        return []  # the common case, without the full regex pass over a 1.5 MB lock
    return [text.count("\n", 0, m.start()) + 1 for m in CONFLICT_MARKER.finditer(text)]


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """Parse TOML; on error raise DepsyncError naming the file and line.

    rtoml reads it (a Rust TOML parser, as uv's is; about 10x faster than tomllib on a 1.5 MB
    uv.lock, and tomllib costs a cold check 4 ms to import); an error is re-derived with tomllib,
    whose errors always carry a position (rtoml's text has one only for some errors, in another
    form), so every error reads the same. The two agree on the 478 TOML files of the corpora and
    fixtures. A UTF-8 byte order mark at the start is skipped, as uv does (tomllib rejects it).
    """
    text = strip_bom(text)
    try:
        import rtoml

        return rtoml.loads(text)  # type: ignore[no-any-return]
    except ImportError:
        pass
    except Exception:
        pass  # fall through: tomllib gives the readable message
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message, line, column = decode_error_position(exc, text)
        raise DepsyncError(f"not valid TOML: {message}", f"{where}:{line}:{column}", source_frame(text, line, column)) from None
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise DepsyncError("TOML nested too deeply (arrays or inline tables hundreds of levels deep); depsync does not read it", where) from None


# tomllib up to 3.13 puts the position in the message only; 3.14 also has lineno/colno/msg
_AT = LazyPattern(r"^(?P<msg>.*?) \((?:at line (?P<line>\d+), column (?P<column>\d+)|(?P<end>at end of document))\)$", re.DOTALL)
_FRAME_WIDTH = 100  # at most this much of a source line around the column: a lock line can be megabytes
_UNPRINTABLE = LazyPattern(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def decode_error_position(exc: ValueError, text: str) -> tuple[str, int, int]:
    """(message without the position, 1-based line, 1-based column) of a TOMLDecodeError."""
    line, column, message = getattr(exc, "lineno", None), getattr(exc, "colno", None), getattr(exc, "msg", None)
    if isinstance(line, int) and isinstance(column, int) and isinstance(message, str):
        return message, line, column
    match = _AT.match(str(exc))
    if match is None:
        return str(exc), 1, 1
    if match["end"]:  # the last line, after its last character
        last = text.rstrip("\n").rsplit("\n", 1)[-1]
        return match["msg"], text.rstrip("\n").count("\n") + 1, len(last) + 1
    return match["msg"], int(match["line"]), int(match["column"])


def source_frame(text: str, line: int, column: int) -> str:
    """The line and a caret under the column, with uv's and ruff's gutter:

        |
     54 | foo bar
        |     ^

    Control and bidi characters become `?` (the text is the repository's, shown on a terminal);
    a tab becomes a space, in the line and under it alike, so the caret stays in its column."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    source = _UNPRINTABLE.sub("?", lines[line - 1].rstrip("\r").replace("\t", " "))
    offset = max(column - 1, 0)
    start = max(0, min(offset - _FRAME_WIDTH // 2, len(source) - _FRAME_WIDTH))
    shown = source[start : start + _FRAME_WIDTH]
    before, after = ("..." if start else ""), ("..." if start + _FRAME_WIDTH < len(source) else "")
    gutter = " " * len(str(line))
    return "\n".join((f"{gutter} |", f"{line} | {before}{shown}{after}".rstrip(), f"{gutter} | {' ' * (len(before) + offset - start)}^"))


def strip_bom(text: str) -> str:
    """text without a leading U+FEFF (editors on Windows write one; uv reads such files)."""
    return text[1:] if text.startswith("\ufeff") else text


def _unquote(key: str) -> str:
    return key[1:-1] if key[:1] in "\"'" else key


class TomlLines:
    """Line lookup in TOML text: tables, keys in tables, values inside arrays."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # table name (dotted, unquoted parts) -> first 1-based line of its header
        self._tables: dict[str, int] = {}
        self.table_of_line: list[str] = []
        self._keys: dict[tuple[str, str], int] | None = None  # (table, key) -> first line, built on first use
        current = ""
        for number, line in enumerate(self.lines, start=1):
            header = _HEADER.match(line)
            if header and "," not in header.group(1) and "=" not in header.group(1):
                current = ".".join(_unquote(p.strip()) for p in header.group(1).split("."))
                self._tables.setdefault(current, number)
            self.table_of_line.append(current)

    def table(self, name: str) -> int:
        return self._tables.get(name, 0)

    def key(self, table: str, key: str) -> int:
        """Line of `key = ...` directly in `table`, or of `table = {...}`-style dotted keys."""
        if self._keys is None:  # one pass for every lookup: a finding per key was quadratic
            self._keys = {}
            for index, line in enumerate(self.lines):
                match = _KEY.match(line)
                if match:
                    self._keys.setdefault((self.table_of_line[index], _unquote(match.group(1))), index + 1)
        found = self._keys.get((table, key))
        if found:
            return found
        # `[tool]` + `uv.sources = ...` style or a table header named like the key
        return self.table(f"{table}.{key}" if table else key)

    def value(self, table: str, key: str, needle: str) -> int:
        """Line of the first occurrence of needle at or after `key` in `table`."""
        start = self.key(table, key)
        if not start:
            return 0
        for index in range(start - 1, len(self.lines)):
            if index >= start and self.table_of_line[index] != table:
                break
            if needle in self.lines[index]:
                return index + 1
        return start


def expect(value: Any, kind: type | tuple[type, ...], what: str, where: str) -> Any:
    """value, when it is of kind; else a DepsyncError naming what and where."""
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise DepsyncError(f"{what} must be a {names}, not {type(value).__name__}", where)
    return value


def string_list(value: Any, what: str, where: str) -> tuple[str, ...]:
    """value as a tuple, when it is a list of strings; else a DepsyncError."""
    expect(value, list, what, where)
    for item in value:
        expect(item, str, f"each entry of {what}", where)
    return tuple(value)
