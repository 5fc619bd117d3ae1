"""Merge drivers, `depsync install` and `depsync guard` with real `git merge` in temp repos.

The merges run with depsync absent from PATH (only git, the system tools and uv are
there): git must reach depsync through the interpreter path `install` registered.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_for, git, uv_lock
from support import depsync_in, show, without_depsync
from uvprojects import LocalMaterial

DEPSYNC = f"{sys.executable} -m depsync"
DRIVER_ARGS = "--base-label=%S --ours-label=%X --theirs-label=%Y -- %O %A %B %P"


def depsync(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # these repositories have no origin remote: the operator names the owner ref (never the repository)
    return depsync_in(repo, *args, env={"DEPSYNC_OWNER_REF": "dev", **(os.environ if env is None else env)})


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


def test_install_registers_this_python_and_says_what_to_commit(small_repo: Path) -> None:
    for _ in range(2):
        result = depsync(small_repo, "install", "--pre-push")
        assert result.returncode == 0, result.stderr
    attributes = (small_repo / ".gitattributes").read_text().splitlines()
    assert attributes == ["uv.lock merge=depsync-lock", "pyproject.toml merge=depsync-pyproject"]
    # the absolute interpreter, not a bare `depsync` that PATH may not find at merge time
    assert git(small_repo, "config", "merge.depsync-lock.driver") == f"{shlex.quote(sys.executable)} -m depsync merge-driver lock {DRIVER_ARGS}"
    assert git(small_repo, "config", "merge.depsync-pyproject.driver") == f"{shlex.quote(sys.executable)} -m depsync merge-driver pyproject {DRIVER_ARGS}"
    out = result.stdout
    assert "    uv.lock merge=depsync-lock\n    pyproject.toml merge=depsync-pyproject\n" in out  # the lines to commit
    assert "git add .gitattributes && git commit" in out
    # the command each clone runs, with the flags this one had, then "once"
    assert "every clone runs `depsync install --pre-push` once (without it" in result.stderr  # a note: -q leaves it out
    assert "every clone runs" not in depsync(small_repo, "-q", "install", "--pre-push").stderr
    hook = small_repo / ".git" / "hooks" / "pre-push"
    assert f"{shlex.quote(sys.executable)} -m depsync guard --pre-push" in hook.read_text()

    git(small_repo, "add", ".gitattributes")
    git(small_repo, "commit", "-qm", "depsync merge drivers")
    again = depsync(small_repo, "install")
    assert ".gitattributes (committed) routes uv.lock, pyproject.toml to them" in again.stderr
    assert "git add .gitattributes" not in again.stdout

    assert depsync(small_repo, "install", "--uninstall").returncode == 0
    assert (small_repo / ".gitattributes").read_text() == ""
    assert subprocess.run(["git", "-C", str(small_repo), "config", "merge.depsync-lock.driver"], capture_output=True).returncode == 1
    assert not hook.exists()


def test_merge_without_depsync_on_path(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    assert depsync(repo, "install").returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode == 0, result.stdout + result.stderr  # both files resolved by the drivers
    assert "pyproject.toml: merged `sync` and `main`; [tool.uv.sources] three-way" in result.stderr
    # the lock is dev's, and the driver says it is stale for the merged pyproject and what to run
    assert "uv.lock: took the lock of `sync` (the dev side); it is stale for the merged pyproject.toml" in result.stderr
    assert "after the merge run `depsync lock` and commit uv.lock" in result.stderr
    for name in ("pyproject.toml", "uv.lock"):
        assert "<<<<<<<" not in (repo / name).read_text()
    c = material.git.commits
    text = (repo / "pyproject.toml").read_text()
    assert f'rev = "{c["c2"]}"' in text and f'rev = "{c["c3"]}"' in text  # main's zeta, dev's eta
    assert (repo / "uv.lock").read_bytes() == show(repo, "dev:uv.lock")
    stale = depsync(repo, "check", "--format", "json", env=env)
    assert stale.returncode == 1 and "lock-stale" in stale.stdout  # zeta moved: the owner's lock needs a relock
    assert depsync(repo, "lock", "--runner", "local", env=env).returncode == 0
    # the drivers handle the triple; main's CODEOWNERS change merged as text and check says so
    after = depsync(repo, "check", "--owner-ref", "dev", "--format", "json", env=env)
    errors = [f for f in json.loads(after.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["file"]) for f in errors] == [("protected-path-changed", ".github/CODEOWNERS")]
    git(repo, "checkout", "dev", "--", ".github/CODEOWNERS")
    assert depsync(repo, "check", "--owner-ref", "dev", env=env).returncode == 0


def test_a_bare_depsync_command_is_what_broke(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """The old registration (`depsync merge-driver ...`) with depsync off PATH: git cannot run
    the driver and the merge stops with both files conflicted. The default registration merges."""
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    assert depsync(repo, "install", "--command", "depsync").returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode != 0
    assert "not found" in result.stderr
    assert sorted(git(repo, "diff", "--name-only", "--diff-filter=U").split()) == ["pyproject.toml", "uv.lock"]


def test_lock_driver_can_relock_itself(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    installed = depsync(repo, "install", "--relock")
    assert installed.returncode == 0
    assert "every clone runs `depsync install --relock` once" in installed.stderr
    result = merge(repo, "main", env)
    assert result.returncode == 0, result.stderr
    assert "uv.lock: relocked the lock of `sync` with uv" in result.stderr
    git(repo, "checkout", "dev", "--", ".github/CODEOWNERS")
    assert depsync(repo, "check", "--owner-ref", "dev", env=env).returncode == 0


def _conflicting_alpha(repo: Path, branches: dict[str, str], material: LocalMaterial | None = None) -> None:
    """Each branch changes the same dependency line its own way (and relocks, given material)."""
    for branch, dependency in branches.items():
        git(repo, "checkout", "-q", branch)
        (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace('"alpha"', dependency, 1))
        if material is not None:
            uv_lock(repo, material)
        git(repo, "commit", "-qam", f"{branch}: alpha")


def test_sync_with_a_pyproject_conflict_names_branches_and_asks_for_reconcile(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    _conflicting_alpha(repo, {"dev": '"alpha>=1.0"', "main": '"alpha<2"'})
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    assert depsync(repo, "install").returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode != 0
    # a sync: dev's file wins, and that is reconcile's job
    assert "pyproject.toml: conflicts outside [tool.uv.sources] between `sync` and `main`" in result.stderr
    assert "in a sync of main into dev the dev side's file wins: run `depsync reconcile`" in result.stderr
    assert "uv.lock left conflicted: pyproject.toml is not resolved yet; run `depsync reconcile`" in result.stderr
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U").split()
    assert sorted(unmerged) == ["pyproject.toml", "uv.lock"]
    text = (repo / "pyproject.toml").read_text()
    assert text.count("<<<<<<<") == 1  # only the dependency line; sources were merged
    assert "<<<<<<< sync\n" in text and ">>>>>>> main\n" in text  # branch names, not ours/theirs
    assert (repo / "uv.lock").read_bytes() == show(repo, "dev:uv.lock")  # never a text merge of two locks

    # git >= 2.44 expands %X/%Y to its own labels (shell-quoted); git here is older, so the
    # expansion is written out as git would make it: the driver then uses git's labels
    git(repo, "merge", "--abort")
    driver = git(repo, "config", "merge.depsync-pyproject.driver")
    git(repo, "config", "merge.depsync-pyproject.driver", driver.replace("%X", "'HEAD'").replace("%Y", "'origin main'"))
    merge(repo, "main", env)
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<< sync\n" in text and ">>>>>>> origin main\n" in text  # git's "HEAD" says nothing: the branch instead
    # and reconcile really is what finishes it
    done = depsync(repo, "reconcile", "--no-fetch", env=env)
    assert done.returncode in (0, 1), done.stderr
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""


def test_an_ordinary_merge_conflict_asks_for_a_hand_resolution_and_relock(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """A feature branch from dev merging dev back in is no sync: reconcile would throw the
    feature's pyproject away, so the driver says to resolve by hand and relock."""
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    git(repo, "checkout", "-q", "-b", "feature", "dev")
    _conflicting_alpha(repo, {"feature": '"alpha>=1.0"', "dev": '"alpha<2"'}, material)
    git(repo, "checkout", "-q", "feature")
    assert depsync(repo, "install").returncode == 0
    result = merge(repo, "dev", env)
    assert result.returncode != 0
    assert "pyproject.toml: conflicts outside [tool.uv.sources] between `feature` and `dev`" in result.stderr
    assert "edit them, `git add pyproject.toml`, then `depsync lock` and `git add uv.lock`" in result.stderr
    assert "reconcile" not in result.stderr
    assert "uv.lock left conflicted (holding the lock of `dev`) until pyproject.toml is resolved; resolve it, then `depsync lock`" in result.stderr
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<< feature\n" in text and ">>>>>>> dev\n" in text
    assert (repo / "uv.lock").read_bytes() == show(repo, "dev:uv.lock")  # dev's lock is the owner's


