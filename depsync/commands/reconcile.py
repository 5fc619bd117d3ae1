"""`depsync reconcile`: the sync-pipeline step after `git merge --no-commit --no-ff origin/main` on a branch from dev.

Order: resolve dev, main and their merge-base; gather the evidence (which packages dev
depends on, dev's history of the entries that differ, the rev order upstream); plan
(three-way sources, metadata); restore dev's triple and protected paths with the plan
applied; write the reports; relock; stage; check; write the reports again. Nothing is
written before the plan is complete; every file is put back byte-for-byte when a later
step fails, and the reports then say what failed.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from depsync.core.config import Config, changed_by_main
from depsync.core.dockerfile_discovery import CiDockerfiles
from depsync.core.findings import Finding
from depsync.core.lockdiff import diff_locks, lock_rewrites
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.tomltext import conflict_marker_lines
from depsync.core.names import canonicalize_name
from depsync.core.redact import redact
from depsync.core.rules.run import run_rules
from depsync.core.rules.sources import required_names
from depsync.core.sync.merge import policy_of, reconciled_pyproject_whole
from depsync.core.sync.reconciliation import (
    LockOutcome,
    Reconciliation,
    kept_dockerfile,
)
from depsync.core.sync.sources import (
    MISSING,
    EntryChange,
    Evidence,
    Ownership,
    SourceDecision,
    latest_changes,
    merge_sources,
    normalize,
    ownership_from,
    sources_table,
)
from depsync.core.sync.surface import SurfaceEvidence, merge_surface, surface_of_text
from depsync.core.sync.uv_files import FileDecision
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.report import ui
from depsync.shell import cache, faults, git, signals, trusted_config, uv_confirm
from depsync.shell.ci_dockerfiles import ci_dockerfiles
from depsync.shell.fileio import (
    Snapshot,
    confined,
    output_file,
    write_atomic,
    write_report,
)
from depsync.shell.image_hold import held_against_image
from depsync.shell.runners.choose import IMAGE_HINTS
from depsync.shell.runners.protocol import Runner
from depsync.shell.surface_evidence import merged_code_uses
from depsync.shell.sync_history import squashed_syncs_on
from depsync.shell.uv import error_summary, output_tail
from depsync.shell.workspace import CliOverrides, FileReader, load_inputs


@record
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
    default_side: str | None = None  # who owns the dependency surface (default: [tool.depsync] default-side)


# -- evidence ------------------------------------------------------------------------------------

# the cases whose row reads dev's history (ownership, dev's own removal) and the rev order
_HISTORY_CASES = ("main-changed", "main-removed", "main-added", "conflict")
_ORDER_CASES = ("main-changed", "conflict")


_LINES: dict[tuple[str, str, str], list[git.PathChange]] = {}


def _first_parent_line(root: Path, commit: str, path: str) -> list[git.PathChange]:
    """git.path_history, once per (repository, commit, path): the sources and the rest of the
    surface walk the same two lines (commits are immutable, so the cache cannot go stale)."""
    key = (str(root.resolve()), commit, path)
    if key not in _LINES:
        _LINES[key] = git.path_history(root, commit, path)
    return _LINES[key]


def _history(
    root: Path, path: str, dev_commit: str, main_commit: str, names: list[Any], parse: Callable[[str], dict[Any, Any] | None] = sources_table
) -> tuple[dict[Any, Ownership], dict[Any, str]]:
    """Ownership of each name from dev's first-parent history of pyproject, and dev's own removals.

    The answer depends only on the two commits (immutable) and the names, so it is remembered:
    a second run on the same merge reads no history."""
    if not names:
        return {}, {}
    key = ("history", path, dev_commit, main_commit, parse.__name__, tuple(sorted(names, key=repr)))
    immutable = bool(_FULL_SHA.fullmatch(dev_commit) and _FULL_SHA.fullmatch(main_commit))  # a ref name can move
    known = cache.memo_get("history", key) if immutable else None
    if isinstance(known, tuple) and len(known) == 2:
        return {name: Ownership(*fields) for name, fields in known[0]}, dict(known[1])
    ownership, removed = _read_history(root, path, dev_commit, main_commit, names, parse)
    if immutable:
        remembered = tuple((name, (o.owner, o.basis, o.detail, o.commit)) for name, o in ownership.items())
        cache.memo_put("history", key, (remembered, tuple(removed.items())))
    return ownership, removed


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _read_history(
    root: Path, path: str, dev_commit: str, main_commit: str, names: list[Any], parse: Callable[[str], dict[Any, Any] | None]
) -> tuple[dict[Any, Ownership], dict[Any, str]]:
    """One `git log --raw` for dev (and one for main, when a change must be placed in main's
    timeline); every version of the file is read through the session's one cat-file process."""
    parsed: dict[str | None, dict[str, Any] | None] = {None: {}}

    def sources_at(blob: str | None) -> dict[str, Any] | None:
        if blob not in parsed:
            data = git.blob_by_id(root, blob)  # type: ignore[arg-type]
            parsed[blob] = parse(data.decode(errors="replace")) if data is not None else None
        return parsed[blob]

    latest = latest_changes(_first_parent_line(root, dev_commit, path), sources_at, names)
    main_line: list[git.PathChange] = []

    def main_value_at(commit: git.PathChange, name: str) -> Any:
        """main's value of the entry when commit was made: the commit's own when it is on main's
        line (dev's history before it forked), else main's newest version not after it."""
        if not main_line:
            main_line.extend(_first_parent_line(root, main_commit, path))
        if any(change.commit == commit.commit for change in main_line):
            found = sources_at(commit.new_blob)
            return MISSING if found is None else found.get(name)
        for change in main_line:
            if change.time <= commit.time:
                found = sources_at(change.new_blob)
                return MISSING if found is None else found.get(name)
        return None  # main had no such file then

    ownership: dict[str, Ownership] = {}
    removed: dict[str, str] = {}
    for name in names:
        hit = latest.get(name)
        if hit is None:
            ownership[name] = ownership_from(None)
            continue
        commit, new = hit
        merge = len(commit.parents) > 1
        main_value: Any = MISSING
        if merge:  # a sync merge took main's value when the merged parent had it and is main's
            merged = git.read_blob(root, commit.parents[1], path)
            theirs = parse(merged.decode(errors="replace")) if merged is not None else None
            if theirs is not None and normalize(theirs.get(name)) == normalize(new) and git.is_ancestor(root, commit.parents[1], main_commit):
                main_value = new
        if main_value is MISSING:
            main_value = main_value_at(commit, name)
        change = EntryChange(commit.commit, commit.subject, commit.time, merge, new, main_value)
        ownership[name] = ownership_from(change)
        if new is None and ownership[name].owner == "dev":
            removed[name] = change.names()
    return ownership, removed


