"""The result cache of `depsync check`: a repeated check replays, any changed input recomputes.

Real files, real git, real subprocesses; each test has its own XDG_CACHE_HOME. What is
asserted is what a user sees (output, exit code, what was imported), never a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import BUNDLED, git, init_repo, write_files
from support import LOCK, PYPROJECT

from depsync.entry import check_request, display_path
from depsync.shell import cache


def run(project: Path, *args: str, cache_home: Path, module: str = "depsync.entry", env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **(env or {}), "XDG_CACHE_HOME": str(cache_home)}
    return subprocess.run([sys.executable, "-m", module, "check", str(project), *args], capture_output=True, text=True, env=environment, cwd=cwd)


def imported(project: Path, *args: str, cache_home: Path) -> set[str]:
    environment = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "depsync.entry", "check", str(project), *args], capture_output=True, text=True, env=environment)
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


@pytest.fixture
def cache_home(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write_files(root, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    return root


def entries(cache_home: Path) -> list[str]:
    folder = cache_home / "depsync" / "check"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


# -- replay -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "github", "human"])
def test_repeated_check_replays_output_and_exit_code(project: Path, cache_home: Path, fmt: str) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.replace("alpha>=1", "alpha>=2"))  # a finding, exit 1
    first = run(project, "--format", fmt, cache_home=cache_home, module="depsync")
    assert first.returncode == 1 and first.stdout
    assert sorted(n[-2:] for n in entries(cache_home)) == [".m", ".r"]
    for module in ("depsync", "depsync.entry"):
        again = run(project, "--format", fmt, cache_home=cache_home, module=module)
        assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)


def test_a_hit_imports_only_the_cache(project: Path, cache_home: Path) -> None:
    assert run(project, "--format", "json", cache_home=cache_home).returncode == 0
    assert run(project, "--format", "json", cache_home=cache_home).returncode == 0  # renders once more, kept
    modules = imported(project, "--format", "json", cache_home=cache_home)
    assert "depsync.shell.cache" in modules
    # dockerfile_scan (os only): the replay lists the Dockerfiles discovery could find; git_files
    # (os only): the refs' state read from `.git`
    allowed = {"depsync", "depsync.shell", "depsync.shell.cache", "depsync.entry", "depsync.shell.dockerfile_scan", "depsync.shell.git_files"}
    assert {m for m in modules if m.startswith("depsync")} <= allowed
    heavy = {"argparse", "dataclasses", "packaging", "rich", "json", "tomllib", "subprocess", "pathlib", "typing"}
    assert not modules & heavy - _startup_modules()


def _startup_modules() -> set[str]:
    """What this interpreter imports before any depsync code (an editable install's hook imports pathlib)."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True)
    return {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}


def test_strict_and_formats_share_one_result(project: Path, cache_home: Path) -> None:
    (project / "Dockerfile").write_text("FROM python:3.12\nRUN uv sync --locked --no-install-package nope\n")
    args = ("--dockerfile", "Dockerfile")
    assert run(project, *args, "--format", "json", cache_home=cache_home).returncode == 0  # a warning only
    assert run(project, *args, "--format", "json", "--strict", cache_home=cache_home).returncode == 1
    assert run(project, *args, "--strict", "--format", "github", cache_home=cache_home).returncode == 1
    assert len([e for e in entries(cache_home) if e.endswith(".r")]) == 1


def test_no_cache_option_neither_reads_nor_writes(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from depsync.commands import check

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    assert check.run(check.CheckOptions(project, output_format="json", no_cache=True)) == 0
    assert entries(cache_home) == []
    assert check.run(check.CheckOptions(project, output_format="json")) == 0
    assert entries(cache_home)
    outputs = capsys.readouterr().out
    assert outputs.count('"schema": "depsync.check/2"') == 2


# -- every input is part of the key ---------------------------------------------------------------


def rules_of(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode in (0, 1), result.stderr
    return sorted(f["rule"] for f in json.loads(result.stdout)["findings"])


def test_each_changed_input_recomputes(project: Path, cache_home: Path) -> None:
    def check() -> list[str]:
        return rules_of(run(project, "--format", "json", cache_home=cache_home))

    assert check() == []
    (project / "pyproject.toml").write_text(PYPROJECT.replace("alpha>=1", "alpha>=2"))
    assert check() == ["lock-stale"]
    (project / "pyproject.toml").write_text(PYPROJECT)
    assert check() == []  # back to the first state: its entry is still there
    (project / "uv.lock").write_text(LOCK.replace('version = "1.2"', 'version = "1.3"'))
    assert "lock-artifact-mismatch" in check()
    (project / "uv.lock").write_text(LOCK)
    # the default Dockerfile was looked for and absent: creating it is a change
    write_files(project, {"docker/Dockerfile.ci.dev": "FROM python:3.12\nRUN uv sync --extra nope\n"})
    assert check() == ["docker-not-locked", "docker-unknown-extra"]
    (project / "docker" / "Dockerfile.ci.dev").write_text("FROM python:3.12\nENV UV_FROZEN=1\nRUN uv sync --extra gpu\n")
    assert check() == []


def test_a_uv_toml_created_later_is_a_changed_input(project: Path, cache_home: Path) -> None:
    """uv.toml was looked for and absent: creating one changes uv's settings, and the result."""
    def check() -> list[str]:
        return rules_of(run(project, "--format", "json", "--static", cache_home=cache_home))

    assert check() == []
    (project / "uv.toml").write_text('resolution = "lowest-direct"\n')
    assert check() == ["lock-stale"]
    (project / "uv.toml").unlink()
    assert check() == []


def test_a_symlinked_input_is_not_the_same_input(project: Path, cache_home: Path, tmp_path: Path) -> None:
    assert run(project, cache_home=cache_home).returncode == 0
    outside = tmp_path / "outside.lock"
    outside.write_text(LOCK)  # the same bytes, now outside the project
    (project / "uv.lock").unlink()
    (project / "uv.lock").symlink_to(outside)
    result = run(project, cache_home=cache_home)
    assert result.returncode == 2 and "outside the project" in result.stderr


def test_local_and_workspace_pyprojects_are_inputs(tmp_path: Path, cache_home: Path) -> None:
    root = tmp_path / "ws"
    pyproject = PYPROJECT + '\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
    write_files(root, {"pyproject.toml": pyproject, "uv.lock": LOCK, "packages/a/pyproject.toml": '[project]\nname = "a"\nversion = "1"\n'})
    first = run(root, "--format", "json", cache_home=cache_home)
    manifest = next((cache_home / "depsync" / "check").glob("*.m"))
    recorded = cache._read(str(manifest))
    assert "packages/*" in recorded["globs"] and "pyproject.toml" in recorded["files"] and "packages/a/pyproject.toml" in recorded["files"]
    write_files(root, {"packages/b/pyproject.toml": '[project]\nname = "b"\nversion = "1"\n'})
    second = run(root, "--format", "json", cache_home=cache_home)
    assert len([e for e in entries(cache_home) if e.endswith(".r")]) == 2  # a new member: a new result
    assert first.returncode == second.returncode


def test_owner_ref_commit_is_part_of_the_key(tmp_path: Path, cache_home: Path) -> None:
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, ".github/CODEOWNERS": "* @dev-team\n"}, branch="dev")
    git(repo, "checkout", "-q", "-b", "sync")
    assert rules_of(run(repo, "--owner-ref", "dev", "--format", "json", cache_home=cache_home)) == []
    git(repo, "checkout", "-q", "dev")
    write_files(repo, {".github/CODEOWNERS": "* @new-owners\n"})
    git(repo, "commit", "-qam", "dev changes its owners")
    git(repo, "checkout", "-q", "sync")  # the work tree is as before; only the owner ref moved
    assert rules_of(run(repo, "--owner-ref", "dev", "--format", "json", cache_home=cache_home)) == ["protected-path-changed"]
    at_ref = run(repo, "--ref", "dev", "--owner-ref", "dev", "--format", "json", cache_home=cache_home)
    assert rules_of(at_ref) == [] and rules_of(run(repo, "--ref", "dev", "--owner-ref", "dev", "--format", "json", cache_home=cache_home)) == []


def test_secret_environment_is_part_of_the_key(project: Path, cache_home: Path) -> None:
    secret = "s3cr3tvalue123"
    (project / "Dockerfile").write_text(f"FROM python:3.12\nRUN uv sync --locked --extra {secret}\n")
    plain = run(project, "--dockerfile", "Dockerfile", "--format", "json", cache_home=cache_home)
    assert plain.returncode == 1 and secret in plain.stdout  # not a secret yet: printed as it is
    masked = run(project, "--dockerfile", "Dockerfile", "--format", "json", cache_home=cache_home, env={"MY_TOKEN": secret})
    assert masked.returncode == 1 and secret not in masked.stdout  # now it is: never replayed unmasked


def test_code_and_import_path_are_part_of_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    request = (str(tmp_path), None, None, None, None, None)
    before = cache.request_key(request)
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert cache.request_key(request) != before


# -- robustness ---------------------------------------------------------------------------------------


def test_broken_entries_are_misses(project: Path, cache_home: Path) -> None:
    first = run(project, "--format", "json", cache_home=cache_home)
    for entry in (cache_home / "depsync" / "check").iterdir():
        entry.write_bytes(b"\x00garbage")
    again = run(project, "--format", "json", cache_home=cache_home)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def test_unwritable_cache_costs_nothing_but_time(project: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would be")
    result = run(project, "--format", "json", cache_home=blocked)
    assert result.returncode == 0 and result.stderr == ""


def test_concurrent_checks_agree_and_leave_whole_entries(project: Path, cache_home: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.replace("alpha>=1", "alpha>=2"))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: run(project, "--format", "json", cache_home=cache_home), range(16)))
    assert {(r.returncode, r.stdout) for r in results} == {(1, results[0].stdout)}
    assert not [e for e in entries(cache_home) if e.endswith(".tmp")]
    assert len([e for e in entries(cache_home) if e.endswith(".r")]) == 1


