"""Shell: one `depsync reconcile` at a time on a work tree: an exclusive lock in its git dir.

Two reconciles on one work tree would each snapshot, write and, on a failure, restore the same
files: the one that fails puts back what it saw before over the other's result. The lock is
`flock` on `<git dir>/depsync-reconcile.lock` (per work tree: a linked worktree has its own git
dir), held for the whole run and released by the kernel when the process ends, however it ends:
a killed run never leaves a stale lock (only the file, which the next run takes over). The file
holds the pid of the run that holds it, for the message of the one refused; a run removes it as
it releases it, and a lock taken on a file already removed is taken again on the new one.
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


def _open(path: Path) -> int | None:
    """The lock file's descriptor; None where the git dir cannot hold one (read-only)."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT):
            return None
        if exc.errno == errno.ELOOP:
            raise DepsyncError(f"{path} is a symlink; not used as reconcile's lock") from None
        raise


def _still_named(fd: int, path: Path) -> bool:
    """The locked file is still the one the name points at: the holder before us removes the
    file as it releases it, so a lock taken on a file already removed locks nothing."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


@contextmanager
def exclusive(git_dir: Path) -> Iterator[None]:
    """Hold the work tree's reconcile lock; another holder is exit 2 with its pid. A git dir
    where the lock cannot be made (read-only) is no lock: such a run cannot write either."""
    path = git_dir / NAME
    for _ in range(8):  # a file removed between our open and our lock: open the new one
        fd = _open(path)
        if fd is None:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            pid = f" (pid {holder})" if holder.isdigit() else ""
            raise DepsyncError(f"another depsync reconcile is running on this work tree{pid}: wait for it to finish, then run again") from None
        if _still_named(fd, path):
            break
        os.close(fd)
    else:
        raise DepsyncError(f"{path} keeps being replaced: another depsync reconcile is starting on this work tree; run again")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            # removed while still held (no leftover in the git dir); a run that opened this file
            # before the removal finds it no longer named and opens the new one (_still_named)
            try:
                os.unlink(path)
            except OSError:
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing releases the flock