def gather_evidence(root: Path, config: Config, cases: list[SourceDecision], needs: frozenset[str], dev_commit: str, main_commit: str, fetch: bool,
                    fetches: list[dict[str, Any]] | None = None) -> Evidence:
    """The evidence for the entries where dev and main differ; the others need none. Each
    source-repository fetch is said under -v and appended to `fetches` (the plan JSON's)."""
    from depsync.shell.revs import FetchRecord, orders_for

    policy = policy_of(config)
    differing = {canonicalize_name(d.name): d for d in cases if d.differs}
    # config decides ownership for owned-by-dev and prefer: their history is not read
    names = [key for key, d in differing.items() if d.case in _HISTORY_CASES and key not in policy.owned_by_dev and key not in policy.prefer]
    ownership, removed = _history(root, config.pyproject, dev_commit, main_commit, names)
    wanted = {key: (d.dev, d.main) for key, d in differing.items() if d.case in _ORDER_CASES and d.dev is not None and d.main is not None}
    records: list[FetchRecord] = []
    orders = orders_for(wanted, fetch, fetches=records)
    for record in records:
        ui.detail(record.line())
        if fetches is not None:
            fetches.append({"url": record.url, "asked": record.asked, "bytes": record.bytes, "seconds": round(record.seconds, 3), "outcome": record.outcome})
    return Evidence(needs, ownership, orders, removed, gathered=True)


def gather_surface_evidence(root: Path, config: Config, data: dict[str, dict[str, Any]], dev_commit: str, main_commit: str, merged_in_work_tree: bool) -> SurfaceEvidence:
    """The surface's evidence for the entries where dev and main differ: dev's history of each
    (ownership, dev's own removals) and how the merged code uses each package main changed."""
    policy = policy_of(config)
    cases = [d for d in merge_surface(data["base"], data["dev"], data["main"], policy) if d.differs]
    keys = [(d.table, d.name) for d in cases if d.case in _HISTORY_CASES and d.name not in policy.owned_by_dev and d.name not in policy.prefer]
    ownership, removed = _history(root, config.pyproject, dev_commit, main_commit, keys, parse=surface_of_text)
    packages = {d.name for d in cases if d.kind == "requirement" and d.case in _HISTORY_CASES and not d.name.startswith(("?", "include-group:"))}
    uses = merged_code_uses(root, packages, main_commit, merged_in_work_tree, dev_commit)
    changed = {d.name for d in cases if d.kind == "requirement" and d.case == "main-changed"}
    return SurfaceEvidence(uses, ownership, removed, gathered=True, locked=_locked_versions(root, config, dev_commit, changed))


