"""PEP 508 marker text -> a node of marker_tree, read the way uv reads it (pure).

What uv does, and so this does (crates/uv-pep508/src/marker/parse.rs, algebra.rs; measured
against uv 0.13.9 by tests/core/test_marker_uv.py):

* versions are release-only (`3.13.0rc1` is `3.13`, trailing zeros do not count);
  `python_version` is rewritten as `python_full_version` (`python_version == '3.12'` is
  `python_full_version == '3.12.*'`, `python_version > '3.12'` is `>= '3.13'`, ...), and
  `python_version in '3.11 3.12'` is the union of the two minor versions (never true, `in` or
  `not in`, when a version of the list has a patch segment: uv reads it so);
* a comparison uv ignores is left out of its `and`/`or` (a marker of only those is true):
  `~=` on a string key, a version key against a non-version, two keys or two literals compared,
  `extra` with an ordering operator;
* strict string comparisons (`<`, `>`) are false and `<=`/`>=` are `==`, except for
  platform_release and platform_version, compared lexicographically; platform_release with
  a version literal is a version on macOS (sys_platform 'darwin') and a string elsewhere;
* `platform_system` values uv knows the sys_platform of are rewritten to it
  (`platform_system == 'Linux'` is `sys_platform == 'linux'`);
* `key in 'text'` and `'text' in key` are opaque true/false variables (uv does not relate
  them to `==`); `extra` names are normalized, and an invalid one makes the term false;
* `===` is not a marker operator for uv (it rejects the marker); it is read here as `==`.

Syntax errors raise InvalidMarker (depsync/core/model/marker_text.py), the error callers handle.
"""

from __future__ import annotations

import functools
import re

from packaging.version import InvalidVersion, Version

from depsync.core import limits
from depsync.core.model.marker_text import InvalidMarker
from depsync.core.model.marker_tree import (
    CONTAINS,
    EXTRA,
    FALSE,
    IN,
    LIST,
    LIST_KEYS,
    ORDERED_STRINGS,
    STRING,
    STRING_KEYS,
    TRUE,
    VERSION,
    VERSION_KEYS,
    Store,
)

_ALIASES = {
    "os.name": "os_name",
    "sys.platform": "sys_platform",
    "platform.machine": "platform_machine",
    "platform.python_implementation": "platform_python_implementation",
    "python_implementation": "platform_python_implementation",
    "platform.version": "platform_version",
}
_PYTHON_KEYS = ("python_version", "python_full_version", "implementation_version")
_SYSTEM_TO_SYS_PLATFORM = {"Windows": "win32", "Darwin": "darwin", "Linux": "linux", "AIX": "aix", "Emscripten": "emscripten", "Android": "android"}
_TOKEN = re.compile(r"""\s*(?:(\()|(\))|('[^']*'|"[^"]*")|(===|==|!=|<=|>=|~=|<|>)|([A-Za-z_][A-Za-z0-9_.]*))""")
_SPACE = re.compile(r"\s*")
_NAME = re.compile(r"^([a-z0-9]|[a-z0-9][a-z0-9._-]*[a-z0-9])$", re.IGNORECASE)
_INVERTED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!=", "===": "===", "~=": "~="}

Release = tuple[int, ...]


def normalize_name(name: str) -> str | None:
    """A PEP 508 name normalized (PEP 503), None when it is not a valid name."""
    return re.sub(r"[-_.]+", "-", name).lower() if _NAME.match(name) else None


def _trim(release: Release) -> Release:
    end = len(release)
    while end and release[end - 1] == 0:
        end -= 1
    return release[:end]


@functools.lru_cache(maxsize=4096)
def release_of(text: str) -> Release | None:
    """The release of a PEP 440 version, trailing zeros trimmed; None when it is not one."""
    try:
        return _trim(Version(text.strip()).release)
    except InvalidVersion:
        return None


# -- atoms -------------------------------------------------------------------------------


