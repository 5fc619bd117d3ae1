"""A project whose version comes from git tags (hatch-vcs, real) locks in depsync's work copy,
which has no .git, exactly as `uv lock` locks it in the checkout.

Real git, real uv, real hatchling and hatch-vcs from the machine's local package index
(/opt/pypi/simple, a file:// index: no network); skipped where that index does not have them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, write_files

INDEX = Path("/opt/pypi/simple")
PYPROJECT = """\
[project]
name = "vcsdemo"
dynamic = ["version"]
requires-python = ">=3.10"
dependencies = []

[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[tool.hatch.version]
source = "vcs"
"""

pytestmark = pytest.mark.skipif(not all((INDEX / name).is_dir() for name in ("hatchling", "hatch-vcs", "setuptools-scm")),
                                reason="the local index /opt/pypi/simple has no hatchling/hatch-vcs/setuptools-scm")


def test_a_git_derived_version_locks_in_the_work_copy_as_uv_locks_it_in_the_checkout(tmp_path: Path) -> None:
    project = tmp_path / "vcsdemo"
    write_files(project, {"pyproject.toml": PYPROJECT, "src/vcsdemo/__init__.py": ""})
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    git(project, "tag", "v1.2.3")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "SETUPTOOLS_SCM", "PDM_BUILD", "POETRY_DYNAMIC"))}
    env.update(UV_INDEX_URL=f"file://{INDEX}", UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON=sys.executable)
    reference = subprocess.run(["uv", "lock"], cwd=project, env=env, capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr  # in the checkout hatch-vcs reads the tag
    expected = (project / "uv.lock").read_bytes()
    (project / "uv.lock").unlink()
    locked = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local"], cwd=project, env=env, capture_output=True, text=True)
    assert locked.returncode == 0, locked.stderr  # failed before: hatch-vcs found no git metadata in the copy
    assert (project / "uv.lock").read_bytes() == expected
    assert "the work copy has no .git, so a version derived from git is given as 0.0.0" in locked.stderr
    assert b'name = "vcsdemo"\nsource = { editable = "." }' in expected  # no version recorded: the stand-in cannot show

    # the operator's own override is kept (not replaced by the stand-in)
    (project / "uv.lock").unlink()
    mine = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local"], cwd=project, capture_output=True, text=True,
                          env=dict(env, SETUPTOOLS_SCM_PRETEND_VERSION="4.5.6"))
    assert mine.returncode == 0, mine.stderr
    (note,) = [line for line in mine.stderr.splitlines() if "the work copy has no .git" in line]
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" not in note and "PDM_BUILD_SCM_VERSION" in note
