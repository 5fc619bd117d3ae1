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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from depsync.shell import signals
from depsync.core.streaming import LineSplitter


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
            # chunks, not `for line in stdout`: one line without a newline would be read whole
            assert child.stdout is not None
            splitter = LineSplitter()
            descriptor = child.stdout.fileno()
            while chunk := os.read(descriptor, 65536):
                for raw in splitter.feed(chunk):
                    on_line(raw.decode(errors="replace").rstrip("\r"))
            rest = splitter.close()
            if rest is not None:
                on_line(rest.decode(errors="replace").rstrip("\r"))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
    try:
        with signals.immediate():
            status = child.wait(timeout=timeout)
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
