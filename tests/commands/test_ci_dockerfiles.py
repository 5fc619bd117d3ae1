"""One set of CI Dockerfiles for check, lock, reconcile and guard: configured, else discovered.

`depsync lock` relocked with the host's uv while `check --deep` used the uv the Dockerfile copies
(`COPY --from=ghcr.io/astral-sh/uv:0.8.6 /uv /bin/`), and said nothing; reconcile kept main's
Dockerfile silently when none was configured. Real inputs: real git histories, real uv (offline,
local wheel indexes; uv 0.8.6 is the real binary from the uv wheel, fetched once into the
session's cache), a real Docker engine for the image test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import (
    IMAGE,
    env_for,
    git,
    indexed_project,
    init_repo,
    small_pyproject,
    uv_lock,
)
from uvprojects import LocalMaterial

from depsync.core.config import Config

CI = "docker/ci.Dockerfile"  # not Megatron's path: found, not configured
DOCKERFILE = "FROM python:3.12-slim\nCOPY --from=ghcr.io/astral-sh/uv:0.8.6 /uv /bin/\nCOPY . /app\nWORKDIR /app\nRUN uv sync --locked\n"


def depsync(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args, str(root)] if args[0] in ("lock", "check") else [sys.executable, "-m", "depsync", *args],
                          cwd=root, capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = indexed_project(tmp_path / "proj")
    (root / "docker").mkdir()
    (root / CI).write_text(DOCKERFILE)
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=root, check=True, capture_output=True)
    return root


def test_the_default_is_discovery_not_megatrons_path() -> None:
    assert Config().dockerfiles == () and not Config().dockerfiles_configured


def test_lock_relocks_with_the_uv_the_discovered_dockerfile_pins_and_says_which(project: Path) -> None:
    result = depsync(project, "lock", "--runner", "local")
    assert result.returncode == 0, result.stderr
    assert (
        f"depsync: CI Dockerfile: {CI}, discovered: it runs `uv sync` on the project at line 5; "
        "it pins uv 0.8.6 (COPY --from=ghcr.io/astral-sh/uv, line 2)"
    ) in result.stderr.splitlines()
    assert "depsync: uv 0.8.6 via local runner (--runner local)" in result.stderr
    # check reads the same Dockerfile: the same one file, the same pin
    verbose = depsync(project, "check", "--no-cache", "-v")
    assert f"Dockerfiles checked (found in the project): {CI}" in verbose.stderr


def test_a_configured_dockerfile_is_said_as_configured(project: Path) -> None:
    (project / "other.Dockerfile").write_text("FROM python:3.12-slim\nARG UV_VERSION=0.13.9\nRUN pip install uv==${UV_VERSION} && uv sync --locked\n")
    with (project / "pyproject.toml").open("a") as file:
        file.write('\n[tool.depsync]\ndockerfiles = ["other.Dockerfile"]\n')
    result = depsync(project, "lock", "--runner", "local")
    assert result.returncode == 0, result.stderr
    assert "depsync: CI Dockerfile: other.Dockerfile, configured in [tool.depsync] dockerfiles; it pins uv 0.13.9 (ARG UV_VERSION, line 2)" in result.stderr
    assert "depsync: uv 0.13.9 via local runner" in result.stderr


def test_lock_without_a_ci_dockerfile_says_so(tmp_path: Path) -> None:
    root = indexed_project(tmp_path / "plain")
    result = depsync(root, "lock", "--runner", "local", "-v")
    assert result.returncode == 0, result.stderr
    assert "depsync: CI Dockerfile: none (no Dockerfile in the project runs uv on it)" in result.stderr  # -v: nothing to say otherwise
    assert "CI Dockerfile" not in depsync(root, "lock", "--runner", "local").stderr


@pytest.mark.docker
def test_the_docker_runner_takes_the_image_of_the_discovered_dockerfile(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = indexed_project(tmp_path / "image")
    (root / "docker").mkdir()
    (root / CI).write_text(f"FROM {IMAGE}\nARG UV_VERSION=0.13.9\nCOPY . /app\nRUN uv sync --locked\n")
    result = depsync(root, "lock", "--runner", "docker")
    assert result.returncode == 0, result.stderr
    assert f"depsync: CI Dockerfile: {CI}, discovered: it runs `uv sync` on the project at line 4; it pins uv 0.13.9 (ARG UV_VERSION, line 2)" in result.stderr
    assert f"docker runner, image {IMAGE} (the Dockerfile's FROM)" in result.stderr


# -- reconcile and guard: a discovered CI Dockerfile is dev's, like the triple --------------------------


def _dockerfile(*extra: str) -> str:
    return "FROM python:3.12-slim\nARG UV_VERSION=0.13.9\nRUN pip install uv==${UV_VERSION}\nCOPY . /app\n" + "".join(extra) + "RUN uv sync --locked\n"


@pytest.fixture
def history(tmp_path: Path, material: LocalMaterial) -> Path:
    """base: the CI Dockerfile; dev adds a label at its end; main adds two steps and drops one:
    git merges both cleanly, so without depsync main's steps land in dev's image silently."""
    c = material.git.commits
    pyproject = small_pyproject(material, zeta=c["c1"], eta=c["c1"])
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject, CI: _dockerfile() + "LABEL stage=base\n"})
    uv_lock(repo, material)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "lock")
    git(repo, "checkout", "-q", "-b", "dev")
    (repo / CI).write_text(_dockerfile() + "LABEL stage=dev\n")
    git(repo, "commit", "-qam", "dev: its label")
    git(repo, "checkout", "-q", "main")
    main = _dockerfile("RUN apt-get update\n", "RUN apt-get install -y git\n").replace("COPY . /app\n", "COPY src /app/src\n") + "LABEL stage=base\n"
    (repo / CI).write_text(main)
    git(repo, "commit", "-qam", "main: its image steps")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    merged = subprocess.run(["git", "merge", "--no-commit", "--no-ff", "main"], cwd=repo, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr  # a clean text merge: main's steps are in the work tree
    assert "apt-get install" in (repo / CI).read_text()
    return repo


def test_reconcile_keeps_devs_discovered_dockerfile_and_lists_mains_change(history: Path, material: LocalMaterial, tmp_path: Path) -> None:
    plan, summary = tmp_path / "plan.json", tmp_path / "summary.md"
    result = depsync(history, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan), "--summary", str(summary), env=env_for(material))
    assert result.returncode in (0, 1), result.stderr
    assert (history / CI).read_text() == _dockerfile() + "LABEL stage=dev\n"  # dev's, not the text merge
    (entry,) = json.loads(plan.read_text())["ci_dockerfiles"]
    assert entry == {"path": CI, "how": "discovered", "main_changed": True, "added": 3, "removed": 1, "main_deleted": False, "main_added": False}
    text = summary.read_text()
    assert "### CI Dockerfiles (dev's kept, like the triple)" in text
    base = git(history, "rev-parse", "--short=10", "main~1")
    main = git(history, "rev-parse", "--short=10", "main")
    assert (
        f"- `{CI}` (CI Dockerfile, discovered): main changed it since the merge-base (+3 -1 lines); dev's version is kept, "
        f"review main's change: `git diff {base} {main} -- {CI}`"
    ) in text


def test_guard_holds_a_discovered_dockerfile_to_devs(history: Path, material: LocalMaterial) -> None:
    env = env_for(material)
    assert depsync(history, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", env=env).returncode in (0, 1)
    git(history, "commit", "-qm", "sync: main into dev")
    assert depsync(history, "guard", "--dev", "dev", env=env).returncode == 0
    (history / CI).write_text(git(history, "show", f"main:{CI}") + "\n")
    git(history, "commit", "-qam", "main's Dockerfile after all")
    git(history, "reset", "-q", "--soft", "HEAD~2")
    git(history, "commit", "-qm", "sync (bad)")
    bad = depsync(history, "guard", "--dev", "dev", "--main", "main", env=env)
    assert bad.returncode == 1, bad.stderr
    assert f"{CI}: differs from dev" in bad.stderr and "a CI Dockerfile (discovered), dev's like the triple" in bad.stderr


def test_check_at_a_ref_discovers_the_same_set(project: Path) -> None:
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "all")
    at_ref = depsync(project, "check", "--no-cache", "--ref", "HEAD", "-v")
    here = depsync(project, "check", "--no-cache", "-v")
    assert f"Dockerfiles checked (found in the project): {CI}" in at_ref.stderr and f"Dockerfiles checked (found in the project): {CI}" in here.stderr


def test_a_ci_dockerfile_main_added_is_listed_and_left_as_main_wrote_it(history: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """dev has no version to keep: the merge's file stays, and the PR body says so."""
    subprocess.run(["git", "merge", "--abort"], cwd=history, check=True)
    git(history, "checkout", "-q", "main")
    (history / "Containerfile").write_text("FROM python:3.12-slim\nCOPY . /app\nRUN uv sync --locked --extra gpu\n")
    git(history, "add", "Containerfile")
    git(history, "commit", "-qm", "main: a second CI image")
    git(history, "checkout", "-q", "sync")
    assert subprocess.run(["git", "merge", "--no-commit", "--no-ff", "main"], cwd=history, capture_output=True).returncode == 0
    plan, summary = tmp_path / "plan.json", tmp_path / "summary.md"
    result = depsync(history, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan), "--summary", str(summary), env=env_for(material))
    assert result.returncode in (0, 1), result.stderr
    assert (history / "Containerfile").is_file()
    added = [e for e in json.loads(plan.read_text())["ci_dockerfiles"] if e["path"] == "Containerfile"]
    assert added == [{"path": "Containerfile", "how": "discovered", "main_changed": True, "added": 3, "removed": 0, "main_deleted": False, "main_added": True}]
    assert "- `Containerfile` (CI Dockerfile, discovered on main): main added it (3 lines) and dev has none" in summary.read_text()
    # the closing check read it: its `--extra gpu` is not in the reconciled pyproject
    assert any(f["rule"] == "docker-unknown-extra" and f["file"] == "Containerfile" for f in json.loads(plan.read_text())["findings"])


