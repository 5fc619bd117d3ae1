"""Small stable entry points for tests and other tools."""

from __future__ import annotations

from pathlib import Path


def lock_freshness(project_dir: Path) -> list:
    """Findings of the static lock-freshness rules for the project in project_dir.

    Empty list: depsync predicts `uv lock --check` accepts the lock.
    """
    raise NotImplementedError
