"""Shell: one `depsync reconcile` at a time on a work tree: an exclusive lock in its git dir.

Two reconciles on one work tree would each snapshot, write and, on a failure, restore the same
files: the one that fails puts back what it saw before over the other's result. The lock is
`flock` on `<git dir>/depsync-reconcile.lock` (per work tree: a linked worktree has its own git
dir), held for the whole run and released by the kernel when the process ends, however it ends:
a killed run never leaves a stale lock (only the file, which the next run takes over). The file
holds the pid of the run that holds it, for the message of the one refused, and stays (empty).
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from depsync.errors import DepsyncError

NAME = "depsync-reconcile.lock"


@contextmanager
def exclusive(git_dir: Path) -> Iterator[None]:
    """Hold the work tree's reconcile lock; another holder is exit 2 with its pid. A git dir
    where the lock cannot be made (read-only) is no lock: such a run cannot write either."""
    path = git_dir / NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT):
            yield
            return
        if exc.errno == errno.ELOOP:
            raise DepsyncError(f"{path} is a symlink; not used as reconcile's lock") from None
        raise
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            pid = f" (pid {holder})" if holder.isdigit() else ""
            raise DepsyncError(f"another depsync reconcile is running on this work tree{pid}: wait for it to finish, then run again") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            # emptied, never removed: a run that opened the file before an unlink would lock the
            # old inode while a later one locks a new file, and both would run
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing releases the flock
