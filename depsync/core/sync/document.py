"""Three-way merge of everything in a pyproject that the dependency surface does not decide (pure).

The surface (requirements, sources, indexes, conflicts, metadata, requires-python) is decided
on evidence by depsync.core.sync.surface and .sources; `[tool.depsync]` is the owner's and
never merged. Every other key, at any depth, follows git's rule against the merge-base: one
side changed it -> that side's value; both the same way -> taken; both differently -> a
conflict (the conflict side's value kept, flagged). `[project.scripts]`, `[tool.uv.workspace]`,
`exclude-newer`, build settings and `[tool.ruff]` are such keys: resolver and build settings
are never "needed by the code", so no import evidence applies to them.

Tables merge per key. Arrays merge per element when all three sides have one (strings by
value, tables by their `name`): dev's order, main's additions placed after the element they
follow on main. Any other value (a scalar, an array on only some sides) is one leaf.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from depsync.core.model.requirements import uv_requirement
from depsync.core.names import canonicalize_name
from depsync.core.sync.sources import case_of_values
from depsync.core.sync.surface import REQUIREMENT_LISTS
from depsync.records import record

Path = tuple[str, ...]

# decided elsewhere: the dependency surface (surface.py), the sources (sources.py), the owner's config
SURFACE_PATHS: frozenset[Path] = frozenset(
    {
        ("project", "dependencies"),
        ("project", "optional-dependencies"),
        ("project", "requires-python"),
        ("dependency-groups",),
        ("tool", "uv", "sources"),
        ("tool", "uv", "index"),
        ("tool", "uv", "conflicts"),
        ("tool", "uv", "dependency-metadata"),
        ("tool", "uv", "dev-dependencies"),
        ("tool", "uv", "override-dependencies"),
        ("tool", "uv", "constraint-dependencies"),
        ("tool", "uv", "required-version"),
        ("tool", "depsync"),
    }
)


# settings that name packages: an entry follows its package's requirement decision (coupled),
# so main's build setting for a package whose requirement was not taken stays out with it
PACKAGE_LISTS: frozenset[Path] = frozenset(
    ("tool", "uv", key) for key in ("no-build-isolation-package", "no-build-package", "no-binary-package", "reinstall-package", "upgrade-package")
)
PACKAGE_TABLES: frozenset[Path] = frozenset(("tool", "uv", key) for key in ("extra-build-dependencies", "extra-build-variables", "exclude-newer-package"))


@record
class Coupling:
    """The surface's requirement decisions, for the settings that name packages (canonical names)."""

    kept: frozenset[str] = frozenset()  # packages the merged requirement tables ask for
    main: frozenset[str] = frozenset()  # packages main's requirement tables ask for

    def declined(self, name: str) -> bool:
        """main asks for the package and the merge did not take that: main's setting for it follows."""
        return name in self.main and name not in self.kept

    def dropped_by_main(self, name: str) -> bool:
        """main no longer asks for the package, the merge still does: dev's setting for it stays."""
        return name in self.kept and name not in self.main


def dotted(path: Sequence[str]) -> str:
    """A key path as TOML writes it: bare keys plain, others quoted."""
    return ".".join(k if k and all(c.isalnum() or c in "-_" for c in k) else json.dumps(k) for k in path)


