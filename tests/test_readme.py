"""README.md stays in step with the code and the tests: the install command is the one
tests/test_distribution.py runs, the test command is the one CI runs, and what README names
(rules, config keys, formats, commands) is documented in full in docs/, whose generated parts
tests/test_docs.py keeps equal to the code."""

from __future__ import annotations

import re

from conftest import REPO
from test_distribution import QUICK_START

from depsync.core.config import valid_keys
from depsync.core.rules.registry import RULES, rule_table

README = (REPO / "README.md").read_text()
DOCS = {path.name: path.read_text() for path in (REPO / "docs").glob("*.md")}


def test_every_rule_is_in_the_rule_table() -> None:
    for rule_id in RULES:
        assert f"| `{rule_id}` |" in DOCS["check.md"], rule_id


def test_the_rule_table_is_the_registry() -> None:
    assert rule_table() in DOCS["check.md"], "docs/check.md's rule table differs from depsync.core.rules.rule_table():\n" + rule_table()


def test_every_config_key_is_documented() -> None:
    for key in valid_keys():
        assert f"\n{key} = " in DOCS["configuration.md"] and f"| `{key}` |" in DOCS["configuration.md"], key
    assert "docs/configuration.md" in README


def test_ci_runs_the_readme_test_command() -> None:
    command = "python -m pytest -q -ra"
    run_the_tests = README.split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    assert "```bash\nbash .ci/run\n```" in run_the_tests
    assert command in run_the_tests
    assert command in (REPO / ".ci" / "run").read_text()


def test_install_is_the_tested_command() -> None:
    """The first section is Install, and its first command is the one tests/test_distribution.py
    runs: install depsync and run reconcile on the bundled example."""
    assert README.split("\n## ", 2)[1].startswith("Install\n")
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert install.split("```bash\n", 1)[1].startswith(f"{QUICK_START}\n```")
    assert "examples/megatron-sync/make-example.sh" in QUICK_START and "git+https://github.com/depsync/depsync" in install  # a Git URL until published
    assert len(README.split("\n## Install", 1)[0].split("\n\n", 1)[1].strip().splitlines()) <= 3  # what depsync is, in three lines


def test_the_documented_formats_exist() -> None:
    everything = README + "".join(DOCS.values())
    assert "`sarif`" in README and "depsync.diff/2" in DOCS["lock.md"] and "--exit-code" in everything
    assert "depsync.check/2" in DOCS["check.md"] and "depsync.reconcile/1" in DOCS["reconcile.md"]
    assert "depsync rule RULE-ID" in everything and "depsync completion bash" in README


def test_readme_links_every_docs_page() -> None:
    for name in DOCS:
        assert f"(docs/{name})" in README, name
    assert "(SECURITY.md)" in README and "(CONTRIBUTING.md)" in README


def test_one_picture_shows_where_each_job_runs() -> None:
    """One Mermaid picture (GitHub renders it): the branches of a sync and the job run at each."""
    (picture,) = re.findall(r"```mermaid\n(.*?)```", README, re.DOTALL)
    assert picture.startswith("flowchart ")
    for shown in ("merge-base", "main", "dev", "sync/main-into-dev", "git merge --no-commit --no-ff origin/main",
                  "depsync check (PR CI)", "depsync reconcile", "(sync job)", "depsync lock", "depsync guard (sync job, pre-push)"):  # fmt: skip
        assert shown in picture, shown
