"""README.md stays in step with the code: every rule documented, the CI test command matches."""

from conftest import REPO
from depsync.config import valid_keys
from depsync.rules import RULES

README = (REPO / "README.md").read_text()


def test_every_rule_is_in_the_readme_table() -> None:
    for rule_id in RULES:
        assert f"| `{rule_id}` |" in README, rule_id


def test_every_config_key_is_documented() -> None:
    for key in valid_keys():
        assert f"\n{key} = " in README or f"{key} = " in README, key


def test_ci_runs_the_readme_test_command() -> None:
    command = "python -m pytest -q -ra"
    assert command in README
    assert command in (REPO / ".ci" / "run").read_text()
