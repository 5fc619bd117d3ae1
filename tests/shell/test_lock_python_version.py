"""The local runner never runs an interpreter a tree's `.python-version(s)` names by path: uv
executes such a path to ask what it is. A marker-file trap, real uv, real `depsync lock`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, lock_project, uv_check_result, write_project

from depsync.core.trust import names_interpreter_path


@pytest.mark.parametrize("name", [".python-version", ".python-versions"])
def test_a_python_version_naming_a_path_is_not_run_by_the_relock(material: LocalMaterial, tmp_path: Path, name: str) -> None:
    marker = tmp_path / "TRAPPED"
    pyproject = ('[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha"]\n' + material.index_toml())
    project = write_project(tmp_path / "app", pyproject)
    lock_project(project, material.env)
    trap = project / "tools" / "python"
    trap.parent.mkdir()
    trap.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")  # works as Python too: only the marker tells
    trap.chmod(0o755)
    (project / name).write_text(f"{trap}\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "pyproject.toml").write_text(pyproject.replace('"alpha"', '"alpha>=1.0"'))  # a relock that resolves
    # an operator who names no interpreter (no UV_PYTHON): uv would take the tree's
    env = {k: v for k, v in material.env.items() if k != "UV_PYTHON"} | {"XDG_CACHE_HOME": str(tmp_path / "xdg")}
    locked = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local", str(project)], capture_output=True, text=True, env=env)
    assert locked.returncode == 0, locked.stderr
    assert not marker.exists()  # the tree's interpreter never ran
    assert f"{name} not given to uv: it names an interpreter path" in locked.stderr
    assert (project / name).read_text() == f"{trap}\n"  # the checkout's file is left as it is
    assert uv_check_result(project, material.env).returncode == 0


def test_a_version_request_is_no_path() -> None:
    assert not any(names_interpreter_path(t) for t in ("3.12\n", "cpython@3.12\n", "pypy3.10\n", ">=3.11\n", "# a comment\n3.11\n", "3.12\n3.11\n"))
    assert all(names_interpreter_path(t) for t in ("/usr/bin/python3\n", "./venv/bin/python\n", "~/py\n", "3.12\n../x/python\n", "C:\\py\\python.exe\n"))