# -- the fast entry point builds the key the CLI builds -------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["."],
        ["fixtures/megatron-dev/"],
        ["--format", "json", "./a//b/"],
        ["--format=github", "--strict", "x"],
        ["--ref", "origin/dev", "--owner-ref=dev"],
        ["--dockerfile", "d/Dockerfile", "--dockerfile", "e", "--build-arg", "A=1", "--build-arg", "B=2=3", "--build-arg", "A=4"],
        ["--lock", "locks/uv.lock", "/abs/path"],
        ["--format", "json", "--format", "human"],
        ["--output-format", "github", "p"],
        ["--exit-zero", "--strict", "p"],
    ],
)
def test_fast_parse_matches_the_cli(argv: list[str]) -> None:
    from depsync.cli import check as check_cli
    from depsync.cli.parser import parser
    from depsync.commands import check

    args = parser().parse_args(["check", *argv])
    if args.path is None:
        args.path = Path(".")  # the CLI looks upwards from here; the fast path keys on "." and misses if it moved
    options = check_cli.options_from(args)
    parsed = check_request(argv)
    assert parsed is not None
    request, fmt, project, strict, exit_zero = parsed
    assert request == check.request(options)
    assert (fmt, strict, exit_zero) == (options.output_format, options.strict, options.exit_zero)
    assert project == str(options.root) + (f" @ {options.ref}" if options.ref else "")


