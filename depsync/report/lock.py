"""Output of `depsync lock`: a live progress line (TTY) or plain log lines (CI), and the change table."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TextIO

from depsync.lockdiff import PackageChange
from depsync.report.lockdiff import print_table
from depsync.report.lockdiff import to_markdown as lockdiff_markdown


class LockProgress:
    """Streams uv's log; on a terminal a rich status shows the phase and elapsed time."""

    def __init__(self, stream: TextIO, what: str) -> None:
        self.stream, self.what = stream, what
        self.started = time.monotonic()
        self.status: Any = None

    def __enter__(self) -> LockProgress:
        if self.stream.isatty():
            from rich.console import Console

            self.console = Console(file=self.stream)
            self.status = self.console.status(f"uv lock: starting ({self.what})")
            self.status.__enter__()
        else:
            print(f"depsync: uv lock: starting ({self.what})", file=self.stream, flush=True)
        return self

    def line(self, text: str) -> None:
        if self.status is not None:
            self.console.log(text, markup=False, highlight=False)
            self.status.update(f"uv lock: {text[:60]} ({time.monotonic() - self.started:.0f}s)")
        else:
            print(f"  | {text}", file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)


def print_changes(changes: Sequence[PackageChange], stream: TextIO, *, written: bool) -> None:
    if not written:
        print("uv.lock unchanged", file=stream)
        return
    print_table(changes, stream)


def to_markdown(changes: Sequence[PackageChange], uv_version: str, how: str) -> str:
    return lockdiff_markdown(changes, f"## depsync lock\n\nuv {uv_version} via {how}.")
