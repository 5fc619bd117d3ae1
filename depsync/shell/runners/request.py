"""What a relock asks for: one request type for `depsync lock`, reconcile and the merge driver."""

from __future__ import annotations

from pathlib import Path

from depsync.records import field, record


@record
class LockRequest:
    root: Path
    runner: str = "auto"  # auto, docker, local
    image: str | None = None
    build: bool = False
    target: str | None = None
    build_args: dict[str, str] = field(default_factory=dict)
    upgrade: bool = False
    upgrade_packages: tuple[str, ...] = ()
    check: bool = False
    timeout: float = 1800
    summary: Path | None = None
    cache_volume: str | None = None  # None: one volume per project checkout and uid
    memory: str | None = None  # docker runner: the container's memory limit (e.g. "8g")
