"""`depsync check --image` on the real engine: images built FROM the test image with dist-info trees
written into its site-packages (tests/imagebuild.py), the real Megatron-LM dev triple (fixtures/
megatron-dev, its CI Dockerfile) held against them, and hostile image content.

No GPU image or NVIDIA registry exists here: the NGC image is stood in for by the test image (Debian's
Python 3.11) plus the distributions an NGC PyTorch image ships, at chosen versions, and its
CUDA_VERSION."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import pytest
from conftest import BUNDLED, IMAGE
from imagebuild import SITE, build, dist_files, metadata, remove
from support import depsync

pytestmark = pytest.mark.docker

NGC_LIKE = "depsync-test:ngc-like"  # torch below what Megatron's pyproject requires, CUDA 12, no triton
NGC_DISTS = {
    "torch": "2.5.0a0+872d972e41.nv24.08",
    "transformer-engine": "1.11.0+c27ee60",
    "numpy": "1.24.4",
    "nvidia-cudnn-frontend": "1.5.2",
    "pytorch-triton": "3.0.0+dedb7bdf3",
    "megatron-core": "0.8.0",
}


@pytest.fixture(scope="module")
def ngc_like() -> str:
    build(NGC_LIKE, IMAGE, dist_files(NGC_DISTS), env={"CUDA_VERSION": "12.6.0.022", "PYTORCH_VERSION": "2.5.0a0+872d972"})
    yield NGC_LIKE
    remove(NGC_LIKE)


@pytest.fixture()
def megatron(tmp_path: Path) -> Path:
    project = tmp_path / "megatron"
    shutil.copytree(BUNDLED / "megatron-dev", project)
    return project


def env_with_cache(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_COLOR": "1"}


def by_rule(document: dict) -> dict[str, list[dict]]:  # type: ignore[type-arg]
    out: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for finding in document["findings"]:
        out.setdefault(finding["rule"], []).append(finding)
    return out


def schema() -> jsonschema.Draft202012Validator:
    from depsync.api import json_schema

    return jsonschema.Draft202012Validator(json_schema("depsync.check/2"))


def test_the_megatron_triple_against_an_ngc_like_image(megatron: Path, ngc_like: str, tmp_path: Path) -> None:
    env = env_with_cache(tmp_path)
    result = depsync("check", str(megatron), "--image", ngc_like, "--format", "json", env=env)
    assert result.returncode == 1, result.stderr
    document = json.loads(result.stdout)
    schema().validate(document)
    assert document["image"]["reference"] == ngc_like and document["image"]["python"] == "3.11.2"
    assert document["image"]["cuda"] == "12" and document["image"]["distributions"] == len(NGC_DISTS)
    found = by_rule(document)
    # the project requires torch>=2.6.0; the image's torch is 2.5.0a0: kept out, relied on, too old
    version = found["image-version-mismatch"]
    assert [(f["file"], f["line"]) for f in version] == [("docker/Dockerfile.ci.dev", 41)]
    assert "requires torch>=2.6.0" in version[0]["message"] and f"torch-{NGC_DISTS['torch']}.dist-info" in version[0]["message"]
    # dev's lock builds TransformerEngine from its git pin over the image's own (the flag names -cu12, which the lock lacks)
    shadowed = {f["message"].split()[3] for f in found["image-shadowed"]}
    assert {"transformer-engine", "numpy", "nvidia-cudnn-frontend"} <= shadowed
    assert all(f["line"] == 35 for f in found["image-shadowed"])
    # the lock moved to CUDA 13 builds; the image has CUDA 12
    cuda = found["image-cuda-mismatch"]
    assert cuda and all(f["file"] == "uv.lock" and "CUDA_VERSION=12.6.0.022" in f["message"] for f in cuda)
    # the image ships its triton as pytorch-triton: the lock's triton, kept out, is in no dist-info of the image
    assert [f["message"].split()[0] for f in found["image-kept-out-missing"]] == ["`--no-install-package", ] and "has no triton" in found["image-kept-out-missing"][0]["message"]
    assert "image-python-mismatch" not in found  # 3.11 is inside >=3.10 and a resolution fork of the lock
    # the same data in each format check writes
    for output_format in ("sarif", "github", "gitlab", "human"):
        again = depsync("check", str(megatron), "--image", ngc_like, "--format", output_format, env=env)
        assert again.returncode == 1 and "image-cuda-mismatch" in again.stdout, (output_format, again.stderr)


def test_the_default_image_is_the_ci_dockerfiles_from_and_a_repeat_is_cached(megatron: Path, ngc_like: str, tmp_path: Path) -> None:
    env = env_with_cache(tmp_path)
    args = ("check", str(megatron), "--dockerfile", "docker/Dockerfile.ci.dev", "--build-arg", f"FROM_IMAGE_NAME={ngc_like}", "--image", "-v")
    first = depsync(*args, env=env)
    assert first.returncode == 1, first.stderr
    assert f"image: {ngc_like} (" in first.stderr and "from the cache" not in first.stderr
    cached = list((tmp_path / "cache" / "depsync" / "image-env").glob("*.json"))
    assert len(cached) == 1
    second = depsync(*args, env=env)
    assert second.returncode == 1 and "from the cache" in second.stderr
    assert second.stdout == first.stdout
    # --no-cache reads the image again
    third = depsync(*args, "--no-cache", env=env)
    assert third.returncode == 1 and "from the cache" not in third.stderr


def test_after_check_fix_the_kept_out_cuda_13_libraries_meet_the_images_cuda(megatron: Path, ngc_like: str, tmp_path: Path) -> None:
    """`check --fix` renames the stale -cu12 flags to the lock's CUDA 13 builds; against a CUDA 12
    image each renamed flag is then a CUDA mismatch (the image's CUDA libraries are 12), against
    a CUDA 13 image none is missing (NGC images ship CUDA as system libraries, not wheels)."""
    env = env_with_cache(tmp_path)
    fixed = depsync("check", str(megatron), "--fix", "--select", "docker-no-install-renamed", env=env)
    assert fixed.returncode == 0, fixed.stderr
    result = depsync("check", str(megatron), "--image", ngc_like, "--format", "json", env=env)
    found = by_rule(json.loads(result.stdout))
    kept = [f for f in found["image-cuda-mismatch"] if f["file"] == "docker/Dockerfile.ci.dev"]
    assert {f["message"].split("`")[1] for f in kept} >= {"--no-install-package nvidia-nccl-cu13", "--no-install-package nvidia-cudnn-cu13", "--no-install-package nvidia-cublas"}
    assert all("has CUDA 12 (CUDA_VERSION=12.6.0.022" in f["message"] for f in kept)
    assert "image-kept-out-missing" not in found or all("nvidia-" not in f["message"] for f in found["image-kept-out-missing"])
    tag = "depsync-test:cuda13"
    build(tag, IMAGE, dist_files({**NGC_DISTS, "torch": "2.11.0a0+nv26.01", "triton": "3.6.0"}), env={"CUDA_VERSION": "13.0.2.006"})
    try:
        result = depsync("check", str(megatron), "--image", tag, "--format", "json", env=env)
        found = by_rule(json.loads(result.stdout))
        assert "image-cuda-mismatch" not in found and "image-kept-out-missing" not in found and "image-version-mismatch" not in found
    finally:
        remove(tag)


def test_an_image_without_torch_is_a_kept_out_package_it_does_not_ship(megatron: Path, tmp_path: Path) -> None:
    tag = "depsync-test:no-torch"
    build(tag, IMAGE, dist_files({"numpy": "2.4.4"}), env={"CUDA_VERSION": "13.0.1"})
    try:
        result = depsync("check", str(megatron), "--image", tag, "--format", "json", env=env_with_cache(tmp_path))
        found = by_rule(json.loads(result.stdout))
        missing = found["image-kept-out-missing"]
        assert [(f["line"], f["severity"]) for f in missing] == [(41, "error"), (43, "error")]  # torch, triton
        assert "has no torch" in missing[0]["message"] and "has no triton" in missing[1]["message"]
        assert "remove `--no-install-package triton`" in missing[1]["fix"] and "remove `--no-install-package torch`" in missing[0]["fix"]
        assert "image-cuda-mismatch" not in found  # CUDA 13, like the lock
    finally:
        remove(tag)


def test_requires_python_the_image_does_not_meet(megatron: Path, ngc_like: str, tmp_path: Path) -> None:
    pyproject = megatron / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('requires-python = ">=3.10"', 'requires-python = ">=3.12"', 1))
    result = depsync("check", str(megatron), "--image", ngc_like, "--select", "image-python-mismatch", "--no-cache", env=env_with_cache(tmp_path))
    assert result.returncode == 1
    assert "pyproject.toml:11 error image-python-mismatch" in result.stdout and "Python 3.11.2" in result.stdout


def test_hostile_image_content_is_bounded_and_said_in_one_line(megatron: Path, tmp_path: Path) -> None:
    tag = "depsync-test:hostile-site"
    huge = metadata("huge", "1.0", tuple(f"dep{i}>=1" for i in range(3000))) + b"X" * (8 * 1024 * 1024)
    files: dict[str, bytes | tuple[str, str]] = {
        f"{SITE}/huge-1.0.dist-info/METADATA": huge,
        f"{SITE}/latin-1.0.dist-info/METADATA": b"Name: latin\xff\xfe\nVersion: 1.0\nRequires-Dist: caf\xe9\n\n",
        f"{SITE}/escape-1.0.dist-info/METADATA": ("symlink", "/etc/passwd"),
        f"{SITE}/outside-1.0.dist-info": ("symlink", "/etc"),
        f"{SITE}/loop-1.0.dist-info/METADATA": ("symlink", f"{SITE}/loop-1.0.dist-info/METADATA"),
        f"{SITE}/torch-2.9.1.dist-info/METADATA": metadata("torch", "2.9.1"),
    }
    files.update(dist_files([(f"many{i}", "0.1") for i in range(3000)]))
    build(tag, IMAGE, files)
    try:
        result = depsync("check", str(megatron), "--image", tag, "--format", "json", "--no-cache", env=env_with_cache(tmp_path))
        assert result.returncode in (0, 1), result.stderr
        assert "Traceback" not in result.stderr
        document = json.loads(result.stdout)
        schema().validate(document)
        image = document["image"]
        assert image["distributions"] == 3000 + 3  # huge, latin, torch; the links out of site-packages were not read
        notes = [line for line in result.stderr.splitlines() if line.startswith("depsync: --image")]
        assert any("escape-1.0.dist-info: no METADATA inside the site directory" in n for n in notes)
        assert any("outside-1.0.dist-info" in n for n in notes) and any("loop-1.0.dist-info" in n for n in notes)
        assert all(len(n) < 500 for n in notes)
    finally:
        remove(tag)


FAKE_PYTHON = """#!/bin/sh
# stands in for an image's python: says what the reader's container lets it do
if touch /probe 2>/dev/null; then w=yes; else w=no; fi
n=$(ls /sys/class/net | tr '\\n' ' ')
echo '{"k": "python", "version": "3.11.2", "executable": "/usr/local/bin/python3", "env": {"sys_platform": "linux"}}'
echo "{\\"k\\": \\"note\\", \\"text\\": \\"write=$w net=$n uid=$(id -u)\\"}"
"""


def test_the_reader_container_has_no_network_and_a_read_only_root(megatron: Path, tmp_path: Path) -> None:
    tag = "depsync-test:fake-python"
    build(tag, IMAGE, {"/usr/local/bin/python3": ("exec", FAKE_PYTHON)})
    try:
        result = depsync("check", str(megatron), "--image", tag, "--no-cache", env=env_with_cache(tmp_path))
        assert f"write=no net=lo  uid={os.getuid()}" in result.stderr or f"write=no net=lo uid={os.getuid()}" in result.stderr, result.stderr
    finally:
        remove(tag)


def test_an_image_where_no_python_runs_is_read_from_its_files(megatron: Path, tmp_path: Path) -> None:
    tag = "depsync-test:no-python-on-path"
    files: dict[str, bytes | tuple[str, str]] = {**dist_files({"torch": "2.5.1", "numpy": "1.26.4"})}
    files[f"{SITE}/link-1.0.dist-info/METADATA"] = ("symlink", "/etc/passwd")
    build(tag, IMAGE, files, env={"PATH": "/nowhere", "CUDA_VERSION": "12.4.0"})
    try:
        result = depsync("check", str(megatron), "--image", tag, "--format", "json", "--no-cache", env=env_with_cache(tmp_path))
        assert result.returncode == 1, result.stderr
        assert "no python3 or python ran in the image: its distributions were read from its files" in result.stderr
        assert "link-1.0.dist-info: no METADATA inside the site directory" in result.stderr and "Traceback" not in result.stderr
        document = json.loads(result.stdout)
        assert document["image"]["python"] == "3.11" and document["image"]["cuda"] == "12" and document["image"]["distributions"] == 2
        found = by_rule(document)
        assert "requires torch>=2.6.0" in found["image-version-mismatch"][0]["message"]  # the image's torch 2.5.1, from its files
    finally:
        remove(tag)


def test_an_image_with_no_python_at_all_is_a_note_not_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from depsync.shell.runners import image_files
    from depsync.shell.runners.image_env import read_image_env

    tag = "depsync-test:no-site"
    build(tag, IMAGE, {}, env={"PATH": "/nowhere", "CUDA_VERSION": "12.4.0"})
    # the test image has Debian's /usr/lib/python3/dist-packages; an image with no Python has no site
    # directory at all, which this stands in for
    monkeypatch.setattr(image_files, "candidates", lambda: ["/nonexistent/python3.11/site-packages"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    try:
        env, cached = read_image_env(tag, use_cache=False)
        assert not cached and env.python == "" and env.cuda_env == "12.4.0" and env.distributions == ()
        assert "no python3 or python on the PATH" in env.notes[0] and "no site directory" in env.notes[0]
    finally:
        remove(tag)


def test_no_image_or_no_engine_is_exit_2_only_when_the_image_was_named(megatron: Path, tmp_path: Path) -> None:
    env = env_with_cache(tmp_path)
    named = depsync("check", str(megatron), "--image", "depsync-test:not-there", env=env)
    assert named.returncode == 2 and "is not on this Docker engine" in named.stderr and len(named.stderr.strip().splitlines()) == 1
    derived = depsync("check", str(megatron), "--image", env=env)  # the FROM, nvcr.io/nvidia/pytorch:25.09-py3, is not here
    assert derived.returncode == 1 and "the image rules did not run" in derived.stderr
    no_engine = {**env, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"}
    named = depsync("check", str(megatron), "--image", "x:1", env=no_engine)
    assert named.returncode == 2 and "no Docker engine answers" in named.stderr and len(named.stderr.strip().splitlines()) == 1
    derived = depsync("check", str(megatron), "--image", env=no_engine)
    assert derived.returncode == 1 and "no Docker engine answers" in derived.stderr and "the image rules did not run" in derived.stderr


@contextmanager
def project_beside_image(tmp_path: Path, tag: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """A project on a local index whose CI Dockerfile builds FROM tag, an image that ships alpha 0.5
    (kept out by the Dockerfile, below the project's alpha>=1.0) and gamma 0.1 (the lock's gamma
    shadows it); the image is removed afterwards. (project, the environment to run depsync in)."""
    import sys

    from conftest import indexed_project

    build(tag, IMAGE, dist_files({"alpha": "0.5", "gamma": "0.1"}))
    try:
        project = indexed_project(tmp_path / "proj")
        (project / "docker").mkdir()
        (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {tag}\nRUN uv sync --locked --no-install-package alpha\n")
        yield project, {**env_with_cache(tmp_path), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    finally:
        remove(tag)


def test_depsync_lock_holds_the_new_lock_against_the_image_it_ran_in(tmp_path: Path) -> None:
    """The docker runner locks in the Dockerfile's FROM; the summary says what the image rules find there."""
    tag = "depsync-test:lock-against-image"
    with project_beside_image(tmp_path, tag) as (project, env):
        summary = tmp_path / "summary.md"
        result = depsync("lock", str(project), "--runner", "docker", "--summary", str(summary), env=env)
        assert result.returncode == 0, result.stderr
        assert f"the lock against {tag} (" in result.stderr
        assert "image-version-mismatch" in result.stderr and "requires alpha>=1.0" in result.stderr  # alpha is kept out; the image's is 0.5
        assert "image-shadowed" in result.stderr and "gamma" in result.stderr  # the lock's gamma over the image's 0.1
        text = summary.read_text()
        assert "### Against the image" in text and "image-version-mismatch" in text


def test_reconcile_holds_its_relock_against_the_image_it_ran_in(tmp_path: Path) -> None:
    """After a sync's relock in the docker runner, what `uv sync` in that image would install over
    (or miss from) what the image ships is in the PR body and the plan, and the run needs review."""
    import subprocess

    from conftest import git

    tag = "depsync-test:reconcile-against-image"
    with project_beside_image(tmp_path, tag) as (project, env):
        assert depsync("lock", str(project), "--runner", "local", env=env).returncode == 0
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-qm", "base")
        git(project, "branch", "dev")
        pyproject = project / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + "\n[tool.ruff]\nline-length = 100\n")  # main changes a key outside the surface
        git(project, "commit", "-qam", "main: ruff")
        git(project, "checkout", "-q", "dev")
        subprocess.run(["git", "-C", str(project), "merge", "-q", "--no-commit", "--no-ff", "main"], check=True, capture_output=True)
        plan, summary = tmp_path / "plan.json", tmp_path / "summary.md"
        result = depsync("reconcile", "--dev", "dev", "--main", "main", "--runner", "docker", "--plan-json", str(plan), "--summary", str(summary), cwd=project, env=env)
        assert result.returncode == 1, result.stderr  # the image findings need a reviewer
        document = json.loads(plan.read_text())
        rules = {f["rule"] for f in document["findings"]}
        assert {"image-version-mismatch", "image-shadowed"} <= rules
        assert document["lock"]["state"] == "relocked" and f"held against {tag}" in document["lock"]["note"]
        assert "image-shadowed" in summary.read_text()


def test_a_python_that_does_not_run_is_said_and_the_files_are_read(megatron: Path, tmp_path: Path) -> None:
    tag = "depsync-test:python-not-executable"
    # executable, but no program the kernel runs ("exec format error")
    build(tag, IMAGE, {"/usr/local/bin/python3": ("exec", "\x7fELF garbage"), "/usr/local/bin/python": ("exec", "\x7fELF garbage"), **dist_files({"torch": "2.5.1"})})
    try:
        result = depsync("check", str(megatron), "--image", tag, "--format", "json", "--no-cache", env=env_with_cache(tmp_path))
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        assert "python3 failed (" in result.stderr and "read from its files" in result.stderr
        assert json.loads(result.stdout)["image"]["distributions"] == 1
    finally:
        remove(tag)
