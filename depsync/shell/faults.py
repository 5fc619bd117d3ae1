"""Named fault points, for the fault-injection tests.

`DEPSYNC_FAULT=<point>:<kind>` makes the named point fail: kind `error` (an I/O error),
`disk-full` (ENOSPC), `interrupt` (as if Ctrl-C arrived there) or `sigterm`/`sighup`/`sigint`
(a real signal sent to this process, handled by depsync.shell.signals) or `wait=FILE` (create
FILE.reached, wait until FILE exists, then fail with an I/O error when FILE says `error`: two
processes made to overlap at a known point). Unset, a point costs
one dictionary lookup. The tests drive every command through every point and check that
nothing was left half-done.
"""

from __future__ import annotations

import errno
import os

POINTS = (
    "reconcile:before-write",  # the plan is complete, nothing written yet
    "reconcile:after-write",  # dev's files and the new pyproject written, before uv
    "reconcile:after-uv",  # uv succeeded, its lock not yet written
    "reconcile:after-stage",  # files written and staged, the closing check not yet run
    "lock:after-uv",  # `depsync lock`: uv succeeded, the lock not yet written
    "write:before-replace",  # inside every atomic write: temp file complete, not yet renamed
)


_fired: set[str] = set()


def point(name: str) -> None:
    """Fail here if DEPSYNC_FAULT names this point; once per process, like a transient fault,
    so the rollback that follows can run."""
    spec = os.environ.get("DEPSYNC_FAULT")
    if not spec:
        return
    where, _, kind = spec.rpartition(":")
    if where != name or name in _fired:
        return
    _fired.add(name)
    if kind == "interrupt":
        raise KeyboardInterrupt
    if kind in ("sigterm", "sighup", "sigint"):  # a real signal, through the CLI's signal policy
        import signal

        os.kill(os.getpid(), getattr(signal, kind.upper()))
        return
    if kind.startswith("wait="):
        _wait(kind.removeprefix("wait="), name)
        return
    if kind == "disk-full":
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"<{name}>")
    raise OSError(errno.EIO, f"injected fault at {name}", f"<{name}>")


def _wait(path: str, name: str) -> None:
    import time

    open(path + ".reached", "w").close()
    deadline = time.monotonic() + 120
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open(path) as released:
        if released.read().strip() == "error":
            raise OSError(errno.EIO, f"injected fault at {name}", f"<{name}>")
