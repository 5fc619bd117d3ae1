"""`depsync check --fix` / `--diff`: apply the mechanical fixes (depsync/autofix.py), then check again.

The files change together or not at all: every edit is planned and verified in memory,
written atomically (temp file + rename, mode kept, never through a symlink) under one
signal-deferred block, and the project is checked again from disk. When that re-check
cannot read a file, or a fixed finding is still there, the files are put back byte for
byte and it is an error (exit 2).
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.shell import signals
from depsync.core.autofix import FixPlan, plan
from depsync.errors import DepsyncError
from depsync.shell.fileio import Snapshot, confined, write_atomic
from depsync.core.findings import Finding
from depsync.core.rules import CheckInputs, run_rules
from depsync.shell.workspace import CliOverrides, FileReader, load_inputs

if TYPE_CHECKING:
    from depsync.commands.check import CheckOptions


@dataclass(frozen=True)
class FixResult:
    plan: FixPlan
    findings: list[Finding]  # after the fixes (the re-check), or as before with --diff


def fix_plan(root: Path, inputs: CheckInputs, findings: list[Finding]) -> FixPlan:
    reader = FileReader(root)

    def read(path: str) -> str:
        text = reader.read_text(path)
        assert text is not None  # required=True raises instead
        return text

    return plan(inputs, findings, read)


def apply(root: Path, overrides: CliOverrides, inputs: CheckInputs, findings: list[Finding]) -> FixResult:
    """Write the fixes and check again; the files are restored when the re-check disagrees."""
    fixes = fix_plan(root, inputs, findings)
    if not fixes.changed:
        return FixResult(fixes, findings)
    targets = {path: confined(root, path, "fixed file") for path in fixes.changed}  # all refused before the first write
    snapshot = Snapshot(root, list(targets))
    try:
        with signals.deferred():
            for path, target in targets.items():
                write_atomic(target, fixes.after[path].encode("utf-8"))
        after = run_rules(load_inputs(root, None, overrides))
        _confirm(fixes, findings, after)
    except BaseException as exc:
        snapshot.restore()
        if isinstance(exc, DepsyncError):
            raise DepsyncError(f"--fix left the files as they were: {exc}") from None
        raise
    return FixResult(fixes, after)


def _confirm(fixes: FixPlan, before: list[Finding], after: list[Finding]) -> None:
    """Every fixed finding is gone: per file and rule, the count dropped by what was fixed."""
    counted_before = Counter((f.file, f.rule) for f in before)
    counted_after = Counter((f.file, f.rule) for f in after)
    fixed = Counter((f.file, f.rule) for f in fixes.fixed)
    for key, count in fixed.items():
        if counted_after[key] > counted_before[key] - count:
            raise DepsyncError(f"{key[1]} in {key[0]} is still reported after the fix; please report this")


def print_summary(fixes: FixPlan, *, applied: bool) -> None:
    """What was (or would be) fixed, one line per fix (a group of findings), on stderr: stdout
    stays the report or the diff. -q leaves it out."""
    from depsync.report import ui

    count = len(fixes.fixed)
    if count:
        verb = "fixed" if applied else "would fix"
        ui.note(f"{verb} {count} finding{'s' if count != 1 else ''} in {', '.join(fixes.changed)}:")
        for fix in fixes.fixes:
            ui.note(f"  {fix.file}: {fix.description}")
        if any(fix.relock for fix in fixes.fixes):
            ui.note(f"pyproject.toml {'changed' if applied else 'would change'}, so uv.lock must follow: run `depsync lock` and commit both")
    elif not fixes.unfixed:
        ui.note("nothing to fix")
    for item in fixes.unfixed:
        f = item.finding
        where = f"{f.file}:{f.line}" if f.line else f.file
        ui.note(f"not fixed: {where} {f.rule}: {item.reason}")


def run_check(options: CheckOptions, *, fix: bool, diff: bool) -> int:
    """`depsync check` with --fix, --diff or --format sarif (the plain check is commands/check.py)."""
    from depsync.commands.check import confirm_stale, deep_findings, exit_code
    from depsync.commands.check import say_what_was_read

    if options.ref is not None and (fix or diff):
        raise DepsyncError("--fix and --diff edit the work tree; they cannot be combined with --ref")
    if options.deep and options.ref is not None:
        raise DepsyncError("--deep runs uv on the work tree; it cannot be combined with --ref")
    inputs: CheckInputs | None = load_inputs(options.root, options.ref, options.overrides)
    assert inputs is not None
    findings = run_rules(inputs)
    checked = len(inputs.dockerfiles)
    say_what_was_read(inputs, options)
    if diff:
        fixes = fix_plan(options.root, inputs, findings)
        sys.stdout.write(fixes.diff())
        print_summary(fixes, applied=False)
        return 1 if fixes.changed else 0
    if fix:
        result = apply(options.root, options.overrides, inputs, findings)
        print_summary(result.plan, applied=True)
        findings = result.findings
        if result.plan.changed:
            inputs = load_inputs(options.root, None, options.overrides) if options.deep else None
    findings = confirm_stale(findings, inputs, options)
    if options.deep:
        assert inputs is not None
        findings = sorted(findings + deep_findings(inputs, options.root), key=lambda f: (f.file, f.line, f.rule))
    render(findings, options, checked)
    return exit_code(findings, options.strict)


def render(findings: list[Finding], options: CheckOptions, dockerfiles: int | None = None) -> None:
    """As `depsync check` renders (commands/check.py), never from or into the cache: the files just changed."""
    from depsync.report import ui
    from depsync.commands.check import render as render_text

    project = str(options.root) + (f" @ {options.ref}" if options.ref else "")
    if options.output_format == "human" and ui.color(sys.stdout):
        from depsync.report.findings import print_human

        print_human(findings, sys.stdout, project=project, color=True, dockerfiles=dockerfiles)
    else:
        sys.stdout.write(render_text(findings, options.output_format, project, options.root, dockerfiles))
