"""Semantic equality of PEP 508 markers.

uv rewrites markers when it records them (`python_version >= '3.12'` becomes
`python_full_version >= '3.12'`, terms are reordered and simplified), so markers are
compared by evaluating both on every environment that can tell them apart: each
variable takes the values named in either marker, values just beside them, and
"something else". Two markers agree on all of those exactly when they are equivalent.

That is a product over the variables, so a long `or` chain of distinct literals asks for
millions of evaluations, and a pyproject can ask for thousands of comparisons. Every
comparison is therefore costed before it runs (environments x evaluation work, see
depsync/limits.py) and refused past MAX_MARKER_WORK or, inside `marker_budget()` (one per
freshness check), past what is left of MAX_MARKER_RUN_WORK. A refused comparison falls
back to the normalized marker text, which errs one way only: it calls markers equal only
when their normalized text is equal, and such markers are equivalent, so it never hides a
change uv would see; it can call two equivalent markers different (uv rewrote one), which
gives a `lock-stale` uv would not report. The freshness rule says so in such findings.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from packaging.markers import InvalidMarker, Marker, UndefinedComparison
from packaging.version import InvalidVersion, Version

from depsync.core import limits

_VARIABLES = (
    "python_full_version",
    "python_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
)
_VAR = "|".join(_VARIABLES)
_LITERAL = r"""'[^']*'|"[^"]*\""""
_OP = r"===|==|!=|<=|>=|~=|<|>|not\s+in|in"
_TERM = re.compile(rf"(?P<var>{_VAR})\s*(?:{_OP})\s*(?P<lit>{_LITERAL})|(?P<lit2>{_LITERAL})\s*(?:{_OP})\s*(?P<var2>{_VAR})")
_PYTHON = {"python_full_version", "python_version"}
# Work units (limits.py) of one Marker.evaluate, measured with packaging 26 on the 2-core VM:
# ~2 us fixed, ~1 us per string comparison, ~7 us per version comparison.
_EVALUATION_WORK, _STRING_TERM_WORK, _VERSION_TERM_WORK = 2, 1, 8
_VERSIONISH = re.compile(r"\s*v?\d")


def parse_marker(text: str | None) -> Marker | None:
    """A Marker, or None for an empty/absent one; InvalidMarker propagates."""
    if text is None or not text.strip():
        return None
    return Marker(text)


def _python_candidates(literals: set[str]) -> set[str]:
    values = {"3.12.0"}
    for literal in literals:
        try:
            release = list(Version(literal.rstrip(".*")).release)
        except InvalidVersion:
            continue
        while len(release) < 3:
            release.append(0)
        major, minor, micro = release[:3]
        for m, n, p in (
            (major, minor, micro),
            (major, minor, micro + 1),
            (major, minor, max(micro - 1, 0)),
            (major, minor, 0),
            (major, minor + 1, 0),
            (major, max(minor - 1, 0), 99),
            (major + 1, 0, 0),
            (max(major - 1, 0), 99, 99),
        ):
            values.add(f"{m}.{n}.{p}")
    return values


# uv's marker algebra knows these pairs name the same platform (it rewrites
# `platform_system == 'Windows'` to `sys_platform == 'win32'`), so environments where
# they disagree are never generated.
_PLATFORMS = (("win32", "Windows"), ("darwin", "Darwin"), ("linux", "Linux"))


def _platform_pairs(sys_values: set[str], system_values: set[str]) -> set[str]:
    known_sys = {a for a, _ in _PLATFORMS}
    known_system = {b for _, b in _PLATFORMS}
    pairs = {f"{a}\0{b}" for a, b in _PLATFORMS} | {"zz-other\0zz-other"}  # some other platform
    pairs |= {f"{v}\0zz-other" for v in sys_values - known_sys}
    pairs |= {f"zz-other\0{v}" for v in system_values - known_system}
    return pairs


