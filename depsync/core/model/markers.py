"""Semantic equality of PEP 508 markers, exact and as uv decides it.

uv rewrites markers when it records them (`python_version >= '3.12'` becomes
`python_full_version >= '3.12'`, `platform_system == 'Linux'` becomes
`sys_platform == 'linux'`, terms are reordered and simplified) and compares them as decision
diagrams, where two markers are equal exactly when their diagrams are the same node. depsync
does the same: each marker is read into a reduced ordered decision diagram
(model/marker_tree.py, read by model/marker_parse.py), so equivalence, implication and
"never true" are node comparisons (on the platforms that exist, as uv compares them), with no enumeration, no budget and no fallback to text.
What is bounded is the input (limits.MAX_MARKER_CHARS, MAX_MARKER_TERMS, MAX_MARKER_NESTING)
and the diagrams one marker and one check may build (limits.MAX_MARKER_NODES,
MAX_MARKER_CHECK_NODES, see bounded_check); past them the markers are refused with one
readable line.

Markers recorded in uv.lock are written relative to the lock's requires-python, so lock and
pyproject markers are compared inside its bounds, as uv compares them (`uv lock --check`
simplifies both sides to requires-python's lowest and highest version, not to its gaps).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from depsync.core import limits
from depsync.core.model import marker_parse, marker_tree
from depsync.core.model.marker_text import InvalidMarker, normalize_marker
from depsync.core.model.marker_tree import FALSE, TRUE, VERSION, VERSION_KEYS, Store

_STORE = Store()
_FULL = VERSION_KEYS.index("python_full_version")


def _store() -> Store:
    """The shared store, renewed between operations once it holds limits.MAX_MARKER_STORE nodes;
    each operation may add limits.MAX_MARKER_NODES."""
    global _STORE
    if len(_STORE.var) > limits.MAX_MARKER_STORE:
        left = _STORE.check_allowance
        _STORE = Store()
        _STORE.check_allowance = left
    _STORE.allowance = limits.MAX_MARKER_NODES
    return _STORE


@contextmanager
def bounded_check() -> Iterator[None]:
    """The marker operations inside the block (one check) may add limits.MAX_MARKER_CHECK_NODES
    nodes together: a pyproject of many markers each just under the per-marker cap is refused
    (MarkerTooLarge) instead of costing seconds each. Real checks add a few hundred."""
    store = _store()
    store.check_allowance = limits.MAX_MARKER_CHECK_NODES
    try:
        yield
    finally:
        _STORE.check_allowance = float("inf")


def parse_marker(text: str | None) -> str | None:
    """The marker's text in packaging's normal form, or None for an empty/absent one;
    InvalidMarker propagates."""
    if text is None or not text.strip():
        return None
    return normalize_marker(text)


def _text(marker: str | None) -> str:
    return "" if marker is None else str(marker)


def _node(store: Store, marker: str | None) -> int:
    text = _text(marker)
    found = store.parsed.get(text)
    if found is None:
        found = marker_parse.parse(store, text) if text.strip() else TRUE
        store.parsed[text] = found
    return found


def _specifier_node(store: Store, spec: str) -> int:
    """The Python versions a specifier set admits (release-only, as uv reads requires-python)."""
    node = TRUE
    for specifier in SpecifierSet(spec):
        star = specifier.version.endswith(".*")
        try:
            written = Version(specifier.version[:-2] if star else specifier.version).release
        except InvalidVersion:
            raise ValueError(f"invalid version in specifier {spec!r}") from None
        op = "==" if specifier.operator == "===" else specifier.operator
        node = store.conjoin(node, marker_parse.version_atom(store, _FULL, op, written, star))
    return node


def _python_bounds(store: Store, spec: str) -> int:
    """The python_full_version range from the lowest to the highest version spec admits."""
    node = _specifier_node(store, spec)
    if node <= TRUE:
        return node
    cuts, kids = store.cuts[node], store.kids[node]
    first = kids.index(TRUE)
    last = len(kids) - 1 - kids[::-1].index(TRUE)
    bounds = ([cuts[first - 1]] if first else []) + ([cuts[last]] if last < len(cuts) else [])
    pattern = ((FALSE,) if first else ()) + (TRUE,) + ((FALSE,) if last < len(cuts) else ())
    return store.node((VERSION, _FULL, ""), tuple(bounds), pattern)


def _within(store: Store, node: int, requires_python: str) -> int:
    """The part of node inside requires-python's bounds (what uv compares of a lock's marker)."""
    return store.conjoin(node, _python_bounds(store, requires_python)) if requires_python else node


def markers_equivalent(left: str | None, right: str | None, requires_python: str = "") -> bool:
    """True when both markers select the same environments (None = always), as uv decides.

    Like uv, only environments inside requires_python's bounds count: under `>=3.10`,
    `python_version >= '3.10'` is the same as no marker.
    """
    left_text, right_text = _text(left), _text(right)
    if left_text == right_text:
        return True  # the common case: uv wrote what pyproject implies, verbatim
    store = _store()
    try:
        a, b = _node(store, left_text), _node(store, right_text)
        return a == b or store.same(_within(store, a, requires_python), _within(store, b, requires_python))
    except InvalidMarker as exc:
        raise ValueError(f"invalid marker: {exc}") from None


def implies(left: str | None, right: str | None) -> bool:
    """True when every environment left selects, right selects too."""
    store = _store()
    return store.implies(_node(store, left), _node(store, right))


def is_never(text: str | None) -> bool:
    """True when no environment satisfies the marker (`sys_platform != 'win32' and sys_platform == 'win32'`)."""
    store = _store()
    return store.same(_node(store, text), FALSE)


def is_always(text: str | None) -> bool:
    """True when every environment satisfies the marker (an absent one included)."""
    store = _store()
    return store.same(_node(store, text), TRUE)


def canonical(text: str | None) -> str | None:
    """The marker re-rendered from its diagram (None: always); equivalent markers render alike."""
    store = _store()
    return marker_tree.render(store, _node(store, text))


def specifiers_equivalent(left: str, right: str) -> bool:
    """Whether two Python version specifiers (requires-python) admit the same versions."""
    store = _store()
    return _specifier_node(store, left) == _specifier_node(store, right)


def conjoin(*markers: str | None) -> str | None:
    """`a and b and ...` as text, skipping absent markers; `or` terms are parenthesized."""
    parts = [str(m) for m in markers if m is not None and str(m)]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return " and ".join(f"({p})" if " or " in p else p for p in parts)


def negate(text: str | None) -> str | None:
    """`not marker` as PEP 508 text (which has no `not`), rendered from the negated diagram.
    An absent marker (always) negates to never; a never-true marker to None (always)."""
    store = _store()
    return marker_tree.render(store, store.negate(_node(store, text)))


__all__ = [
    "InvalidMarker",
    "bounded_check",
    "canonical",
    "conjoin",
    "implies",
    "is_always",
    "is_never",
    "markers_equivalent",
    "negate",
    "parse_marker",
    "specifiers_equivalent",
]
