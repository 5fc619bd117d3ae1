"""The evidence fetch asks a source repository for what ancestry needs: the two pinned
revs and their history, not every branch and tag; it is remembered across runs and measured.

A real upstream repository over file:// (git's own transport, as a remote's would be): a line of
commits, a tag, and a branch that neither pin reaches, carrying a large file."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from depsync.shell.revs import SourceRepos

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=dict(os.environ, **GIT_ENV)).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[str, dict[str, str]]:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commits: dict[str, str] = {}
    for name in ("u1", "u2", "u3"):
        (repo / "f.txt").write_text(name)
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", name)
        commits[name] = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v2", commits["u2"])
    git(repo, "checkout", "-q", "-b", "unrelated", commits["u1"])
    (repo / "big.bin").write_bytes(os.urandom(2_000_000))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a branch no pin reaches")
    commits["other"] = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v-other")
    git(repo, "checkout", "-q", "main")
    return f"file://{repo}", commits


def has(cache: Path, commit: str) -> bool:
    repos = [p for p in cache.iterdir() if (p / "HEAD").exists()]
    env = dict(os.environ, GIT_NO_LAZY_FETCH="1")  # looking must not fetch
    return any(subprocess.run(["git", "-C", str(r), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, env=env).returncode == 0 for r in repos)


def test_the_fetch_brings_the_pinned_commits_and_their_history_only(upstream: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, c = upstream
    cache = tmp_path / "cache"
    repos = SourceRepos(fetch=True, cache=cache)
    assert repos.order({"git": url, "rev": c["u1"]}, {"git": url, "rev": c["u3"]}).order == "main-newer"
    assert [(f.asked, f.outcome) for f in repos.fetches] == [("2 commit(s)", "")]
    assert repos.fetches[0].bytes > 0 and repos.fetches[0].seconds >= 0
    assert has(cache, c["u2"])  # history between the pins: ancestry needs it
    assert not has(cache, c["other"])  # a branch neither pin reaches stays upstream
    repo = next(p for p in cache.iterdir() if (p / "HEAD").exists())
    assert git(repo, "tag") == ""  # no tags asked for, none fetched
    assert repos.fetches[0].bytes < 1_000_000  # the large file of the other branch is not here


def test_a_tag_pin_fetches_that_tag_and_the_answer_is_cached_across_runs(upstream: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, c = upstream
    cache = tmp_path / "cache"
    first = SourceRepos(fetch=True, cache=cache)
    assert first.order({"git": url, "tag": "v2"}, {"git": url, "rev": c["u3"]}).order == "main-newer"
    assert [f.asked for f in first.fetches] == ["1 commit(s), 1 tag(s)"]
    repo = next(p for p in cache.iterdir() if (p / "HEAD").exists())
    assert git(repo, "tag") == "v2"
    again = SourceRepos(fetch=True, cache=cache)  # the next run
    assert again.order({"git": url, "tag": "v2"}, {"git": url, "rev": c["u3"]}).order == "main-newer"
    assert again.fetches == []


def test_an_abbreviated_commit_falls_back_to_all_branches_and_tags(upstream: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, c = upstream
    repos = SourceRepos(fetch=True, cache=tmp_path / "cache")
    assert repos.order({"git": url, "rev": c["u1"][:12]}, {"git": url, "rev": c["u3"]}).order == "main-newer"
    assert [f.asked for f in repos.fetches] == ["all branches and tags"]
