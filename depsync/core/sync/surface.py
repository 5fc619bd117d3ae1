"""Three-way merge of pyproject's dependency surface beyond [tool.uv.sources], per entry (pure).

An entry is one package within one table (`project.optional-dependencies.mlm`, `gigatoken`),
or one setting (`project.requires-python`), one index (by name), one conflict set, one
dependency-metadata entry (by package). Values are compared parsed: `A>=1,<2` is `A<2,>=1`,
marker spelling and extras order do not matter, a comment or reformatting is no change.

The machinery is the sources' one (depsync/sources.py): each entry gets a case (who changed
what since the merge-base), then the first row of `RULES` for the case whose condition holds
on the evidence decides the result, whether a reviewer must look, the reason and the evidence
lines. The evidence (does the merged code import the package, did dev's history choose the
entry, does the table exist on dev) is gathered by the shell (depsync/surface_evidence.py).

Who owns the surface is a setting: `default-side = "dev"` (dev owns its triple: main's change
is taken when the evidence shows the merged code needs it and dev's history did not choose the
entry, flagged otherwise) or `"main"` (a branch following main: main's changes are taken, the
branch's own kept, both-changed is a conflict).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from packaging.specifiers import InvalidSpecifier

from depsync.core.findings import Finding
from depsync.core.model.requirements import specifier_key, uv_requirement
from depsync.core.names import canonicalize_name
from depsync.core.sync.sources import Ownership, Policy, Rule, case_of_values, normalize
from depsync.records import field, record, replace

SIDES = ("dev", "main")
REQUIREMENT_LISTS = ("tool.uv.dev-dependencies", "tool.uv.override-dependencies", "tool.uv.constraint-dependencies")
RESOLVER_LISTS = ("tool.uv.override-dependencies", "tool.uv.constraint-dependencies")
SETTINGS = ("project.requires-python", "tool.uv.required-version")
ENTRY_TABLES = ("tool.uv.index", "tool.uv.conflicts", "tool.uv.dependency-metadata")
EntryKey = tuple[str, str]  # (table, entry name)


# -- reading the surface ----------------------------------------------------------------------


@record
class Entry:
    """One entry of one side: its comparable value and what the side wrote (for display and copying)."""

    table: str
    name: str  # canonical package name, setting name, index name, or conflict-set key
    value: Any  # comparable (normalized)
    raw: tuple[Any, ...]  # the items as written: requirement strings, tables, or the setting's value

    def text(self) -> str:
        return ", ".join(_show(item) for item in self.raw)


def _show(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return "{ " + ", ".join(f"{k} = {_show(v) if not isinstance(v, str) else repr(v)}" for k, v in item.items()) + " }"
    if isinstance(item, list):
        return "[" + ", ".join(_show(v) for v in item) + "]"
    return str(item)


@lru_cache(maxsize=8192)
def requirement_key(text: str) -> tuple[str, Any]:
    """(canonical name, comparable value) of a requirement string; an unparsable one keeps its text.
    Cached: history walks see the same strings in every version of the file."""
    req = uv_requirement(text)  # as uv reads it: `pkg @ URL; marker` without a space too
    spec = None
    if req is not None:
        try:
            spec = tuple(sorted(specifier_key(str(req.specifier))))
        except InvalidSpecifier:
            pass
    if req is None or spec is None:
        squashed = " ".join(text.split())
        return f"?{squashed}", ("unparsed", squashed)
    extras = tuple(sorted(canonicalize_name(e) for e in req.extras))
    return canonicalize_name(req.name), (extras, spec, str(req.marker) if req.marker else "", req.url or "")


def _group_item_key(item: Any) -> tuple[str, Any]:
    if isinstance(item, Mapping) and isinstance(item.get("include-group"), str):
        group = canonicalize_name(item["include-group"])
        return f"include-group:{group}", ("include-group", group)
    return requirement_key(str(item))


def requirement_tables(data: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Every requirement list of a parsed pyproject by table id (extra and group names canonical)."""
    project = data.get("project", {}) if isinstance(data.get("project"), Mapping) else {}
    tool = data.get("tool", {}) if isinstance(data.get("tool"), Mapping) else {}
    uv = tool.get("uv", {}) if isinstance(tool.get("uv"), Mapping) else {}
    tables: dict[str, list[Any]] = {}
    if isinstance(project.get("dependencies"), list):
        tables["project.dependencies"] = project["dependencies"]
    extras = project.get("optional-dependencies", {})
    for extra, items in extras.items() if isinstance(extras, Mapping) else ():
        if isinstance(items, list):
            tables[f"project.optional-dependencies.{canonicalize_name(str(extra))}"] = items
    groups = data.get("dependency-groups", {})
    for group, items in groups.items() if isinstance(groups, Mapping) else ():
        if isinstance(items, list):
            tables[f"dependency-groups.{canonicalize_name(str(group))}"] = items
    for table in REQUIREMENT_LISTS:
        value = uv.get(table.rsplit(".", 1)[1])
        if isinstance(value, list):
            tables[table] = value
    return tables


