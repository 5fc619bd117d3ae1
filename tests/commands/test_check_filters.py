"""`depsync check --select/--ignore/--exit-zero`, $DEPSYNC_OUTPUT_FORMAT and inline suppressions,
on the bundled Megatron-LM dev triple (real pyproject, lock and CI Dockerfile)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support import depsync


def rules_of(stdout: str) -> list[str]:
    return [f["rule"] for f in json.loads(stdout)["findings"]]


def test_select_ignore_and_exit_zero(megatron_dev_project: Path) -> None:
    project = str(megatron_dev_project)
    everything = depsync("check", project, "--format", "json")
    assert everything.returncode == 1 and len(rules_of(everything.stdout)) == 18  # 12 errors, 6 warnings
    selected = depsync("check", project, "--format", "json", "--select", "docker-stale-no-install,docker-not-locked")
    assert selected.returncode == 0, selected.stderr  # warnings only
    assert sorted(set(rules_of(selected.stdout))) == ["docker-not-locked", "docker-stale-no-install"]
    assert json.loads(selected.stdout)["summary"] == {"errors": 0, "warnings": 3, "infos": 0}
    ignored = depsync("check", project, "--format", "json", "--select", "ALL", "--ignore", "docker-no-install-renamed", "--strict")
    assert ignored.returncode == 1 and "docker-no-install-renamed" not in rules_of(ignored.stdout)
    # a narrowed run is not kept as the result's rendering: the next plain run (replayed from
    # the cache by depsync/entry.py) shows everything again
    again = depsync("check", project, "--format", "json")
    assert again.returncode == 1 and again.stdout == everything.stdout
    zero = depsync("check", project, "--exit-zero")
    assert zero.returncode == 0 and "12 error(s)" in zero.stdout
    assert depsync("check", project, "--exit-zero", "--strict").returncode == 0  # replayed: still 0


def test_unknown_rule_ids_are_usage_errors(megatron_dev_project: Path) -> None:
    result = depsync("check", str(megatron_dev_project), "--select", "docker-stale-no-instal")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == (
        "depsync: error: --select: unknown rule id 'docker-stale-no-instal'; did you mean 'docker-stale-no-install'? (`depsync rule --all` lists them)"
    )
    assert depsync("check", str(megatron_dev_project), "--ignore", "nope", "--exit-zero").returncode == 2


def test_output_format_from_the_environment(megatron_dev_project: Path) -> None:
    project = str(megatron_dev_project)
    env = {**os.environ, "DEPSYNC_OUTPUT_FORMAT": "json"}
    for _ in range(2):  # computed, then replayed from the cache: both read the variable
        result = depsync("check", project, env=env)
        assert result.returncode == 1 and json.loads(result.stdout)["schema"] == "depsync.check/1"
    flag = depsync("check", project, "--format", "github", env=env)
    assert flag.stdout.startswith("::")  # the flag wins
    bad = depsync("check", project, env={**env, "DEPSYNC_OUTPUT_FORMAT": "jsno\x1b[2J"})
    assert bad.returncode == 2 and bad.stdout == "" and "\x1b" not in bad.stderr
    assert "DEPSYNC_OUTPUT_FORMAT='jsno\\x1b[2J' is not an output format (choose from human, json, github, gitlab, sarif)" in bad.stderr
    assert depsync("check", project, "--format", "json", env={**env, "DEPSYNC_OUTPUT_FORMAT": "xml"}).returncode == 1  # unused when the flag is given