def _range(store: Store, key: int, op: str, value: object, ordered: bool = True, group: int = VERSION) -> int:
    """The node of `key op value` on an ordered variable (a version or a string)."""
    var = (group, key, "")
    point = ((value, 0), (value, 2))
    if op in ("==", "==="):
        return store.node(var, point, (FALSE, TRUE, FALSE))
    if op == "!=":
        return store.node(var, point, (TRUE, FALSE, TRUE))
    if not ordered:  # uv: a strict string comparison is false, an inclusive one is `==`
        return FALSE if op in ("<", ">") else store.node(var, point, (FALSE, TRUE, FALSE))
    cut = (value, 0) if op in ("<", ">=") else (value, 2)
    return store.node(var, (cut,), (TRUE, FALSE) if op in ("<", "<=") else (FALSE, TRUE))


def _between(store: Store, key: int, low: Release, high: Release) -> int:
    return store.node((VERSION, key, ""), ((low, 0), (high, 0)), (FALSE, TRUE, FALSE))


def _bump(release: Release, index: int) -> Release:
    """release[:index + 1] with its last segment raised by one, trimmed."""
    head = release[: index + 1]
    return _trim((*head[:-1], head[-1] + 1))


def version_atom(store: Store, key: int, op: str, release: Release, star: bool) -> int:
    """`key op version` for a full version key (release as written, star for `X.Y.*`)."""
    if star:
        node = _between(store, key, _trim(release), _bump(release, len(release) - 1))
        return node if op == "==" else store.negate(node)
    if op == "~=":
        return _between(store, key, _trim(release), _bump(release, len(release) - 2))
    return _range(store, key, op, _trim(release))


def python_version_atom(store: Store, op: str, release: Release, star: bool) -> int:
    """`python_version op version` as the python_full_version node uv rewrites it to."""
    full = VERSION_KEYS.index("python_full_version")
    release = release or (0,)
    if star:
        if len(release) == 1:
            return version_atom(store, full, op, release, True)
        if all(part == 0 for part in release[2:]):
            return version_atom(store, full, op, release[:2], True)
        return FALSE  # python_version has two segments: `== 3.9.1.*` never holds (uv: either op)
    if op == "~=":
        if len(release) == 2:
            return version_atom(store, full, op, release, False)
        return version_atom(store, full, "==", release[:2], True) if all(p == 0 for p in release[2:]) else FALSE
    trimmed = _trim(release) or (0,)
    if len(trimmed) <= 2:
        major, minor = trimmed[0], trimmed[1] if len(trimmed) == 2 else 0
        if op in ("==", "===", "!="):
            return version_atom(store, full, "==" if op != "!=" else "!=", (major, minor), True)
        bound = {">": (major, minor + 1), "<=": (major, minor + 1)}.get(op, (major, minor))
        return _range(store, full, {">": ">=", "<=": "<"}.get(op, op), _trim(bound))
    major, minor = release[0], release[1]
    if op in ("==", "==="):
        return FALSE
    if op == "!=":
        return TRUE
    return _range(store, full, "<" if op in ("<", "<=") else ">=", _trim((major, minor + 1)))


def _version_literal(text: str) -> tuple[Release, bool] | None:
    """(release, star) of a version literal, None when uv would not read it as one."""
    star = text.strip().endswith(".*")
    release = release_of(text.strip()[:-2] if star else text)
    if release is None:
        return None
    return Version(text.strip()[:-2] if star else text.strip()).release, star


