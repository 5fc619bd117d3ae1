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

from depsync import ui
from depsync.errors import DepsyncError
from depsync.workspace import CliOverrides

if TYPE_CHECKING:
    from depsync.cache import Request
    from depsync.findings import Finding
    from depsync.rules import CheckInputs


@dataclass(frozen=True)
class CheckOptions:
    root: Path
    ref: str | None = None
    output_format: str = "human"
    strict: bool = False
    deep: bool = False
    overrides: CliOverrides = CliOverrides()
    no_cache: bool = False  # neither read nor write the result cache


def pinned_uv(inputs: CheckInputs) -> tuple[list[str], str]:
    """(argv, version) of the uv the Dockerfile pins, run directly: the host uv when it is that
    version, else that version's binary from depsync's cache (fetched the first time only).

    Never `uv tool run uv@X`: that asks the package index every time (a DNS query and an
    HTTPS connection per call), which a gate that says --offline must not do."""
    from depsync.untrusted import uv_version_allowed
    from depsync.uv import host_uv, uv_binary, uv_version

    pins = [pin.version for d in inputs.dockerfiles for pin in d.uv_pins if uv_version_allowed(pin.version)]
    pinned = pins[0] if pins else None
    try:
        host: str | None = host_uv()
    except DepsyncError:
        if pinned is None:
            raise
        host = None
    if host is not None:
        version = uv_version([host])
        if pinned is None or version == pinned:
            return [host], version
    assert pinned is not None
    return [str(uv_binary(pinned))], pinned


def deep_findings(inputs: CheckInputs, root: Path) -> list[Finding]:
    """Real `uv lock --check --offline` with the uv version the Dockerfile pins.

    uv exits 1 when the lock is stale or cannot be re-resolved offline (either way: not
    fresh, a finding) and 2 on usage or configuration errors (an input error here).
    """
    import subprocess

    from depsync import process
    from depsync.redact import redact
    from depsync.rules import RULES
    from depsync.uv import error_summary

    from depsync.runners.local import sibling_copy

    argv, version = pinned_uv(inputs)
    env = dict(os.environ, NO_COLOR="1", UV_OFFLINE="1")
    try:
        # on a copy, like lock: uv runs build backends, which must not write the caller's tree
        with sibling_copy(root) as copy:
            result = process.run([*argv, "lock", "--check", "--offline"], cwd=copy, env=env, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise DepsyncError("uv lock --check timed out after 600s") from None
    if result.returncode == 0:
        return []
    summary = error_summary(redact(result.stderr or result.stdout)) or f"exit code {result.returncode}"
    if result.returncode == 1:
        return [
            RULES["uv-lock-check"].finding(
                inputs.config.lock, 0, f"uv {version} `uv lock --check --offline` fails: {summary}", "run `depsync lock` and commit uv.lock"
            )
        ]
    raise DepsyncError(f"uv {version} lock --check could not run: {summary}")


def exit_code(findings: list[Finding], strict: bool) -> int:
    from depsync.findings import Severity

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


def _findings_now(options: CheckOptions) -> tuple[list[Finding], bytes | None, CheckInputs | None]:
    """The static findings (from the cache when nothing changed, else computed and kept), the
    cache key of the result, and the loaded inputs when they were loaded."""
    from depsync import cache
    from depsync.findings import Finding, Severity

    use_cache = not options.no_cache and cache.enabled()
    key = request(options)
    if use_cache:
        found = cache.lookup(key)
        if found is not None:
            return [Finding(f[0], f[1], f[2], Severity(f[3]), f[4], f[5]) for f in found[1]["findings"]], found[0], None
    from depsync.redact import redact
    from depsync.rules import run_rules
    from depsync.workspace import load_inputs

    started = time.time_ns()
    with cache.recording() as opened:
        inputs = load_inputs(options.root, options.ref, options.overrides)
        findings = run_rules(inputs)
    if not use_cache:
        return findings, None, inputs
    files, globs, refs = _probes(inputs, options)
    manifest = cache.manifest(str(options.root), opened, files, globs, refs)
    stable = options.ref is not None or cache.unchanged_since(manifest["root"], manifest["files"], started)
    # kept redacted: the cache holds nothing the output would not show
    kept = [(f.file, f.line, f.rule, int(f.severity), redact(f.message), redact(f.fix)) for f in findings]
    return findings, cache.store(key, manifest, kept, stable), inputs


def render(findings: list[Finding], output_format: str, project: str, root: Path | None = None) -> str:
    from depsync.report.findings import to_github, to_json, to_plain

    if output_format == "sarif":  # depsync/report/sarif.py: paths relative to the working directory
        from depsync.report.sarif import to_sarif

        return to_sarif(findings, root=root or Path("."), base=Path.cwd()) + "\n"
    if output_format == "json":
        return to_json(findings, project=project) + "\n"
    if output_format == "github":
        text = to_github(findings)
        return text + "\n" if text else ""
    return to_plain(findings, project=project)


def _say_what_was_read(inputs: CheckInputs | None, options: CheckOptions) -> None:
    """-v: the files the check read, or that its result came from the cache."""
    if not ui.verbose():
        return
    if inputs is None:
        ui.detail("nothing changed since the last check of these files: its result, from the cache (--no-cache checks again)")
        return
    config = inputs.config
    read = [config.pyproject, config.lock, *(d.path for d in inputs.dockerfiles), *(p.path for p in inputs.protected)]
    where = f" at {options.ref}" if options.ref else ""
    ui.detail(f"checked{where}: {', '.join(read)}")


def run(options: CheckOptions) -> int:
    if options.deep and options.ref is not None:
        raise DepsyncError("--deep runs uv on the work tree; it cannot be combined with --ref")
    findings, key, inputs = _findings_now(options)
    if options.deep:
        from depsync.workspace import load_inputs

        loaded = inputs if inputs is not None else load_inputs(options.root, options.ref, options.overrides)
        findings = sorted(findings + deep_findings(loaded, options.root), key=lambda f: (f.file, f.line, f.rule))
        key = None  # uv's answer depends on its own cache and version: never replayed
    project = str(options.root) + (f" @ {options.ref}" if options.ref else "")
    _say_what_was_read(inputs, options)
    if options.output_format == "human" and ui.color(sys.stdout):  # a terminal, FORCE_COLOR or --color always
        from depsync.report.findings import print_human

        print_human(findings, sys.stdout, project=project, color=True)
    else:
        text = render(findings, options.output_format, project, options.root)
        sys.stdout.write(text)
        if key is not None:
            from depsync import cache
            from depsync.redact import redact

            # a SARIF log names paths from the working directory: kept per directory
            shown = project if options.output_format != "sarif" else f"{project}\0{os.getcwd()}"
            cache.add_rendering(key, options.output_format, shown, redact(text))
    return exit_code(findings, options.strict)
