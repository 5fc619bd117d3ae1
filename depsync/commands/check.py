"""`depsync check`: the offline consistency gate for PR CI.

Imports stay inside functions: a check answered from the result cache (depsync/cache.py)
never imports the models, the rules or packaging, and the human format imports rich only
when it colours (a terminal, FORCE_COLOR or --color always: depsync/ui.py). `--fix` and
`--diff` are commands/fix.py.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.report import ui
from depsync.errors import DepsyncError
from depsync.shell.workspace import CliOverrides

if TYPE_CHECKING:
    from depsync.shell.cache import Request
    from depsync.core.findings import Finding
    from depsync.core.rules import CheckInputs


@dataclass(frozen=True)
class CheckOptions:
    root: Path
    ref: str | None = None
    output_format: str = "human"
    strict: bool = False
    deep: bool = False
    static: bool = False  # never ask uv to confirm a static lock-stale verdict
    overrides: CliOverrides = CliOverrides()
    no_cache: bool = False  # neither read nor write the result cache


def offline_uv(inputs: CheckInputs) -> tuple[list[str], str] | None:
    """(argv, version) of a uv that runs without the network: the pinned one when the host uv
    is that version or depsync cached its binary, else the host's uv; None without either."""
    from depsync.core.trust import uv_version_allowed
    from depsync.shell.uv import available_uv

    pins = [pin.version for d in inputs.dockerfiles for pin in d.uv_pins if uv_version_allowed(pin.version)]
    return available_uv(pins[0] if pins else None, fetch=False)


def confirm_stale(findings: list[Finding], inputs: CheckInputs | None, options: CheckOptions) -> list[Finding]:
    """Before a static lock-stale error is reported, uv's own word (rules/freshness.py
    with_uv_word decides what it changes); runs only when there is such an error."""
    from depsync.core.findings import Severity
    from depsync.core.rules.freshness import with_uv_word

    if not any(f.rule == "lock-stale" and f.severity >= Severity.ERROR for f in findings):
        return findings
    if options.static:
        return with_uv_word(findings, "none", "", "uv not asked (--static)")
    if options.ref is not None:
        return with_uv_word(findings, "none", "", f"uv runs on the work tree, not on {options.ref}")
    from depsync.shell.uv_confirm import ask_uv
    from depsync.shell.workspace import load_inputs

    loaded = inputs if inputs is not None else load_inputs(options.root, options.ref, options.overrides)
    uv = offline_uv(loaded)
    if uv is None:
        return with_uv_word(findings, "none", "", "no uv that runs offline (neither the pinned one nor one on PATH) to confirm it")
    from depsync.core.rules import apply_severity

    word = ask_uv(uv[0], uv[1], options.root)
    reason = word.reason if word.verdict != "none" else f"uv {word.version} gave no verdict offline: {word.reason}"
    return apply_severity(with_uv_word(findings, word.verdict, word.version, reason), loaded.config)


def pinned_uv(inputs: CheckInputs) -> tuple[list[str], str]:
    """(argv, version) of the uv the Dockerfile pins (shell.uv.pinned_uv's policy), else the host's."""
    from depsync.core.trust import uv_version_allowed
    from depsync.shell.uv import pinned_uv as provide

    pins = [pin.version for d in inputs.dockerfiles for pin in d.uv_pins if uv_version_allowed(pin.version)]
    return provide(pins[0] if pins else None, "uv not found on PATH: install it (`pip install uv`) to use --deep")


