"""Semantic equality of PEP 508 markers.

uv rewrites markers when it records them (`python_version >= '3.12'` becomes
`python_full_version >= '3.12'`, terms are reordered and simplified), so markers are
compared by evaluating both on every environment that can tell them apart: each
variable takes the values named in either marker, values just beside them, and
"something else". Two markers agree on all of those exactly when they are equivalent.
"""

from __future__ import annotations

import functools
import itertools
import re

from packaging.markers import InvalidMarker, Marker
from packaging.version import InvalidVersion, Version

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
_MAX_ENVIRONMENTS = 50_000


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


def _candidates(markers: tuple[str, ...]) -> dict[str, set[str]]:
    literals: dict[str, set[str]] = {}
    for text in markers:
        for match in _TERM.finditer(text):
            var = match.group("var") or match.group("var2")
            literal = (match.group("lit") or match.group("lit2"))[1:-1]
            key = "python" if var in _PYTHON else var
            bucket = literals.setdefault(key, set())
            bucket.add(literal)
            bucket.update(literal.split())
    candidates: dict[str, set[str]] = {}
    platform = {k: literals.pop(k) for k in ("sys_platform", "platform_system") if k in literals}
    if platform:
        candidates["platform"] = _platform_pairs(platform.get("sys_platform", set()), platform.get("platform_system", set()))
    for key, values in literals.items():
        if key == "python":
            candidates[key] = _python_candidates(values)
        else:
            candidates[key] = values | {"zz-other", ""}
    return candidates


@functools.lru_cache(maxsize=4096)
def _equivalent(left: str, right: str, python: str = "") -> bool:
    """Equivalence on environments whose Python satisfies the specifier `python` ("" = any)."""
    a, b = Marker(left), Marker(right)
    scope = _python_scope(python)
    scope_marker = Marker(scope) if python else None
    candidates = _candidates((left, right, scope))
    keys = sorted(candidates)
    total = 1
    for key in keys:
        total *= len(candidates[key])
    if total > _MAX_ENVIRONMENTS:  # too many to enumerate: fall back to text
        return str(a) == str(b)
    base = {var: "" for var in _VARIABLES} | {
        "python_full_version": "3.12.0",
        "python_version": "3.12",
        "implementation_version": "3.12.0",
        "platform_release": "",
    }
    for combo in itertools.product(*(sorted(candidates[k]) for k in keys)):
        env = dict(base)
        for key, value in zip(keys, combo):
            if key == "python":
                env["python_full_version"] = value
                env["python_version"] = ".".join(value.split(".")[:2])
            elif key == "platform":
                env["sys_platform"], env["platform_system"] = value.split("\0")
            else:
                env[key] = value
        if scope_marker is not None and not scope_marker.evaluate(env):
            continue
        if a.evaluate(env) != b.evaluate(env):
            return False
    return True


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


@functools.lru_cache(maxsize=1024)
def is_never(text: str) -> bool:
    """True when no environment satisfies the marker (`sys_platform != 'win32' and sys_platform == 'win32'`)."""
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


__all__ = ["InvalidMarker", "conjoin", "is_never", "markers_equivalent", "parse_marker", "specifiers_equivalent"]