def comparable(value: Any) -> Any:
    """A value with TOML's own types only (tomlkit items unwrapped, tables as sorted pairs)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), comparable(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(comparable(v) for v in value)
    return value


@record
class KeyDecision:
    """One key path of the rest of the file that dev and main do not both leave as the merge-base had it."""

    path: Path
    case: str  # the three-way case (sources.case_of_values); "merged" when both edited different elements of one array
    base: Any  # plain values; None: absent on that side
    dev: Any
    main: Any
    result: Any
    taken_from: str  # "dev", "main", "merged" (elements of both) or "none" (absent)
    reason: str
    needs_review: bool = False

    @property
    def key(self) -> str:
        return dotted(self.path)

    @property
    def table(self) -> str:
        return dotted(self.path[:-1]) if len(self.path) > 1 else "(top level)"

    @property
    def main_changed(self) -> bool:
        return comparable(self.main) != comparable(self.base)

    @property
    def differs(self) -> bool:
        return comparable(self.dev) != comparable(self.main)

    @property
    def changes_dev(self) -> bool:
        return comparable(self.result) != comparable(self.dev)

    @property
    def main_not_taken(self) -> bool:
        return self.main_changed and comparable(self.result) != comparable(self.main)


def under(path: Path, root: Path) -> bool:
    """path is root or inside it."""
    return path[: len(root)] == root


def is_requirement_list(path: Path) -> bool:
    """An array of requirement strings (a workspace member's dependency tables merge here): the
    surface's requirement tables, and build-constraint-dependencies."""
    return (
        path == ("project", "dependencies")
        or (len(path) == 3 and path[:2] == ("project", "optional-dependencies"))
        or (len(path) == 2 and path[0] == "dependency-groups")
        or ".".join(path) in (*REQUIREMENT_LISTS, "tool.uv.build-constraint-dependencies")
    )


def _element_key(item: Any, requirements: bool = False) -> Any:
    """An array element's identity: a table by its name (an index, a metadata entry), a
    requirement by its package and marker (in a requirement list), anything else by value."""
    if isinstance(item, Mapping) and isinstance(item.get("name"), str):
        return ("name", item["name"])
    if requirements and isinstance(item, str):
        requirement = uv_requirement(item)  # as uv reads it (packaging rejects some that uv accepts)
        if requirement is None:
            return ("value", comparable(item))
        return ("requirement", canonicalize_name(requirement.name), str(requirement.marker or ""))
    return ("value", comparable(item))


def _keyed(items: Sequence[Any], requirements: bool = False) -> dict[Any, Any] | None:
    """Elements by identity; None when two elements share one (then the array is one leaf)."""
    out: dict[Any, Any] = {}
    for item in items:
        key = _element_key(item, requirements)
        if key in out:
            return None
        out[key] = item
    return out


def _merge_array(path: Path, base: list[Any], dev: list[Any], main: list[Any], conflict_side: str) -> KeyDecision | None:
    requirements = is_requirement_list(path)
    b, d, m = _keyed(base, requirements), _keyed(dev, requirements), _keyed(main, requirements)
    if b is None or d is None or m is None:
        return _leaf(path, base, dev, main, conflict_side)
    if comparable(dev) == comparable(main) or comparable(main) == comparable(base):
        return _leaf(path, base, dev, main, conflict_side)
    if comparable(dev) == comparable(base):
        return _leaf(path, base, dev, main, conflict_side)  # only main changed: main's array, in main's order
    result: list[Any] = []
    conflicts = []
    for key, item in d.items():
        case = case_of_values(comparable(b.get(key)), comparable(item), comparable(m.get(key)))
        if case in ("main-removed",):
            continue
        if case == "main-changed":
            result.append(m[key])
        elif case == "conflict":
            conflicts.append(key)
            result.append(m[key] if conflict_side == "main" and key in m else item)
        else:
            result.append(item)
    main_keys = list(m)
    for index, key in enumerate(main_keys):
        if key in d or key in b:
            continue  # kept above, or dev removed it (stays removed)
        before = next((k for k in reversed(main_keys[:index]) if any(_element_key(x, requirements) == k for x in result)), None)
        # after the element it follows on main; first when none of those is kept
        at = next((i + 1 for i, x in enumerate(result) if _element_key(x, requirements) == before), 0) if before is not None else 0
        result.insert(at, m[key])
    review = bool(conflicts)
    reason = "both changed different elements since the merge-base: both sides' changes merged"
    if conflicts:
        side = "main's" if conflict_side == "main" else "dev's"
        reason = f"both changed it; {len(conflicts)} element(s) changed differently on both sides: {side} kept for those, the rest merged"
    return KeyDecision(path, "merged" if not conflicts else "conflict", base, dev, main, result, "merged", reason, review)


_REASONS = {
    "main-added": "main added it, dev did not have it: taken (three-way)",
    "main-changed": "main changed it, dev did not: main's taken (three-way)",
    "main-removed": "main removed it, dev did not change it: removed (three-way)",
    "dev-added": "dev added it: kept",
    "dev-changed": "dev changed it, main did not: dev's kept",
    "dev-removed": "dev removed it, main did not change it: stays removed",
    "same-change": "the same change on both sides",
}


def _leaf(path: Path, base: Any, dev: Any, main: Any, conflict_side: str) -> KeyDecision | None:
    case = case_of_values(comparable(base), comparable(dev), comparable(main))
    if case == "unchanged":
        return None
    if case.startswith("main-"):
        return KeyDecision(path, case, base, dev, main, main, "main" if main is not None else "none", _REASONS[case])
    if case == "conflict":
        if conflict_side == "main":
            return KeyDecision(path, case, base, dev, main, main, "main" if main is not None else "none", "both changed it since the merge-base, differently: conflict-policy main, main's taken", True)
        return KeyDecision(path, case, base, dev, main, dev, "dev" if dev is not None else "none", "both changed it since the merge-base, differently: dev's kept", True)
    return KeyDecision(path, case, base, dev, main, dev, "dev" if dev is not None else "none", _REASONS[case])


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping)


