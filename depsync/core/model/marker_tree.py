"""PEP 508 markers as reduced ordered decision diagrams: equal meaning is equal node (pure).

The design follows uv's marker algebra (crates/uv-pep508/src/marker/algebra.rs), so that two
markers are the same here when uv treats them as one marker, and only then (measured against
uv 0.13.9: tests/core/test_marker_uv.py):

* a node decides one variable; its edges split the variable's values into disjoint ranges
  (versions, strings) or into true/false (`in`, `extra`, ...), each range leading to a child;
* variables are always decided in the same order (uv's: the string keys, os_name, sys_platform
  and platform_system first, then the version keys, then `in`/contains, extras and lists);
* adjacent ranges with the same child are one range, a node whose children are all the same is
  that child, and nodes are hash-consed, so the diagram of a function is unique: equivalence
  is node identity and costs nothing once both sides are built;
* uv knows some platform values never go together (`os_name == 'nt'` and
  `sys_platform == 'linux'`, `platform_system == 'FreeBSD'` and `sys_platform == 'win32'`:
  its "exclusions"), and takes two markers that differ only there for one marker: Store.same
  compares the markers on the possible platforms only (Store.possible).

A range is a tuple of cuts: (value, 0) is the cut just below value, (value, 2) the cut just
above it; a value v falls in the range after every cut below (v, 1). Nodes are ints
(0 false, 1 true) indexing the store's tables. The nodes one operation and one check may add
are bounded (limits.MAX_MARKER_NODES, MAX_MARKER_CHECK_NODES): past them the markers are
refused, never compared some other way.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping

from depsync.core import limits

FALSE, TRUE = 0, 1

# variable groups, in uv's order
STRING, VERSION, IN, CONTAINS, EXTRA, LIST = range(6)
STRING_KEYS = (
    "os_name",
    "sys_platform",
    "platform_system",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_version",
    "implementation_name",
)
# the third is platform_release on macOS, which uv compares as a version (darwin's release)
VERSION_KEYS = ("implementation_version", "python_full_version", "platform_release")
LIST_KEYS = ("extras", "dependency_groups")
ORDERED_STRINGS = frozenset({"platform_release", "platform_version"})  # compared lexicographically

_SYS_PLATFORM, _PLATFORM_SYSTEM = STRING_KEYS.index("sys_platform"), STRING_KEYS.index("platform_system")

Var = tuple[int, int, str]  # (group, key index, value): ordered as uv orders its variables
Cut = tuple[object, int]


class MarkerTooLarge(limits.LimitExceeded):
    """A marker whose decision diagram would pass limits.MAX_MARKER_NODES, or the markers of one
    check that would pass limits.MAX_MARKER_CHECK_NODES together."""


class Store:
    """The nodes and the memo tables of the operations on them."""

    def __init__(self) -> None:
        self.var: list[Var | None] = [None, None]
        self.cuts: list[tuple[Cut, ...]] = [(), ()]
        self.kids: list[tuple[int, ...]] = [(), ()]
        self.unique: dict[tuple[Var, tuple[Cut, ...], tuple[int, ...]], int] = {}
        self.memo_and: dict[tuple[int, int], int] = {}
        self.memo_or: dict[tuple[int, int], int] = {}
        self.memo_possible: dict[int, int] = {}
        self.memo_not: dict[int, int] = {}
        self.parsed: dict[str, int] = {}  # marker text -> node (markers.py)
        self.excluded: int | None = None
        self.allowance = limits.MAX_MARKER_NODES  # per operation (markers.py resets it)
        self.check_allowance: float = float("inf")  # per check, inside markers.bounded_check()

    # -- building --------------------------------------------------------------------------

    def node(self, var: Var, cuts: tuple[Cut, ...], kids: tuple[int, ...]) -> int:
        """The reduced node: adjacent equal children merged, a single child returned as is."""
        merged_cuts: list[Cut] = []
        merged_kids = [kids[0]]
        for cut, kid in zip(cuts, kids[1:]):
            if kid != merged_kids[-1]:
                merged_cuts.append(cut)
                merged_kids.append(kid)
        if len(merged_kids) == 1:
            return merged_kids[0]
        key = (var, tuple(merged_cuts), tuple(merged_kids))
        found = self.unique.get(key)
        if found is not None:
            return found
        self.allowance -= 1
        self.check_allowance -= 1
        if self.allowance < 0:
            raise MarkerTooLarge(
                f"a marker's decision diagram passes {limits.MAX_MARKER_NODES} nodes; depsync compares markers up to that size"
            )
        if self.check_allowance < 0:
            raise MarkerTooLarge(
                f"the markers of one check build over {limits.MAX_MARKER_CHECK_NODES} decision-diagram nodes; depsync compares markers up to that size"
            )
        self.var.append(var)
        self.cuts.append(key[1])
        self.kids.append(key[2])
        self.unique[key] = len(self.var) - 1
        return len(self.var) - 1

    # -- operations ------------------------------------------------------------------------

    def negate(self, x: int) -> int:
        if x <= TRUE:
            return 1 - x
        found = self.memo_not.get(x)
        if found is None:
            found = self.node(self.var[x], self.cuts[x], tuple(self.negate(k) for k in self.kids[x]))  # type: ignore[arg-type]
            self.memo_not[x] = found
            self.memo_not[found] = x
        return found

    def conjoin(self, x: int, y: int) -> int:
        """x and y."""
        if x == TRUE or x == y:
            return y
        if y == TRUE:
            return x
        if x == FALSE or y == FALSE:
            return FALSE
        if x > y:
            x, y = y, x  # and is commutative: one memo entry per pair
        found = self.memo_and.get((x, y))
        if found is not None:
            return found
        vx, vy = self.var[x], self.var[y]
        assert vx is not None and vy is not None
        if vx < vy:
            result = self.node(vx, self.cuts[x], tuple(self.conjoin(k, y) for k in self.kids[x]))
        elif vy < vx:
            result = self.node(vy, self.cuts[y], tuple(self.conjoin(x, k) for k in self.kids[y]))
        else:
            cuts, kids = _merge(self.cuts[x], self.kids[x], self.cuts[y], self.kids[y], self.conjoin)
            result = self.node(vx, cuts, kids)
        self.memo_and[(x, y)] = result
        return result

    def disjoin(self, x: int, y: int) -> int:
        """x or y (built directly: through De Morgan, each `or` of a long chain would negate
        the whole chain so far)."""
        if x == FALSE or x == y:
            return y
        if y == FALSE:
            return x
        if x == TRUE or y == TRUE:
            return TRUE
        if x > y:
            x, y = y, x
        found = self.memo_or.get((x, y))
        if found is not None:
            return found
        vx, vy = self.var[x], self.var[y]
        assert vx is not None and vy is not None
        if vx < vy:
            result = self.node(vx, self.cuts[x], tuple(self.disjoin(k, y) for k in self.kids[x]))
        elif vy < vx:
            result = self.node(vy, self.cuts[y], tuple(self.disjoin(x, k) for k in self.kids[y]))
        else:
            cuts, kids = _merge(self.cuts[x], self.kids[x], self.cuts[y], self.kids[y], self.disjoin)
            result = self.node(vx, cuts, kids)
        self.memo_or[(x, y)] = result
        return result

    def same(self, x: int, y: int) -> bool:
        """Whether x and y are one marker for uv: the same node on the platforms that exist."""
        if x == y:
            return True
        # every excluded pair has os_name or platform_system in it: two markers that name
        # neither are the same on the possible platforms only if they are the same node
        return (self.names_platform(x) or self.names_platform(y)) and self.possible(x) == self.possible(y)

    def implies(self, x: int, y: int) -> bool:
        """Whether y holds wherever x does (on the platforms that exist)."""
        return self.same(self.conjoin(x, self.negate(y)), FALSE)

    def possible(self, x: int) -> int:
        """x on the platforms that exist: x and not exclusions(). Two markers uv treats as one
        have the same possible() node (measured: uv 0.13.9 takes `sys_platform == 'linux' and
        os_name != 'nt'` for `sys_platform == 'linux'`, and the reverse)."""
        found = self.memo_possible.get(x)
        if found is None:
            found = self.conjoin(x, self.negate(self.exclusions()))
            self.memo_possible[x] = found
        return found

    def names_platform(self, x: int) -> bool:
        """Whether x depends on os_name or platform_system (found among its first variables:
        sys_platform is the only variable ordered between them)."""
        var = self.var[x]
        if x <= TRUE or var is None or var[0] != STRING or var[1] > _PLATFORM_SYSTEM:
            return False
        return var[1] != _SYS_PLATFORM or any(self.names_platform(k) for k in self.kids[x])

    def exclusions(self) -> int:
        """uv's disjunction of platform pairs that never hold together."""
        if self.excluded is None:
            def string(key: str, value: str) -> int:
                return self.node((STRING, STRING_KEYS.index(key), ""), ((value, 0), (value, 2)), (FALSE, TRUE, FALSE))

            nt, posix = string("os_name", "nt"), string("os_name", "posix")
            sys_platforms = {name: string("sys_platform", name) for name in ("aix", "android", "emscripten", "ios", "linux", "darwin", "win32", "cygwin", "wasi")}
            pairs = [(nt, sys_platforms["linux"]), (nt, sys_platforms["darwin"]), (nt, sys_platforms["ios"]), (posix, sys_platforms["win32"])]
            for system in ("FreeBSD", "NetBSD", "OpenBSD", "SunOS", "iOS", "iPadOS"):
                for name, node in sys_platforms.items():
                    if name == "ios" and system in ("iOS", "iPadOS"):
                        continue  # iOS reports both
                    pairs.append((string("platform_system", system), node))
            tree = FALSE
            for a, b in pairs:
                tree = self.disjoin(tree, self.conjoin(a, b))
            self.excluded = tree
        return self.excluded

    # -- reading ---------------------------------------------------------------------------

    def evaluate(self, x: int, value_of: Callable[[Var], object]) -> bool:
        """The marker's value in one environment: value_of gives each variable's value."""
        while x > TRUE:
            var = self.var[x]
            assert var is not None
            x = self.kids[x][bisect.bisect_left(self.cuts[x], (value_of(var), 1))]
        return x == TRUE

    def size(self, x: int) -> int:
        """Nodes reachable from x (terminals excluded)."""
        seen: set[int] = set()
        stack = [x]
        while stack:
            n = stack.pop()
            if n > TRUE and n not in seen:
                seen.add(n)
                stack.extend(self.kids[n])
        return len(seen)

    def edges(self, x: int) -> Iterator[tuple[int, list[tuple[Cut | None, Cut | None]]]]:
        """Each distinct child of x with the ranges that lead to it, in order of first range."""
        cuts, kids = self.cuts[x], self.kids[x]
        ranges: dict[int, list[tuple[Cut | None, Cut | None]]] = {}
        for index, kid in enumerate(kids):
            low = cuts[index - 1] if index else None
            high = cuts[index] if index < len(cuts) else None
            ranges.setdefault(kid, []).append((low, high))
        yield from ranges.items()


