"""[tool.depsync] errors the way uv reports its own: the file and line, and the closest valid name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from depsync.core.config import load_config
from depsync.core.findings import Severity
from depsync.core.model.pyproject import Pyproject
from depsync.errors import DepsyncError

PROJECT = '[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'


def error_of(tail: str) -> DepsyncError:
    text = PROJECT + tail
    with pytest.raises(DepsyncError) as caught:
        load_config(Pyproject.from_text(text, "pyproject.toml").depsync_config, text, "pyproject.toml")
    return caught.value


@pytest.mark.parametrize(
    ("tail", "where", "needles"),
    [
        ('[tool.depsync]\nowner_ref = "origin/dev"\n', "pyproject.toml:8", ["unknown [tool.depsync] key 'owner_ref' (did you mean 'owner-ref'?)"]),
        ('[tool.depsync]\nprotected-path = []\n', "pyproject.toml:8", ["did you mean 'protected-paths'?"]),
        (
            '[tool.depsync]\nlock = "uv.lock"\nseverity = { source-pin-not-comit = "error" }\n',
            "pyproject.toml:9",
            ["unknown rule id 'source-pin-not-comit' (did you mean 'source-pin-not-commit'?)"],
        ),
        ('[tool.depsync.severity]\nsource-inert = "warn"\n', "pyproject.toml:8", ["'warn' is not error, warning, info or off", "did you mean 'warning'?"]),
        # SARIF's and GitHub's words for the level: never accepted before, pointed at its one name
        ('[tool.depsync.severity]\nsource-inert = "note"\n', "pyproject.toml:8", ["'note' is not error, warning, info or off", "did you mean 'info'?"]),
        ('[tool.depsync.severity]\nsource-inert = "notice"\n', "pyproject.toml:8", ["did you mean 'info'?"]),
        ('[tool.depsync]\nowner-ref = 3\n', "pyproject.toml:8", ["owner-ref must be a non-empty string"]),
        ('[tool.depsync]\ndockerfiles = [{ path = "x", build_args = {} }]\n', "pyproject.toml:8", ["did you mean 'build-args'?"]),
    ],
)
def test_config_error_names_the_line_and_the_closest_name(tail: str, where: str, needles: list[str]) -> None:
    error = error_of(tail)
    assert error.where == where
    for needle in needles:
        assert needle in error.message


def test_each_unknown_key_gets_its_own_suggestion_and_line() -> None:
    """Two typos, two suggestions: the first key's line leads (where an editor jumps), the others say theirs."""
    error = error_of('[tool.depsync]\nowner_ref = "origin/dev"\nlock = "uv.lock"\nprotected-path = []\nconflict_polcy = "dev"\nzzz = 1\n')
    assert error.where == "pyproject.toml:8"
    assert error.message.startswith(
        "unknown [tool.depsync] keys 'owner_ref' (did you mean 'owner-ref'?), 'protected-path' at line 10 (did you mean 'protected-paths'?), "
        "'conflict_polcy' at line 11 (did you mean 'conflict-policy'?), 'zzz' at line 12; valid keys: allowed-hosts, "
    )
    rules = error_of('[tool.depsync.severity]\nlock-stal = "off"\nsource-pin-not-commit = "error"\nsource-inrt = "off"\n')
    assert rules.where == "pyproject.toml:8"
    assert "unknown rule ids 'lock-stal' (did you mean 'lock-stale'?), 'source-inrt' at line 10 (did you mean 'source-inert'?)" in rules.message
    entry = error_of('[tool.depsync]\ndockerfiles = [{ path = "x", build_args = {}, pth = "y" }]\n')
    assert "unknown keys 'build_args' (did you mean 'build-args'?), 'pth' (did you mean 'path'?)" in entry.message


def test_a_known_rule_id_and_level_still_load() -> None:
    config = load_config({"severity": {"source-pin-not-commit": "error", "source-inert": "off", "lock-stale": "INFO", "source-host-not-allowed": "info"}})
    assert config.severity == {"source-pin-not-commit": Severity.ERROR, "source-inert": None, "lock-stale": Severity.INFO, "source-host-not-allowed": Severity.INFO}


def test_the_command_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PROJECT + '[tool.depsync]\nseverity = { lock-stal = "warning" }\n')
    subprocess.run(["uv", "lock", "--offline", "-q"], cwd=tmp_path, check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "depsync", "check", str(tmp_path), "--no-cache"], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "depsync: error: pyproject.toml:8: [tool.depsync] severity: unknown rule id 'lock-stal' (did you mean 'lock-stale'?) (`depsync rule --all` lists them)"
    ]
