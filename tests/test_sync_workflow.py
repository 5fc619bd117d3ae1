"""The reusable sync workflow (.github/workflows/depsync-sync.yml) and the example that calls it,
run for real on clean merges, code conflicts, repeated runs, a resolution in progress and failures.

The job's `run:` scripts are taken from the YAML and run by the stand-in runner of
test_action.py (bash -eo pipefail, GITHUB_OUTPUT/GITHUB_ENV/GITHUB_PATH files, `${{ }}` in
env/if/with/outputs, `inputs.*` with the workflow_call defaults) in a fresh clone of a local
bare `origin`, as a runner's workspace would be.

What is stubbed, because it cannot exist here, and how:
- the GitHub runner (see test_action.py);
- `uses: actions/checkout`: a real `git clone` of the local bare remote and a checkout of the
  ref it is given (what the action does, without GitHub's API or the network);
- `uses: actions/setup-python`: the test Python's base interpreter as `python` on PATH;
- `uses: actions/upload-artifact`: copies the uploaded directory aside and records the call;
- `gh`: a stand-in on PATH with GitHub's state in a JSON file (labels, PRs with title, body,
  draft flag, labels): `pr create` fails on a label that does not exist or a head branch that
  was not pushed, as GitHub does; every call is recorded. Opening a PR needs GitHub;
- DEPSYNC_REQUIREMENT points at a local git repository of this work tree
  (`depsync @ git+file://localhost/...@<commit>`) instead of github.com: real pip, real git;
- the relock runs with the local runner (uv on the host, `lock-runner: local`): the test's
  package index and git sources live on the host's disk, which a container does not see. The
  failing relock uses the real Docker engine with an image that does not exist.
Everything else is real: git merge, commit and push, pip, depsync reconcile/guard, uv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import env_for, git, write_files
from support import git_repo_of_depsync
from test_action import (
    SYNC_WORKFLOW,
    WORKFLOW,
    Runner,
    checkout_stub,
    run_job,
    runner_env,
    setup_python_stub,
    triggers,
)
from uvprojects import LocalMaterial

BRANCH = "sync/main-into-dev"
BOT_EMAIL = "depsync-sync@users.noreply.github.com"

FAKE_GH = r'''#!{python}
"""A stand-in for gh: GitHub's state (labels, PRs) in a JSON file; every call recorded."""
import json, os, subprocess, sys

args = sys.argv[1:]
path = os.environ["FAKE_GH_STATE"]
state = json.load(open(path)) if os.path.exists(path) else {{"labels": [], "prs": [], "calls": []}}

def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default

def opts(name):
    return [args[i + 1] for i, a in enumerate(args) if a == name]

def fail(message):
    save()
    print(message, file=sys.stderr)
    sys.exit(1)

def save():
    json.dump(state, open(path, "w"))

body = open(opt("--body-file")).read() if "--body-file" in args else None
state["calls"].append({{"args": args, "body": body, "token": bool(os.environ.get("GH_TOKEN")), "repo": os.environ.get("GH_REPO")}})

def pr(number):
    found = [p for p in state["prs"] if str(p["number"]) == number]
    return found[0] if found else fail(f"no pull request {{number}}")

def known(labels):
    for label in labels:
        if label not in state["labels"]:
            fail(f"could not add label: '{{label}}' not found")

if args[:2] == ["label", "list"]:
    assert opt("--json") == "name" and opt("--jq") == ".[].name", args
    search = opt("--search", "").lower()
    for name in state["labels"]:
        if search in name.lower():
            print(name)
elif args[:2] == ["label", "create"]:
    if args[2] in state["labels"]:
        fail(f"label with name \"{{args[2]}}\" already exists; use `--force` to update its color and description")
    state["labels"].append(args[2])
elif args[:2] == ["pr", "list"]:
    assert opt("--state") == "open" and opt("--json") == "number,isDraft,url,isCrossRepository", args
    assert opt("--jq") == 'map(select(.isCrossRepository | not)) | .[0] | select(.) | "\\(.number) \\(.isDraft) \\(.url)"', args
    for p in state["prs"]:
        if p["state"] == "open" and p["head"] == opt("--head") and p["base"] == opt("--base") and not p.get("cross"):
            print(f"{{p['number']}} {{str(p['draft']).lower()}} {{p['url']}}")
            break
