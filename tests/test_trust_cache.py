"""the uv cache is not a channel between projects.

Project A's build backend writes into the cache it is given (a planted "package" and a
marker); project B then locks with a forwarded index credential. B's lock must not see A's
plant, and no cache volume may hold B's credential afterwards. Real engine, real uv in the
test image; the volumes are the ones the runner itself picks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IMAGE, git, indexed_project, write_files
from support import build_backend

SECRET = "s3cr3t-index-token-7f1c9a"

POISONING_BACKEND = build_backend(r'''
import os

def _poison():
    cache = os.environ.get("UV_CACHE_DIR", "")
    with open(os.path.join(cache, "POISON"), "w") as handle:
        handle.write("planted by project A\n")
    for directory, _, _ in os.walk(cache):  # and into every bucket uv made
        try:
            with open(os.path.join(directory, "POISON"), "w") as handle:
                handle.write("planted by project A\n")
        except OSError:
            pass
''', hook="_poison", name="attacker")


def poisoning_project(root: Path) -> Path:
    write_files(root, {
        "pyproject.toml": (
            '[project]\nname = "attacker"\ndynamic = ["version"]\nrequires-python = ">=3.10"\ndependencies = []\n\n'
            '[build-system]\nrequires = []\nbuild-backend = "poison"\nbackend-path = ["_backend"]\n'
        ),
        "_backend/poison.py": POISONING_BACKEND,
    })
    return root


def in_volume(volume: str, script: str) -> str:
    result = subprocess.run(["docker", "run", "--rm", "-v", f"{volume}:/c:ro", IMAGE, "sh", "-c", script], capture_output=True, text=True, timeout=120)
    return result.stdout


@pytest.mark.docker
def test_one_projects_cache_is_not_anothers(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from depsync.shell.runners.docker import DockerRunner, project_cache_volume

    attacker = poisoning_project(tmp_path / "attacker")
    victim = indexed_project(tmp_path / "victim")
    volumes = [project_cache_volume(attacker), project_cache_volume(victim)]
    assert volumes[0] != volumes[1] and all(v.startswith(f"depsync-uv-cache-{os.getuid()}-") for v in volumes)
    environ = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    try:
        first = DockerRunner(IMAGE, environ=environ).lock(attacker, [], 300)
        assert first.returncode == 0, first.output
        assert "POISON" in in_volume(volumes[0], "find /c -name POISON | head -1")  # the plant is real
        locked = DockerRunner(IMAGE, environ=dict(environ, UV_INDEX_LOCAL_USERNAME="bot", UV_INDEX_LOCAL_PASSWORD=SECRET)).lock(victim, [], 300)
        assert locked.returncode == 0, locked.output
        assert locked.new_lock is not None and b"alpha" in locked.new_lock
        assert in_volume(volumes[1], "find /c -name POISON") == ""  # B never saw A's cache
        assert in_volume(volumes[1], "find /c -type f | head -1") != ""  # and B did use a cache of its own
        for volume in volumes:  # the forwarded credential is written into no cache
            assert in_volume(volume, f"grep -rl {SECRET} /c || true") == ""
        # a rerun of A (its plant still in its own cache) cannot reach B's credential either
        again = DockerRunner(IMAGE, environ=environ).lock(attacker, [], 300)
        assert again.returncode == 0 and SECRET not in again.output
    finally:
        for volume in volumes:
            subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)


def test_the_volume_key_is_the_checkout_and_the_uid(tmp_path: Path) -> None:
    from depsync.shell.runners.docker import project_cache_volume

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert project_cache_volume(tmp_path / "a") == project_cache_volume(tmp_path / "link")  # the real path
    assert project_cache_volume(tmp_path / "a") != project_cache_volume(tmp_path / "b")
    assert project_cache_volume(tmp_path / "a", 1000) != project_cache_volume(tmp_path / "a", 1001)


def cloned_as(project: Path, origin: str) -> Path:
    """The project as CI checks a repository out: a git repository whose origin is `origin`."""
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", origin)
    return project


def test_the_volume_key_is_the_repository_too(tmp_path: Path) -> None:
    """CI that checks every repository out at one fixed path: the path alone is no key."""
    from depsync.shell.runners.volumes import project_cache_volume, repository_identity

    here = tmp_path / "checkout"
    here.mkdir()
    bare = project_cache_volume(here)
    cloned_as(here, "https://forge.example.invalid/team/a.git")
    first = project_cache_volume(here)
    git(here, "remote", "set-url", "origin", "https://forge.example.invalid/team/b.git")
    assert project_cache_volume(here) not in {first, bare}
    git(here, "remote", "set-url", "origin", "https://x-access-token:ghs_rotated@forge.example.invalid/team/a")
    assert project_cache_volume(here) == first  # a token in the URL is not the repository (and never a label)
    assert "ghs_rotated" not in repository_identity(here)
    # no origin: the root commit tells repositories apart (a shallow clone's root moves: not used)
    git(here, "remote", "remove", "origin")
    (here / "f").write_text("a\n")
    git(here, "add", "f")
    git(here, "commit", "-qm", "root a")
    assert repository_identity(here).startswith("root ")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{here}", str(shallow))
    git(shallow, "remote", "remove", "origin")
    assert repository_identity(shallow) == ""


@pytest.mark.docker
def test_two_repositories_at_one_fixed_path_share_no_cache(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Project A's poisoned cache never runs in project B's lock when B is later checked out
    where A was, on the same engine, as the same uid."""
    import shutil

    from depsync.shell.runners.docker import DockerRunner, project_cache_volume

    checkout = tmp_path / "ws"
    environ = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    volumes: list[str] = []
    try:
        cloned_as(poisoning_project(checkout), "https://forge.example.invalid/someone/attacker.git")
        volumes.append(project_cache_volume(checkout))
        assert DockerRunner(IMAGE, environ=environ).lock(checkout, [], 300).returncode == 0
        assert "POISON" in in_volume(volumes[0], "find /c -name POISON | head -1")
        shutil.rmtree(checkout)
        cloned_as(indexed_project(checkout), "https://forge.example.invalid/team/victim.git")
        volumes.append(project_cache_volume(checkout))
        assert volumes[1] != volumes[0]
        locked = DockerRunner(IMAGE, environ=environ).lock(checkout, [], 300)
        assert locked.returncode == 0 and locked.new_lock is not None, locked.output
        assert in_volume(volumes[1], "find /c -name POISON") == ""
    finally:
        for volume in volumes:
            subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)


