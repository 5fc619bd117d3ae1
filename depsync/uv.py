"""Shell: run real uv as a subprocess (argument lists only), at a pinned version when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from depsync.errors import DepsyncError
from depsync.redact import redact


@dataclass(frozen=True)
class UvResult:
    returncode: int
    stdout: str
    stderr: str
    version: str


def host_uv() -> str:
    path = shutil.which("uv")
    if not path:
        raise DepsyncError("uv not found on PATH: install it (`pip install uv`) to use --deep")
    return path


def uv_version(argv: list[str]) -> str:
    result = subprocess.run([*argv, "--version"], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise DepsyncError(f"could not run {' '.join(argv)}: {redact(result.stderr.strip())}")
    return result.stdout.split()[1] if result.stdout.split()[1:] else ""


def uv_command(version: str | None) -> list[str]:
    """argv prefix running uv at version (host uv when it matches, else `uv tool run uv@version`)."""
    host = host_uv()
    if version is None or uv_version([host]) == version:
        return [host]
    return [host, "tool", "run", "--quiet", f"uv@{version}"]


def run_uv(args: list[str], project: Path, version: str | None = None, timeout: float = 600) -> UvResult:
    argv = uv_command(version)
    env = dict(os.environ, NO_COLOR="1")
    try:
        used = uv_version(argv)
        result = subprocess.run([*argv, *args], cwd=project, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise DepsyncError(f"uv {' '.join(args)} timed out after {timeout:.0f}s") from None
    return UvResult(result.returncode, redact(result.stdout), redact(result.stderr), used)