def _locked_versions(root: Path, config: Config, dev_commit: str, packages: set[str]) -> dict[str, tuple[str, ...]]:
    """The versions dev's uv.lock resolves for each package (lock impact: does main's new range
    move dev's resolution?); nothing when dev's lock is missing or does not parse."""
    if not packages:
        return {}
    text = FileReader(root, dev_commit).read_text(config.lock, required=False)
    if not text or conflict_marker_lines(text):
        return {}
    try:
        lock = Lock.from_text(text, config.lock)
    except DepsyncError:
        return {}
    found: dict[str, set[str]] = {}
    for package in lock.packages:
        if package.name in packages and package.version:
            found.setdefault(package.name, set()).add(package.version)
    return {name: tuple(sorted(versions)) for name, versions in found.items()}


# -- plan ----------------------------------------------------------------------------------------


def plan(options: ReconcileOptions) -> tuple[Reconciliation, Config, dict[str, bytes | None], str]:
    """Decide everything in memory. Returns the reconciliation, config, target file contents and dev's commit."""
    root = options.root
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    merging = git.merge_head(root)
    # who dev is comes from the operator (--dev, DEPSYNC_OWNER_REF, the default), and the policy
    # from dev's committed pyproject: never from the merged work tree, which main's PRs wrote
    dev_ref, dev_commit = trusted_config.resolve_owner(root, options.dev)
    config = trusted_config.bound_to(trusted_config.owner_config(root, dev_commit), dev_ref)
    main_ref = options.main or (_merged_ref(root, merging) if merging and not options.no_merge else config.upstream_ref)
    main_commit = git.resolve(root, main_ref)
    base_commit = git.merge_base(root, dev_commit, main_commit)
    readers = {side: FileReader(root, commit) for side, commit in (("base", base_commit), ("dev", dev_commit), ("main", main_commit))}
    texts = {side: reader.read_text(config.pyproject, required=side == "dev") or "" for side, reader in readers.items()}
    for side, text in texts.items():
        if conflict_marker_lines(text):
            raise DepsyncError(f"{config.pyproject} at {side} has conflict markers")
    projects = {side: Pyproject.from_text(text, f"{side}:{config.pyproject}") for side, text in texts.items()}  # validates
    config_drift = changed_by_main(*(projects[side].depsync_config for side in ("base", "dev", "main")))
    hint_drift = tuple(path for path in IMAGE_HINTS if changed_by_main(*({path: readers[side].read_bytes(path)} for side in ("base", "dev", "main"))))
    sources = {side: project.uv.get("sources", {}) for side, project in projects.items()}

    # the cases first: evidence is gathered only for the names where dev and main differ
    needs = frozenset(required_names(projects["dev"]))
    cases = merge_sources(sources["base"], sources["dev"], sources["main"], policy_of(config), Evidence(dev_requires=needs))
    fetches: list[dict[str, Any]] = []
    evidence = gather_evidence(root, config, cases, needs, dev_commit, main_commit, options.fetch_revs, fetches)
    data = {side: project.data for side, project in projects.items()}
    merged = bool(merging) and not options.no_merge or git.is_ancestor(root, main_commit, "HEAD")
    surface_evidence = gather_surface_evidence(root, config, data, dev_commit, main_commit, merged)
    default_side = options.default_side or config.default_side
    merged_pyproject = reconciled_pyproject_whole(texts, data, config, evidence, surface_evidence, default_side)
    new_pyproject, decisions, metadata, dependencies = merged_pyproject.text, merged_pyproject.sources, merged_pyproject.metadata, merged_pyproject.surface

    targets: dict[str, bytes | None] = {config.pyproject: new_pyproject.encode()}
    dev_reader = readers["dev"]
    # dev's CI Dockerfiles, the set `check` and `lock` use (configured, else discovered on dev):
    # part of the triple, so dev's version is kept and what main changed in each is listed
    ci = ci_dockerfiles(dev_reader, config)
    docker_findings = _dockerfile_follows(ci, new_pyproject, data) + _inconsistencies(config, new_pyproject, data["dev"])
    for path in (config.lock, *ci.paths, *config.protected_paths):
        targets.setdefault(path, dev_reader.read_bytes(path))
    kept = [kept_dockerfile(path, ci.how, readers["base"].read_bytes(path), readers["main"].read_bytes(path)) for path in ci.paths]
    # a CI Dockerfile main added (discovered on main, absent on dev): the merge keeps it as main wrote it; listed
    if not config.dockerfiles_configured:
        added = [p for p in ci_dockerfiles(readers["main"], config).paths if p not in ci.paths and dev_reader.read_bytes(p) is None]
        kept += [kept_dockerfile(p, "discovered", readers["base"].read_bytes(p), readers["main"].read_bytes(p), None) for p in added]
    # the other files uv reads: dev's uv.toml and .python-version, members merged per key
    uv_files = _uv_files(root, config, readers, new_pyproject, data, dev_commit, main_commit)
    for decision in uv_files:
        targets[decision.path] = decision.result
    # paths main owns: taken wholesale from main (a path main deleted goes too)
    taken = _take_from_main(root, config, dev_commit, main_commit)
    for path in taken:
        targets[path] = readers["main"].read_bytes(path)
    for path in targets:
        confined(root, path, "a file reconcile writes")  # refused before anything is written
    # what the closing check will read, parsed now: a bad dev file is exit 2 before any write
    load_inputs(root, dev_commit, CliOverrides(owner_ref=dev_commit))
    result = Reconciliation(dev_ref, main_ref, dev_commit, main_commit, base_commit, decisions, metadata, dry_run=options.dry_run, merging=bool(merging), config_drift=config_drift, hint_drift=hint_drift, evidence_fetches=fetches)
    result.dependencies, result.default_side, result.surface_findings = dependencies, default_side, docker_findings
    result.keys, result.uv_files = merged_pyproject.keys, uv_files
    result.taken_from_main = taken
    result.ci_dockerfiles = [k for k in kept if k.path not in taken]
    result.squashed = squashed_syncs_on(root, dev_commit, main_commit, base_commit)
    for path, data in targets.items():
        current = (root / path).read_bytes() if (root / path).is_file() else None
        if path not in (config.pyproject, config.lock, *taken, *(d.path for d in uv_files)) and current != data:
            result.restored.append(path)
    return result, config, targets, dev_commit


