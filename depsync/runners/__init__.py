"""Runners run `uv lock` somewhere: in the CI image (docker) or on the host (local).

Both work on a copy of the project and hand back the new uv.lock bytes; the command
writes them over the real lock atomically, and only when uv succeeded and the result
parses. A runner never touches the caller's files.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# not copied into the work copy: VCS data, environments and caches uv does not read
_SKIP = (".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox")


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

    def lock(self, project: Path, args: list[str], timeout: float, on_line: LineSink | None = None) -> LockRun: ...


def copy_project(project: Path, destination: Path) -> Path:
    """Copy the project (without VCS data, venvs and caches) into destination (may exist, empty)."""
    shutil.copytree(project, destination, symlinks=True, ignore=shutil.ignore_patterns(*_SKIP), dirs_exist_ok=True)
    return destination
