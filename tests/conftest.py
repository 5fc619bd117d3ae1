"""Shared test helpers: paths to the real Megatron-LM data, project and git repo builders."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEPSYNC_SHARED", REPO.parent / "shared"))
MEGATRON = SHARED / "fixtures" / "megatron-lm"
BUNDLED = REPO / "fixtures"


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


@pytest.fixture
def megatron_dev_project(tmp_path: Path) -> Path:
    """A copy of the bundled Megatron dev triple (real pyproject + lock, Dockerfile as documented)."""
    target = tmp_path / "megatron"
    shutil.copytree(BUNDLED / "megatron-dev", target)
    return target


def init_repo(path: Path, files: dict[str, str], branch: str = "main") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    write_files(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "initial")
    return path
