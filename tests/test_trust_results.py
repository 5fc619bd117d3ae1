"""what the relock hands back, and which image relocks.

- A build backend in the work copy swaps uv.lock for a symlink to a host file (uv leaves a
  fresh lock alone, so the link is what is left); depsync must not read through it.
- The relock image comes from dev's committed image hint, never main's; main changing it
  is flagged.
- The lock container runs depsync's command, not the image's ENTRYPOINT.
Real uv (host and test image), real git, real engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import IMAGE, git, init_repo, write_files
from support import build_backend

SWAPPING_BACKEND = build_backend(r'''
import os

def _swap():
    # uv read the fresh lock already and will not rewrite it: the link is what depsync finds
    if os.path.exists("swap-target.txt") and not os.path.islink("uv.lock"):
        target = open("swap-target.txt").read().strip()
        os.unlink("uv.lock")
        os.symlink(target, "uv.lock")
''', hook="_swap", name="demo")


def swapping_project(root: Path, host_file: Path, cache: Path) -> Path:
    write_files(root, {
        "pyproject.toml": (
            '[project]\nname = "demo"\ndynamic = ["version", "dependencies"]\nrequires-python = ">=3.10"\n\n'
            '[build-system]\nrequires = []\nbuild-backend = "swap"\nbackend-path = ["_backend"]\n'
        ),
        "_backend/swap.py": SWAPPING_BACKEND,
    })
    locked = subprocess.run(["uv", "lock", "--offline", "-q"], cwd=root, capture_output=True, text=True, env=dict(os.environ, UV_CACHE_DIR=str(cache)))
    assert locked.returncode == 0, locked.stderr
    (root / "swap-target.txt").write_text(str(host_file))
    return root


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    path = tmp_path / "host-secret.txt"
    path.write_text('version = 1\n# the caller\'s private host file\n')
    return path


def test_the_local_runner_never_reads_a_lock_through_a_link(tmp_path: Path, host_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from depsync.errors import DepsyncError
    from depsync.shell.runners.local import LocalRunner

    project = swapping_project(tmp_path / "proj", host_file, tmp_path / "uv-cache-a")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache-b"))  # cold: uv asks the backend
    before = (project / "uv.lock").read_bytes()
    with pytest.raises(DepsyncError, match="is a symlink"):
        LocalRunner().lock(project, [], 120)
    assert (project / "uv.lock").read_bytes() == before


@pytest.mark.docker
def test_the_docker_runner_never_reads_a_lock_through_a_link(engine, tmp_path: Path, host_file: Path) -> None:  # type: ignore[no-untyped-def]
    from depsync.errors import DepsyncError
    from depsync.shell.runners.docker import DockerRunner

    project = swapping_project(tmp_path / "proj", host_file, tmp_path / "uv-cache")
    volume = f"depsync-test-cache-{uuid.uuid4().hex[:8]}"
    try:
        with pytest.raises(DepsyncError, match="is a symlink"):
            DockerRunner(IMAGE, cache_volume=volume, environ=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))).lock(project, [], 300)
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)


def test_a_result_that_is_not_a_plain_file_is_refused(tmp_path: Path) -> None:
    from depsync.errors import DepsyncError
    from depsync.shell.runners.workcopy import read_result

    (tmp_path / "outside").write_text("x")
    assert read_result(tmp_path) is None
    os.link(tmp_path / "outside", tmp_path / "uv.lock")  # a hard link: a second name for a file elsewhere
    with pytest.raises(DepsyncError, match="not a plain file"):
        read_result(tmp_path)
    (tmp_path / "uv.lock").unlink()
    os.mkfifo(tmp_path / "uv.lock")  # a FIFO would block a plain open forever
    with pytest.raises(DepsyncError, match="not a plain file"):
        read_result(tmp_path)


# -- the relock image --------------------------------------------------------------------------

def test_reconcile_relocks_in_devs_image_and_flags_mains_hint(tmp_path: Path) -> None:
    from depsync.commands import reconcile

    lock = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { virtual = "." }\n'
    pyproject = '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n'
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject, "uv.lock": lock, "docker/.ngc_version.dev": f"{IMAGE}\n",
                                          "docker/Dockerfile.ci.dev": "FROM debian:12\n"}, branch="dev")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "docker/.ngc_version.dev").write_text("attacker.example/steal:latest\n")
    git(repo, "commit", "-qam", "main: another image")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    git(repo, "merge", "-q", "main")
    assert (repo / "docker/.ngc_version.dev").read_text().startswith("attacker")
    env = dict(os.environ, DEPSYNC_OWNER_REF="dev", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    plan = tmp_path / "plan.json"
    result = subprocess.run([sys.executable, "-m", "depsync", "reconcile", "--dry-run", "--no-fetch", "--main", "main", "--plan-json", str(plan)], cwd=repo, capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stderr
    assert json.loads(plan.read_text())["hint_drift"] == ["docker/.ngc_version.dev"]
    assert "main changed the image hint `docker/.ngc_version.dev`" in result.stdout
    # the runner reconcile would relock with: dev's hint, not the merged tree's
    options = reconcile.ReconcileOptions(repo, dev="dev", main="main", runner="docker")
    _, config, _, dev_commit = reconcile.plan(options)
    runner, how = reconcile._runner(options, config, dev_commit)
    assert getattr(runner, "image", None) == IMAGE, how


@pytest.mark.docker
def test_the_lock_container_does_not_run_the_images_entrypoint(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import indexed_project

    from depsync.shell.runners.docker import DockerRunner

    tag = "depsync-test:entrypoint"
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text(
        f"FROM {IMAGE}\n"
        "RUN printf '#!/bin/sh\\necho ENTRYPOINT-RAN >&2\\nexec \"$@\"\\n' > /entry.sh && chmod 755 /entry.sh\n"
        'ENTRYPOINT ["/entry.sh"]\n'
    )
    engine.images.build(path=str(context), tag=tag, rm=True)
    project = indexed_project(tmp_path / "proj")
    volume = f"depsync-test-cache-{uuid.uuid4().hex[:8]}"
    try:
        result = DockerRunner(tag, cache_volume=volume, environ=dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))).lock(project, [], 300)
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)
    assert result.returncode == 0, result.output
    assert "ENTRYPOINT-RAN" not in result.output


# -- the local runner contains what it starts ----------------------------------------------------

DAEMON_BACKEND = build_backend(r'''
import os, sys, time

def _daemon():
    marker = open("marker-path.txt").read().strip()
    if os.fork() == 0:
        os.setsid()  # out of uv's process group: a group kill misses it
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # like a real daemon: uv does not wait for its output
                os.dup2(null, fd)
            with open(marker + ".pid", "w") as handle:
                handle.write(str(os.getpid()))
            time.sleep(20)
            open(marker, "w").write("the daemon outlived the lock\n")
        os._exit(0)
''', hook="_daemon", name="demo", on_requires=False)


def test_a_setsid_daemon_of_a_backend_does_not_outlive_the_local_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from depsync.shell.runners.local import LocalRunner

    marker = tmp_path / "outlived"
    project = tmp_path / "proj"
    write_files(project, {
        "pyproject.toml": ('[project]\nname = "demo"\ndynamic = ["version", "dependencies"]\nrequires-python = ">=3.10"\n\n'
                           '[build-system]\nrequires = []\nbuild-backend = "daemon"\nbackend-path = ["_backend"]\n'),
        "_backend/daemon.py": DAEMON_BACKEND,
        "marker-path.txt": str(marker),
    })
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    result = LocalRunner().lock(project, ["--offline"], 120)
    assert result.returncode == 0, result.output
    pid = int(Path(str(marker) + ".pid").read_text())
    assert not marker.exists()
    assert not os.path.exists(f"/proc/{pid}") or " Z " in Path(f"/proc/{pid}/stat").read_text()  # killed (at most a zombie of init)


def test_the_next_local_run_sweeps_what_a_sigkilled_one_left(tmp_path: Path) -> None:
    import signal
    import time

    project = tmp_path / "proj"
    write_files(project, {"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n'})
    fake_uv = tmp_path / "bin" / "uv"
    fake_uv.parent.mkdir()
    real_uv = subprocess.run(["which", "uv"], capture_output=True, text=True).stdout.strip()
    fake_uv.write_text(f'#!/bin/sh\ncase "$1" in lock) sleep 60;; esac\nexec {real_uv} "$@"\n')
    fake_uv.chmod(0o755)
    env = dict(os.environ, PATH=f"{fake_uv.parent}:{os.environ['PATH']}", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    killed = subprocess.Popen([sys.executable, "-m", "depsync", "lock", "--runner", "local", str(project)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not [p for p in tmp_path.iterdir() if ".proj.depsync-" in p.name] and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    left = [p for p in tmp_path.iterdir() if ".proj.depsync-" in p.name]
    assert left  # SIGKILL: nothing in depsync ran
    again = subprocess.run([sys.executable, "-m", "depsync", "lock", "--runner", "local", str(project)], env=dict(env, PATH=os.environ["PATH"]), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert not [p for p in tmp_path.iterdir() if ".proj.depsync-" in p.name]  # swept
    sleeping = subprocess.run(["pgrep", "-f", f"{fake_uv}"], capture_output=True, text=True).stdout.split()
    assert not sleeping  # and the uv it left running there is gone
