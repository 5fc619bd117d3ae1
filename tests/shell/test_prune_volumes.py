"""The docker runner removes its cache volumes of checkouts that no longer exist: real engine,
real locks in the test image. Every volume a test makes is removed at its end."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import IMAGE, indexed_project

from depsync.shell.runners import volumes
from depsync.shell.runners.docker import DockerRunner, project_cache_volume
from depsync.shell.runners.volumes import (
    HOST_LABEL,
    PATH_LABEL,
    REPO_LABEL,
    UID_LABEL,
    cache_volume_name,
    machine,
    owner_labels,
    repository_digest,
)

pytestmark = pytest.mark.docker

UID = os.getuid()
REPO = repository_digest("")  # a temp directory that is no repository


@pytest.fixture
def made(engine) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """The names of the volumes a test makes (directly or through a lock): all removed after it."""
    names: list[str] = []
    yield names
    for name in names:
        subprocess.run(["docker", "volume", "rm", "-f", name], capture_output=True, timeout=60)


def exists(engine, name: str) -> bool:  # type: ignore[no-untyped-def]
    return any(v.name == name for v in engine.volumes.list(filters={"name": name}))


def labelled(engine, made: list[str], path: str, uid: int = UID, host: str | None = None, name: str | None = None, labels: dict[str, str] | None = None) -> str:  # type: ignore[no-untyped-def]
    """A volume as depsync makes one for the checkout at path (or with the labels given)."""
    name = name or cache_volume_name(path, uid, REPO)
    made.append(name)
    engine.volumes.create(name, labels=owner_labels(path, uid, host or machine(), REPO) if labels is None else labels)
    return name


def depsync_lock(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args, "lock", str(project), "--runner", "docker", "--image", IMAGE],
                          capture_output=True, text=True, timeout=300)


def volumes_client():  # type: ignore[no-untyped-def]
    from depsync.shell.runners.engine import client

    return client()


def test_a_deleted_checkouts_volume_goes_on_the_next_lock_of_another_project(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    old, other = indexed_project(tmp_path / "old"), indexed_project(tmp_path / "other")
    made += [project_cache_volume(old), project_cache_volume(other)]
    said: list[str] = []
    assert DockerRunner(IMAGE, say=said.append).lock(old, [], 300).returncode == 0
    old_volume = project_cache_volume(old)
    assert engine.volumes.get(old_volume).attrs["Labels"] == {
        "io.depsync.role": "cache", PATH_LABEL: str(old.resolve()), UID_LABEL: str(UID), HOST_LABEL: machine(), REPO_LABEL: REPO,
    }

    kept_dir = tmp_path / "kept"
    kept_dir.mkdir()
    gone = str(tmp_path / "never-there")
    kept = [
        labelled(engine, made, str(kept_dir)),  # its checkout is there
        labelled(engine, made, gone, labels={"io.depsync.role": "cache"}),  # an older depsync's: no owner labels
        labelled(engine, made, gone, host="0123456789abcdef0123456789abcdef/another-machine"),
        labelled(engine, made, gone, uid=UID + 1),
        labelled(engine, made, gone, name=f"depsync-test-{uuid.uuid4().hex[:8]}"),  # the labels, not depsync's name for them
    ]
    shutil.rmtree(old)
    result = depsync_lock(other)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "uv cache volume" in line]
    assert len(notes) == 1 and notes[0].startswith("depsync: removed ") and "of checkouts that no longer exist: " in notes[0], result.stderr
    assert old_volume in notes[0] and not exists(engine, old_volume)
    assert all(exists(engine, name) for name in kept) and exists(engine, project_cache_volume(other))
    assert not any(name in notes[0] for name in kept)


def test_quiet_prunes_without_a_note(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    project = indexed_project(tmp_path / "proj")
    made.append(project_cache_volume(project))
    stale = labelled(engine, made, str(tmp_path / "deleted-clone"))
    result = depsync_lock(project, "-q")
    assert result.returncode == 0, result.stderr
    assert "uv cache volume" not in result.stderr and not exists(engine, stale)


def test_an_operators_cache_volume_is_never_a_candidate(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    project = indexed_project(tmp_path / "proj")
    named = f"depsync-test-cache-{uuid.uuid4().hex[:8]}"
    made.append(named)
    assert DockerRunner(IMAGE, cache_volume=named).lock(project, [], 300).returncode == 0
    assert engine.volumes.get(named).attrs["Labels"] == {"io.depsync.role": "cache"}  # no owner: never pruned
    assert not exists(engine, project_cache_volume(project))


def test_a_volume_in_use_does_not_fail_the_lock(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    project = indexed_project(tmp_path / "proj")
    made.append(project_cache_volume(project))
    busy = labelled(engine, made, str(tmp_path / "deleted-clone"))
    holder = engine.containers.run(IMAGE, ["sleep", "120"], volumes={busy: {"bind": "/c", "mode": "rw"}}, detach=True, remove=True)
    try:
        said: list[str] = []
        assert DockerRunner(IMAGE, say=said.append).lock(project, [], 300).returncode == 0
        assert exists(engine, busy) and not any(busy in line for line in said)
    finally:
        holder.remove(force=True)
    # the engine's refusal (409) itself is left alone too: the listing saw the volume unused, then it was not
    engine_api = volumes_client()
    holder = engine.containers.run(IMAGE, ["sleep", "120"], volumes={busy: {"bind": "/c", "mode": "rw"}}, detach=True, remove=True)
    try:
        listed = {"Volumes": [engine.volumes.get(busy).attrs]}
        original = engine_api.json
        engine_api.json = lambda method, path, **kw: listed if path == "/volumes" else original(method, path, **kw)  # type: ignore[method-assign]
        assert volumes.prune_cache_volumes(engine_api) == ([], 0)
        assert exists(engine, busy)
    finally:
        holder.remove(force=True)
        engine_api.close()


def test_the_listing_is_one_request(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    """With nothing to remove, a run's pruning is one filtered GET /volumes on the warm
    connection (counted, not timed: timings belong in bench/, never in a test's assertions)."""
    api = volumes_client()
    sent: list[tuple[str, str]] = []
    original = api.request

    def counted(method: str, path: str, **kwargs):  # type: ignore[no-untyped-def]
        sent.append((method, path))
        return original(method, path, **kwargs)

    try:
        volumes.prune_cache_volumes(api)  # the connection is warm, as in a run (ping, sweep)
        api.request = counted  # type: ignore[method-assign]
        for _ in range(10):
            assert volumes.prune_cache_volumes(api) == ([], 0)
    finally:
        api.close()
    assert sent == [("GET", "/volumes")] * 10


def test_prune_caches_only_prunes(engine, tmp_path: Path, made: list[str]) -> None:  # type: ignore[no-untyped-def]
    """`depsync lock --prune-caches` needs no project and locks nothing."""
    stale = labelled(engine, made, str(tmp_path / "deleted-clone"))
    kept = labelled(engine, made, str(tmp_path))
    project = indexed_project(tmp_path / "proj")
    command = [sys.executable, "-m", "depsync", "lock", "--prune-caches"]
    first = subprocess.run([*command, str(project)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert any(line.startswith("depsync: removed ") and stale in line for line in first.stderr.splitlines()), first.stderr
    assert not exists(engine, stale) and exists(engine, kept)
    assert not (project / "uv.lock").exists() and not exists(engine, project_cache_volume(project))
    again = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert again.returncode == 0 and "depsync: no uv cache volumes of checkouts that no longer exist" in again.stderr, again.stderr
