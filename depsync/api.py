"""Small stable entry points for tests and other tools."""

from __future__ import annotations

from pathlib import Path

from depsync.core.findings import Finding
from depsync.core.rules import freshness
from depsync.shell.workspace import load_inputs


def lock_freshness(project_dir: Path) -> list[Finding]:
    """Findings of the static lock-freshness rule for the project in project_dir.

    Empty list: depsync predicts `uv lock --check` accepts the lock.
    """
    return list(freshness.check(load_inputs(Path(project_dir))))
