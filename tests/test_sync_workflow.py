"""examples/sync-workflow.yml, its shell steps run for real on clean and conflicting merges.

The jobs' `run:` scripts are taken from the YAML and run by the stand-in runner of
test_action.py (bash -eo pipefail, GITHUB_OUTPUT/GITHUB_PATH files, `${{ }}` in env/if/
outputs) in a fresh clone of a local bare `origin`, as a runner's workspace would be.

What is stubbed, because it cannot exist here, and how:
- the GitHub runner (see test_action.py);
- `uses: actions/checkout`: a real `git clone` of the local bare remote and a checkout of
  the ref it is given (what the action does, without GitHub's API or the network);
- `uses: actions/setup-python`: the test Python's base interpreter as `python` on PATH;
- `gh`: a fake on PATH that records its arguments and the PR body it was given, and prints
  a PR URL (opening a PR needs GitHub);
- DEPSYNC_REQUIREMENT points at a local git repository of this work tree
  (`depsync @ git+file://localhost/...@<commit>`) instead of github.com: real pip, real git, no network
  to GitHub;
- in the relock job the CI image is replaced by the local runner (uv on the host, via the
  DEPSYNC_LOCK_RUNNER repository variable): the test's package index and git sources live
  on the host's disk, which a container does not see. The docker runner has its own tests.
Everything else is real: git merge, commit and push, pip, depsync reconcile/guard, uv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import env_for, git
from support import git_repo_of_depsync
from test_action import (
    WORKFLOW,
    Runner,
    checkout_stub,
    run_job,
    runner_env,
    setup_python_stub,
)
from uvprojects import LocalMaterial

RUN_ID = "4242"
BRANCH = f"sync/main-into-dev-{RUN_ID}-1"

FAKE_GH = '''#!{python}
"""Fake gh: records its arguments and the --body-file content, prints a PR URL."""
import json, os, sys
args = sys.argv[1:]
body = None
if "--body-file" in args:
    with open(args[args.index("--body-file") + 1]) as handle:
        body = handle.read()
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps({{"args": args, "body": body, "token": bool(os.environ.get("GH_TOKEN"))}}) + "\\n")
print("https://github.example.invalid/o/r/pull/1")
'''


@pytest.fixture(scope="module")
def requirement(tmp_path_factory: pytest.TempPathFactory) -> str:
    """depsync as a pip requirement from a git repository of this work tree, pinned to its commit."""
    source = tmp_path_factory.mktemp("depsync-repo") / "depsync"
    commit = git_repo_of_depsync(source)
    # file://localhost/...: the pip that `python -m venv` bundles with 3.11 refuses `file:///` here
    return f"depsync @ git+file://localhost{source}@{commit}"


@pytest.fixture
def origin(small_repo: Path, tmp_path: Path) -> Path:
    remote = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "dev", str(remote)], check=True)
    git(small_repo, "remote", "add", "origin", str(remote))
    return remote


def publish(repo: Path, dev: str, main: str) -> None:
    """origin's dev and main are these local branches."""
    git(repo, "push", "-q", "--force", "origin", f"{dev}:refs/heads/dev", f"{main}:refs/heads/main")


def make_runner(tmp_path: Path, name: str, remote: Path, material: LocalMaterial, *, uv: bool = False) -> tuple[Runner, Path]:
    """A fresh runner: its own workspace and RUNNER_TEMP (jobs run on different machines)."""
    root = tmp_path / name
    temp, tools = root / "runner-temp", root / "tools"
    temp.mkdir(parents=True)
    tools.mkdir()
    (tools / "gh").write_text(FAKE_GH.format(python=sys.executable))
    (tools / "gh").chmod(0o755)
    env = runner_env(env_for(material))
    paths = [str(tools)]
    if uv:  # the local runner's uv, standing in for the CI image's
        uv_dir = root / "uv-bin"
        uv_dir.mkdir()
        found = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        assert found
        (uv_dir / "uv").symlink_to(found)
        paths.append(str(uv_dir))
    log = root / "gh.jsonl"
    env.update(PATH=os.pathsep.join([*paths, env["PATH"]]), GITHUB_RUN_ID=RUN_ID, GITHUB_RUN_ATTEMPT="1", GITHUB_EVENT_NAME="schedule", FAKE_GH_LOG=str(log))
    stubs = {"actions/checkout": checkout_stub(remote, "dev"), "actions/setup-python": setup_python_stub}
    return Runner(root / "workspace", temp, env, stubs), log


def run_sync_job(runner: Runner, job: str, requirement: str, **kwargs: Any) -> tuple[bool | None, dict[str, str]]:
    return run_job(runner, WORKFLOW, job, env={"DEPSYNC_REQUIREMENT": requirement}, **kwargs)


def gh_calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def remote_head(remote: Path, branch: str) -> str | None:
    result = subprocess.run(["git", "-C", str(remote), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], capture_output=True, text=True)
    return result.stdout.strip() or None


def parents(remote: Path, commit: str) -> list[str]:
    return subprocess.run(["git", "-C", str(remote), "rev-list", "--parents", "-n", "1", commit], capture_output=True, text=True, check=True).stdout.split()[1:]