def _package(item: Any) -> str | None:
    return canonicalize_name(item) if isinstance(item, str) else None


def _coupled_list(decision: KeyDecision, coupling: Coupling) -> KeyDecision:
    """A package list with main's additions for declined packages left out and dev's entries for
    packages main dropped (and the merge keeps) left in."""
    if not isinstance(decision.result, list) or not isinstance(decision.dev, list):
        return decision
    base = {_package(x) for x in decision.base or []}
    main = {_package(x) for x in decision.main or []}
    dev = {_package(x) for x in decision.dev}
    result = [x for x in decision.result if not (_package(x) not in base and _package(x) not in dev and coupling.declined(_package(x) or ""))]
    out_names = [str(x) for x in decision.result if x not in result]
    kept_names = []
    for item in decision.dev:
        name = _package(item)
        if name in base and name not in main and coupling.dropped_by_main(name or "") and item not in result:
            result.append(item)
            kept_names.append(str(item))
    if not out_names and not kept_names:
        return decision
    notes = []
    if out_names:
        notes.append(f"main's {', '.join(out_names)} left out with its requirement, which was not taken")
    if kept_names:
        notes.append(f"dev's {', '.join(kept_names)} kept: main dropped the requirement, the merge keeps it")
    taken = "dev" if comparable(result) == comparable(decision.dev) else "merged"
    rest = "; the rest of main's change taken" if taken == "merged" else ""
    return KeyDecision(decision.path, decision.case, decision.base, decision.dev, decision.main, result, taken, f"settings that name a package follow its requirement: {'; '.join(notes)}{rest}", decision.needs_review)


def _coupled_key(decision: KeyDecision, coupling: Coupling) -> KeyDecision:
    """A per-package setting (a key of a package table) follows the package's requirement."""
    name = canonicalize_name(decision.path[-1])
    if decision.case == "main-added" and coupling.declined(name):
        why = f"main added it for {name}, whose requirement main added and the merge did not take: left out with it"
        return KeyDecision(decision.path, decision.case, decision.base, decision.dev, decision.main, None, "none", why)
    if decision.case == "main-removed" and coupling.dropped_by_main(name):
        why = f"main removed it with its requirement for {name}; the merge still asks for {name}: dev's kept"
        return KeyDecision(decision.path, decision.case, decision.base, decision.dev, decision.main, decision.dev, "dev", why)
    return decision


def couple(decisions: Sequence[KeyDecision], coupling: Coupling) -> list[KeyDecision]:
    """The decisions with the settings that name packages following the requirement decisions."""
    out = []
    for decision in decisions:
        if decision.path in PACKAGE_LISTS:
            decision = _coupled_list(decision, coupling)
        elif decision.path[:-1] in PACKAGE_TABLES:
            decision = _coupled_key(decision, coupling)
        out.append(decision)
    return out


