"""The pre-push guard with real `git push` to a local bare remote.

The hook is the one `depsync install --pre-push` writes; git runs it with depsync absent
from PATH and feeds it the pushed refs on stdin, as it does for every push. Nothing is
stubbed: the remote is a real bare repository on disk (no network is involved in a push
to a path).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_for, git
from support import depsync_in as depsync
from support import show, without_depsync
from uvprojects import LocalMaterial


def push(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), "push", "origin", *args], capture_output=True, text=True, env=env)


def remote_branches(remote: Path) -> set[str]:
    out = subprocess.run(["git", "-C", str(remote), "for-each-ref", "--format=%(refname:short)", "refs/heads"], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.fixture
def project(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """small_repo with a bare `origin` holding dev and main (the default owner-ref origin/dev and
    upstream-ref origin/main apply), and the hook installed by `depsync install --pre-push`."""
    repo, remote = small_repo, tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main", "dev")
    git(repo, "fetch", "-q", "origin")
    env = without_depsync(env_for(material), tmp_path)
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    installed = depsync(repo, "install", "--pre-push", env=env)
    assert installed.returncode == 0, installed.stderr
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "depsync merge drivers")
    git(repo, "push", "-q", "--no-verify", "origin", "HEAD:dev")
    git(repo, "fetch", "-q", "origin")
    return repo, remote, env


def sync_merge(repo: Path, branch: str, env: dict[str, str], *, lock: str = "relock") -> None:
    """A sync branch from origin/dev with origin/main merged and reconciled, committed."""
    git(repo, "checkout", "-q", "-B", branch, "origin/dev")
    merged = subprocess.run(["git", "-C", str(repo), "merge", "--no-commit", "--no-ff", "origin/main"], capture_output=True, text=True, env=env)
    assert merged.returncode in (0, 1), merged.stderr
    args = ["reconcile", "--no-fetch", "--runner", "local"] + (["--no-lock"] if lock != "relock" else [])
    reconciled = depsync(repo, *args, env=env)
    assert reconciled.returncode in (0, 1), reconciled.stderr
    if lock == "main":  # the mistake the guard exists for: main's lock in the sync
        (repo / "uv.lock").write_bytes(show(repo, "origin/main:uv.lock"))
        git(repo, "add", "uv.lock")
    git(repo, "commit", "-qm", f"{branch}: sync main into dev")


def test_ordinary_pushes_pass_quietly(project: tuple[Path, Path, dict[str, str]]) -> None:
    repo, remote, env = project
    git(repo, "checkout", "-q", "-b", "feature", "origin/dev")
    (repo / "notes.txt").write_text("one\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "feature: notes")
    result = push(repo, "feature", env=env)
    assert result.returncode == 0, result.stderr  # used to be exit 2: "HEAD is not a merge commit"
    assert "depsync" not in result.stderr

    # a merge that is not a sync (dev's own branches) passes quietly too
    git(repo, "checkout", "-q", "-b", "other", "origin/dev")
    (repo / "other.txt").write_text("two\n")
    git(repo, "add", "other.txt")
    git(repo, "commit", "-qm", "other")
    git(repo, "checkout", "-q", "feature")
    git(repo, "merge", "-q", "--no-edit", "other")
    result = push(repo, "feature", env=env)
    assert result.returncode == 0, result.stderr
    assert "depsync" not in result.stderr

    result = push(repo, "--delete", "feature", env=env)
    assert result.returncode == 0, result.stderr
    assert "feature" not in remote_branches(remote)


def test_a_reconciled_sync_merge_passes(project: tuple[Path, Path, dict[str, str]]) -> None:
    repo, remote, env = project
    sync_merge(repo, "sync-good", env)
    result = push(repo, "sync-good", env=env)
    assert result.returncode == 0, result.stderr
    short = git(repo, "rev-parse", "--short", "HEAD")
    assert f"depsync guard: sync merge {short} keeps dev's triple" in result.stderr
    assert "sync-good" in remote_branches(remote)

    # the merge is on the remote now: a later commit on the branch is an ordinary push
    (repo / "notes.txt").write_text("after\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "follow-up")
    result = push(repo, "sync-good", env=env)
    assert result.returncode == 0, result.stderr
    assert "depsync" not in result.stderr


def test_a_sync_merge_with_main_s_lock_is_refused(project: tuple[Path, Path, dict[str, str]]) -> None:
    repo, remote, env = project
    git(repo, "checkout", "-q", "-b", "feature", "origin/dev")
    (repo / "notes.txt").write_text("one\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "feature: notes")
    sync_merge(repo, "sync-bad", env, lock="main")
    # two refs in one push: git sends both lines, and one bad merge refuses the whole push
    result = push(repo, "feature", "sync-bad", env=env)
    assert result.returncode != 0
    assert "violation(s) in sync merge" in result.stderr and "of refs/heads/sync-bad" in result.stderr
    assert "uv.lock: is main's lock" in result.stderr and "restore: git checkout" in result.stderr
    assert "push refused" in result.stderr
    assert not {"feature", "sync-bad"} & remote_branches(remote)


def test_pre_commit_variables_and_hand_runs(project: tuple[Path, Path, dict[str, str]]) -> None:
    """pre-commit reads git's stdin itself and passes PRE_COMMIT_FROM_REF/TO_REF to its hooks;
    these are the variables pre-commit 4 sets (pre_commit/commands/run.py)."""
    repo, _, env = project
    sync_merge(repo, "sync-bad", env, lock="main")
    bad, dev = git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "origin/dev")
    variables = {**env, "PRE_COMMIT_FROM_REF": dev, "PRE_COMMIT_TO_REF": bad, "PRE_COMMIT_LOCAL_BRANCH": "refs/heads/sync-bad"}
    result = depsync(repo, "guard", "--pre-push", env=variables)
    assert result.returncode == 1 and "uv.lock: is main's lock" in result.stderr
    # the same lines git would send, given by hand
    line = f"refs/heads/sync-bad {bad} refs/heads/sync-bad {'0' * 40}\n"
    assert depsync(repo, "guard", "--pre-push", env=env, stdin=line).returncode == 1
    deletion = f"(delete) {'0' * 40} refs/heads/sync-bad {bad}\n"
    quiet = depsync(repo, "guard", "--pre-push", env=env, stdin=deletion)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    assert depsync(repo, "guard", "--pre-push", env=env, stdin="").returncode == 0  # nothing pushed


def test_malformed_hook_input_is_one_line_exit_2(project: tuple[Path, Path, dict[str, str]]) -> None:
    repo, _, env = project
    result = depsync(repo, "guard", "--pre-push", env=env, stdin="refs/heads/x --upload-pack=touch refs/heads/x abc\n")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "pre-push input line 1" in result.stderr


def test_without_the_upstream_ref_nothing_is_checked_and_it_says_so(project: tuple[Path, Path, dict[str, str]]) -> None:
    repo, remote, env = project
    sync_merge(repo, "sync-bad", env, lock="main")
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    result = push(repo, "sync-bad", env=env)
    assert result.returncode == 0, result.stderr
    assert "origin/main not found here, so sync merges in refs/heads/sync-bad cannot be told apart; nothing checked" in result.stderr
    assert "sync-bad" in remote_branches(remote)
    assert os.environ.get("PRE_COMMIT_TO_REF") is None  # the hook did not depend on pre-commit


def test_the_pre_commit_hook_of_this_repository(project: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    """.pre-commit-hooks.yaml with real pre-commit: it installs depsync from this repository
    (a local git copy of the work tree at one commit, as a tag would be) into its own
    environment, and runs `depsync guard --pre-push` on a real push."""
    from support import git_repo_of_depsync

    repo, remote, env = project
    source = tmp_path / "depsync-hooks"
    commit = git_repo_of_depsync(source)
    assert depsync(repo, "install", "--uninstall", env=env).returncode == 0  # pre-commit owns the hook now
    git(repo, "checkout", "-q", "-B", "dev", "origin/dev")
    (repo / ".pre-commit-config.yaml").write_text(f"repos:\n  - repo: {source}\n    rev: {commit}\n    hooks:\n      - id: depsync-guard\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "pre-commit: depsync-guard")
    git(repo, "push", "-q", "origin", "dev")
    git(repo, "fetch", "-q", "origin")
    env = {**env, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install", "--hook-type", "pre-push"], cwd=repo, capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stderr

    git(repo, "checkout", "-q", "-b", "feature", "origin/dev")
    (repo / "notes.txt").write_text("one\n")
    git(repo, "add", "notes.txt")
    git(repo, "commit", "-qm", "feature: notes")
    ordinary = push(repo, "feature", env=env)
    assert ordinary.returncode == 0, ordinary.stdout + ordinary.stderr
    assert "depsync guard" in ordinary.stdout and "Passed" in ordinary.stdout

    sync_merge(repo, "sync-bad", env, lock="main")
    refused = push(repo, "sync-bad", env=env)
    assert refused.returncode != 0
    assert "Failed" in refused.stdout and "uv.lock: is main's lock" in refused.stdout
    assert "sync-bad" not in remote_branches(remote)


def test_the_pre_commit_check_hook_confirms_a_static_lock_stale_with_its_own_uv(material: LocalMaterial, tmp_path: Path) -> None:
    """.pre-commit-hooks.yaml's depsync-check through real pre-commit, on a real `git commit`.
    `[tool.uv] no-sources = true` changes what uv accepts as a lock and depsync does not model it:
    depsync's static model calls the lock stale, uv accepts it. Nothing on PATH
    has uv or depsync: the hook passes only because its environment installs uv
    (additional_dependencies) and depsync check asks it."""
    from support import git_repo_of_depsync
    from uvprojects import lock_project, write_project

    source = tmp_path / "depsync-hooks"
    commit = git_repo_of_depsync(source)
    repo = tmp_path / "app"
    text = ('[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha"]\n' + material.index_toml()
            + "\n[tool.uv]\nno-sources = true\n")
    write_project(repo, text)
    lock_project(repo, material.env)
    git(repo, "init", "-q", "-b", "dev")
    (repo / ".pre-commit-config.yaml").write_text(f"repos:\n  - repo: {source}\n    rev: {commit}\n    hooks:\n      - id: depsync-check\n")
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-qm", "pre-commit: depsync-check")
    bare = [d for d in env_for(material)["PATH"].split(os.pathsep) if d and not (Path(d) / "depsync").exists() and not (Path(d) / "uv").exists()]
    env = {**env_for(material), "PATH": os.pathsep.join(bare), "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert shutil.which("uv", path=env["PATH"]) is None and shutil.which("depsync", path=env["PATH"]) is None
    static = depsync(repo, "check", "--static", "--format", "json")
    assert static.returncode == 1 and {f["rule"] for f in json.loads(static.stdout)["findings"]} == {"lock-stale"}  # the static verdict alone fails it
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stderr

    git(repo, "add", "pyproject.toml", "uv.lock")
    committed = subprocess.run(["git", "-C", str(repo), "commit", "-qm", "app: a lock only uv can call fresh"], capture_output=True, text=True, env=env)
    assert committed.returncode == 0, committed.stdout + committed.stderr  # was: lock-stale, "no uv that runs offline to confirm it"
    hook_said = committed.stdout + committed.stderr  # git passes the hook's output on stderr
    assert "depsync check" in hook_said and "Passed" in hook_said
    assert git(repo, "log", "-1", "--format=%s") == "app: a lock only uv can call fresh"
    verbose = subprocess.run([sys.executable, "-m", "pre_commit", "run", "depsync-check", "--all-files", "--verbose"], cwd=repo, capture_output=True, text=True, env=env)
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert "static-model-disagrees" in verbose.stdout and "uv 0.13.9 `uv lock --check --offline` accepts it" in verbose.stdout
    assert "lock-stale" not in verbose.stdout.replace("static lock-stale", "")