def test_a_side_that_is_not_toml_is_left_conflicted_and_shown(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """main commits a pyproject.toml that does not parse; git's text merge of it would be clean
    (dev did not touch the line), so the driver must not call it resolved: it says where it
    breaks, as uv would, and leaves both files conflicted."""
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    prepare(repo)
    git(repo, "checkout", "-q", "main")
    text = (repo / "pyproject.toml").read_text()
    (repo / "pyproject.toml").write_text(text.replace('"alpha"', '"alpha",\nbeta =', 1))
    git(repo, "commit", "-qam", "main: broken pyproject")
    line = text[: text.index('"alpha"')].count("\n") + 2
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    assert depsync(repo, "install").returncode == 0
    result = merge(repo, "main", env)
    assert result.returncode != 0
    assert f"depsync merge-driver: main:pyproject.toml:{line}:1: not valid TOML: Invalid value; pyproject.toml left conflicted (merged as text)" in result.stderr
    assert any(shown.startswith(f"{line} | beta =") for shown in result.stderr.splitlines())  # the frame, after the line
    assert sorted(git(repo, "diff", "--name-only", "--diff-filter=U").split()) == ["pyproject.toml", "uv.lock"]
    assert (repo / "uv.lock").read_bytes() == show(repo, "dev:uv.lock")


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
    (repo / "uv.lock").write_bytes(show(repo, "main:uv.lock"))
    git(repo, "add", "uv.lock")
    git(repo, "commit", "-qm", "sync with main's lock")
    result = depsync(repo, "guard", env=env)
    assert result.returncode == 1
    assert "uv.lock: is main's lock" in result.stderr and "depsync lock" in result.stderr


@pytest.mark.parametrize("args", [("--pre-push", "--ref", "HEAD~1"), ("--pre-push", "--dev", "dev")])
def test_guard_pre_push_takes_no_refs(small_repo: Path, args: tuple[str, ...]) -> None:
    result = depsync(small_repo, "guard", *args)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--pre-push takes the commits from what git pushes" in result.stderr


def _main_takes_devs_lock_and_a_feature_branch_relocks(repo: Path, material: LocalMaterial, main_uv: str) -> None:
    """main's uv.lock made equal to dev's (and main pins uv `main_uv`); `feature`, made from
    dev, changes alpha and relocks; then `git merge main` on `feature`."""
    prepare(repo)
    git(repo, "checkout", "-q", "dev")
    (repo / "docker").mkdir(exist_ok=True)
    (repo / "docker/Dockerfile.ci.dev").write_text("FROM debian\nARG UV_VERSION=0.13.9\nRUN uv sync --locked\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dev: CI Dockerfile")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "dev", "--", "uv.lock")
    (repo / "docker").mkdir(exist_ok=True)
    (repo / "docker/Dockerfile.ci.dev").write_text(f"FROM debian\nARG UV_VERSION={main_uv}\nRUN uv sync --locked\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main: dev's lock, another uv")
    git(repo, "checkout", "-q", "-B", "feature", "dev")
    _conflicting_alpha(repo, {"feature": '"alpha>=1.0"'}, material)
    git(repo, "checkout", "-q", "feature")