@pytest.mark.docker
def test_a_volume_made_beforehand_under_the_derived_name_is_replaced(engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The name is no proof: a volume that is there before depsync made it (unlabelled, or
    labelled by an older depsync for every repository at this path) is never used as it is."""
    from depsync.errors import DepsyncError
    from depsync.shell.runners.docker import DockerRunner, project_cache_volume

    project = cloned_as(indexed_project(tmp_path / "victim"), "https://forge.example.invalid/team/victim.git")
    volume = project_cache_volume(project)
    environ = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    try:
        engine.volumes.create(volume, labels={"io.depsync.role": "cache"})
        subprocess.run(["docker", "run", "--rm", "-v", f"{volume}:/c", IMAGE, "sh", "-c", "echo planted > /c/POISON"], check=True, capture_output=True, timeout=120)
        holder = engine.containers.run(IMAGE, ["sleep", "120"], volumes={volume: {"bind": "/c", "mode": "ro"}}, detach=True, remove=True)
        try:  # in use: neither used nor removed, one line, uv.lock unchanged
            with pytest.raises(DepsyncError, match=f"{volume} exists but its labels do not show it is this checkout's"):
                DockerRunner(IMAGE, environ=environ).lock(project, [], 300)
            assert not (project / "uv.lock").exists()
        finally:
            holder.remove(force=True)
        said: list[str] = []
        locked = DockerRunner(IMAGE, environ=environ, say=said.append).lock(project, [], 300)
        assert locked.returncode == 0 and locked.new_lock is not None, locked.output
        assert any(line.startswith(f"replaced the uv cache volume {volume}: ") for line in said), said
        assert in_volume(volume, "find /c -name POISON") == "" and in_volume(volume, "find /c -type f | head -1") != ""
        again: list[str] = []
        assert DockerRunner(IMAGE, environ=environ, say=again.append).lock(project, [], 300).returncode == 0
        assert not any("replaced" in line for line in again)  # its own volume is kept from then on
    finally:
        subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)


# -- the check cache: a member check reads is never outside its key --------------------------------

MEMBER = '[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'


def check(root: Path, cache_home: Path, *args: str) -> int:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    return subprocess.run([sys.executable, "-m", "depsync.entry", "check", str(root), *args], capture_output=True, text=True, env=env).returncode


@pytest.mark.parametrize(
    "before, added",
    [
        ({}, {"packages/.hidden/pyproject.toml": MEMBER.format(name="hidden")}),  # a dot directory `*` matches for uv
        ({"packages/a/deep/er/README.md": "x\n"}, {"packages/a/deep/er/pyproject.toml": MEMBER.format(name="er")}),  # a matched directory gains a pyproject
        ({}, {"packages/a/deeper/still/er/pyproject.toml": MEMBER.format(name="er")}),  # `**` deeper than one level
    ],
    ids=["dot-directory", "gains-a-pyproject", "deep-double-star"],
)
def test_a_new_member_is_never_a_stale_replay(tmp_path: Path, before: dict[str, str], added: dict[str, str]) -> None:
    root, cache_home = tmp_path / "ws", tmp_path / "cache"
    write_files(root, {
        "pyproject.toml": MEMBER.format(name="root") + 'dependencies = []\n\n[tool.uv.workspace]\nmembers = ["packages/*", "packages/**/er"]\n',
        "packages/a/pyproject.toml": MEMBER.format(name="a"),
    })
    uv_env = dict(os.environ, UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    assert subprocess.run(["uv", "lock", "--offline", "-q"], cwd=root, env=uv_env).returncode == 0
    write_files(root, before)
    assert check(root, cache_home) == 0 and check(root, cache_home) == 0  # stored, then replayed
    write_files(root, added)
    assert subprocess.run(["uv", "lock", "--check", "--offline", "-q"], cwd=root, env=uv_env, capture_output=True).returncode == 1  # uv: stale
    assert check(root, cache_home, "--no-cache") == 1
    assert check(root, cache_home) == 1  # the cache agrees with both
