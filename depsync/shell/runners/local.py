"""The local runner: uv on the host, on a copy of what uv reads of the project (workset.py).

The copy sits next to the project (same depth), so relative paths such as
`find-links = ["../wheels"]` resolve exactly as they do for the real project; when no such
path leaves the project and nothing above it is something uv looks for, it goes to /dev/shm.
uv's output is streamed as it comes, with the copy's path shown as the project's.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from depsync.shell.runners import leftovers
from depsync.shell.runners.protocol import LineSink, LockRun, PhaseSink
from depsync.shell.runners.workcopy import (
    path_rewriter,
    read_result,
    write_replacements,
)
from depsync.shell.runners.workset import (
    WorkSet,
    copy_work_set,
    first_work_set,
    memory_parent,
    settled,
    work_set,
)
from depsync.shell.uv import stream_uv


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
        # replaced files are not what the freshness prediction read: the full set
        selection = work_set(project, minimal=False) if replace else first_work_set(project, args)
        while True:
            run, stands = self._attempt(project, args, timeout, on_line, replace, on_phase, selection)
            if stands:
                return run
            selection = work_set(project, minimal=False)  # see workset.settled

    def _attempt(
        self, project: Path, args: list[str], timeout: float, on_line: LineSink | None,
        replace: Mapping[str, bytes] | None, on_phase: PhaseSink | None, selection: WorkSet,
    ) -> tuple[LockRun, bool]:
        # next to the project, so `../x` resolves as it does for the project; in memory when nothing needs that
        parent = memory_parent(project, selection) or project.parent
        base = f".{project.name}.depsync-"
        leftovers.sweep(parent, base)  # what a SIGKILLed run left there
        holder = Path(tempfile.mkdtemp(prefix=leftovers.owned_prefix(base), dir=parent))
        try:
            if on_phase:
                on_phase("copying the project")
            copy = copy_work_set(project, holder, selection)
            write_replacements(copy, replace)
            if on_phase:
                on_phase("uv lock")
            # a minimal run's log is passed on only once it stands (it is short: uv answered from the lock)
            result = stream_uv(["lock", *args], copy, self.uv_version, timeout, None if selection.minimal else on_line, path_rewriter(str(copy), str(project)))
            checking = "--check" in args
            new_lock = read_result(copy) if result.returncode == 0 and not checking else None
            stands = settled(project, selection, result.returncode, new_lock, checking)
            if stands and selection.minimal and on_line:
                for line in result.stdout.splitlines():
                    on_line(line)
            return LockRun(result.returncode, result.stdout.strip(), result.version, new_lock), stands
        finally:
            shutil.rmtree(holder, ignore_errors=True)
