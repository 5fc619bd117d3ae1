"""A PR cannot unprotect a path by editing its own `[tool.depsync]`: `depsync check` compares the
owner ref's committed protected paths too. Real git, real uv (small_repo's dev is consistent)."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import env_for, git, write_files
from support import depsync_in as depsync
from uvprojects import LocalMaterial


def _pr(repo: Path, files: dict[str, str]) -> None:
    git(repo, "checkout", "-q", "-B", "pr", "dev")
    write_files(repo, files)
    git(repo, "commit", "-qam", "pr")


def _errors(repo: Path, material: LocalMaterial) -> list[tuple[str, str]]:
    result = depsync(repo, "check", "--owner-ref", "dev", "--format", "json", "--no-cache", env=env_for(material))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return [(f["rule"], f["file"]) for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]


def _with_depsync_table(repo: Path, table: str) -> str:
    text = (repo / "pyproject.toml").read_text()
    return text + f"\n[tool.depsync]\n{table}\n"


def test_a_pr_that_drops_codeowners_from_its_list_is_still_checked(small_repo: Path, material: LocalMaterial) -> None:
    repo = small_repo
    _pr(repo, {"pyproject.toml": _with_depsync_table(repo, 'protected-paths = ["docs/none.md"]'), ".github/CODEOWNERS": "* @pr-author\n"})
    assert ("protected-path-changed", ".github/CODEOWNERS") in _errors(repo, material)


def test_the_owners_own_list_is_kept_when_the_pr_empties_it(small_repo: Path, material: LocalMaterial) -> None:
    repo = small_repo
    git(repo, "checkout", "-q", "dev")
    write_files(repo, {"pyproject.toml": _with_depsync_table(repo, 'protected-paths = [".github/CODEOWNERS", "SECURITY.md"]'), "SECURITY.md": "dev's\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dev: SECURITY.md protected")
    text = (repo / "pyproject.toml").read_text().replace('protected-paths = [".github/CODEOWNERS", "SECURITY.md"]', "protected-paths = []")
    _pr(repo, {"pyproject.toml": text, "SECURITY.md": "the PR's\n"})
    assert _errors(repo, material) == [("protected-path-changed", "SECURITY.md")]


def test_a_pr_may_add_protection_and_a_clean_pr_passes(small_repo: Path, material: LocalMaterial) -> None:
    repo = small_repo
    _pr(repo, {"pyproject.toml": _with_depsync_table(repo, 'protected-paths = [".github/CODEOWNERS", "LICENSE"]')})
    assert _errors(repo, material) == []
