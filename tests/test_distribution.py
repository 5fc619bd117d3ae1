"""Distribution: `python -m build` makes an sdist and a wheel with full metadata, the wheel
installs into a fresh environment, and the README's install command works with the system's own
python3 (Debian/Ubuntu: externally managed, PEP 668, so it goes through a venv).

These build and install for real (setuptools and depsync's dependencies come from the
package index, as they do for a user).
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

from depsync import __version__

# The README's first command (tests/test_readme.py checks it is there, word for word): install
# depsync and run reconcile on the bundled example.
QUICK_START = "python3 -m venv .venv && .venv/bin/pip install . && bash examples/megatron-sync/make-example.sh"
SYSTEM_PYTHON = Path("/usr/bin/python3")
SCHEMA_FILES = sorted(p.name for p in (REPO / "depsync" / "schemas").glob("*.schema.json"))


def _tree_copy(target: Path) -> Path:
    """The project's files as a fresh clone would have them (tracked and new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "depsync", "examples", "fixtures", "pyproject.toml", "README.md", "LICENSE"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = _tree_copy(tmp_path_factory.mktemp("tree"))
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(tree)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return out


def _one(directory: Path, pattern: str) -> Path:
    (found,) = directory.glob(pattern)
    return found


def test_wheel_metadata(dist: Path) -> None:
    wheel = _one(dist, f"depsync-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        info = f"depsync-{__version__}.dist-info"
        metadata = email.parser.Parser().parsestr(archive.read(f"{info}/METADATA").decode())
        assert archive.read(f"{info}/licenses/LICENSE").decode().lstrip().startswith("Apache License")
        assert "depsync = depsync." in archive.read(f"{info}/entry_points.txt").decode()
        names = archive.namelist()
    assert metadata["Name"] == "depsync" and metadata["Version"] == __version__
    assert metadata["License-Expression"] == "Apache-2.0" and metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.11"
    urls = dict(value.split(", ", 1) for value in metadata.get_all("Project-URL"))
    assert {"Homepage", "Repository", "Issues", "Documentation"} <= set(urls)
    classifiers = metadata.get_all("Classifier")
    assert "Programming Language :: Python :: 3.11" in classifiers and "Environment :: Console" in classifiers
    assert metadata.get_payload().startswith("# depsync")  # the README is the long description
    assert metadata["Description-Content-Type"] == "text/markdown"
    # the package and its new modules are in it; tests and fixtures are not
    for module in ("depsync/cli/parser.py", "depsync/cli/docs.py", "depsync/report/sarif.py", "depsync/core/rules/docs.py", "depsync/cli/root.py", "depsync/commands/completion.py"):
        assert module in names, module
    assert not any(n.startswith(("tests/", "fixtures/")) for n in names)
    # the JSON Schemas of the JSON outputs are package data: every one the source has is in the wheel
    assert SCHEMA_FILES and {f"depsync/schemas/{name}" for name in SCHEMA_FILES} <= set(names)


def test_sdist_contents(dist: Path) -> None:
    sdist = _one(dist, f"depsync-{__version__}.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"LICENSE", "README.md", "pyproject.toml", "PKG-INFO", "depsync/cli/parser.py"} <= names
    assert {f"depsync/schemas/{name}" for name in SCHEMA_FILES} <= names


def test_wheel_installs_into_a_fresh_venv(dist: Path, tmp_path: Path) -> None:
    """`uv tool install` gives depsync its own fresh environment, as a user's install would."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    assert uv, "uv (test extra) is not installed"
    env = dict(os.environ, UV_TOOL_DIR=str(tmp_path / "tools"), UV_TOOL_BIN_DIR=str(tmp_path / "bin"), UV_PYTHON_DOWNLOADS="never")
    wheel = _one(dist, "*.whl")
    install = subprocess.run([uv, "tool", "install", "--python", sys.executable, str(wheel)], capture_output=True, text=True, env=env)
    assert install.returncode == 0, install.stderr[-3000:]
    depsync = tmp_path / "bin" / "depsync"
    version = subprocess.run([str(depsync), "--version"], capture_output=True, text=True, env=env)
    assert (version.returncode, version.stdout.strip()) == (0, f"depsync {__version__}")
    # the installed package reads its schemas (importlib.resources, not the source tree)
    python = next((tmp_path / "tools" / "depsync" / "bin").glob("python3*"))
    probe = "from depsync.api import json_schema; print(' '.join(json_schema(s)['properties']['schema']['const'] for s in ('depsync.check/2', 'depsync.reconcile/1', 'depsync.diff/2')))"
    loaded = subprocess.run([str(python), "-I", "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert (loaded.returncode, loaded.stdout.split()) == (0, ["depsync.check/2", "depsync.reconcile/1", "depsync.diff/2"]), loaded.stderr[-2000:]
    check = subprocess.run([str(depsync), "check", str(REPO / "fixtures" / "megatron-dev")], capture_output=True, text=True, env=env)
    # 1: the real errors of that state (CUDA 12 --no-install-package flags the CUDA 13 lock renamed)
    assert check.returncode == 1 and "docker-no-install-renamed" in check.stdout and "Traceback" not in check.stderr, check.stdout + check.stderr


def _system_python_problem() -> str | None:
    if not SYSTEM_PYTHON.exists():
        return "no /usr/bin/python3 on this machine"
    probe = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys, ensurepip; print(sys.version_info >= (3, 11))"], capture_output=True, text=True)
    if probe.returncode != 0:
        return "the system python3 has no ensurepip (Debian/Ubuntu: apt-get install python3-venv)"
    if probe.stdout.strip() != "True":
        return "the system python3 is older than 3.11"
    return None


def test_quick_start_with_the_system_python(tmp_path: Path) -> None:
    """The README's first command, as written, in a fresh copy, with /usr/bin/python3 first on PATH."""
    problem = _system_python_problem()
    if problem:
        pytest.skip(problem)
    tree = _tree_copy(tmp_path / "depsync")
    (tmp_path / "tmp").mkdir()
    env = dict(os.environ, PATH=f"{SYSTEM_PYTHON.parent}:{os.environ.get('PATH', '')}", TMPDIR=str(tmp_path / "tmp"))
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(["bash", "-c", QUICK_START], cwd=tree, capture_output=True, text=True, env=env)
    # 0: the example ran; reconcile itself exited 1 (flagged for a reviewer), as README says
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"(depsync {__version__}):" in result.stdout and "depsync reconcile exited 1: done, a reviewer must look" in result.stdout
    (body,) = (tmp_path / "tmp").glob("depsync-example.*/sync/pr-body.md")
    assert "**Needs review**: main changed 21 entries in 12 tables" in body.read_text()
    assert (tree / ".venv" / "bin" / "python").resolve().parent == SYSTEM_PYTHON.resolve().parent  # the system python made the venv
