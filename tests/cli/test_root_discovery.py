"""Project-root discovery: depsync works from any subdirectory of a project, as uv does."""

from __future__ import annotations

from pathlib import Path

from conftest import write_files
from support import LOCK, PYPROJECT, depsync

from depsync.cli.root import discover, find_root


def test_nearest_pyproject_with_a_lock_or_tool_uv(tmp_path: Path) -> None:
    write_files(tmp_path, {"app/pyproject.toml": PYPROJECT, "app/uv.lock": LOCK, "app/src/pkg/__init__.py": ""})
    assert find_root(tmp_path / "app" / "src" / "pkg") == tmp_path / "app"
    assert find_root(tmp_path / "app") == tmp_path / "app"
    # a pyproject.toml without uv.lock or [tool.uv] (a vendored package, a docs tool) is walked past
    write_files(tmp_path, {"app/src/pyproject.toml": '[project]\nname = "vendored"\n'})
    assert find_root(tmp_path / "app" / "src" / "pkg") == tmp_path / "app"
    # one with [tool.uv] and no lock yet is a project of its own
    write_files(tmp_path, {"app/src/pyproject.toml": '[project]\nname = "inner"\n[tool.uv]\npackage = false\n'})
    assert find_root(tmp_path / "app" / "src" / "pkg") == tmp_path / "app" / "src"
    # nothing found: the starting directory (its own "pyproject.toml not found" error follows)
    assert find_root(tmp_path / "nowhere") == tmp_path / "nowhere"


def test_workspace_member_resolves_to_the_workspace_root(tmp_path: Path) -> None:
    root = PYPROJECT + '\n[tool.uv.workspace]\nmembers = ["packages/*"]\n'
    member = '[project]\nname = "member"\nversion = "0.1.0"\n\n[tool.uv.sources]\nalpha = { workspace = true }\n'
    write_files(tmp_path, {"pyproject.toml": root, "uv.lock": LOCK, "packages/member/pyproject.toml": member})
    assert find_root(tmp_path / "packages" / "member") == tmp_path


def test_unparsable_pyproject_stops_the_walk(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "sub/pyproject.toml": "[project\n"})
    assert find_root(tmp_path / "sub") == tmp_path / "sub"


def test_discover_reports_only_when_it_moved(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "docs/x.md": ""})
    assert discover(tmp_path) == (tmp_path, None)
    root, note = discover(tmp_path / "docs")
    assert root.resolve() == tmp_path.resolve() and note == f"project root: {tmp_path}"


def test_check_from_a_subdirectory(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "src/app/__init__.py": ""})
    result = depsync("check", cwd=tmp_path / "src" / "app")
    assert result.returncode == 0, result.stderr
    assert "is consistent" in result.stdout
    assert result.stderr.strip() == f"depsync: project root: {tmp_path}"
    # from the root itself nothing is said; -q says nothing either
    assert depsync("check", cwd=tmp_path).stderr == ""
    assert depsync("-q", "check", cwd=tmp_path / "src").stderr == ""


def test_check_with_a_path_below_the_project(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "src/app/__init__.py": ""})
    result = depsync("check", "src/app", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "project root" in result.stderr


def test_no_project_anywhere_says_the_parents_were_searched(tmp_path: Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    for command, cwd, args in (("check", "empty", ()), ("lock", "empty", ()), ("check", ".", ("empty/sub",))):
        result = depsync(command, *args, cwd=tmp_path / cwd)
        assert result.returncode == 2
        (line,) = result.stderr.strip().splitlines()
        start = tmp_path / "empty" / ("sub" if args else "")
        assert line == f"depsync: error: no pyproject.toml in {str(start).rstrip('/')} or any parent directory"
    # a file that is missing from a project that exists is named once, not "uv.lock: uv.lock not found"
    write_files(tmp_path, {"proj/pyproject.toml": PYPROJECT})
    (line,) = depsync("check", "proj", cwd=tmp_path).stderr.strip().splitlines()
    assert line == "depsync: error: uv.lock not found in proj"
