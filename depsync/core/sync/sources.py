"""Three-way merge of [tool.uv.sources], per package name (pure).

base = merge-base(dev, main). Each name gets a case (who changed what since the base),
then the first row of `RULES` for that case whose condition holds on the evidence decides
what is kept, whether a reviewer must look, and says why. The evidence (does dev depend
on the package, who owns its pin according to dev's history, is main's rev newer than
dev's upstream) is gathered by the shell (commands/reconcile.py, revs.py) and only read here.

Callers that gather no evidence (the merge driver, the guard) get `Evidence()`: then
nothing is known about rev order or history, and the rows say so.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Protocol

from depsync.core.names import canonicalize_name, host_of
from depsync.records import field, record, replace

# keys uv accepts in a source table; anything else is a shape depsync does not understand
KNOWN_SOURCE_KEYS = frozenset(
    {"git", "rev", "tag", "branch", "subdirectory", "lfs", "path", "editable", "package", "url", "index", "workspace", "marker", "extra", "group"}
)
ORDERS = ("main-newer", "dev-newer", "same", "diverged", "unknown")


@record
class Policy:
    conflict: str = "dev"  # who wins a conflict: "dev" or "main"
    owned_by_dev: frozenset[str] = frozenset()  # dev's value always wins, whatever main did
    prefer: Mapping[str, str] = field(default_factory=dict)  # per package: "dev" or "main"

    def side_for(self, name: str) -> str:
        if name in self.owned_by_dev:
            return "dev"
        return self.prefer.get(name, self.conflict)


@record
class RevOrder:
    """How main's rev relates to dev's in the source repository, and how that was learnt (or why not)."""

    order: str = "unknown"  # one of ORDERS
    detail: str = ""

    def text(self) -> str:
        return f"rev order: {self.order}" + (f" ({self.detail})" if self.detail else "")


@record
class Ownership:
    """Who chooses this entry's pin: "dev" or "main", from config or from dev's history."""

    owner: str
    basis: str  # "config" or "history"
    detail: str
    commit: str | None = None

    def text(self) -> str:
        return f"{self.owner} owns it: {self.detail}"


@record
class Evidence:
    """Facts about the world the shell collected; the merge only reads them."""

    dev_requires: frozenset[str] = frozenset()  # normalized names dev's pyproject asks for
    ownership: Mapping[str, Ownership] = field(default_factory=dict)  # name -> from dev's history
    rev_order: Mapping[str, RevOrder | str] = field(default_factory=dict)  # name -> order (a bare string is an order without detail)
    removed_by_dev: Mapping[str, str] = field(default_factory=dict)  # name -> dev's own commit that removed the source
    # decided with the requirements (depsync.core.sync.surface): a source and the requirement needing it go together
    requirement_taken: frozenset[str] = frozenset()  # main's requirement for the package was taken
    requirement_declined: frozenset[str] = frozenset()  # main's requirement for the package was not taken
    gathered: bool = False  # True: rev order was asked for every name that needs it (reconcile)

    def order_of(self, key: str) -> RevOrder | None:
        found = self.rev_order.get(key)
        if isinstance(found, str):
            return RevOrder(found)
        if found is None and self.gathered:
            return RevOrder("unknown", "not asked")
        return found


@record
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
    rule: str = ""  # the row of RULES that decided: "<case>/<condition>"

    @property
    def changes_dev(self) -> bool:
        return normalize(self.result) != normalize(self.dev)

    @property
    def differs(self) -> bool:
        """dev and main disagree on this entry: the decisions a reviewer reads."""
        return normalize(self.dev) != normalize(self.main)


# -- the decision table ------------------------------------------------------------------------


@record
class Facts:
    """What a rule row may look at for one entry."""

    name: str
    case: str
    owner: Ownership | None  # config first, then dev's history; None: not known
    depends: bool  # dev's pyproject asks for the package
    order: RevOrder | None  # None: not gathered (merge driver, guard)
    removed_by_dev: str | None
    conflict_side: str  # the policy's side for a conflict
    dev_absent: bool = False  # dev has no source for it
    main_absent: bool = False  # main has no source for it
    requirement_taken: bool = False  # main's requirement for it was taken with it (depsync.core.sync.surface)
    requirement_declined: bool = False  # main's requirement for it was not taken
    not_a_pin: bool = False  # neither side is a git or URL source: no rev order exists (a path, index or workspace source)

    def owned_by(self, side: str, basis: str | None = None) -> bool:
        return self.owner is not None and self.owner.owner == side and (basis is None or self.owner.basis == basis)

    def order_in(self, *orders: str) -> bool:
        return self.order is not None and self.order.order in orders


@record
class Rule:
    case: str
    condition: str  # the row's condition, as the README says it
    applies: Callable[[Any], bool]  # Facts here; depsync.core.sync.surface.EntryFacts for the rest of the surface
    take: str  # "dev", "main" or "none"
    review: bool  # a reviewer must look
    reason: str  # str.format(name=..., removal=...)
    evidence: str  # what the summary shows for the row (README)

    @property
    def id(self) -> str:
        return f"{self.case}/{self.condition}"


def _always(_: Facts) -> bool:
    return True


RULES: tuple[Rule, ...] = (
    Rule("unchanged", "always", _always, "dev", False, "same on all sides", "-"),
    Rule("same-change", "always", _always, "dev", False, "the same change on both sides", "-"),
    Rule("dev-added", "always", _always, "dev", False, "dev added it", "-"),
    Rule("dev-changed", "always", _always, "dev", False, "dev changed it, main did not: dev's kept", "-"),
    Rule("dev-removed", "always", _always, "none", False, "dev removed it: stays removed", "-"),
    Rule("unknown-shape", "always", _always, "dev", True, "a source shape depsync does not understand: left as dev has it", "-"),
    # main added a source (base and dev have none)
    Rule("main-added", "dev owns it (config)", lambda f: f.owned_by("dev", "config"), "none", False,
         "dev owns {name} (config): main's new source not taken", "ownership"),
    Rule("main-added", "policy prefers main", lambda f: f.owned_by("main", "config"), "main", False,
         "policy prefers main for {name}: main's new source taken", "ownership"),
    Rule("main-added", "dev depends on it", lambda f: f.depends, "none", True,
         "dev already depends on {name} without a source (from the index): main's new source not taken", "dev depends on {name}"),
    Rule("main-added", "dev removed it itself", lambda f: f.removed_by_dev is not None, "none", True,
         "dev removed this source itself ({removal}): main's re-addition not taken", "dev's removing commit"),
    Rule("main-added", "taken with main's requirement", lambda f: f.requirement_taken, "main", False,
         "main added it with a requirement for {name}, which was taken: its source comes with it", "the requirement's decision (dependencies)"),
    Rule("main-added", "main's requirement not taken", lambda f: f.requirement_declined, "none", True,
         "main's requirement for {name} was not taken (see the dependency changes): its source not added either", "the requirement's decision (dependencies)"),
    Rule("main-added", "otherwise", _always, "main", False,
         "main added it; nothing in dev depends on {name}: inert until a dependency is added", "nothing in dev depends on {name}"),
    # main removed a source dev still has as it was
    Rule("main-removed", "dev owns it (config)", lambda f: f.owned_by("dev", "config"), "dev", False,
         "dev owns {name} (config): main's removal not taken", "ownership"),
    Rule("main-removed", "policy prefers main", lambda f: f.owned_by("main", "config"), "none", False,
         "policy prefers main for {name}: main's removal taken", "ownership"),
    Rule("main-removed", "dev depends on it, main owns it (history)", lambda f: f.depends and f.owned_by("main", "history"), "dev", True,
         "main removed it and dev's history never chose {name}'s source, but dev depends on {name}: dev's source kept, check whether dev still needs it",
         "ownership: dev's history; dev depends on {name}"),
    Rule("main-removed", "dev depends on it", lambda f: f.depends, "dev", True,
         "main removed it but dev depends on {name}: dev's source kept", "dev depends on {name}"),
    Rule("main-removed", "otherwise", _always, "none", False,  # inert on dev: whoever chose it, uv ignores it
         "main removed it and nothing in dev depends on {name}", "nothing in dev depends on {name}"),
    # main changed a source dev left as it was at the base
    Rule("main-changed", "dev owns it (history), main's may be a fast-forward", lambda f: f.owned_by("dev", "history") and f.order_in("main-newer", "unknown"), "dev", True,
         "dev owns {name} by its history, and main's rev may descend from dev's: dev's kept; check that dev still wants its pin",
         "ownership: dev's commit that chose the pin; rev order: main-newer or unknown"),
    Rule("main-changed", "dev owns it (config)", lambda f: f.owned_by("dev", "config"), "dev", False,
         "dev owns {name} (config): main's change not taken", "ownership"),
    Rule("main-changed", "dev owns it", lambda f: f.owned_by("dev"), "dev", True,
         "dev owns {name} by its history: main's change not taken (listed: main changed it)", "ownership: dev's commit that chose the pin; rev order"),
    Rule("main-changed", "policy prefers main, main's rev older", lambda f: f.owned_by("main", "config") and f.order_in("dev-newer"), "main", True,
         "policy prefers main for {name}: main's older rev taken (a downgrade)", "rev order"),
    Rule("main-changed", "policy prefers main", lambda f: f.owned_by("main", "config"), "main", False,
         "policy prefers main for {name}: main's taken", "ownership"),
    Rule("main-changed", "not a git or URL pin", lambda f: f.not_a_pin and not f.owned_by("dev"), "main", False,
         "main changed {name}'s source, which is no git or URL pin (a path, index or workspace source), and dev did not: main's taken, three-way", "both values"),
    Rule("main-changed", "no evidence gathered", lambda f: f.order is None, "main", True,
         "main changed it; rev order not checked here: run `depsync reconcile` to decide", "-"),
    Rule("main-changed", "fast-forward", lambda f: f.order_in("main-newer", "same"), "main", False,
         "main's rev descends from dev's (fast-forward): main's taken", "rev order: main-newer (dev's rev is an ancestor of main's)"),
    Rule("main-changed", "main's rev older", lambda f: f.order_in("dev-newer"), "dev", True,
         "main moved it back to an older rev: dev's kept, not downgraded", "rev order: dev-newer"),
    Rule("main-changed", "diverged", lambda f: f.order_in("diverged"), "dev", True,
         "dev's and main's revs are on diverged lines: dev's kept", "rev order: diverged (neither rev is an ancestor of the other)"),
    Rule("main-changed", "order unknown", _always, "dev", True,
         "rev order could not be established: dev's kept", "rev order: unknown (why: --no-fetch, fetch failed, not fetchable, not a commit pin...)"),
    # both changed it since the base, differently: dev's choice stands unless main's is ahead of it
    Rule("conflict", "policy prefers main", lambda f: f.conflict_side == "main", "main", True,
         "both changed it: policy prefers main", "rev order; ownership"),
    Rule("conflict", "dev owns it (config)", lambda f: f.owned_by("dev", "config"), "dev", False,
         "both changed it; dev owns {name} (config): dev's kept", "ownership"),
    Rule("conflict", "dev removed it", lambda f: f.dev_absent and f.removed_by_dev is not None, "none", True,
         "dev removed it ({removal}), main changed it: stays removed", "dev's commit that removed it"),
    Rule("conflict", "dev has none, not removed by dev", lambda f: f.dev_absent and f.order is not None, "none", True,
         "main changed it; dev has no source for {name}, and no commit of dev's own removed one (an earlier sync did not take main's, or took its removal): still not taken, check", "ownership: dev's history"),
    Rule("conflict", "dev has none", lambda f: f.dev_absent, "none", True,
         "dev has no source for {name}, main changed it: not taken (dev's history not read here)", "-"),
    Rule("conflict", "main removed it", lambda f: f.main_absent, "dev", True,
         "main removed it, dev changed it: dev's kept", "-"),
    Rule("conflict", "dev's rev newer or diverged", lambda f: f.order_in("dev-newer", "same", "diverged"), "dev", True,
         "both changed it; dev's pin is not behind main's: dev's kept", "rev order: dev-newer or diverged"),
    Rule("conflict", "main's rev newer", lambda f: f.order_in("main-newer"), "dev", True,
         "both changed it; dev's pin is behind main's on the same line: dev's kept, main's merged code may need main's", "rev order: main-newer"),
    Rule("conflict", "order unknown", _always, "dev", True,
         "both changed it: dev's kept; rev order could not be established", "rev order: unknown (why)"),
)


def rules_markdown() -> str:
    """The decision table as the README shows it (generated from RULES, so the two cannot drift)."""
    lines = ["| case | condition (first match) | result | review | evidence shown |", "|---|---|---|---|---|"]
    for rule in RULES:
        result = {"dev": "dev's", "main": "main's", "none": "no source"}[rule.take]
        reason = rule.reason.format(name="X", removal="<commit>")
        lines.append(f"| {rule.case} | {rule.condition} | {result}: \"{reason}\" | {'**flag**' if rule.review else '-'} | {rule.evidence.format(name='X')} |")
    return "\n".join(lines) + "\n"


def _rule_for(facts: Facts) -> Rule:
    return next(rule for rule in RULES if rule.case == facts.case and rule.applies(facts))


# -- values ------------------------------------------------------------------------------------


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


def hosts(value: Any) -> set[str]:
    """Hosts a source value points to (git and url sources)."""
    tables = value if isinstance(value, list) else [value]
    return {host_of(str(t[key])) for t in tables if isinstance(t, Mapping) for key in ("git", "url") if isinstance(t.get(key), str)}


def same_repository(a: str, b: str) -> bool:
    """Two git URLs naming one repository (`.git`, a trailing slash, `git+` and case aside)."""

    def key(url: str) -> str:
        return url.strip().removeprefix("git+").rstrip("/").removesuffix(".git").lower()

    return key(a) == key(b)


# -- rev pairs: what the shell must ask the source repository ------------------------------------


@record
class Pin:
    kind: str  # "rev", "tag", "branch" or "default" (no ref: the default branch)
    value: str


@record
class RevPair:
    url: str
    dev: Pin
    main: Pin


def pin_of(table: Mapping[str, Any]) -> Pin:
    for kind in ("rev", "tag", "branch"):
        if kind in table:
            return Pin(kind, str(table[kind]))
    return Pin("default", "")


def rev_pairs(dev: Any, main: Any) -> list[RevPair] | str:
    """The (url, dev pin, main pin) pairs whose order decides main-changed, or why there are none."""
    dev_tables, main_tables = (v if isinstance(v, list) else [v] for v in (dev, main))
    if dev is None or main is None:
        return "one side has no source"
    if len(dev_tables) != len(main_tables):
        return "the two sides list a different number of sources"
    pairs = []
    for d, m in zip(dev_tables, main_tables):
        if not (isinstance(d, Mapping) and isinstance(m, Mapping) and isinstance(d.get("git"), str) and isinstance(m.get("git"), str)):
            return "not git sources on both sides: no rev order"
        if d.get("marker") != m.get("marker"):
            return "the sources' markers differ"
        if not same_repository(d["git"], m["git"]):
            return f"main points to another repository ({m['git']})"
        pairs.append(RevPair(str(m["git"]), pin_of(d), pin_of(m)))
    return pairs


def combine_orders(orders: Iterable[str]) -> str:
    """One order for a list-shaped source: every pair must agree in direction."""
    found = set(orders)
    if not found or "unknown" in found:
        return "unknown"
    if found == {"same"}:
        return "same"
    moved = found - {"same"}
    return moved.pop() if len(moved) == 1 and "diverged" not in moved else "diverged"


# -- dev's history of an entry -------------------------------------------------------------------


class HistoryCommit(Protocol):
    commit: str
    parents: tuple[str, ...]
    time: int
    subject: str
    old_blob: str | None
    new_blob: str | None


MISSING = object()
_HEADER = re.compile(r"^\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$", re.MULTILINE)  # [table] and [[array]] headers
_OTHER_SOURCES = re.compile(r"(?:^|[\s.])sources\s*[=.]", re.MULTILINE)  # `sources = {...}` or dotted keys outside the section


def sources_table(text: str) -> dict[str, Any] | None:
    """[tool.uv.sources] of a pyproject text by normalized name; None when it does not parse.

    Fast path for history walks: when the table is one plain `[tool.uv.sources]` section,
    only that section is parsed (a tenth of the file); any other layout parses the file."""
    headers = list(_HEADER.finditer(text))
    names = [m.group(1).replace(" ", "") for m in headers]
    if names.count("tool.uv.sources") == 1 and not any(n.startswith("tool.uv.sources.") for n in names):
        index = names.index("tool.uv.sources")
        start, end = headers[index].start(), headers[index + 1].start() if index + 1 < len(headers) else len(text)
        if not _OTHER_SOURCES.search(text[:start] + text[end:]):
            found = _parse_sources(text[start:end])
            if found is not None:
                return found
    return _parse_sources(text)


def _parse_sources(text: str) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return None
    tool = data.get("tool", {})
    uv = tool.get("uv", {}) if isinstance(tool, dict) else {}
    sources = uv.get("sources", {}) if isinstance(uv, dict) else {}
    if not isinstance(sources, dict):
        return None
    return {canonicalize_name(str(name)): value for name, value in sources.items()}


@record
class EntryChange:
    """The latest change of one entry on dev's first-parent line."""

    commit: str
    subject: str
    time: int
    merge: bool
    new: Any  # the entry after the commit (None: removed)
    main_value: Any = MISSING  # main's value then: of the merged main parent, else main's at that time

    def names(self) -> str:
        when = datetime.fromtimestamp(self.time, timezone.utc).strftime("%Y-%m-%d")
        kind = "sync merge" if self.merge else "commit"
        return f"{kind} {self.commit[:10]} \"{self.subject[:72]}\" ({when})"


