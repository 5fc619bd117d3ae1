"""Merge drivers, `depsync install` and `depsync guard` with real `git merge` in temp repos."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import env_for, git
from uvprojects import LocalMaterial

DEPSYNC = f"{sys.executable} -m depsync"


def depsync(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env)


def merge(repo: Path, ref: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), "merge", "--no-edit", ref], capture_output=True, text=True, env=env)


def configure(repo: Path, *extra: str) -> None:
    """dev owns the triple in these repos (no origin remote)."""
    text = (repo / "pyproject.toml").read_text()
    if "[tool.depsync]" not in text:
        (repo / "pyproject.toml").write_text(text + '\n[tool.depsync]\nowner-ref = "dev"\nupstream-ref = "main"\n' + "".join(extra))


def prepare(repo: Path) -> None:
    """Commit the depsync config on dev and main alike, then branch the sync branch from dev."""
    for branch in ("dev", "main"):
        git(repo, "checkout", "-q", branch)
        configure(repo)
        git(repo, "commit", "-qam", f"{branch}: depsync config")
    git(repo, "checkout", "-q", "-B", "sync", "dev")


def test_install_is_idempotent_and_uninstall_removes_it(small_repo: Path) -> None:
    for _ in range(2):
        assert depsync(small_repo, "install", "--command", DEPSYNC, "--pre-push").returncode == 0
    attributes = (small_repo / ".gitattributes").read_text().splitlines()
    assert attributes == ["uv.lock merge=depsync-lock", "pyproject.toml merge=depsync-pyproject"]
    assert git(small_repo, "config", "merge.depsync-lock.driver").endswith("merge-driver lock %O %A %B %P")
    hook = small_repo / ".git" / "hooks" / "pre-push"
    assert "guard" in hook.read_text()
    assert depsync(small_repo, "install", "--uninstall").returncode == 0
    assert (small_repo / ".gitattributes").read_text() == ""
    assert subprocess.run(["git", "-C", str(small_repo), "config", "merge.depsync-lock.driver"], capture_output=True).returncode == 1
    assert not hook.exists()


def test_lock_conflict_resolves_and_passes_check_after_relock(small_repo: Path, material: LocalMaterial) -> None:
    repo, env = small_repo, env_for(material)
    prepare(repo)
    assert depsync(repo, "install", "--command", DEPSYNC).returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode == 0, result.stdout + result.stderr  # both files resolved by the drivers
    assert "took the owner's lock" in result.stderr
    for name in ("pyproject.toml", "uv.lock"):
        assert "<<<<<<<" not in (repo / name).read_text()
    c = material.git.commits
    text = (repo / "pyproject.toml").read_text()
    assert f'rev = "{c["c2"]}"' in text and f'rev = "{c["c3"]}"' in text  # main's zeta, dev's eta
    assert (repo / "uv.lock").read_bytes() == subprocess.run(["git", "-C", str(repo), "show", "dev:uv.lock"], capture_output=True).stdout
    stale = depsync(repo, "check", "--format", "json", env=env)
    assert stale.returncode == 1 and "lock-stale" in stale.stdout  # zeta moved: the owner's lock needs a relock
    assert depsync(repo, "lock", "--runner", "local", env=env).returncode == 0
    # the drivers handle the triple; main's CODEOWNERS change merged as text and check says so
    after = depsync(repo, "check", "--owner-ref", "dev", "--format", "json", env=env)
    errors = [f for f in json.loads(after.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["file"]) for f in errors] == [("protected-path-changed", ".github/CODEOWNERS")]
    git(repo, "checkout", "dev", "--", ".github/CODEOWNERS")
    assert depsync(repo, "check", "--owner-ref", "dev", env=env).returncode == 0


def test_lock_driver_can_relock_itself(small_repo: Path, material: LocalMaterial) -> None:
    repo, env = small_repo, env_for(material)
    prepare(repo)
    assert depsync(repo, "install", "--command", DEPSYNC, "--relock").returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode == 0, result.stderr
    assert "relocked with uv" in result.stderr
    git(repo, "checkout", "dev", "--", ".github/CODEOWNERS")
    assert depsync(repo, "check", "--owner-ref", "dev", env=env).returncode == 0


def test_unresolved_pyproject_leaves_the_lock_conflicted(small_repo: Path, material: LocalMaterial) -> None:
    repo, env = small_repo, env_for(material)
    prepare(repo)
    for branch, dependency in (("dev", '"alpha>=1.0"'), ("main", '"alpha<2"')):
        git(repo, "checkout", "-q", branch)
        (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace('"alpha"', dependency, 1))
        git(repo, "commit", "-qam", f"{branch}: alpha")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    assert depsync(repo, "install", "--command", DEPSYNC).returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode != 0
    assert "uv.lock left conflicted: pyproject.toml is not resolved yet; run `depsync reconcile`" in result.stderr
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").split()
    assert sorted(unmerged) == ["pyproject.toml", "uv.lock"]
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<<" in text and text.count("<<<<<<<") == 1  # only the dependency line; sources were merged


def test_guard_passes_clean_reconcile_and_names_each_violation(small_repo: Path, material: LocalMaterial) -> None:
    repo, env = small_repo, env_for(material)
    prepare(repo)
    merge(repo, "main", env)
    assert depsync(repo, "reconcile", "--no-fetch", env=env).returncode == 0
    git(repo, "commit", "-qam", "sync: main into dev")
    ok = depsync(repo, "guard", env=env)
    assert ok.returncode == 0, ok.stderr

    # a CODEOWNERS change from main sneaks in
    (repo / ".github" / "CODEOWNERS").write_text("* @main-team\n")
    git(repo, "commit", "-qam", "oops")
    git(repo, "reset", "-q", "--soft", "HEAD~2")
    git(repo, "commit", "-qm", "sync: main into dev (bad)")
    # the soft reset turned the merge into a plain commit: check it against explicit parents
    bad = depsync(repo, "guard", "--dev", "dev", "--main", "main", env=env)
    assert bad.returncode == 1
    assert ".github/CODEOWNERS: differs from dev" in bad.stderr
    assert "restore: git checkout" in bad.stderr and "-- .github/CODEOWNERS" in bad.stderr


def test_guard_rejects_main_s_lock(small_repo: Path, material: LocalMaterial) -> None:
    repo, env = small_repo, env_for(material)
    prepare(repo)
    merge(repo, "main", env)
    assert depsync(repo, "reconcile", "--no-fetch", "--no-lock", env=env).returncode in (0, 1)
    (repo / "uv.lock").write_bytes(subprocess.run(["git", "-C", str(repo), "show", "main:uv.lock"], capture_output=True).stdout)
    git(repo, "add", "uv.lock")
    git(repo, "commit", "-qm", "sync with main's lock")
    result = depsync(repo, "guard", env=env)
    assert result.returncode == 1
    assert "uv.lock: is main's lock" in result.stderr and "depsync lock" in result.stderr
