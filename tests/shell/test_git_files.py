"""git_files answers from `.git`'s files only where git would certainly answer the same.

The oracle is real git: in repositories made in tmp dirs (loose and packed refs, symbolic refs,
tags, remotes, a linked worktree, a reftable repository, extensions in the config, a foreign
environment), every name git_files calls absent is one `git rev-parse --verify` cannot resolve,
and every folder it calls a repository is one git opens. "Ask git" (False / None) is always safe.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from depsync.shell import git, git_files

_NAMES = [
    "origin/dev", "dev", "main", "origin/main", "HEAD", "FETCH_HEAD", "v1", "tags/v1", "refs/tags/v1", "heads/main",
    "refs/heads/main", "origin", "upstream/dev", "packed", "origin/packed", "remotes/origin/dev", "nested/a/b", "nested/a",
    "abc1", "deadbeef", "HEAD~1", "main^", "main@{0}", "@", "main:pyproject.toml", "v1-g0000", "x..y", "-dev", "dev.lock",
    "refs/remotes/origin/HEAD", "origin/HEAD", "sym", "Dev", "dev/", "./dev", "a//b",
]


def _run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)


def _commit(repo: Path, message: str = "c") -> str:
    _run(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", message)
    return _run(repo, "rev-parse", "HEAD").stdout.strip()


def _git_resolves(repo: Path, name: str) -> bool:
    return _run(repo, "rev-parse", "--verify", "-q", "--end-of-options", f"{name}^{{commit}}").returncode == 0


def _repository(tmp_path: Path, *init: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", *init, str(repo)], check=True)
    first = _commit(repo)
    _commit(repo)
    _run(repo, "tag", "v1")
    _run(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    _run(repo, "update-ref", "refs/remotes/upstream/dev", first)
    _run(repo, "update-ref", "refs/heads/nested/a/b", first)
    _run(repo, "update-ref", "refs/heads/packed", first)
    _run(repo, "update-ref", "refs/remotes/origin/packed", first)
    _run(repo, "pack-refs", "--all")
    _run(repo, "update-ref", "refs/heads/loose", first)
    _run(repo, "symbolic-ref", "refs/heads/sym", "refs/heads/main")
    _run(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    return repo


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in git_files.GIT_PLACES:
        monkeypatch.delenv(name, raising=False)


def _agrees(repo: Path, names: list[str]) -> list[str]:
    """The names git_files calls absent that git resolves (must be none)."""
    return [name for name in names if git_files.ref_absent(str(repo), name) and _git_resolves(repo, name)]


def test_a_plain_clone_is_read_from_its_files(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    (repo / "sub").mkdir()
    assert git_files.is_repository(str(repo)) and git_files.is_repository(str(repo / "sub"))
    assert _agrees(repo, _NAMES) == [] and _agrees(repo / "sub", _NAMES) == []
    # the answers that save a process: names of nothing, loose or packed
    for absent in ("origin/dev", "dev", "upstream/main", "nested/a", "Dev"):
        assert git_files.ref_absent(str(repo), absent), absent
        assert not _git_resolves(repo, absent)
    for present in ("main", "origin/main", "packed", "origin/packed", "loose", "v1", "sym", "origin", "upstream/dev", "nested/a/b"):
        assert not git_files.ref_absent(str(repo), present), present


def test_revision_syntax_and_object_ids_are_asked_of_git(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    head = _run(repo, "rev-parse", "HEAD").stdout.strip()
    for name in (head, head[:7], "HEAD~1", "main^", "main@{0}", f"v1-g{head[:7]}", "x..y", "-dev", "", "dev.lock", "a//b"):
        assert not git_files.ref_absent(str(repo), name), name


@pytest.mark.parametrize("damage", ["no final newline", "a stray line", "a short id"])
def test_a_malformed_packed_refs_is_asked_of_git(tmp_path: Path, damage: str) -> None:
    """git refuses such a file (`fatal: unterminated line in .git/packed-refs`): its error, not "not found"."""
    repo = _repository(tmp_path)
    packed = repo / ".git" / "packed-refs"
    text = packed.read_bytes()
    packed.write_bytes({"no final newline": text.rstrip(b"\n"), "a stray line": text + b"garbage\n", "a short id": text + b"abc refs/heads/x\n"}[damage])
    assert _run(repo, "rev-parse", "--verify", "-q", "origin/dev").returncode not in (0, 1)
    assert not git_files.ref_absent(str(repo), "origin/dev")


@pytest.mark.parametrize("layout", ["worktree", "reftable", "extension", "include", "core-worktree", "bare-true", "empty-dot-git", "environment"])
def test_other_layouts_are_asked_of_git(tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if layout == "reftable":
        if subprocess.run(["git", "init", "-q", "--ref-format=reftable", str(tmp_path / "probe")], capture_output=True).returncode != 0:
            pytest.skip("this git has no reftable")
        repo = _repository(tmp_path, "--ref-format=reftable")
    else:
        repo = _repository(tmp_path)
    where = repo
    if layout == "worktree":
        where = tmp_path / "linked"
        _run(repo, "worktree", "add", "-q", str(where))
    elif layout == "extension":
        _run(repo, "config", "extensions.objectformat", "sha1")
    elif layout == "include":
        _run(repo, "config", "include.path", str(tmp_path / "other.conf"))
    elif layout == "core-worktree":
        _run(repo, "config", "core.worktree", str(tmp_path))
    elif layout == "bare-true":
        _run(repo, "config", "core.bare", "true")
    elif layout == "empty-dot-git":
        where = tmp_path / "fake"
        (where / ".git").mkdir(parents=True)
    elif layout == "environment":
        monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert git_files.is_repository(str(where)) is None
    assert not any(git_files.ref_absent(str(where), name) for name in _NAMES)


def test_a_repository_another_user_owns_is_asked_of_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repository(tmp_path)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(repo / ".git").st_uid + 1)  # git's safe.directory check: its call
    assert git_files.is_repository(str(repo)) is None
    assert not git_files.ref_absent(str(repo), "origin/dev")


def test_no_git_on_path_is_asked_of_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repository(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert git_files.is_repository(str(repo)) is None  # git.is_repository then fails as git is not there


_ref_name = st.text(alphabet="abdevoriginmastrefsheadtg/.-_HEAD1", min_size=1, max_size=24)


@pytest.fixture(scope="module")
def _shared_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _repository(tmp_path_factory.mktemp("gen"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_ref_name, min_size=1, max_size=8))
def test_generated_names_never_disagree_with_git(_shared_repository: Path, names: list[str]) -> None:
    assert _agrees(_shared_repository, names) == []


def test_resolve_and_is_repository_start_no_git_for_a_missing_owner_ref(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repository(tmp_path)
    git.forget()
    started: list[object] = []
    monkeypatch.setattr(git, "_git", lambda *args, **kw: started.append(args))
    monkeypatch.setattr(git.Session, "_process", lambda self: started.append(self))
    assert git.is_repository(repo)
    with pytest.raises(git.DepsyncError, match="git ref 'origin/dev' not found"):
        git.resolve(repo, "origin/dev")
    assert started == []
    monkeypatch.undo()
    try:
        assert git.resolve(repo, "main") == _run(repo, "rev-parse", "main").stdout.strip()  # present: git answers
    finally:
        git.forget()
