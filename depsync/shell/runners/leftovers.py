"""Shell: what a SIGKILLed run leaves (work copies) and the processes a child left behind.

Work copies carry their owner in their name, `<base><pid>.<start time>-...`: the next run
removes those whose owner is gone (the pid not running, or running with another start time),
never another live run's. The docker runner and the local runner both use this.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat): tells a reused pid apart."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def process_state(pid: int, started: str) -> str:
    """"alive", "dead", or "unknown" (no /proc)."""
    try:
        now = start_time(pid)
    except (FileNotFoundError, ProcessLookupError):
        return "dead"
    except (OSError, IndexError):
        return "unknown"
    return "alive" if now == started else "dead"


def owned_prefix(base: str) -> str:
    """base plus this process's pid and start time: a name the next run can tell is ours."""
    try:
        return f"{base}{os.getpid()}.{start_time(os.getpid())}-"
    except (OSError, IndexError):
        return base


def sweep(parent: Path, base: str) -> None:
    """Remove the caller's work copies in parent (named owned_prefix(base)...) whose owner is gone."""
    pattern = re.compile(re.escape(base) + r"(\d+)\.(\d+)-")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        if process_state(int(match.group(1)), match.group(2)) == "dead":
            kill_processes_in(Path(entry.path))  # the uv (and backends) the killed run left running there
            shutil.rmtree(entry.path, ignore_errors=True)


def kill_processes_in(directory: Path) -> None:
    """SIGKILL the caller's processes whose working directory is inside directory."""
    import signal

    real = os.path.realpath(directory)
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != os.getuid():
                continue
            cwd = os.readlink(f"/proc/{name}/cwd")
        except OSError:
            continue
        if cwd == real or cwd.startswith(real + os.sep):
            try:
                os.kill(int(name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