@dataclass(frozen=True)
class _MarkerValues:
    """What one marker text contributes to the environments: candidate values per key, and its size."""

    candidates: Mapping[str, frozenset[str]]
    work: int  # what one evaluation of the marker costs, in limits.py units (~1 us)

    @functools.cached_property
    def sizes(self) -> dict[str, int]:
        return {key: len(values) for key, values in self.candidates.items()}

    @functools.cached_property
    def alone(self) -> int:
        """A lower bound of the cost of any comparison with this marker on one side."""
        return math.prod(self.sizes.values()) * self.work


@functools.lru_cache(maxsize=8192)
def _marker_values(text: str) -> _MarkerValues:
    """Candidates of one marker. Each candidate rule is a union over literals, so the
    candidates of several markers are the union of theirs (computed once per text)."""
    literals: dict[str, set[str]] = {}
    work = _EVALUATION_WORK
    for match in _TERM.finditer(text):
        var = match.group("var") or match.group("var2")
        literal = (match.group("lit") or match.group("lit2"))[1:-1]
        # packaging compares as versions when the literal reads as one: ~8x a string compare
        work += _VERSION_TERM_WORK if var in _PYTHON or _VERSIONISH.match(literal) else _STRING_TERM_WORK
        key = "python" if var in _PYTHON else var
        bucket = literals.setdefault(key, set())
        bucket.add(literal)
        bucket.update(literal.split())
    candidates: dict[str, frozenset[str]] = {}
    platform = {k: literals.pop(k) for k in ("sys_platform", "platform_system") if k in literals}
    if platform:
        candidates["platform"] = frozenset(_platform_pairs(platform.get("sys_platform", set()), platform.get("platform_system", set())))
    for key, values in literals.items():
        if key == "python":
            candidates[key] = frozenset(_python_candidates(values))
        else:
            candidates[key] = frozenset(values | {"zz-other", ""})
    return _MarkerValues(candidates, work)


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> Marker:
    return Marker(text)


@functools.lru_cache(maxsize=8192)
def _normalized(text: str) -> str:
    """The marker as packaging prints it: spacing and quotes normalized (the text fallback)."""
    return str(_parsed(text))


@dataclass(frozen=True)
class _Space:
    """The environments one comparison enumerates and what that costs at most (limits.py units)."""

    pythons: tuple[str, ...]
    keys: tuple[str, ...]  # the other variable keys
    values: tuple[tuple[str, ...], ...]
    cost: int


def _python_env(version: str) -> dict[str, str]:
    return {"python_full_version": version, "python_version": ".".join(version.split(".")[:2])}


def _environment_space(left: str, right: str, python: str, allowance: int) -> _Space | None:
    """The environments that can tell left from right (requires-python `python` is applied
    while enumerating), or None when enumerating them could cost more than allowance.

    The cost is an upper bound (environments outside requires-python are skipped, not
    free of charge). A cheap lower bound comes first (a union is at least as large as its
    largest part), so a hostile pair is refused before any candidate set is built.
    """
    parts = [_marker_values(text) for text in (left, right, _python_scope(python))]
    if parts[0].alone > allowance or parts[1].alone > allowance:
        return None  # the cheapest refusal: a hostile input makes many of these
    scope_cost = parts[2].work if python else 0  # evaluated once per Python version
    per_environment = parts[0].work + parts[1].work

    def cost(sizes: dict[str, int]) -> int:
        return sizes.get("python", 0) * scope_cost + math.prod(sizes.values()) * per_environment

    largest: dict[str, int] = {}  # this runs for every refused pair: plain loops, no sets
    for part in parts:
        for key, size in part.sizes.items():
            if size > largest.get(key, 0):
                largest[key] = size
    if cost(largest) > allowance:
        return None
    keys = sorted(largest)  # "python" is always there: the scope names it
    merged = {k: frozenset().union(*(p.candidates.get(k, frozenset()) for p in parts)) for k in keys}
    total = cost({k: len(v) for k, v in merged.items()})
    if total > allowance:
        return None
    others = tuple(k for k in keys if k != "python")
    return _Space(tuple(sorted(merged["python"])), others, tuple(tuple(sorted(merged[k])) for k in others), total)


