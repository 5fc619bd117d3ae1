"""README.md stays in step with the code: the rule table is the registry's, the CLI reference
is `--help` verbatim, the quick start is the command tests/test_distribution.py runs, and the
CI test command matches."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import REPO
from depsync.core.config import valid_keys
from depsync.core.rules import RULES, rule_table
from test_distribution import QUICK_START

README = (REPO / "README.md").read_text()
COMMANDS = ["check", "reconcile", "lock", "diff", "install", "guard", "rule", "completion"]


def help_text(*args: str) -> str:
    """`depsync [COMMAND] --help` at the width README's copy was made with."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["COLUMNS"] = "100"
    result = subprocess.run([sys.executable, "-m", "depsync", *args, "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.rstrip("\n")


def test_every_rule_is_in_the_readme_table() -> None:
    for rule_id in RULES:
        assert f"| `{rule_id}` |" in README, rule_id


def test_the_rule_table_is_the_registry() -> None:
    assert rule_table() in README, "README's rule table differs from depsync.core.rules.rule_table():\n" + rule_table()


def test_every_config_key_is_documented() -> None:
    for key in valid_keys():
        assert f"\n{key} = " in README or f"{key} = " in README, key


def test_ci_runs_the_readme_test_command() -> None:
    command = "python -m pytest -q -ra"
    assert command in README
    assert command in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_cli_reference_is_the_help(command: str | None) -> None:
    text = help_text(*([command] if command else []))
    assert f"```\n{text}\n```" in README, f"README's copy of `depsync {command or ''} --help` is out of date; it is now:\n{text}"


@pytest.mark.parametrize("command", ["check", "reconcile", "lock", "diff", "install", "guard"])
def test_each_command_section_shows_its_usage(command: str) -> None:
    usage = help_text(command).split("\n\n", 1)[0]
    section = README.split(f"## `depsync {command}`", 1)[-1] if f"## `depsync {command}`" in README else README.split(f"`depsync {command}`", 1)[1]
    assert f"```\n{usage}\n```" in section.split("\n## ", 1)[0], command


def test_quick_start_is_the_tested_command() -> None:
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert f"```bash\n{QUICK_START}\n```" in quick_start
    assert "git+https://" in quick_start  # installing from a Git URL until depsync is published


def test_the_documented_formats_exist() -> None:
    assert "`sarif`" in README and "depsync.diff/2" in README and "--exit-code" in README
    assert "depsync rule RULE-ID" in README and "depsync completion bash" in README
