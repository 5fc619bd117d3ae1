"""A TOML file that does not parse, on the command line: the one line (`file:line:column:`) and
then, as uv and ruff show it, the source line with a caret; exit 2, nothing on stdout. Real
input: Megatron-LM dev's pyproject.toml and uv.lock, each broken at one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import megatron


def project_with(tmp_path: Path, name: str, line: int, replacement: str) -> Path:
    for file in ("pyproject.toml", "uv.lock"):
        (tmp_path / file).write_text(megatron("dev", file))
    lines = (tmp_path / name).read_text().split("\n")
    lines[line - 1] = replacement
    (tmp_path / name).write_text("\n".join(lines))
    return tmp_path


def check(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "check", str(project), "--no-cache", *args], capture_output=True, text=True)


def test_a_broken_pyproject_line_is_shown_with_a_caret(tmp_path: Path) -> None:
    project = project_with(tmp_path, "pyproject.toml", 54, "sentencepiece =")  # in [project.optional-dependencies] training
    for args in ((), ("--format", "json")):
        result = check(project, *args)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.splitlines() == [
            "depsync: error: pyproject.toml:54:1: not valid TOML: Invalid value",
            "   |",
            "54 | sentencepiece =",
            "   | ^",
        ]


def test_a_broken_lock_line_too(tmp_path: Path) -> None:
    original = megatron("dev", "uv.lock").split("\n")[1200]
    assert original.startswith('    { url = "')
    project = project_with(tmp_path, "uv.lock", 1201, original.replace('"', "", 1))
    first, gutter, source, caret = check(project).stderr.splitlines()
    assert first == "depsync: error: uv.lock:1201:13: not valid TOML: Invalid value"
    assert gutter == "     |" and source.startswith("1201 |     { url = https://") and caret == "     |             ^"


def test_debug_still_ends_with_the_line_and_its_frame(tmp_path: Path) -> None:
    project = project_with(tmp_path, "pyproject.toml", 54, "sentencepiece =")
    lines = check(project, "--debug").stderr.splitlines()
    assert lines[0].startswith("Traceback") and lines[-4:-3] == ["depsync: error: pyproject.toml:54:1: not valid TOML: Invalid value"]