def _conflict_key(item: Any) -> str:
    """A conflict set by its members (`extra=dev | extra=lts`): order and name spelling ignored."""
    parts = item if isinstance(item, list) else [item]
    keys = sorted(",".join(f"{k}={canonicalize_name(str(v))}" for k, v in sorted(p.items())) if isinstance(p, Mapping) else str(p) for p in parts)
    return " | ".join(keys)


def conflict_names(conflict: Any) -> tuple[list[tuple[str, str]], bool]:
    """(`extra 'cpu'`, `project.optional-dependencies.cpu`) for each extra and group of this
    project a conflict set names, and whether it names another member's (a `package` item,
    which that member's pyproject decides)."""
    named: list[tuple[str, str]] = []
    other = False
    for item in conflict if isinstance(conflict, list) else []:
        if not isinstance(item, Mapping) or "package" in item:
            other = True
            continue
        for kind, prefix in (("extra", "project.optional-dependencies."), ("group", "dependency-groups.")):
            value = item.get(kind)
            if isinstance(value, str):
                named.append((f"{kind} {value!r}", prefix + canonicalize_name(value)))
    return named, other


def surface_entries(data: Mapping[str, Any]) -> dict[EntryKey, Entry]:
    """Every entry of the surface of a parsed pyproject, by (table, name)."""
    entries: dict[EntryKey, Entry] = {}
    for table, items in requirement_tables(data).items():
        grouped: dict[str, list[tuple[Any, Any]]] = {}
        for item in items:
            name, value = _group_item_key(item) if table.startswith("dependency-groups.") else requirement_key(str(item))
            grouped.setdefault(name, []).append((value, item))
        for name, pairs in grouped.items():
            value = tuple(sorted((v for v, _ in pairs), key=repr))
            entries[(table, name)] = Entry(table, name, value[0] if len(value) == 1 else ("list", value), tuple(i for _, i in pairs))
    project = data.get("project", {}) if isinstance(data.get("project"), Mapping) else {}
    tool = data.get("tool", {}) if isinstance(data.get("tool"), Mapping) else {}
    uv = tool.get("uv", {}) if isinstance(tool.get("uv"), Mapping) else {}
    for table, value in (("project.requires-python", project.get("requires-python")), ("tool.uv.required-version", uv.get("required-version"))):
        if isinstance(value, str):
            try:
                comparable: Any = tuple(sorted(specifier_key(value)))
            except InvalidSpecifier:
                comparable = " ".join(value.split())
            entries[(table, table.rsplit(".", 1)[1])] = Entry(table, table.rsplit(".", 1)[1], comparable, (value,))
    for index in uv.get("index", []) if isinstance(uv.get("index"), list) else ():
        if isinstance(index, Mapping):
            name = str(index.get("name") or index.get("url", ""))
            entries[("tool.uv.index", name)] = Entry("tool.uv.index", name, normalize(dict(index)), (dict(index),))
    for conflict in uv.get("conflicts", []) if isinstance(uv.get("conflicts"), list) else ():
        key = _conflict_key(conflict)
        entries[("tool.uv.conflicts", key)] = Entry("tool.uv.conflicts", key, key, (conflict,))
    for meta in uv.get("dependency-metadata", []) if isinstance(uv.get("dependency-metadata"), list) else ():
        if isinstance(meta, Mapping) and isinstance(meta.get("name"), str):
            name = canonicalize_name(meta["name"])
            entries[("tool.uv.dependency-metadata", name)] = Entry("tool.uv.dependency-metadata", name, normalize(dict(meta)), (dict(meta),))
    return entries


