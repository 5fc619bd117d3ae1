"""Three-way merge of [tool.uv.sources], per package name (pure).

base = merge-base(dev, main). The table in DESIGN.md decides each name; policy
(config) decides conflicts and packages dev owns; evidence gathered by the shell
(does dev depend on it, dev's own history, which rev is newer upstream) is recorded
with every decision that is not automatic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.utils import canonicalize_name

# keys uv accepts in a source table; anything else is a shape depsync does not understand
KNOWN_SOURCE_KEYS = frozenset(
    {"git", "rev", "tag", "branch", "subdirectory", "lfs", "path", "editable", "package", "url", "index", "workspace", "marker", "extra", "group"}
)


@dataclass(frozen=True)
class Policy:
    conflict: str = "dev"  # who wins a conflict: "dev" or "main"
    owned_by_dev: frozenset[str] = frozenset()  # dev's value always wins, whatever main did
    prefer: Mapping[str, str] = field(default_factory=dict)  # per package: "dev" or "main"

    def side_for(self, name: str) -> str:
        if name in self.owned_by_dev:
            return "dev"
        return self.prefer.get(name, self.conflict)


@dataclass(frozen=True)
class Evidence:
    """Facts about the world the shell collected; the merge only reads them."""

    dev_requires: frozenset[str] = frozenset()  # normalized names dev's pyproject asks for
    dev_history: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name -> "abc1234 message" lines
    rev_order: Mapping[str, str] = field(default_factory=dict)  # name -> "main-newer", "dev-newer", "same", "diverged", "unknown"


@dataclass(frozen=True)
class SourceDecision:
    name: str  # as written (dev's spelling when dev has it)
    case: str  # unchanged, same-change, dev-changed, dev-added, dev-removed, main-changed, main-added, main-removed, conflict, unknown-shape
    base: Any
    dev: Any
    main: Any
    result: Any  # the value kept (None: no source)
    taken_from: str  # "dev", "main" or "none"
    reason: str
    needs_review: bool = False
    evidence: tuple[str, ...] = ()

    @property
    def changes_dev(self) -> bool:
        return normalize(self.result) != normalize(self.dev)


def normalize(value: Any) -> Any:
    """A source value in comparable form: key order ignored, a one-element list is its element."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), normalize(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        items = tuple(normalize(v) for v in value)
        return items[0] if len(items) == 1 else ("list", items)
    return value


def _understood(value: Any) -> bool:
    if value is None:
        return True
    tables = value if isinstance(value, list) else [value]
    return all(isinstance(t, Mapping) and set(t) <= KNOWN_SOURCE_KEYS for t in tables) and bool(tables)


def describe(value: Any) -> str:
    """Short text of a source for tables: `git url @ rev`, `path x`, ..."""
    if value is None:
        return "-"
    tables = value if isinstance(value, list) else [value]
    parts = []
    for table in tables:
        if not isinstance(table, Mapping):
            parts.append(str(table))
            continue
        if "git" in table:
            ref = next((str(table[k]) for k in ("rev", "tag", "branch") if k in table), "")
            ref = ref[:12] if len(ref) == 40 else ref
            parts.append(f"git {str(table['git']).rsplit('/', 1)[-1].removesuffix('.git')}@{ref}" if ref else f"git {table['git']}")
        elif "path" in table:
            parts.append(f"path {table['path']}")
        elif "url" in table:
            parts.append(f"url {table['url']}")
        elif "index" in table:
            parts.append(f"index {table['index']}")
        elif table.get("workspace"):
            parts.append("workspace")
        else:
            parts.append(str(dict(table)))
        if "marker" in table:
            parts[-1] += f" ; {table['marker']}"
    return " | ".join(parts)


def host_of(url: str) -> str:
    """Host of a source URL, credentials and port dropped (`git+ssh://git@host:22/x` -> host)."""
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url.removeprefix("git+")).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced "[" (IPv6 literal)
        return ""


def hosts(value: Any) -> set[str]:
    """Hosts a source value points to (git and url sources)."""
    tables = value if isinstance(value, list) else [value]
    return {host_of(str(t[key])) for t in tables if isinstance(t, Mapping) for key in ("git", "url") if isinstance(t.get(key), str)}


