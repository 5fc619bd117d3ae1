"""Runners run `uv lock` somewhere: in the CI image (docker) or on the host (local).

Both work on a copy of the project and hand back the new uv.lock bytes; the command
writes them over the real lock atomically, and only when uv succeeded and the result
parses. A runner never touches the caller's files: the copy is a real copy (a reflink
where the filesystem has them), so a build backend that uv runs can rewrite or chmod
anything in it without reaching the caller's tree.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# not copied into the work copy: VCS data, environments, caches and build metadata uv does not read
_SKIP = (".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", "*.egg-info")
_FICLONE = 0x40049409  # linux/fs.h: share extents copy-on-write (btrfs, xfs); not an inode


@dataclass(frozen=True)
class LockRun:
    returncode: int
    output: str  # uv's log, secrets masked
    uv_version: str
    new_lock: bytes | None  # the lock uv wrote in the copy (None when uv failed or only checked)
    notes: tuple[str, ...] = ()  # what the runner did that the user should know (e.g. which uv it provided)


LineSink = Callable[[str], None]


class Runner(Protocol):
    name: str

    def lock(self, project: Path, args: list[str], timeout: float, on_line: LineSink | None = None, replace: Mapping[str, bytes] | None = None) -> LockRun:
        """Run `uv lock ARGS` on a copy of project, with `replace` (relative path -> bytes) written into the copy first."""
        ...


def _copy_file(source: str, destination: str) -> None:
    """A copy that shares no inode with the source: a reflink when the filesystem can, else bytes."""
    with open(source, "rb") as src, open(destination, "wb") as dst:
        try:
            fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
        except OSError:
            shutil.copyfileobj(src, dst, 1 << 20)
    shutil.copystat(source, destination)


def write_replacements(copy: Path, replace: Mapping[str, bytes] | None) -> None:
    for relative, data in (replace or {}).items():
        target = copy / relative
        target.unlink(missing_ok=True)  # a symlink in the copy is replaced, never written through
        target.write_bytes(data)


def copy_project(project: Path, destination: Path) -> Path:
    """Copy the project (without VCS data, venvs and caches) into destination (may exist, empty).

    Symlinks stay symlinks (never followed while copying); in the container they resolve
    inside the container."""
    shutil.copytree(project, destination, symlinks=True, ignore=shutil.ignore_patterns(*_SKIP), copy_function=_copy_file, dirs_exist_ok=True)
    return destination
