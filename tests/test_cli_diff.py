"""`depsync diff`: real Megatron locks, REF:path through git, the three formats."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import MEGATRON, git, init_repo


def depsync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "diff", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    if not MEGATRON.exists():
        pytest.skip("real Megatron-LM data not available")
    repo = init_repo(tmp_path / "repo", {"uv.lock": (MEGATRON / "main" / "uv.lock").read_text()})
    shutil.copy(MEGATRON / "dev" / "uv.lock", repo / "uv.lock")
    return repo


def test_megatron_main_vs_dev_json(locks: Path) -> None:
    result = depsync("--format", "json", cwd=locks)  # HEAD:uv.lock (main's) vs the work tree (dev's)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "depsync.diff/1"
    by_name: dict[str, list[dict]] = {}
    for change in document["changes"]:
        by_name.setdefault(change["name"], []).append(change)
    (te,) = by_name["transformer-engine"]
    assert te["old"] == "2.17.1+4329ff84 (git 4329ff84)" and te["new"] == "2.14.0+f031cf87 (git f031cf87)" and te["direct"]
    cudnn = sorted((c["kind"], c["old"] or c["new"]) for c in by_name["nvidia-cudnn-frontend"])
    assert cudnn == [("added", "1.25.0 (git 0a14b718)"), ("added", "1.25.0 (registry)"), ("removed", "1.26.0 (registry)")]
    assert not by_name["urllib3"][0]["direct"] if "urllib3" in by_name else True


def test_markdown_collapses_long_lists_and_keeps_direct_ones_visible(locks: Path) -> None:
    result = depsync("HEAD:uv.lock", "uv.lock", "--format", "markdown", cwd=locks)
    assert result.returncode == 0
    visible, _, hidden = result.stdout.partition("<details>")
    assert "`transformer-engine` downgraded" in visible
    assert "| `transformer-engine` | downgraded |" in hidden and hidden.rstrip().endswith("</details>")


def test_human_table_and_ref_to_ref(locks: Path) -> None:
    git(locks, "commit", "-qam", "dev's lock")
    result = depsync("HEAD~1:uv.lock", "HEAD:uv.lock", cwd=locks)
    assert result.returncode == 0
    assert "transformer-engine" in result.stdout and "2.14.0+f031cf87 (git f031cf87)" in result.stdout
    same = depsync("HEAD:uv.lock", "uv.lock", cwd=locks)
    assert "no package changed" in same.stdout


def test_bad_specs_exit_2(locks: Path) -> None:
    for args, needle in ((["nope:uv.lock"], "git ref 'nope' not found"), (["HEAD:missing.lock"], "missing.lock does not exist at HEAD"), (["x.lock"], "x.lock not found")):
        result = depsync(*args, cwd=locks)
        assert result.returncode == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
