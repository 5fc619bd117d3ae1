"""No false `lock-stale` error without uv's word: `depsync check` confirms a static stale
verdict with a real uv that runs offline (commands/check.py confirm_stale, uv_confirm.py).

Real projects locked by real uv (tests/uvprojects.py material). The disagreement is real too:
a marker too large for depsync to compare by meaning falls back to text (model/markers.py),
uv writes it rewritten (`python_full_version`), so the static model says stale where uv says
fresh; that is the one shape where depsync knowingly errs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from uvprojects import (
    FAKE_BACKEND_TOML,
    LocalMaterial,
    fake_backend_files,
    lock_project,
    write_project,
)

from depsync.core.rules.docs import DOCS
from depsync.core.rules.registry import RULES

# a setting depsync's static model does not model (uv_settings.UNMODELLED): the static verdict
# is "stale, only uv can say", and uv accepts the lock it wrote with it
UNMODELLED = '[tool.uv]\nno-sources = true\n'


def pyproject(material: LocalMaterial, dependencies: list[str], settings: str = "") -> str:
    deps = ", ".join(json.dumps(d) for d in dependencies)
    return f'[project]\nname = "confirm"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = [{deps}]\n' + settings + material.index_toml()


def check(project: Path, env: dict[str, str], *args: str, module: str = "depsync") -> tuple[int, list[dict]]:
    done = subprocess.run([sys.executable, "-m", module, "check", str(project), "--format", "json", *args], capture_output=True, text=True, env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["findings"]


@pytest.fixture
def env(material: LocalMaterial, tmp_path: Path) -> dict[str, str]:
    return {**material.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}


@pytest.fixture
def disagreeing(material: LocalMaterial, tmp_path: Path) -> Path:
    project = write_project(tmp_path / "wide", pyproject(material, ["alpha", "gamma"], UNMODELLED))
    lock_project(project, material.env)
    return project


def test_static_model_disagrees_is_a_registered_documented_warning() -> None:
    rule = RULES["static-model-disagrees"]
    assert str(rule.severity) == "warning" and "static-model-disagrees" in DOCS


def test_uv_accepting_the_lock_turns_the_static_error_into_one_warning(disagreeing: Path, env: dict[str, str]) -> None:
    code, findings = check(disagreeing, env, "--static")
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"]
    assert "uv not asked (--static)" in findings[0]["message"]

    code, findings = check(disagreeing, env)
    assert code == 0
    (finding,) = findings
    assert finding["rule"] == "static-model-disagrees" and finding["severity"] == "warning"
    # both answers: what depsync's model said, and which uv accepted the lock
    assert "depsync's static model says uv.lock is stale ([tool.uv] no-sources" in finding["message"]
    assert "but uv 0.13.9 `uv lock --check --offline` accepts it" in finding["message"]
    assert "report" in finding["fix"]


def test_uv_agreeing_says_so(material: LocalMaterial, tmp_path: Path, env: dict[str, str]) -> None:
    project = write_project(tmp_path / "stale", pyproject(material, ["alpha>=1.0"]))
    lock_project(project, material.env)
    (project / "pyproject.toml").write_text(pyproject(material, ["alpha>=2.0"]))
    code, findings = check(project, env)
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"]
    assert "(uv 0.13.9 agrees: Resolving despite existing lockfile due to mismatched requirements for: `confirm==0.1.0`)" in findings[0]["message"]


def test_without_a_usable_uv_the_finding_is_the_static_verdict(disagreeing: Path, env: dict[str, str], tmp_path: Path) -> None:
    no_uv = {**env, "PATH": str(tmp_path / "empty-bin")}
    code, findings = check(disagreeing, no_uv)
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"]
    assert "(depsync's static verdict: no uv that runs offline" in findings[0]["message"]


def test_a_pin_that_is_not_cached_falls_back_to_the_host_uv_offline(disagreeing: Path, env: dict[str, str]) -> None:
    """The pinned uv is used only when it runs without the network; nothing is downloaded."""
    (disagreeing / "Dockerfile").write_text("FROM python:3.12\nARG UV_VERSION=0.7.2\nRUN pip install uv==${UV_VERSION}\nRUN uv sync --locked\n")
    offline = {**env, "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}
    code, findings = check(disagreeing, offline, "--dockerfile", "Dockerfile")
    # the lock (written by this uv) is newer than the 0.7.2 pin: that warning is real too
    assert code == 0 and [f["rule"] for f in findings if f["rule"] != "uv-lock-newer-than-pin"] == ["static-model-disagrees"]
    (disagrees,) = [f for f in findings if f["rule"] == "static-model-disagrees"]
    assert "uv 0.13.9" in disagrees["message"]
    assert not (Path(env["XDG_CACHE_HOME"]) / "depsync" / "uv" / "0.7.2").exists()


def test_uv_runs_on_a_copy_and_no_build_backend_runs(material: LocalMaterial, tmp_path: Path, env: dict[str, str]) -> None:
    """The project tree is left exactly as it was, and the repository's build backend never
    runs (`--no-build`): here one that leaves a trace when it does, as it did for `uv lock`."""
    trace = tmp_path / "backend-ran"
    text = pyproject(material, ["alpha"], UNMODELLED).replace('version = "0.1.0"\n', 'dynamic = ["version"]\n')
    text += '\n[tool.fakebackend]\nversion = "0.1.0"\n\n' + FAKE_BACKEND_TOML.replace('"fakebackend"', '"trap"')
    trap = f"from pathlib import Path\nPath({str(trace)!r}).write_text('ran')\nfrom fakebackend import *  # noqa\n"
    project = write_project(tmp_path / "copy", text, {**fake_backend_files(), "_backend/trap.py": trap})
    lock_project(project, material.env)
    assert trace.exists()  # uv lock ran it
    trace.unlink()
    before = {p: p.stat().st_mtime_ns for p in project.rglob("*")}
    code, findings = check(project, env)
    assert not trace.exists(), "the confirmation ran the repository's build backend"
    assert {p: p.stat().st_mtime_ns for p in project.rglob("*")} == before
    (finding,) = findings
    # uv either reads the static metadata (and accepts the lock) or cannot without a build (no verdict)
    assert (code, finding["rule"]) == (0, "static-model-disagrees") or (
        code == 1 and "depsync's static verdict: uv 0.13.9 gave no verdict offline" in finding["message"]
    ), finding


def interpreter_trap(project: Path, marker: Path) -> None:
    """A `.python-version` (and `.python-versions`) naming a script of the tree that leaves a
    trace when run, then behaves as a Python (uv executes the interpreter such a file names)."""
    script = project / "tools" / "python"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    for name in (".python-version", ".python-versions"):
        (project / name).write_text(f"{script}\n")


def test_the_confirmation_never_runs_an_interpreter_the_tree_names(disagreeing: Path, env: dict[str, str], tmp_path: Path) -> None:
    """uv runs the path a .python-version names (`--no-build` does not stop interpreter
    discovery): the copy has none, and uv gets depsync's interpreter. Without the operator's
    UV_PYTHON, as in CI: the one running depsync."""
    marker = tmp_path / "interpreter-ran"
    interpreter_trap(disagreeing, marker)
    no_choice = {k: v for k, v in env.items() if k != "UV_PYTHON"}
    code, findings = check(disagreeing, no_choice)
    assert not marker.exists(), "the confirmation ran an interpreter the tree names"
    assert code == 0 and [f["rule"] for f in findings] == ["static-model-disagrees"]  # uv still answered


def test_the_operators_uv_python_is_the_interpreter(disagreeing: Path, env: dict[str, str], tmp_path: Path) -> None:
    """UV_PYTHON is the operator's: it is the interpreter uv gets, even one uv cannot use."""
    marker = tmp_path / "interpreter-ran"
    interpreter_trap(disagreeing, marker)
    code, findings = check(disagreeing, {**env, "UV_PYTHON": str(tmp_path / "no-such-python")})
    assert not marker.exists()
    assert code == 1 and "depsync's static verdict: uv 0.13.9 gave no verdict offline" in findings[0]["message"], findings