def latest_changes(history: Sequence[HistoryCommit], sources_at: Callable[[str | None], dict[str, Any] | None], names: Iterable[str]) -> dict[str, tuple[HistoryCommit, Any]]:
    """For each name, the newest commit of a first-parent history (newest first) that changed its
    value, with the value after it. Stops as soon as every name has one."""
    pending = set(names)
    found: dict[str, tuple[HistoryCommit, Any]] = {}
    for commit in history:
        if not pending:
            break
        old, new = sources_at(commit.old_blob), sources_at(commit.new_blob)
        if old is None or new is None:
            continue  # a version that does not parse (committed conflict markers): no evidence from it
        for name in list(pending):
            if normalize(old.get(name)) != normalize(new.get(name)):
                found[name] = (commit, new.get(name))
                pending.discard(name)
    return found


def ownership_from(change: EntryChange | None) -> Ownership:
    """Who owns an entry according to the latest change of it on dev's first-parent line.

    Dev owns it when that change set a value main did not have then: dev chose the pin (a
    commit of its own, or a sync merge resolved to something else than main's value). When
    the value was main's (a sync took it, a commit copied main's pin, or the commit is
    main's own history), or dev's history never changed it, main owns it."""
    if change is None:
        return Ownership("main", "history", "dev's history never changed it")
    if change.main_value is not MISSING and normalize(change.new) == normalize(change.main_value):
        return Ownership("main", "history", f"its last change on dev, {change.names()}, set the value main had then", change.commit)
    did = "removed it" if change.new is None else "chose this pin"
    return Ownership("dev", "history", f"dev's {change.names()} {did}; no change from main taken since", change.commit)


