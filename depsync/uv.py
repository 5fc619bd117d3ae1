"""Shell: run real uv as a subprocess (argument lists only), at a pinned version when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from depsync import process
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
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "depsync"


def uv_binary(version: str) -> Path:
    """A Linux uv binary of exactly this version, from the uv wheel on the package index, cached."""
    import sys
    import tempfile
    import zipfile

    if not uv_version_allowed(version):  # the version names a directory: never a path of its own
        raise DepsyncError(f"{version!r} is not a uv release number")
    target = cache_root() / "uv" / version / "uv"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", tmp, f"uv=={version}"],
            capture_output=True,
            text=True,
            check=False,
        )
        wheels = list(Path(tmp).glob("uv-*.whl"))
        if result.returncode != 0 or not wheels:
            raise DepsyncError(f"could not download uv {version} from the package index: {redact(result.stderr.strip().splitlines()[-1:][0] if result.stderr.strip() else 'no wheel')}")
        with zipfile.ZipFile(wheels[0]) as archive:
            member = next((n for n in archive.namelist() if n.endswith("/scripts/uv")), None)
            if member is None:
                raise DepsyncError(f"the uv {version} wheel has no uv binary")
            partial = target.with_suffix(".partial")
            partial.write_bytes(archive.read(member))
            partial.chmod(0o755)
            os.replace(partial, target)
    return target
