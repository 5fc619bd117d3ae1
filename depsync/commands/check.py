"""`depsync check`: the offline consistency gate for PR CI."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from depsync.errors import DepsyncError
from depsync.untrusted import uv_version_allowed
from depsync.findings import Finding, Severity
from depsync.report.findings import print_human, to_github, to_json
from depsync.rules import RULES, CheckInputs, run_rules
from depsync.workspace import CliOverrides, load_inputs


@dataclass(frozen=True)
class CheckOptions:
    root: Path
    ref: str | None = None
    output_format: str = "human"
    strict: bool = False
    deep: bool = False
    overrides: CliOverrides = CliOverrides()


def deep_findings(inputs: CheckInputs, root: Path) -> list[Finding]:
    """Real `uv lock --check --offline` with the uv version the Dockerfile pins.

    uv exits 1 when the lock is stale or cannot be re-resolved offline (either way: not
    fresh, a finding) and 2 on usage or configuration errors (an input error here).
    """
    from depsync.uv import error_summary, run_uv

    pins = [pin.version for d in inputs.dockerfiles for pin in d.uv_pins if uv_version_allowed(pin.version)]
    version = pins[0] if pins else None
    result = run_uv(["lock", "--check", "--offline"], root, version)
    if result.returncode == 0:
        return []
    summary = error_summary(result.stderr or result.stdout) or f"exit code {result.returncode}"
    if result.returncode == 1:
        return [
            RULES["uv-lock-check"].finding(
                inputs.config.lock, 0, f"uv {result.version} `uv lock --check --offline` fails: {summary}", "run `depsync lock` and commit uv.lock"
            )
        ]
    raise DepsyncError(f"uv {result.version} lock --check could not run: {summary}")


def exit_code(findings: list[Finding], strict: bool) -> int:
    failing = Severity.WARNING if strict else Severity.ERROR
    return 1 if any(f.severity >= failing for f in findings) else 0


def run(options: CheckOptions) -> int:
    inputs = load_inputs(options.root, options.ref, options.overrides)
    findings = run_rules(inputs)
    if options.deep:
        if options.ref is not None:
            raise DepsyncError("--deep runs uv on the work tree; it cannot be combined with --ref")
        findings = sorted(findings + deep_findings(inputs, options.root), key=lambda f: (f.file, f.line, f.rule))
    project = str(options.root) + (f" @ {options.ref}" if options.ref else "")
    if options.output_format == "json":
        print(to_json(findings, project=project))
    elif options.output_format == "github":
        text = to_github(findings)
        if text:
            print(text)
    else:
        print_human(findings, sys.stdout, project=project)
    return exit_code(findings, options.strict)
