"""Shell: the two histories the squashed-sync detection reads (depsync.core.sync.squashed).

main's non-merge commits after the merge-base, and dev's first-parent non-merge commits made
since the oldest of them: two `git log --raw` passes, the newest MAX_COMMITS of each.
"""

from __future__ import annotations

from pathlib import Path

from depsync.core.sync.squashed import SquashScan, squashed_syncs
from depsync.errors import DepsyncError
from depsync.shell import git

MAX_COMMITS = 5000
CLOCK_SKEW = 86400  # dev's walk starts a day before main's oldest commit: clocks disagree


def squashed_syncs_on(root: Path, dev: str, main: str, base: str) -> SquashScan:
    """Dev commits after base that carry main's commits without main as a parent."""
    try:
        main_commits, main_cut = git.commit_writes(root, base, main, max_count=MAX_COMMITS)
        if not main_commits:
            return SquashScan()
        since = min(c.time for c in main_commits) - CLOCK_SKEW
        dev_commits, dev_cut = git.commit_writes(root, base, dev, first_parent=True, since=since, max_count=MAX_COMMITS)
    except DepsyncError as exc:  # a history git cannot walk (a shallow clone's edge): said, never fatal
        return SquashScan(error=exc.message)
    found = squashed_syncs(main_commits[::-1], dev_commits[::-1]) if dev_commits else []
    return SquashScan(tuple(found), main_cut or dev_cut, (len(main_commits), len(dev_commits)))
