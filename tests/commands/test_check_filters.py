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
    assert json.loads(selected.stdout)["summary"] == {"errors": 0, "warnings": 3, "info": 0}
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
        "depsync: error: --select: unknown rule id 'docker-stale-no-instal' (did you mean 'docker-stale-no-install'?) (`depsync rule --all` lists them)"
    )
    assert depsync("check", str(megatron_dev_project), "--ignore", "nope", "--exit-zero").returncode == 2


def test_output_format_from_the_environment(megatron_dev_project: Path) -> None:
    project = str(megatron_dev_project)
    env = {**os.environ, "DEPSYNC_OUTPUT_FORMAT": "json"}
    for _ in range(2):  # computed, then replayed from the cache: both read the variable
        result = depsync("check", project, env=env)
        assert result.returncode == 1 and json.loads(result.stdout)["schema"] == "depsync.check/2"
    flag = depsync("check", project, "--format", "github", env=env)
    assert flag.stdout.startswith("::")  # the flag wins
    bad = depsync("check", project, env={**env, "DEPSYNC_OUTPUT_FORMAT": "jsno\x1b[2J"})
    assert bad.returncode == 2 and bad.stdout == "" and "\x1b" not in bad.stderr
    assert "DEPSYNC_OUTPUT_FORMAT='jsno\\x1b[2J' is not an output format (choose from human, json, github, gitlab, sarif)" in bad.stderr
    assert depsync("check", project, "--format", "json", env={**env, "DEPSYNC_OUTPUT_FORMAT": "xml"}).returncode == 1  # unused when the flag is given


def test_inline_suppressions_on_the_megatron_triple(megatron_dev_project: Path) -> None:
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    text = dockerfile.read_text()
    text = text.replace("ARG IMAGE_TYPE=dev\n", "ARG IMAGE_TYPE=dev\n# depsync: ignore[docker-stale-no-install, docker-no-install-renamed]\n")
    text = text.replace("    uv sync --only-group build\n", "    uv sync --only-group build  # depsync: ignore[docker-not-locked]\n")
    text = text.replace("ARG UV_VERSION=0.7.2\n", "ARG UV_VERSION=0.7.2  # depsync: ignore[uv-lock-newer-than-pin]\n")
    dockerfile.write_text(text)
    pyproject = megatron_dev_project / "pyproject.toml"
    lines = pyproject.read_text().splitlines()
    assert lines[214].startswith("emerging_optimizers = {")  # a branch/tag pin: source-pin-not-commit
    lines[214] += "  # depsync: ignore[source-pin-not-commit, lock-stal]"
    pyproject.write_text("\n".join(lines) + "\n")

    for _ in range(2):  # computed, then from the result cache: -v lists the same
        result = depsync("-v", "check", str(megatron_dev_project), "--format", "json")
        assert result.returncode == 0, result.stdout + result.stderr  # the 12 renamed-CUDA errors are suppressed
        found = json.loads(result.stdout)["findings"]
        rules = sorted(f["rule"] for f in found)
        assert rules == ["source-pin-not-commit", "unused-suppression", "unused-suppression", "uv-lock-newer-than-pin"]
        unused = {f["line"]: f for f in found if f["rule"] == "unused-suppression"}
        assert "Docker reads no trailing comment" in unused[11]["message"]  # after ARG it is not a comment
        assert "names no rule: 'lock-stal' (did you mean 'lock-stale'?)" in unused[215]["message"]
        suppressed = [line for line in result.stderr.splitlines() if line.startswith("depsync: suppressed: ")]
        assert len(suppressed) == 16  # 12 renamed + 2 stale flags + docker-not-locked + the pin
        assert "depsync: suppressed: docker/Dockerfile.ci.dev:46 docker-no-install-renamed (# depsync: ignore on line 28)" in suppressed
        assert "depsync: suppressed: pyproject.toml:215 source-pin-not-commit (# depsync: ignore on line 215)" in suppressed
    quiet = depsync("check", str(megatron_dev_project))
    assert "suppressed" not in quiet.stderr and "0 error(s), 4 warning(s)" in quiet.stdout
    only = depsync("check", str(megatron_dev_project), "--ignore", "unused-suppression", "--strict")
    assert only.returncode == 1 and "unused-suppression" not in only.stdout  # a rule like the others


def test_diff_and_fix_follow_the_selection_and_exit_zero(megatron_dev_project: Path) -> None:
    project = str(megatron_dev_project)
    diff = depsync("check", project, "--diff")
    assert diff.returncode == 1 and "--no-install-package torchvision" in diff.stdout and 'rev = "nv_dev"' in diff.stdout
    zero = depsync("check", project, "--diff", "--exit-zero")
    assert zero.returncode == 0 and zero.stdout == diff.stdout
    # like `ruff check --fix --select`: only the selected rule is fixed
    fixed = depsync("check", project, "--fix", "--select", "docker-stale-no-install")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    dockerfile = (megatron_dev_project / "docker" / "Dockerfile.ci.dev").read_text()
    assert "torchvision" not in dockerfile and "nvidia-cublas-cu12" in dockerfile  # the renamed ones stay
    assert 'rev = "nv_dev"' in (megatron_dev_project / "pyproject.toml").read_text()


def test_a_hostile_comment_reaches_no_terminal_raw(megatron_dev_project: Path) -> None:
    # TOML forbids control characters even in comments (an input error); a Dockerfile does not
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    hostile = "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x1b[2J"
    dockerfile.write_text(dockerfile.read_text().replace("ARG IMAGE_TYPE=dev\n", f"# depsync: ignore[{hostile}]\nARG IMAGE_TYPE=dev\n"))
    pyproject = megatron_dev_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n# depsync: ignore[%0A::error title=x::pwned]\n[tool.depsync]\n")
    for fmt in ("human", "json", "github", "sarif"):
        result = depsync("check", str(megatron_dev_project), "--format", fmt, "--select", "unused-suppression")
        assert result.returncode == 0, result.stderr
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\x1b" not in result.stderr
        assert "unused-suppression" in result.stdout and "pwned" in result.stdout  # shown quoted, never run
        assert not any(line.startswith("::error") for line in result.stdout.splitlines())  # no workflow command smuggled in