def surface_of_text(text: str) -> dict[EntryKey, Any] | None:
    """Comparable values of every entry of a pyproject text (for history walks); None: does not parse."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    return {key: entry.value for key, entry in surface_entries(data).items()}


def kind_of(table: str) -> str:
    """requirement (a package a table asks for), setting, index, conflict, metadata, include."""
    if table in SETTINGS:
        return "setting"
    return {"tool.uv.index": "index", "tool.uv.conflicts": "conflict", "tool.uv.dependency-metadata": "metadata"}.get(table, "requirement")


# -- evidence ---------------------------------------------------------------------------------


@record
class Use:
    """How the merged tree's code uses a package: "import" (unguarded), "guarded" (inside a
    try/except ImportError) or "none"; where (file:line, the first few) and which module names were looked for."""

    strength: str
    where: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    scope: str = ""  # what was scanned, e.g. "1234 Python files of the work tree"
    incomplete: str = ""  # what the scan could not read, e.g. "scan stopped at 50000 files"; "" = all of it

    def text(self, name: str) -> str:
        modules = ", ".join(self.modules) or name
        missing = f"; {self.incomplete}: evidence incomplete" if self.incomplete else ""
        if self.strength == "import":
            return f"the merged code imports {modules}: {', '.join(self.where)}"
        if self.strength == "guarded":
            return f"the merged code imports {modules} only inside try/except ImportError: {', '.join(self.where)}" + (f" ({missing[2:]})" if missing else "")
        return f"no import of {modules} in the merged code" + (f" ({self.scope}{missing})" if self.scope or missing else "")


@record
class SurfaceEvidence:
    """Facts the shell collected for the surface; the merge only reads them."""

    uses: Mapping[str, Use] = field(default_factory=dict)  # canonical package -> use in the merged code
    ownership: Mapping[EntryKey, Ownership] = field(default_factory=dict)  # from dev's history
    removed_by_dev: Mapping[EntryKey, str] = field(default_factory=dict)  # dev's own commit that removed it
    gathered: bool = False  # False: nothing known beyond the texts (rows say so)
    needed: Mapping[EntryKey, str] = field(default_factory=dict)  # non-requirement entries the merged surface needs: why
    unneeded: Mapping[EntryKey, str] = field(default_factory=dict)  # explicit indexes main added only for requirements not taken: why
    locked: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # canonical package -> the versions dev's uv.lock resolves
    moved: Mapping[EntryKey, str] = field(default_factory=dict)  # main's new entry of a package main moved from a table where dev keeps it: why


@record
class EntryFacts:
    table: str
    name: str
    kind: str
    case: str
    owner: Ownership | None
    default_side: str
    conflict_side: str
    use: Use | None  # None: not gathered, or not a package entry
    needed: str | None  # a non-requirement entry the merged surface needs (why), e.g. an index a taken source names
    removed_by_dev: str | None
    table_on_dev: bool
    gathered: bool
    table_at_base: bool = False
    unneeded: str | None = None  # main added it only for entries that were not taken: an explicit index, a conflict set (why)
    excludes_locked: str | None = None  # main's new range excludes every version dev's uv.lock resolves (those versions)
    table_emptied_by_main: bool = False  # main emptied or removed the whole table, which dev keeps with entries
    moved: str | None = None  # main moved the package here from a table where dev keeps it (why)

    @property
    def resolver(self) -> bool:
        """A resolver setting (an index, a conflict set, an override or constraint): no code
        imports it, so import evidence cannot decide it; it follows the three-way rule."""
        return self.kind in ("index", "conflict") or self.table in RESOLVER_LISTS

    def owned_by(self, side: str, basis: str | None = None) -> bool:
        return self.owner is not None and self.owner.owner == side and (basis is None or self.owner.basis == basis)

    @property
    def imported(self) -> bool:
        return (self.use is not None and self.use.strength == "import") or self.needed is not None

    @property
    def optional_table(self) -> bool:
        """An extra or a dependency group: installed only when asked for, as guarded imports are used."""
        return self.table.startswith(("project.optional-dependencies.", "dependency-groups.")) or self.table == "tool.uv.dev-dependencies"

    @property
    def guarded(self) -> bool:
        return self.use is not None and self.use.strength == "guarded"


def _always(_: Any) -> bool:
    return True


def _rows(case: str, *rows: tuple[str, Any, str, bool, str, str]) -> tuple[Rule, ...]:
    return tuple(Rule(case, condition, applies, take, review, reason, evidence) for condition, applies, take, review, reason, evidence in rows)


_CONFIG_DEV = ("dev owns it (config)", lambda f: f.owned_by("dev", "config"))
_CONFIG_MAIN = ("policy prefers main", lambda f: f.owned_by("main", "config"))
_SIDE_MAIN = ("default side main", lambda f: f.default_side == "main")
_RESOLVER = ("resolver setting", lambda f: f.resolver and f.needed is None)  # needed: decided with what needs it

RULES: tuple[Rule, ...] = (
    *_rows("unchanged", ("always", _always, "dev", False, "same on all sides", "-")),
    *_rows("same-change", ("always", _always, "dev", False, "the same change on both sides", "-")),
    *_rows("dev-added", ("always", _always, "dev", False, "dev added it", "-")),
    *_rows("dev-changed", ("always", _always, "dev", False, "dev changed it, main did not: dev's kept", "-")),
    *_rows("dev-removed", ("always", _always, "none", False, "dev removed it, main did not change it: stays removed", "-")),
    *_rows(
        "main-added",
        (*_CONFIG_DEV, "none", False, "dev owns {name} (config): main's addition not taken", "ownership"),
        (*_CONFIG_MAIN, "main", False, "policy prefers main for {name}: main's addition taken", "ownership"),
        (*_SIDE_MAIN, "main", False, "main added it; the branch follows main: taken", "default-side"),
        ("only for entries that were not taken", lambda f: f.unneeded is not None, "none", False,
         "main added {name} only for entries that were not taken: left out with them", "what names it"),
        (*_RESOLVER, "main", False, "main added it, a resolver setting (no code imports it): taken, three-way", "-"),
        ("a move dev did not take", lambda f: f.moved is not None, "none", False,
         "main moved {name} here ({moved}): a move is one decision, and dev keeps {name} where it was, so main's new entry is not taken", "both tables"),
        ("dev removed it itself, the merged code imports it", lambda f: f.removed_by_dev is not None and f.imported, "none", True,
         "dev removed {name} from {table} itself ({removal}), but the merged code needs it: not re-added; check", "dev's removing commit; file:line of the import"),
        ("dev removed it itself", lambda f: f.removed_by_dev is not None, "none", True,
         "dev removed {name} from {table} itself ({removal}): main's re-addition not taken", "dev's removing commit"),
        ("the merged code needs it", lambda f: f.imported, "main", False,
         "main added it and the merged code needs it: taken", "file:line of an unguarded import (or what needs the entry)"),
        ("guarded import, optional table", lambda f: f.guarded and f.optional_table and (f.table_on_dev or not f.table_at_base), "main", False,
         "main added it to {table}, an optional table, and the merged code imports {name} inside try/except ImportError, as optional dependencies are used: taken", "file:line of the guarded import"),
        ("guarded import only", lambda f: f.guarded, "none", True,
         "main added it; the merged code imports it only inside try/except ImportError: not taken, add it if dev wants the feature", "file:line of the guarded import"),
        ("no evidence gathered", lambda f: not f.gathered, "none", True,
         "main added it; the merged code was not scanned here: not taken, run `depsync reconcile` to decide", "-"),
        ("dev removed the table, the merged code needs it", lambda f: not f.table_on_dev and f.table_at_base and f.imported, "none", True,
         "main added {name} to {table}, which dev removed, and the merged code needs {name}: not taken; dev must declare it elsewhere", "file:line of the import"),
        ("dev removed the table", lambda f: not f.table_on_dev and f.table_at_base, "none", True,
         "main added {name} to {table}, which dev removed: not taken", "the table exists at the merge-base, not on dev"),
        ("table new on main", lambda f: not f.table_on_dev, "none", True,
         "main added {table}, which dev does not have, and nothing in the merged code needs {name}: not taken", "the table does not exist on dev; no import found"),
        ("otherwise", _always, "none", True,
         "main added it; nothing in the merged code needs {name}: not taken, add it if dev needs it", "no import found (and where it looked)"),
    ),
    *_rows(
        "main-changed",
        (*_CONFIG_DEV, "dev", False, "dev owns {name} (config): main's change not taken", "ownership"),
        (*_CONFIG_MAIN, "main", False, "policy prefers main for {name}: main's change taken", "ownership"),
        (*_SIDE_MAIN, "main", False, "main changed it, the branch did not; the branch follows main: taken", "default-side"),
        (*_RESOLVER, "main", False, "main changed it, dev did not; a resolver setting (no code imports it): main's taken, three-way", "-"),
        ("requires-python moves dev's resolution", lambda f: f.table == "project.requires-python", "dev", True,
         "main changed requires-python: every marker and fork of dev's lock follows it, so taking it moves dev's resolution (and may exclude dev's CI Python): dev's kept; take it with a relock if dev wants it", "both values"),
        ("main's range excludes dev's locked version", lambda f: f.excludes_locked is not None and not f.owned_by("main", "config"), "dev", True,
         "main changed {name} to a range that excludes the {locked} dev's uv.lock resolves: taking it moves dev's resolution, so dev's kept; take it with a relock if dev wants it", "dev's uv.lock; main's range"),
        ("dev chose it (history)", lambda f: f.owned_by("dev", "history"), "dev", True,
         "dev's history chose {name} in {table}; main changed it: dev's kept, check that dev still wants it", "ownership: dev's commit"),
        ("no evidence gathered", lambda f: f.owner is None, "dev", True,
         "main changed it; dev's history not read here: dev's kept, run `depsync reconcile` to decide", "-"),
        ("dev never chose it", _always, "main", False,
         "main changed it and dev's history never chose another value: main's taken", "ownership: dev's history"),
    ),
    *_rows(
        "main-removed",
        (*_CONFIG_DEV, "dev", False, "dev owns {name} (config): main's removal not taken", "ownership"),
        (*_CONFIG_MAIN, "none", False, "policy prefers main for {name}: main's removal taken", "ownership"),
        (*_SIDE_MAIN, "none", False, "main removed it, the branch did not change it; the branch follows main: removed", "default-side"),
        ("main emptied the table, dev keeps it", lambda f: f.table_emptied_by_main, "dev", True,
         "main emptied or removed all of {table}, which dev keeps: a table is one decision, dev's entry kept (drop the table on dev if dev no longer installs it)", "the table on each side"),
        (*_RESOLVER, "none", False, "main removed it, dev did not change it; a resolver setting (no code imports it): removed, three-way", "-"),
        ("dev chose it (history)", lambda f: f.owned_by("dev", "history"), "dev", True,
         "dev's history chose {name} in {table}; main removed it: dev's kept, check", "ownership: dev's commit"),
        ("the merged code needs it", lambda f: f.imported, "dev", True,
         "main removed it but the merged code still needs {name}: dev's kept, check", "file:line of an unguarded import"),
        ("no evidence gathered", lambda f: not f.gathered, "dev", True,
         "main removed it; nothing gathered here: dev's kept, run `depsync reconcile` to decide", "-"),
        ("otherwise", _always, "none", False,
         "main removed it; dev's history never chose it and the merged code does not need it: removed", "ownership: dev's history; no import found"),
    ),
    *_rows(
        "conflict",
        (*_CONFIG_DEV, "dev", False, "both changed it; dev owns {name} (config): dev's kept", "ownership"),
        (*_CONFIG_MAIN, "main", False, "both changed it; policy prefers main for {name}: main's taken", "ownership"),
        ("conflict policy main", lambda f: f.conflict_side == "main", "main", True, "both changed it: conflict-policy main, main's taken", "both values"),
        ("otherwise", _always, "dev", True, "both changed it since the merge-base, differently: dev's kept", "both values"),
    ),
)


def rules_markdown() -> str:
    """The surface's decision table as the README shows it (generated from RULES)."""
    lines = ["| case | condition (first match) | result | review | evidence shown |", "|---|---|---|---|---|"]
    for rule in RULES:
        result = {"dev": "dev's", "main": "main's", "none": "absent"}[rule.take]
        reason = rule.reason.format(name="X", table="T", removal="<commit>", locked="locked <version>", moved="from T2, where dev keeps it")
        lines.append(f"| {rule.case} | {rule.condition} | {result}: \"{reason}\" | {'**flag**' if rule.review else '-'} | {rule.evidence} |")
    return "\n".join(lines) + "\n"


