"""Run every rule family over the inputs, then apply the configured severities."""

from __future__ import annotations

from collections.abc import Iterable

from depsync.core.config import Config
from depsync.core.findings import Finding
from depsync.core.rules.inputs import CheckInputs, RuleFamily


def families() -> list[RuleFamily]:
    from depsync.core.rules import (
        dockerfile,
        freshness,
        integrity,
        metadata,
        protected,
        sources,
        unparsed,
        uv_version,
    )

    return [integrity.conflict_markers, dockerfile.check, unparsed.check, freshness.check, metadata.check, uv_version.check, integrity.check, protected.check, sources.check]


def run_rules(inputs: CheckInputs) -> list[Finding]:
    """All findings, with per-rule severity overrides applied, sorted by file and line."""
    findings: list[Finding] = []
    for family in families():
        findings.extend(family(inputs))
    return apply_severity(findings, inputs.config)


def apply_severity(findings: Iterable[Finding], config: Config) -> list[Finding]:
    out = []
    for finding in findings:
        if finding.rule in config.severity:
            level = config.severity[finding.rule]
            if level is None:
                continue
            finding = finding.with_severity(level)
        out.append(finding)
    return sorted(set(out), key=lambda f: (f.file, f.line, f.rule, f.message))