def _uv_files(root: Path, config: Config, readers: dict[str, FileReader], new_pyproject: str, data: dict[str, dict[str, Any]], dev_commit: str, main_commit: str) -> list[FileDecision]:
    """What becomes of uv.toml, .python-version(s) and every workspace member's pyproject."""
    import posixpath

    from depsync.core.sync.uv_files import (
        UV_CONFIG_FILES,
        decide_member,
        decide_uv_config,
        member_pyprojects,
        workspace_globs,
    )

    project_dir = posixpath.dirname(config.pyproject)

    def sides(path: str) -> tuple[bytes | None, bytes | None, bytes | None]:
        return readers["base"].read_bytes(path), readers["dev"].read_bytes(path), readers["main"].read_bytes(path)

    out = [d for name in UV_CONFIG_FILES if (d := decide_uv_config(posixpath.join(project_dir, name), *sides(posixpath.join(project_dir, name)))) is not None]
    members, exclude = workspace_globs(tomllib.loads(new_pyproject), data["dev"], data["main"])
    if members:
        prefix = f"{project_dir}/" if project_dir else ""
        files = [p.removeprefix(prefix) for p in git.regular_files(root, dev_commit, main_commit) if p.startswith(prefix)]
        for relative in member_pyprojects(files, members, exclude):
            path = prefix + relative
            decision = decide_member(path, *sides(path), conflict_side=config.conflict_policy)
            if decision is not None:
                out.append(decision)
    return out


def _take_from_main(root: Path, config: Config, dev_commit: str, main_commit: str) -> list[str]:
    """The files `take-from-main` names on either side (regular files only: a link or a submodule
    is never taken)."""
    if not config.take_from_main:
        return []
    from depsync.core.paths_of import selected

    return selected(config.take_from_main, git.regular_files(root, dev_commit, main_commit))


