"""`depsync guard`: the sync PR's invariants, checked before push.

For the merge commit at REF (default HEAD): protected paths equal its dev parent's; the
Dockerfiles equal dev's; pyproject.toml differs from dev's only by what reconcile
sanctions (the three-way sources and their metadata); uv.lock is not main's and is fresh
for the new pyproject. Each violation comes with the command that restores it.

With --pre-push it is a pre-push hook: it reads what is being pushed (git's hook lines on
stdin, or pre-commit's PRE_COMMIT_* variables), checks each sync merge among the new
commits and lets every other push through without a word.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from depsync.core.config import Config
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.tomltext import conflict_marker_lines
from depsync.core.rules import freshness
from depsync.core.rules.inputs import CheckInputs
from depsync.core.sync.document import merge_document, unsanctioned_keys
from depsync.core.sync.merge import expected_pyproject, uv_tables
from depsync.core.sync.surface import unsanctioned
from depsync.core.trust import is_full_commit
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.report import squashed as squashed_report
from depsync.shell import git, trusted_config, uv_confirm
from depsync.shell.ci_dockerfiles import ci_dockerfiles
from depsync.shell.sync_history import squashed_syncs_on
from depsync.shell.workspace import FileReader, UvProjectFiles, uv_project_files


@record
class GuardOptions:
    root: Path
    ref: str = "HEAD"
    dev: str | None = None
    main: str | None = None
    pre_push: bool = False  # read the pushed refs (stdin / pre-commit) and check each sync merge


@record
class Violation:
    path: str
    problem: str
    fix: str


def _metadata_sanctioned(ours: list, expected: list, dev: list, main: list) -> bool:
    """Each metadata entry is the three-way sources' (expected), or dev's or main's own."""
    def by_name(entries: list) -> dict:
        return {str(e.get("name", "")).lower().replace("_", "-"): e for e in entries if isinstance(e, dict)}

    o, e, d, m = (by_name(x) for x in (ours, expected, dev, main))
    return all(o.get(k) in (e.get(k), d.get(k), m.get(k)) for k in set(o) | set(e))


def _parents(root: Path, commit: str, owner: str | None, options: GuardOptions) -> tuple[str, str]:
    """(dev parent, main parent) of the merge commit; owner: the owner ref's commit when known."""
    if options.dev and options.main:
        return git.resolve(root, options.dev), git.resolve(root, options.main)
    parents = git.parents(root, commit)
    if len(parents) != 2:
        raise DepsyncError(f"{options.ref} is not a merge commit: guard checks the commit that merges main into dev (or pass --dev and --main)")
    if owner is not None and git.is_ancestor(root, parents[1], owner) and not git.is_ancestor(root, parents[0], owner):
        return parents[1], parents[0]
    return parents[0], parents[1]  # git merge origin/main on a branch from dev: dev is the first parent


