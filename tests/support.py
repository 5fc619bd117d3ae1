"""Running depsync as a user does: `python -m depsync` in a child process, with this interpreter.

One place for it, so every test runs depsync the same way (stdin closed unless given, text output).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def depsync(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None, stdin: str | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`python -m depsync ARGS` in cwd; stdout and stderr captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "depsync", *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def depsync_in(cwd: Path, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """depsync run in a repository: `depsync_in(repo, "reconcile", ...)`."""
    return depsync(*args, cwd=cwd, env=env, stdin=stdin, timeout=timeout)