# -- the merge --------------------------------------------------------------------------------


@record
class EntryDecision:
    table: str
    name: str
    case: str
    base: Entry | None
    dev: Entry | None
    main: Entry | None
    result: Entry | None
    taken_from: str  # "dev", "main" or "none"
    reason: str
    rule: str
    needs_review: bool = False
    evidence: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        return kind_of(self.table)

    @property
    def differs(self) -> bool:
        return _value(self.dev) != _value(self.main)

    @property
    def changes_dev(self) -> bool:
        return _value(self.result) != _value(self.dev)

    @property
    def main_changed(self) -> bool:
        """main changed the entry since the merge-base."""
        return _value(self.main) != _value(self.base)

    @property
    def main_not_taken(self) -> bool:
        """main changed it and the result does not carry main's value."""
        return self.main_changed and _value(self.result) != _value(self.main)


def _value(entry: Entry | None) -> Any:
    return None if entry is None else entry.value


def _owner(key: EntryKey, policy: Policy, evidence: SurfaceEvidence) -> Ownership | None:
    name = key[1]
    if name in policy.owned_by_dev:
        return Ownership("dev", "config", "[tool.depsync] owned-by-dev")
    if name in policy.prefer:
        return Ownership(policy.prefer[name], "config", f'[tool.depsync] prefer = "{policy.prefer[name]}"')
    return evidence.ownership.get(key)


