"""The local runner: uv on the host, on a sibling copy of the project.

The copy sits next to the project (same depth), so relative paths such as
`find-links = ["../wheels"]` resolve exactly as they do for the real project.
uv's output is streamed as it comes, with the copy's path shown as the project's.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from depsync.shell.runners import LineSink, LockRun, PhaseSink, copy_project, path_rewriter, write_replacements
from depsync.shell.uv import stream_uv
from depsync.shell.runners import read_result
from depsync.shell.runners import leftovers


@contextmanager
def sibling_copy(project: Path) -> Iterator[Path]:
    """A real copy of project next to it (same depth: `../wheels` resolves alike), removed after.
    What runs there (uv, a build backend) cannot write the caller's files."""
    project = project.resolve()
    base = f".{project.name}.depsync-"
    leftovers.sweep(project.parent, base)  # what a SIGKILLed run left next to the project
    holder = Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(base), dir=project.parent))
    try:
        yield copy_project(project, holder)
    finally:
        shutil.rmtree(holder, ignore_errors=True)


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
        if on_phase:
            on_phase("copying the project")
        with sibling_copy(project) as copy:
            write_replacements(copy, replace)
            if on_phase:
                on_phase("uv lock")
            result = stream_uv(["lock", *args], copy, self.uv_version, timeout, on_line, path_rewriter(str(copy), str(project)))
            new_lock = read_result(copy) if result.returncode == 0 and "--check" not in args else None
            return LockRun(result.returncode, result.stdout.strip(), result.version, new_lock)
