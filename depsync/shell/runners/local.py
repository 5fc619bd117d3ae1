"""The local runner: uv on the host, on a copy of what uv reads of the project (workset.py).

The copy sits next to the project (same depth), so relative paths such as
`find-links = ["../wheels"]` resolve exactly as they do for the real project; when no such
path leaves the project and nothing above it is something uv looks for, it goes to /dev/shm.
uv's output is streamed as it comes, with the copy's path shown as the project's. A
`.python-version(s)` that names an interpreter path (not a version) is not in the copy: uv
would run that program as the caller (drop_interpreter_paths).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from depsync.records import record
from depsync.shell.runners import leftovers
from depsync.shell.runners.protocol import LineSink, LockRun, PhaseSink
from depsync.shell.runners.workcopy import (
    path_rewriter,
    read_result,
    version_environment,
    write_replacements,
)
from depsync.shell.runners.workset import (
    WorkSet,
    copy_work_set,
    lock_on_work_sets,
    memory_parent,
)
from depsync.shell.uv import stream_uv


def drop_interpreter_paths(copy: Path) -> str:
    """Remove from the copy a `.python-version(s)` that names an interpreter path: uv would run
    that program, as the caller, to ask what it is. A version request (`3.12`) stays: uv then
    finds a matching interpreter of the caller's. Returns a note when one was removed."""
    from depsync.core.trust import names_interpreter_path

    removed = []
    for name in (".python-version", ".python-versions"):
        path = copy / name
        try:
            if path.is_symlink() or (path.is_file() and names_interpreter_path(path.read_text(errors="replace"))):
                path.unlink()
                removed.append(name)
        except OSError:
            continue
    return f"{' and '.join(removed)} not given to uv: it names an interpreter path (uv would run it)" if removed else ""


@record
class LocalRunner:
    uv_version: str | None = None  # None: whatever uv is on PATH
    name: str = "local"
    environment: Mapping[str, str] | None = None  # uv's environment instead of depsync's own (check --deep: lock_check_env)

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
        return lock_on_work_sets(
            project, args, replace, on_line, lambda selection, lines: self._attempt(project, args, timeout, lines, replace, on_phase, selection)
        )

    def _attempt(
        self, project: Path, args: list[str], timeout: float, on_line: LineSink | None,
        replace: Mapping[str, bytes] | None, on_phase: PhaseSink | None, selection: WorkSet,
    ) -> LockRun:
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
            dropped = drop_interpreter_paths(copy)
            if on_phase:
                on_phase("uv lock")
            environment = os.environ if self.environment is None else self.environment
            extra, note = version_environment(copy, environment)
            result = stream_uv(["lock", *args], copy, self.uv_version, timeout, on_line, path_rewriter(str(copy), str(project)),
                               extra_env=extra, base_env=self.environment)
            new_lock = read_result(copy) if result.returncode == 0 and "--check" not in args else None
            notes = tuple(n for n in (note, dropped) if n)
            return LockRun(result.returncode, result.stdout.strip(), result.version, new_lock, notes)
        finally:
            shutil.rmtree(holder, ignore_errors=True)
