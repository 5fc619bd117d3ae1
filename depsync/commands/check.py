"""`depsync check`: the offline consistency gate for PR CI.

Imports stay inside functions: a check answered from the result cache (depsync/cache.py)
never imports the models, the rules or packaging, and the human format imports rich only
when it colours (a terminal, FORCE_COLOR or --color always: depsync/ui.py). `--fix` and
`--diff` (at the end) plan the fixes, show or apply them, and check again.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.core.selection import Selection
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.report import ui
from depsync.shell.workspace import CliOverrides

if TYPE_CHECKING:
    from depsync.core.autofix import FixPlan
    from depsync.core.findings import Finding
    from depsync.core.model.dockerfile import Dockerfile
    from depsync.core.rules.inputs import CheckInputs
    from depsync.core.suppression import Suppressed
    from depsync.shell.cache import Request


@record
class CheckOptions:
    root: Path
    ref: str | None = None
    output_format: str = "human"
    strict: bool = False
    deep: bool = False
    static: bool = False  # never ask uv to confirm a static lock-stale verdict
    overrides: CliOverrides = CliOverrides()
    no_cache: bool = False  # neither read nor write the result cache
    selection: Selection = Selection()  # --select / --ignore: what is reported (the cache keeps every finding)
    exit_zero: bool = False  # --exit-zero: findings do not fail the run
    image: str | None = None  # --image: None not asked, "" the lock runner's image, else the reference given


def confirm_stale(findings: list[Finding], inputs: CheckInputs | None, options: CheckOptions) -> list[Finding]:
    """Before a static lock-stale error is reported, uv's own word (shell/uv_confirm.py), unless
    --static or --ref says not to run uv on the work tree."""
    from depsync.core.findings import Severity
    from depsync.core.rules.freshness import with_uv_word

    if not any(f.rule == "lock-stale" and f.severity >= Severity.ERROR for f in findings):
        return findings
    if options.static:
        return with_uv_word(findings, "none", "", "uv not asked (--static)")
    if options.ref is not None:
        return with_uv_word(findings, "none", "", f"uv runs on the work tree, not on {options.ref}")
    from depsync.shell import uv_confirm
    from depsync.shell.workspace import load_inputs

    loaded = inputs if inputs is not None else load_inputs(options.root, options.ref, options.overrides)
    return uv_confirm.confirm_stale(findings, loaded, options.root)


def pinned_uv(inputs: CheckInputs) -> tuple[list[str], str]:
    """(argv, version) of the uv the Dockerfile pins (shell.uv.pinned_uv's policy), else the host's."""
    from depsync.shell.uv import pinned_uv as provide
    from depsync.shell.uv_confirm import pinned_version

    return provide(pinned_version(inputs), "uv not found on PATH: install it (`pip install uv`) to use --deep")


def deep_findings(inputs: CheckInputs, root: Path) -> list[Finding]:
    """Real `uv lock --check --offline` with the uv version the Dockerfile pins, on the lock's
    work copy (the local runner's), never in the checkout.

    uv exits 1 when the lock is stale or cannot be re-resolved offline (either way: not
    fresh, a finding) and 2 on usage or configuration errors (an input error here).
    """

    from depsync.core.redact import redact
    from depsync.core.rules.registry import RULES
    from depsync.shell.runners.local import LocalRunner
    from depsync.shell.uv import error_summary
    from depsync.shell.uv_confirm import lock_check_env, pinned_version

    from depsync.core.rules.missing_members import missing_member_dirs

    missing = missing_member_dirs(inputs)
    if missing:
        # uv fails on a workspace whose members are not there, for that reason alone: the
        # members-not-checked-out finding says so once, and uv's word waits for a full checkout
        count = len(missing)
        ui.note(f"--deep: uv was not run: {count} workspace member{'s are' if count != 1 else ' is'} in a git submodule that is not checked out "
                "(members-not-checked-out); `git submodule update --init`, then check again")
        return []
    _, version = pinned_uv(inputs)  # the uv that runs (one line when there is none)
    # on the lock's work copy, never the checkout: uv may build a package whose metadata is
    # dynamic, and its build backend writes where it runs (the copy, with the version
    # stand-ins the relock has for backends that read git)
    result = LocalRunner(pinned_version(inputs), environment=lock_check_env()).lock(root.resolve(), ["--check", "--offline"], 600)
    if result.returncode == 0:
        return []
    summary = error_summary(redact(result.output)) or f"exit code {result.returncode}"
    if result.returncode == 1:
        return [
            RULES["uv-lock-check"].finding(
                inputs.config.lock, 0, f"uv {version} `uv lock --check --offline` fails: {summary}", "run `depsync lock` and commit uv.lock"
            )
        ]
    raise DepsyncError(f"uv {version} lock --check could not run: {summary}")


def exit_code(findings: list[Finding], strict: bool, exit_zero: bool = False) -> int:
    from depsync.core.findings import Severity

    if exit_zero:
        return 0
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
    from depsync.shell.workspace import uv_settings_candidates

    files = [config.pyproject, config.lock, *(spec.path for spec in config.dockerfiles), *config.protected_paths]
    files += uv_settings_candidates(config, inputs.pyproject)  # a uv.toml created later changes the result
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
        # HEAD: on the upstream branch nothing is compared; the owner's branch name (`dev`): a
        # local one makes a missing owner ref a note (workspace._protected)
        refs += [config.owner_ref, config.upstream_ref, "HEAD", config.owner_ref.rsplit("/", 1)[-1]]
    return [os.path.normpath(f) for f in files if not os.path.isabs(f)], globs, refs


SuppressedRow = tuple[str, int, str, int]  # file, line, rule of a suppressed finding, line of the comment


def suppressed_rows(suppressed: list[Suppressed]) -> list[SuppressedRow]:
    """What -v says of each suppressed finding, as the result cache keeps it."""
    return [(s.finding.file, s.finding.line, s.finding.rule, s.comment_line) for s in suppressed]


def _findings_now(options: CheckOptions) -> tuple[list[Finding], bytes | None, CheckInputs | None, tuple[str, ...], list[SuppressedRow]]:
    """The static findings (from the cache when nothing changed, else computed and kept), the
    cache key of the result, the loaded inputs when they were loaded, the Dockerfiles checked
    and the findings inline comments suppressed (for -v)."""
    from depsync.core.findings import Finding, Severity
    from depsync.shell import cache

    if options.image is not None:  # the image's facts are cached by image id (shell/runners/image_env.py), the result is not
        from depsync.core.rules.run import check as check_rules
        from depsync.shell.workspace import load_inputs

        inputs = with_image(load_inputs(options.root, options.ref, options.overrides), options)
        findings, suppressed = check_rules(inputs)
        return findings, None, inputs, tuple(d.path for d in inputs.dockerfiles), suppressed_rows(suppressed)
    use_cache = not options.no_cache and cache.enabled()
    key = request(options)
    if use_cache:
        found = cache.lookup(key)
        if found is not None:
            checked = tuple(found[1].get("dockerfiles", ()))
            silenced = [(str(s[0]), int(s[1]), str(s[2]), int(s[3])) for s in found[1].get("suppressed", ())]
            return [Finding(f[0], f[1], f[2], Severity(f[3]), f[4], f[5], tuple(f[6]) if len(f) > 6 else ()) for f in found[1]["findings"]], found[0], None, checked, silenced
    from depsync.core.redact import redact
    from depsync.core.rules.run import check
    from depsync.shell.workspace import load_inputs

    started = time.time_ns()
    with cache.recording() as opened:
        inputs = load_inputs(options.root, options.ref, options.overrides)
        findings, suppressed = check(inputs)
    checked = tuple(d.path for d in inputs.dockerfiles)
    rows = suppressed_rows(suppressed)
    if not use_cache:
        return findings, None, inputs, checked, rows
    files, globs, refs = _probes(inputs, options)
    manifest = cache.manifest(str(options.root), opened, files, globs, refs, scan=not inputs.config.dockerfiles_configured)
    stable = options.ref is not None or cache.unchanged_since(manifest["root"], manifest["files"], started)
    # kept redacted: the cache holds nothing the output would not show
    kept = [(f.file, f.line, f.rule, int(f.severity), redact(f.message), redact(f.fix), [redact(i) for i in f.items]) for f in findings]
    return findings, cache.store(key, manifest, kept, stable, checked, rows), inputs, checked, rows


def _image_summary(inputs: CheckInputs | None) -> dict[str, object] | None:
    if inputs is None or inputs.image is None:
        return None
    from depsync.core.rules.image import image_summary

    return image_summary(inputs.image)


def image_dockerfile(inputs: CheckInputs) -> Dockerfile | None:
    """The CI Dockerfile: the first configured one that was read, else the first one found."""
    by_path = {d.path: d for d in inputs.dockerfiles}
    for spec in inputs.config.dockerfiles:
        if spec.path in by_path:
            return by_path[spec.path]
    return inputs.dockerfiles[0] if inputs.dockerfiles else None


def with_image(inputs: CheckInputs, options: CheckOptions) -> CheckInputs:
    """The inputs with what the CI base image ships (`--image`). The image is the one `depsync
    lock` would run in: --image REF, else [tool.depsync] image, else the CI Dockerfile's FROM
    (a `docker/.ngc_version.dev` hint first). No engine, no such image or no derivable image:
    a note, and the check goes on without the image rules; an error (exit 2) when REF was given."""
    from depsync.records import replace
    from depsync.shell.runners.choose import image_from_dockerfile
    from depsync.shell.runners.image_env import ImageUnavailable, read_image_env
    from depsync.shell.workspace import FileReader

    dockerfile = image_dockerfile(inputs)
    explicit = bool(options.image)
    reference = options.image or inputs.config.image or image_from_dockerfile(FileReader(options.root, options.ref), dockerfile)
    if not reference:
        ui.note("--image: no image to read (the CI Dockerfile's FROM uses a variable with no default, or there is no CI Dockerfile): "
                "pass --image REF or set [tool.depsync] image; the image rules did not run")
        return inputs
    try:
        image, cached = read_image_env(reference, use_cache=not options.no_cache)
    except ImageUnavailable as exc:
        if explicit:
            raise DepsyncError(f"--image {reference}: {exc.message}") from None
        ui.note(f"--image: {exc.message}; the image rules did not run")
        return inputs
    for note in image.notes:
        ui.note(f"--image {reference}: {note}")
    if not image.python:
        ui.note(f"--image {reference}: only the image config was read (no Python ran), so only its CUDA is known")
    ui.note(f"image: {image.describe()}{', from the cache' if cached else ''}; checked against {dockerfile.path if dockerfile else 'no Dockerfile'}")
    return replace(inputs, image=image, image_dockerfile=dockerfile.path if dockerfile else None)


def render(findings: list[Finding], output_format: str, project: str, root: Path | None = None, dockerfiles: int | None = None, image: dict[str, object] | None = None) -> str:
    from depsync.report.findings import to_github, to_json, to_plain

    if output_format == "sarif":  # depsync/report/sarif.py: paths relative to the repository root
        from depsync.report.sarif import to_sarif

        project_root = root or Path(".")
        return to_sarif(findings, root=project_root, base=_report_base(project_root)) + "\n"
    if output_format == "json":
        return to_json(findings, project=project, image=image) + "\n"
    if output_format == "github":  # GitHub resolves annotation paths from the repository root
        from depsync.shell.git import repository_prefix  # only these formats need the repository

        text = to_github(findings, prefix=repository_prefix(root or Path(".")))
        return text + "\n" if text else ""
    if output_format == "gitlab":
        from depsync.report.gitlab import to_gitlab
        from depsync.shell.git import repository_prefix

        return to_gitlab(findings, prefix=repository_prefix(root or Path("."))) + "\n"
    return to_plain(findings, project=project, dockerfiles=dockerfiles)


def _report_base(root: Path) -> Path:
    """Where report paths start: the repository root, else the working directory."""
    from depsync.shell.git import repository_root

    return repository_root(root) or Path.cwd()


def say_suppressed(rows: list[SuppressedRow], selection: Selection) -> None:
    """-v: each finding an inline comment suppressed (not counted, not shown otherwise), of the
    rules --select/--ignore report."""
    if not ui.verbose():
        return
    rows = [row for row in rows if selection.reports(row[2])]
    for file, line, rule, comment in rows:
        where = f"{file}:{line}" if line else file
        ui.detail(f"suppressed: {where} {rule} (# depsync: ignore on line {comment})")
    if rows:
        ui.detail(f"{len(rows)} finding{'s' if len(rows) != 1 else ''} suppressed by `# depsync: ignore[...]` comments")


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
    findings, key, inputs, checked, suppressed = _findings_now(options)
    if any(f.rule == "lock-stale" for f in findings) and (options.selection.reports("lock-stale") or options.selection.reports("static-model-disagrees")):
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
    say_suppressed(suppressed, options.selection)
    if options.selection.narrows:
        findings = options.selection.keep(findings)
        key = None  # a rendering of part of the result is not the result's rendering
    if options.output_format == "human" and ui.color(sys.stdout):  # a terminal, FORCE_COLOR or --color always
        from depsync.report.findings import print_human

        print_human(findings, sys.stdout, project=project, color=True, dockerfiles=len(checked))
    else:
        text = render(findings, options.output_format, project, options.root, len(checked), _image_summary(inputs))
        sys.stdout.write(text)
        if key is not None:
            from depsync.core.redact import redact
            from depsync.shell import cache

            # a SARIF log names paths from the working directory: kept per directory
            shown = project if options.output_format != "sarif" else f"{project}\0{os.getcwd()}"
            cache.add_rendering(key, options.output_format, shown, redact(text))
    return exit_code(findings, options.strict, options.exit_zero)


# -- --fix and --diff -----------------------------------------------------------------------------


@record
class FixResult:
    plan: FixPlan
    findings: list[Finding]  # after the fixes (the re-check), or as before with --diff


def fix_plan(root: Path, inputs: CheckInputs, findings: list[Finding]) -> FixPlan:
    from depsync.core.autofix import plan
    from depsync.shell.workspace import FileReader

    reader = FileReader(root)

    def read(path: str) -> str:
        text = reader.read_text(path)
        assert text is not None  # required=True raises instead
        return text

    return plan(inputs, findings, read)


def apply(root: Path, overrides: CliOverrides, inputs: CheckInputs, findings: list[Finding]) -> FixResult:
    """Write the fixes and check again; the files are restored when the re-check disagrees."""
    from depsync.core.rules.run import run_rules
    from depsync.shell import signals
    from depsync.shell.fileio import Snapshot, confined, write_atomic
    from depsync.shell.workspace import load_inputs

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
    from collections import Counter

    counted_before = Counter((f.file, f.rule) for f in before)
    counted_after = Counter((f.file, f.rule) for f in after)
    fixed = Counter((f.file, f.rule) for f in fixes.fixed)
    for key, count in fixed.items():
        if counted_after[key] > counted_before[key] - count:
            raise DepsyncError(f"{key[1]} in {key[0]} is still reported after the fix; please report this")


def print_fix_summary(fixes: FixPlan, *, applied: bool) -> None:
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
    """`depsync check` with --fix or --diff: plan the fixes, show or apply them, check again."""
    from depsync.core.rules.run import check
    from depsync.shell.workspace import load_inputs

    if options.ref is not None and (fix or diff):
        raise DepsyncError("--fix and --diff edit the work tree; they cannot be combined with --ref")
    if options.deep and options.ref is not None:
        raise DepsyncError("--deep runs uv on the work tree; it cannot be combined with --ref")
    inputs: CheckInputs | None = load_inputs(options.root, options.ref, options.overrides)
    assert inputs is not None
    if options.image is not None:
        inputs = with_image(inputs, options)
    found, suppressed = check(inputs)
    findings = options.selection.keep(found)  # like ruff: --select/--ignore pick what is fixed too
    checked = len(inputs.dockerfiles)
    say_what_was_read(inputs, options)
    say_suppressed(suppressed_rows(suppressed), options.selection)
    if diff:
        fixes = fix_plan(options.root, inputs, findings)
        sys.stdout.write(fixes.diff())
        print_fix_summary(fixes, applied=False)
        return 1 if fixes.changed and not options.exit_zero else 0
    if fix:
        result = apply(options.root, options.overrides, inputs, findings)
        print_fix_summary(result.plan, applied=True)
        findings = result.findings
        if result.plan.changed:
            inputs = load_inputs(options.root, None, options.overrides) if options.deep else None
    findings = confirm_stale(findings, inputs, options)
    if options.deep:
        assert inputs is not None
        findings = sorted(findings + deep_findings(inputs, options.root), key=lambda f: (f.file, f.line, f.rule))
    _render_fixed(options.selection.keep(findings), options, checked)
    return exit_code(options.selection.keep(findings), options.strict, options.exit_zero)


def _render_fixed(findings: list[Finding], options: CheckOptions, dockerfiles: int | None = None) -> None:
    """As the check renders, never from or into the cache: the files just changed."""
    from depsync.report import ui

    project = str(options.root) + (f" @ {options.ref}" if options.ref else "")
    if options.output_format == "human" and ui.color(sys.stdout):
        from depsync.report.findings import print_human

        print_human(findings, sys.stdout, project=project, color=True, dockerfiles=dockerfiles)
    else:
        sys.stdout.write(render(findings, options.output_format, project, options.root, dockerfiles))
