"""Shared test helpers: paths to the real Megatron-LM data, project and git repo builders."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, build_find_links, build_local_material, run_uv

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEPSYNC_SHARED", REPO.parent / "shared"))
MEGATRON = SHARED / "fixtures" / "megatron-lm"
BUNDLED = REPO / "fixtures"
IMAGE = os.environ.get("DEPSYNC_TEST_IMAGE", "depsync-test:bookworm")  # containers/setup-engine.sh
SLOW_IMAGE = "depsync-test:slow-uv"


# The suite's own git identity and config: no test may depend on the developer's ~/.gitconfig
# (a CI container or a new laptop has none; .ci/run runs the suite with an empty HOME).
TEST_GITCONFIG = """[user]
	name = depsync tests
	email = tests@depsync.invalid
[init]
	defaultBranch = main
[advice]
	detachedHead = false
"""


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Every test (and every depsync, git, uv and docker it starts) sees a HOME, a git config and
    a cache of the suite's own, never the developer's ~/.gitconfig, ~/.docker or ~/.cache/depsync:
    one per session, so uv binaries and git mirrors are fetched once per run. A test that needs
    a cold cache sets XDG_CACHE_HOME itself."""
    home = tmp_path_factory.mktemp("home")
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(TEST_GITCONFIG)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        patch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_DIR", "GIT_WORK_TREE"):
            patch.delenv(name, raising=False)
        yield


# DESIGN.md, "Current real snapshot": the three-way case of each source in the Megatron data
MEGATRON_SOURCE_CASES = {
    "flash_mla": "unchanged",
    "fast-hadamard-transform": "unchanged",
    "emerging_optimizers": "same-change",
    "nvidia-cudnn-frontend": "dev-added",
    "mamba-ssm": "dev-removed",
    "nemo-run": "main-changed",
    "deep_gemm": "main-added",
    "nemo-lens": "main-added",
    "torch-memory-saver": "main-added",
    "transformer-engine": "conflict",
}


def megatron(side: str, name: str) -> str:
    path = MEGATRON / side / name
    if not path.exists():
        pytest.skip(f"real Megatron-LM data not found at {MEGATRON}")
    return path.read_text()


def git(repo: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.invalid",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.invalid",
    )
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return result.stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def megatron_history(repo: Path) -> Path:
    """A repository whose base, dev and main commits carry the real Megatron-LM pyproject.toml and
    uv.lock of those refs, checked out on a sync branch made from dev (tests and bench/)."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def commit(side: str, owners: str, message: str) -> None:
        for name in ("pyproject.toml", "uv.lock"):
            shutil.copy(MEGATRON / side / name, repo / name)
            (repo / name).chmod(0o644)  # the shared fixtures may be read-only
        write_files(repo, {".github/CODEOWNERS": owners})
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", message)

    commit("base", "* @owners\n", "base")
    git(repo, "checkout", "-q", "-b", "dev")
    commit("dev", "* @owners\n", "dev: TE f031cf87, cudnn-frontend from git, mamba-ssm from PyPI")
    git(repo, "checkout", "-q", "main")
    commit("main", "* @main-owners\n", "main: TE 4329ff84, nemo-run moved, new sources")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    return repo


@pytest.fixture
def megatron_dev_project(tmp_path: Path) -> Path:
    """A copy of the bundled Megatron dev triple (real pyproject + lock, Dockerfile as documented)."""
    target = tmp_path / "megatron"
    shutil.copytree(BUNDLED / "megatron-dev", target)
    return target


def warnings_only(project: Path) -> Path:
    """The bundled Megatron dev triple with its only errors (the CUDA 12 `--no-install-package`
    flags the CUDA 13 lock renamed) made warnings in [tool.depsync]: for tests of exit 0."""
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.depsync]\nseverity = { docker-no-install-renamed = "warning" }\n')
    return project


def indexed_project(root: Path, dependencies: str = '"alpha>=1.0", "gamma"', tables: str = "") -> Path:
    """A project whose package index (a flat wheel directory) lives inside it: a container sees
    only the project, so the docker tests need the index there."""
    root.mkdir()
    build_find_links(root / "wheels")
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "proj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = [{dependencies}]\n\n'
        f"{tables}"
        '[[tool.uv.index]]\nname = "local"\nurl = "wheels"\nformat = "flat"\ndefault = true\n'
    )
    return root


def init_repo(path: Path, files: dict[str, str], branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    write_files(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "initial")
    return path


# -- real uv material and a small repository with base, dev and main -------------------------

@pytest.fixture(scope="session")
def material(tmp_path_factory: pytest.TempPathFactory) -> LocalMaterial:
    """Wheels, a second index, a file:// git repository and a uv cache, built once per session."""
    return build_local_material(tmp_path_factory.mktemp("material"))


