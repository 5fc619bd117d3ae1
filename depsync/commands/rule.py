"""`depsync rule RULE-ID` / `depsync rule --all`: a rule's documentation, like `ruff rule`."""

from __future__ import annotations

import json

from depsync.core.findings import did_you_mean
from depsync.errors import DepsyncError
from depsync.records import record


@record
class RuleOptions:
    rule: str | None = None
    all: bool = False
    output_format: str = "text"


def _as_json(rule_ids: list[str]) -> str:
    from depsync.core.rules.docs import DOCS
    from depsync.core.rules.registry import RULES

    return json.dumps(
        [
            {
                "id": rule_id,
                "severity": str(RULES[rule_id].severity),
                "fixable": RULES[rule_id].fixable,
                "summary": RULES[rule_id].summary,
                "why": DOCS[rule_id].why,
                "example": DOCS[rule_id].example,
                "fix": DOCS[rule_id].fix,
            }
            for rule_id in rule_ids
        ],
        indent=2,
    )


def table() -> str:
    """Every rule on one line: id, default severity, whether --fix fixes it, what it finds."""
    from depsync.core.rules.registry import RULES

    width = max(len(rule_id) for rule_id in RULES)
    lines = [f"{'rule':<{width}}  {'default':<7}  fix  finds"]
    for rule in RULES.values():
        lines.append(f"{rule.id:<{width}}  {str(rule.severity):<7}  {'yes' if rule.fixable else '   '}  {rule.summary}")
    lines += ["", "`depsync rule RULE-ID` shows a rule's page; `fix: yes` rules are fixed by `depsync check --fix`."]
    return "\n".join(lines) + "\n"


def run(options: RuleOptions) -> int:
    from depsync.core.rules.docs import render
    from depsync.core.rules.registry import RULES

    if options.all == (options.rule is not None):
        raise DepsyncError("name one rule (depsync rule docker-stale-no-install) or give --all")
    if options.all:
        print(_as_json(list(RULES)) if options.output_format == "json" else table(), end="\n" if options.output_format == "json" else "")
        return 0
    assert options.rule is not None
    rule = RULES.get(options.rule.strip().lower())
    if rule is None:
        guess = did_you_mean(options.rule, RULES)
        hint = f" (did you mean {guess!r}?)" if guess else ""
        raise DepsyncError(f"unknown rule {options.rule!r}{hint} (`depsync rule --all` lists them)")
    print(_as_json([rule.id]) if options.output_format == "json" else render(rule), end="\n" if options.output_format == "json" else "")
    return 0
