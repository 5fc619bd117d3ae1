"""Workspace member globbing, once, for `depsync check` and for its cache key.

Imports only the interpreter's own modules: the cache replay (depsync/entry.py) runs it
before anything else is imported. uv matches `[tool.uv.workspace] members` with dot
directories included and `**` at any depth; so does this. A cache key built by other
globbing code could miss a member check would read (a dot directory, a deeper `**` match)
and replay a stale "consistent".
"""

from __future__ import annotations

import glob
import os


def member_directories(root: str, pattern: str) -> list[tuple[str, bool]]:
    """(relative path, has a pyproject.toml) of each directory the pattern matches under root."""
    found = []
    for hit in glob.glob(pattern, root_dir=root, recursive=True, include_hidden=True):
        full = os.path.join(root, hit)
        if os.path.isdir(full):
            found.append((os.path.normpath(hit).replace(os.sep, "/"), os.path.isfile(os.path.join(full, "pyproject.toml"))))
    return sorted(found)