def _dockerfile_follows(ci: CiDockerfiles, new_pyproject: str, data: dict[str, dict[str, Any]]) -> list[Finding]:
    """Extras and groups dev's CI Dockerfiles install that the reconciled pyproject drops."""
    from depsync.core.rules.dockerfile import used_tables
    from depsync.core.sync.surface import dockerfile_findings

    merged = tomllib.loads(new_pyproject)
    findings = []
    for dockerfile in ci.dockerfiles:
        findings += dockerfile_findings(list(used_tables(dockerfile)), dockerfile.path, merged, data["dev"], data["main"])
    return findings


def _inconsistencies(config: Config, new_pyproject: str, dev: dict[str, Any]) -> list[Finding]:
    """What the merge made contradict itself in pyproject (a flag with both values, never an exit 2)."""
    from depsync.core.rules.registry import RULES
    from depsync.core.sync.consistency import introduced, line_in

    merged = Pyproject.from_text(new_pyproject, config.pyproject)
    rule = RULES["merge-inconsistent"]
    return [rule.finding(config.pyproject, line_in(merged, p), p.message, p.fix) for p in introduced(merged.data, dev)]


def _merged_ref(root: Path, merging: str) -> str:
    """The name the merge in progress was started with (`git merge origin/main` writes it to
    MERGE_MSG), when it still names MERGE_HEAD; else git's name for the commit."""
    message = git.git_dir(root) / "MERGE_MSG"
    first = message.read_text(errors="replace").split("\n", 1)[0] if message.is_file() else ""
    named = re.match(r"^Merge (?:remote-tracking )?branch '([^']+)'", first)
    if named:
        try:
            if git.resolve(root, named.group(1)) == merging:
                return named.group(1)
        except DepsyncError:
            pass
    return git.describe_ref(root, merging)


def _runner(options: ReconcileOptions, config: Config, dev_commit: str) -> tuple[Runner, str]:
    """The lock command's runner choice, made from dev's pyproject and Dockerfile."""
    from depsync.shell.runners.choose import runner_for
    from depsync.shell.runners.request import LockRequest

    request = LockRequest(options.root, options.runner, options.image, timeout=options.timeout, memory=options.memory)
    return runner_for(request, config, FileReader(options.root, dev_commit))


def _for_reconcile(message: str) -> str:
    """The runner's advice in reconcile's terms: reconcile has no --build."""
    message = message.replace(
        "build it (--build), load it (docker load), or name another with --image",
        "load it (docker load), name another with --image, or relock on the host with --runner local",
    )
    return message.replace("or use --build", "or relock on the host with --runner local")


# -- run -----------------------------------------------------------------------------------------


def _show(markdown: str) -> None:
    """The summary on stdout: rendered on a terminal, raw Markdown for a pipe (the PR body)."""
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=sys.stdout).print(Markdown(markdown))
    else:
        print(markdown, file=sys.stdout)


def _top_relative(root: Path, paths: list[str]) -> list[str]:
    repo = git.session(root)
    return [repo.relative(p) for p in paths]


def run(options: ReconcileOptions) -> int:
    """One reconcile at a time per work tree (a dry run writes nothing and takes no lock)."""
    if options.dry_run or not git.is_repository(options.root):
        return _run(options)
    from depsync.shell.worktree_lock import exclusive

    with exclusive(git.git_dir(options.root)):
        return _run(options)


def _run(options: ReconcileOptions) -> int:
    from depsync.report.reconcile import to_json, to_markdown

    for path, what in ((options.summary, "--summary"), (options.plan_json, "--plan-json")):
        if path:
            output_file(path, what)  # a bad one fails before anything is written
    result, config, targets, dev_commit = plan(options)
    unmerged = git.unmerged_paths(options.root)

    def report() -> str:
        markdown = to_markdown(result)
        if options.summary:
            write_report(options.summary, markdown)
        if options.plan_json:
            write_report(options.plan_json, to_json(result))
        return markdown

    if options.dry_run:
        result.unmerged = sorted(unmerged - set(_top_relative(options.root, list(targets))))
        _show(report())
        return 1 if result.needs_review else 0

    staging = bool(result.merging or unmerged)  # what _apply stages then
    # the index too: staging is undone with the files when a later phase fails
    snapshot = Snapshot(options.root, list(targets), [git.git_dir(options.root) / "index"] if staging else [])
    reports = Snapshot(options.root, [], [p for p in (options.summary, options.plan_json) if p])
    try:
        _apply(options, result, config, targets, dev_commit, unmerged, report, snapshot)
        markdown = report()
    except Exception as exc:  # a failed step: the files go back, the plan and the failure are still reported
        snapshot.restore()
        result.failure = " ".join(_for_reconcile(_message(exc)).split())
        result.unmerged = sorted(unmerged - set(_top_relative(options.root, list(targets))))  # still to do after the fix
        if result.lock.state == "pending":
            result.lock = LockOutcome("failed", f"relock failed: {result.failure}", uv_output=result.lock.uv_output)
        if result.lock.uv_output:  # uv's own words, as it wrapped them: the one-line error cuts the reason
            print(f"uv's output (last lines):\n{result.lock.uv_output}", file=sys.stderr)
        try:
            markdown = report()
        except Exception:
            reports.restore()  # no report at all rather than one that says the relock is still pending
            raise exc from None
        try:
            _show(markdown)
        except OSError:
            pass  # stdout gone: the error line and the report files still say it
        if isinstance(exc, DepsyncError):
            written = " and ".join(str(p) for p in (options.summary, options.plan_json) if p)
            where = f" (the plan and the failure are in {written})" if written else ""
            raise DepsyncError(_for_reconcile(exc.message) + where, exc.where) from None
        raise
    except BaseException:  # an interrupt: everything as it was, reports included
        snapshot.restore()
        reports.restore()
        raise
    _show(markdown)
    return 1 if result.needs_review else 0


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    return str(exc) if isinstance(exc, DepsyncError) else f"{type(exc).__name__}: {exc}"


