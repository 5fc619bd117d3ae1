"""Shell: run a child process (argument lists only) that never outlives depsync.

The child gets its own process group. On a timeout, an error or a handled signal
(depsync.shell.signals) the whole group is killed and reaped, so neither uv nor a build
backend or git helper it started is left running as an orphan.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from depsync.core.streaming import LineSplitter
from depsync.shell import signals
from depsync.threads import start_daemon


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


_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_subreaper: bool | None = None


def _become_subreaper() -> bool:
    """Make depsync the reaper of its orphaned descendants (Linux): a build backend that calls
    setsid() leaves uv's process group, and when its parent exits it is reparented to depsync,
    not to init, so it can still be found and killed."""
    global _subreaper
    if _subreaper is None:
        try:
            import ctypes

            _subreaper = ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        except (OSError, AttributeError):
            _subreaper = False
    return _subreaper


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process /proc shows."""
    out = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat", "rb").read()
                out[int(entry)] = int(stat.rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return out


def _tree(roots: set[int], parents: dict[int, int]) -> set[int]:
    found, frontier = set(roots), set(roots)
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier and pid not in found}
        found |= frontier
    return found


def kill_tree(child: subprocess.Popen, before: set[int]) -> None:  # type: ignore[type-arg]
    """Kill the child's group and every process descended from it, including those that left
    the group with setsid() and were reparented to depsync (the subreaper): depsync's own
    children that are not in `before` (its children when the child started). Reaps them."""
    kill_group(child)
    if not os.path.isdir("/proc"):
        return
    me = os.getpid()
    for _ in range(3):  # a dying parent can hand its children over while we look
        parents = _parents()
        orphans = {pid for pid, parent in parents.items() if parent == me and pid not in before and pid != child.pid}
        doomed = _tree({child.pid} | orphans, parents) - {child.pid, me}
        if not doomed:
            break
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for pid in doomed:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass  # not our child: its own parent (or init) reaps it


def _own_children() -> set[int]:
    if not os.path.isdir("/proc"):
        return set()
    me = os.getpid()
    return {pid for pid, parent in _parents().items() if parent == me}


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
    after killing the group; a handled signal cuts the wait at once. Whatever the child started
    is killed when it ends, even what left its process group (kill_tree)."""
    _become_subreaper()
    before = _own_children()
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

        reader = start_daemon(read)
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
        kill_tree(child, before)
        raise
    kill_tree(child, before)  # a daemon a backend left running (setsid) goes with it
    reader.join(timeout=5)
    return status


def read_chunks(argv: Sequence[str], consume: Callable[[bytes], bool], *, cwd: Path | str | None = None,
                max_stderr: int = 65536) -> tuple[int | None, bytes]:
    """Hand the child's stdout to consume in chunks as it comes, never whole (a `git log --raw` of
    thousands of commits is gigabytes). consume returning False stops the read and kills the
    child's group. Returns (exit status, None when stopped; the tail of stderr)."""
    with signals.deferred():  # a signal between fork and here would lose track of the child
        child = subprocess.Popen(
            list(argv), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    tail = bytearray()

    def drain() -> None:  # stderr read on the side: a child blocked on a full stderr pipe never ends stdout
        assert child.stderr is not None
        while piece := os.read(child.stderr.fileno(), 65536):
            tail.extend(piece)
            del tail[: max(0, len(tail) - max_stderr)]

    reader = start_daemon(drain)
    status: int | None = None
    try:
        assert child.stdout is not None
        descriptor = child.stdout.fileno()
        while piece := os.read(descriptor, 1 << 20):
            if not consume(piece):
                break
        else:
            status = child.wait()
    finally:
        if child.poll() is None:
            kill_group(child)
        reader.join(timeout=5)
        for pipe in (child.stdout, child.stderr):
            if pipe is not None:
                pipe.close()
    return status, bytes(tail)


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
