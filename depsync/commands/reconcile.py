"""`depsync reconcile`: the sync-pipeline step after `git merge origin/main` on a branch from dev.

Order: resolve dev, main and their merge-base; plan (three-way sources, metadata);
restore dev's triple and protected paths with the plan applied; relock; stage; check;
report. Nothing is written before the plan is complete, and every file is put back
byte-for-byte when a later step fails.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from depsync import faults, git, signals
from depsync.config import Config
from depsync.errors import DepsyncError
from depsync.fileio import Snapshot, confined, output_file, write_atomic, write_report
from depsync.findings import Finding, Severity
from depsync.lockdiff import PackageChange, diff_locks
from depsync.merge import policy_of, reconciled_pyproject
from depsync.metadata_sync import MetadataUpdate
from depsync.model.lock import Lock
from depsync.model.pyproject import Pyproject
from depsync.model.tomltext import conflict_marker_lines
from depsync.rules import run_rules
from depsync.runners import Runner
from depsync.rules.sources import required_names
from depsync.sources import Evidence, SourceDecision, merge_sources, normalize
from depsync.uv import error_summary
from depsync.workspace import CliOverrides, FileReader, ci_dockerfile, config_of, load_inputs


@dataclass(frozen=True)
class ReconcileOptions:
    root: Path
    dev: str | None = None
    main: str | None = None
    no_merge: bool = False
    dry_run: bool = False
    no_lock: bool = False
    fetch_revs: bool = True
    summary: Path | None = None
    plan_json: Path | None = None
    timeout: float = 1800
    runner: str = "auto"  # where uv relocks: auto (docker when an engine and image are there), docker, local
    image: str | None = None
    memory: str | None = None  # docker runner: the container's memory limit


@dataclass
class Reconciliation:
    """Everything the reports need: refs, decisions, files, lock changes, findings."""

    dev_ref: str
    main_ref: str
    dev_commit: str
    main_commit: str
    base_commit: str
    decisions: list[SourceDecision]
    metadata: list[MetadataUpdate]
    restored: list[str] = field(default_factory=list)
    lock_changes: list[PackageChange] | None = None
    lock_note: str = ""
    findings: list[Finding] = field(default_factory=list)
    dry_run: bool = False

    @property
    def needs_review(self) -> bool:
        return (
            any(d.needs_review for d in self.decisions)
            or any(m.needs_review for m in self.metadata)
            or any(f.severity >= Severity.ERROR for f in self.findings)
        )


def _evidence(root: Path, config: Config, dev_text: str, base: str, dev: str, candidates: list[SourceDecision], fetch: bool) -> Evidence:
    from depsync.revs import rev_order

    history: dict[str, tuple[str, ...]] = {}
    order: dict[str, str] = {}
    for decision in candidates:
        spelled = "[-_.]".join(re.escape(part) for part in re.split(r"[-_.]+", decision.name))
        pattern = rf"^[[:space:]]*{spelled}[[:space:]]*="  # git -G takes POSIX regexes
        # dev's own commits since the merge-base that touched this source, or dev's older history for additions
        span = dev if decision.case == "main-added" else f"{base}..{dev}"
        found = git.commits_touching(root, span, config.pyproject, pattern)
        if found:
            history[canonicalize_name(decision.name)] = tuple(f"dev commit {line}" for line in found[:5])
        a, b = decision.dev, decision.main
        if fetch and isinstance(a, dict) and isinstance(b, dict) and a.get("git") and a.get("git") == b.get("git") and a.get("rev") and b.get("rev"):
            order[canonicalize_name(decision.name)] = rev_order(str(a["git"]), str(a["rev"]), str(b["rev"]))
    names = required_names(Pyproject.from_text(dev_text, config.pyproject))
    return Evidence(frozenset(names), history, order)


def plan(options: ReconcileOptions) -> tuple[Reconciliation, Config, dict[str, bytes | None], str]:
    """Decide everything in memory. Returns the reconciliation, config, target file contents and dev's lock path."""
    root = options.root
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    merging = git.merge_head(root)
    work = FileReader(root)
    # the work tree may hold conflict markers: HEAD (the branch made from dev) knows the config then
    dev_ref = options.dev or config_of(work, FileReader(root, "HEAD")).owner_ref
    dev_commit = git.resolve(root, dev_ref)
    config = config_of(FileReader(root, dev_commit), work)  # dev owns the policy
    main_ref = options.main or (git.describe_ref(root, merging) if merging and not options.no_merge else config.upstream_ref)
    main_commit = git.resolve(root, main_ref)
    base_commit = git.merge_base(root, dev_commit, main_commit)
    readers = {side: FileReader(root, commit) for side, commit in (("base", base_commit), ("dev", dev_commit), ("main", main_commit))}
    texts = {side: reader.read_text(config.pyproject, required=side == "dev") or "" for side, reader in readers.items()}
    for side, text in texts.items():
        if conflict_marker_lines(text):
            raise DepsyncError(f"{config.pyproject} at {side} has conflict markers")
    projects = {side: Pyproject.from_text(text, f"{side}:{config.pyproject}") for side, text in texts.items()}  # validates
    sources = {side: project.uv.get("sources", {}) for side, project in projects.items()}

    # evidence is gathered only for the names where dev and main differ
    first = merge_sources(sources["base"], sources["dev"], sources["main"], policy_of(config))
    interesting = [d for d in first if normalize(d.dev) != normalize(d.main)]
    evidence = _evidence(root, config, texts["dev"], base_commit, dev_commit, interesting, options.fetch_revs)
    new_pyproject, decisions, metadata = reconciled_pyproject(texts["base"], texts["dev"], texts["main"], config, evidence)

    targets: dict[str, bytes | None] = {config.pyproject: new_pyproject.encode()}
    dev_reader = readers["dev"]
    for path in (config.lock, *(d.path for d in config.dockerfiles), *config.protected_paths):
        targets.setdefault(path, dev_reader.read_bytes(path))
    for path in targets:
        confined(root, path, "a file reconcile writes")  # refused before anything is written
    # what the closing check will read, parsed now: a bad dev file is exit 2 before any write
    load_inputs(root, dev_commit, CliOverrides(owner_ref=dev_commit))
    result = Reconciliation(
        dev_ref, main_ref, git.short(root, dev_commit), git.short(root, main_commit), git.short(root, base_commit), decisions, metadata, dry_run=options.dry_run
    )
    for path, data in targets.items():
        current = (root / path).read_bytes() if (root / path).is_file() else None
        if path not in (config.pyproject, config.lock) and current != data:
            result.restored.append(path)
    return result, config, targets, dev_commit


