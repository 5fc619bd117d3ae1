"""`depsync lock --build` with the real engine and the real docker CLIs of this machine.

Debian's docker.io (20.10) has no buildx; its classic CLI drives the engine's built-in BuildKit
(`DOCKER_BUILDKIT=1 docker build`), whose Dockerfile frontend has `RUN --mount` but no
heredocs. So here: a Megatron-like heredoc Dockerfile is refused before anything is built, in
one line naming the feature; a Dockerfile that frontend parses (`RUN --mount=type=cache`,
`COPY --chmod`, which the legacy builder refuses) is built through BuildKit. With no docker CLI
at all, depsync falls back to the legacy builder (the docker SDK) and refuses BuildKit syntax.

PATH is set per test to a directory holding exactly the CLI a case needs (symlinks to the real
binaries), so the builder depsync finds is the one the case is about.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IMAGE, indexed_project

pytestmark = pytest.mark.docker

MEGATRON_HEREDOC = """\
ARG FROM_IMAGE_NAME={image}
FROM ${{FROM_IMAGE_NAME}} AS main
ARG UV_VERSION=0.13.9
ENV UV_LINK_MODE=copy
RUN bash -ex <<"EOF"
    apt-get update
    pip install --no-cache-dir uv==${{UV_VERSION}}
EOF
COPY pyproject.toml /workspace/
ARG IMAGE_TYPE=dev
RUN --mount=type=cache,target=/root/.cache/uv \\
    bash -ex <<"EOF"
    uv sync --extra ${{IMAGE_TYPE}} --locked