def test_a_confirmed_result_is_never_replayed_from_the_cache(disagreeing: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The static findings may be cached, but uv's word is asked on every run: with uv gone
    the next run says it is the static verdict (no replay of the earlier warning)."""
    for module in ("depsync.entry", "depsync.entry"):
        assert check(disagreeing, env, module=module)[0] == 0
    code, findings = check(disagreeing, {**env, "PATH": str(tmp_path / "empty-bin")}, module="depsync.entry")
    assert code == 1 and "depsync's static verdict" in findings[0]["message"]
    assert check(disagreeing, env, module="depsync.entry")[0] == 0


def test_the_cost_is_paid_only_on_a_stale_static_verdict(material: LocalMaterial, tmp_path: Path, env: dict[str, str]) -> None:
    """A fresh lock never runs uv: with a uv that fails on any call on PATH, the check is clean."""
    project = write_project(tmp_path / "fresh", pyproject(material, ["alpha"]))
    lock_project(project, material.env)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    trap = bin_dir / "uv"
    trap.write_text("#!/bin/sh\necho 'uv was run' >&2\nexit 3\n")
    trap.chmod(0o755)
    code, findings = check(project, {**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert (code, findings) == (0, [])


def test_reconcile_and_guard_ask_uv_too(material: LocalMaterial, tmp_path: Path) -> None:
    """`[tool.uv] no-sources = true` changes what uv accepts as a lock and depsync does not model it,
    so depsync's static model calls the lock stale (only uv can call it fresh). `depsync check` already
    asked uv; reconcile's closing check and the guard did not, and failed a sync uv accepts
    (seen on a real ML repository's state). Real git, real uv, a real sync merge."""
    from conftest import git

    project = tmp_path / "app"
    text = pyproject(material, ["alpha"]) + "\n[tool.uv]\nno-sources = true\n"
    write_project(project, text)
    lock_project(project, material.env)
    env = {**material.env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "DEPSYNC_OWNER_REF": "dev"}
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    git(project, "branch", "dev")
    (project / "pyproject.toml").write_text(text.replace('dependencies = ["alpha"]', 'dependencies = ["alpha", "gamma"]'))
    lock_project(project, material.env)
    git(project, "commit", "-qam", "main: gamma")
    git(project, "checkout", "-q", "-b", "sync", "dev")
    git(project, "merge", "-q", "--no-ff", "--no-commit", "main")
    run = [sys.executable, "-m", "depsync"]
    plan = tmp_path / "plan.json"
    reconciled = subprocess.run([*run, "reconcile", "--runner", "local", "--no-fetch", "--plan-json", str(plan)], cwd=project, capture_output=True, text=True, env=env)
    assert reconciled.returncode in (0, 1), reconciled.stdout + reconciled.stderr  # 1: main's new gamma is flagged, not taken
    findings = json.loads(plan.read_text())["findings"]
    assert not [f for f in findings if f["severity"] == "error"]
    assert not [f for f in findings if f["rule"] == "lock-stale"] and any(f["rule"] == "static-model-disagrees" for f in findings)
    git(project, "commit", "-q", "--no-edit")
    guarded = subprocess.run([*run, "guard"], cwd=project, capture_output=True, text=True, env=env)
    assert guarded.returncode == 0, guarded.stderr
    assert "uv 0.13.9 `uv lock --check --offline` accepts it" in guarded.stderr


MEMBER_WITH_CONFLICTS = (
    '[project]\nname = "kappa"\nversion = "0.2.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'
    '[project.optional-dependencies]\nold = ["beta<2"]\nnew = ["beta>=2"]\n\n'
    '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
    '[tool.uv]\nconflicts = [[{ extra = "old" }, { extra = "new" }]]\n'
)


def workspace_sync(material: LocalMaterial, tmp_path: Path, main_adds: str = '"gamma"', main_settings: str = "") -> tuple[Path, dict[str, str]]:
    """A real workspace whose member declares [tool.uv] conflicts (recorded in the lock's own
    `conflicts`), and a sync merge of main (new root dependencies) into dev (a dependency
    group), relocked."""
    from conftest import git

    project = tmp_path / "ws"
    root = (
        '[project]\nname = "wsroot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["kappa", "alpha"]\n\n'
        '[tool.uv.sources]\nkappa = { workspace = true }\n\n[tool.uv.workspace]\nmembers = ["packages/*"]\n' + material.index_toml()
    )
    write_project(project, root, {"packages/kappa/pyproject.toml": MEMBER_WITH_CONFLICTS})
    lock_project(project, material.env)
    env = {**material.env, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "DEPSYNC_OWNER_REF": "dev"}
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    git(project, "checkout", "-q", "-b", "dev")
    (project / "pyproject.toml").write_text(root + '\n[dependency-groups]\ndev = ["delta"]\n')
    lock_project(project, material.env)
    git(project, "commit", "-qam", "dev: a dev group")
    git(project, "checkout", "-q", "main")
    (project / "pyproject.toml").write_text(root.replace('"kappa", "alpha"]', f'"kappa", "alpha", {main_adds}]').replace("[tool.uv.sources]", main_settings + "\n[tool.uv.sources]", 1))
    lock_project(project, material.env)
    git(project, "commit", "-qam", "main: new dependencies")
    git(project, "checkout", "-q", "-b", "sync", "dev")
    git(project, "merge", "-q", "--no-ff", "--no-commit", "-X", "ours", "main")
    git(project, "checkout", "dev", "--", "uv.lock")  # dev's lock, relocked: as reconcile does
    lock_project(project, material.env)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "sync main")
    return project, env


def test_guard_reads_workspace_members_as_check_does(material: LocalMaterial, tmp_path: Path) -> None:
    """A member's conflicts are in the lock: without the member's pyproject.toml the static model
    calls the lock stale and asks uv (every night). The guard reads the members of the merge
    commit as check does, calls the lock fresh, and runs no uv (a uv on PATH that leaves a
    trace would say so)."""
    project, env = workspace_sync(material, tmp_path)
    assert subprocess.run([sys.executable, "-m", "depsync", "check", "--static"], cwd=project, env=env, capture_output=True).returncode == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    trace = tmp_path / "uv-ran"
    (bin_dir / "uv").write_text(f"#!/bin/sh\ntouch {trace}\nexit 3\n")
    (bin_dir / "uv").chmod(0o755)
    trapped = {**env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    guarded = subprocess.run([sys.executable, "-m", "depsync", "guard"], cwd=project, capture_output=True, text=True, env=trapped)
    assert guarded.returncode == 0, guarded.stderr
    assert not trace.exists(), "guard asked uv about a lock its static model should call fresh"


def test_guard_never_runs_an_interpreter_the_tree_names(material: LocalMaterial, tmp_path: Path) -> None:
    """The sync job runs guard with the push token in .git/config: the merge's .python-version
    names a script, and the confirmation still runs depsync's interpreter only."""
    from conftest import git

    # main brings a setting depsync's static model does not model (UNMODELLED): uv is asked
    project, env = workspace_sync(material, tmp_path, main_settings=UNMODELLED)
    marker = tmp_path / "interpreter-ran"
    interpreter_trap(project, marker)
    git(project, "add", "-A")
    git(project, "commit", "-q", "--amend", "--no-edit")
    no_choice = {k: v for k, v in env.items() if k != "UV_PYTHON"}
    guarded = subprocess.run([sys.executable, "-m", "depsync", "guard"], cwd=project, capture_output=True, text=True, env=no_choice)
    assert not marker.exists(), "guard's confirmation ran an interpreter the tree names"
    assert "accepts it" in guarded.stderr, guarded.stderr
    # the merge took main's .python-version(s): dev's they are (reconcile writes dev's back), so
    # guard says so; the lock itself is no violation, uv accepted it
    assert guarded.returncode == 1 and ".python-version: differs from dev" in guarded.stderr and "uv.lock" not in guarded.stderr.split("violation(s)")[1], guarded.stderr


def test_no_uv_toml_above_the_copy_is_read(material: LocalMaterial, tmp_path: Path) -> None:
    """uv reads a uv.toml in the directories above a project that has no settings of its own;
    the copy lives in the temp directory, where anyone may leave one. Here the lock records a
    cutoff the project no longer sets (stale, for depsync and uv alike), and a planted uv.toml
    with that cutoff would turn uv's "stale" into "fresh": the confirmation never reads it."""
    # settings from the operator's environment only: the project itself has no [tool.uv]
    operator = {**material.env, "UV_FIND_LINKS": str(material.wheels), "UV_NO_INDEX": "1"}
    cutoff = "2030-01-01T00:00:00Z"
    project = write_project(tmp_path / "bare", '[project]\nname = "bare"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha"]\n')
    lock_project(project, {**operator, "UV_EXCLUDE_NEWER": cutoff})
    temp = tmp_path / "shared-tmp"
    temp.mkdir()
    (temp / "uv.toml").write_text(f'exclude-newer = "{cutoff}"\n')
    code, findings = check(project, {**operator, "XDG_CACHE_HOME": str(tmp_path / "xdg"), "TMPDIR": str(temp)})
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"], findings
    assert "uv 0.13.9 agrees" in findings[0]["message"], findings


def test_an_interpreter_outside_requires_python_gives_no_verdict_and_says_what_to_set(material: LocalMaterial, tmp_path: Path, env: dict[str, str]) -> None:
    """uv refuses an interpreter the project's requires-python excludes: the finding keeps the
    static verdict and names the operator's knob."""
    project = write_project(tmp_path / "newer", pyproject(material, ["alpha"]))
    lock_project(project, material.env)
    running = f"{sys.version_info.major}.{sys.version_info.minor + 1}"
    (project / "pyproject.toml").write_text(pyproject(material, ["alpha"]).replace('">=3.10"', f'">={running}"'))
    code, findings = check(project, {k: v for k, v in env.items() if k != "UV_PYTHON"})
    assert code == 1 and [f["rule"] for f in findings] == ["lock-stale"]
    assert "incompatible with the project" in findings[0]["message"] and "set UV_PYTHON" in findings[0]["message"], findings


def test_a_broken_interpreter_shim_on_path_does_not_stop_the_confirmation(disagreeing: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A pyenv shim whose version is not installed answers every `python` on PATH with an error:
    uv is given the interpreter running depsync, so it still confirms (no false error)."""
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python", "python3", f"python3.{sys.version_info.minor}"):
        shim = shims / name
        shim.write_text("#!/bin/sh\necho \"pyenv: version \\`3.9.99' is not installed\" >&2\nexit 1\n")
        shim.chmod(0o755)
    broken = {k: v for k, v in env.items() if k != "UV_PYTHON"}
    broken["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', os.defpath)}"
    code, findings = check(disagreeing, broken)
    assert code == 0 and [f["rule"] for f in findings] == ["static-model-disagrees"], findings
