"""Lock integrity: signs that uv.lock was edited by hand or merged as text."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import unquote

from packaging.version import InvalidVersion, Version

from depsync.core.findings import Finding
from depsync.core.lazy_pattern import LazyPattern
from depsync.core.model.lock import Lock, LockPackage
from depsync.core.model.lock_wheels import CanonicalWheels
from depsync.core.names import canonicalize_name, sdist_identity
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES
from depsync.core.trust import is_full_commit

_HASH = LazyPattern(r"^(sha256:[0-9a-f]{64}|sha384:[0-9a-f]{96}|sha512:[0-9a-f]{128}|md5:[0-9a-f]{32})\Z")
_FIX = "do not edit uv.lock by hand: restore it (git checkout) and run `depsync lock`"


def _filename(artifact: dict[str, Any]) -> str:
    # the first of filename, url, path that is a string (one lookup each, ~4,000 artifacts a lock)
    value = artifact.get("filename")
    if not isinstance(value, str):
        value = artifact.get("url")
        if not isinstance(value, str):
            value = artifact.get("path")
            if not isinstance(value, str):
                return ""
    name = value.partition("#")[0].partition("?")[0].rpartition("/")[2]
    return unquote(name) if "%" in name else name


@functools.lru_cache(maxsize=None)
def _canonical(name: str) -> str:
    return canonicalize_name(name)


def _same_version(a: str, b: str) -> bool:
    if a == b:
        return True
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return False


def _local_only_difference(file_version: str, locked: str) -> bool:
    """The file name adds a local segment the locked version lacks (`1.2.0+cu12torch2.10` for
    `1.2.0`): a renamed build of the same release, as GPU projects publish them."""
    try:
        named, version = Version(file_version), Version(locked)
    except InvalidVersion:
        return False
    return named.local is not None and version.local is None and named.public == version.public


def _artifact_identity(filename: str, expected_version: str | None = None) -> tuple[str, str] | None:
    """(normalized name, version) a wheel or sdist file name declares, None when it declares none."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return (_canonical(parts[0]), parts[1]) if len(parts) >= 5 else ("", "")
    if filename.endswith((".tar.gz", ".zip")):
        # the version as the lock spells it needs no parse (the usual case: ~300 sdists a lock)
        name, sep, version = filename[: -7 if filename.endswith(".tar.gz") else -4].rpartition("-")
        if sep and expected_version is not None and version == expected_version:
            return _canonical(name), version
        return sdist_identity(filename)  # None: legacy sdist names cannot always be split unambiguously
    return None


def wheel_prefix(name: str, version: str | None) -> str | None:
    """`name_with_underscores-version-`: how a wheel of this canonical name and version starts,
    so the common wheel needs no split (None when no file name can start so unambiguously)."""
    if version is None or "-" in version or not version:
        return None
    return f"{name.replace('-', '_')}-{version}-"


def well_formed_hash(digest: Any) -> bool:
    return _HASH.match(str(digest)) is not None


_HEX_DIGITS = b"0123456789abcdef"


def all_plain_sha256(digests: list[Any]) -> bool:
    """Is every digest `sha256:` and 64 lowercase hex digits, as uv writes nearly all of them?
    Tested on them joined (a few passes over one string) instead of a regex per artifact: a
    lock has ~4,000. False says only "test each one"."""
    try:
        joined = "\n".join(digests) + "\n"
    except TypeError:  # one is not a string
        return False
    count = len(digests)
    # each one is 71 characters: exactly `count` newlines, each at the end of a 72-character slot
    if len(joined) != 72 * count or joined.count("\n") != count or joined[71::72] != "\n" * count:
        return False
    if any(joined[offset::72] != char * count for offset, char in enumerate("sha256:")):
        return False
    # every slot starts `sha256:`, whose non-hex characters are `sh:`: nothing else may be left
    return joined.encode().translate(None, _HEX_DIGITS + b"\n") == b"sh:" * count


def wheels_named(wheels: Sequence[Any], prefix: str) -> bool:
    """Does every wheel's file name (the last part of its URL, with no query, fragment or
    escapes to undo) start with prefix (wheel_prefix: this name and version) and end in
    `-tag-tag.whl`? One plain pass (no split, no normalizing); False says only "test each one"."""
    if isinstance(wheels, CanonicalWheels):  # uv's own lines: the names without the tables
        names = wheels.plain_file_names()
        return names is not None and _named(names, prefix)
    names = []
    for wheel in wheels:
        try:
            if "filename" in wheel:
                return False
            url = wheel["url"]
        except (KeyError, TypeError):  # not the plain shape
            return False
        if not isinstance(url, str) or "#" in url or "?" in url or "%" in url or "\n" in url:
            return False
        names.append(url.rpartition("/")[2])
    return _named(names, prefix)


def _named(names: list[str], prefix: str) -> bool:
    # the prefix has 2 dashes (the name has none, the version none), the tags 2 more
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".whl") and name.count("-") >= 4):
            return False
    return True