def small_pyproject(material: LocalMaterial, *, zeta: str, eta: str, extra_sources: str = "", extra_deps: str = "", metadata: str = "") -> str:
    url = material.git.url
    return (
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f'dependencies = ["alpha", "zeta"{extra_deps}]\n\n'
        '[project.optional-dependencies]\ntools = ["eta"]\n\n'
        "# sources: keep this comment\n"
        "[tool.uv.sources]\n"
        f'zeta = {{ git = "{url}", rev = "{zeta}" }}\n'
        f'eta = {{ git = "{url}", subdirectory = "sub/eta", rev = "{eta}" }}\n'
        f"{extra_sources}"
        f"{metadata}"
        f"{material.index_toml()}"
    )


def uv_lock(repo: Path, material: LocalMaterial) -> None:
    result = run_uv(["lock", "--offline"], repo, material.env)
    assert result.returncode == 0, result.describe()


@pytest.fixture
def small_repo(tmp_path: Path, material: LocalMaterial) -> Path:
    """base: zeta@c1, eta@c1. dev: eta@c3 (dev changed). main: zeta@c2 (main changed), an inert source added, CODEOWNERS changed."""
    c = material.git.commits
    repo = tmp_path / "app"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"pyproject.toml": small_pyproject(material, zeta=c["c1"], eta=c["c1"]), ".github/CODEOWNERS": "* @dev-team\n"})
    uv_lock(repo, material)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-q", "-b", "dev")
    write_files(repo, {"pyproject.toml": small_pyproject(material, zeta=c["c1"], eta=c["c3"], extra_deps=', "delta"')})
    uv_lock(repo, material)
    git(repo, "commit", "-qam", "dev: eta from the feature branch, delta")
    git(repo, "checkout", "-q", "main")
    inert = f'foo-bar = {{ git = "{material.git.url}", rev = "{c["c1"]}" }}\n'
    write_files(repo, {"pyproject.toml": small_pyproject(material, zeta=c["c2"], eta=c["c1"], extra_sources=inert), ".github/CODEOWNERS": "* @main-team\n"})
    uv_lock(repo, material)
    git(repo, "commit", "-qam", "main: zeta 1.1, foo-bar source")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    return repo


def env_for(material: LocalMaterial) -> dict[str, str]:
    return dict(os.environ, **material.env)


# -- the Docker engine and test images --------------------------------------------------------

@pytest.fixture(scope="session")
def engine():  # type: ignore[no-untyped-def]
    import docker

    try:
        client = docker.from_env(timeout=60)
        client.ping()
        client.images.get(IMAGE)
    except Exception as exc:  # the engine is part of the test environment: its absence is a failure
        pytest.fail(f"no Docker engine or no {IMAGE} image ({exc}); run containers/setup-engine.sh first")
    return client


@pytest.fixture(scope="session")
def slow_image(engine, tmp_path_factory: pytest.TempPathFactory) -> str:  # type: ignore[no-untyped-def]
    """The test image with a uv that sleeps before `lock`, to interrupt a run that is under way."""
    context = tmp_path_factory.mktemp("slow-uv")
    (context / "Dockerfile").write_text(
        f"FROM {IMAGE}\n"
        "RUN mv /usr/local/bin/uv /usr/local/bin/uv.real && "
        "printf '#!/bin/sh\\ncase \"$1\" in lock) echo sleeping >&2; sleep 60;; esac\\nexec /usr/local/bin/uv.real \"$@\"\\n' > /usr/local/bin/uv && "
        "chmod 755 /usr/local/bin/uv\n"
    )
    engine.images.build(path=str(context), tag=SLOW_IMAGE, rm=True)
    return SLOW_IMAGE


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs the engine is marked `docker` (select or skip them with -m), whether
    it says so itself or only through a fixture that uses the engine."""
    for item in items:
        if {"engine", "slow_image"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session", autouse=True)
def no_cache_volumes_left_behind():  # type: ignore[no-untyped-def]
    """Each temp checkout a test locks gets its own uv cache volume (one per checkout and uid):
    the ones this session made are removed at its end, the engine's others are left alone."""
    def volumes() -> set[str]:
        try:
            listed = subprocess.run(["docker", "volume", "ls", "-q", "--filter", "name=depsync-uv-cache-"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return set()
        return set(listed.stdout.split()) if listed.returncode == 0 else set()

    before = volumes()
    yield
    made = sorted(volumes() - before)
    if made:
        subprocess.run(["docker", "volume", "rm", "-f", *made], capture_output=True, timeout=120)
