"""Two `depsync reconcile` runs on one work tree: the second is refused (exit 2, the first's pid)
and changes nothing; a run that fails restores only what it wrote itself. Real processes, real
git and uv; the first run is held at a named point (depsync/shell/faults.py `wait=FILE`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import env_for, git
from uvprojects import LocalMaterial

WATCHED = ("pyproject.toml", "uv.lock", ".github/CODEOWNERS")


def _files(repo: Path) -> dict[str, bytes | None]:
    return {p: (repo / p).read_bytes() if (repo / p).exists() else None for p in WATCHED}


def _start(repo: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "depsync", "reconcile", "--dev", "dev", "--no-fetch", "--no-lock", str(repo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=repo)


def _reached(gate: Path, first: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while not Path(f"{gate}.reached").exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture
def merging(small_repo: Path) -> Path:
    subprocess.run(["git", "-C", str(small_repo), "merge", "-q", "main"], capture_output=True)
    return small_repo


def test_a_second_reconcile_on_the_work_tree_is_refused_and_changes_nothing(merging: Path, material: LocalMaterial, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    first = _start(merging, dict(env_for(material), DEPSYNC_FAULT=f"reconcile:after-write:wait={gate}"))
    _reached(gate, first)  # the first has written dev's files and holds the work tree
    written = _files(merging)
    second = _start(merging, env_for(material))
    _, err = second.communicate(timeout=120)
    assert second.returncode == 2 and err.strip().splitlines()[-1] == (
        f"depsync: error: another depsync reconcile is running on this work tree (pid {first.pid}): wait for it to finish, then run again")
    assert "Traceback" not in err and _files(merging) == written
    gate.write_text("go")
    out, err = first.communicate(timeout=300)
    assert first.returncode in (0, 1), out + err
    assert (merging / ".github/CODEOWNERS").read_text() == "* @dev-team\n"
    again = _start(merging, env_for(material))  # the lock went with the run
    out, err = again.communicate(timeout=300)
    assert again.returncode in (0, 1), out + err


def test_a_failed_reconcile_restores_only_what_it_wrote(merging: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """While the first run is past its writes, someone else writes CODEOWNERS; the first then
    fails: its other files go back, the other writer's CODEOWNERS stays."""
    before = _files(merging)
    gate = tmp_path / "gate"
    first = _start(merging, dict(env_for(material), DEPSYNC_FAULT=f"reconcile:after-write:wait={gate}"))
    _reached(gate, first)
    assert _files(merging)["pyproject.toml"] != before["pyproject.toml"]  # the run wrote it
    theirs = b"* @someone-else\n"
    (merging / ".github/CODEOWNERS").write_bytes(theirs)
    gate.write_text("error")
    _, err = first.communicate(timeout=300)
    assert first.returncode == 2 and "injected fault at reconcile:after-write" in err
    after = _files(merging)
    assert after[".github/CODEOWNERS"] == theirs
    assert after["pyproject.toml"] == before["pyproject.toml"] and after["uv.lock"] == before["uv.lock"]
    assert not (Path(git(merging, "rev-parse", "--absolute-git-dir")) / "depsync-reconcile.lock").exists()  # released and removed
