"""Output of `depsync lock`: uv's log as uv wrote it, a status line on a terminal, the change table.

uv's lines (and a build's) are written verbatim: no prefix, no timestamp, no wrapping (the
terminal wraps a long line; a copied line is the line uv printed). On a terminal one more
line sits under them, redrawn in place: what depsync is doing and for how long
(`depsync: uv lock - 12.3s`). In CI (not a terminal) there is no status line and no escape
sequence, only the lines.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from depsync.threads import start_daemon

if TYPE_CHECKING:
    from depsync.core.findings import Finding
    from depsync.core.lockdiff import PackageChange

TICK = 0.2  # s between redraws of the status line
_CLEAR = "\x1b[2K"  # erase the whole line; the cursor stays at column 0 after the status's "\r"


class LockProgress:
    """Streams uv's log; on a terminal a status line shows the phase and the elapsed time."""

    def __init__(self, stream: TextIO, tty: bool | None = None) -> None:
        self.stream = stream
        self.tty = stream.isatty() if tty is None else tty
        self.started = time.monotonic()
        self._phase = "starting"
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._drawn = False

    def __enter__(self) -> LockProgress:
        if self.tty:
            self._ticker = start_daemon(self._tick, name="depsync-status")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1)
        with self._lock:
            self._erase()
            self._flush()

    def phase(self, text: str) -> None:
        """What depsync does now; shown in the status line (a terminal only)."""
        with self._lock:
            self._phase = text
            self._draw()

    def line(self, text: str) -> None:
        """One line of uv's (or a build's) output, as it was written."""
        with self._lock:
            self._erase()
            self.stream.write(text + "\n")
            self._draw()
            self._flush()

    def say(self, text: str) -> None:
        """depsync's own message, one line."""
        self.line(f"depsync: {text}")

    # -- the status line (callers hold the lock) --

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            with self._lock:
                self._draw()

    def _width(self) -> int:
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return 80

    def _draw(self) -> None:
        if not self.tty or self._stop.is_set():
            return
        text = f"depsync: {self._phase} - {time.monotonic() - self.started:.1f}s"
        width = max(self._width() - 1, 10)  # one column short: a full line would wrap and scroll
        if len(text) > width:
            text = text[: width - 3] + "..."
        self.stream.write(f"{_CLEAR}{text}\r")
        self._drawn = True
        self._flush()

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write(_CLEAR)
            self._drawn = False

    def _flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass


def print_changes(changes: Sequence[PackageChange], stream: TextIO, *, written: bool) -> None:
    if not written:
        print("uv.lock unchanged", file=stream)
        return
    from depsync.report.lockdiff import print_table

    print_table(changes, stream)


def to_markdown(changes: Sequence[PackageChange], uv_version: str, how: str, image: str = "") -> str:
    """image: image_markdown's section (the lock against the image it was made in), or ""."""
    from depsync.report.lockdiff import to_markdown as lockdiff_markdown
    from depsync.report.markdown import text

    body = lockdiff_markdown(changes, f"## depsync lock\n\nuv {text(uv_version)} via {text(how)}.")
    return body + ("\n" + image if image else "")


MAX_IMAGE_LINES = 20  # findings named one by one in the summary and on stderr; the rest are counted


def image_lines(described: str, findings: Sequence[Finding]) -> list[str]:
    """What `depsync lock` says of the new lock against the image it was made in, one line each."""
    if not findings:
        return [f"the lock against {described}: no finding of the image rules"]
    lines = [f"the lock against {described}: {len(findings)} finding{'s' if len(findings) != 1 else ''} (`depsync check --image` for the fixes)"]
    for finding in findings[:MAX_IMAGE_LINES]:
        where = f"{finding.file}:{finding.line}" if finding.line else finding.file
        lines.append(f"  {where} {finding.severity} {finding.rule}: {finding.message}")
    if len(findings) > MAX_IMAGE_LINES:
        lines.append(f"  ... and {len(findings) - MAX_IMAGE_LINES} more")
    return lines


def image_markdown(described: str, findings: Sequence[Finding]) -> str:
    from depsync.report.markdown import text

    head, *rest = image_lines(described, findings)
    items = "".join(f"- {text(line.strip())}\n" for line in rest)
    return f"### Against the image\n\n{text(head[0].upper() + head[1:])}.\n" + (f"\n{items}" if items else "")
