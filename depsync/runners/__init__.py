"""Runners run `uv lock` somewhere: on the host (local) or in the CI image (docker, issue 4)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class LockRun:
    returncode: int
    output: str  # uv's stderr/stdout, secrets masked
    uv_version: str


class Runner(Protocol):
    name: str

    def lock(self, project: Path, args: list[str], timeout: float) -> LockRun: ...