elif args[:2] == ["pr", "create"]:
    known(opts("--label"))
    head = opt("--head")
    pushed = subprocess.run(["git", "-C", os.environ["FAKE_GH_REMOTE"], "rev-parse", "--verify", "--quiet", f"refs/heads/{{head}}"], capture_output=True)
    if pushed.returncode:
        fail(f"pull request create failed: Head sha can't be blank, Head ref must be a branch ({{head}})")
    number = len(state["prs"]) + 1
    url = f"https://github.example.invalid/{{os.environ.get('GH_REPO')}}/pull/{{number}}"
    state["prs"].append({{"number": number, "url": url, "head": head, "base": opt("--base"), "title": opt("--title"), "body": body,
                          "draft": "--draft" in args, "labels": opts("--label"), "state": "open"}})
    print(url)
elif args[:2] == ["pr", "edit"]:
    p = pr(args[2])
    known(opts("--add-label"))
    p["title"], p["body"] = opt("--title", p["title"]), body if body is not None else p["body"]
    p["labels"] = [l for l in p["labels"] + [l for l in opts("--add-label") if l not in p["labels"]] if l not in opts("--remove-label")]
    print(p["url"])
elif args[:2] == ["pr", "close"]:
    p = pr(args[2])
    p["state"], p["closing_comment"] = "closed", opt("--comment")
elif args[:2] == ["pr", "ready"]:
    pr(args[2])["draft"] = "--undo" in args
else:
    fail(f"gh stand-in: unsupported call {{args}}")
save()
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


def commit_files(repo: Path, branch: str, files: Mapping[str, str], message: str) -> None:
    git(repo, "checkout", "-q", branch)
    write_files(repo, dict(files))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


class GitHub:
    """The gh stand-in's state and the uploaded artifacts, shared by every run of one test."""

    def __init__(self, root: Path, remote: Path) -> None:
        self.root, self.remote = root, remote
        self.state_file = root / "github.json"
        self.artifacts = root / "artifacts"
        self.tools = root / "tools"
        self.tools.mkdir(parents=True)
        (self.tools / "gh").write_text(FAKE_GH.format(python=sys.executable))
        (self.tools / "gh").chmod(0o755)
        self.uploads: list[dict[str, str]] = []

    @property
    def state(self) -> dict[str, Any]:
        return json.loads(self.state_file.read_text()) if self.state_file.exists() else {"labels": [], "prs": [], "calls": []}

    def calls(self, verb: str) -> list[dict[str, Any]]:
        return [c for c in self.state["calls"] if c["args"][:2] == verb.split()]

    def upload_stub(self, runner: Runner, inputs: Mapping[str, str], env: Mapping[str, str]) -> tuple[dict[str, str], int]:
        """actions/upload-artifact: the directory copied aside under the artifact's name."""
        source = Path(inputs["path"])
        assert source.is_relative_to(runner.temp), "only RUNNER_TEMP is uploaded, never the workspace"
        target = self.artifacts / inputs["name"]
        assert not target.exists(), "artifact names are unique within a run"
        if source.is_dir() and any(source.iterdir()):
            shutil.copytree(source, target)
        else:
            assert inputs.get("if-no-files-found") == "warn"
        self.uploads.append(dict(inputs))
        return {}, 0


