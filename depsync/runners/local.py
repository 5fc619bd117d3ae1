"""The local runner: uv on the host, on a sibling copy of the project.

The copy sits next to the project (same depth), so relative paths such as
`find-links = ["../wheels"]` resolve exactly as they do for the real project.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from depsync.runners import LineSink, LockRun, copy_project, write_replacements
from depsync.uv import run_uv


@dataclass(frozen=True)
class LocalRunner:
    uv_version: str | None = None  # None: whatever uv is on PATH
    name: str = "local"

    def lock(self, project: Path, args: list[str], timeout: float = 1800, on_line: LineSink | None = None, replace: Mapping[str, bytes] | None = None) -> LockRun:
        project = project.resolve()
        holder = Path(tempfile.mkdtemp(prefix=f".{project.name}.depsync-", dir=project.parent))
        try:
            copy = copy_project(project, holder)
            write_replacements(copy, replace)
            result = run_uv(["lock", *args], copy, self.uv_version, timeout=timeout)
            output = (result.stderr + result.stdout).strip()
            if on_line:
                for line in output.splitlines():
                    on_line(line)
            lock_file = copy / "uv.lock"
            new_lock = lock_file.read_bytes() if result.returncode == 0 and "--check" not in args and lock_file.is_file() else None
            return LockRun(result.returncode, output, result.version, new_lock)
        finally:
            shutil.rmtree(holder, ignore_errors=True)