def _artifacts(package: LockPackage) -> list[Any]:
    """The artifacts whose hashes are still to test: uv's own wheel lines (CanonicalWheels)
    have well-formed ones by their pattern, so they are not listed."""
    raw = package.raw
    wheels = raw.get("wheels", []) or []
    artifacts = [] if isinstance(wheels, CanonicalWheels) else list(wheels)
    if isinstance(raw.get("sdist"), dict):
        artifacts.append(raw["sdist"])
    return artifacts


def _check_artifacts(lock: Lock, package: LockPackage, artifacts: list[Any], hashes_checked: bool) -> Iterator[Finding]:
    """Findings on package's artifacts: the listed ones (hashes_checked: their digests were all
    found plain already) and the names of uv's own wheel lines (their digests are plain)."""
    wheels = package.raw.get("wheels") or []
    canonical = wheels if isinstance(wheels, CanonicalWheels) else None
    listed_wheels = 0 if canonical is not None else len(wheels)
    prefix = wheel_prefix(package.name, package.version)
    if canonical is not None and not (prefix is not None and wheels_named(canonical, prefix)):
        yield from _each_artifact(lock, package, list(canonical), True)  # each name on its own; no hash to test
    # the common package: its wheels are all named for it, so only its sdist is left to test
    if hashes_checked and listed_wheels and prefix is not None and len(artifacts) - listed_wheels <= 1 and wheels_named(artifacts[:listed_wheels], prefix):
        artifacts = artifacts[listed_wheels:]
    yield from _each_artifact(lock, package, artifacts, hashes_checked)


def _each_artifact(lock: Lock, package: LockPackage, artifacts: list[Any], hashes_checked: bool) -> Iterator[Finding]:
    for artifact in artifacts:
        if not isinstance(artifact, dict):
            continue
        filename = _filename(artifact)
        identity = _artifact_identity(filename, package.version)
        if identity is not None and package.version is not None:
            name, version = identity
            # a wheel from a direct URL or path: uv takes the version from the wheel's METADATA,
            # not its file name, so the name may carry a local segment the lock never records
            direct = package.source.kind in ("url", "path") and _local_only_difference(version, package.version)
            if name != package.name or not (_same_version(version, package.version) or direct):
                yield RULES["lock-artifact-mismatch"].finding(
                    lock.path,
                    package.line,
                    f"package {package.name} {package.version} lists artifact {filename}, which is {name or '?'} {version or '?'}",
                    _FIX,
                )
        if hashes_checked:
            continue
        digest = artifact.get("hash")
        if digest is not None and not well_formed_hash(digest):
            yield RULES["lock-bad-hash"].finding(
                lock.path, package.line, f"package {package.name}: artifact {filename} has a malformed hash {str(digest)[:80]!r}", _FIX
            )


def conflict_markers(inputs: CheckInputs) -> Iterator[Finding]:
    for path, lines in inputs.conflict_markers:
        yield RULES["conflict-markers"].finding(
            path,
            lines[0],
            f"{path} has git conflict markers ({len(lines)} marker line(s)); a merge was left unresolved",
            "run `depsync reconcile` to restore dev's triple, or resolve the merge and relock with `depsync lock`",
        )


def check(inputs: CheckInputs) -> Iterator[Finding]:
    lock = inputs.lock
    if lock is None:
        return
    versions: dict[str, set[str | None]] = {}
    seen: set[tuple[str, str | None, Any]] = set()
    artifacts = [_artifacts(package) for package in lock.packages]
    digests = [artifact.get("hash") for listed in artifacts for artifact in listed if isinstance(artifact, dict)]
    hashes_checked = all_plain_sha256([digest for digest in digests if digest is not None])
    for package, listed in zip(lock.packages, artifacts):
        versions.setdefault(package.name, set()).add(package.version)
        key = (package.name, package.version, package.source)
        if key in seen:
            yield RULES["lock-duplicate-package"].finding(
                lock.path, package.line, f"package {package.name} {package.version} from {package.source.describe()} appears twice", _FIX
            )
        seen.add(key)
        if package.source.kind == "git":
            commit = str(package.raw["source"]["git"]).partition("#")[2]
            if not is_full_commit(commit):
                yield RULES["lock-git-unresolved"].finding(
                    lock.path,
                    package.line,
                    f"git source of {package.name} has {'no commit' if not commit else repr(commit)} after `#`; uv always records the full commit",
                    _FIX,
                )
        yield from _check_artifacts(lock, package, listed, hashes_checked)
    for package in lock.packages:
        raw = package.raw
        tables = list(raw.get("dependencies", []) or [])
        for section in ("optional-dependencies", "dev-dependencies"):
            for deps in (raw.get(section) or {}).values():
                tables.extend(deps or [])
        for dep in tables:
            if not isinstance(dep, dict) or not isinstance(dep.get("name"), str):
                continue
            name = _canonical(dep["name"])
            if name not in versions:
                problem = f"no package {name}"
            elif "version" in dep and str(dep["version"]) not in versions[name]:
                problem = f"no {name} {dep['version']} (it has {', '.join(sorted(str(v) for v in versions[name]))})"
            else:
                continue
            yield RULES["lock-dangling-dependency"].finding(
                lock.path, package.line, f"{package.name} depends on {name}, but the lock has {problem}", _FIX
            )
