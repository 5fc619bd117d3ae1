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
_PLAIN_RELEASE = re.compile(r"(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*")


def canonicalize_name(name: str) -> str:
    """PEP 503 normalization: runs of `-`, `_`, `.` become one `-`, lower case (as packaging does)."""
    lowered = name.lower()
    if "_" not in lowered and "." not in lowered and "--" not in lowered:
        return lowered  # the usual name (a lock has thousands): no regex pass
    return _SEPARATORS.sub("-", lowered)


def host_of(url: str) -> str:
    """Host of a source URL, credentials and port dropped (`git+ssh://git@host:22/x` -> host).

    The check's source rule needs only this of depsync.core.sync.sources (reconcile's three-way merge:
    ten dataclasses, tomllib and datetime to import)."""
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url.removeprefix("git+")).hostname or "").lower()
    except ValueError:  # e.g. an unbalanced "[" (IPv6 literal)
        return ""


def canonicalize_version(version: str) -> str:
    """packaging.utils.canonicalize_version (trailing `.0`s of the release stripped) without
    importing packaging.utils; a string that is not a version comes back as it is."""
    if _PLAIN_RELEASE.fullmatch(version):  # `2.6.0`: what most specifiers say, no Version to build
        while version.endswith(".0"):
            version = version[:-2]
        return version
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        return version
    release = ".".join(str(part) for part in parsed.release)
    while release.endswith(".0"):
        release = release[:-2]
    text = f"{parsed.epoch}!{release}" if parsed.epoch else release
    if parsed.pre is not None:
        text += f"{parsed.pre[0]}{parsed.pre[1]}"
    if parsed.post is not None:
        text += f".post{parsed.post}"
    if parsed.dev is not None:
        text += f".dev{parsed.dev}"
    if parsed.local is not None:
        text += f"+{parsed.local}"
    return text


def sdist_identity(filename: str) -> tuple[str, str] | None:
    """(normalized name, normalized version) of an sdist file name (`name-version.tar.gz` or
    `.zip`), as packaging.utils.parse_sdist_filename splits it; None when it declares none."""
    from packaging.version import InvalidVersion, Version

    for suffix in (".tar.gz", ".zip"):
        if filename.endswith(suffix):
            name, sep, version = filename[: -len(suffix)].rpartition("-")
            if not sep:
                return None
            try:
                return canonicalize_name(name), str(Version(version))
            except InvalidVersion:
                return None
    return None