def _version_expression(store: Store, key: str, op: str, text: str) -> int | None:
    if op in ("in", "not in"):
        words = text.split()
        releases = [release_of(w) for w in words]
        if any(r is None for r in releases):
            return None  # uv ignores the term
        node = FALSE
        for word in words:
            exact = Version(word).release
            if key == "python_version":
                if any(_trim(exact)[2:]):
                    return FALSE  # uv: a patch version never equals python_version, whichever operator
                term = python_version_atom(store, "==", exact, False)
            else:
                term = version_atom(store, VERSION_KEYS.index(key), "==", exact, False)
            node = store.disjoin(node, term)
        return node if op == "in" else store.negate(node)
    literal = _version_literal(text)
    if literal is None:
        return None
    release, star = literal
    if star and op not in ("==", "!="):
        return None  # `>= '3.*'` is not a specifier
    if op == "~=" and len(release) < 2:
        return None
    if key == "python_version":
        return python_version_atom(store, op, release, star)
    return version_atom(store, VERSION_KEYS.index(key), op, release, star)


def _string_expression(store: Store, key: str, op: str, value: str, reversed_: bool) -> int | None:
    if op == "~=":
        return None
    if op in ("in", "not in"):
        group = CONTAINS if reversed_ else IN
        node = store.node((group, STRING_KEYS.index(key), value), ((1, 0),), (FALSE, TRUE))
        return node if op == "in" else store.negate(node)
    if key == "platform_system" and value in _SYSTEM_TO_SYS_PLATFORM:
        key, value = "sys_platform", _SYSTEM_TO_SYS_PLATFORM[value]
    string = _range(store, STRING_KEYS.index(key), op, value, key in ORDERED_STRINGS, STRING)
    if key != "platform_release" or release_of(value) is None:
        return string
    # uv 0.13.9: on macOS platform_release is darwin's version, compared as one
    darwin = _range(store, STRING_KEYS.index("sys_platform"), "==", "darwin", False, STRING)
    release = _range(store, VERSION_KEYS.index("platform_release"), op, release_of(value))
    on_darwin = store.conjoin(darwin, release)
    elsewhere = store.conjoin(store.negate(darwin), string)
    return store.disjoin(on_darwin, elsewhere)


def _extra_expression(store: Store, op: str, value: str) -> int | None:
    if op not in ("==", "!="):
        return None
    name = normalize_name(value)
    if name is None:
        return FALSE  # uv: an invalid extra name is never true, whichever the operator
    node = store.node((EXTRA, 0, name), ((1, 0),), (FALSE, TRUE))
    return node if op == "==" else store.negate(node)


def expression(store: Store, left: tuple[str, str], op: str, right: tuple[str, str]) -> int | None:
    """One `left op right` term (each side ("key", name) or ("str", text)); None: uv ignores it."""
    (lkind, lvalue), (rkind, rvalue) = left, right
    if lkind == "key" and lvalue in LIST_KEYS:
        raise InvalidMarker(f"the marker {lvalue} must be on the right hand side of the expression")
    if lkind == "key" and rkind == "str":
        key, value, reversed_ = lvalue, rvalue, False
    elif lkind == "str" and rkind == "key":
        if rvalue in LIST_KEYS:
            if op not in ("in", "not in"):
                raise InvalidMarker(f"the operator {op} is not supported with the marker {rvalue}")
            name = normalize_name(lvalue)
            node = store.node((LIST, LIST_KEYS.index(rvalue), name or f"\0{lvalue}"), ((1, 0),), (FALSE, TRUE))
            return node if op == "in" else store.negate(node)
        key, value, reversed_ = rvalue, lvalue, True
        op = _INVERTED.get(op, op)
        if key in _PYTHON_KEYS and (op in ("in", "not in") or value.strip().endswith("*")):
            return None  # uv: `'3.*' == python_version` is not a version comparison
    else:
        return None  # two keys or two literals: uv ignores the term
    if key == "extra":
        return _extra_expression(store, op, value)
    if key in _PYTHON_KEYS:
        return _version_expression(store, key, op, value)
    return _string_expression(store, key, op, value, reversed_)


# -- the grammar -------------------------------------------------------------------------


