"""Shell: run real uv as a subprocess (argument lists only), at a pinned version when asked."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

from depsync.core.redact import redact
from depsync.core.streaming import Tail
from depsync.core.trust import uv_version_allowed
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.shell import process


@record
class UvResult:
    returncode: int
    stdout: str
    stderr: str
    version: str


def error_summary(output: str, limit: int = 600) -> str:
    """uv's log as one line for an error message: its error lines when it printed any, else its last lines."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("error:", "×", "╰─▶", "cause:", "Caused by:", "fatal:", "warning:"))]
    text = " ".join(errors or lines[-6:])
    return text if len(text) <= limit else "..." + text[-limit:]


def output_tail(output: str, lines: int = 25, limit: int = 4000) -> str:
    """The last lines of uv's own log, as uv wrapped them (git's `fatal: ...` under `--- stderr`
    included), for the failure's report: a one-line summary cuts exactly the part that says why."""
    kept = [line.rstrip() for line in output.splitlines() if line.strip()][-lines:]
    text = "\n".join(kept)
    return text if len(text) <= limit else "..." + text[-limit:]


def _version_memo(binary: str) -> Path | None:
    """Where the version of this exact binary file is remembered: keyed by its path, size, inode
    and change time, so a replaced or rewritten binary is asked again (`uv --version` is a
    process start, ~50 ms, on every lock)."""
    import hashlib

    from depsync.shell import cache

    try:
        real = os.path.realpath(binary)
        info = os.stat(real)
    except OSError:
        return None
    key = f"{real}\0{info.st_size}\0{info.st_ino}\0{info.st_dev}\0{info.st_mtime_ns}\0{info.st_ctime_ns}"
    return Path(cache.root()) / "uv-versions" / hashlib.sha256(key.encode()).hexdigest()[:32]


def uv_version(argv: list[str]) -> str:
    memo = _version_memo(argv[0]) if len(argv) == 1 else None
    if memo is not None:
        try:
            remembered = memo.read_text().strip()
            if uv_version_allowed(remembered):
                return remembered
        except OSError:
            pass
    result = process.run([*argv, "--version"], text=True, timeout=600)
    if result.returncode != 0:
        raise DepsyncError(f"could not run {' '.join(argv)}: {redact(result.stderr.strip())}")
    found = result.stdout.split()[1] if result.stdout.split()[1:] else ""
    if memo is not None and uv_version_allowed(found):
        try:
            memo.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            memo.write_text(found)
        except OSError:
            pass  # a memo only saves time
    return found


def available_uv(version: str | None, *, fetch: bool) -> tuple[list[str], str] | None:
    """(argv, version) of uv at `version`, run directly: the host uv when it is that version,
    else that version's verified binary from depsync's cache (fetched from the package index
    when `fetch`). Without a pin, or offline without the pinned binary, the host's uv; None
    when there is none. The one policy for `check` (offline), `--deep`, the local runner and
    the merge driver.

    Never `uv tool run uv@X`: that asks the package index on every call, which a gate that says
    --offline must not do, and it resolves uv's own version range instead of the exact pin."""
    if version is not None and not uv_version_allowed(version):
        raise DepsyncError(f"{version!r} is not a uv release number")
    host = shutil.which("uv")
    found = None
    if host is not None:
        try:
            found = uv_version([host])
        except DepsyncError:
            host = None
    if host is not None and (version is None or found == version):
        return [host], found or ""
    if version is not None:
        from depsync.shell.uvwheel import cached_binary, host_platform

        if fetch:
            return [str(uv_binary(version))], version
        if cached_binary(version, host_platform()).is_file():
            return [str(cached_binary(version, host_platform()))], version
    return ([host], found or "") if host is not None else None


def pinned_uv(version: str | None, missing: str = "uv not found on PATH: install it (`pip install uv`)") -> tuple[list[str], str]:
    """available_uv, fetching the pinned binary when the host's uv is another version."""
    found = available_uv(version, fetch=True)
    if found is None:
        raise DepsyncError(missing)
    return found


def uv_binary(version: str) -> Path:
    """A uv binary of exactly this version for this (Linux) host, from the uv wheel on the
    package index, verified and cached (depsync/uvwheel.py; no pip needed)."""
    from depsync.shell.uvwheel import host_platform
    from depsync.shell.uvwheel import uv_binary as fetch

    return fetch(version, host_platform())


def stream_uv(args: list[str], project: Path, version: str | None, timeout: float, on_line: Callable[[str], None] | None = None, transform: Callable[[str], str] | None = None,
              extra_env: Mapping[str, str] | None = None, base_env: Mapping[str, str] | None = None) -> UvResult:
    """Run uv with its output (stderr and stdout, in order) handed to on_line as it comes, each
    line rewritten by transform and masked. The child gets its own process group, killed with
    everything it started on a timeout, an error or a handled signal."""
    argv, used = pinned_uv(version, "uv not found on PATH: the local runner runs uv on this machine; install it (`pip install uv`) or use --runner docker")
    # uv writes to a pipe that depsync passes on line by line: it must not wrap to a width
    env = {k: v for k, v in (os.environ if base_env is None else base_env).items() if k not in ("COLUMNS", "LINES")}
    env["NO_COLOR"] = "1"
    env.update(extra_env or {})
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
