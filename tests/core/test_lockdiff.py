"""Lock diff on the real Megatron locks (pure)."""

from __future__ import annotations

from conftest import megatron

from depsync.core.lockdiff import diff_locks, summarize
from depsync.core.model.lock import Lock


def test_megatron_main_to_dev() -> None:
    old, new = Lock.from_text(megatron("main", "uv.lock")), Lock.from_text(megatron("dev", "uv.lock"))
    changes = diff_locks(old, new)
    by_name = {}
    for change in changes:
        by_name.setdefault(change.name, []).append(change)
    (te,) = by_name["transformer-engine"]
    assert te.kind == "downgraded" and "git 4329ff84" in te.old and "git f031cf87" in te.new
    assert (te.old_version, te.new_version, te.old_source, te.new_source) == ("2.17.1+4329ff84", "2.14.0+f031cf87", "git", "git")
    assert te.new_commit == "f031cf87bd054c7558b887df7bed93975456667f" and te.direct
    # the fork is paired by origin: registry with registry, and dev's git entry is an addition
    cudnn = {c.kind: c for c in by_name["nvidia-cudnn-frontend"]}
    assert set(cudnn) == {"downgraded", "added"} and all(c.forked for c in cudnn.values())
    assert (cudnn["downgraded"].old, cudnn["downgraded"].new) == ("1.26.0 (registry)", "1.25.0 (registry)")
    assert cudnn["added"].new == "1.25.0 (git 0a14b718)"
    assert summarize(changes)


def _lock(*packages: str) -> Lock:
    return Lock.from_text('version = 1\nrequires-python = ">=3.10"\n' + "".join(packages))


def _registry(name: str, version: str, index: str = "https://pypi.org/simple") -> str:
    return f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {{ registry = "{index}" }}\n'


def _git(name: str, version: str, commit: str) -> str:
    return f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {{ git = "https://example.org/{name}.git?rev=main#{commit}" }}\n'


def test_pairing_rules() -> None:
    old = _lock(_registry("a", "1.0"), _registry("b", "1.0"), _git("c", "1.0", "1" * 40), _registry("d", "1.0"), _registry("d", "2.0"))
    new = _lock(_git("a", "1.0", "2" * 40), _registry("b", "1.0", "https://mirror.example/simple"), _git("c", "1.0", "3" * 40), _registry("d", "1.1"), _registry("d", "2.1"))
    changes = {(c.name, c.old_version, c.new_version): c for c in diff_locks(old, new)}
    assert changes[("a", "1.0", "1.0")].kind == "source-changed" and changes[("a", "1.0", "1.0")].new_source == "git"
    assert changes[("b", "1.0", "1.0")].kind == "source-changed" and changes[("b", "1.0", "1.0")].new_url == "https://mirror.example/simple"
    assert changes[("c", "1.0", "1.0")].kind == "source-changed" and changes[("c", "1.0", "1.0")].old_commit == "1" * 40
    assert changes[("d", "1.0", "1.1")].kind == "upgraded" and changes[("d", "2.0", "2.1")].kind == "upgraded"
    assert all(c.forked for c in changes.values() if c.name == "d") and not changes[("a", "1.0", "1.0")].forked
    assert len(changes) == 5


def test_same_lock_has_no_changes() -> None:
    lock = Lock.from_text(megatron("dev", "uv.lock"))
    assert diff_locks(lock, lock) == []
