"""Shell: run a child process (argument lists only) that never outlives depsync.

The child gets its own process group. On a timeout, an error or a handled signal
(depsync.shell.signals) the whole group is killed and reaped, so neither uv nor a build
backend or git helper it started is left running as an orphan.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from depsync.shell import signals


def run(
    argv: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    text: bool = False,
) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Like subprocess.run(capture_output=True, check=False); raises subprocess.TimeoutExpired
    after killing the group."""
    with signals.deferred():  # a signal between fork and here would lose track of the child
        child = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text, start_new_session=True,
        )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except BaseException:
        kill_group(child)
        raise
    return subprocess.CompletedProcess(child.args, child.returncode, stdout, stderr)


def stream(
    argv: Sequence[str],
    *,
    on_line: Callable[[str], None],
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> int:
    """Like run(), but the output (stderr merged into stdout, in order) is handed to on_line a
    line at a time as it comes; returns the exit status. Raises subprocess.TimeoutExpired
    after killing the group; a handled signal cuts the wait at once."""
    with signals.deferred():  # a signal between fork and here would lose track of the child
        child = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )

        def read() -> None:
            assert child.stdout is not None
            for raw in child.stdout:
                on_line(raw.decode(errors="replace").rstrip("\r\n"))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        with signals.immediate():
            # the end of the output wakes this at once (Popen.wait with a timeout polls, up to
            # 50 ms late); a child that exits while something it started holds the pipe is seen
            # by the poll below
            while reader.is_alive() and child.poll() is None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(list(argv), timeout or 0)
                reader.join(0.5 if left is None else min(0.5, left))
            status = child.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
    except BaseException:
        kill_group(child)
        raise
    reader.join(timeout=5)
    return status


def kill_group(child: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Kill a child started with start_new_session=True and everything it started, and reap it."""
    with signals.deferred():
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