def _merge(
    cuts_a: tuple[Cut, ...], kids_a: tuple[int, ...], cuts_b: tuple[Cut, ...], kids_b: tuple[int, ...], combine: Callable[[int, int], int]
) -> tuple[tuple[Cut, ...], tuple[int, ...]]:
    """Two partitions of one variable's values refined into one, children combined per range."""
    cuts = sorted(set(cuts_a).union(cuts_b))
    ia = ib = 0
    kids = [combine(kids_a[0], kids_b[0])]
    for cut in cuts:
        if ia < len(cuts_a) and cuts_a[ia] == cut:
            ia += 1
        if ib < len(cuts_b) and cuts_b[ib] == cut:
            ib += 1
        kids.append(combine(kids_a[ia], kids_b[ib]))
    return tuple(cuts), tuple(kids)


# -- rendering -----------------------------------------------------------------------------

# a marker no environment satisfies, in words both uv and packaging read that way
# (uv: a strict string comparison is false; packaging: no string sorts before '')
NEVER_TEXT = "sys_platform < ''"


def _quote(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


def _version_text(release: tuple[int, ...]) -> str:
    return ".".join(map(str, release)) or "0"


def _key_text(var: Var) -> str:
    group, index, _ = var
    if group == STRING:
        return STRING_KEYS[index]
    if group == VERSION:
        return VERSION_KEYS[index]
    return LIST_KEYS[index] if group == LIST else ""


def _range_text(var: Var, low: Cut | None, high: Cut | None) -> str:
    key = _key_text(var)

    def value(cut: Cut) -> str:
        return _quote(_version_text(cut[0]) if var[0] == VERSION else str(cut[0]))  # type: ignore[arg-type]

    if low is not None and high is not None and low[0] == high[0] and low[1] == 0 and high[1] == 2:
        return f"{key} == {value(low)}"
    parts = []
    if low is not None:
        parts.append(f"{key} {'>=' if low[1] == 0 else '>'} {value(low)}")
    if high is not None:
        parts.append(f"{key} {'<' if high[1] == 0 else '<='} {value(high)}")
    return " and ".join(parts)


def _condition(store: Store, x: int, ranges: list[tuple[Cut | None, Cut | None]], kid: int) -> str:
    """The condition on x's variable under which x goes to kid, as marker text."""
    var = store.var[x]
    assert var is not None
    group, index, name = var
    if group in (IN, CONTAINS, EXTRA, LIST):
        high = ranges[-1][1] is None  # the range above the one cut: the variable holds
        key = STRING_KEYS[index] if group in (IN, CONTAINS) else ""
        if group == IN:
            return f"{key} {'in' if high else 'not in'} {_quote(name)}"
        if group == CONTAINS:
            return f"{_quote(name)} {'in' if high else 'not in'} {key}"
        if group == EXTRA:
            return f"extra {'==' if high else '!='} {_quote(name)}"
        return f"{_quote(name)} {'in' if high else 'not in'} {LIST_KEYS[index]}"
    if group == STRING and STRING_KEYS[index] not in ORDERED_STRINGS:
        # only equalities: each range is one value or a gap between the values named
        points = [low[0] for low, high in ranges if low is not None and high is not None and low[0] == high[0]]
        if len(points) == len(ranges):
            return " or ".join(f"{STRING_KEYS[index]} == {_quote(str(p))}" for p in points)
        others = [c[0] for c in store.cuts[x] if c[1] == 0 and c[0] not in points]
        return " and ".join(f"{STRING_KEYS[index]} != {_quote(str(p))}" for p in others)
    texts = [_range_text(var, low, high) for low, high in ranges]
    if len(texts) == 1:
        return texts[0]
    return " or ".join(f"({t})" if " and " in t else t for t in texts)


def render(store: Store, x: int) -> str | None:
    """x as marker text (a disjunction of its paths to true), None for true."""
    if x == TRUE:
        return None
    if x == FALSE:
        return NEVER_TEXT
    terms: list[str] = []

    def walk(n: int, conditions: list[str]) -> None:
        if n == TRUE:
            terms.append(" and ".join(f"({c})" if " or " in c else c for c in conditions))
            return
        if n == FALSE:
            return
        for kid, ranges in store.edges(n):
            if kid != FALSE:
                walk(kid, [*conditions, _condition(store, n, ranges, kid)])

    walk(x, [])
    if len(terms) == 1:
        return terms[0]
    return " or ".join(f"({t})" if " and " in t else t for t in terms)


def environment_reader(env: Mapping[str, object], parse_release: Callable[[str], tuple[int, ...] | None]) -> Callable[[Var], object]:
    """value_of for Store.evaluate from an environment dict (packaging's keys; `extra` a
    normalized name or a set of them, `extras`/`dependency_groups` sets)."""

    def value_of(var: Var) -> object:
        group, index, name = var
        if group == STRING:
            return str(env.get(STRING_KEYS[index], ""))
        if group == VERSION:
            return parse_release(str(env.get(VERSION_KEYS[index], "0"))) or ()
        if group == IN:
            return int(str(env.get(STRING_KEYS[index], "")) in name)
        if group == CONTAINS:
            return int(name in str(env.get(STRING_KEYS[index], "")))
        if group == EXTRA:
            extra = env.get("extra", ())
            return int(name in extra if isinstance(extra, (set, frozenset, tuple, list)) else name == extra)
        return int(name in env.get(LIST_KEYS[index], ()))  # type: ignore[operator]

    return value_of