def _by_name(sources: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    return {canonicalize_name(name): (name, value) for name, value in sources.items()}


def merge_sources(
    base: Mapping[str, Any], dev: Mapping[str, Any], main: Mapping[str, Any], policy: Policy = Policy(), evidence: Evidence = Evidence()
) -> list[SourceDecision]:
    """One decision per name present on any side, in dev's order, then main's additions."""
    b, d, m = _by_name(base), _by_name(dev), _by_name(main)
    order = list(d) + [k for k in m if k not in d] + [k for k in b if k not in d and k not in m]
    decisions = [_decide(key, b.get(key), d.get(key), m.get(key), policy, evidence) for key in order]
    dev_hosts = set().union(*(hosts(v) for v in dev.values()))
    return [_flag_new_hosts(decision, dev_hosts) for decision in decisions]


def _flag_new_hosts(decision: SourceDecision, dev_hosts: set[str]) -> SourceDecision:
    """A source taken from main that points to a host dev never used gets a review (supply chain)."""
    if decision.taken_from != "main":
        return decision
    new = sorted(hosts(decision.result) - dev_hosts)
    if not new:
        return decision
    note = f"new host {', '.join(new)}: no dev source uses it; review before merging"
    return replace(decision, needs_review=True, evidence=(*decision.evidence, note))


def _decide(key: str, base_item: Any, dev_item: Any, main_item: Any, policy: Policy, evidence: Evidence) -> SourceDecision:
    name = (dev_item or main_item or base_item)[0]
    base, dev, main = (item[1] if item else None for item in (base_item, dev_item, main_item))
    nb, nd, nm = normalize(base), normalize(dev), normalize(main)
    history = tuple(evidence.dev_history.get(key, ()))
    depends = key in evidence.dev_requires
    usage = "dev depends on it" if depends else "nothing in dev depends on it: inert until a dependency is added"
    order = evidence.rev_order.get(key, "unknown")

    def decision(case: str, take: str, reason: str, review: bool = False, extra: tuple[str, ...] = ()) -> SourceDecision:
        result = {"dev": dev, "main": main, "none": None}[take]
        return SourceDecision(name, case, base, dev, main, result, take if result is not None else "none", reason, review, extra)

    if not (_understood(dev) and _understood(main) and _understood(base)):
        return decision("unknown-shape", "dev", "a source shape depsync does not understand: left as dev has it", True)
    if nd == nm:
        if nd == nb:
            return decision("unchanged", "dev", "same on all sides")
        return decision("same-change", "dev", "the same change on both sides")
    owned = key in policy.owned_by_dev
    if nd == nb:  # only main changed it
        if owned:
            return decision("main-changed" if main is not None else "main-removed", "dev", "dev owns this package (policy owned-by-dev): main's change not taken", True)
        if base is None:
            return decision("main-added", "main", f"main added it; {usage}", False, history)
        if main is None:
            if depends:
                return decision("main-removed", "dev", "main removed it but dev still depends on it: kept", True, history)
            return decision("main-removed", "main", "main removed it and dev does not depend on it")
        if order == "dev-newer":
            return decision("main-changed", "dev", "main changed it to an older rev than dev's: not downgraded", True, (f"rev order: {order}",))
        extra = (f"rev order: {order}",) if order != "unknown" else ()
        if policy.prefer.get(key) == "dev":
            return decision("main-changed", "dev", "main changed it; policy prefers dev for this package", True, extra)
        return decision("main-changed", "main", "main changed it, dev did not: take main's", False, extra)
    if nm == nb:  # only dev changed it
        case = "dev-added" if base is None else "dev-removed" if dev is None else "dev-changed"
        return decision(case, "dev", {"dev-added": "dev added it", "dev-removed": "dev removed it: stays removed", "dev-changed": "dev changed it: keep dev's"}[case], False, history)
    side = policy.side_for(key)
    why = "owned by dev (policy)" if owned else f"policy prefers {side}"
    notes = tuple(x for x in (f"rev order: {order}" if order != "unknown" else "", *history) if x)
    return decision("conflict", side, f"both sides changed it: {why}", True, notes)
