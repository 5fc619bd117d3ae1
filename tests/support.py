"""What many tests share: running depsync as a user does (`python -m depsync` in a child process,
with this interpreter), git helpers, a copy of depsync as a repository, and a small sample triple."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from conftest import REPO, git

from depsync.core.config import Config
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.rules.inputs import CheckInputs


def depsync(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, stdin: str | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m depsync ARGS` in cwd; stdout and stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "depsync", *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def depsync_in(cwd: Path, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """depsync run in a repository: `depsync_in(repo, "reconcile", ...)`."""
    return depsync(*args, cwd=cwd, env=env, stdin=stdin, timeout=timeout)


def show(repo: Path, spec: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "show", spec], capture_output=True, check=True).stdout


def without_depsync(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """env whose PATH has no `depsync` (the venv's bin is dropped) but still has uv, for --relock."""
    uv_only = tmp_path / "uv-only-bin"
    uv_only.mkdir(exist_ok=True)
    uv = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    assert uv, "uv is a test dependency"
    if not (uv_only / "uv").exists():
        (uv_only / "uv").symlink_to(uv)
    dirs = [d for d in env.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "depsync").exists()]
    path = os.pathsep.join([str(uv_only), *dirs])
    assert shutil.which("depsync", path=path) is None
    return {**env, "PATH": path}


def copy_of_depsync(target: Path) -> Path:
    """The depsync repository as GitHub hands it to a workflow that uses the action: its files."""
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build", ".pytest_cache", ".hypothesis", ".benchmarks"))
    return target


def git_repo_of_depsync(target: Path) -> str:
    """This work tree as a git repository of one commit (what a tag of depsync would hold); its sha."""
    copy_of_depsync(target)
    git(target, "init", "-q", "-b", "main")
    git(target, "add", "-A")
    git(target, "commit", "-qm", "depsync under test")
    return git(target, "rev-parse", "HEAD")


# -- a small consistent triple, for rule and CLI tests -------------------------------------------

def inputs(pyproject: str, lock: str | None = None, dockerfiles: tuple[str, ...] = (), config: Config | None = None, **kw) -> CheckInputs:
    return CheckInputs(
        config or Config(),
        Pyproject.from_text(pyproject),
        Lock.from_text(lock) if lock is not None else None,
        tuple(Dockerfile.from_text(d, "docker/Dockerfile.ci.dev") for d in dockerfiles),
        **kw,
    )


PYPROJECT = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["alpha>=1"]

[project.optional-dependencies]
gpu = ["beta"]

[dependency-groups]
test = ["pytest"]

[tool.uv.sources]
beta = { git = "https://example.com/beta.git", rev = "0123456789abcdef0123456789abcdef01234567" }
"""

LOCK = """\
version = 1
revision = 2
requires-python = ">=3.11"

[[package]]
name = "alpha"
version = "1.2"
source = { registry = "https://pypi.org/simple" }
sdist = { url = "https://files.example/alpha-1.2.tar.gz", hash = "sha256:%(h)s" }
wheels = [{ url = "https://files.example/alpha-1.2-py3-none-any.whl", hash = "sha256:%(h)s" }]

[[package]]
name = "beta"
version = "0.3"
source = { git = "https://example.com/beta.git?rev=0123456789abcdef0123456789abcdef01234567#0123456789abcdef0123456789abcdef01234567" }

[[package]]
name = "demo"
version = "0.1.0"
source = { editable = "." }
dependencies = [{ name = "alpha" }]

[package.optional-dependencies]
gpu = [{ name = "beta" }]

[package.dev-dependencies]
test = [{ name = "pytest" }]

[package.metadata]
requires-dist = [
    { name = "alpha", specifier = ">=1" },
    { name = "beta", marker = "extra == 'gpu'", git = "https://example.com/beta.git?rev=0123456789abcdef0123456789abcdef01234567" },
]
provides-extras = ["gpu"]

[package.metadata.requires-dev]
test = [{ name = "pytest" }]

[[package]]
name = "pytest"
version = "8.0"
source = { registry = "https://pypi.org/simple" }
""" % {"h": "a" * 64}


def build_backend(attack: str, *, hook: str, name: str = "demo", on_requires: bool = True) -> str:
    """The source of a PEP 517 build backend that runs an attack while uv locks: `attack` defines
    `hook()`, called when uv asks for the build requirements (unless on_requires is False) and
    for the metadata; the backend never builds a wheel (locking does not need one)."""
    call = f"    {hook}()\n"
    return (
        attack
        + "\n\ndef get_requires_for_build_wheel(config_settings=None):\n"
        + (call if on_requires else "")
        + "    return []\n\n"
        + "def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):\n"
        + call
        + f'    info = os.path.join(metadata_directory, "{name}-0.1.0.dist-info")\n'
        + "    os.makedirs(info, exist_ok=True)\n"
        + '    with open(os.path.join(info, "METADATA"), "w") as handle:\n'
        + f'        handle.write("Metadata-Version: 2.1\\nName: {name}\\nVersion: 0.1.0\\n")\n'
        + f'    return "{name}-0.1.0.dist-info"\n'
        + """
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("not needed to lock")

get_requires_for_build_editable = get_requires_for_build_wheel
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
build_editable = build_wheel
"""
    )


# -- the engine's containers, as the tests look at them ------------------------------------------


def labelled_containers(client, label: str = "io.depsync.run", *, running_only: bool = False) -> list:  # type: ignore[no-untyped-def]
    """The containers carrying label that the engine can still inspect. The SDK's own list
    inspects each one and fails on a container auto-remove takes away in between (a 404): the
    ids are listed, and one that is gone by the time it is inspected is simply not there."""
    import docker

    found = []
    for entry in client.api.containers(all=not running_only, filters={"label": label}):
        try:
            found.append(client.containers.get(entry["Id"]))
        except docker.errors.NotFound:
            pass
    return found


def containers_left(client, before: set[str], timeout: float = 30) -> list:  # type: ignore[no-untyped-def]
    """depsync's containers made since `before` (ids) that are still there once the engine has had
    time to finish removing them (removal of a killed container is not instant on every engine)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        left = [c for c in labelled_containers(client) if c.id not in before]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)