def test_the_owner_side_is_devs_line_even_when_mains_lock_equals_devs(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """main's lock is byte for byte dev's: that does not make main the owner side. The feature
    branch (made from dev) keeps its own lock, the one it relocked."""
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    _main_takes_devs_lock_and_a_feature_branch_relocks(repo, material, "0.13.9")
    feature_lock = show(repo, "feature:uv.lock")
    assert show(repo, "main:uv.lock") == show(repo, "dev:uv.lock") != feature_lock
    assert depsync(repo, "install").returncode == 0
    result = merge(repo, "main", env)
    assert "uv.lock: took the lock of `feature` (the dev side)" in result.stderr, result.stderr
    assert "the lock of `main`" not in result.stderr
    assert (repo / "uv.lock").read_bytes() == feature_lock


def test_the_relock_runs_the_uv_devs_files_pin_never_mains(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """main pins another uv in its Dockerfile and has dev's lock: the relocking driver still
    runs the uv the feature branch's (dev's) Dockerfile pins, never main's choice."""
    repo, env = small_repo, without_depsync(env_for(material), tmp_path)
    _main_takes_devs_lock_and_a_feature_branch_relocks(repo, material, "0.9.99")
    assert depsync(repo, "install", "--relock").returncode == 0
    result = merge(repo, "main", env)
    assert "uv.lock: relocked the lock of `feature` with uv 0.13.9" in result.stderr, result.stderr
    assert "0.9.99" not in result.stderr
