"""The runners' work copy: what is copied and how, and what a killed run's copy becomes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from depsync.shell.runners.workcopy import copy_project, path_rewriter


def test_the_copy_keeps_bytes_modes_times_and_links_and_skips_what_uv_does_not_read(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("x = 1\n")
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o751)
    os.utime(root / "src" / "pkg" / "__init__.py", ns=(1_000_000_000, 1_500_000_000_000_000_000))
    (root / "link").symlink_to("src/pkg")
    (root / "outside").symlink_to("/etc/passwd")  # stays a link, never followed while copying
    os.mkfifo(root / "pipe")  # a FIFO would block a byte copy forever: not copied
    (root / "x.egg-info").mkdir()
    (root / ".git").mkdir()
    (root / "locked").mkdir()
    (root / "locked" / "f").write_text("f")
    os.chmod(root / "locked", 0o555)  # read-only directory: filled first, its mode set last
    try:
        copy = copy_project(root, tmp_path / "copy")
        assert sorted(p.name for p in copy.iterdir()) == ["link", "locked", "outside", "run.sh", "src"]
        assert (copy / "src" / "pkg" / "__init__.py").read_text() == "x = 1\n"
        assert os.stat(copy / "src" / "pkg" / "__init__.py").st_mtime_ns == 1_500_000_000_000_000_000
        assert os.stat(copy / "run.sh").st_mode & 0o777 == 0o751
        assert os.readlink(copy / "link") == "src/pkg" and os.readlink(copy / "outside") == "/etc/passwd"
        assert os.stat(copy / "locked").st_mode & 0o777 == 0o555 and (copy / "locked" / "f").read_text() == "f"
    finally:
        os.chmod(root / "locked", 0o755)
        if (tmp_path / "copy" / "locked").exists():
            os.chmod(tmp_path / "copy" / "locked", 0o755)


def test_a_killed_runs_work_copy_is_removed_by_the_next_run(tmp_path: Path) -> None:
    from depsync.shell.runners.containers import (
        process_start_time,
        sweep_work_copies,
        work_prefix,
    )

    gone = subprocess.Popen(["true"])
    started = process_start_time(gone.pid)
    gone.wait()
    dead = tmp_path / f"depsync-lock-{gone.pid}.{started}-abcd1234"
    (dead / "project").mkdir(parents=True)
    alive = tmp_path / f"{work_prefix()}efgh5678"  # this process's: it is running
    alive.mkdir()
    other = tmp_path / "depsync-lock-unrelated"  # no owner in its name: not depsync's to judge
    other.mkdir()
    sweep_work_copies(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name])


def test_paths_are_rewritten_only_as_whole_components() -> None:
    rewrite = path_rewriter("/workspace", "/home/me/proj")
    assert rewrite("error: Distribution not found at: file:///workspace/vendor/x") == "error: Distribution not found at: file:///home/me/proj/vendor/x"
    assert rewrite("`/workspace/pyproject.toml`: bad") == "`/home/me/proj/pyproject.toml`: bad"
    assert rewrite("/opt/workspace/x /workspace2 /workspace-venv") == "/opt/workspace/x /workspace2 /workspace-venv"
