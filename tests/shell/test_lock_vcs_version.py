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

    assert "a fallback version in 1 work-copy pyproject.toml" in locked.stderr and "SETUPTOOLS_SCM_PRETEND_VERSION" not in locked.stderr

    # the operator's own override is kept (not replaced by the stand-in, nothing added to it)
    (project / "uv.lock").unlink()
    mine = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local"], cwd=project, capture_output=True, text=True,
                          env=dict(env, SETUPTOOLS_SCM_PRETEND_VERSION="4.5.6"))
    assert mine.returncode == 0, mine.stderr
    assert "the work copy has no .git" not in mine.stderr


def test_a_git_dependency_keeps_its_tagged_version(tmp_path: Path) -> None:
    """The workspace takes its version from git, and so does a git dependency uv builds from its
    tagged checkout: the stand-in reaches the workspace's own project only, so uv.lock records
    the dependency as 1.2.3, as `uv lock` in the checkout does (a global override made it 0.0.0)."""
    dependency = tmp_path / "gitdep"
    write_files(dependency, {"pyproject.toml": PYPROJECT.replace("vcsdemo", "gitdep"), "src/gitdep/__init__.py": ""})
    git(dependency, "init", "-q", "-b", "main")
    git(dependency, "add", "-A")
    git(dependency, "commit", "-qm", "init")
    git(dependency, "tag", "v1.2.3")
    project = tmp_path / "vcsdemo"
    pyproject = PYPROJECT.replace("dependencies = []", 'dependencies = ["gitdep"]') + f'\n[tool.uv.sources]\ngitdep = {{ git = "file://{dependency}", tag = "v1.2.3" }}\n'
    write_files(project, {"pyproject.toml": pyproject, "src/vcsdemo/__init__.py": ""})
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    git(project, "tag", "v0.9.0")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "SETUPTOOLS_SCM", "PDM_BUILD", "POETRY_DYNAMIC"))}
    env.update(UV_INDEX_URL=f"file://{INDEX}", UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON=sys.executable)
    reference = subprocess.run(["uv", "lock"], cwd=project, env=env, capture_output=True, text=True)
    assert reference.returncode == 0, reference.stderr
    expected = (project / "uv.lock").read_bytes()
    assert b'name = "gitdep"\nversion = "1.2.3"' in expected, expected.decode()
    (project / "uv.lock").unlink()
    fresh = dict(env, UV_CACHE_DIR=str(tmp_path / "another-uv-cache"))  # the dependency built again, not its metadata from the reference's cache
    locked = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local"], cwd=project, env=fresh, capture_output=True, text=True)
    assert locked.returncode == 0, locked.stderr
    assert (project / "uv.lock").read_bytes() == expected
