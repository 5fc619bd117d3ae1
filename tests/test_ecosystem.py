"""The files other tools read: pre-commit hooks, the composite action, the example sync workflow."""

from __future__ import annotations

import subprocess
import sys

import yaml
from conftest import REPO


def help_of(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *command, "--help"], capture_output=True, text=True)


def test_pre_commit_hooks_call_real_commands() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"depsync-check", "depsync-guard"}
    for hook in hooks:
        program, *command = hook["entry"].split()
        assert program == "depsync" and help_of(*command).returncode == 0


def test_composite_action_and_sync_workflow_parse_and_use_depsync() -> None:
    """The shapes; tests/test_action.py and tests/test_sync_workflow.py run them."""
    action = yaml.safe_load((REPO / ".github" / "actions" / "depsync-check" / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = " ".join(step.get("run", "") for step in action["runs"]["steps"])
    assert "check" in steps and "--format github" in steps
    assert '"diff"' in (REPO / ".github" / "actions" / "depsync-check" / "summary.py").read_text()
    caller = yaml.safe_load((REPO / "examples" / "sync-workflow.yml").read_text())
    assert all(job["uses"].split("@")[0].endswith("/.github/workflows/depsync-sync.yml") for job in caller["jobs"].values())
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "depsync-sync.yml").read_text())
    runs = " ".join(step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"])
    for needle in ("git merge --no-commit --no-ff", "reconcile", "guard", "gh pr create", "gh pr edit", "--force-with-lease"):
        assert needle in runs
