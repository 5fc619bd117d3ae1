"""inputs whose cost grew faster than their size are bounded.

- `${A:-${B:-...}}` nested deep on a RUN line: BuildKit's parser is cubic in the depth
  (19 KB took 66-92 s); refused before parsing, one line, exit 2.
- 20k `[tool.uv.sources]` entries: a finding per source looked its line up by rescanning the
  file (quadratic); now one index. The subprocess timeout is a hang guard, not a timing.
- TOML nested thousands deep: tomllib's RecursionError became "internal error"; now exit 2.
Timings are in bench/bench_bounds.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files

LOCK = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "d"\nversion = "1"\nsource = { virtual = "." }\n'
PYPROJECT = '[project]\nname = "d"\nversion = "1"\nrequires-python = ">=3.10"\ndependencies = []\n'


def nested(depth: int) -> str:
    value = "x"
    for i in range(depth):
        value = "${A%d:-%s}" % (i, value)
    return value


def check(root: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(root.parent / "xdg"))
    # named: a discovered Dockerfile that cannot be read is only listed under -v (it may not be CI's)
    named = ["--dockerfile", "docker/Dockerfile.ci.dev"] if (root / "docker/Dockerfile.ci.dev").is_file() else []
    return subprocess.run([sys.executable, "-m", "depsync", "check", str(root), "--no-cache", *named], capture_output=True, text=True, env=env, timeout=timeout, cwd=root)


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    return result.stderr.strip()


@pytest.mark.parametrize("continued", [False, True], ids=["one-line", "continued-lines"])
def test_deeply_nested_substitutions_are_refused_before_parsing(tmp_path: Path, continued: bool) -> None:
    value = nested(2000)
    if continued:  # the same nesting split over backslash-continued lines
        value = value.replace(":-", ":-\\\n")
    write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "docker/Dockerfile.ci.dev": f"FROM debian\nRUN echo {value}\n"})
    line = one_error_line(check(tmp_path / "p", timeout=60))  # the parser alone took 92 s on this
    assert "nests `${...}` more than 16 deep" in line and f"docker/Dockerfile.ci.dev:{18 if continued else 2}:" in line


def test_real_nesting_is_still_read(tmp_path: Path) -> None:
    write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT + '\n[project.optional-dependencies]\ndev = []\n', "uv.lock": LOCK.replace('source = { virtual = "." }', 'source = { virtual = "." }\n\n[package.metadata]\nprovides-extras = ["dev"]'),
                                 "docker/Dockerfile.ci.dev": f"FROM debian\nARG IMAGE_TYPE=dev\nRUN uv sync --locked --extra {nested(3).replace('x', '${IMAGE_TYPE}')}\n"})
    result = check(tmp_path / "p")
    assert result.returncode in (0, 1), result.stderr
    assert "nests" not in result.stderr


def test_twenty_thousand_sources_finish(tmp_path: Path) -> None:
    sources = "".join(f'p{i} = {{ git = "https://github.com/o/p{i}", rev = "{"a" * 40}" }}\n' for i in range(20_000))
    write_files(tmp_path / "p", {"pyproject.toml": PYPROJECT + "\n[tool.uv.sources]\n" + sources, "uv.lock": LOCK})
    result = check(tmp_path / "p", timeout=90)  # quadratic: more than 120 s; linear: about 5 s here
    assert result.returncode == 0 and "Traceback" not in result.stderr  # warnings only
    assert "pyproject.toml:20007 warning source-inert source for p19999 is inert" in result.stdout  # each at its own line


@pytest.mark.parametrize("value", ["[" * 5000 + "]" * 5000, "{a = " * 3000 + "1" + "}" * 3000], ids=["arrays", "inline-tables"])
@pytest.mark.parametrize("file", ["pyproject.toml", "uv.lock"])
def test_deeply_nested_toml_is_a_clear_exit_2(tmp_path: Path, value: str, file: str) -> None:
    files = {"pyproject.toml": PYPROJECT, "uv.lock": LOCK}
    files[file] += f"\n[tool.x]\ny = {value}\n" if file == "pyproject.toml" else f"\n[x]\ny = {value}\n"
    write_files(tmp_path / "p", files)
    line = one_error_line(check(tmp_path / "p"))
    assert "nested too deeply" in line and file in line