class _Parser:
    """marker = or; or = and ('or' and)*; and = term ('and' term)*; term = '(' or ')' | value op value."""

    def __init__(self, store: Store, text: str) -> None:
        self.store, self.text = store, text
        self.tokens: list[tuple[str, str]] = []
        position = _SPACE.match(text).end()  # type: ignore[union-attr]
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None:
                raise InvalidMarker(f"unexpected text in marker {text!r} at {position}")
            kinds = ("(", ")", "str", "op", "word")
            kind = next(k for k, group in zip(kinds, match.groups()) if group is not None)
            self.tokens.append((kind, match.group(kinds.index(kind) + 1)))
            position = _SPACE.match(text, match.end()).end()  # type: ignore[union-attr]
        terms = sum(1 for kind, word in self.tokens if kind == "op" or (kind == "word" and word in ("in", "not")))
        if terms > limits.MAX_MARKER_TERMS:
            raise limits.LimitExceeded(f"a marker has {terms} comparisons; depsync reads at most {limits.MAX_MARKER_TERMS}")
        self.index = 0
        self.depth = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise InvalidMarker(f"marker {self.text!r} ends too early")
        self.index += 1
        return token

    def parse(self) -> int:
        node = self.disjunction()
        if self.peek() is not None:
            raise InvalidMarker(f"unexpected {self.peek()[1]!r} in marker {self.text!r}")  # type: ignore[index]
        return TRUE if node is None else node

    def chain(self, word: str, inner, combine) -> int | None:  # type: ignore[no-untyped-def]
        operands = [inner()]
        while self.peek() == ("word", word):
            self.index += 1
            operands.append(inner())
        nodes = [n for n in operands if n is not None]  # uv leaves ignored terms out
        # combined pairwise, as a balanced tree: a long chain on one variable then merges
        # n log n ranges, not n**2 (the result is the same node in any order)
        while len(nodes) > 1:
            nodes = [combine(nodes[i], nodes[i + 1]) if i + 1 < len(nodes) else nodes[i] for i in range(0, len(nodes), 2)]
        return nodes[0] if nodes else None

    def disjunction(self) -> int | None:
        return self.chain("or", self.conjunction, self.store.disjoin)

    def conjunction(self) -> int | None:
        return self.chain("and", self.term, self.store.conjoin)

    def term(self) -> int | None:
        if self.peek() == ("(", "("):
            self.index += 1
            self.depth += 1
            if self.depth > limits.MAX_MARKER_NESTING:
                raise limits.LimitExceeded(f"a marker nests parentheses over {limits.MAX_MARKER_NESTING} deep")
            node = self.disjunction()
            if self.take() != (")", ")"):
                raise InvalidMarker(f"expected ')' in marker {self.text!r}")
            self.depth -= 1
            return node
        left = self.value()
        kind, op = self.take()
        if kind == "word" and op == "not":
            if self.take() != ("word", "in"):
                raise InvalidMarker(f"expected 'in' after 'not' in marker {self.text!r}")
            op = "not in"
        elif not (kind == "op" or (kind == "word" and op == "in")):
            raise InvalidMarker(f"expected a marker operator, found {op!r} in marker {self.text!r}")
        return expression(self.store, left, op, self.value())

    def value(self) -> tuple[str, str]:
        kind, text = self.take()
        if kind == "str":
            return "str", text[1:-1]
        if kind == "word":
            key = _ALIASES.get(text, text)
            if key in STRING_KEYS or key in _PYTHON_KEYS or key in LIST_KEYS or key == "extra":
                return "key", key
        raise InvalidMarker(f"expected a quoted string or a marker name, found {text!r} in marker {self.text!r}")


def parse(store: Store, text: str) -> int:
    """The node of a marker text (true for an empty one)."""
    if len(text) > limits.MAX_MARKER_CHARS:
        raise limits.LimitExceeded(f"a marker is {len(text)} characters long; depsync reads markers up to {limits.MAX_MARKER_CHARS}")
    return _Parser(store, text).parse()
