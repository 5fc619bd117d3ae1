"""The local runner: uv on the host, on a sibling copy of the project.

The copy sits next to the project (same depth), so relative paths such as
`find-links = ["../wheels"]` resolve exactly as they do for the real project.
uv's output is streamed as it comes, with the copy's path shown as the project's.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from depsync.shell.runners import LineSink, LockRun, PhaseSink, copy_project, path_rewriter, write_replacements
from depsync.shell.uv import stream_uv
from depsync.shell.runners import read_result


@dataclass(frozen=True)
class LocalRunner:
    uv_version: str | None = None  # None: whatever uv is on PATH
    name: str = "local"

    def lock(
        self,
        project: Path,
        args: list[str],
        timeout: float = 1800,
        on_line: LineSink | None = None,
        replace: Mapping[str, bytes] | None = None,
        on_phase: PhaseSink | None = None,
    ) -> LockRun:
        project = project.resolve()
        holder = Path(tempfile.mkdtemp(prefix=f".{project.name}.depsync-", dir=project.parent))
        try:
            if on_phase:
                on_phase("copying the project")
            copy = copy_project(project, holder)
            write_replacements(copy, replace)
            if on_phase:
                on_phase("uv lock")
            result = stream_uv(["lock", *args], copy, self.uv_version, timeout, on_line, path_rewriter(str(copy), str(project)))
            new_lock = read_result(copy) if result.returncode == 0 and "--check" not in args else None
            return LockRun(result.returncode, result.stdout.strip(), result.version, new_lock)
        finally:
            shutil.rmtree(holder, ignore_errors=True)
