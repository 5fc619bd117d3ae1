"""`take-from-main`: paths main owns are checked out from main by reconcile, listed in the
summary, and held to main's version by the guard. Real git, real uv (the local runner)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import env_for, git, write_files
from support import depsync_in as depsync
from uvprojects import LocalMaterial


def _with_main_owned_api(repo: Path) -> None:
    """dev names `api` in take-from-main and changes api/client.py; main changes it, adds api/new.py."""
    git(repo, "checkout", "-q", "dev")
    text = (repo / "pyproject.toml").read_text()
    write_files(repo, {"pyproject.toml": text + '\n[tool.depsync]\ntake-from-main = ["api"]\n', "api/client.py": "def call(x):  # dev's\n    return x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dev: main owns api/")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"api/client.py": "def call(x, *, timeout):  # main's new API\n    return x\n", "api/new.py": "VERSION = 2\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main: the api moves on")
    git(repo, "checkout", "-q", "-B", "sync", "dev")


def test_reconcile_takes_mains_paths_and_guard_holds_them(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    _with_main_owned_api(repo)
    merge = subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True, text=True)
    assert merge.returncode != 0  # api/client.py: both added it
    plan, summary = tmp_path / "plan.json", tmp_path / "pr.md"
    result = depsync(repo, "reconcile", "--dev", "dev", "--plan-json", str(plan), "--summary", str(summary), env=env_for(material))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert (repo / "api/client.py").read_text() == git(repo, "show", "main:api/client.py") + "\n"
    assert (repo / "api/new.py").read_text() == "VERSION = 2\n"
    document = json.loads(plan.read_text())
    assert document["taken_from_main"] == ["api/client.py", "api/new.py"]
    assert "api/client.py" not in document["restored"]
    text = summary.read_text()
    assert "Files taken from main (`take-from-main`)" in text and "`api/client.py`" in text and "callers of their APIs" in text
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""  # staged: the conflict is resolved

    git(repo, "commit", "-qm", "sync main into dev")
    guarded = depsync(repo, "guard", "--dev", "dev", "--main", "main", env=env_for(material))
    assert guarded.returncode == 0, guarded.stdout + guarded.stderr

    # a sync that kept dev's version of a path main owns is refused, with the restore command
    write_files(repo, {"api/client.py": "def call(x):  # dev's\n    return x\n"})
    git(repo, "commit", "-qam", "keep dev's client")
    refused = depsync(repo, "guard", "--ref", "HEAD", "--dev", "dev", "--main", "main", env=env_for(material))
    assert refused.returncode == 1
    assert "api/client.py: differs from main" in refused.stderr and "git checkout" in refused.stderr and "-- api/client.py" in refused.stderr


def test_a_take_from_main_path_main_deleted_is_deleted(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    git(repo, "checkout", "-q", "dev")
    text = (repo / "pyproject.toml").read_text()
    write_files(repo, {"pyproject.toml": text + '\n[tool.depsync]\ntake-from-main = ["legacy/*.py"]\n', "legacy/shim.py": "OLD = 1\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dev: legacy shim, main owns legacy/")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan), env=env_for(material))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert not (repo / "legacy/shim.py").exists()  # main never had it: main's version is "absent"
    assert json.loads(plan.read_text())["taken_from_main"] == ["legacy/shim.py"]
