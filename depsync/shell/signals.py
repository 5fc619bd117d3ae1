"""One signal policy for every command: SIGINT, SIGTERM and SIGHUP unwind the same way.

A handled signal raises `Interrupted` (a KeyboardInterrupt, so every `except BaseException`
rollback already runs) at the next point where unwinding is safe. Code that must not be
cut in half (restoring a snapshot, starting a thread, creating an engine resource it must
later remove) runs inside `deferred()`: a signal that arrives there is remembered and
raised when the block ends. `immediate()` re-opens a deferred block while waiting on
something that can take long (uv in a container), so the wait is cut short at once.

The CLI exits with 128 + the signal number (130, 143, 129), like a shell.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any

from depsync.threads import SIGNALS

HANDLED = SIGNALS  # blocked in every thread depsync starts (depsync/threads.py): they reach the main thread


class Interrupted(KeyboardInterrupt):
    """A handled signal arrived; unwind, restore, clean up, exit 128 + signum."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class _State:
    depth = 0  # > 0: inside deferred()
    pending: int | None = None  # a signal that arrived while deferred


_state = _State()


def _handle(signum: int, frame: Any) -> None:
    if _state.depth > 0:
        if _state.pending is None:
            _state.pending = signum
        return
    raise Interrupted(signum)


def install() -> dict[int, Any]:
    """Route SIGINT, SIGTERM and SIGHUP through the policy (main thread only); returns the
    handlers it replaced, for restore()."""
    try:
        return {signum: signal.signal(signum, _handle) for signum in HANDLED}
    except ValueError:  # not the main thread, which alone may set handlers (the first one fails)
        return {}


def restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler if handler is not None else signal.SIG_DFL)


def _raise_pending() -> None:
    if _state.pending is not None and _state.depth == 0:
        signum, _state.pending = _state.pending, None
        raise Interrupted(signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """A block a signal must not cut in half; a signal that arrives is raised when it ends."""
    _state.depth += 1
    try:
        yield
    finally:
        _state.depth -= 1
        _raise_pending()  # also when the block failed: the signal decides the exit code


@contextlib.contextmanager
def immediate() -> Iterator[None]:
    """Inside deferred(): let a signal interrupt this (long, safe to cut) wait at once."""
    saved, _state.depth = _state.depth, 0
    try:
        _raise_pending()
        yield
    finally:
        _state.depth = saved


def pending() -> bool:
    return _state.pending is not None
