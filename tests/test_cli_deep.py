"""`depsync check --deep`: real `uv lock --check --offline` on real local projects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


from uvprojects import LocalMaterial, lock_project, write_project


def depsync(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "depsync", "check", str(project), "--deep", "--format", "json", *args],
        capture_output=True,
        text=True,
        env=env,
    )


def project_text(material: LocalMaterial, dependency: str) -> str:
    return f'[project]\nname = "deep"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["{dependency}"]\n' + material.index_toml()


def test_deep_agrees_with_static_check(material: LocalMaterial, tmp_path: Path) -> None:
    project = write_project(tmp_path / "deep", project_text(material, "alpha>=1.0"))
    lock_project(project, material.env)
    env = dict(material.env)
    fresh = depsync(project, env)
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["findings"] == []

    (project / "pyproject.toml").write_text(project_text(material, "alpha>=2.0"))
    stale = depsync(project, env)
    assert stale.returncode == 1, stale.stderr
    rules = sorted(f["rule"] for f in json.loads(stale.stdout)["findings"])
    assert rules == ["lock-stale", "uv-lock-check"]


def test_deep_without_uv_is_an_input_error(material: LocalMaterial, tmp_path: Path) -> None:
    project = write_project(tmp_path / "deep", project_text(material, "alpha"))
    lock_project(project, material.env)
    env = dict(os.environ, PATH=str(tmp_path / "empty-bin"))
    result = depsync(project, env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["depsync: error: uv not found on PATH: install it (`pip install uv`) to use --deep"]
