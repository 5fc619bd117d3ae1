"""`depsync merge-driver lock|pyproject %O %A %B %P`: git merge drivers for the triple.

git runs a driver in the repository top with the base (%O), ours (%A, where the result
goes) and theirs (%B) in temp files; exit 0 means resolved. During the merge git has
not yet written MERGE_HEAD or the other merged files, so the lock driver cannot read
the merged pyproject.toml: it merges pyproject itself, from the commits, with the same
code, and leaves the lock conflicted when that merge is not clean.

Conflict markers and messages name the branches: git >= 2.44 passes its labels (%S, %X,
%Y); with older git (2.39 here) the driver takes our branch from HEAD and theirs from the
`git merge <ref>` that runs it (GIT_REFLOG_ACTION). Each message says what to do next,
which depends on the merge: a sync (the upstream ref merged into the owner's history)
is `depsync reconcile`'s job, any other merge is resolved by hand and relocked.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from depsync.core.config import Config
from depsync.core.sync.merge import AlignedVersions, aligned_versions
from depsync.errors import DepsyncError
from depsync.records import field, record
from depsync.shell import git
from depsync.shell.workspace import FileReader, config_of

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@record
class Labels:
    """Conflict labels as git passed them (%S, %X, %Y); empty or unexpanded means unknown."""

    base: str = ""
    ours: str = ""
    theirs: str = ""


@record
class PyprojectMerge:
    text: str  # the merged text (with conflict markers when not clean)
    clean: bool
    aligned: AlignedVersions
    unparsed: DepsyncError | None = None  # a side that is not TOML: git's text merge, left conflicted


def merge_pyproject(base: str, ours: str, theirs: str, config: Config, ours_is_owner: bool = True, labels: tuple[str, str, str] = ("ours", "base", "theirs")) -> PyprojectMerge:
    """git's text merge of the three versions, after reconcile's three-way merge of the sources.
    labels: (ours, base, theirs) for the conflict markers. A side that is not TOML has no
    sources to merge: git's text merge alone, never called clean (a clean text merge would
    stage the broken file as resolved)."""
    from depsync.core.model.tomltext import parse_toml

    for text, label in ((ours, labels[0]), (base, labels[1]), (theirs, labels[2])):
        try:
            parse_toml(text, f"{label}:{config.pyproject}")
        except DepsyncError as exc:
            merged, _ = git.merge_file(ours, base, theirs, labels)
            return PyprojectMerge(merged, False, AlignedVersions(ours, base, theirs, (), ()), exc)
    aligned = aligned_versions(base, ours, theirs, config, ours_is_owner)
    text, clean = git.merge_file(aligned.ours, aligned.base, aligned.theirs, labels)
    return PyprojectMerge(text, clean, aligned)


@record
class DriverOptions:
    kind: str  # "lock" or "pyproject"
    base: Path
    ours: Path
    theirs: Path
    path: str
    relock: bool = False
    labels: Labels = field(default_factory=Labels)


def _say(message: str) -> None:
    print(f"depsync merge-driver: {message}", file=sys.stderr)


def _given(label: str, placeholder: str) -> str:
    """A label from git, or "" when git left the placeholder unexpanded (git < 2.44) or gave none."""
    label = label.strip()
    if not label or label == placeholder or _CONTROL.search(label):
        return ""
    return label[:100]


def _merged_ref() -> str | None:
    """The ref named on the command line of `git merge <ref>` / `git pull <remote> <ref>`: git
    says it only in GIT_REFLOG_ACTION while a merge runs its drivers."""
    words = os.environ.get("GIT_REFLOG_ACTION", "").split()
    if len(words) >= 2 and words[0] in ("merge", "pull"):
        for word in reversed(words[1:]):
            if not word.startswith("-"):
                return word
    return None


def _theirs_commit(top: Path) -> str | None:
    """The commit being merged: from GIT_REFLOG_ACTION, else MERGE_HEAD (present when a
    merge is resumed, never during the first run of the drivers)."""
    words = os.environ.get("GIT_REFLOG_ACTION", "").split()
    if len(words) >= 2 and words[0] in ("merge", "pull"):
        for word in reversed(words[1:]):
            if word.startswith("-"):
                continue
            try:
                return git.resolve(top, word)
            except DepsyncError:
                continue
    return git.merge_head(top)


def _branch_of_head(top: Path) -> str:
    """The checked-out branch (`sync/main-2024`), else HEAD's short commit (detached)."""
    head = git.git_dir(top) / "HEAD"
    text = head.read_text().strip() if head.is_file() else ""
    if text.startswith("ref: refs/heads/"):
        return text.removeprefix("ref: refs/heads/")
    try:
        return git.short(top, "HEAD")
    except DepsyncError:
        return "HEAD"


