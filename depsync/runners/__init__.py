"""Runners run `uv lock` somewhere: in the CI image (docker) or on the host (local).

Both work on a copy of the project and hand back the new uv.lock bytes; the command
writes them over the real lock atomically, and only when uv succeeded and the result
parses. A runner never touches the caller's files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# not copied into the work copy: VCS data, environments, caches and build metadata uv does not read
_SKIP = (".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", "*.egg-info")
# files uv (or a build backend) may rewrite: always real copies, never hard links
_WRITTEN = {"uv.lock", "pyproject.toml", "setup.cfg", "setup.py", "PKG-INFO"}


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


def _link_or_copy(source: str, destination: str) -> None:
    """Hard-link files uv only reads (fast for large trees); copy the ones it may write."""
    if os.path.basename(source) not in _WRITTEN:
        try:
            os.link(source, destination)
            return
        except OSError:
            pass  # another filesystem, or links not allowed: copy
    shutil.copy2(source, destination)


def write_replacements(copy: Path, replace: Mapping[str, bytes] | None) -> None:
    for relative, data in (replace or {}).items():
        target = copy / relative
        target.unlink(missing_ok=True)  # never write through a hard link
        target.write_bytes(data)


def copy_project(project: Path, destination: Path) -> Path:
    """Copy the project (without VCS data, venvs and caches) into destination (may exist, empty).

    uv replaces uv.lock by renaming a new file over it, so the hard-linked inputs of the
    caller's tree are never written through.
    """
    shutil.copytree(project, destination, symlinks=True, ignore=shutil.ignore_patterns(*_SKIP), copy_function=_link_or_copy, dirs_exist_ok=True)
    return destination
