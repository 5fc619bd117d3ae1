"""TAB-completing a ref never runs a ref name (bash, zsh, fish).

A branch named `x$(touch${IFS}F)` is a valid git ref; `compgen -W "$(git for-each-ref)"`
expanded it and ran `touch`. Each shell completes `--ref` in a real repository holding
hostile names; no marker file may appear, and the names are offered as they are.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import git, init_repo
from test_cli_help import ZSH_CAPTURE, _bash_complete, depsync

HOSTILE = ["x$(touch${IFS}F1)", "y`touch${IFS}F2`", "z;touch${IFS}F3", "w'$(touch${IFS}F4)'"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", {"pyproject.toml": '[project]\nname = "p"\nversion = "1"\n'})
    for name in HOSTILE:
        git(root, "branch", name)
    return root


def markers(repo: Path) -> list[str]:
    return sorted(p.name for p in repo.rglob("F*"))


def test_bash_offers_hostile_refs_as_words_and_runs_none(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "depsync.bash"
    path.write_text(depsync("completion", "bash").stdout)
    offered = _bash_complete(path, ["depsync", "check", "--ref", ""], repo)
    assert markers(repo) == []
    assert set(HOSTILE) <= set(offered) and "main" in offered
    assert _bash_complete(path, ["depsync", "check", "--ref", "x"], repo) == [HOSTILE[0]]
    assert markers(repo) == []


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_runs_no_ref_name(repo: Path, tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_depsync").write_text(depsync("completion", "zsh").stdout)
    capture = tmp_path / "capture.zsh"
    capture.write_text(ZSH_CAPTURE)
    result = subprocess.run(["zsh", "-f", str(capture), str(functions), "depsync check --ref "], capture_output=True, text=True, timeout=60, cwd=repo)
    assert markers(repo) == []
    assert "main" in result.stdout.split()


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)")
def test_fish_runs_no_ref_name(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "depsync.fish"
    path.write_text(depsync("completion", "fish").stdout)
    result = subprocess.run(["fish", "--no-config", "-c", f"source {path}; complete -C 'depsync check --ref '"], capture_output=True, text=True, timeout=60, cwd=repo)
    assert markers(repo) == []
    offered = {line.split("\t")[0] for line in result.stdout.splitlines()}
    assert set(HOSTILE) <= offered