def deep_findings(inputs: CheckInputs, root: Path) -> list[Finding]:
    """Real `uv lock --check --offline` with the uv version the Dockerfile pins.

    uv exits 1 when the lock is stale or cannot be re-resolved offline (either way: not
    fresh, a finding) and 2 on usage or configuration errors (an input error here).
    """

    from depsync.core.redact import redact
    from depsync.core.rules import RULES
    from depsync.shell.uv import error_summary
    from depsync.shell.uv_confirm import run_lock_check

    argv, version = pinned_uv(inputs)
    result = run_lock_check(argv, root)
    if result.returncode == 0:
        return []
    summary = error_summary(redact(result.stderr or result.stdout)) or f"exit code {result.returncode}"
    if result.returncode == 1:
        from depsync.core.rules.missing_members import FIX, missing_hint, missing_member_dirs

        # uv fails on a workspace whose member is not checked out: relocking would drop the member
        missing = missing_hint(missing_member_dirs(inputs))
        return [
            RULES["uv-lock-check"].finding(
                inputs.config.lock,
                0,
                f"uv {version} `uv lock --check --offline` fails: {summary}" + (f"; {missing}" if missing else ""),
                f"{FIX} (relocking now would drop the member)" if missing else "run `depsync lock` and commit uv.lock",
            )
        ]
    raise DepsyncError(f"uv {version} lock --check could not run: {summary}")


def exit_code(findings: list[Finding], strict: bool) -> int:
    from depsync.core.findings import Severity

    failing = Severity.WARNING if strict else Severity.ERROR
    return 1 if any(f.severity >= failing for f in findings) else 0


def request(options: CheckOptions) -> Request:
    """What the cache keys a check on (depsync/entry.py builds the same from the command line)."""
    overrides = options.overrides
    dockerfiles = None
    if overrides.dockerfiles is not None:
        dockerfiles = tuple((spec.path, tuple(sorted(spec.build_args.items()))) for spec in overrides.dockerfiles)
    return (os.path.abspath(options.root), options.ref, dockerfiles, overrides.owner_ref, overrides.lock, overrides.pyproject)


def _probes(inputs: CheckInputs, options: CheckOptions) -> tuple[list[str], list[str], list[str]]:
    """Besides the files it opened: the paths a check looked for (absent ones matter too: a
    Dockerfile created later changes the result), the globs it expanded, the refs it resolved."""
    config = inputs.config
    files = [config.pyproject, config.lock, *(spec.path for spec in config.dockerfiles), *config.protected_paths]
    if inputs.lock is not None:
        for package in inputs.lock.packages:
            if package.source.kind in ("editable", "directory", "virtual") and package.source.value != ".":
                files.append(f"{package.source.value}/pyproject.toml")
    globs: list[str] = []
    workspace = inputs.pyproject.uv.get("workspace")
    if options.ref is None and isinstance(workspace, dict):
        for pattern in workspace.get("members", []):
            globs.append(str(pattern))
    refs = [options.ref] if options.ref is not None else []
    if config.protected_paths:
        refs.append(config.owner_ref)
    return [os.path.normpath(f) for f in files if not os.path.isabs(f)], globs, refs


def _findings_now(options: CheckOptions) -> tuple[list[Finding], bytes | None, CheckInputs | None, tuple[str, ...]]:
    """The static findings (from the cache when nothing changed, else computed and kept), the
    cache key of the result, the loaded inputs when they were loaded, and the Dockerfiles checked."""
    from depsync.shell import cache
    from depsync.core.findings import Finding, Severity

    use_cache = not options.no_cache and cache.enabled()
    key = request(options)
    if use_cache:
        found = cache.lookup(key)
        if found is not None:
            checked = tuple(found[1].get("dockerfiles", ()))
            return [Finding(f[0], f[1], f[2], Severity(f[3]), f[4], f[5]) for f in found[1]["findings"]], found[0], None, checked
    from depsync.core.redact import redact
    from depsync.core.rules import run_rules
    from depsync.shell.workspace import load_inputs

    started = time.time_ns()
    with cache.recording() as opened:
        inputs = load_inputs(options.root, options.ref, options.overrides)
        findings = run_rules(inputs)
    checked = tuple(d.path for d in inputs.dockerfiles)
    if not use_cache:
        return findings, None, inputs, checked
    files, globs, refs = _probes(inputs, options)
    manifest = cache.manifest(str(options.root), opened, files, globs, refs, scan=not inputs.config.dockerfiles_configured)
    stable = options.ref is not None or cache.unchanged_since(manifest["root"], manifest["files"], started)
    # kept redacted: the cache holds nothing the output would not show
    kept = [(f.file, f.line, f.rule, int(f.severity), redact(f.message), redact(f.fix)) for f in findings]
    return findings, cache.store(key, manifest, kept, stable, checked), inputs, checked


