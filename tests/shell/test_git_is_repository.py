"""git.is_repository answers without a git process when no `.git` is in the folder or above.

Real git repositories in tmp dirs: a work tree, a folder inside one, a linked worktree (`.git` is
a file there), a folder outside any, and GIT_DIR naming a repository from outside one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from depsync.shell import git
from depsync.shell.git_files import has_git_dir


def _init(repo: Path) -> Path:
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "c"], check=True)
    return repo


@pytest.fixture(autouse=True)
def _no_git_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)


def test_inside_a_repository(tmp_path: Path) -> None:
    repo = _init(tmp_path / "repo")
    (repo / "sub" / "deeper").mkdir(parents=True)
    try:
        assert has_git_dir(str(repo)) and git.is_repository(repo)
        assert has_git_dir(str(repo / "sub" / "deeper")) and git.is_repository(repo / "sub" / "deeper")
    finally:
        git.forget()


def test_a_linked_worktree_whose_git_is_a_file(tmp_path: Path) -> None:
    repo = _init(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "linked")], check=True)
    assert (tmp_path / "linked" / ".git").is_file()
    try:
        assert git.is_repository(tmp_path / "linked")
    finally:
        git.forget()


def test_outside_any_repository_no_git_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if has_git_dir(str(tmp_path)):
        pytest.skip(f"{tmp_path} is inside a git repository")
    (tmp_path / "project").mkdir()
    ran: list[object] = []
    monkeypatch.setattr(git, "_git", lambda *args, **kw: ran.append(args))  # would be a process
    assert not git.is_repository(tmp_path / "project")
    assert not git.is_repository(tmp_path / "missing")
    assert ran == []


def test_an_empty_dot_git_is_asked_of_git(tmp_path: Path) -> None:
    """A `.git` that is no repository: git decides (and says no), as before."""
    if has_git_dir(str(tmp_path)):
        pytest.skip(f"{tmp_path} is inside a git repository")
    (tmp_path / "fake" / ".git").mkdir(parents=True)
    assert has_git_dir(str(tmp_path / "fake"))
    assert not git.is_repository(tmp_path / "fake")


def test_git_dir_set_from_outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if has_git_dir(str(tmp_path)):
        pytest.skip(f"{tmp_path} is inside a git repository")
    repo = _init(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    try:
        assert has_git_dir(str(tmp_path / "elsewhere"))
        assert git.is_repository(tmp_path / "elsewhere")  # git finds the repository GIT_DIR names
    finally:
        git.forget()