EOF
"""

BUILTIN_FRONTEND_OK = """\
FROM {image} AS main
ARG UV_VERSION=0.13.9
COPY --chmod=644 pyproject.toml /opt/depsync-test/pyproject.toml
RUN --mount=type=cache,target=/root/.cache/uv test -f /opt/depsync-test/pyproject.toml
ENV DEPSYNC_BUILT=1
"""


def docker_version(cli: str) -> tuple[int, int]:
    out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"version (\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def classic_cli() -> str:
    """A docker CLI from before 23 (it drives the engine's BuildKit without buildx): Debian's docker.io."""
    for directory in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]:
        candidate = os.path.join(directory, "docker")
        if os.path.isfile(candidate) and docker_version(candidate) < (23, 0):
            return candidate
    pytest.skip("no docker CLI older than 23 on this machine (containers/setup-engine.sh installs Debian's docker.io)")


def only(tmp_path: Path, *clis: str) -> dict[str, str]:
    """An environment whose PATH has exactly these docker CLIs (and nothing else but Python's bin)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for cli in clis:
        (bin_dir / "docker").symlink_to(cli)
    home = tmp_path / "home"  # no user CLI plugins (buildx) from the real HOME
    home.mkdir(exist_ok=True)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}", HOME=str(home))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = indexed_project(tmp_path / "proj", tables="[project.optional-dependencies]\ndev = []\n\n")
    (root / "docker").mkdir()
    # named: some of these Dockerfiles run no uv, so discovery would not take them for the CI image
    with (root / "pyproject.toml").open("a") as file:
        file.write('\n[tool.depsync]\ndockerfiles = ["docker/Dockerfile.ci.dev"]\n')
    return root


def lock_build(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", "--build", *args], capture_output=True, text=True, env=env, timeout=600)
    built = re.search(r"docker runner, image (depsync-lock:[0-9a-f]{12})", result.stderr)
    if built:
        BUILT.add(built.group(1))
    return result


BUILT: set[str] = set()  # the tags these tests made (each test's project has its own): removed at the end


@pytest.fixture(autouse=True, scope="module")
def remove_built_tags():  # type: ignore[no-untyped-def]
    yield
    for tag in BUILT:
        subprocess.run(["docker", "image", "rm", tag], capture_output=True)


def one_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("depsync: error")]
    assert len(errors) == 1 and errors[0] == result.stderr.strip().splitlines()[-1], result.stderr
    assert "Traceback" not in result.stderr
    return errors[0]


def builder_is_buildx(env: dict[str, str]) -> bool:
    return subprocess.run(["docker", "buildx", "version"], capture_output=True, env=env).returncode == 0


def test_a_heredoc_dockerfile_is_refused_up_front_without_buildx(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = only(tmp_path, classic_cli())
    if builder_is_buildx(env):
        pytest.skip("this docker CLI has buildx: the heredoc builds, there is nothing to refuse")
    (project / "docker" / "Dockerfile.ci.dev").write_text(MEGATRON_HEREDOC.format(image=IMAGE))
    error = one_error(lock_build(project, env))
    assert error.startswith("depsync: error: docker/Dockerfile.ci.dev:5: a heredoc (`RUN <<EOF`) needs BuildKit (docker buildx)"), error
    assert "built-in BuildKit" in error and "Docker 20.10" in error
    assert "build the image in CI and pass it with --image" in error
    assert not (project / "uv.lock").exists()


def test_a_syntax_directive_needs_a_reachable_frontend(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The bundled Megatron example starts with `# syntax=docker/dockerfile:1.3-labs`: BuildKit
    would fetch that frontend from Docker Hub, which this machine cannot reach (no registry)."""
    env = only(tmp_path, classic_cli())
    if builder_is_buildx(env):
        pytest.skip("this docker CLI has buildx")
    try:
        engine.api.inspect_distribution("docker/dockerfile:1.3-labs")
        pytest.skip("Docker Hub is reachable from here: the frontend would be fetched")
    except Exception:
        pass  # the engine cannot reach the registry: what this test is about
    (project / "docker" / "Dockerfile.ci.dev").write_text("# syntax=docker/dockerfile:1.3-labs\n" + MEGATRON_HEREDOC.format(image=IMAGE))
    error = one_error(lock_build(project, env))
    assert error.startswith("depsync: error: docker/Dockerfile.ci.dev:1: the `# syntax=docker/dockerfile:1.3-labs` directive needs BuildKit to fetch that frontend image"), error
    assert "--image" in error


def test_buildkit_builds_what_its_frontend_parses(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """RUN --mount and COPY --chmod: the legacy builder refuses both, so a built image proves BuildKit built it."""
    env = only(tmp_path, classic_cli())
    (project / "docker" / "Dockerfile.ci.dev").write_text(BUILTIN_FRONTEND_OK.format(image=IMAGE))
    result = lock_build(project, env, "--target", "main")
    assert result.returncode == 0, result.stderr
    assert "built from docker/Dockerfile.ci.dev" in result.stderr
    assert re.search(r"^#\d+ \[main \d/\d\] RUN --mount=type=cache", result.stderr, re.MULTILINE), result.stderr  # BuildKit's own progress lines, verbatim
    tag = re.search(r"docker runner, image (depsync-lock:[0-9a-f]{12})", result.stderr)
    assert tag, result.stderr
    assert engine.images.get(tag.group(1)).attrs["Config"]["Env"].count("DEPSYNC_BUILT=1") == 1
    again = lock_build(project, env, "--target", "main")  # the same project, file and target: the same tag, rebuilt in place
    assert again.returncode == 0, again.stderr
    assert f"image {tag.group(1)} " in again.stderr
    assert (project / "uv.lock").read_text().startswith("version = 1\n")


def test_without_any_docker_cli_the_legacy_builder_refuses_buildkit_syntax(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    env = only(tmp_path)  # no docker CLI at all: the docker SDK drives the engine's legacy builder
    (project / "docker" / "Dockerfile.ci.dev").write_text(BUILTIN_FRONTEND_OK.format(image=IMAGE))
    error = one_error(lock_build(project, env))
    assert error.startswith("depsync: error: docker/Dockerfile.ci.dev:3: `COPY --chmod` needs BuildKit (docker buildx)"), error
    assert "the legacy builder (no docker CLI on PATH)" in error and "--image" in error

    (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {IMAGE}\nENV DEPSYNC_LEGACY=1\n")
    result = lock_build(project, env)
    assert result.returncode == 0, result.stderr
    assert "built from docker/Dockerfile.ci.dev" in result.stderr


def test_build_values_cannot_become_options(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A target or build-arg that looks like an option is refused; a config build-arg value that
    looks like one is one `--build-arg=NAME=VALUE` word, so the builder takes it as a value."""
    env = only(tmp_path, classic_cli())
    (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {IMAGE}\nARG X\nRUN test \"$X\" = --network=host\n")
    error = one_error(lock_build(project, env, "--target=--network=host"))
    assert "is not a stage name" in error
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace('dockerfiles = ["docker/Dockerfile.ci.dev"]', 'dockerfiles = [{ path = "docker/Dockerfile.ci.dev", build-args = { X = "--network=host" } }]'))
    result = lock_build(project, env)
    assert result.returncode == 0, result.stderr
    error = one_error(lock_build(project, env, "--build-arg", "X=a\nb"))
    assert "--build-arg 'X'" in error