@pytest.mark.parametrize(
    "argv",
    [["--deep"], ["--debug"], ["--form", "json"], ["-h"], ["a", "b"], ["--format", "xml"], ["--format", "sarif"], ["--build-arg", "A=1"], ["--ref"], ["--no-cache"], ["--fix"], ["--color", "always"], ["-q"], ["--select", "lock-stale"], ["--ignore=lock-stale"]],
)
def test_fast_parse_leaves_the_rest_to_the_cli(argv: list[str]) -> None:
    assert check_request(argv) is None


@pytest.mark.parametrize("raw", ["", ".", "./", "a", "a/", "a//b", "./a/./b/.", "/", "///x", "/a/../b", "a b"])
def test_display_path_is_pathlib_str(raw: str) -> None:
    assert display_path(raw) == str(Path(raw))


def test_bundled_example_replays_through_both_entries(tmp_path: Path, cache_home: Path) -> None:
    import shutil

    project = tmp_path / "megatron"
    shutil.copytree(BUNDLED / "megatron-dev", project)
    first = run(Path("."), "--format", "json", cache_home=cache_home, module="depsync", cwd=project)
    replayed = run(Path("."), "--format", "json", cache_home=cache_home, module="depsync.entry", cwd=project)
    assert first.returncode == replayed.returncode == 1 and first.stdout == replayed.stdout  # 1: the renamed CUDA flags


