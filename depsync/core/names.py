"""Names that cost nothing to import, for the check's start-up.

`packaging.utils` imports `packaging.tags` (platform, sysconfig, logging, struct) and
compiles its regexes at import, only to give most modules `canonicalize_name`, which is
PEP 503's one rule; depsync.core.sync.sources (reconcile's merge) is imported by the source rule only
for `host_of`. Both live here; the rest of packaging is imported where it is used
(tests/test_check_cache.py holds these to the originals).
"""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """PEP 503 normalization: runs of `-`, `_`, `.` become one `-`, lower case (as packaging does)."""
    return _SEPARATORS.sub("-", name).lower()


def host_of(url: str) -> str:
    """Host of a source URL, credentials and port dropped (`git+ssh://git@host:22/x` -> host).

    The check's source rule needs only this of depsync.core.sync.sources (reconcile's three-way merge:
    ten dataclasses, tomllib and datetime to import)."""
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url.removeprefix("git+")).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced "[" (IPv6 literal)
        return ""
