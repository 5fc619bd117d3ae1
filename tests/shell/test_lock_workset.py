"""The work copy is what uv reads: real git repositories and real uv.

A project with three kinds of package: a static root, a path package git ignores (outside the
tracked set: uv reads it all the same), a dynamic-version path package whose in-tree backend
reads its version from a file; plus untracked build output and tracked files no package needs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import depsync
from uvprojects import FAKE_BACKEND_SOURCE, FAKE_BACKEND_TOML

from depsync.shell.runners.workset import copy_work_set, work_set

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
# the fake backend, reading version and dependencies from files next to pyproject (as setuptools' attr/file do)
FILE_BACKEND = FAKE_BACKEND_SOURCE.replace('config["version"] if "version" in dynamic', 'open("VERSION").read().strip() if "version" in dynamic').replace(
    'config.get("dependencies", []) if "dependencies" in dynamic', 'open("requirements.txt").read().split() if "dependencies" in dynamic')


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=dict(os.environ, **GIT_ENV))


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    write(root, {
        "pyproject.toml": '[project]\nname = "proj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["vendored", "dyn"]\n\n'
                          '[tool.uv.sources]\nvendored = { path = "vendor/vendored" }\ndyn = { path = "packages/dyn" }\n',
        ".gitignore": "build/\nvendor/\n",
        "docs/guide.md": "not read by uv\n",
        "src/proj/__init__.py": "",
        "packages/dyn/pyproject.toml": FAKE_BACKEND_TOML + '\n[project]\nname = "dyn"\ndynamic = ["version", "dependencies"]\nrequires-python = ">=3.10"\n',
        "packages/dyn/_backend/fakebackend.py": FILE_BACKEND,
        "packages/dyn/VERSION": "1.2.3\n",
        "packages/dyn/requirements.txt": "vendored>=2\n",
        "packages/dyn/dyn/__init__.py": "",
    })  # fmt: skip
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    # not tracked: a path package git ignores, and build output
    write(root, {
        "vendor/vendored/pyproject.toml": FAKE_BACKEND_TOML + '\n[project]\nname = "vendored"\ndynamic = ["version"]\nrequires-python = ">=3.10"\n\n[tool.fakebackend]\nversion = "2.0"\n',
        "vendor/vendored/_backend/fakebackend.py": FAKE_BACKEND_SOURCE,
        "build/lib/proj/__init__.py": "stale build output\n",
    })  # fmt: skip
    return root


def copied(root: Path, destination: Path, minimal: bool) -> set[str]:
    copy_work_set(root, destination, work_set(root, minimal=minimal))
    return {str(p.relative_to(destination)) for p in destination.rglob("*") if not p.is_dir()}


def test_the_full_set_is_manifests_ignored_path_packages_and_the_sources_of_what_uv_builds(project: Path, tmp_path: Path) -> None:
    files = copied(project, tmp_path / "full", minimal=False)
    assert "pyproject.toml" in files and "packages/dyn/VERSION" in files and "packages/dyn/_backend/fakebackend.py" in files
    assert "vendor/vendored/pyproject.toml" in files and "vendor/vendored/_backend/fakebackend.py" in files  # ignored, but uv builds it
    assert not any(name.startswith("build/") for name in files)  # untracked build output
    assert "docs/guide.md" not in files and "src/proj/__init__.py" not in files  # the root is static: uv builds nothing of it
    assert ".git" not in {name.split("/")[0] for name in files}


def test_the_minimal_set_is_the_manifests_and_the_dynamic_path_packages(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text().replace('version = "0.1.0"', 'dynamic = ["version"]'))
    files = copied(project, tmp_path / "minimal", minimal=True)
    assert "pyproject.toml" in files and "src/proj/__init__.py" not in files  # the root: uv answers from the lock
    assert "packages/dyn/VERSION" in files and "vendor/vendored/_backend/fakebackend.py" in files  # uv builds these to compare
    assert "docs/guide.md" not in files and ".gitignore" not in files


def test_a_dynamic_root_brings_its_tracked_source_but_not_what_git_ignores(project: Path, tmp_path: Path) -> None:
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text().replace('version = "0.1.0"', 'dynamic = ["version"]'))
    files = copied(project, tmp_path / "dynamic-root", minimal=False)
    assert {"docs/guide.md", "src/proj/__init__.py", ".gitignore"} <= files
    assert not any(name.startswith("build/") for name in files)


def test_outside_git_the_full_set_is_the_whole_tree_and_the_minimal_set_the_manifests(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(root, {"pyproject.toml": '[project]\nname = "p"\nversion = "1"\n', "data/x.txt": "x"})
    assert work_set(root, minimal=False).files is None
    assert copied(root, tmp_path / "full", minimal=False) == {"pyproject.toml", "data/x.txt"}
    assert copied(root, tmp_path / "minimal", minimal=True) == {"pyproject.toml"}


def test_a_listed_file_under_a_directory_that_became_a_link_out_of_the_project_is_left_out(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write(outside, {"VERSION": "secret\n", "pyproject.toml": "[project]\n"})
    os.rename(project / "packages" / "dyn", tmp_path / "moved")
    (project / "packages" / "dyn").symlink_to(outside)  # git still lists packages/dyn/*
    files = copied(project, tmp_path / "copy", minimal=False)
    assert not any(name.startswith("packages/dyn/") for name in files)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_")}
    return dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}", UV_OFFLINE="1", UV_PYTHON=os.path.realpath(sys.executable),
                UV_CACHE_DIR=str(tmp_path / "uv-cache"), XDG_CACHE_HOME=str(tmp_path / "xdg"))


def test_real_uv_locks_the_dynamic_version_from_the_backends_file_and_a_fresh_lock_takes_the_minimal_set(project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    first = depsync("lock", str(project), "--runner", "local", env=env)
    assert first.returncode == 0, first.stderr
    lock = (project / "uv.lock").read_text()
    # uv records no version for a dynamic directory package, but the dependencies its backend read
    assert 'name = "dyn"\nsource = { directory = "packages/dyn" }\ndependencies = [\n    { name = "vendored" },' in lock, lock
    again = depsync("lock", str(project), "--runner", "local", env=env)
    assert again.returncode == 0, again.stderr
    assert (project / "uv.lock").read_text() == lock
    remembered = tmp_path / "xdg" / "depsync" / "workset" / "unchanged"
    assert len(list(remembered.iterdir())) == 1  # the minimal run stood: uv left the lock as it was


def test_a_wrong_guess_of_fresh_costs_a_second_run_never_a_wrong_lock(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The root's version comes from a file its backend reads; the lock is stale (a new
    requirement) but the prediction is made to say fresh: the minimal run fails (no VERSION in
    the copy), the full run locks."""
    from depsync.shell.runners import local, workset

    for name, value in _env(tmp_path).items():
        monkeypatch.setenv(name, value)
    write(project, {"_backend/fakebackend.py": FILE_BACKEND, "VERSION": "0.2.0\n", "requirements.txt": "vendored>=2\n"})
    pyproject = project / "pyproject.toml"
    pyproject.write_text(FAKE_BACKEND_TOML + "\n" + pyproject.read_text().replace('version = "0.1.0"', 'dynamic = ["version"]'))
    assert depsync("lock", str(project), "--runner", "local", env=os.environ).returncode == 0
    pyproject.write_text(pyproject.read_text().replace('dependencies = ["vendored", "dyn"]', 'dependencies = ["vendored", "dyn", "extra-pkg"]').replace(
        'dyn = { path = "packages/dyn" }', 'dyn = { path = "packages/dyn" }\nextra-pkg = { path = "packages/extra" }'))
    write(project, {"packages/extra/pyproject.toml": '[project]\nname = "extra-pkg"\nversion = "1.0"\nrequires-python = ">=3.10"\n'})
    monkeypatch.setattr(workset, "predicted_fresh", lambda _project: True)
    sets: list[bool] = []
    real_copy = local.copy_work_set
    monkeypatch.setattr(local, "copy_work_set", lambda p, d, s: (sets.append(s.minimal), real_copy(p, d, s))[1])
    run = local.LocalRunner().lock(project, [], timeout=120)
    assert sets == [True, False]
    assert run.returncode == 0, run.output
    assert run.new_lock is not None and b'name = "extra-pkg"' in run.new_lock


