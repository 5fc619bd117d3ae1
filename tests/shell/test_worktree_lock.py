"""reconcile's work-tree lock (shell/worktree_lock.py): one holder, and a lock taken on a file the
previous holder removed is never a second holder."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from depsync.errors import DepsyncError
from depsync.shell.worktree_lock import NAME, _still_named, exclusive


def test_one_holder_and_the_file_is_removed_on_release(tmp_path: Path) -> None:
    with exclusive(tmp_path):
        assert (tmp_path / NAME).read_text().strip() == str(os.getpid())
        with pytest.raises(DepsyncError, match=f"another depsync reconcile is running on this work tree \\(pid {os.getpid()}\\)"):
            with exclusive(tmp_path):
                pass
    assert not (tmp_path / NAME).exists()
    with exclusive(tmp_path):  # free again
        pass


def test_a_lock_on_a_removed_file_is_not_a_second_holder(tmp_path: Path) -> None:
    """B opens the file while A holds it; A releases (removes it); C takes a new file. B's flock on
    the old file now succeeds, but that file is no longer named: B must not run beside C."""
    with exclusive(tmp_path):
        stale = os.open(tmp_path / NAME, os.O_RDWR)
    try:
        with exclusive(tmp_path):  # C holds the new file
            fcntl.flock(stale, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nothing holds the old inode any more
            assert not _still_named(stale, tmp_path / NAME)
            with pytest.raises(DepsyncError, match="another depsync reconcile"):
                with exclusive(tmp_path):  # B, opening again as exclusive() does, is refused
                    pass
    finally:
        os.close(stale)
