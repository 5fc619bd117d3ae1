"""`depsync guard`: the sync PR's invariants, checked before push.

For the merge commit at REF (default HEAD): protected paths equal its dev parent's; the
Dockerfiles equal dev's; pyproject.toml differs from dev's only by what reconcile
sanctions (the three-way sources and their metadata); uv.lock is not main's and is fresh
for the new pyproject. Each violation comes with the command that restores it.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from depsync import git
from depsync.config import Config
from depsync.errors import DepsyncError
from depsync.merge import reconciled_pyproject, uv_tables
from depsync.model.lock import Lock
from depsync.model.pyproject import Pyproject
from depsync.model.tomltext import conflict_marker_lines
from depsync.rules import CheckInputs, freshness
from depsync.workspace import FileReader, config_of


@dataclass(frozen=True)
class GuardOptions:
    root: Path
    ref: str = "HEAD"
    dev: str | None = None
    main: str | None = None


@dataclass(frozen=True)
class Violation:
    path: str
    problem: str
    fix: str


def _without_reconciled_tables(text: str) -> dict:
    data = tomllib.loads(text)
    uv = data.get("tool", {}).get("uv", {})
    uv.pop("sources", None)
    uv.pop("dependency-metadata", None)
    return data


def _parents(root: Path, commit: str, config: Config, options: GuardOptions) -> tuple[str, str]:
    """(dev parent, main parent) of the merge commit."""
    if options.dev and options.main:
        return git.resolve(root, options.dev), git.resolve(root, options.main)
    parents = git.parents(root, commit)
    if len(parents) != 2:
        raise DepsyncError(f"{options.ref} is not a merge commit: guard checks the commit that merges main into dev (or pass --dev and --main)")
    owner = None
    try:
        owner = git.resolve(root, options.dev or config.owner_ref)
    except DepsyncError:
        pass
    if owner is not None and git.is_ancestor(root, parents[1], owner) and not git.is_ancestor(root, parents[0], owner):
        return parents[1], parents[0]
    return parents[0], parents[1]  # git merge origin/main on a branch from dev: dev is the first parent


def check(options: GuardOptions) -> tuple[list[Violation], str, str]:
    root = options.root
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    commit = git.resolve(root, options.ref)
    config = config_of(FileReader(root, commit))
    dev, main = _parents(root, commit, config, options)
    base = git.merge_base(root, dev, main)
    here, at_dev, at_main, at_base = (FileReader(root, c) for c in (commit, dev, main, base))
    dev_short, main_short = git.short(root, dev), git.short(root, main)
    violations: list[Violation] = []

    for path in (*config.protected_paths, *(d.path for d in config.dockerfiles)):
        if here.read_bytes(path) != at_dev.read_bytes(path):
            violations.append(Violation(path, f"differs from dev ({dev_short})", f"git checkout {dev_short} -- {path}"))

    ours = here.read_text(config.pyproject)
    assert ours is not None
    if conflict_marker_lines(ours):
        violations.append(Violation(config.pyproject, "has conflict markers", f"depsync reconcile --dev {dev_short} --main {main_short}"))
        return violations, dev_short, main_short
    dev_text = at_dev.read_text(config.pyproject) or ""
    base_text, main_text = (r.read_text(config.pyproject, required=False) or "" for r in (at_base, at_main))
    expected, _, _ = reconciled_pyproject(base_text, dev_text, main_text, config)
    reconcile_fix = f"depsync reconcile --no-merge --dev {dev_short} --main {main_short}"
    if _without_reconciled_tables(ours) != _without_reconciled_tables(dev_text):
        violations.append(Violation(config.pyproject, f"changes more than [tool.uv.sources] and dependency-metadata against dev ({dev_short})", f"git checkout {dev_short} -- {config.pyproject} && {reconcile_fix}"))
    elif uv_tables(ours) != uv_tables(expected):
        violations.append(Violation(config.pyproject, "[tool.uv.sources] or dependency-metadata is not what the three-way merge gives", reconcile_fix))

    lock_here, lock_dev, lock_main = here.read_bytes(config.lock), at_dev.read_bytes(config.lock), at_main.read_bytes(config.lock)
    if lock_here is None:
        violations.append(Violation(config.lock, "is missing", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    elif lock_here == lock_main and lock_here != lock_dev:
        violations.append(Violation(config.lock, f"is main's lock ({main_short}), not dev's relocked", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    elif conflict_marker_lines(lock_here.decode(errors="replace")):
        violations.append(Violation(config.lock, "has conflict markers", f"git checkout {dev_short} -- {config.lock} && depsync lock"))
    else:
        inputs = CheckInputs(config, Pyproject.from_text(ours, config.pyproject), Lock.from_text(lock_here.decode(), config.lock))
        stale = list(freshness.check(inputs))
        if stale:
            violations.append(Violation(config.lock, f"is stale for the new {config.pyproject}: {stale[0].message}", "depsync lock"))
    return violations, dev_short, main_short


def run(options: GuardOptions) -> int:
    violations, dev, main = check(options)
    if not violations:
        print(f"depsync guard: {options.ref} keeps dev's triple ({dev}) with main ({main}) reconciled")
        return 0
    print(f"depsync guard: {len(violations)} violation(s) in {options.ref} (dev parent {dev}, main parent {main}):", file=sys.stderr)
    for v in violations:
        print(f"  {v.path}: {v.problem}\n      restore: {v.fix}", file=sys.stderr)
    return 1
