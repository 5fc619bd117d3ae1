"""Shell: run real uv as a subprocess (argument lists only), at a pinned version when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from depsync import process
from depsync.streaming import Tail
from depsync.errors import DepsyncError
from depsync.redact import redact
from depsync.untrusted import uv_version_allowed


@dataclass(frozen=True)
class UvResult:
    returncode: int
    stdout: str
    stderr: str
    version: str


def error_summary(output: str, limit: int = 600) -> str:
    """uv's log as one line for an error message: its error lines when it printed any, else its last lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", "×", "╰─▶", "cause:", "warning:"))]
    text = " ".join(errors or lines[-6:])
    return text if len(text) <= limit else "..." + text[-limit:]


def host_uv() -> str:
    path = shutil.which("uv")
    if not path:
        raise DepsyncError("uv not found on PATH: install it (`pip install uv`) to use --deep")
    return path


def uv_version(argv: list[str]) -> str:
    result = process.run([*argv, "--version"], text=True, timeout=600)
    if result.returncode != 0:
        raise DepsyncError(f"could not run {' '.join(argv)}: {redact(result.stderr.strip())}")
    return result.stdout.split()[1] if result.stdout.split()[1:] else ""


def uv_command(version: str | None) -> list[str]:
    """argv prefix running uv at version (host uv when it matches, else `uv tool run uv@version`)."""
    if shutil.which("uv") is None:  # the local runner's own words (host_uv's name --deep, check's use of it)
        raise DepsyncError("uv not found on PATH: the local runner runs uv on this machine; install it (`pip install uv`) or use --runner docker")
    host = host_uv()
    if version is not None and not uv_version_allowed(version):
        raise DepsyncError(f"{version!r} is not a uv release number")
    if version is None or uv_version([host]) == version:
        return [host]
    return [host, "tool", "run", "--quiet", f"uv@{version}"]


def run_uv(args: list[str], project: Path, version: str | None = None, timeout: float = 600) -> UvResult:
    argv = uv_command(version)
    env = dict(os.environ, NO_COLOR="1")
    try:
        used = uv_version(argv)
        result = process.run([*argv, *args], cwd=project, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DepsyncError(f"uv {' '.join(args)} timed out after {timeout:.0f}s") from None
    return UvResult(result.returncode, redact(result.stdout), redact(result.stderr), used)


def cache_root() -> Path:
    from depsync.uvwheel import cache_dir

    return cache_dir()


def uv_binary(version: str) -> Path:
    """A uv binary of exactly this version for this (Linux) host, from the uv wheel on the
    package index, verified and cached (depsync/uvwheel.py; no pip needed)."""
    from depsync.uvwheel import host_platform
    from depsync.uvwheel import uv_binary as fetch

    return fetch(version, host_platform())


def stream_uv(args: list[str], project: Path, version: str | None, timeout: float, on_line: Callable[[str], None] | None = None, transform: Callable[[str], str] | None = None) -> UvResult:
    """Run uv with its output (stderr and stdout, in order) handed to on_line as it comes, each
    line rewritten by transform and masked. The child gets its own process group, killed with
    everything it started on a timeout, an error or a handled signal."""
    argv = uv_command(version)
    used = uv_version(argv)
    # uv writes to a pipe that depsync passes on line by line: it must not wrap to a width
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["NO_COLOR"] = "1"
    lines = Tail()  # bounded: a backend flooding stderr costs no memory

    def take(text: str) -> None:
        line = redact(transform(text) if transform else text)
        lines.append(line)
        if on_line:
            on_line(line)

    try:
        status = process.stream([*argv, *args], cwd=project, env=env, timeout=timeout, on_line=take)
    except subprocess.TimeoutExpired:
        raise DepsyncError(f"uv {' '.join(args)} timed out after {timeout:.0f}s") from None
    return UvResult(status, lines.text(), "", used)
