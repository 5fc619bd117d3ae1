"""Shell: the two histories the squashed-sync detection reads (depsync.core.sync.squashed).

main's commits that dev does not have (`main ^dev`, merges included, for the time each landed on
main's first-parent chain), and dev's first-parent commits that main does not have
(`dev ^main`) made since the oldest of them: two `git log --raw` passes read as they come, each
bounded in commits, in paths per commit and in paths over all (dev keeps only the writes that
match one of main's). Then, for the newest finding, what its repair would drop: the files main
changed up to the repair's commit that dev has differently (two `git diff --raw`, bounded).
"""

from __future__ import annotations

from pathlib import Path

from depsync.core.sync.squashed import (
    EMPTY_BLOBS,
    SquashScan,
    dropped_change,
    landed,
    scan,
)
from depsync.errors import DepsyncError
from depsync.shell import git

MAX_COMMITS = 5000
MAX_FILES = 1000  # paths read of one commit: a squash of main writes many, a sync rarely 1,000 that matter
MAX_PATHS = 300_000  # paths kept over one history (about 60 MB): the read stops there, and says so
MAX_DROPPED = 20_000  # paths compared for what a repair would drop
CLOCK_SKEW = 86400  # dev's walk starts a day before main's oldest landing: clocks disagree


def squashed_syncs_on(root: Path, dev: str, main: str, base: str) -> SquashScan:
    """Dev commits main does not have that carry main's commits without main as a parent."""
    try:
        main_commits, main_cut = git.commit_writes(root, dev, main, max_count=MAX_COMMITS, max_files=MAX_FILES, max_paths=MAX_PATHS)
        writes = {(path, blob) for c in main_commits if len(c.parents) <= 1 for path, blob in c.changes.items() if blob is not None and blob not in EMPTY_BLOBS}
        if not writes:
            return SquashScan(read=(len(main_commits), 0))
        main_landed = landed(main_commits)
        since = min(c.time for c in main_landed) - CLOCK_SKEW
        dev_commits, dev_cut = git.commit_writes(root, main, dev, first_parent=True, since=since, max_count=MAX_COMMITS,
                                                 max_files=MAX_FILES, max_paths=MAX_PATHS, keep=lambda path, blob: (path, blob) in writes)
        del writes
        found = scan(main_commits, dev_commits, main_landed)
        files_cut = sum(1 for c in (*main_commits, *dev_commits) if c.files_cut)
        read = (len(main_commits), len(dev_commits))
        del main_commits, dev_commits, main_landed
        dropped, dropped_cut = _dropped(root, dev, found[-1].newest_main, base) if found else ((), False)
    except DepsyncError as exc:  # a history git cannot walk (a shallow clone's edge): said, never fatal
        return SquashScan(error=exc.message)
    return SquashScan(tuple(found), main_cut or dev_cut, read, files_cut=files_cut, dropped=dropped, dropped_cut=dropped_cut)


def _dropped(root: Path, dev: str, repair: str, base: str) -> tuple[tuple, bool]:
    """The files main changed between the merge-base and the repair's commit that dev has
    differently: what `git merge -s ours <repair>` keeps dev's version of (deletions and
    emptied files included: no blob of theirs is evidence, so only this names them)."""
    by_main, main_cut = git.raw_diff(root, base, repair, max_paths=MAX_DROPPED)
    differ, dev_cut = git.raw_diff(root, dev, repair, max_paths=MAX_DROPPED, keep=lambda path: path in by_main)
    return tuple(dropped_change(path, blob) for path, blob in sorted(differ.items())), main_cut or dev_cut
