"""Workspace member globbing, once, for `depsync check` and for its cache key.

Imports only the interpreter's own modules: the cache replay (depsync/entry.py) runs it
before anything else is imported. uv matches `[tool.uv.workspace] members` with dot
directories included and `**` at any depth; so does this. A cache key built by other
globbing code could miss a member check would read (a dot directory, a deeper `**` match)
and replay a stale "consistent".
"""

from __future__ import annotations

import os


def member_directories(root: str, pattern: str) -> list[tuple[str, bool]]:
    """(relative path, has a pyproject.toml) of each directory the pattern matches under root."""
    found = []
    import glob  # only a workspace has member globs

    for hit in glob.glob(pattern, root_dir=root, recursive=True, include_hidden=True):
        full = os.path.join(root, hit)
        if os.path.isdir(full):
            found.append((os.path.normpath(hit).replace(os.sep, "/"), os.path.isfile(os.path.join(full, "pyproject.toml"))))
    return sorted(found)


def named_members(root: str, patterns: list[object], excludes: list[object]) -> tuple[list[str], list[str]]:
    """(members inside the project, members that resolve outside it): the directories with a
    pyproject.toml that `[tool.uv.workspace] members` matches and `exclude` does not, as uv
    reads them. Wherever they are: under `venv/`, `node_modules/` or `.tox/` (names every copy
    skips otherwise), or behind a symlink (uv follows it; inside the project it is read through
    the link, outside it is named, never silently left out)."""
    import fnmatch

    excluded = [str(e).rstrip("/") for e in excludes if isinstance(e, str)]
    real_root = os.path.realpath(root)
    inside: list[str] = []
    outside: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            continue
        for relative, has_pyproject in member_directories(root, pattern):
            if not has_pyproject or any(fnmatch.fnmatch(relative, e) for e in excluded):
                continue
            real = os.path.realpath(os.path.join(root, relative))
            lexically_out = relative == ".." or relative.startswith("../") or os.path.isabs(relative)
            if lexically_out or not (real == real_root or real.startswith(real_root + os.sep)):
                outside.append(relative)
            elif relative != ".":
                inside.append(relative)
    return sorted(set(inside)), sorted(set(outside))
