"""Everything uv reads is dev's or merged, in a real sync: main's uv.toml (uv reads it instead
of [tool.uv]) and .python-version do not come in, a workspace member's pyproject is merged per
key, a member main adds comes in flagged; guard holds the result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git, write_files

ROOT = """\
[project]
name = "app"
version = "1"
requires-python = ">=3.11"
dependencies = ["a"]

[tool.uv.sources]
a = { workspace = true }

[tool.uv.workspace]
members = ["packages/*"]
"""

MEMBER = """\
[project]
name = "a"
version = "1"
requires-python = ">=3.11"
dependencies = []

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
"""


def depsync(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, UV_PYTHON=sys.executable, UV_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=300)


def lock(repo: Path) -> None:
    env = dict(os.environ, UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never")
    subprocess.run(["uv", "lock", "--offline"], cwd=repo, env=env, check=True, capture_output=True)


def test_a_sync_keeps_uv_config_dev_s_and_merges_members(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"pyproject.toml": ROOT, "packages/a/pyproject.toml": MEMBER})
    lock(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "dev")
    write_files(repo, {"packages/a/pyproject.toml": MEMBER.replace('version = "1"', 'version = "1.1.dev0"')})
    lock(repo)
    git(repo, "commit", "-qam", "dev: a 1.1.dev0")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {
        "uv.toml": '# main vendors wheels\nfind-links = ["vendor"]\n',
        "vendor/README": "wheels\n",
        ".python-version": "./tools/python\n",
        "packages/a/pyproject.toml": MEMBER.replace("dependencies = []", 'dependencies = ["b"]\n\n[project.scripts]\na = "a:main"'),
        "packages/b/pyproject.toml": MEMBER.replace('name = "a"', 'name = "b"'),
    })
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main: uv.toml, .python-version, member b, a depends on b")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    git(repo, "merge", "--no-commit", "--no-ff", "main")

    run = depsync(repo, "reconcile", "--no-lock", "--no-fetch", "--dev", "dev", "--plan-json", "plan.json", "--summary", "summary.md")
    assert run.returncode == 1, run.stderr  # done, flagged
    assert not (repo / "uv.toml").exists() and not (repo / ".python-version").exists()
    member = (repo / "packages/a/pyproject.toml").read_text()
    assert 'version = "1.1.dev0"' in member and 'dependencies = ["b"]' in member and 'a = "a:main"' in member
    assert (repo / "packages/b/pyproject.toml").is_file()
    plan = json.loads((repo / "plan.json").read_text())
    by_path = {f["path"]: f for f in plan["uv_files"]}
    assert set(by_path) == {"uv.toml", ".python-version", "packages/a/pyproject.toml", "packages/b/pyproject.toml"}
    assert by_path["uv.toml"]["taken_from"] == "none" and by_path["uv.toml"]["needs_review"]
    assert [k["key"] for k in by_path["uv.toml"]["keys"]] == ["find-links"]
    assert by_path["packages/a/pyproject.toml"]["taken_from"] == "merged" and by_path["packages/a/pyproject.toml"]["needs_review"]  # a dependency change
    assert by_path["packages/b/pyproject.toml"]["case"] == "main-added" and by_path["packages/b/pyproject.toml"]["needs_review"]
    summary = (repo / "summary.md").read_text()
    assert "### Other files uv reads" in summary and "main changed 4 entries in 4 files uv reads: 2 taken, 2 kept dev's, 4 flagged" in summary
    assert plan["status"] == "needs-review"

    # the committed merge is what guard expects; main's uv.toml slipped back in is not
    git(repo, "add", "-A")
    git(repo, "rm", "-q", "--cached", "plan.json", "summary.md")
    git(repo, "commit", "-qm", "sync main into dev")
    guarded = depsync(repo, "guard", "--dev", "dev", "--main", "main")
    assert "uv.toml" not in guarded.stdout + guarded.stderr and ".python-version" not in guarded.stdout + guarded.stderr, guarded.stdout + guarded.stderr
    git(repo, "checkout", "-q", "main", "--", "uv.toml")
    git(repo, "commit", "-q", "--amend", "--no-edit")  # the same sync merge, with main's uv.toml
    guarded = depsync(repo, "guard", "--dev", "dev", "--main", "main")
    assert guarded.returncode == 1 and "uv.toml" in guarded.stdout + guarded.stderr
