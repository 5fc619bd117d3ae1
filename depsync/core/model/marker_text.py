"""A PEP 508 marker's text in packaging's normal form, without importing packaging.markers (pure).

depsync keeps markers as text: the exact algebra (marker_tree, marker_parse) reads the text
and reconcile compares normalized texts. packaging.markers made that text (`str(Marker(t))`),
but importing it costs ~19 ms (its tokenizer imports dataclasses and inspect, its utils
packaging.tags, logging and platform): an eighth of a cold `depsync check`. So the grammar
packaging reads is read here, and the text printed as packaging prints it: variables with `.`
as `_` (`os.name` is `os_name`, `python_implementation` is `platform_python_implementation`),
one space around operators and between terms, values in double quotes, extra names (and the
value of `'x' in extras`/`dependency_groups`) normalized, parentheses only where a group has
more than one term. Anything this does not read plainly (an escape or a control character in
a string, a string holding both quote characters, a syntax error) goes to packaging itself,
so the result and the error are always packaging's (tests/core/test_marker_text.py holds the
two together on generated markers and on every marker of the corpora).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from depsync.core.names import canonicalize_name


class InvalidMarker(ValueError):
    """A marker packaging (and so depsync) does not read; the message is packaging's."""


_VARIABLE = re.compile(
    r"\b(python_version|python_full_version|os[._]name|sys[._]platform|platform_(?:release|system)"
    r"|platform[._](?:version|machine|python_implementation)|python_implementation"
    r"|implementation_(?:name|version)|extras?|dependency_groups)\b"
)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_OP = re.compile(r"===|==|~=|!=|<=|>=|<|>")
_IN = re.compile(r"\bin\b")
_NOT = re.compile(r"\bnot\b")
_BOOLOP = re.compile(r"\b(or|and)\b")
_WS = re.compile(r"[ \t]+")
_SET_VARIABLES = ("extras", "dependency_groups")
_MAX_NESTING = 200  # packaging's bound on parentheses

# an item is (left, op, right), each side ("var" | "value", text); a group is a list of items,
# groups and "and"/"or" words, as packaging's parser nests them
_Side = tuple[str, str]
_Item = tuple[_Side, str, _Side]
if TYPE_CHECKING:  # a recursive alias is a ForwardRef, compiled when made: for the type checker only
    from typing import Union

    _Group = list[Union[_Item, str, "_Group"]]


class _Unread(Exception):
    """Not read here: packaging decides (its text or its error)."""


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_space(self) -> None:
        found = _WS.match(self.text, self.pos)
        if found:
            self.pos = found.end()

    def take(self, pattern: re.Pattern[str]) -> str | None:
        found = pattern.match(self.text, self.pos)
        if found is None:
            return None
        self.pos = found.end()
        return found.group(0)

    def marker(self, depth: int) -> _Group:
        group: _Group = [self.atom(depth)]
        while True:
            word = self.take(_BOOLOP)
            if word is None:
                return group
            group += [word, self.atom(depth)]

    def atom(self, depth: int) -> _Item | _Group:
        self.skip_space()
        if self.text.startswith("(", self.pos):
            if depth >= _MAX_NESTING:
                raise _Unread
            self.pos += 1
            inner = self.marker(depth + 1)
            if not self.text.startswith(")", self.pos):
                raise _Unread
            self.pos += 1
            self.skip_space()
            return inner
        left = self.side()
        self.skip_space()
        op = self.operator()
        self.skip_space()
        right = self.side()
        self.skip_space()
        return (left, op, right)

    def side(self) -> _Side:
        variable = self.take(_VARIABLE)
        if variable is not None:
            name = variable.replace(".", "_")
            return ("var", "platform_python_implementation" if name == "python_implementation" else name)
        quoted = self.take(_QUOTED)
        if quoted is None:
            raise _Unread
        value = quoted[1:-1]
        if "\\" in quoted or not quoted.isprintable() or ('"' in value and "'" in value):
            raise _Unread  # packaging evaluates escapes and quotes such a string its own way
        return ("value", value)

    def operator(self) -> str:
        if self.take(_IN) is not None:
            return "in"
        if self.take(_NOT) is not None:
            if self.take(_WS) is None or self.take(_IN) is None:
                raise _Unread
            return "not in"
        op = self.take(_OP)
        if op is None:
            raise _Unread
        return op


def _normalized(item: _Item) -> _Item:
    (left_kind, left), op, (right_kind, right) = item
    if left_kind == "var" and left == "extra" and right_kind == "value":
        right = canonicalize_name(right)
    elif right_kind == "var" and right == "extra" and left_kind == "value":
        left = canonicalize_name(left)
    elif right_kind == "var" and right in _SET_VARIABLES and left_kind == "value":
        left = canonicalize_name(left)
    return (left_kind, left), op, (right_kind, right)


def _side_text(side: _Side) -> str:
    kind, text = side
    if kind == "var":
        return text
    return f'"{text}"' if '"' not in text else f"'{text}'"


def _format(node: _Item | _Group | str, first: bool = True) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, tuple):
        left, op, right = _normalized(node)
        return f"{_side_text(left)} {op} {_side_text(right)}"
    if len(node) == 1 and not isinstance(node[0], str):
        return _format(node[0], first)
    inner = " ".join(_format(part, first=False) for part in node)
    return inner if first else f"({inner})"


def _packaging_text(text: str) -> str:
    from packaging.markers import InvalidMarker as PackagingInvalidMarker
    from packaging.markers import Marker

    try:
        return str(Marker(text))
    except PackagingInvalidMarker as exc:
        raise InvalidMarker(str(exc)) from None


def normalize_marker(text: str) -> str:
    """`str(packaging.markers.Marker(text))`; InvalidMarker when packaging rejects the text."""
    reader = _Reader(text)
    try:
        tree = reader.marker(0)
        if reader.pos != len(text):
            raise _Unread
    except (_Unread, RecursionError):
        return _packaging_text(text)
    return _format(tree)
