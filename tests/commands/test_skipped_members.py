"""Workspace members wherever the workspace names them: under `venv/`, `node_modules/`, `.tox/`
or behind a symlink. Every copy depsync gives uv (the confirmation of a static `lock-stale`,
the lock work copy) holds them, and check agrees with real `uv lock --check` in the checkout.
A member that resolves outside the project is a finding (check) or one error line (lock),
never silently left out. Real uv, real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, lock_project, uv_check_result, write_project


def _root(material: LocalMaterial, members: str) -> str:
    return (f'[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'
            f"[tool.uv.workspace]\nmembers = {members}\n" + material.index_toml())


def _member(name: str) -> str:
    return (f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha"]\n\n'
            '[build-system]\nrequires = []\nbuild-backend = "none"\n')


def _depsync(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args, str(project)], capture_output=True, text=True, env=env)


def _check(project: Path, env: dict[str, str]) -> tuple[int, list[dict]]:
    done = _depsync(project, env, "check", "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["findings"]


@pytest.fixture
def env(material: LocalMaterial, tmp_path: Path) -> dict[str, str]:
    return {**material.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


def _project(tmp_path: Path, material: LocalMaterial, members: str, place: str, git: bool = True) -> Path:
    """A workspace locked before its member existed; then the member appears at `place`
    (a path, or `link:TARGET` for a symlink at members/tool to TARGET)."""
    project = write_project(tmp_path / "ws", _root(material, members))
    lock_project(project, material.env)
    if place.startswith("link:"):
        target = Path(place.removeprefix("link:"))
        write_project(target if target.is_absolute() else project / target, _member("tool"))
        (project / "members").mkdir()
        os.symlink(target if target.is_absolute() else Path("..") / target, project / "members" / "tool")
    else:
        write_project(project / place, _member("tool"))
    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


@pytest.mark.parametrize("place", ["venv/tool", ".venv/tool", "node_modules/tool", ".tox/tool", "link:real/tool"])
def test_check_agrees_with_real_uv_on_a_member_copies_used_to_skip(tmp_path: Path, material: LocalMaterial, env: dict[str, str], place: str) -> None:
    members = '["members/*"]' if place.startswith("link:") else f'["{place}"]'
    project = _project(tmp_path, material, members, place)
    assert uv_check_result(project, material.env).returncode == 1  # real uv in the checkout: stale
    code, findings = _check(project, env)
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"]
    assert "the workspace has member tool the lock does not record" in findings[0]["message"] and "uv 0.13.9 agrees" in findings[0]["message"]

    locked = _depsync(project, env, "lock", "--runner", "local")
    assert locked.returncode == 0, locked.stderr
    assert 'name = "tool"' in (project / "uv.lock").read_text()
    assert uv_check_result(project, material.env).returncode == 0  # the lock made on the copy is fresh in the checkout
    assert _check(project, env) == (0, [])


def test_the_whole_tree_copy_outside_git_holds_a_member_under_venv(tmp_path: Path, material: LocalMaterial, env: dict[str, str]) -> None:
    project = _project(tmp_path, material, '["venv/tool"]', "venv/tool", git=False)
    locked = _depsync(project, env, "lock", "--runner", "local")
    assert locked.returncode == 0, locked.stderr
    assert uv_check_result(project, material.env).returncode == 0 and 'name = "tool"' in (project / "uv.lock").read_text()


def test_a_member_linked_outside_the_project_is_named_never_skipped(tmp_path: Path, material: LocalMaterial, env: dict[str, str]) -> None:
    project = _project(tmp_path, material, '["members/*"]', f"link:{tmp_path / 'elsewhere' / 'tool'}")
    assert uv_check_result(project, material.env).returncode == 1  # uv follows the link: stale
    code, findings = _check(project, env)
    assert code == 1 and "workspace-member-outside" in [f["rule"] for f in findings]
    outside = next(f for f in findings if f["rule"] == "workspace-member-outside")
    assert "members/tool resolves outside the project" in outside["message"] and outside["file"] == "pyproject.toml"
    before = (project / "uv.lock").read_bytes()
    locked = _depsync(project, env, "lock", "--runner", "local")
    last = locked.stderr.splitlines()[-1]
    assert locked.returncode == 2 and "Traceback" not in locked.stderr and last.startswith("depsync: error: workspace member members/tool resolves outside the project")
    assert (project / "uv.lock").read_bytes() == before
