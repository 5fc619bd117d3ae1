"""What every runner is: `lock(project, args, ...) -> LockRun`, with uv's lines and the phase handed on as they come."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from depsync.records import record


@record
class LockRun:
    returncode: int
    output: str  # uv's log, secrets masked
    uv_version: str
    new_lock: bytes | None  # the lock uv wrote in the copy (None when uv failed or only checked)
    notes: tuple[str, ...] = ()  # what the runner did that the user should know (e.g. which uv it provided)


LineSink = Callable[[str], None]  # one line of uv's log, as uv wrote it (secrets masked, paths rewritten)


PhaseSink = Callable[[str], None]  # what the runner is doing now ("probing the image's uv", "uv lock")


class Runner(Protocol):
    @property
    def name(self) -> str: ...

    def lock(
        self,
        project: Path,
        args: list[str],
        timeout: float,
        on_line: LineSink | None = None,
        replace: Mapping[str, bytes] | None = None,
        on_phase: PhaseSink | None = None,
    ) -> LockRun:
        """Run `uv lock ARGS` on a copy of project, with `replace` (relative path -> bytes) written into the copy first."""
        ...