def check(options: GuardOptions) -> tuple[list[Violation], str, str]:
    root = options.root
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    commit = git.resolve(root, options.ref)
    # the merge commit is main's content too: who dev is and what is protected come from the
    # operator (--dev, DEPSYNC_OWNER_REF, the default) and dev's committed config, never from it
    owner_ref, _ = trusted_config.owner_ref(options.dev)
    owner = _commit_or_none(root, owner_ref)
    config = trusted_config.owner_config(root, owner) if owner is not None else None
    dev, main = _parents(root, commit, owner, options)
    if config is None or options.dev:
        config = trusted_config.owner_config(root, dev)  # the dev parent: the owner's side of this merge
    base = git.merge_base(root, dev, main)
    for line in squashed_report.warning_lines(squashed_syncs_on(root, dev, main, base), base):
        print(line, file=sys.stderr)  # dev's past, not this merge's doing: said, never a violation
    here, at_dev, at_main, at_base = (FileReader(root, c) for c in (commit, dev, main, base))
    dev_short, main_short = git.short(root, dev), git.short(root, main)
    violations: list[Violation] = []

    ci = ci_dockerfiles(at_dev, config)  # dev's CI Dockerfiles, the set check and lock use: dev's like the triple
    for path in config.protected_paths:
        if here.read_bytes(path) != at_dev.read_bytes(path):
            violations.append(Violation(path, f"differs from dev ({dev_short})", f"git checkout {dev_short} -- {path}"))
    for path in ci.paths:
        if path not in config.protected_paths and here.read_bytes(path) != at_dev.read_bytes(path):
            violations.append(Violation(path, f"differs from dev ({dev_short}): a CI Dockerfile ({ci.how}), dev's like the triple", f"git checkout {dev_short} -- {path}"))
    # the other files uv reads for the project (uv.toml, .python-version): dev's, as reconcile keeps them
    from depsync.core.sync.uv_files import UV_CONFIG_FILES

    project_dir = config.pyproject.rpartition("/")[0]
    for name in UV_CONFIG_FILES:
        path = f"{project_dir}/{name}" if project_dir else name
        ours_bytes, devs = here.read_bytes(path), at_dev.read_bytes(path)
        if ours_bytes != devs:
            fix = f"git rm -- {path}" if devs is None else f"git checkout {dev_short} -- {path}"
            violations.append(Violation(path, f"differs from dev ({dev_short}): uv reads it for the project, and it is dev's like the triple", fix))
    if config.take_from_main:  # paths main owns: equal to main's
        from depsync.core.paths_of import selected

        for path in selected(config.take_from_main, git.regular_files(root, dev, main)):
            theirs = at_main.read_bytes(path)
            if here.read_bytes(path) != theirs:
                fix = f"git rm -- {path}" if theirs is None else f"git checkout {main_short} -- {path}"
                violations.append(Violation(path, f"differs from main ({main_short}), which owns it (take-from-main)", fix))

    ours = here.read_text(config.pyproject)
    assert ours is not None
    if conflict_marker_lines(ours):
        violations.append(Violation(config.pyproject, "has conflict markers", f"depsync reconcile --dev {dev_short} --main {main_short}"))
        return violations, dev_short, main_short
    dev_text = at_dev.read_text(config.pyproject) or ""
    base_text, main_text = (r.read_text(config.pyproject, required=False) or "" for r in (at_base, at_main))
    expected = expected_pyproject(ours, base_text, dev_text, main_text, config)
    reconcile_fix = f"depsync reconcile --no-merge --dev {dev_short} --main {main_short}"
    surface_wrong = unsanctioned(tomllib.loads(ours), tomllib.loads(dev_text), tomllib.loads(main_text or "")) if not conflict_marker_lines(ours) else []
    (our_sources, our_meta), (expected_sources, expected_meta) = uv_tables(ours), uv_tables(expected)
    data = {side: tomllib.loads(text or "") for side, text in (("base", base_text), ("dev", dev_text), ("main", main_text))}
    keys_wrong = unsanctioned_keys(tomllib.loads(ours), merge_document(data["base"], data["dev"], data["main"], config.conflict_policy), data["dev"])
    if keys_wrong:
        shown = ", ".join(keys_wrong[:5]) + (f" and {len(keys_wrong) - 5} more" if len(keys_wrong) > 5 else "")
        violations.append(Violation(config.pyproject, f"{shown}: not what the three-way merge of dev ({dev_short}) and main gives outside the dependency surface", f"git checkout {dev_short} -- {config.pyproject} && {reconcile_fix}"))
    elif our_sources != expected_sources or not _metadata_sanctioned(our_meta, expected_meta, uv_tables(dev_text)[1], uv_tables(main_text or "")[1]):
        violations.append(Violation(config.pyproject, "[tool.uv.sources] or dependency-metadata is not what the three-way merge gives", reconcile_fix))
    elif surface_wrong:
        violations.append(Violation(config.pyproject, f"{', '.join(surface_wrong[:5])}: neither dev's nor main's value (no three-way merge gives it)", reconcile_fix))

    lock_here, lock_dev, lock_main = here.read_bytes(config.lock), at_dev.read_bytes(config.lock), at_main.read_bytes(config.lock)
    if lock_here is None:
        violations.append(Violation(config.lock, "is missing", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    elif lock_here == lock_main and lock_here != lock_dev:
        violations.append(Violation(config.lock, f"is main's lock ({main_short}), not dev's relocked", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    elif conflict_marker_lines(lock_here.decode(errors="replace")):
        violations.append(Violation(config.lock, "has conflict markers", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    else:
        pyproject, lock = Pyproject.from_text(ours, config.pyproject), Lock.from_text(lock_here.decode(), config.lock)
        # the members, path packages and uv.toml of this commit, read as check reads them
        files = uv_project_files(here, config, pyproject, lock)
        inputs = CheckInputs(
            config, pyproject, lock, local_projects=files.local_projects, workspace_members=files.workspace_members, uv_settings=files.uv_settings,
        )
        stale = list(freshness.check(inputs))
        if stale and _work_tree_holds(root, here, _uv_reads(config, files)):
            # uv's word on the static verdict, where the work tree is this commit (the sync job's
            # case): a shape depsync's model does not know is no violation when uv accepts the lock
            confirmed = uv_confirm.confirm_stale(stale, inputs, root)
            for finding in confirmed:
                if finding.rule != "lock-stale":
                    print(f"depsync guard: {config.lock}: {finding.message}", file=sys.stderr)
            stale = [f for f in confirmed if f.rule == "lock-stale"]
        if stale:
            violations.append(Violation(config.lock, f"is stale for the new {config.pyproject}: {stale[0].message}", "depsync lock"))
    return violations, dev_short, main_short


def _uv_reads(config: Config, files: UvProjectFiles) -> list[str]:
    """The files of the commit uv's verdict depends on: pyproject.toml, uv.lock, the uv.toml
    beside them (there or not), the settings file and the local packages' pyproject.toml."""
    paths = [config.pyproject, config.lock, posixpath.join(posixpath.dirname(config.pyproject), "uv.toml")]
    if files.uv_settings is not None:
        paths.append(files.uv_settings.path)
    return [*paths, *(posixpath.join(path, "pyproject.toml") for path in files.local_projects)]


def _work_tree_holds(root: Path, commit: FileReader, paths: list[str]) -> bool:
    """Does the work tree hold the commit's bytes at each path (absent where it is), so that
    uv, which runs on the work tree, is asked about this commit?"""
    work_tree = FileReader(root)
    try:
        return all(work_tree.read_bytes(path) == commit.read_bytes(path) for path in dict.fromkeys(paths))
    except (OSError, DepsyncError):
        return False


def _report(violations: list[Violation], what: str, dev: str, main: str) -> None:
    print(f"depsync guard: {len(violations)} violation(s) in {what} (dev parent {dev}, main parent {main}):", file=sys.stderr)
    for v in violations:
        print(f"  {v.path}: {v.problem}\n      restore: {v.fix}", file=sys.stderr)


def run(options: GuardOptions) -> int:
    if options.pre_push:
        if options.dev or options.main or options.ref != "HEAD":
            raise DepsyncError("--pre-push takes the commits from what git pushes; drop --ref, --dev and --main")
        return run_pre_push(options.root, pushed_from(os.environ, sys.stdin))
    violations, dev, main = check(options)
    if not violations:
        print(f"depsync guard: {options.ref} keeps dev's triple ({dev}) with main ({main}) reconciled")
        return 0
    _report(violations, options.ref, dev, main)
    return 1


# -- pre-push ----------------------------------------------------------------------------------

_ZERO = re.compile(r"^0+\Z")


@record
class Pushed:
    """One ref being pushed: the local commit and what the remote has now (None: new or unknown)."""

    local_ref: str
    local: str
    remote: str | None


def parse_pre_push(text: str) -> list[Pushed]:
    """git's pre-push stdin: `<local ref> SP <local sha> SP <remote ref> SP <remote sha>` per line."""
    pushed = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.rsplit(maxsplit=3)
        if len(fields) != 4 or not (is_full_commit(fields[1]) and is_full_commit(fields[3])):
            raise DepsyncError(f"pre-push input line {number} is not `<local ref> <sha> <remote ref> <sha>`: {line[:120]!r}")
        local_ref, local, _, remote = fields
        if _ZERO.match(local):
            continue  # a deletion pushes no commit
        pushed.append(Pushed(local_ref, local, None if _ZERO.match(remote) else remote))
    return pushed


def pushed_from(environ: Mapping[str, str], stdin: TextIO | None) -> list[Pushed]:
    """What is being pushed: pre-commit's variables when pre-commit runs us (it has read git's
    stdin itself), else git's lines on stdin; run by hand at a terminal: HEAD's unpushed commits."""
    to_ref, from_ref = environ.get("PRE_COMMIT_TO_REF"), environ.get("PRE_COMMIT_FROM_REF")
    if to_ref:
        return [Pushed(environ.get("PRE_COMMIT_LOCAL_BRANCH", to_ref), to_ref, from_ref or None)]
    if environ.get("PRE_COMMIT_LOCAL_BRANCH"):  # pre-commit's "all files" push: nothing on the remote yet
        return [Pushed(environ["PRE_COMMIT_LOCAL_BRANCH"], environ["PRE_COMMIT_LOCAL_BRANCH"], None)]
    if stdin is None or stdin.isatty():
        return [Pushed("HEAD", "HEAD", None)]
    return parse_pre_push(stdin.read())


def _commit_or_none(root: Path, name: str) -> str | None:
    try:
        return git.resolve(root, name)
    except DepsyncError:
        return None  # a tag of a tree, or a remote commit this clone has not fetched


def _new_merges(root: Path, tip: str, remote: str | None) -> list[str]:
    """Merge commits reachable from tip that the remote does not have yet (oldest first)."""
    # git.py has no rev-list helper yet; this goes through its runner, with the same conventions
    exclude = ["^" + remote] if remote else []
    args = ["rev-list", "--merges", "--reverse"] + ([] if remote else ["--not", "--remotes", "--not"])
    result = git._git(root, *args, "--end-of-options", tip, *exclude)
    return result.stdout.decode().split()


def _is_sync_merge(root: Path, parents: list[str], owner: str, upstream: str) -> bool:
    """A merge of the upstream ref's history (second parent) into the owner's (first parent):
    the first parent shares commits with the owner ref that upstream does not have."""
    if len(parents) != 2:
        return False
    ours, theirs = parents
    if not git.is_ancestor(root, theirs, upstream) or git.is_ancestor(root, ours, upstream):
        return False
    try:
        shared = git.merge_base(root, ours, owner)
    except DepsyncError:
        return False
    return not git.is_ancestor(root, shared, upstream)


def run_pre_push(root: Path, pushed: list[Pushed]) -> int:
    """Check every sync merge being pushed; other pushes pass quietly (exit 0, no output)."""
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    failed = False
    seen: set[str] = set()
    for push in pushed:
        tip = _commit_or_none(root, push.local)
        if tip is None:
            continue
        remote = _commit_or_none(root, push.remote) if push.remote else None
        merges = [m for m in _new_merges(root, tip, remote) if m not in seen]
        if not merges:
            continue
        # the pushed tip is what is being checked: the refs come from the operator and the
        # owner ref's committed config, never from the tip
        owner_ref, _ = trusted_config.owner_ref(None)
        owner = _commit_or_none(root, owner_ref)
        config = trusted_config.owner_config(root, owner) if owner is not None else Config()
        upstream = _commit_or_none(root, config.upstream_ref)
        if owner is None or upstream is None:
            missing = owner_ref if owner is None else config.upstream_ref
            print(f"depsync guard: {missing} not found here, so sync merges in {push.local_ref} cannot be told apart; "
                  f"nothing checked (git fetch, then push again to check)", file=sys.stderr)
            continue
        for merge in merges:
            seen.add(merge)
            parents = git.parents(root, merge)
            if not _is_sync_merge(root, parents, owner, upstream):
                continue
            short = git.short(root, merge)
            violations, dev, main = check(GuardOptions(root, merge, parents[0], parents[1]))
            if violations:
                _report(violations, f"sync merge {short} of {push.local_ref}", dev, main)
                failed = True
            else:
                print(f"depsync guard: sync merge {short} keeps dev's triple ({dev}) with main ({main}) reconciled", file=sys.stderr)
    if failed:
        print("depsync guard: push refused; fix the merge (git commit --amend after the restore commands) and push again", file=sys.stderr)
    return 1 if failed else 0