def make_runner(tmp_path: Path, name: str, github: GitHub, material: LocalMaterial, attempt: int = 1) -> Runner:
    """A fresh runner: its own workspace and RUNNER_TEMP, the uv of the test venv (the local
    runner's, standing in for the CI image's) and the gh stand-in on PATH."""
    root = tmp_path / name
    temp, uv_dir = root / "runner-temp", root / "uv-bin"
    temp.mkdir(parents=True)
    uv_dir.mkdir()
    found = shutil.which("uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    assert found
    (uv_dir / "uv").symlink_to(found)
    (temp / "step-summary.md").write_text("")
    env = runner_env(env_for(material))
    env.update(PATH=os.pathsep.join([str(github.tools), str(uv_dir), env["PATH"]]), GITHUB_RUN_ID="4242", GITHUB_RUN_ATTEMPT=str(attempt),
               GITHUB_EVENT_NAME="schedule", GITHUB_REPOSITORY="example/project", FAKE_GH_STATE=str(github.state_file), FAKE_GH_REMOTE=str(github.remote))
    stubs = {"actions/checkout": checkout_stub(github.remote, "dev"), "actions/setup-python": setup_python_stub, "actions/upload-artifact": github.upload_stub}
    return Runner(root / "workspace", temp, env, stubs)


def run_sync(runner: Runner, requirement: str, **inputs: Any) -> tuple[bool | None, dict[str, str]]:
    given = {"depsync-requirement": requirement, "lock-runner": "local", "artifact-name": f"depsync-sync-{runner.workspace.parent.name}", **inputs}
    return run_job(runner, SYNC_WORKFLOW, "sync", inputs=given, secrets={})


def remote_head(remote: Path, branch: str) -> str | None:
    result = subprocess.run(["git", "-C", str(remote), "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], capture_output=True, text=True)
    return result.stdout.strip() or None


def parents(remote: Path, commit: str) -> list[str]:
    return subprocess.run(["git", "-C", str(remote), "rev-list", "--parents", "-n", "1", commit], capture_output=True, text=True, check=True).stdout.split()[1:]


def show(remote: Path, ref: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(remote), "show", f"{ref}:{path}"], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def github(tmp_path: Path, origin: Path) -> GitHub:
    return GitHub(tmp_path / "github", origin)


def conflicting_code(repo: Path) -> None:
    """dev and main both change app.py (a code conflict) on top of small_repo's triple conflicts."""
    commit_files(repo, "dev", {"app.py": "print('dev')\n"}, "dev: app.py")
    commit_files(repo, "main", {"app.py": "print('main')\n", "lib.py": "VALUE = 1\n"}, "main: app.py, lib.py")


# -- the workflow files --------------------------------------------------------------------------

def test_the_example_calls_the_reusable_workflow_with_what_it_declares() -> None:
    """The caller's `with:` and `secrets:` are inputs the reusable workflow declares, its required
    inputs are given, and the caller grants every permission the called job asks for (GitHub
    refuses to start a nested job asking for more)."""
    caller = yaml.safe_load(WORKFLOW.read_text())
    called = yaml.safe_load(SYNC_WORKFLOW.read_text())
    declared = triggers(called)["workflow_call"]
    assert set(triggers(called)) == {"workflow_call"}, "callable only: it never runs on its own"
    (job,) = caller["jobs"].values()
    assert job["uses"].startswith("depsync/depsync/.github/workflows/depsync-sync.yml@")
    assert set(job["with"]) <= set(declared["inputs"])
    assert {n for n, spec in declared["inputs"].items() if spec.get("required")} <= set(job["with"])
    assert set(job.get("secrets", {})) <= set(declared["secrets"])
    asked = {scope: level for spec in called["jobs"].values() for scope, level in spec["permissions"].items()}
    assert asked == job["permissions"] and caller["permissions"] == {} and called["permissions"] == {}
    assert len([line for line in WORKFLOW.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#")]) <= 20


# -- runs ----------------------------------------------------------------------------------------

def test_a_clean_merge_opens_one_ready_pr(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    repo = small_repo
    git(repo, "branch", "main-code", "dev")
    commit_files(repo, "main-code", {"app.py": "print('main')\n"}, "main: code only")
    publish(repo, "dev", "main-code")
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(runner, requirement)
    assert ok, runner.describe()
    assert outputs == {"outcome": "opened", "pull-request": "https://github.example.invalid/example/project/pull/1", "branch": BRANCH, "conflicted": "0"}
    head = remote_head(github.remote, BRANCH)
    assert head and parents(github.remote, head) == [remote_head(github.remote, "dev"), remote_head(github.remote, "main")]
    assert "depsync guard: HEAD keeps dev's triple" in runner.step("guard").stdout
    (pr,) = github.state["prs"]
    assert (pr["head"], pr["base"], pr["title"], pr["draft"], pr["labels"]) == (BRANCH, "dev", "Sync main into dev", False, [])
    assert pr["body"].startswith("## depsync reconcile: `origin/main` into `origin/dev`") and "conflict markers" not in pr["body"]
    assert all(c["token"] and c["repo"] == "example/project" for c in github.state["calls"])
    assert github.state["labels"] == []  # nothing to review: no label made
    # the summary and the plan are kept, and shown as the job summary
    (upload,) = github.uploads
    artifact = github.artifacts / upload["name"]
    assert {"summary.md", "plan.json", "merge.log", "steps.txt"} <= {p.name for p in artifact.iterdir()}
    assert json.loads((artifact / "plan.json").read_text())["schema"].startswith("depsync.reconcile/")
    assert (runner.temp / "step-summary.md").read_text().startswith("## depsync reconcile")


def test_code_conflicts_open_a_draft_and_the_next_run_updates_it(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    """small_repo: pyproject.toml, uv.lock and CODEOWNERS conflict and main's zeta pin makes
    dev's lock stale; app.py conflicts as code. Night 1 opens a draft; on night 2 main has moved
    and the same PR is updated in place, the branch force-pushed over the bot's own merge."""
    repo = small_repo
    conflicting_code(repo)
    publish(repo, "dev", "main")
    night1 = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(night1, requirement)
    assert ok, night1.describe()
    assert outputs["outcome"] == "opened" and outputs["conflicted"] == "1"
    assert "conflicts in:" in night1.step("merge main").stdout
    head1 = remote_head(github.remote, BRANCH)
    assert head1 and parents(github.remote, head1) == [remote_head(github.remote, "dev"), remote_head(github.remote, "main")]
    # the triple is dev's and relocked, the code is left with its markers for the resolver
    assert show(github.remote, BRANCH, ".github/CODEOWNERS") == "* @dev-team\n"
    assert "<<<<<<<" in show(github.remote, BRANCH, "app.py") and show(github.remote, BRANCH, "lib.py") == "VALUE = 1\n"
    assert "<<<<<<<" not in show(github.remote, BRANCH, "uv.lock")
    message = subprocess.run(["git", "-C", str(github.remote), "log", "-1", "--format=%B", BRANCH], capture_output=True, text=True, check=True).stdout
    assert "Committed with conflict markers, for the resolver (1):\n\t\"app.py\"" in message
    (pr,) = github.state["prs"]
    assert pr["draft"] and pr["labels"] == ["needs-review"] and github.state["labels"] == ["needs-review"]  # the label was created first
    assert "1 code file still conflicted" in pr["body"] and "`app.py`" in pr["body"]
    assert "relocked with uv" in pr["body"] and "A draft with conflict markers" in pr["body"]
    # what the first (unlocked) reconcile did is still said after the relock
    assert "### Files restored to dev's version\n\n- `.github/CODEOWNERS`" in pr["body"]
    assert "Merge with a merge commit, never squash" in pr["body"]

    commit_files(repo, "main", {"lib.py": "VALUE = 2\n"}, "main: lib.py again")
    publish(repo, "dev", "main")
    night2 = make_runner(tmp_path, "night-2", github, material)
    ok, outputs = run_sync(night2, requirement)
    assert ok, night2.describe()
    assert outputs["outcome"] == "updated" and outputs["pull-request"] == pr["url"]
    head2 = remote_head(github.remote, BRANCH)
    assert head2 != head1 and parents(github.remote, head2)[1] == remote_head(github.remote, "main")
    assert show(github.remote, BRANCH, "lib.py") == "VALUE = 2\n"
    (updated,) = github.state["prs"]  # one PR, its body replaced
    assert updated["number"] == 1 and updated["draft"] and updated["labels"] == ["needs-review"]
    assert len(github.calls("pr create")) == 1 and len(github.calls("pr edit")) == 1 and len(github.calls("label create")) == 1
    assert updated["body"] == github.calls("pr edit")[0]["body"] and updated["body"].count("## depsync reconcile") == 1
    assert len(github.uploads) == 2 and len({u["name"] for u in github.uploads}) == 2


def test_a_resolution_in_progress_is_never_overwritten(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    repo = small_repo
    conflicting_code(repo)
    publish(repo, "dev", "main")
    assert run_sync(make_runner(tmp_path, "night-1", github, material), requirement)[0]
    # a person resolves app.py on the sync branch
    person = tmp_path / "person"
    subprocess.run(["git", "clone", "-q", "-b", BRANCH, str(github.remote), str(person)], check=True)
    (person / "app.py").write_text("print('dev and main')\n")
    git(person, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "commit", "-qam", "resolve app.py")
    git(person, "push", "-q", "origin", BRANCH)
    resolved = remote_head(github.remote, BRANCH)

    commit_files(repo, "main", {"lib.py": "VALUE = 2\n"}, "main: lib.py again")
    publish(repo, "dev", "main")
    night2 = make_runner(tmp_path, "night-2", github, material)
    ok, outputs = run_sync(night2, requirement)
    assert ok, night2.describe()
    assert outputs["outcome"] == "held"
    assert "has commits that are not the sync bot's" in night2.step("merge main").stdout
    assert remote_head(github.remote, BRANCH) == resolved and github.calls("pr edit") == []
    assert not night2.step("reconcile").ran and not night2.step("open, update or close the PR").ran
    artifact = github.artifacts / github.uploads[-1]["name"]
    held = (artifact / "held.md").read_text()
    assert "1 commit(s)" in held and resolved[:7] in held and "person@" not in held
    assert "## depsync sync: held" in (night2.temp / "step-summary.md").read_text()

    # once the PR is merged (with a merge commit) the next night syncs again
    git(person, "fetch", "-q", "origin")
    git(person, "checkout", "-q", "-B", "dev", "origin/dev")
    git(person, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "merge", "-q", "--no-ff", "-m", "Merge sync PR", f"origin/{BRANCH}")
    git(person, "push", "-q", "origin", "dev")
    night3 = make_runner(tmp_path, "night-3", github, material)
    ok, outputs = run_sync(night3, requirement)
    assert ok, night3.describe()
    assert outputs["outcome"] == "updated"  # the PR is still open in the stand-in: updated, not a second one
    assert show(github.remote, BRANCH, "lib.py") == "VALUE = 2\n" and show(github.remote, BRANCH, "app.py") == "print('dev and main')\n"


def test_a_failed_relock_keeps_the_summary_and_the_plan(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path, engine: Any) -> None:
    """The relock fails (the CI image is not on the engine): nothing is pushed and no PR is
    touched, but the summary and the plan, with the failure at the top and the code files still
    to resolve, are uploaded."""
    conflicting_code(small_repo)
    publish(small_repo, "dev", "main")
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(runner, requirement, **{"lock-runner": "docker", "ci-image": "depsync-test:does-not-exist"})
    assert not ok
    assert runner.step("reconcile").returncode == 2, runner.describe()
    assert not runner.step("push the sync branch").ran and remote_head(github.remote, BRANCH) is None
    assert github.state["calls"] == [] and outputs["outcome"] == ""
    (upload,) = github.uploads
    artifact = github.artifacts / upload["name"]
    plan = json.loads((artifact / "plan.json").read_text())
    assert plan["failure"] and "does-not-exist" in plan["failure"]
    assert plan["unmerged"] == ["app.py"]
    assert "does-not-exist" in (artifact / "summary.md").read_text()
    assert "reconcile: failure" in (artifact / "steps.txt").read_text()
    assert "does-not-exist" in (runner.temp / "step-summary.md").read_text()


def test_a_merge_that_fails_otherwise_stops_but_keeps_its_log(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    git(small_repo, "checkout", "-q", "--orphan", "unrelated")
    git(small_repo, "commit", "-qm", "another history")
    publish(small_repo, "dev", "unrelated")
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, _ = run_sync(runner, requirement)
    assert not ok
    merge = runner.step("merge main")
    assert merge.returncode == 128 and "git merge failed (exit 128)" in merge.stdout
    assert not runner.step("commit the merge").ran and remote_head(github.remote, BRANCH) is None and github.state["calls"] == []
    artifact = github.artifacts / github.uploads[0]["name"]
    assert "unrelated histories" in (artifact / "merge.log").read_text()
    assert "merge: failure" in (artifact / "steps.txt").read_text()


def test_nothing_to_sync_stops_quietly(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    publish(small_repo, "dev", "dev~1")  # main is already in dev
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(runner, requirement)
    assert ok, runner.describe()
    assert outputs["outcome"] == "nothing" and "nothing to sync" in runner.step("merge main").stdout
    assert not runner.step("reconcile").ran and remote_head(github.remote, BRANCH) is None
    assert [c["args"][:2] for c in github.state["calls"]] == [["pr", "list"]]  # no sync PR open: nothing to close


def test_a_sync_pr_main_no_longer_needs_is_closed_with_the_reason(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str,
                                                                   tmp_path: Path) -> None:
    """Night 1 opens a PR; then someone merges main into dev another way. Night 2 has nothing to
    sync: the bot's PR is closed with a comment that says why (a fork's PR stays open)."""
    repo = small_repo
    git(repo, "branch", "main-code", "dev")
    commit_files(repo, "main-code", {"app.py": "print('main')\n"}, "main: code only")
    publish(repo, "dev", "main-code")
    assert run_sync(make_runner(tmp_path, "night-1", github, material), requirement)[0]
    state = github.state
    state["prs"].append({"number": 2, "url": "https://github.example.invalid/fork/pull/2", "head": BRANCH, "base": "dev", "title": "fork", "body": "",
                         "draft": False, "labels": [], "state": "open", "cross": True})
    github.state_file.write_text(json.dumps(state))
    git(repo, "checkout", "-q", "dev")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge main by hand", "main-code")
    publish(repo, "dev", "main-code")
    night2 = make_runner(tmp_path, "night-2", github, material)
    ok, outputs = run_sync(night2, requirement)
    assert ok, night2.describe()
    assert outputs["outcome"] == "nothing"
    ours, fork = github.state["prs"]
    assert ours["state"] == "closed" and "already has everything from main" in ours["closing_comment"]
    assert fork["state"] == "open"
    assert "closed https://github.example.invalid/example/project/pull/1" in (night2.temp / "step-summary.md").read_text()


def test_a_bad_branch_input_stops_before_anything(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    publish(small_repo, "dev", "main")
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, _ = run_sync(runner, requirement, **{"sync-branch": "sync/x\nOUT=/tmp/elsewhere"})
    assert not ok and runner.step("prepare").returncode != 0
    assert "OUT" not in runner.env and not runner.step("merge main").ran and github.state["calls"] == []


def test_a_squash_merged_sync_is_reported_on_the_next_night(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    """Night 1's PR is merged with GitHub's "Squash and merge": main's changes land on dev as one
    commit without main as a parent. Night 2 merges the same changes again from the old
    merge-base (the file main changed since conflicts), and the new PR says why, with the repair."""
    repo = small_repo
    git(repo, "branch", "main-code", "dev")
    for name in ("a", "b", "c"):
        commit_files(repo, "main-code", {f"src/{name}.py": f"{name.upper()} = 1\n"}, f"main: {name}")
    publish(repo, "dev", "main-code")
    assert run_sync(make_runner(tmp_path, "night-1", github, material), requirement)[0]
    # the squash merge, as GitHub makes it; the stand-in's PR is merged
    person = tmp_path / "person"
    subprocess.run(["git", "clone", "-q", "-b", "dev", str(github.remote), str(person)], check=True)
    git(person, "merge", "-q", "--squash", f"origin/{BRANCH}")
    git(person, "-c", "user.name=A Person", "-c", "user.email=person@example.invalid", "commit", "-qm", "Sync main into dev (#1)")
    git(person, "push", "-q", "origin", "dev")
    state = github.state
    state["prs"][0]["state"] = "merged"
    github.state_file.write_text(json.dumps(state))

    git(repo, "fetch", "-q", "origin")
    commit_files(repo, "main-code", {"src/a.py": "A = 2\n"}, "main: a again")
    git(repo, "push", "-q", "--force", "origin", "main-code:refs/heads/main")
    night2 = make_runner(tmp_path, "night-2", github, material)
    ok, outputs = run_sync(night2, requirement)
    assert ok, night2.describe()
    assert outputs["outcome"] == "opened" and outputs["conflicted"] == "1"  # src/a.py, merged again from the old base
    new = github.state["prs"][-1]
    assert new["number"] == 2 and new["draft"]
    assert "Syncs that landed on dev without main as a parent" in new["body"] and "the merge-base is stuck at" in new["body"]
    assert "git merge -s ours" in new["body"]
    guard = night2.step("guard")
    assert "without main as a parent" in guard.stdout + guard.stderr
    plan = json.loads((github.artifacts / github.uploads[-1]["name"] / "plan.json").read_text())
    assert len(plan["squashed_syncs"]["findings"]) == 1


def test_a_forks_pr_of_the_same_branch_name_is_not_ours_and_drafts_can_be_off(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str,
                                                                               tmp_path: Path) -> None:
    """`gh pr list --head` matches the branch name only: a fork's PR from its own
    `sync/main-into-dev` is left alone. With `drafts: false` (plans without draft PRs) the PR
    that needs review is opened ready, with the label."""
    conflicting_code(small_repo)
    publish(small_repo, "dev", "main")
    fork = {"number": 1, "url": "https://github.example.invalid/fork/pull/1", "head": BRANCH, "base": "dev", "title": "not ours", "body": "fork",
            "draft": False, "labels": [], "state": "open", "cross": True}
    github.state_file.write_text(json.dumps({"labels": [], "prs": [fork], "calls": []}))
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(runner, requirement, drafts=False)
    assert ok, runner.describe()
    assert outputs["outcome"] == "opened" and outputs["conflicted"] == "1"
    theirs, ours = github.state["prs"]
    assert theirs == fork and github.calls("pr edit") == []
    assert ours["number"] == 2 and not ours["draft"] and ours["labels"] == ["needs-review"]
    assert "A draft with conflict markers" in ours["body"]  # the resolver's instructions still come with it


HOSTILE_NAMES = [
    "ci [skip ci]/app.py",  # a directory whose name would switch CI off for the sync commit
    "[CI SKIP] ***NO_CI*** [skip actions].py",
    "x\nCo-authored-by: Mallory <mallory@example.invalid>\n.py",  # a name with newlines: trailers
    "::error::pwned.py",  # printed raw by git: a workflow command
    "  ::stop-commands::tok.py",
    "a ##[stop-commands]tok b.py",  # the older form, read anywhere in a line
    ":(glob)*",  # a pathspec, were it read as one
]


def test_hostile_conflicted_path_names_stay_inert(small_repo: Path, github: GitHub, material: LocalMaterial, requirement: str, tmp_path: Path) -> None:
    """main and dev both add files whose names are written to act on the sinks they reach: the
    sync commit's message has their count and a quoted list with no skip marker, no second line
    from a name and no trailer, and the job log shows no workflow command."""
    repo = small_repo
    commit_files(repo, "dev", {name: "dev\n" for name in HOSTILE_NAMES}, "dev: files")
    commit_files(repo, "main", {name: "main\n" for name in HOSTILE_NAMES}, "main: files")
    publish(repo, "dev", "main")
    runner = make_runner(tmp_path, "night-1", github, material)
    ok, outputs = run_sync(runner, requirement)
    assert ok, runner.describe()
    assert outputs["conflicted"] == str(len(HOSTILE_NAMES))
    head = remote_head(github.remote, BRANCH)
    assert head is not None
    message = subprocess.run(["git", "-C", str(github.remote), "log", "-1", "--format=%B", head], capture_output=True, text=True, check=True).stdout
    lowered = message.lower()
    assert not any(marker in lowered for marker in ("[skip ci]", "[ci skip]", "[skip actions]", "***no_ci***")), message
    assert f"Committed with conflict markers, for the resolver ({len(HOSTILE_NAMES)}):" in message
    listed = message.rstrip("\n").split("):\n", 1)[1].splitlines()
    assert len(listed) == len(HOSTILE_NAMES) and all(line.startswith('\t"') and line.endswith('"') for line in listed), message
    assert '\t"ci \\[skip ci\\]/app.py"' in listed and '\t"x\\nCo-authored-by: Mallory <mallory@example.invalid>\\n.py"' in listed
    trailers = subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True, check=True).stdout
    assert trailers == "" and not any(line.lower().startswith("co-authored-by") for line in message.splitlines())
    # the files are committed as they are, with their markers: each name is that file, none a pattern
    files = subprocess.run(["git", "-C", str(github.remote), "ls-tree", "-r", "-z", "--name-only", head], capture_output=True, text=True, check=True).stdout.split("\0")
    assert set(HOSTILE_NAMES) <= set(files)
    for step in runner.log:  # the job log: no line the runner reads as a workflow command
        for line in (step.stdout + step.stderr).splitlines():
            assert not line.lstrip().startswith("::") and "##[" not in line, (step.name, line)
    assert "pwned.py" in runner.step("merge main").stdout  # shown, inert