def merge_document(
    base: Mapping[str, Any], dev: Mapping[str, Any], main: Mapping[str, Any], conflict_side: str = "dev", skip: frozenset[Path] = SURFACE_PATHS
) -> list[KeyDecision]:
    """One decision per key path outside `skip` that is not the same on all three sides, in dev's
    order, then main's additions. Parsed documents in (tomllib's or tomlkit's)."""
    decisions: list[KeyDecision] = []

    def walk(path: Path, b: Any, d: Any, m: Any) -> None:
        if path in skip:
            return
        present = [v for v in (b, d, m) if v is not None]
        if path == () or (present and all(_is_table(v) for v in present)):
            tb, td, tm = (v if _is_table(v) else {} for v in (b, d, m))
            keys = list(td) + [k for k in tm if k not in td] + [k for k in tb if k not in td and k not in tm]
            for key in keys:
                walk((*path, str(key)), tb.get(key), td.get(key), tm.get(key))
            return
        if all(isinstance(v, list) for v in (b, d, m)):
            found = _merge_array(path, list(b), list(d), list(m), conflict_side)
        else:
            found = _leaf(path, b, d, m, conflict_side)
        if found is not None:
            decisions.append(found)

    walk((), base, dev, main)
    # an extra or group with no entries is invisible to the per-entry surface: its existence is
    # a key of its own here (main's new empty extra `ucast = []`, named by its `all` extra)
    for table in EMPTY_TABLES:
        if table not in skip:
            continue
        b, d, m = (value_at(side, table) for side in (base, dev, main))
        names = [k for k in (m or {}) if k not in (d or {})] + [k for k in (d or {}) if k not in (m or {})]
        for name in names:
            values = [(x or {}).get(name) if isinstance(x, Mapping) else None for x in (b, d, m)]
            if all(v is None or v == [] for v in values):
                found = _leaf((*table, str(name)), *values, conflict_side)
                if found is not None:
                    decisions.append(found)
    return decisions


EMPTY_TABLES: tuple[Path, ...] = (("project", "optional-dependencies"), ("dependency-groups",))


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def value_at(data: Mapping[str, Any], path: Path) -> Any:
    """The value at a key path (None: absent)."""
    node: Any = data
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def applied(dev: Mapping[str, Any], decisions: Sequence[KeyDecision]) -> dict[str, Any]:
    """dev's parsed document with the decisions' results in place (plain data: what the guard expects)."""
    out: dict[str, Any] = copy.deepcopy(_plain(dev))  # TOML's own types kept (a datetime stays one)
    for decision in decisions:
        if not decision.changes_dev:
            continue
        node = out
        for key in decision.path[:-1]:
            node = node.setdefault(key, {})
        if decision.result is None:
            node.pop(decision.path[-1], None)
        else:
            node[decision.path[-1]] = copy.deepcopy(_plain(decision.result))
    return out


def unsanctioned_keys(ours: Mapping[str, Any], decisions: Sequence[KeyDecision], dev: Mapping[str, Any], skip: frozenset[Path] = SURFACE_PATHS) -> list[str]:
    """Key paths of a pushed pyproject (the guard) outside the surface whose value no three-way
    merge gives: not the merged value, and for a conflict neither dev's nor main's."""
    expected = applied(dev, decisions)
    conflicts = {d.path: d for d in decisions if d.needs_review}
    wrong: list[str] = []

    def walk(path: Path, o: Any, e: Any) -> None:
        if path in skip:
            return
        if path in conflicts and comparable(o) in (comparable(conflicts[path].dev), comparable(conflicts[path].main)):
            return
        if (path == () or _is_table(o)) and _is_table(e):
            for key in list(o) + [k for k in e if k not in o]:
                walk((*path, str(key)), o.get(key), e.get(key))
            return
        if comparable(_plain(o)) != comparable(e):
            wrong.append(dotted(path))

    walk((), _plain(ours), expected)
    return wrong
