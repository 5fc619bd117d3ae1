"""`depsync lock` in a CI base image that has no uv, with the Dockerfile pinning uv 0.7.2.

The real thing, end to end: a registry-free image (the test image with its uv removed), a
Megatron-style CI Dockerfile naming it (FROM, `ARG UV_VERSION=0.7.2`, heredoc RUNs), uv 0.7.2
fetched by depsync from the configured index (PyPI, through this machine's TLS-inspecting
proxy: the host CA bundle is what makes that work), its sha256 checked against the index,
the binary for the image's platform mounted into the container. The lock must be the very
bytes uv 0.7.2 writes on the host (`uv tool run uv@0.7.2 lock`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IMAGE
from uvprojects import build_find_links

pytestmark = pytest.mark.docker

NO_UV_IMAGE = "depsync-test:no-uv"
MUSL_MARKED_IMAGE = "depsync-test:no-uv-musl-loader"
UV_072_MANYLINUX = "uv-0.7.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
UV_072_MUSLLINUX = "uv-0.7.2-py3-none-musllinux_1_1_x86_64.whl"

MEGATRON_LIKE = """\
# CI image written like Megatron-LM's docker/Dockerfile.ci.dev: the base has no uv, this file installs the pinned one
ARG FROM_IMAGE_NAME={image}
FROM ${{FROM_IMAGE_NAME}} AS main
ARG UV_VERSION=0.7.2
RUN bash -ex <<"EOF"
    pip install --no-cache-dir uv==${{UV_VERSION}}
EOF
COPY pyproject.toml uv.lock /workspace/
ARG IMAGE_TYPE=dev
RUN --mount=type=cache,target=/root/.cache/uv bash -ex <<"EOF"
    uv sync --locked
EOF
"""


def build(engine, tag: str, dockerfile: str, context: Path) -> str:  # type: ignore[no-untyped-def]
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(dockerfile)
    engine.images.build(path=str(context), tag=tag, rm=True)
    return tag


@pytest.fixture(scope="module")
def no_uv_image(engine, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[no-untyped-def]
    """The test image without uv: what a CUDA/PyTorch base is to the real CI Dockerfile."""
    return build(engine, NO_UV_IMAGE, f"FROM {IMAGE}\nRUN rm -f /usr/local/bin/uv\n", tmp_path_factory.mktemp("no-uv"))


@pytest.fixture(scope="module")
def musl_marked_image(engine, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[no-untyped-def]
    """No uv, and musl's loader path present. A fake only in part: no musl image can be made here
    (no registry, Debian's musl package is not installed), so the loader is a symlink to glibc's.
    What it tests is real: depsync reads the image, picks the musllinux wheel, and that wheel's
    statically linked uv runs."""
    dockerfile = f"FROM {IMAGE}\nRUN rm -f /usr/local/bin/uv && ln -s /lib64/ld-linux-x86-64.so.2 /lib/ld-musl-x86_64.so.1\n"
    return build(engine, MUSL_MARKED_IMAGE, dockerfile, tmp_path_factory.mktemp("musl-marked"))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """depsync's cache for this module: empty at first, so uv 0.7.2 is really fetched (once)."""
    return tmp_path_factory.mktemp("xdg-cache")


def make_project(root: Path, base_image: str) -> Path:
    """A project whose index (a flat wheel directory) lives inside it, with a Megatron-style Dockerfile."""
    root.mkdir(parents=True)
    build_find_links(root / "wheels")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha>=1.0", "gamma"]\n\n'
        '[[tool.uv.index]]\nname = "local"\nurl = "wheels"\nformat = "flat"\ndefault = true\n'
    )
    (root / "docker").mkdir()
    (root / "docker" / "Dockerfile.ci.dev").write_text(MEGATRON_LIKE.format(image=base_image))
    return root


def host_lock_072(project: Path, where: Path) -> bytes:
    """The lock uv 0.7.2 itself writes on the host, independent of depsync's fetch."""
    copy = where / project.name
    shutil.copytree(project, copy)
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
    result = subprocess.run([uv, "tool", "run", "--quiet", "uv@0.7.2", "lock"], cwd=copy, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    version = subprocess.run([uv, "tool", "run", "--quiet", "uv@0.7.2", "--version"], capture_output=True, text=True, timeout=600)
    assert version.stdout.split()[:2] == ["uv", "0.7.2"]
    return (copy / "uv.lock").read_bytes()


def lock(project: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", *args], capture_output=True, text=True, env=env, timeout=900)


def test_a_base_image_without_uv_locks_with_the_pinned_uv(engine, no_uv_image: str, cache: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project = make_project(tmp_path / "proj", no_uv_image)
    result = lock(project, cache)  # no --image: the Dockerfile's FROM (its ARG default) is the base image
    assert result.returncode == 0, result.stderr
    assert f"docker runner, image {no_uv_image} (the Dockerfile's FROM)" in result.stderr
    assert f"{no_uv_image} has uv none; used uv 0.7.2 (pinned) from depsync's cache, the build for linux/amd64 with glibc" in result.stderr
    assert "depsync: uv 0.7.2 via docker runner" in result.stderr
    assert "Traceback" not in result.stderr

    assert (project / "uv.lock").read_bytes() == host_lock_072(project, tmp_path / "host")

    # fetched once, verified, cached by version and platform
    binary = cache / "depsync" / "uv" / "0.7.2" / "x86_64-glibc" / "uv"
    assert binary.is_file() and os.access(binary, os.X_OK)
    source = (binary.parent / "source.txt").read_text().splitlines()
    assert source[0] == UV_072_MANYLINUX
    assert source[1] == "sha256=7236ec776c559fbc3ae4389b7cd506a2428ad9dd0402ac3d9446200ea3dc45f6"  # PyPI's, for that file
    image_id = engine.images.get(no_uv_image).id
    assert json.loads((cache / "depsync" / "images.json").read_text())[image_id] == {"uv": "", "libc": "glibc"}

    # a second run: the binary and the image's facts come from the cache; --check agrees with the lock
    check = lock(project, cache, "--check")
    assert check.returncode == 0, check.stderr
    assert "uv.lock is fresh" in check.stderr


def test_a_musl_image_gets_the_static_musllinux_uv(engine, musl_marked_image: str, cache: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project = make_project(tmp_path / "proj", musl_marked_image)
    result = lock(project, cache)
    assert result.returncode == 0, result.stderr
    assert f"{musl_marked_image} has uv none; used uv 0.7.2 (pinned) from depsync's cache, the build for linux/amd64 with musl" in result.stderr
    binary = cache / "depsync" / "uv" / "0.7.2" / "x86_64-musl" / "uv"
    assert (binary.parent / "source.txt").read_text().splitlines()[0] == UV_072_MUSLLINUX
    assert b"ld-linux" not in binary.read_bytes()[:4096]  # statically linked: no interpreter in its header
    assert (project / "uv.lock").read_bytes() == host_lock_072(project, tmp_path / "host")


def test_no_pin_and_no_uv_is_one_line(engine, no_uv_image: str, cache: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project = make_project(tmp_path / "proj", no_uv_image)
    (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {no_uv_image}\nRUN uv sync --locked\n")
    result = lock(project, cache)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("depsync: error:")]
    assert len(errors) == 1 and f"{no_uv_image} has no uv and no version is pinned (ARG UV_VERSION)" in errors[0]
    assert not (project / "uv.lock").exists()
