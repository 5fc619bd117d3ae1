"""Run every rule family over the inputs, apply the inline suppressions, then the configured severities."""

from __future__ import annotations

from collections.abc import Iterable

from depsync.core.config import Config
from depsync.core.findings import Finding
from depsync.core.rules.inputs import CheckInputs, RuleFamily
from depsync.core.suppression import Suppressed


def families() -> list[RuleFamily]:
    from depsync.core.rules import (
        dockerfile,
        freshness,
        integrity,
        metadata,
        missing_members,
        protected,
        sources,
        unparsed,
        uv_version,
    )

    return [integrity.conflict_markers, dockerfile.check, unparsed.check, missing_members.check, freshness.check, metadata.check, uv_version.check, integrity.check, protected.check, sources.check, _image]


def _image(inputs: CheckInputs) -> Iterable[Finding]:
    """The image-* rules, imported only when `check --image` read an image (start-up stays lean)."""
    if inputs.image is None:
        return ()
    from depsync.core.rules import image

    return image.check(inputs)


def run_rules(inputs: CheckInputs) -> list[Finding]:
    """All findings, with per-rule severity overrides applied, sorted by file and line."""
    return check(inputs)[0]


def check(inputs: CheckInputs) -> tuple[list[Finding], list[Suppressed]]:
    """(findings, the ones `# depsync: ignore[...]` comments silenced). Suppressions apply before
    the severities: a comment for a rule configured `off` still counts as used."""
    from depsync.core.rules.registry import RULES
    from depsync.core.suppression import apply, toml_suppressions

    findings: list[Finding] = []
    for family in families():
        findings.extend(family(inputs))
    suppressions = [s for d in inputs.dockerfiles for s in d.suppressions]
    text = inputs.pyproject.text
    if "depsync:" in text:
        suppressions += toml_suppressions(text, inputs.config.pyproject)
    if not suppressions:
        return apply_severity(findings, inputs.config), []
    kept, suppressed, unused = apply(findings, suppressions, RULES)
    return apply_severity(kept + unused, inputs.config), sorted(suppressed, key=lambda s: (s.finding.file, s.finding.line, s.finding.rule))


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