@record
class Sides:
    """Who is who in the merge being run, for markers and messages."""

    ours: str  # label of our side (a branch name when there is one)
    theirs: str
    base: str
    theirs_commit: str | None
    owner_is_ours: bool
    sync: bool  # the upstream ref's history merged into the owner's: reconcile's job

    @property
    def owner(self) -> str:
        return self.ours if self.owner_is_ours else self.theirs

    def markers(self) -> tuple[str, str, str]:
        return self.ours, self.base, self.theirs


def ours_is_owner(top: Path, owner_ref: str, theirs_commit: str | None = None) -> bool:
    """Which side owns the triple, by dev's identity alone: ours when HEAD is on the owner ref's
    history (dev, or a branch made from it), theirs only when the merged commit is and HEAD is
    not (dev merged into another branch). Never by content: a side whose file happens to equal
    dev's (main taking dev's lock) is not dev, and must not decide the lock or the uv version."""
    try:
        owner = git.resolve(top, owner_ref)
    except DepsyncError:
        return True  # no owner ref here: the branch being merged into keeps its files
    if git.is_ancestor(top, owner, "HEAD"):
        return True
    return not (theirs_commit and git.is_ancestor(top, owner, theirs_commit))


def owner_ref_of(config: Config) -> str:
    """The operator's owner ref (DEPSYNC_OWNER_REF), else the one our side's config names."""
    from depsync.shell.trusted_config import OWNER_REF_ENV

    named = os.environ.get(OWNER_REF_ENV, "").strip()
    return named if named and not named.startswith("-") else config.owner_ref


def _is_sync(top: Path, config: Config, theirs_commit: str | None) -> bool:
    """Is this `git merge origin/main` on dev's side: theirs on the upstream ref, ours not?"""
    if theirs_commit is None:
        return False
    try:
        upstream = git.resolve(top, config.upstream_ref)
    except DepsyncError:
        return False
    return git.is_ancestor(top, theirs_commit, upstream) and not git.is_ancestor(top, "HEAD", upstream)


def _sides(top: Path, config: Config, options: DriverOptions, ours: bytes, theirs: bytes) -> Sides:
    theirs_commit = _theirs_commit(top)
    ours_label = _given(options.labels.ours, "%X")
    if not ours_label or ours_label == "HEAD":  # git's own label for our side says nothing
        ours_label = _branch_of_head(top)
    theirs_label = _given(options.labels.theirs, "%Y") or _merged_ref() or (git.short(top, theirs_commit) if theirs_commit else "theirs")
    base_label = _given(options.labels.base, "%S") or "merge base"
    owner_is_ours = ours_is_owner(top, owner_ref_of(config), theirs_commit)
    return Sides(ours_label, theirs_label, base_label, theirs_commit, owner_is_ours, _is_sync(top, config, theirs_commit))


def _pyproject_versions(top: Path, pyproject_path: str, theirs: str) -> tuple[str, str, str] | None:
    """(base, ours, theirs) pyproject.toml of the merge in progress, from the commits."""
    base = git.merge_base(top, "HEAD", theirs)
    texts = [git.read_blob(top, commit, pyproject_path) for commit in (base, "HEAD", theirs)]
    if any(t is None for t in texts):
        return None
    return tuple(t.decode() for t in texts)  # type: ignore[return-value, union-attr]


def _staleness(config: Config, pyproject_text: str, lock: bytes) -> str | None:
    """Why lock is stale for pyproject_text (static check, as `depsync check`), None when fresh."""
    from depsync.core.model.lock import Lock
    from depsync.core.model.pyproject import Pyproject
    from depsync.core.rules import freshness
    from depsync.core.rules.inputs import CheckInputs

    try:
        inputs = CheckInputs(config, Pyproject.from_text(pyproject_text, config.pyproject), Lock.from_text(lock.decode(), config.lock))
        stale = list(freshness.check(inputs))
    except (DepsyncError, UnicodeDecodeError) as exc:
        return f"could not be compared ({exc})"
    return stale[0].message if stale else None