def _evidence_lines(facts: EntryFacts, display: str) -> tuple[str, ...]:
    if facts.case in ("unchanged", "same-change", "dev-added", "dev-changed", "dev-removed"):
        return ()
    lines = []
    if facts.owner is not None:
        lines.append(facts.owner.text())
    if facts.removed_by_dev:
        lines.append(f"dev removed it: {facts.removed_by_dev}")
    if facts.use is not None:
        lines.append(facts.use.text(display))
    if facts.needed:
        lines.append(facts.needed)
    if facts.unneeded:
        lines.append(facts.unneeded)
    if facts.moved:
        lines.append(facts.moved)
    if not facts.table_on_dev:
        lines.append(f"dev removed {facts.table}" if facts.table_at_base else f"{facts.table} does not exist on dev")
    if facts.default_side == "main" and facts.case != "conflict":
        lines.append('default-side = "main"')
    return tuple(lines)


def _unread_import_could_change(facts: EntryFacts, rule: Rule) -> bool:
    """The scan was incomplete, found no unguarded import, and one in the part it did not read
    would have matched another rule: the decision rests on evidence that is missing."""
    use = facts.use
    if use is None or not use.incomplete or use.strength == "import":
        return False
    found = replace(facts, use=replace(use, strength="import"))
    return next(r for r in RULES if r.case == facts.case and r.applies(found)) is not rule


