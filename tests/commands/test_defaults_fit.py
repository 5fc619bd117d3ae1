"""Megatron's defaults (origin/dev, .github/CODEOWNERS, docker/Dockerfile.ci.dev) apply only
where they exist; the owner's upstream branch itself is never held to the owner's files.

Real input: the Megatron-LM base/dev/main history (conftest.megatron_history: the real
pyproject.toml and uv.lock of each ref, CODEOWNERS differing between main and dev)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import MEGATRON, git, init_repo, megatron_history

PYPROJECT = '[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n'


def check(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "check", str(root), "--no-cache", *args], capture_output=True, text=True)


def small_repo(path: Path, files: dict[str, str], branch: str = "main") -> Path:
    repo = init_repo(path, {"pyproject.toml": PYPROJECT, **files}, branch=branch)
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=repo, check=True, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lock")
    return repo


def test_a_repository_without_dev_or_codeowners_gets_no_note(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "plain", {})
    result = check(repo, "--format", "json", "-v")
    assert result.returncode == 0 and json.loads(result.stdout)["findings"] == []
    assert "the default owner ref origin/dev is not in this clone" in result.stderr  # said with -v only
    human = check(repo)
    assert human.stdout == f"depsync check: {repo} is consistent; checked 0 Dockerfiles\n"


def test_codeowners_without_a_dev_branch_gets_no_note(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "owners", {".github/CODEOWNERS": "* @team\n"})
    assert json.loads(check(repo, "--format", "json").stdout)["findings"] == []


def test_a_configured_protected_path_with_no_owner_ref_is_still_a_note(tmp_path: Path) -> None:
    repo = small_repo(tmp_path / "configured", {})
    (repo / "pyproject.toml").write_text(PYPROJECT + '\n[tool.depsync]\nprotected-paths = ["CODEOWNERS"]\n')
    findings = json.loads(check(repo, "--format", "json").stdout)["findings"]
    assert [f["rule"] for f in findings] == ["protected-unchecked"]


def _megatron_with_remotes(tmp_path: Path) -> Path:
    repo = megatron_history(tmp_path / "megatron")
    git(repo, "update-ref", "refs/remotes/origin/dev", "dev")
    git(repo, "update-ref", "refs/remotes/origin/main", "main")
    return repo


def test_megatron_main_itself_is_not_held_to_devs_codeowners(tmp_path: Path) -> None:
    """The pre-commit hook (`depsync check`) on Megatron's own main failed: protected-path-changed."""
    if not (MEGATRON / "main" / "uv.lock").exists():
        return
    repo = _megatron_with_remotes(tmp_path)
    git(repo, "checkout", "-q", "main")
    rules = [f["rule"] for f in json.loads(check(repo, "--format", "json").stdout)["findings"]]
    assert "protected-path-changed" not in rules
    # a local commit on main that origin/main does not have yet: still main's own
    (repo / "README.md").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    verbose = check(repo, "--format", "json", "-v")
    assert "protected-path-changed" not in verbose.stdout
    assert "protected paths not compared: HEAD is on origin/main" in verbose.stderr
    # checking main's tip by ref (a CI gate on main) is the same
    assert "protected-path-changed" not in check(repo, "--ref", "origin/main", "--format", "json").stdout


def test_a_sync_branch_with_mains_codeowners_is_still_caught(tmp_path: Path) -> None:
    if not (MEGATRON / "main" / "uv.lock").exists():
        return
    repo = _megatron_with_remotes(tmp_path)  # on `sync`, made from dev
    (repo / ".github" / "CODEOWNERS").write_text("* @main-owners\n")
    git(repo, "commit", "-qam", "took main's CODEOWNERS")
    rules = [f["rule"] for f in json.loads(check(repo, "--format", "json").stdout)["findings"]]
    assert "protected-path-changed" in rules
