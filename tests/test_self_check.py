"""depsync holds its own triple to its own rules: its pyproject.toml and uv.lock pass `depsync
check`, and uv agrees that the lock is fresh (the lock CI installs from)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _copy(tmp_path: Path) -> Path:
    """pyproject, lock and package of depsync, outside any git checkout (no owner ref to compare)."""
    project = tmp_path / "depsync"
    project.mkdir()
    for name in ("pyproject.toml", "uv.lock", "README.md", "LICENSE"):
        shutil.copy(REPO / name, project / name)
    shutil.copytree(REPO / "depsync", project / "depsync", ignore=shutil.ignore_patterns("__pycache__"))
    return project


def test_depsync_checks_clean_on_itself(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    done = subprocess.run([sys.executable, "-m", "depsync", "check", "--no-cache"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is consistent" in done.stdout + done.stderr


def test_uv_says_depsyncs_lock_is_fresh(tmp_path: Path) -> None:
    project = _copy(tmp_path)
    uv = shutil.which("uv") or "uv"
    env = dict(os.environ, UV_PYTHON=sys.executable, UV_PYTHON_DOWNLOADS="never")
    done = subprocess.run([uv, "lock", "--check", "--offline"], cwd=project, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr


def test_the_lock_pins_what_ci_installs() -> None:
    """.ci/run takes uv's version from the lock; the test extra pins the same one."""
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    locked = {p["name"]: p.get("version") for p in lock["package"]}
    test_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    pinned = next(r for r in test_extra if r.replace(" ", "").startswith("uv=="))
    assert pinned.replace(" ", "").split("==")[1].split("#")[0].strip() == locked["uv"]
    assert '"uv.lock"' in (REPO / ".ci" / "run").read_text() and "--locked" in (REPO / ".ci" / "run").read_text()
