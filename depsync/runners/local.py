"""The local runner: uv on the host, at the version the Dockerfile pins when it can be had."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from depsync.runners import LockRun
from depsync.uv import run_uv


@dataclass(frozen=True)
class LocalRunner:
    uv_version: str | None = None  # None: whatever uv is on PATH
    name: str = "local"

    def lock(self, project: Path, args: list[str], timeout: float = 1800) -> LockRun:
        result = run_uv(["lock", *args], project, self.uv_version, timeout=timeout)
        return LockRun(result.returncode, (result.stderr + result.stdout).strip(), result.version)