def _excludes_locked(case: str, kind: str, main: Entry | None, locked: tuple[str, ...]) -> str | None:
    """The versions dev's lock resolves for a requirement main changed, when main's new range
    admits none of them (`~=6.0` -> `~=7.0` over a locked 6.0.1); None when it admits one."""
    if case != "main-changed" or kind != "requirement" or main is None or not locked:
        return None
    from packaging.version import InvalidVersion, Version

    for raw in main.raw:
        parsed = uv_requirement(str(raw))
        if parsed is None:
            return None
        specifier = parsed.specifier
        try:
            if not str(specifier) or any(specifier.contains(Version(v), prereleases=True) for v in locked):
                return None
        except InvalidVersion:
            return None
    return "locked " + ", ".join(locked)


def _table_exists(tables: set[str], table: str) -> bool:
    return kind_of(table) != "requirement" or table in tables


def merge_surface(
    base: Mapping[str, Any],
    dev: Mapping[str, Any],
    main: Mapping[str, Any],
    policy: Policy = Policy(),
    evidence: SurfaceEvidence = SurfaceEvidence(),
    default_side: str = "dev",
) -> list[EntryDecision]:
    """One decision per entry present on any side (parsed pyproject data in), in dev's order, then main's additions."""
    sides = [surface_entries(data) for data in (base, dev, main)]
    b, d, m = sides
    dev_lists, base_lists, main_lists = requirement_tables(dev), requirement_tables(base), requirement_tables(main)
    dev_tables, base_tables = set(dev_lists), set(base_lists)
    # main emptied (or removed) a whole table dev changed since the merge-base and still fills:
    # its entries are one decision (a table dev left alone follows main's removal, three-way)
    emptied = {t for t, items in base_lists.items() if items and not main_lists.get(t) and dev_lists.get(t) and dev_lists[t] != items}
    order = list(d) + [k for k in m if k not in d] + [k for k in b if k not in d and k not in m]
    decisions = []
    for key in order:
        table, name = key
        base_entry, dev_entry, main_entry = b.get(key), d.get(key), m.get(key)
        case = case_of_values(_value(base_entry), _value(dev_entry), _value(main_entry))
        kind = kind_of(table)
        use = evidence.uses.get(name) if kind == "requirement" else None
        facts = EntryFacts(
            table, name, kind, case, _owner(key, policy, evidence), default_side, policy.side_for(name), use,
            evidence.needed.get(key), evidence.removed_by_dev.get(key), _table_exists(dev_tables, table), evidence.gathered, table in base_tables,
            evidence.unneeded.get(key), _excludes_locked(case, kind, main_entry, evidence.locked.get(name, ())),
            table in emptied, evidence.moved.get(key),
        )
        rule = next(r for r in RULES if r.case == case and r.applies(facts))
        result = {"dev": dev_entry, "main": main_entry, "none": None}[rule.take]
        display = (dev_entry or main_entry or base_entry).name  # type: ignore[union-attr]
        reason = rule.reason.format(name=display, table=table, removal=facts.removed_by_dev or "", locked=facts.excludes_locked or "", moved=facts.moved or "")
        taken = rule.take if result is not None else "none"
        review = rule.review
        if _unread_import_could_change(facts, rule):  # the scan stopped short: what it did not read might have decided otherwise
            review, reason = True, f"{reason} ({facts.use.incomplete}: evidence incomplete, check)"  # type: ignore[union-attr]
        decisions.append(EntryDecision(table, name, case, base_entry, dev_entry, main_entry, result, taken, reason, rule.id, review, _evidence_lines(facts, display)))
    return decisions


