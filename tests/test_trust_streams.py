"""a child flooding its output cannot make depsync grow.

400 MB on stderr (in lines, and as one line without a newline) through the real paths:
the local runner's pipe (process.stream, as uv's log comes) and the engine's attach stream
(a real container). Python's own allocations (tracemalloc) stay under a few MB, and the
tail kept for the error message still ends with the child's last words.
"""

from __future__ import annotations

import sys
import tracemalloc

import pytest

from depsync.core.streaming import MAX_LINE, Tail
from depsync.shell import process

FLOOD = 400 * 1024 * 1024
LIMIT = 32 * 1024 * 1024  # generous; the old code held every line (~935 MiB RSS)

LINES = f"import sys\nw = sys.stderr.buffer\nline = b'x' * 1023 + b'\\n'\nfor _ in range({FLOOD // 1024}):\n    w.write(line)\nw.write(b'the last words\\n')\n"
ONE_LINE = f"import sys\nw = sys.stderr.buffer\nchunk = b'y' * 65536\nfor _ in range({FLOOD // 65536}):\n    w.write(chunk)\nw.write(b'\\nthe last words\\n')\n"


@pytest.mark.parametrize("program", [LINES, ONE_LINE], ids=["many-lines", "one-line"])
def test_a_flooding_child_is_read_in_bounded_memory(program: str) -> None:
    tail = Tail()
    longest = [0]

    def take(line: str) -> None:
        longest[0] = max(longest[0], len(line))
        tail.append(line)

    tracemalloc.start()
    try:
        status = process.stream([sys.executable, "-c", program], on_line=take, timeout=300)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 0
    assert peak < LIMIT, f"peak {peak / 2**20:.0f} MiB"
    assert longest[0] <= MAX_LINE + 32
    assert tail.lines()[-1] == "the last words"
    assert tail.dropped > 0 or program is ONE_LINE  # the tail is bounded: early lines are gone


@pytest.mark.docker
def test_a_flooding_container_is_read_in_bounded_memory(engine) -> None:  # type: ignore[no-untyped-def]
    from conftest import IMAGE

    from depsync.shell.runners.containers import ContainerRun
    from depsync.shell.runners.endpoint import discover_endpoint
    from depsync.shell.runners.engine import client

    run = ContainerRun(client(discover_endpoint()), [], None)
    script = f"head -c {FLOOD} /dev/zero | tr '\\0' 'z' >&2; echo >&2; echo the last words >&2"
    container = run.create(IMAGE, ["sh", "-c", script], "probe")
    tracemalloc.start()
    try:
        status, lines = run.execute(container, 300, None, "the flood")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        if not run.clean:
            run.remove_all()
    assert status == 0
    assert peak < LIMIT, f"peak {peak / 2**20:.0f} MiB"
    assert lines[-1] == "the last words"