def _runner(options: ReconcileOptions, config: Config, dev_commit: str) -> tuple[Runner, str]:
    """The lock command's runner choice, made from dev's pyproject and Dockerfile."""
    from depsync.commands.lock import LockOptions, choose_runner

    reader = FileReader(options.root, dev_commit)
    pyproject = Pyproject.from_text(reader.read_text(config.pyproject) or "", config.pyproject)
    dockerfile, path = ci_dockerfile(reader, config)
    lock_options = LockOptions(options.root, options.runner, options.image, timeout=options.timeout, memory=options.memory)
    return choose_runner(lock_options, config, pyproject, dockerfile, path)


def run(options: ReconcileOptions) -> int:
    from depsync.report.reconcile import to_json, to_markdown

    for path, what in ((options.summary, "--summary"), (options.plan_json, "--plan-json")):
        if path:
            output_file(path, what)  # a bad one fails before anything is written
    result, config, targets, dev_commit = plan(options)

    def report() -> str:
        markdown = to_markdown(result)
        if options.summary:
            write_report(options.summary, markdown)
        if options.plan_json:
            write_report(options.plan_json, to_json(result))
        return markdown

    if options.dry_run:
        markdown = report()
    else:
        staging = bool(git.merge_head(options.root) or git.unmerged_paths(options.root))
        # the index too: staging is undone with the files when a later phase fails
        snapshot = Snapshot(options.root, list(targets), [git.git_dir(options.root) / "index"] if staging else [])
        try:
            _apply(options, result, config, targets, dev_commit, staging)
            markdown = report()
        except BaseException:
            snapshot.restore()  # every phase, every failure and every handled signal: as before
            raise
    print(markdown, file=sys.stdout)
    return 1 if result.needs_review else 0


def _apply(options: ReconcileOptions, result: Reconciliation, config: Config, targets: dict[str, bytes | None], dev_commit: str, staging: bool) -> None:
    root = options.root
    faults.point("reconcile:before-write")
    for path, data in targets.items():
        file = confined(root, path)
        if data is None:
            file.unlink(missing_ok=True)
        elif not file.is_file() or file.read_bytes() != data:
            write_atomic(file, data)
    faults.point("reconcile:after-write")
    if options.no_lock:
        result.lock_note = "not relocked (--no-lock): uv.lock is dev's"
    else:
        runner, how = _runner(options, config, dev_commit)
        locked = runner.lock(root, [], options.timeout)
        if locked.returncode != 0:
            raise DepsyncError(f"uv {locked.uv_version} lock failed, nothing changed: {error_summary(locked.output)}")
        if locked.new_lock is None:
            raise DepsyncError(f"uv {locked.uv_version} lock wrote no uv.lock")
        new_lock = Lock.from_text(locked.new_lock.decode(), config.lock)  # uv's result must parse
        faults.point("reconcile:after-uv")
        write_atomic(confined(root, config.lock), locked.new_lock)
        dev_lock = targets.get(config.lock)
        if dev_lock is not None:
            result.lock_changes = diff_locks(Lock.from_text(dev_lock.decode(), config.lock), new_lock)
        result.lock_note = f"relocked with uv {locked.uv_version} ({how})" + "".join(f"; {n}" for n in locked.notes)
    if staging:
        top = git.toplevel(root)
        relative = [str((root / p).resolve().relative_to(top.resolve())) for p in targets]
        with signals.deferred():  # a killed `git add` would leave index.lock behind
            git.stage(top, relative)
    faults.point("reconcile:after-stage")
    inputs = load_inputs(root, None, CliOverrides(owner_ref=result.dev_ref))
    result.findings = run_rules(inputs)
