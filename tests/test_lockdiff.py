"""Lock diff on the real Megatron locks (pure)."""

from __future__ import annotations

import time

from conftest import megatron
from depsync.lockdiff import diff_locks, summarize
from depsync.model.lock import Lock


def test_megatron_main_to_dev() -> None:
    old, new = Lock.from_text(megatron("main", "uv.lock")), Lock.from_text(megatron("dev", "uv.lock"))
    start = time.perf_counter()
    changes = diff_locks(old, new)
    assert time.perf_counter() - start < 5  # generous: a sanity bound, the bench measures
    by_name = {}
    for change in changes:
        by_name.setdefault(change.name, []).append(change)
    (te,) = by_name["transformer-engine"]
    assert te.kind in ("upgraded", "downgraded", "source-changed") and "git 4329ff84" in te.old and "git f031cf87" in te.new
    assert te.direct
    cudnn = by_name["nvidia-cudnn-frontend"]
    assert sorted(c.new for c in cudnn if c.kind == "added") == ["1.25.0 (git 0a14b718)", "1.25.0 (registry)"]
    assert summarize(changes)


def test_same_lock_has_no_changes() -> None:
    lock = Lock.from_text(megatron("dev", "uv.lock"))
    assert diff_locks(lock, lock) == []
