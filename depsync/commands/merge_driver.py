"""`depsync merge-driver lock|pyproject %O %A %B %P`: git merge drivers for the triple.

git runs a driver in the repository top with the base (%O), ours (%A, where the result
goes) and theirs (%B) in temp files; exit 0 means resolved. During the merge git has
not yet written MERGE_HEAD or the other merged files, so the lock driver cannot read
the merged pyproject.toml: it merges pyproject itself, from the commits, with the same
code, and leaves the lock conflicted when that merge is not clean.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from depsync import git
from depsync.config import Config
from depsync.errors import DepsyncError
from depsync.merge import AlignedVersions, aligned_versions
from depsync.workspace import FileReader, config_of


@dataclass(frozen=True)
class PyprojectMerge:
    text: str  # the merged text (with conflict markers when not clean)
    clean: bool
    aligned: AlignedVersions


def merge_pyproject(base: str, ours: str, theirs: str, config: Config, ours_is_owner: bool = True) -> PyprojectMerge:
    """git's text merge of the three versions, after reconcile's three-way merge of the sources."""
    aligned = aligned_versions(base, ours, theirs, config, ours_is_owner)
    text, clean = git.merge_file(aligned.ours, aligned.base, aligned.theirs)
    return PyprojectMerge(text, clean, aligned)


@dataclass(frozen=True)
class DriverOptions:
    kind: str  # "lock" or "pyproject"
    base: Path
    ours: Path
    theirs: Path
    path: str
    relock: bool = False


def _say(message: str) -> None:
    print(f"depsync merge-driver: {message}", file=sys.stderr)


def _theirs_commit(top: Path) -> str | None:
    """The commit being merged: git says it only in GIT_REFLOG_ACTION ("merge origin/main") during a merge."""
    action = os.environ.get("GIT_REFLOG_ACTION", "")
    words = action.split()
    if len(words) >= 2 and words[0] in ("merge", "pull"):
        for word in reversed(words[1:]):
            try:
                return git.resolve(top, word)
            except DepsyncError:
                continue
    head = git.merge_head(top)
    return head


def ours_is_owner(top: Path, config: Config, path: str, ours: bytes, theirs: bytes) -> bool:
    """Which side owns the triple: the one equal to the owner ref's file, else the one that contains the owner ref."""
    try:
        owner = git.resolve(top, config.owner_ref)
    except DepsyncError:
        return True  # no owner ref here: the branch being merged into keeps its files
    blob = git.read_blob(top, owner, path)
    if blob is not None and blob == ours:
        return True
    if blob is not None and blob == theirs:
        return False
    theirs_commit = _theirs_commit(top)
    if theirs_commit and git.is_ancestor(top, owner, theirs_commit) and not git.is_ancestor(top, owner, "HEAD"):
        return False
    return True


def _pyproject_versions(top: Path, pyproject_path: str) -> tuple[str, str, str] | None:
    """(base, ours, theirs) pyproject.toml of the merge in progress, from the commits."""
    theirs = _theirs_commit(top)
    if theirs is None:
        return None
    base = git.merge_base(top, "HEAD", theirs)
    texts = [git.read_blob(top, commit, pyproject_path) for commit in (base, "HEAD", theirs)]
    if any(t is None for t in texts):
        return None
    return tuple(t.decode() for t in texts)  # type: ignore[return-value]


def run(options: DriverOptions) -> int:
    top = Path.cwd()
    ours, theirs, base = options.ours.read_bytes(), options.theirs.read_bytes(), options.base.read_bytes() if options.base.exists() else b""
    config = config_of(FileReader(top, "HEAD"))
    owner_is_ours = ours_is_owner(top, config, options.path, ours, theirs)
    if options.kind == "pyproject":
        merged = merge_pyproject(base.decode(), ours.decode(), theirs.decode(), config, owner_is_ours)
        options.ours.write_text(merged.text)
        review = [d.name for d in merged.aligned.decisions if d.needs_review]
        if not merged.clean:
            _say(f"{options.path}: conflicts outside [tool.uv.sources] remain; resolve them, then run `depsync reconcile`")
            return 1
        _say(f"{options.path}: merged; [tool.uv.sources] three-way" + (f" (review: {', '.join(review)})" if review else ""))
        return 0

    # the lock: never merged as text
    versions = _pyproject_versions(top, config.pyproject)
    if versions is None:
        _say(f"{options.path} left conflicted: cannot tell which commit is being merged; run `depsync reconcile`")
        return 1
    pyproject = merge_pyproject(*versions, config, owner_is_ours)
    if not pyproject.clean:
        _say(f"{options.path} left conflicted: {config.pyproject} is not resolved yet; run `depsync reconcile` after resolving it")
        return 1
    owner_lock = ours if owner_is_ours else theirs
    if not options.relock:
        options.ours.write_bytes(owner_lock)
        _say(f"{options.path}: took the owner's lock ({'ours' if owner_is_ours else 'theirs'}); relock with `depsync lock` if pyproject changed")
        return 0
    from depsync.runners.local import LocalRunner

    result = LocalRunner().lock(top, [], 1800, replace={config.pyproject: pyproject.text.encode(), config.lock: owner_lock})
    if result.returncode != 0 or result.new_lock is None:
        _say(f"{options.path} left conflicted: uv lock failed against the merged {config.pyproject}; run `depsync reconcile`")
        return 1
    options.ours.write_bytes(result.new_lock)
    _say(f"{options.path}: relocked with uv {result.uv_version} against the merged {config.pyproject}")
    return 0
