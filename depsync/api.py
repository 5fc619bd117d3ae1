"""Small stable entry points for tests and other tools."""

from __future__ import annotations

from pathlib import Path

from depsync.config import Config
from depsync.findings import Finding
from depsync.model.lock import Lock
from depsync.model.pyproject import Pyproject
from depsync.rules import CheckInputs, freshness


def lock_freshness(project_dir: Path) -> list[Finding]:
    """Findings of the static lock-freshness rule for the project in project_dir.

    Empty list: depsync predicts `uv lock --check` accepts the lock.
    """
    project_dir = Path(project_dir)
    pyproject = Pyproject.from_text((project_dir / "pyproject.toml").read_text(), "pyproject.toml")
    lock = Lock.from_text((project_dir / "uv.lock").read_text(), "uv.lock")
    return list(freshness.check(CheckInputs(Config(), pyproject, lock)))
