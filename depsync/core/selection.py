"""Which rules a check reports: `--select` and `--ignore`, as ruff has them (pure).

Both take rule ids, comma-separated and repeatable (`--select lock-stale,docker-not-locked`);
`ALL` selects every rule. `--ignore` wins over `--select` for the same id. An unknown id is a
usage error with the closest known one, so a misspelt id never silently selects nothing.
The selection picks among the rules that are on: a rule `[tool.depsync] severity` turns
`off` stays off.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from depsync.core.findings import Finding
from depsync.errors import DepsyncError
from depsync.records import record

ALL = "ALL"


@record
class Selection:
    selected: frozenset[str] | None = None  # None: every rule
    ignored: frozenset[str] = frozenset()

    @property
    def narrows(self) -> bool:
        """True when some finding may be left out (the rendering is not the whole result's)."""
        return self.selected is not None or bool(self.ignored)

    def reports(self, rule: str) -> bool:
        return rule not in self.ignored and (self.selected is None or rule in self.selected)

    def keep(self, findings: Iterable[Finding]) -> list[Finding]:
        return [f for f in findings if self.reports(f.rule)]


def rule_ids(values: Sequence[str] | None, option: str, known: Iterable[str]) -> frozenset[str] | None:
    """The ids a repeatable, comma-separated option names (`ALL`: every known id); None when
    the option was not given."""
    if not values:
        return None
    from depsync.core.config import suggestion

    pool = tuple(known)
    out: set[str] = set()
    for value in values:
        for part in value.split(","):
            rule = part.strip()
            if not rule:
                continue
            if rule == ALL:
                out.update(pool)
                continue
            if rule not in pool:
                raise DepsyncError(f"{option}: unknown rule id {rule[:100]!r}{suggestion(rule, pool)} (`depsync rule --all` lists them)")
            out.add(rule)
    if not out:
        raise DepsyncError(f"{option} names no rule id")
    return frozenset(out)


def selection(select: Sequence[str] | None, ignore: Sequence[str] | None, known: Iterable[str]) -> Selection:
    pool = tuple(known)
    return Selection(rule_ids(select, "--select", pool), rule_ids(ignore, "--ignore", pool) or frozenset())