def _run_pyproject(options: DriverOptions, config: Config, sides: Sides, base: bytes, ours: bytes, theirs: bytes) -> int:
    merged = merge_pyproject(base.decode(), ours.decode(), theirs.decode(), config, sides.owner_is_ours, sides.markers())
    options.ours.write_text(merged.text)
    review = [d.name for d in merged.aligned.decisions if d.needs_review]
    if merged.unparsed is not None:
        _say(f"{merged.unparsed}; {options.path} left conflicted (merged as text): fix it, `git add {options.path}`, "
             f"then `depsync lock` and `git add {config.lock}`")
        if merged.unparsed.frame:
            print(merged.unparsed.frame, file=sys.stderr)
        return 1
    if not merged.clean:
        where = f"between `{sides.ours}` and `{sides.theirs}`"
        if sides.sync:
            _say(f"{options.path}: conflicts outside [tool.uv.sources] {where}; in a sync of {config.upstream_ref} into "
                 f"{config.owner_ref} the {config.owner_ref} side's file wins: run `depsync reconcile` "
                 f"(keeps it with the sources merged three-way, relocks, stages the triple)")
        else:
            _say(f"{options.path}: conflicts outside [tool.uv.sources] {where}; edit them, `git add {options.path}`, "
                 f"then `depsync lock` and `git add {config.lock}`")
        return 1
    note = f" (needs review: {', '.join(review)}; `depsync reconcile --dry-run` gives the reasons)" if review else ""
    _say(f"{options.path}: merged `{sides.ours}` and `{sides.theirs}`; [tool.uv.sources] three-way{note}")
    return 0


def _run_lock(options: DriverOptions, config: Config, sides: Sides, ours: bytes, theirs: bytes) -> int:
    owner_lock = ours if sides.owner_is_ours else theirs
    # whatever happens below, the work tree holds the owner's lock, never a text merge of two locks
    options.ours.write_bytes(owner_lock)
    versions = _pyproject_versions(Path.cwd(), config.pyproject, sides.theirs_commit) if sides.theirs_commit else None
    if versions is None:
        _say(f"{options.path} left conflicted (holding the lock of `{sides.owner}`): cannot tell which commit is being merged "
             f"(a rebase or cherry-pick?); keep the lock you want (`git checkout --ours -- {options.path}` or `--theirs`), "
             f"then `depsync lock` and `git add {options.path}`")
        return 1
    pyproject = merge_pyproject(*versions, config, sides.owner_is_ours)
    if not pyproject.clean:
        if sides.sync:
            _say(f"{options.path} left conflicted: {config.pyproject} is not resolved yet; run `depsync reconcile` "
                 f"(restores the {config.owner_ref} side's triple with the sources merged, then relocks)")
        else:
            _say(f"{options.path} left conflicted (holding the lock of `{sides.owner}`) until {config.pyproject} is resolved; "
                 f"resolve it, then `depsync lock` and `git add {options.path}`")
        return 1
    if not options.relock:
        why = _staleness(config, pyproject.text, owner_lock)
        if why is None:
            _say(f"{options.path}: took the lock of `{sides.owner}` (the {config.owner_ref} side); it is fresh for the merged {config.pyproject}")
        else:
            _say(f"{options.path}: took the lock of `{sides.owner}` (the {config.owner_ref} side); it is stale for the merged "
                 f"{config.pyproject} ({why}): after the merge run `depsync lock` and commit uv.lock")
        return 0
    from depsync.shell.runners.choose import runner_for
    from depsync.shell.runners.request import LockRequest

    # the owner side's uv pin (Dockerfile, else required-version), on the host: git is waiting.
    # Only the owner's committed files name it (validated as a release number by choose_runner):
    # the other side's `ARG UV_VERSION` never picks what is fetched and run on this machine
    owner_commit = "HEAD" if sides.owner_is_ours or not sides.theirs_commit else sides.theirs_commit
    runner, _ = runner_for(LockRequest(Path.cwd(), runner="local"), config, FileReader(Path.cwd(), owner_commit))
    result = runner.lock(Path.cwd(), [], 1800, replace={config.pyproject: pyproject.text.encode(), config.lock: owner_lock})
    if result.returncode != 0 or result.new_lock is None:
        then = "run `depsync reconcile`" if sides.sync else f"fix {config.pyproject} if needed, then `depsync lock` and `git add {options.path}`"
        _say(f"{options.path} left conflicted (holding the lock of `{sides.owner}`): uv lock failed against the merged {config.pyproject}; {then}")
        return 1
    options.ours.write_bytes(result.new_lock)
    _say(f"{options.path}: relocked the lock of `{sides.owner}` with uv {result.uv_version} against the merged {config.pyproject}")
    return 0


def run(options: DriverOptions) -> int:
    top = Path.cwd()
    ours, theirs = options.ours.read_bytes(), options.theirs.read_bytes()
    base = options.base.read_bytes() if options.base.exists() else b""
    config = config_of(FileReader(top, "HEAD"))
    sides = _sides(top, config, options, ours, theirs)
    if options.kind == "pyproject":
        return _run_pyproject(options, config, sides, base, ours, theirs)
    return _run_lock(options, config, sides, ours, theirs)
