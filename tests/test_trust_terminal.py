"""repository text reaches no terminal or log as control characters.

A Dockerfile word and a lock package name carry an OSC 8 hyperlink, a colour, a bare CR
and a fake `::warning` workflow command. `check` (human, github) and `diff` (human, Markdown)
print them without any control character; the github format's lines each start one
workflow command of depsync's own. Real files, depsync subprocesses.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files

HOSTILE = "x\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x1b[31mred\r::warning::forged\x9b2J"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
LOCK = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "d"\nversion = "1"\nsource = {{ virtual = "." }}\n{extra}'


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(root.parent / "xdg"))
    return subprocess.run([sys.executable, "-m", "depsync", *args], cwd=root, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("fmt", ["human", "github"])
def test_check_output_has_no_control_characters(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "p"
    word = HOSTILE.replace("\r", "")  # the Dockerfile parser splits lines at CR
    write_files(root, {"pyproject.toml": '[project]\nname = "d"\nversion = "1"\nrequires-python = ">=3.10"\ndependencies = []\n',
                       "uv.lock": LOCK.format(extra=""), "docker/Dockerfile.ci.dev": f"FROM debian\nRUN uv sync --locked --extra '{word}'\n"})
    result = run(root, "check", "--no-cache", "--format", fmt)
    assert result.returncode == 1 and "click" in result.stdout, result.stdout + result.stderr
    assert not CONTROL.search(result.stdout.replace("\n", "")) and not CONTROL.search(result.stderr.replace("\n", ""))
    if fmt == "github":
        assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in result.stdout.splitlines() if line)
        assert "::warning::forged" not in result.stdout.replace("%0D", "\n").splitlines()[0][:20]


@pytest.mark.parametrize("fmt", ["human", "markdown"])
def test_diff_output_has_no_control_characters(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "p"
    name = HOSTILE.replace("\\", "")
    escaped = name.encode("unicode_escape").decode().replace('"', '\\"')
    package = f'\n[[package]]\nname = "{escaped}"\nversion = "2"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
    write_files(root, {"old.lock": LOCK.format(extra=""), "new.lock": LOCK.format(extra=package)})
    result = run(root, "diff", "old.lock", "new.lock", "--format", fmt)
    assert result.returncode in (0, 1), result.stderr
    assert "click" in result.stdout
    assert not CONTROL.search(result.stdout.replace("\n", ""))
