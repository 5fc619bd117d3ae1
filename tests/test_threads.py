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