# -- the merge ---------------------------------------------------------------------------------


def _by_name(sources: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    return {canonicalize_name(name): (name, value) for name, value in sources.items()}


def case_of(base: Any, dev: Any, main: Any) -> str:
    """Who changed what since the merge-base (the DESIGN.md table's rows)."""
    if not (_understood(dev) and _understood(main) and _understood(base)):
        return "unknown-shape"
    return case_of_values(normalize(base), normalize(dev), normalize(main))


def case_of_values(nb: Any, nd: Any, nm: Any) -> str:
    """The case of comparable values (None: absent on that side); shared with depsync.core.sync.surface."""
    base, dev, main = nb, nd, nm
    if nd == nm:
        return "unchanged" if nd == nb else "same-change"
    if nd == nb:
        return "main-added" if base is None else "main-removed" if main is None else "main-changed"
    if nm == nb:
        return "dev-added" if base is None else "dev-removed" if dev is None else "dev-changed"
    return "conflict"


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


def is_pin(value: Any) -> bool:
    """A git or URL source (or a list with one): something a rev or a file name orders."""
    return any(isinstance(t, Mapping) and ("git" in t or "url" in t) for t in (value if isinstance(value, list) else [value]))


def _not_a_pin(dev: Any, main: Any) -> bool:
    """Both sides have a source and neither is a git or URL pin (a path, index or workspace source)."""
    return dev is not None and main is not None and not is_pin(dev) and not is_pin(main)


def facts_for(key: str, case: str, policy: Policy, evidence: Evidence, dev_absent: bool = False, main_absent: bool = False, not_a_pin: bool = False) -> Facts:
    owner: Ownership | None
    if key in policy.owned_by_dev:
        owner = Ownership("dev", "config", "[tool.depsync] owned-by-dev")
    elif key in policy.prefer:
        owner = Ownership(policy.prefer[key], "config", f'[tool.depsync] prefer = "{policy.prefer[key]}"')
    else:
        owner = evidence.ownership.get(key)
    return Facts(
        key, case, owner, key in evidence.dev_requires, evidence.order_of(key), evidence.removed_by_dev.get(key), policy.side_for(key), dev_absent, main_absent,
        key in evidence.requirement_taken, key in evidence.requirement_declined, not_a_pin,
    )


def _evidence_lines(facts: Facts, display: str) -> tuple[str, ...]:
    if facts.case in ("unchanged", "same-change", "dev-added", "dev-changed", "dev-removed", "unknown-shape"):
        return ()
    lines = []
    if facts.owner is not None:
        lines.append(facts.owner.text())
    if facts.order is not None and facts.case in ("main-changed", "conflict"):
        lines.append(facts.order.text())
    if facts.removed_by_dev:
        lines.append(f"dev removed it: {facts.removed_by_dev}")
    if facts.requirement_taken:
        lines.append(f"main's requirement for {display} taken")
    elif facts.requirement_declined:
        lines.append(f"main's requirement for {display} not taken")
    if facts.case in ("main-added", "main-removed") or facts.depends:
        lines.append(f"dev depends on {display}" if facts.depends else f"nothing in dev depends on {display}")
    return tuple(lines)


def _decide(key: str, base_item: Any, dev_item: Any, main_item: Any, policy: Policy, evidence: Evidence) -> SourceDecision:
    name = (dev_item or main_item or base_item)[0]
    base, dev, main = (item[1] if item else None for item in (base_item, dev_item, main_item))
    facts = facts_for(key, case_of(base, dev, main), policy, evidence, dev is None, main is None, _not_a_pin(dev, main))
    rule = _rule_for(facts)
    result = {"dev": dev, "main": main, "none": None}[rule.take]
    reason = rule.reason.format(name=name, removal=facts.removed_by_dev or "")
    taken = rule.take if result is not None else "none"
    return SourceDecision(name, facts.case, base, dev, main, result, taken, reason, rule.review, _evidence_lines(facts, name), rule.id)


def possible_sides(key: str, base: Any, dev: Any, main: Any, policy: Policy, depends: bool) -> set[str]:
    """Every side ("dev", "main", "none") the table could take for an entry under any evidence
    that is not in the texts themselves (rev order, dev's history): what a checker gathering no
    evidence (the guard) must accept from reconcile."""
    case = case_of(base, dev, main)
    configured = facts_for(key, case, policy, Evidence()).owner
    owners = [configured] if configured is not None else [None, Ownership("dev", "history", ""), Ownership("main", "history", "")]
    not_a_pin = _not_a_pin(dev, main)
    sides = set()
    for owner in owners:
        for order in (None, *(RevOrder(o) for o in ORDERS)):
            for removed in (None, "a commit"):
                for taken, declined in ((False, False), (True, False), (False, True)):  # main's requirement taken or not (reconcile)
                    rule = _rule_for(Facts(key, case, owner, depends, order, removed, policy.side_for(key), dev is None, main is None, taken, declined, not_a_pin))
                    sides.add(rule.take if {"dev": dev, "main": main, "none": None}[rule.take] is not None else "none")
    return sides