def test_a_clean_merge_opens_the_pr_from_the_hosted_job(small_repo: Path, origin: Path, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    repo = small_repo
    git(repo, "checkout", "-q", "-b", "main-code", "dev")
    (repo / "app.py").write_text("print('main')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-qm", "main: code only")
    publish(repo, "dev", "main-code")
    runner, log = make_runner(tmp_path, "hosted", origin, material)
    ok, outputs = run_sync_job(runner, "sync", requirement)
    assert ok, runner.describe()
    merge = runner.step("merge main")
    assert "conflicts in" not in merge.stdout and merge.outputs["merged"] == "true"
    assert outputs == {"branch": BRANCH, "relock": "false"}
    # the relock job does not run
    assert run_sync_job(make_runner(tmp_path, "self-hosted", origin, material)[0], "relock", requirement, needs={"sync": {"outputs": outputs}})[0] is None

    head = remote_head(origin, BRANCH)
    assert head and parents(origin, head) == [remote_head(origin, "dev"), remote_head(origin, "main")]
    assert "depsync guard: HEAD keeps dev's triple" in runner.step("guard, push and open the PR").stdout
    (call,) = gh_calls(log)
    assert call["args"][:8] == ["pr", "create", "--base", "dev", "--head", BRANCH, "--title", "Sync main into dev"]
    assert call["token"] and "--label" not in call["args"]
    assert "not relocked (--no-lock)" in call["body"]  # the PR body is reconcile's summary


def test_a_conflicting_merge_is_reconciled_relocked_and_opened(small_repo: Path, origin: Path, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    """small_repo: dev moved eta's pin, main moved zeta's and CODEOWNERS: pyproject.toml and
    uv.lock conflict, and main's new zeta pin makes dev's lock stale."""
    publish(small_repo, "dev", "main")
    hosted, hosted_log = make_runner(tmp_path, "hosted", origin, material)
    ok, outputs = run_sync_job(hosted, "sync", requirement)
    assert ok, hosted.describe()
    conflicts = hosted.step("merge main").stdout
    assert "conflicts in:" in conflicts and "uv.lock" in conflicts and "pyproject.toml" in conflicts
    assert outputs == {"branch": BRANCH, "relock": "true"}
    assert not hosted.step("guard, push and open the PR").ran and gh_calls(hosted_log) == []
    pushed = remote_head(origin, BRANCH)
    assert pushed is not None

    relocker, log = make_runner(tmp_path, "self-hosted", origin, material, uv=True)
    ok, _ = run_sync_job(relocker, "relock", requirement, needs={"sync": {"outputs": outputs}}, variables={"DEPSYNC_LOCK_RUNNER": "local"})
    assert ok, relocker.describe()
    head = remote_head(origin, BRANCH)
    assert head and head != pushed  # the merge was amended with the new lock and force-pushed
    assert parents(origin, head) == [remote_head(origin, "dev"), remote_head(origin, "main")]
    (call,) = gh_calls(log)
    assert call["args"][:6] == ["pr", "create", "--base", "dev", "--head", BRANCH]
    assert "zeta" in call["body"] and "relocked with uv" in call["body"]
    assert call["body"].startswith("## depsync reconcile: `origin/main` into `origin/dev`")

    # what landed on the branch passes the PR gate
    clone = tmp_path / "verify"
    subprocess.run(["git", "clone", "-q", "-b", BRANCH, str(origin), str(clone)], check=True)
    check = subprocess.run([sys.executable, "-m", "depsync", "check", "--owner-ref", "origin/dev"], cwd=clone, capture_output=True, text=True, env=env_for(material))
    assert check.returncode == 0, check.stdout + check.stderr
    assert (clone / ".github" / "CODEOWNERS").read_text() == "* @dev-team\n"  # dev's, not main's


def test_nothing_to_sync_stops_quietly(small_repo: Path, origin: Path, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    publish(small_repo, "dev", "dev~1")  # main is already in dev
    runner, log = make_runner(tmp_path, "hosted", origin, material)
    ok, outputs = run_sync_job(runner, "sync", requirement)
    assert ok, runner.describe()
    assert "nothing to sync" in runner.step("merge main").stdout
    assert not runner.step("reconcile the triple").ran and remote_head(origin, BRANCH) is None and gh_calls(log) == []
    assert outputs["relock"] == ""


def test_a_merge_that_fails_otherwise_stops_the_sync(small_repo: Path, origin: Path, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    git(small_repo, "checkout", "-q", "--orphan", "unrelated")
    git(small_repo, "commit", "-qm", "another history")
    publish(small_repo, "dev", "unrelated")
    runner, log = make_runner(tmp_path, "hosted", origin, material)
    ok, _ = run_sync_job(runner, "sync", requirement)
    assert not ok
    merge = runner.step("merge main")
    assert merge.returncode == 128 and "git merge failed (exit 128)" in merge.stdout
    assert not runner.step("commit the merge").ran and remote_head(origin, BRANCH) is None and gh_calls(log) == []


def test_code_conflicts_are_left_to_a_person(small_repo: Path, origin: Path, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    repo = small_repo
    for branch in ("dev", "main"):
        git(repo, "checkout", "-q", branch)
        (repo / "app.py").write_text(f"print('{branch}')\n")
        git(repo, "add", "app.py")
        git(repo, "commit", "-qm", f"{branch}: app.py")
    publish(repo, "dev", "main")
    runner, log = make_runner(tmp_path, "hosted", origin, material)
    ok, _ = run_sync_job(runner, "sync", requirement)
    assert not ok
    commit = runner.step("commit the merge")
    assert commit.returncode == 1 and "conflicts outside the dependency files" in commit.stdout and "app.py" in commit.stdout
    assert remote_head(origin, BRANCH) is None and gh_calls(log) == []