def test_the_host_copy_goes_to_memory_only_when_nothing_points_out_of_the_project(project: Path, tmp_path: Path) -> None:
    from depsync.shell.runners.workset import memory_parent

    contained = work_set(project, minimal=True)
    assert contained.self_contained
    shm = memory_parent(project, contained)
    assert shm in (None, Path("/dev/shm"))  # None where /dev/shm is no usable tmpfs
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.uv]\nfind-links = ["../wheels"]\n')
    assert memory_parent(project, work_set(project, minimal=True)) is None  # `../wheels` must resolve as for the project
    pyproject.write_text(pyproject.read_text().replace('find-links = ["../wheels"]', ""))
    (tmp_path / "uv.toml").write_text("")  # uv would find this above the project
    assert memory_parent(project, work_set(project, minimal=True)) is None


def test_workspace_members_their_path_packages_and_uv_toml_indexes_are_reached(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {
        "pyproject.toml": '[project]\nname = "root"\nversion = "1"\n\n[tool.uv.workspace]\nmembers = ["packages/*"]\nexclude = ["packages/skipped"]\n',
        "uv.toml": 'find-links = ["wheels"]\n',
        "wheels/alpha-1.0-py3-none-any.whl": "wheel",
        "packages/a/pyproject.toml": '[project]\nname = "a"\nversion = "1"\n\n[tool.uv.sources]\nb = { path = "../../libs/b" }\n',
        "packages/a/a/__init__.py": "",
        "packages/skipped/pyproject.toml": '[project]\nname = "skipped"\ndynamic = ["version"]\n',
        "packages/skipped/VERSION": "1\n",
        "libs/b/pyproject.toml": '[project]\nname = "b"\ndynamic = ["version"]\n',
        "libs/b/VERSION": "2\n",
        "docs/x.md": "",
    })  # fmt: skip
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    full = copied(root, tmp_path / "full", minimal=False)
    assert {"uv.toml", "wheels/alpha-1.0-py3-none-any.whl", "packages/a/pyproject.toml", "libs/b/VERSION"} <= full
    assert "packages/a/a/__init__.py" not in full and "packages/skipped/VERSION" not in full and "docs/x.md" not in full
    minimal = copied(root, tmp_path / "minimal", minimal=True)
    assert {"wheels/alpha-1.0-py3-none-any.whl", "libs/b/VERSION"} <= minimal  # an index, and a dynamic path package
