"""`[tool.depsync]` merged from main never steers the bot.

main adds `owner-ref = "origin/main"` and `protected-paths = []` to `[tool.depsync]`; the lines
merge cleanly (git commits the merge by itself). reconcile run as the sync workflow runs it
(no --dev), `guard` on the merge commit and the pre-push hook on the pushed branch must still
treat origin/dev as dev, keep CODEOWNERS protected, and say that main changed the config.
Real git with a bare `origin`, real uv for the lock.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_for, git
from uvprojects import LocalMaterial

HOSTILE_TABLE = '\n[tool.depsync]\nowner-ref = "origin/main"\nprotected-paths = []\n'


def depsync(repo: Path, *args: str, env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env, input=stdin,
                          stdin=subprocess.DEVNULL if stdin is None else None, timeout=300)


@pytest.fixture
def hostile_sync(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A clone of origin (dev, main) on a sync branch from origin/dev with origin/main merged
    cleanly; main's last commit appended the hostile [tool.depsync] table."""
    repo = small_repo
    # main from the merge-base: it changes only CODEOWNERS and appends the table, so nothing conflicts
    git(repo, "checkout", "-q", "-B", "main", git(repo, "merge-base", "dev", "main").strip())
    (repo / ".github/CODEOWNERS").write_text("* @main-team\n")
    with (repo / "pyproject.toml").open("a") as handle:
        handle.write(HOSTILE_TABLE)
    git(repo, "commit", "-qam", "main: depsync config")
    remote = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main", "dev")
    git(repo, "fetch", "-q", "origin")
    git(repo, "checkout", "-q", "-B", "sync", "origin/dev")
    env = dict(env_for(material), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    env.pop("DEPSYNC_OWNER_REF", None)
    merged = subprocess.run(["git", "-C", str(repo), "merge", "--no-edit", "origin/main"], capture_output=True, text=True, env=env)
    assert merged.returncode == 0, merged.stdout + merged.stderr  # the hostile lines merge cleanly
    assert "origin/main" in (repo / "pyproject.toml").read_text()
    assert (repo / ".github/CODEOWNERS").read_text() == "* @main-team\n"
    return repo, env


def test_reconcile_takes_dev_from_the_operator_and_flags_mains_config(hostile_sync: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    repo, env = hostile_sync
    dev_lock = git(repo, "show", "origin/dev:uv.lock")
    result = depsync(repo, "reconcile", "--no-fetch", "--runner", "local", "--summary", str(tmp_path / "pr.md"), "--plan-json", str(tmp_path / "plan.json"), env=env)
    assert result.returncode == 1, result.stdout + result.stderr  # flagged: never Ready
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["dev"]["ref"] == "origin/dev" and plan["main"]["ref"] == "origin/main"
    assert plan["config_drift"] == ["owner-ref", "protected-paths"]
    assert plan["status"] == "needs-review"
    summary = (tmp_path / "pr.md").read_text()
    assert "main changed `[tool.depsync]` (`owner-ref`, `protected-paths`)" in summary
    # dev's protected file and dev's own config are back; the lock is dev's relocked, not main's
    assert (repo / ".github/CODEOWNERS").read_text() == "* @dev-team\n"
    assert "owner-ref" not in (repo / "pyproject.toml").read_text()
    assert ".github/CODEOWNERS" in plan["restored"]
    assert "delta" in (repo / "uv.lock").read_text() and dev_lock.count("delta") > 0


def test_a_misnamed_owner_is_one_line_and_names_the_bootstrap(hostile_sync: tuple[Path, dict[str, str]]) -> None:
    repo, env = hostile_sync
    result = depsync(repo, "reconcile", "--dry-run", "--no-fetch", env=dict(env, DEPSYNC_OWNER_REF="origin/nope"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "git ref 'origin/nope' not found" in result.stderr and "DEPSYNC_OWNER_REF" in result.stderr


def test_guard_on_the_merge_commit_uses_devs_protected_paths(hostile_sync: tuple[Path, dict[str, str]]) -> None:
    repo, env = hostile_sync
    result = depsync(repo, "guard", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ".github/CODEOWNERS: differs from dev" in result.stderr


def test_the_pre_push_guard_uses_the_operators_owner_ref(hostile_sync: tuple[Path, dict[str, str]]) -> None:
    repo, env = hostile_sync
    tip = git(repo, "rev-parse", "HEAD").strip()
    result = depsync(repo, "guard", "--pre-push", env=env, stdin=f"refs/heads/sync {tip} refs/heads/sync {'0' * 40}\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert ".github/CODEOWNERS: differs from dev" in result.stderr and "push refused" in result.stderr


def test_dev_changing_its_own_config_is_not_flagged(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """No false alarm: a key that differs because dev changed it is dev's business."""
    repo = small_repo
    git(repo, "checkout", "-q", "dev")
    with (repo / "pyproject.toml").open("a") as handle:
        handle.write('\n[tool.depsync]\nconflict-policy = "dev"\n')
    git(repo, "commit", "-qam", "dev: depsync config")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    env = dict(env_for(material), DEPSYNC_OWNER_REF="dev")
    result = depsync(repo, "reconcile", "--dry-run", "--no-fetch", "--main", "main", "--plan-json", str(tmp_path / "plan.json"), env=env)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads((tmp_path / "plan.json").read_text())["config_drift"] == []