CORPUS = Path(__file__).resolve().parents[1] / "corpus_dockerfiles"
# each real Dockerfile of tests/corpus_dockerfiles: the uv command that makes it a CI Dockerfile, and its uv pin
REAL = {
    "base-python-project.Dockerfile": ("uv pip install", 12, None),
    "fastapi-project-template.Dockerfile": ("uv sync", 14, None),
    "leafmine-signature.Dockerfile": ("uv sync", 11, None),
    "tools-sync-action.Dockerfile": ("uv sync", 13, "0.11.25 (FROM ghcr.io/astral-sh/uv, line 1)"),
    "uv-docker-example-multistage.Dockerfile": ("uv sync", 18, None),
    "vllm-excerpt.Dockerfile": ("uv pip install", 74, None),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_every_real_ci_dockerfile_is_the_one_lock_names(tmp_path: Path, name: str) -> None:
    from depsync.shell.ci_dockerfiles import ci_dockerfiles
    from depsync.shell.reader import FileReader

    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / name).write_bytes((CORPUS / name).read_bytes())
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n')
    command, line, pin = REAL[name]
    pins = f"it pins uv {pin}" if pin else "it pins no uv version"
    described = ci_dockerfiles(FileReader(tmp_path), Config()).describe_lock()
    assert described == f"CI Dockerfile: docker/{name}, discovered: it runs `{command}` on the project at line {line}; {pins}"
