"""With no `dockerfiles` configured, `check` finds the project's Dockerfiles that run uv on it.

Real inputs: Megatron-LM dev's pyproject.toml and uv.lock (../shared/fixtures), the bundled
dev CI Dockerfile, and public Dockerfiles of tests/corpus_dockerfiles. The LTS Dockerfile is
written after the fixture README's description of main's `uv sync` (the real file is not in
the fixture): `--extra ${IMAGE_TYPE} --extra mlm --extra ssm --extra te ${FLASH_MLA_GROUP}`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUNDLED, MEGATRON, git, warnings_only

from depsync.core.dockerfile_discovery import decide, owning_project
from depsync.core.model.dockerfile import Dockerfile
from depsync.shell.dockerfile_scan import scan

CORPUS = Path(__file__).parents[1] / "corpus_dockerfiles"

LTS = """\
# syntax=docker/dockerfile:1.3-labs
ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:24.01-py3
FROM ${FROM_IMAGE_NAME} AS main
ARG UV_VERSION=0.7.2
RUN pip install --no-cache-dir uv==${UV_VERSION}
COPY README.md pyproject.toml uv.lock /workspace/
ARG IMAGE_TYPE=lts
RUN --mount=type=cache,target=/root/.cache/uv \\
    bash -ex <<"EOF"
    if [[ "$IMAGE_TYPE" != "lts" ]]; then
        FLASH_MLA_GROUP="--group no_pypi_wheels"
    fi
    uv sync \\
        --extra ${IMAGE_TYPE} \\
        --extra mlm \\
        --extra ssm \\
        --extra te \\
        ${FLASH_MLA_GROUP} \\
        --link-mode copy \\
        --locked \\
        --no-install-package torch
EOF
"""


def depsync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def megatron_dev(tmp_path: Path) -> Path:
    """Megatron-LM dev's real pyproject.toml and uv.lock, the bundled dev CI Dockerfile and the LTS one."""
    if not (MEGATRON / "dev" / "uv.lock").exists():
        pytest.skip("real Megatron-LM data not found")
    project = tmp_path / "megatron"
    (project / "docker").mkdir(parents=True)
    for name in ("pyproject.toml", "uv.lock"):
        shutil.copy(MEGATRON / "dev" / name, project / name)
        (project / name).chmod(0o644)
    shutil.copy(BUNDLED / "megatron-dev" / "docker" / "Dockerfile.ci.dev", project / "docker" / "Dockerfile.ci.dev")
    (project / "docker" / "Dockerfile.ci.lts").write_text(LTS)
    return warnings_only(project)  # the dev Dockerfile's renamed CUDA flags: warnings here, tested elsewhere


