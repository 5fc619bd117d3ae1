"""Output of `depsync lock`: a live progress line (TTY) or plain log lines (CI), and the change table."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, TextIO

from depsync.lockdiff import PackageChange, summarize


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
    from rich.console import Console
    from rich.table import Table

    console = Console(file=stream, highlight=False)
    if not written:
        console.print("uv.lock unchanged")
        return
    if not changes:
        console.print("uv.lock rewritten; no package changed")
        return
    table = Table(title="uv.lock changes")
    for column in ("package", "change", "before", "after", "direct"):
        table.add_column(column)
    for change in changes:
        table.add_row(change.name, change.kind, change.old, change.new, "yes" if change.direct else "")
    console.print(table)
    console.print(", ".join(f"{n} {k}" for k, n in sorted(summarize(changes).items())))


def to_markdown(changes: Sequence[PackageChange], uv_version: str, how: str) -> str:
    lines = ["## depsync lock", "", f"uv {uv_version} via {how}.", ""]
    if not changes:
        return "\n".join(lines + ["No package changed.", ""])
    lines += ["| package | change | before | after | direct |", "|---|---|---|---|---|"]
    lines += [f"| `{c.name}` | {c.kind} | {c.old} | {c.new} | {'yes' if c.direct else ''} |" for c in changes]
    return "\n".join(lines + [""])
