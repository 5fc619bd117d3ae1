"""Which files of a work copy say their version comes from git (shell/runners/workcopy.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from depsync.shell.runners.workcopy import version_environment

MEMBER = '[project]\nname = "m"\ndynamic = ["version"]\n\n[build-system]\nrequires = ["hatchling", "hatch-vcs"]\nbuild-backend = "hatchling.build"\n'
PDM_MEMBER = '[project]\nname = "q"\ndynamic = ["version"]\n\n[build-system]\nrequires = ["pdm-backend"]\nbuild-backend = "pdm.backend"\n\n[tool.pdm.version]\nsource = "scm"\n'


def test_a_workspace_member_that_takes_its_version_from_git_counts(tmp_path: Path) -> None:
    """The copy's members are found as uv globs them (shell/members.py: `**`, dot directories);
    each gets its own variable, a tool without one its fallback in the copy's pyproject."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "root"\nversion = "1.0"\n\n[tool.uv.workspace]\nmembers = ["packages/**"]\n')
    member = tmp_path / "packages" / ".hidden" / "m"
    member.mkdir(parents=True)
    (member / "pyproject.toml").write_text(MEMBER)
    (tmp_path / "packages" / "q").mkdir()
    (tmp_path / "packages" / "q" / "pyproject.toml").write_text(PDM_MEMBER)
    added, note = version_environment(tmp_path, {})
    assert added == {} and "a fallback version in 2 work-copy pyproject.toml" in note  # hatch-vcs and pdm-backend: neither has a per-package variable
    assert tomllib.loads((member / "pyproject.toml").read_text())["tool"]["hatch"]["version"]["fallback-version"] == "0.0.0"
    assert tomllib.loads((tmp_path / "packages" / "q" / "pyproject.toml").read_text())["tool"]["pdm"]["version"]["fallback_version"] == "0.0.0"
    assert version_environment(tmp_path / "packages", {}) == ({}, "")  # no pyproject at all: nothing