@pytest.mark.parametrize("name", ["Foo_Bar", "foo.bar", "FOO--bar__baz", "a", "-x-", "nvidia-cudnn-frontend", "Transformer_Engine", "torch.._x", "ÄÖ_x"])
def test_lazy_canonicalize_name_is_packagings(name: str) -> None:
    from packaging.utils import canonicalize_name

    from depsync.core.names import canonicalize_name as lazy

    assert lazy(name) == canonicalize_name(name)


@pytest.mark.parametrize("url", ["https://user:tok@Example.COM:443/x.git", "git+ssh://git@host:22/x", "http://[::1", "file:///srv/repo", ""])
def test_lazy_host_of_is_the_sources_one(url: str) -> None:
    from depsync.core.names import host_of
    from depsync.core.sync.sources import host_of as original

    assert host_of(url) == original(url)


def test_forced_colour_is_left_to_the_cli(project: Path, cache_home: Path) -> None:
    assert run(project, cache_home=cache_home).returncode == 0
    plain = run(project, cache_home=cache_home)
    coloured = run(project, cache_home=cache_home, env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in plain.stdout and "\x1b[" in coloured.stdout


def test_a_directory_inside_the_project_is_not_replayed_as_another_root(project: Path, cache_home: Path) -> None:
    (project / "src").mkdir()
    first = run(project, "--format", "json", cache_home=cache_home)
    inner = run(project / "src", "--format", "json", cache_home=cache_home)
    assert inner.returncode == first.returncode
    assert json.loads(inner.stdout)["project"] != json.loads(first.stdout)["project"] or inner.stderr


def test_the_code_fingerprint_covers_every_layer_of_the_package() -> None:
    # an edited rule in depsync/core must make a cached check miss, not only an edited shell module
    import marshal

    from depsync.shell import cache

    files = {Path(path).relative_to(Path(cache.__file__).parents[1]).as_posix() for path, _, _ in marshal.loads(cache._code_fingerprint())[2]}
    assert {"core/rules/integrity.py", "commands/check.py", "shell/cache.py", "entry.py"} <= files


# -- a replay trusts a file's stat only when it is old enough ---------------------------------------


def _stored(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[cache.Request, dict]:  # type: ignore[type-arg]
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    request: cache.Request = (str(project), None, None, None, None, None)
    manifest = cache.manifest(str(project), [], ["pyproject.toml", "uv.lock"], [], [])
    assert cache.store(request, manifest, [], True) is not None
    return request, manifest


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real_open = open

    def counting(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.path.basename(str(path)))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(cache, "open", counting, raising=False)
    return opened


def test_an_old_unchanged_file_is_not_read_again(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "_RACY_NS", -10**12)  # as if the files were written long before the check
    request, _ = _stored(project, cache_home, monkeypatch)
    reads = _reads(monkeypatch)
    assert cache.lookup(request) is not None
    assert "uv.lock" not in reads and "pyproject.toml" not in reads


def test_a_file_too_new_to_trust_its_stat_is_hashed(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    request, _ = _stored(project, cache_home, monkeypatch)  # just written: within the racy window
    reads = _reads(monkeypatch)
    assert cache.lookup(request) is not None
    assert "uv.lock" in reads


def test_new_bytes_behind_the_old_size_and_mtime_are_a_miss(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same size, mtime set back: ctime moved, so the stat differs and the bytes are hashed."""
    monkeypatch.setattr(cache, "_RACY_NS", -10**12)
    lock = project / "uv.lock"
    request, _ = _stored(project, cache_home, monkeypatch)
    before = lock.stat()
    text = lock.read_text()
    changed = text.replace('version = "1.2"', 'version = "1.3"')
    assert changed != text and len(changed) == len(text)
    lock.write_text(changed)
    os.utime(lock, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.lookup(request) is None


def test_a_hashed_file_is_trusted_once_it_is_old_enough(project: Path, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    request, _ = _stored(project, cache_home, monkeypatch)
    assert cache.lookup(request) is not None  # hashed (too new), and its stat kept again with a later time
    monkeypatch.setattr(cache, "_RACY_NS", -10**12)
    reads = _reads(monkeypatch)
    assert cache.lookup(request) is not None
    assert "uv.lock" not in reads


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["."],
        ["--format", "json", "./a//b/"],
        ["--format=github", "--strict", "x"],
        ["--ref", "origin/dev", "--owner-ref=dev"],
        ["--dockerfile", "d/Dockerfile", "--dockerfile", "e", "--build-arg", "A=1", "--build-arg", "B=2=3", "--build-arg", "A=4"],
        ["--lock", "locks/uv.lock", "/abs/path"],
        ["--format", "json", "--format", "human"],
        ["--output-format", "github", "p"],
        ["--exit-zero", "--strict", "p"],
    ],
)
def test_a_plain_check_runs_with_the_namespace_the_parser_makes(argv: list[str]) -> None:
    from depsync.cli.parser import parser
    from depsync.entry import check_namespace

    assert vars(check_namespace(argv)) == vars(parser().parse_args(["check", *argv]))


@pytest.mark.parametrize("argv", [["--deep"], ["--format", "sarif"], ["--select", "lock-stale"], ["-q"], ["--build-arg", "A=1"]])
def test_any_other_check_goes_to_the_parser(argv: list[str]) -> None:
    from depsync.entry import check_namespace

    assert check_namespace(argv) is None


def test_a_plain_cold_check_imports_no_argparse(project: Path, cache_home: Path) -> None:
    modules = imported(project, "--format", "json", cache_home=cache_home)
    assert "depsync.commands.check" in modules  # it ran the check (a miss)
    assert "argparse" not in modules and "depsync.cli.parser" not in modules


# -- the refs' state is read from .git, without a git process --------------------------------------


def _repo(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "a.txt": "1"})
    git(root, "branch", "dev")
    return root


REFS = ["HEAD", "dev", "origin/dev", "origin/main"]


def test_a_plain_repository_needs_no_git_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path)
    spawned: list[str] = []
    monkeypatch.setattr(cache, "_git", lambda *a: spawned.append("git") or (1, ""))
    (root / "sub").mkdir()
    top = cache._refs_state(str(root), REFS)
    below = cache._refs_state(str(root / "sub"), REFS)
    assert top is not None and below is not None and top != below  # the prefix is part of it
    assert spawned == []


def test_every_way_a_ref_moves_changes_the_state(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    seen = [cache._refs_state(str(root), REFS)]

    def moved() -> None:
        state = cache._refs_state(str(root), REFS)
        assert state not in seen
        seen.append(state)

    (root / "a.txt").write_text("2")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two")  # HEAD's branch moves (a loose ref)
    moved()
    git(root, "branch", "-f", "dev", "HEAD")
    moved()
    git(root, "pack-refs", "--all")  # the same commits from packed-refs: a miss, never a wrong hit
    moved()
    git(root, "update-ref", "refs/remotes/origin/dev", "HEAD~1")  # a remote-tracking ref appears
    moved()
    git(root, "checkout", "-q", "dev")  # HEAD points at another branch
    moved()
    git(root, "checkout", "-q", "--detach", "HEAD~1")
    moved()
    assert cache._refs_state(str(root), REFS) == seen[-1]  # nothing moved: the same state


def test_another_layout_is_left_to_git(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", str(linked), "dev")
    assert cache._refs_state(str(linked), REFS) is None  # a worktree's .git is a file
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(root), str(bare))
    assert cache._refs_state(str(bare), REFS) is None
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    assert cache._refs_state(str(outside), REFS) == ("no repository",)


def test_a_replay_inside_a_repository_follows_a_moved_owner_ref(tmp_path: Path) -> None:
    """End to end: protected paths make the owner ref part of the key; moving it is a miss."""
    root = _repo(tmp_path)
    cache_home = tmp_path / "cache"
    (root / "pyproject.toml").write_text(PYPROJECT + '\n[tool.depsync]\nprotected-paths = ["uv.lock"]\nowner-ref = "dev"\n')
    git(root, "add", "-A")
    git(root, "commit", "-qm", "protect")
    first = run(root, "--format", "json", cache_home=cache_home)
    again = run(root, "--format", "json", cache_home=cache_home)
    assert first.stdout == again.stdout
    (root / "uv.lock").write_text(LOCK + "\n")
    git(root, "commit", "-qam", "lock touched")
    git(root, "branch", "-f", "dev", "HEAD~2")  # dev now lacks the commit that set up protection
    moved = run(root, "--format", "json", cache_home=cache_home)
    direct = run(root, "--format", "json", "--no-cache", cache_home=cache_home, module="depsync")
    assert moved.stdout == direct.stdout