def _enumerate(a: Marker, b: Marker, space: _Space, scope: Marker | None) -> bool:
    """Whether a and b agree on every environment of space inside scope (None: all)."""
    base = {var: "" for var in _VARIABLES} | {
        "python_full_version": "3.12.0",
        "python_version": "3.12",
        "implementation_version": "3.12.0",
        "platform_release": "",
    }
    for python in space.pythons:  # outermost: requires-python depends on it alone
        with_python = base | _python_env(python)
        if scope is not None and not scope.evaluate(with_python):
            continue
        for combo in itertools.product(*space.values):
            env = dict(with_python)
            for key, value in zip(space.keys, combo):
                if key == "platform":
                    env["sys_platform"], env["platform_system"] = value.split("\0")
                else:
                    env[key] = value
            if a.evaluate(env) != b.evaluate(env):
                return False
    return True


@dataclass
class MarkerBudget:
    """Marker work one run may still spend (limits.MAX_MARKER_RUN_WORK) and what fell back."""

    remaining: int
    # comparisons already paid for in this run: asking again is free, so a run's verdicts
    # depend on its own comparisons only, never on what the result cache holds
    paid: set[tuple[str, str, str]] = field(default_factory=set)
    fallbacks: int = 0  # comparisons the text fallback answered "different"


_BUDGET: ContextVar[MarkerBudget | None] = ContextVar("depsync_marker_budget", default=None)


@contextmanager
def marker_budget(work: int | None = None) -> Iterator[MarkerBudget]:
    """Bound the marker comparisons made inside the block together (one freshness check);
    work defaults to limits.MAX_MARKER_RUN_WORK."""
    budget = MarkerBudget(limits.MAX_MARKER_RUN_WORK if work is None else work)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def text_fallbacks() -> int:
    """How many comparisons of the current marker_budget() fell back to text and said "different"."""
    budget = _BUDGET.get()
    return budget.fallbacks if budget is not None else 0


# exact verdicts only (never a fallback's), so a cached answer is the same in every run
_RESULTS: dict[tuple[str, str, str], bool] = {}
_RESULTS_SIZE = 8192


def _equivalent(left: str, right: str, python: str = "") -> bool:
    """Equivalence on environments whose Python satisfies the specifier `python` ("" = any).

    Bounded: the comparison is costed first and, past MAX_MARKER_WORK or the run's
    marker_budget(), answered from the normalized text instead. That fallback says "equal"
    only for markers whose normalized text is equal (checked first, for free), which are
    equivalent: it never produces a false alarm on markers textually equal after
    normalization, and never hides a difference. It errs the other way: two equivalent
    markers written differently (uv rewrites `python_version` as `python_full_version`)
    come out different, so a refused comparison can give a `lock-stale` that
    `uv lock --check` would not (counted in text_fallbacks(), for the message).
    """
    if _normalized(left) == _normalized(right):
        return True
    key = (left, right, python)
    budget = _BUDGET.get()
    paid = budget is not None and key in budget.paid
    allowance = limits.MAX_MARKER_WORK
    if budget is not None and not paid:
        allowance = min(allowance, budget.remaining)
    space = _environment_space(left, right, python, allowance)
    if space is None:  # the text fallback; the texts differ (checked above)
        if budget is not None:
            budget.fallbacks += 1
        return False
    if budget is not None and not paid:
        budget.remaining -= space.cost
        budget.paid.add(key)
    result = _RESULTS.get(key)
    if result is None:
        scope = _parsed(_python_scope(python)) if python else None
        try:
            result = _enumerate(_parsed(left), _parsed(right), space, scope)
        except (UndefinedComparison, InvalidVersion, TypeError):
            # uv accepts comparisons packaging cannot evaluate (`sys_platform ~= 'linux'`):
            # the text fallback, like a refused comparison, rather than exit 2
            if budget is not None:
                budget.fallbacks += 1
            return False
        if len(_RESULTS) >= _RESULTS_SIZE:
            _RESULTS.clear()
        _RESULTS[key] = result
    return result


