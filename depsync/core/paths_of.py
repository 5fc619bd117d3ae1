"""Pure: which of a tree's files a path pattern of `[tool.depsync]` names.

A pattern without glob characters names that file, or every file below it when it is a
directory (`megatron/core/export`); with `*`, `?` or `[` it is matched against the whole path
(`fnmatch`, where `*` crosses `/`: `tests/**/conftest.py` and `tests/*/conftest.py` alike).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

_GLOB = set("*?[")


def matches(pattern: str, path: str) -> bool:
    pattern = pattern.strip("/")
    if _GLOB & set(pattern):
        return fnmatchcase(path, pattern)
    return path == pattern or path.startswith(pattern + "/")


def selected(patterns: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths any pattern names, sorted."""
    wanted = tuple(patterns)
    return sorted(p for p in paths if any(matches(pattern, p) for pattern in wanted))
