"""Fault injection: every phase of reconcile and lock, every kind of fault, then the state.

After each fault: uv.lock, pyproject.toml and protected files byte-identical to before,
the merge state unchanged, no container and no temp files left, the right exit code
and one line of message. Real faults where this machine can make them (a read-only
filesystem, a full temp dir, a killed container); injected ones (depsync/faults.py)
for the points in between.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_for, git
from support import containers_left, depsync_in, labelled_containers
from uvprojects import LocalMaterial

KINDS = {"error": 2, "disk-full": 2, "interrupt": 130}
WATCHED = ("pyproject.toml", "uv.lock", ".github/CODEOWNERS")


def state(repo: Path) -> dict[str, object]:
    files = {p: (repo / p).read_bytes() if (repo / p).exists() else None for p in WATCHED}
    leftovers = sorted(str(p.name) for p in (*repo.parent.iterdir(), *repo.rglob("*")) if "depsync" in p.name and p.name != "depsync")
    return {"files": files, "unmerged": git(repo, "diff", "--name-only", "--diff-filter=U"), "status": git(repo, "status", "--porcelain"), "leftovers": leftovers}


def assert_one_line(result: subprocess.CompletedProcess[str], code: int) -> None:
    """The exit code, and exactly one error line (progress lines from uv's log may precede it)."""
    assert result.returncode == code, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith(("depsync: error", "depsync: interrupted", "depsync: internal"))]
    assert len(errors) == 1 and errors[0] == result.stderr.strip().splitlines()[-1], result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture
def merging(small_repo: Path, material: LocalMaterial) -> Path:
    subprocess.run(["git", "-C", str(small_repo), "merge", "-q", "main"], capture_output=True)
    return small_repo


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("point", ["reconcile:before-write", "reconcile:after-write", "reconcile:after-uv", "write:before-replace"])
def test_reconcile_fault_matrix(merging: Path, material: LocalMaterial, point: str, kind: str) -> None:
    before = state(merging)
    env = dict(env_for(material), DEPSYNC_FAULT=f"{point}:{kind}")
    result = depsync(merging, env, "reconcile", "--dev", "dev", "--no-fetch")
    assert_one_line(result, KINDS[kind])
    assert state(merging) == before


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("point", ["lock:after-uv", "write:before-replace"])
def test_lock_fault_matrix(small_repo: Path, material: LocalMaterial, point: str, kind: str) -> None:
    (small_repo / "pyproject.toml").write_text((small_repo / "pyproject.toml").read_text().replace('"alpha"', '"alpha<2"'))
    before = state(small_repo)
    env = dict(env_for(material), DEPSYNC_FAULT=f"{point}:{kind}")
    result = depsync(small_repo, env, "lock", "--runner", "local")
    assert_one_line(result, KINDS[kind])
    assert state(small_repo) == before


def test_reconcile_in_a_read_only_work_tree(merging: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """A real read-only filesystem: a tmpfs holding the repository, remounted read-only."""
    mount = tmp_path / "ro"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        subprocess.run(["cp", "-a", str(merging), str(mount / "app")], check=True)
        repo = mount / "app"
        before = state(repo)
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        result = depsync(repo, env_for(material), "reconcile", "--dev", "dev", "--no-fetch")
        assert_one_line(result, 2)
        assert "Read-only file system" in result.stderr
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        assert state(repo)["files"] == before["files"]
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_lock_with_a_full_temp_dir(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """A real full disk: the docker runner copies the project into a 1 MB tmpfs TMPDIR."""
    import docker

    try:
        docker.from_env().ping()
    except Exception:
        pytest.fail("no Docker engine: run containers/setup-engine.sh")
    mount = tmp_path / "tiny"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        # more than the temp dir holds, where every work copy has it (a file uv does not read is not copied)
        pyproject = small_repo / "pyproject.toml"
        pyproject.write_text(pyproject.read_text() + "\n# " + "x" * (3 * 1024 * 1024) + "\n")
        before = state(small_repo)
        client = docker.from_env()
        before_ids = {c.id for c in labelled_containers(client)}
        env = dict(env_for(material), TMPDIR=str(mount))
        result = depsync(small_repo, env, "lock", "--runner", "docker", "--image", "depsync-test:bookworm")
        assert_one_line(result, 2)
        assert "No space left on device" in result.stderr
        assert state(small_repo) == before
        assert list(mount.iterdir()) == []
        assert containers_left(client, before_ids) == []  # none of this run's
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_container_killed_mid_run(small_repo: Path, material: LocalMaterial, slow_image: str) -> None:
    """The engine loses the container under uv (killed from outside): lock unchanged, nothing left."""
    import time

    import docker

    client = docker.from_env()
    before_ids = {c.id for c in labelled_containers(client)}
    (small_repo / "pyproject.toml").write_text((small_repo / "pyproject.toml").read_text().replace('"alpha"', '"alpha<2"'))
    before = state(small_repo)
    process = subprocess.Popen(
        [sys.executable, "-m", "depsync", "lock", str(small_repo), "--runner", "docker", "--image", slow_image],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env_for(material),
    )
    deadline = time.monotonic() + 60
    while True:
        # this run's lock container only (the run label carries its pid): never another run's
        running = [c for c in labelled_containers(client, "io.depsync.role=lock", running_only=True)
                   if c.labels.get("io.depsync.run", "").split(":")[-2:-1] == [str(process.pid)]]
        if running:
            try:
                running[0].kill()
            except docker.errors.NotFound:  # it ended on its own meanwhile: look again
                continue
            break
        assert time.monotonic() < deadline
        time.sleep(0.2)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 2 and "lock failed; uv.lock is unchanged" in stderr
    assert state(small_repo) == before
    assert [c for c in containers_left(client, before_ids) if c.labels.get("io.depsync.run", "").split(":")[-2:-1] == [str(process.pid)]] == []


def depsync(repo: Path, env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    return depsync_in(repo, *args, env=env, timeout=300)
