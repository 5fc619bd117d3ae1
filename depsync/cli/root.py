"""Project-root discovery, the way uv finds its project: `depsync check` works from any
subdirectory of a project, as `uv lock` does.

From the starting directory upwards, the first pyproject.toml that has a uv.lock beside
it or a [tool.uv] table is the project. When that one has no uv.lock and an ancestor is
a uv workspace root with a lock (a member's directory), the workspace root is the project,
since that is where uv keeps the lock. Nothing found: the starting directory; when no
pyproject.toml exists there or above at all, a command that needs one says so as uv does
("no pyproject.toml in DIR or any parent directory").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from depsync.core.model.tomltext import parse_toml
from depsync.errors import DepsyncError


def _uv_table(pyproject: Path) -> dict | None:  # type: ignore[type-arg]
    """pyproject's [tool.uv] ({} when it has an empty one), None when it has none or is not
    readable TOML (see _is_project)."""
    try:
        data = parse_toml(pyproject.read_text(encoding="utf-8"), str(pyproject))
    except (OSError, UnicodeDecodeError, DepsyncError):
        return {"unreadable": True}
    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    return uv if isinstance(uv, dict) else None


def _is_project(directory: Path) -> bool:
    pyproject = directory / "pyproject.toml"
    if not pyproject.is_file():
        return False
    # a pyproject.toml that does not parse counts: the user is in that project, and check says what is wrong
    return (directory / "uv.lock").is_file() or _uv_table(pyproject) is not None


def _workspace_root_above(directory: Path) -> Path | None:
    for parent in directory.parents:
        if (parent / "pyproject.toml").is_file() and (parent / "uv.lock").is_file():
            uv = _uv_table(parent / "pyproject.toml")
            if uv is not None and isinstance(uv.get("workspace"), dict):
                return parent
    return None


def find_root(start: Path) -> Path:
    """The project directory for start (see the module docstring); start when none is found."""
    start = Path(os.path.abspath(start))  # `..` folded, symlinks kept as the user sees them
    for directory in (start, *start.parents):
        if _is_project(directory):
            if not (directory / "uv.lock").is_file():
                return _workspace_root_above(directory) or directory
            return directory
    return start


def any_pyproject(start: Path) -> bool:
    """A pyproject.toml in start or any of its parents (what the search looked at)."""
    start = Path(os.path.abspath(start))
    return any((directory / "pyproject.toml").is_file() for directory in (start, *start.parents))


def discover(path: Path) -> tuple[Path, str | None]:
    """(the root to use, a note for stderr when it is not the directory the user named).

    The root comes back relative to the current directory (`..`), so messages keep the
    short paths users type; the note names it in full."""
    start = path if path.is_dir() else path.parent
    found = find_root(start)
    if found == Path(os.path.abspath(start)):
        return path, None
    try:
        relative = Path(os.path.relpath(found))
    except ValueError:  # another drive (Windows)
        relative = found
    return relative, f"project root: {found}"


def find_root_of(args: Any, *, needs_pyproject: bool = False) -> None:
    """args.path: the project directory given, else found upwards from the current one.
    needs_pyproject: the command reads the work tree's pyproject.toml, so none in the
    directory or above it is an error here, naming where the search went (as uv's does)."""
    from depsync.report import ui

    given = args.path if args.path is not None else Path(".")
    searched = given.is_dir() or args.path is None
    if searched and needs_pyproject and not any_pyproject(given):
        raise DepsyncError(f"no pyproject.toml in {os.path.abspath(given)} or any parent directory")
    args.path, note = discover(given) if searched else (given, None)
    if note:
        ui.note(note)
    else:
        ui.detail(f"project root: {os.path.abspath(args.path)}")