def result_requires(decisions: Sequence[EntryDecision]) -> frozenset[str]:
    """Package names the merged requirement tables ask for."""
    return frozenset(d.name for d in decisions if d.kind == "requirement" and d.result is not None and not d.name.startswith(("?", "include-group:")))


def taken_from_main(decisions: Sequence[EntryDecision]) -> frozenset[str]:
    """Packages whose requirement the merge took from main (a source main added with it follows)."""
    return frozenset(d.name for d in decisions if d.kind == "requirement" and d.taken_from == "main" and d.changes_dev)


def main_changes(decisions: Sequence[EntryDecision]) -> list[EntryDecision]:
    """Every entry main changed since the merge-base that differs from dev: the ones a reviewer reads."""
    return [d for d in decisions if d.main_changed and d.differs]


def dockerfile_findings(uses: Sequence[tuple[str, str, int]], path: str, merged: Mapping[str, Any], dev: Mapping[str, Any], main: Mapping[str, Any]) -> list[Finding]:
    """Errors for the extras and groups dev's Dockerfile installs (uses: kind, canonical name,
    line) that the merged pyproject no longer defines, or empties while dev's had entries
    (main dropped or renamed it): the image build would fail, or install nothing, later."""
    from depsync.core.rules.registry import RULES as CHECK_RULES

    tables = {side: requirement_tables(data) for side, data in (("merged", merged), ("dev", dev), ("main", main))}
    findings = []
    for kind, name, line in uses:
        table = f"project.optional-dependencies.{name}" if kind == "extra" else f"dependency-groups.{name}"
        rule = CHECK_RULES["docker-unknown-extra" if kind == "extra" else "docker-unknown-group"]
        main_note = "" if table in tables["main"] else f"; main has no {kind} {name!r} (dropped or renamed there)"
        if table not in tables["merged"]:
            findings.append(rule.finding(path, line, f"dev's Dockerfile installs {kind} {name!r}, which the reconciled pyproject does not define{main_note}",
                                         f"keep {kind} {name!r} in pyproject.toml, or change the Dockerfile's `uv sync` to the new name"))
        elif not tables["merged"][table] and tables["dev"].get(table):
            findings.append(rule.finding(path, line, f"dev's Dockerfile installs {kind} {name!r}, which the reconciled pyproject empties{main_note}",
                                         f"keep dev's entries of {kind} {name!r}, or change the Dockerfile's `uv sync`"))
    return findings


def unsanctioned(ours: Mapping[str, Any], dev: Mapping[str, Any], main: Mapping[str, Any]) -> list[str]:
    """Surface entries of a pushed pyproject (the guard) whose value is neither dev's nor main's:
    no reconcile gives those, whatever its evidence. Metadata entries may also carry a value
    that follows a moved pin: they are checked with the sources."""
    o, d, m = (surface_entries(data) for data in (ours, dev, main))
    wrong = []
    for key in sorted(set(o) | set(d) | set(m)):
        if key[0] == "tool.uv.dependency-metadata":
            continue
        value = _value(o.get(key))
        if value != _value(d.get(key)) and value != _value(m.get(key)):
            wrong.append(f"{key[1]} in {key[0]}")
    return wrong
