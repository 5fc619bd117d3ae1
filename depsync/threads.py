"""Threads that never take the process's signals.

The kernel hands a signal sent to the process to any thread that does not block it. CPython
runs the handler in the main thread, but only when that thread next runs Python code. When the
signal goes to a reader thread while the main thread is blocked in a long socket read (waiting
for a lock container to end), the handler does not run until that read returns, so
`depsync lock` could ignore a SIGTERM until its container was done. SIGINT, SIGTERM and SIGHUP
are blocked in every thread started here, so they always reach the main thread, and
depsync.shell.signals acts on them there. The same holds for the threads an extension module
starts itself: the `dockerfile` package (BuildKit's parser, in Go) starts the Go runtime's
threads when it is imported, and they take the mask of the importing thread, so it is imported
with SIGNALS blocked (`import_buildkit()`).
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a thread starts: shell/signals imports this module on every run
    import threading
    from types import ModuleType
    from typing import TypeVar

    # for the type checker only: a string bound is a ForwardRef, compiled when made (1.5 ms a run)
    _Thread = TypeVar("_Thread", bound=threading.Thread)
    _Result = TypeVar("_Result")

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # the ones depsync.shell.signals handles


def start_daemon(target: Callable[..., Any], *args: Any, name: str | None = None) -> threading.Thread:
    """A started daemon thread running target(*args), with SIGNALS blocked in it."""
    import threading

    return _started(threading.Thread(target=target, args=args, name=name, daemon=True))


def start_timer(seconds: float, function: Callable[[], Any]) -> threading.Timer:
    """A started daemon timer calling function after seconds (cancel() stops it), with SIGNALS
    blocked in its thread: every engine request arms one, so one is nearly always there."""
    import threading

    timer = threading.Timer(seconds, function)
    timer.daemon = True
    return _started(timer)


def _started(thread: _Thread) -> _Thread:
    _with_signals_blocked(thread.start)  # a new thread starts with its creator's mask; one arriving meanwhile waits
    return thread


def import_buildkit() -> ModuleType:
    """The `dockerfile` package, first imported with SIGNALS blocked: the Go runtime it starts
    keeps that mask in every thread it makes (measured: SigBlk 0x4003 in each), where a signal
    taken by one of them would wait for the main thread's next Python code (a Ctrl-C during
    `depsync lock` unanswered until the lock container ended)."""
    import sys

    module = sys.modules.get("dockerfile")
    if module is None:
        module = _with_signals_blocked(lambda: __import__("dockerfile"))
    return module


def _with_signals_blocked(action: Callable[[], _Result]) -> _Result:
    """action() with SIGNALS blocked in the calling thread, its mask restored after."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        return action()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