def render(findings: list[Finding], output_format: str, project: str, root: Path | None = None, dockerfiles: int | None = None) -> str:
    from depsync.report.findings import to_github, to_json, to_plain

    from depsync.cli.root import repository_prefix

    if output_format == "sarif":  # depsync/report/sarif.py: paths relative to the repository root
        from depsync.report.sarif import to_sarif

        project_root = root or Path(".")
        return to_sarif(findings, root=project_root, base=_report_base(project_root)) + "\n"
    if output_format == "json":
        return to_json(findings, project=project) + "\n"
    if output_format == "github":  # GitHub resolves annotation paths from the repository root
        text = to_github(findings, prefix=repository_prefix(root or Path(".")))
        return text + "\n" if text else ""
    if output_format == "gitlab":
        from depsync.report.gitlab import to_gitlab

        return to_gitlab(findings, prefix=repository_prefix(root or Path("."))) + "\n"
    return to_plain(findings, project=project, dockerfiles=dockerfiles)


def _report_base(root: Path) -> Path:
    """Where report paths start: the repository root, else the working directory."""
    from depsync.cli.root import repository_root

    return repository_root(root) or Path.cwd()


def say_what_was_read(inputs: CheckInputs | None, options: CheckOptions, dockerfiles: tuple[str, ...] = ()) -> None:
    """-v: the files the check read and the Dockerfiles discovery left out (with why), or that
    its result came from the cache."""
    if not ui.verbose():
        return
    if inputs is None:
        ui.detail("nothing changed since the last check of these files: its result, from the cache (--no-cache checks again)")
        ui.detail(f"Dockerfiles checked: {', '.join(dockerfiles) or 'none'}")
        return
    config = inputs.config
    read = [config.pyproject, config.lock, *(d.path for d in inputs.dockerfiles), *(p.path for p in inputs.protected)]
    where = f" at {options.ref}" if options.ref else ""
    ui.detail(f"checked{where}: {', '.join(read)}")
    how = "configured" if config.dockerfiles_configured else "found in the project"
    ui.detail(f"Dockerfiles checked ({how}): {', '.join(d.path for d in inputs.dockerfiles) or 'none'}")
    for path, reason in inputs.dockerfiles_skipped:
        ui.detail(f"Dockerfile not checked: {path + ': ' if path else ''}{reason}")


def run(options: CheckOptions) -> int:
    if options.deep and options.ref is not None:
        raise DepsyncError("--deep runs uv on the work tree; it cannot be combined with --ref")
    findings, key, inputs, checked = _findings_now(options)
    if any(f.rule == "lock-stale" for f in findings):
        # the static findings stay cached, but uv confirms a lock-stale verdict on every run (its
        # answer depends on its version and cache): no rendering is kept, and entry.py's replay
        # leaves such a result to the CLI (cache.replay)
        key = None
        findings = confirm_stale(findings, inputs, options)
    if options.deep:
        from depsync.shell.workspace import load_inputs

        loaded = inputs if inputs is not None else load_inputs(options.root, options.ref, options.overrides)
        findings = sorted(findings + deep_findings(loaded, options.root), key=lambda f: (f.file, f.line, f.rule))
        key = None  # uv's answer depends on its own cache and version: never replayed
    project = str(options.root) + (f" @ {options.ref}" if options.ref else "")
    say_what_was_read(inputs, options, checked)
    if options.output_format == "human" and ui.color(sys.stdout):  # a terminal, FORCE_COLOR or --color always
        from depsync.report.findings import print_human

        print_human(findings, sys.stdout, project=project, color=True, dockerfiles=len(checked))
    else:
        text = render(findings, options.output_format, project, options.root, len(checked))
        sys.stdout.write(text)
        if key is not None:
            from depsync.shell import cache
            from depsync.core.redact import redact

            # a SARIF log names paths from the working directory: kept per directory
            shown = project if options.output_format != "sarif" else f"{project}\0{os.getcwd()}"
            cache.add_rendering(key, options.output_format, shown, redact(text))
    return exit_code(findings, options.strict)
