"""Pure: which of a tree's files a path pattern of `[tool.depsync]` names.

A pattern without glob characters names that file, or every file below it when it is a
directory (`megatron/core/export`); with `*`, `?` or `[` it is matched against the whole path
(`fnmatch`, where `*` crosses `/`: `tests/**/conftest.py` and `tests/*/conftest.py` alike).
"""

from __future__ import annotations

import re
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


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression for a path that `glob.glob(pattern, recursive=True)` would match (as
    uv matches `[tool.uv.workspace] members`): `*` and `?` stay within one directory name, `**`
    as a whole name is any number of directories (none included)."""
    parts = pattern.strip("/").split("/")
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_component(part) + ("" if last else "/"))
    return re.compile("".join(out))


def _component(part: str) -> str:
    """One directory name of a glob pattern as a regular expression (never matching `/`)."""
    out, index = [], 0
    while index < len(part):
        char = part[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in part[index + 2:]:  # a class: `[ab]`, `[!a]`, `[]a]`
            end = part.index("]", index + 2)
            body = part[index + 1:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