def _apply(
    options: ReconcileOptions, result: Reconciliation, config: Config, targets: dict[str, bytes | None], dev_commit: str, unmerged: set[str], report: Any,
    snapshot: Snapshot,
) -> None:
    root = options.root
    runner, how = (None, "") if options.no_lock else _runner(options, config, dev_commit)  # a runner that cannot be had fails before any write
    faults.point("reconcile:before-write")
    for path, data in targets.items():
        file = confined(root, path)
        snapshot.writing(file, data)  # a restore undoes only what this run wrote
        if data is None:
            file.unlink(missing_ok=True)
        elif not file.is_file() or file.read_bytes() != data:
            write_atomic(file, data)
    faults.point("reconcile:after-write")
    if runner is None:
        result.lock = LockOutcome("not-relocked", "not relocked (--no-lock): uv.lock is dev's")
    else:
        result.lock = LockOutcome("pending", f"relocking with {how}")
        report()  # the plan, before relocking: a relock that never returns still leaves it
        locked = runner.lock(root, [], options.timeout)
        if locked.returncode != 0:
            result.lock.uv_output = output_tail(redact(locked.output))
            raise DepsyncError(f"uv {locked.uv_version} lock failed, nothing changed: {error_summary(locked.output)}")
        if locked.new_lock is None:
            raise DepsyncError(f"uv {locked.uv_version} lock wrote no uv.lock")
        new_lock = Lock.from_text(locked.new_lock.decode(), config.lock)  # uv's result must parse
        faults.point("reconcile:after-uv")
        snapshot.writing(confined(root, config.lock), locked.new_lock)
        write_atomic(confined(root, config.lock), locked.new_lock)
        dev_lock = targets.get(config.lock)
        changes = diff_locks(Lock.from_text(dev_lock.decode(), config.lock), new_lock) if dev_lock is not None else None
        result.lock = LockOutcome("relocked", f"relocked with uv {locked.uv_version} ({how})" + "".join(f"; {n}" for n in locked.notes), changes)
        if dev_lock is not None:
            result.lock.markers_rewritten, result.lock.revision = lock_rewrites(dev_lock.decode(), locked.new_lock.decode())
    if result.merging or unmerged:
        top = git.toplevel(root)
        with signals.deferred():  # a killed `git add` would leave index.lock behind
            git.stage(top, _top_relative(root, list(targets)))
    faults.point("reconcile:after-stage")
    inputs = load_inputs(root, None, CliOverrides(owner_ref=result.dev_ref, config=config))  # dev's config, not the tree's
    result.findings = run_rules(inputs)
    if result.lock.state == "relocked":  # uv just wrote this lock: a static lock-stale is asked of uv (unrelocked, it is expected)
        result.findings = uv_confirm.confirm_stale(result.findings, inputs, root)
        held = held_against_image(root, runner, None, inputs)  # what `uv sync` in the CI image installs over, or misses
        if held is not None:
            result.findings += held[1]
            result.lock.note += f"; held against {held[0]}: {len(held[1])} finding{'s' if len(held[1]) != 1 else ''}"
    result.checked = True
    result.unmerged = sorted(unmerged - set(_top_relative(root, list(targets))))
