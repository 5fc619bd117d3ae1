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


def _url(name: str, version: str, url: str, marker: str) -> str:
    # as uv writes a direct URL requirement (`flash-attn @ https://.../flash_attn-...whl ; marker`)
    return (
        f'\n[[package]]\nname = "{name}"\nversion = "{version}"\nsource = {{ url = "{url}" }}\n'
        f'resolution-markers = ["{marker}"]\nwheels = [\n    {{ url = "{url}", hash = "sha256:{"0" * 64}" }},\n]\n'
    )


RELEASES = "https://github.com/Dao-AILab/flash-attention/releases/download"


def _flash(version: str, tag: str, python: str, host: str = RELEASES) -> str:
    wheel = f"{host}/v{version}/flash_attn-{version}%2Bcu12torch2.7cxx11abiFALSE-{python}-{python}-linux_x86_64.whl"
    return _url("flash-attn", f"{version}+cu12torch2.7cxx11abifalse", wheel, f"python_full_version == '{tag}'")


def test_wheel_urls_of_a_new_version_are_upgrades_not_removals_and_additions() -> None:
    """Forked wheel URLs (one per Python): each pairs with the wheel of the same tags."""
    old = _lock(_flash("2.7.4", "3.10", "cp310"), _flash("2.7.4", "3.11", "cp311"))
    new = _lock(_flash("2.8.3", "3.10", "cp310"), _flash("2.8.3", "3.11", "cp311"))
    (change,) = diff_locks(old, new)  # one row for the package, not 2 removed + 2 added
    assert change.kind == "upgraded" and change.entries == 2 and change.forked
    assert change.old_version == "2.7.4+cu12torch2.7cxx11abifalse" and change.new_version == "2.8.3+cu12torch2.7cxx11abifalse"
    assert change.old_source == change.new_source == "url"
    assert change.old_url.rsplit("-", 3)[1] == change.new_url.rsplit("-", 3)[1] == "cp310"  # paired by tags
    # the same version from another URL (a mirror): one "source-changed" row
    moved = _lock(_flash("2.7.4", "3.10", "cp310", "https://mirror.example/fa"), _flash("2.7.4", "3.11", "cp311", "https://mirror.example/fa"))
    (change,) = diff_locks(old, moved)
    assert change.kind == "source-changed" and change.entries == 2
    assert change.new_url.startswith("https://mirror.example/") and change.old_url.startswith(RELEASES)
    # one wheel moving differently from the other is its own row
    apart = _lock(_flash("2.8.3", "3.10", "cp310"), _flash("2.7.4", "3.11", "cp311", "https://mirror.example/fa"))
    assert sorted(c.kind for c in diff_locks(old, apart)) == ["source-changed", "upgraded"]
    # an sdist URL pairs with an sdist URL; a wheel and an sdist of one name stay apart
    sdist = lambda v: _url("pkg", v, f"https://example.org/pkg-{v}.tar.gz", "python_full_version >= '3.10'")  # noqa: E731
    wheel = lambda v: _url("pkg", v, f"https://example.org/pkg-{v}-py3-none-any.whl", "python_full_version < '3.10'")  # noqa: E731
    changes = diff_locks(_lock(sdist("1.0"), wheel("1.0")), _lock(sdist("1.1"), wheel("1.1")))
    ((change),) = changes
    assert (change.kind, change.entries) == ("upgraded", 2)  # each paired with its own kind
    assert change.old_url.rsplit(".", 1)[-1] == change.new_url.rsplit(".", 1)[-1]


def test_url_pairing_leaves_the_megatron_diff_as_it_was() -> None:
    """No URL source in either real lock: the same rows as pairing by origin alone gave."""
    old, new = Lock.from_text(megatron("dev", "uv.lock")), Lock.from_text(megatron("main", "uv.lock"))
    assert summarize(diff_locks(old, new)) == {"upgraded": 134, "removed": 48, "added": 16, "downgraded": 2}