@functools.lru_cache(maxsize=256)
def _python_scope(spec: str) -> str:
    """A requires-python specifier as a marker (`>=3.10` -> `python_full_version >= '3.10'`)."""
    from packaging.specifiers import SpecifierSet

    parts = [f"python_full_version {s.operator} '{s.version}'" for s in SpecifierSet(spec)] if spec else []
    return " and ".join(parts) or "python_full_version >= '0'"


def markers_equivalent(left: str | Marker | None, right: str | Marker | None, requires_python: str = "") -> bool:
    """True when both markers select the same environments (None = always).

    Like uv, only environments inside requires_python count: under `>=3.10`,
    `python_version >= '3.10'` is the same as no marker.
    """
    left_text, right_text = (str(m) if m is not None else "" for m in (left, right))
    if left_text == right_text:
        return True  # the common case: uv wrote what pyproject implies, verbatim
    always = "python_full_version >= '0'"
    try:
        return _equivalent(left_text or always, right_text or always, requires_python)
    except InvalidMarker as exc:
        raise ValueError(f"invalid marker: {exc}") from None


def is_never(text: str) -> bool:
    """True when no environment satisfies the marker (`sys_platform != 'win32' and sys_platform == 'win32'`).

    Past the caps it answers False (the text fallback): the source entry is kept, which
    can only add a requirement the lock lacks, i.e. over-report, never hide one.
    """
    return _equivalent(text, "python_full_version < '0'")


def specifiers_equivalent(left: str, right: str) -> bool:
    """Whether two Python version specifiers (requires-python) admit the same versions."""
    return _equivalent(_python_scope(left), _python_scope(right))


def conjoin(*markers: str | Marker | None) -> str | None:
    """`a and b and ...` as text, skipping absent markers; `or` terms are parenthesized."""
    parts = [str(m) for m in markers if m is not None and str(m)]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return " and ".join(f"({p})" if " or " in p else p for p in parts)


_NEGATED_OPS = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not in", "not in": "in"}


def _quote(value: str) -> str:
    return f'"{value}"' if "'" in value else f"'{value}'"


def _negate_atom(atom: tuple) -> str | None:
    left, op, right = atom
    operator = op.value
    lhs = left.value if type(left).__name__ == "Variable" else _quote(left.value)
    rhs = right.value if type(right).__name__ == "Variable" else _quote(right.value)
    if operator == "~=" and type(right).__name__ == "Value":
        # `~= X.Y.Z` is `>= X.Y.Z and == X.Y.*`: its negation is `< X.Y.Z or != X.Y.*`
        release = right.value.split(".")
        if len(release) < 2:
            return None
        prefix = ".".join(release[:-1]) + ".*"
        return f"({lhs} < {rhs} or {lhs} != {_quote(prefix)})"
    negated = _NEGATED_OPS.get(operator)
    return None if negated is None else f"{lhs} {negated} {rhs}"


def _negate_tree(markers: list) -> str | None:
    """De Morgan over packaging's parsed marker list: atoms negated, `and`/`or` swapped."""
    parts: list[str] = []
    for item in markers:
        if isinstance(item, str):
            parts.append("or" if item == "and" else "and")
            continue
        negated = _negate_tree(item) if isinstance(item, list) else _negate_atom(item)
        if negated is None:
            return None
        parts.append(f"({negated})")
    return " ".join(parts)


def negate(text: str | Marker | None) -> str | None:
    """`not marker` as PEP 508 text (which has no `not`), None when a term cannot be negated
    (`===`): the caller then keeps what it has. An absent marker (always) negates to never."""
    if text is None or not str(text).strip():
        return "python_full_version < '0'"
    marker = text if isinstance(text, Marker) else Marker(str(text))
    negated = _negate_tree(marker._markers)  # packaging's parse tree (stable since packaging 22)
    return None if negated is None else str(Marker(negated))


__all__ = [
    "InvalidMarker",
    "MarkerBudget",
    "conjoin",
    "is_never",
    "marker_budget",
    "markers_equivalent",
    "negate",
    "parse_marker",
    "specifiers_equivalent",
    "text_fallbacks",
]
