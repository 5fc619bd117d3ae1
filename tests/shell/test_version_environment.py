"""Which files of a work copy say its version comes from git (shell/runners/workcopy.py)."""

from __future__ import annotations

from pathlib import Path

from depsync.core.model.vcs_version import OVERRIDES
from depsync.shell.runners.workcopy import version_environment

MEMBER = '[project]\nname = "m"\ndynamic = ["version"]\n\n[build-system]\nrequires = ["hatchling", "hatch-vcs"]\nbuild-backend = "hatchling.build"\n'


def test_a_workspace_member_that_takes_its_version_from_git_counts(tmp_path: Path) -> None:
    """The copy's members are found as uv globs them (shell/members.py: `**`, dot directories)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "root"\nversion = "1.0"\n\n[tool.uv.workspace]\nmembers = ["packages/**"]\n')
    member = tmp_path / "packages" / ".hidden" / "m"
    member.mkdir(parents=True)
    (member / "pyproject.toml").write_text(MEMBER)
    added, note = version_environment(tmp_path, {})
    assert set(added) == set(OVERRIDES) and note
    assert version_environment(tmp_path / "packages", {}) == ({}, "")  # no pyproject at all: nothing
