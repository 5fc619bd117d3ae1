"""What `depsync lock` prints: uv's lines verbatim (masked, the work copy's path shown as the
project's), and on a terminal only, one status line under them with the phase and the time.

The terminal is a real pseudo-terminal (`pty`), 80 columns wide, and uv and the engine are
real; the long line comes from a real uv error (a path source that does not exist).
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from conftest import IMAGE
from uvprojects import build_find_links

LONG = "missing-local-package-with-a-name-long-enough-that-its-line-passes-eighty-columns"
STATUS = re.compile(r"\x1b\[2K(depsync: [^\r\n]*? - \d+\.\ds)\r")  # one redraw of the status line
TOKEN = "ghp_plantedOutputToken0123456789"


@pytest.fixture
def failing(tmp_path: Path) -> Path:
    """A project uv cannot lock: a path source that is not there. uv's error names the path,
    in the work copy (container: /workspace, host: a sibling copy)."""
    root = tmp_path / "proj"
    root.mkdir()
    build_find_links(root / "wheels")
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "proj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha", "{LONG}"]\n\n'
        f'[tool.uv.sources]\n{LONG} = {{ path = "vendor/{LONG}" }}\n\n'
        '[[tool.uv.index]]\nname = "local"\nurl = "wheels"\nformat = "flat"\ndefault = true\n'
    )
    return root


def env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", GITHUB_TOKEN=TOKEN, COLUMNS="80")


def in_a_terminal(argv: list[str], columns: int = 80, timeout: float = 180) -> tuple[int, str]:
    """Run argv with stdin, stdout and stderr on a pseudo-terminal of that width; (status, output)."""
    import pty

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env(), close_fds=True)
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the last writer closed the terminal
                break
            if not data:
                break
            output += data
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
    return process.returncode, output.decode("utf-8", "replace").replace("\r\n", "\n")


def plain_lines(output: str) -> list[str]:
    """The output without the status line's redraws: what stays on the screen, line by line."""
    return STATUS.sub("", output).replace("\x1b[2K", "").split("\n")


@pytest.mark.docker
def test_on_a_terminal_uv_lines_are_verbatim_under_a_status_line(engine, failing: Path) -> None:  # type: ignore[no-untyped-def]
    status, output = in_a_terminal([sys.executable, "-m", "depsync", "lock", str(failing), "--runner", "docker", "--image", IMAGE])
    assert status == 2, output
    statuses = STATUS.findall(output)
    assert statuses, output
    assert any(s.startswith("depsync: uv lock - ") for s in statuses), statuses  # the phase while uv runs
    assert all(len(s) <= 79 for s in statuses)  # never wider than the terminal: it would wrap and scroll
    lines = plain_lines(output)
    # uv's error line as uv printed it: whole (longer than the terminal), the project's path in it
    expected = f"error: Distribution not found at: file://{failing}/vendor/{LONG}"
    assert expected in lines, lines
    assert len(expected) > 80
    assert "/workspace" not in output
    # no log decoration: no timestamps, no source locations, no "  | " prefix
    assert not [line for line in lines if re.match(r"^\[\d\d:\d\d:\d\d\]", line) or re.search(r"\w+\.py:\d+\s*$", line) or line.startswith("  | ")]
    assert "Traceback" not in output and TOKEN not in output
    assert lines[-2].startswith("depsync: error: uv 0.13.9 lock failed; uv.lock is unchanged")  # the status line was cleared first


@pytest.mark.docker
def test_in_ci_there_is_no_status_line_and_no_escape(engine, failing: Path) -> None:  # type: ignore[no-untyped-def]
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", str(failing), "--runner", "docker", "--image", IMAGE], capture_output=True, text=True, env=env(), timeout=300)
    assert result.returncode == 2
    assert "\x1b" not in result.stderr + result.stdout and "\r" not in result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "depsync: Docker engine unix:///var/run/docker.sock (default socket)" or lines[0].startswith("depsync: Docker engine ")
    assert lines[1] == f"depsync: uv lock: starting (docker runner, image {IMAGE} (--image))"
    assert f"error: Distribution not found at: file://{failing}/vendor/{LONG}" in lines


def test_the_local_runner_streams_with_the_projects_path(failing: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", str(failing), "--runner", "local"], capture_output=True, text=True, env=env(), timeout=300)
    assert result.returncode == 2
    assert f"error: Distribution not found at: file://{failing}/vendor/{LONG}" in result.stderr.splitlines()
    assert ".proj.depsync-" not in result.stderr  # the sibling work copy's name never shows


def test_the_local_runner_on_a_terminal(failing: Path) -> None:
    status, output = in_a_terminal([sys.executable, "-m", "depsync", "lock", str(failing), "--runner", "local"])
    assert status == 2, output
    assert STATUS.findall(output)
    assert f"error: Distribution not found at: file://{failing}/vendor/{LONG}" in plain_lines(output)


@pytest.mark.docker
def test_a_successful_run_on_a_terminal(engine, failing: Path) -> None:  # type: ignore[no-untyped-def]
    text = (failing / "pyproject.toml").read_text()
    (failing / "pyproject.toml").write_text(text.replace(f', "{LONG}"', "").split("[tool.uv.sources]")[0] + "[[tool.uv.index]]" + text.split("[[tool.uv.index]]")[1])
    status, output = in_a_terminal([sys.executable, "-m", "depsync", "lock", str(failing), "--runner", "docker", "--image", IMAGE])
    assert status == 0, output
    lines = plain_lines(output)
    assert any(re.fullmatch(r"Resolved \d+ packages in \d+m?s", line) for line in lines), lines
    assert any(line.startswith("depsync: uv 0.13.9 via docker runner") for line in lines)
    assert (failing / "uv.lock").is_file()