def findings(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return json.loads(result.stdout)["findings"]  # type: ignore[no-any-return]


# -- pure --------------------------------------------------------------------------------------------


def test_a_dockerfile_below_another_pyproject_is_that_projects() -> None:
    projects = ("tools/bench/pyproject.toml",)
    assert owning_project("tools/bench/Dockerfile", projects) == "tools/bench/pyproject.toml"
    assert owning_project("tools/bench/docker/Dockerfile", projects) == "tools/bench/pyproject.toml"
    assert owning_project("tools/Dockerfile", projects) is None
    assert owning_project("Dockerfile", projects) is None


def test_decide_says_why_each_candidate_is_left_out() -> None:
    uses_uv = Dockerfile.from_text("FROM python\nRUN uv sync --locked\n", "Dockerfile")
    no_uv = Dockerfile.from_text("FROM python\nRUN pip install -r requirements.txt\n", "docker/Dockerfile.docs")
    other_pip = Dockerfile.from_text("FROM python\nRUN uv pip install --system ruff\n", "Dockerfile.lint")
    own_pip = Dockerfile.from_text("FROM python\nRUN uv pip install --system -e .\n", "Dockerfile.pip")
    found = decide(
        ("Dockerfile", "Dockerfile.lint", "Dockerfile.pip", "docker/Dockerfile.docs", "docker/broken.Dockerfile", "sub/Dockerfile"),
        ("sub/pyproject.toml",),
        {"Dockerfile": uses_uv, "Dockerfile.lint": other_pip, "Dockerfile.pip": own_pip, "docker/Dockerfile.docs": no_uv,
         "docker/broken.Dockerfile": "not read: Dockerfile does not parse"},
    )
    assert [d.path for d in found.checked] == ["Dockerfile", "Dockerfile.pip"]
    assert dict(found.skipped) == {
        "Dockerfile.lint": "runs no uv command on this project",
        "docker/Dockerfile.docs": "runs no uv command on this project",
        "docker/broken.Dockerfile": "not read: Dockerfile does not parse",
        "sub/Dockerfile": "belongs to the project of sub/pyproject.toml",
    }


def test_scan_is_bounded_and_follows_no_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "docker").mkdir(parents=True)
    (outside / "docker" / "Dockerfile").write_text("FROM x\n")
    root = tmp_path / "p"
    for path in ("Dockerfile", "docker/Dockerfile.ci.dev", "ci/gpu.Dockerfile", ".devcontainer/Dockerfile",
                 "a/b/c/Dockerfile", "a/b/c/d/Dockerfile", ".venv/lib/Dockerfile", "node_modules/x/Dockerfile",
                 ".hidden/Dockerfile", "sub/pyproject.toml", "docker/README.md"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text("FROM x\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)  # a directory link: not entered
    candidates, projects, truncated = scan(str(root))
    assert candidates == (".devcontainer/Dockerfile", "Dockerfile", "a/b/c/Dockerfile", "ci/gpu.Dockerfile", "docker/Dockerfile.ci.dev")
    assert projects == ("sub/pyproject.toml",) and not truncated


# -- real inputs, the command ------------------------------------------------------------------------


def test_megatron_dev_lts_dockerfile_is_checked(megatron_dev: Path) -> None:
    """The 2 real errors missed when only docker/Dockerfile.ci.dev was read."""
    result = depsync("check", str(megatron_dev), "--no-cache", "--format", "json")
    assert result.returncode == 1, result.stderr
    errors = [(f["file"], f["line"], f["rule"]) for f in findings(result) if f["severity"] == "error"]
    assert errors == [("docker/Dockerfile.ci.lts", 16, "docker-unknown-extra"), ("docker/Dockerfile.ci.lts", 17, "docker-unknown-extra")]
    human = depsync("check", str(megatron_dev), "--no-cache", "-v")
    assert human.stdout.splitlines()[-1].endswith("; checked 2 Dockerfiles"), human.stdout
    assert "Dockerfiles checked (found in the project): docker/Dockerfile.ci.dev, docker/Dockerfile.ci.lts" in human.stderr


def test_configured_dockerfiles_are_the_only_ones(megatron_dev: Path) -> None:
    result = depsync("check", str(megatron_dev), "--no-cache", "--dockerfile", "docker/Dockerfile.ci.dev")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1].endswith("; checked 1 Dockerfile")


def test_the_cache_sees_a_dockerfile_added_later(megatron_dev: Path, tmp_path: Path) -> None:
    lts = megatron_dev / "docker" / "Dockerfile.ci.lts"
    lts.unlink()
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = subprocess.run([sys.executable, "-m", "depsync", "check", str(megatron_dev)], capture_output=True, text=True, env=env)
    again = subprocess.run([sys.executable, "-m", "depsync", "check", str(megatron_dev)], capture_output=True, text=True, env=env)
    assert first.returncode == again.returncode == 0 and first.stdout == again.stdout
    lts.write_text(LTS)
    after = subprocess.run([sys.executable, "-m", "depsync", "check", str(megatron_dev)], capture_output=True, text=True, env=env)
    assert after.returncode == 1 and "docker/Dockerfile.ci.lts:16 error docker-unknown-extra" in after.stdout
    lts.unlink()
    (megatron_dev / ".devcontainer").mkdir()
    (megatron_dev / ".devcontainer" / "Dockerfile").write_text(LTS)
    moved = subprocess.run([sys.executable, "-m", "depsync", "check", str(megatron_dev)], capture_output=True, text=True, env=env)
    assert moved.returncode == 1 and ".devcontainer/Dockerfile:16 error docker-unknown-extra" in moved.stdout


def test_discovery_at_a_ref_reads_the_tree_of_that_commit(megatron_dev: Path) -> None:
    git(megatron_dev, "init", "-q", "-b", "dev")
    git(megatron_dev, "add", "-A")
    git(megatron_dev, "commit", "-qm", "dev")
    (megatron_dev / "docker" / "Dockerfile.ci.lts").unlink()  # gone from the work tree, still at HEAD
    result = depsync("check", str(megatron_dev), "--ref", "HEAD", "--no-cache", "--format", "json")
    assert {f["file"] for f in findings(result) if f["severity"] == "error"} == {"docker/Dockerfile.ci.lts"}


def test_a_nested_project_and_a_linked_copy_are_not_checked_twice(megatron_dev: Path) -> None:
    (megatron_dev / "tools" / "bench").mkdir(parents=True)
    (megatron_dev / "tools" / "bench" / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    (megatron_dev / "tools" / "bench" / "Dockerfile").write_text("FROM python\nRUN uv sync --locked --extra gpu\n")
    (megatron_dev / "Dockerfile").symlink_to("docker/Dockerfile.ci.lts")
    result = depsync("check", str(megatron_dev), "--no-cache", "-v")
    assert "Dockerfile not checked: tools/bench/Dockerfile: belongs to the project of tools/bench/pyproject.toml" in result.stderr
    assert "Dockerfile not checked: docker/Dockerfile.ci.lts: the same file as Dockerfile" in result.stderr
    assert result.stdout.count("error docker-unknown-extra") == 2


@pytest.mark.parametrize(
    ("corpus_file", "place"),
    [
        ("uv-docker-example-multistage.Dockerfile", "Dockerfile"),
        ("leafmine-signature.Dockerfile", "docker/app.Dockerfile"),
        ("tools-sync-action.Dockerfile", ".devcontainer/Dockerfile"),
        ("base-python-project.Dockerfile", "Dockerfile.dev"),
    ],
)
def test_real_public_dockerfiles_are_found(tmp_path: Path, corpus_file: str, place: str) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n')
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=project, check=True, capture_output=True)
    (project / place).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(CORPUS / corpus_file, project / place)
    result = depsync("check", str(project), "--no-cache", "-v")
    assert f"Dockerfiles checked (found in the project): {place}" in result.stderr, result.stderr


def test_a_buildkit_secret_is_not_unresolved(tmp_path: Path) -> None:
    """Never advise passing a secret as a build arg (it would land in the image's history)."""
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n')
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=project, check=True, capture_output=True)
    (project / "Dockerfile").write_text(
        "FROM python:3.12\n"
        "RUN --mount=type=secret,id=token,env=UV_TOKEN --mount=type=secret,id=flags,target=/tmp/flags \\\n"
        '    uv sync --locked --index "https://x:$UV_TOKEN@example.invalid/simple" $(cat /run/secrets/netrc) $(cat /tmp/flags)\n'
        "RUN --mount=type=secret,id=extra,env=EXTRA uv sync --locked --extra ${EXTRA}\n"
        "RUN uv sync --locked $(cat /etc/flags)\n"
    )
    result = depsync("check", str(project), "--no-cache", "--format", "json")
    unresolved = [f for f in findings(result) if f["rule"] == "docker-unresolved"]
    assert [(f["line"], f["severity"]) for f in unresolved] == [(4, "info"), (5, "warning")], unresolved
    assert "BuildKit secret" in str(unresolved[0]["message"]) and "build-arg" not in str(unresolved[0]["fix"])


def test_a_discovery_that_reaches_its_bound_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree past the scan's bound of directory entries (a hostile main adds 20,001 files
    sorted before docker/): the check warns that Dockerfiles past it were not checked, never a
    silent "consistent"."""
    from depsync.core.rules.unparsed import check as unparsed_check
    from depsync.shell import dockerfile_scan
    from depsync.shell.workspace import load_inputs

    root = tmp_path / "app"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "1"\n')
    (root / "uv.lock").write_text('version = 1\nrequires-python = ">=3.11"\n')
    for i in range(8):
        (root / f"a{i:02}.txt").write_text("x")
    (root / "z").mkdir()
    (root / "z" / "Dockerfile").write_text("FROM debian\nRUN uv sync --extra nope\n")
    monkeypatch.setattr(dockerfile_scan, "MAX_ENTRIES", 5)
    inputs = load_inputs(root)
    (finding,) = list(unparsed_check(inputs))
    assert finding.rule == "docker-unparsed" and "stopped after 5 directory entries" in finding.message
    assert "[tool.depsync] dockerfiles" in finding.fix
