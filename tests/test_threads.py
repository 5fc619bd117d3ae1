"""depsync/threads.py: a thread depsync starts never takes the signals the main thread handles."""

from __future__ import annotations

import signal
import threading

from depsync.threads import SIGNALS, start_daemon


def test_the_thread_blocks_the_handled_signals_and_the_main_thread_keeps_its_mask() -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    seen: list[set[int]] = []
    done = threading.Event()

    def look() -> None:
        seen.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        done.set()

    thread = start_daemon(look, name="probe")
    assert done.wait(5) and thread.daemon and thread.name == "probe"
    assert set(SIGNALS) <= seen[0]
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before


def test_a_timer_blocks_them_too_and_still_fires_and_cancels() -> None:
    from depsync.threads import start_timer

    seen: list[set[int]] = []
    fired = threading.Event()

    def fire() -> None:
        seen.append(set(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
        fired.set()

    timer = start_timer(0.01, fire)
    assert fired.wait(5) and set(SIGNALS) <= seen[0] and timer.daemon
    cancelled = start_timer(60, fire)
    cancelled.cancel()
    cancelled.join(5)
    assert not cancelled.is_alive()


def test_the_go_runtime_of_buildkits_parser_never_takes_them() -> None:
    """The `dockerfile` package starts Go's threads when it is imported: in a fresh interpreter,
    after a parse through depsync, every thread but the main one blocks SIGNALS, and the main
    thread blocks none (a real process, its threads read from /proc)."""
    import subprocess
    import sys

    probe = (
        "import os, signal\n"
        "from depsync.core.model.dockerfile import Dockerfile\n"
        "Dockerfile.from_text('FROM python:3.12\\nRUN uv sync --locked\\n')\n"
        "main = str(os.getpid())\n"
        "for task in sorted(os.listdir('/proc/self/task')):\n"
        "    status = open(f'/proc/self/task/{task}/status').read()\n"
        "    mask = int(next(l for l in status.splitlines() if l.startswith('SigBlk:')).split()[1], 16)\n"
        "    print(task == main, mask)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    rows = [line.split() for line in result.stdout.splitlines()]
    wanted = sum(1 << (int(s) - 1) for s in SIGNALS)
    others = [int(mask) for is_main, mask in rows if is_main == "False"]
    assert others, "the Go runtime started no thread: this test sees nothing"
    assert all(mask & wanted == wanted for mask in others), rows
    assert [int(mask) & wanted for is_main, mask in rows if is_main == "True"] == [0]
