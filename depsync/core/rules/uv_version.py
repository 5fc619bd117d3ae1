"""uv versions: the Dockerfile's pin, [tool.uv] required-version and the lock format must agree."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from depsync.core.findings import Finding
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES
from depsync.core.trust import uv_version_allowed

# uv has written lock format version 1 since 0.3.0; `revision` bumps inside it are
# read by older uv of the same format (uv 0.7.2 reads Megatron-LM's revision-3 lock).
LOCK_FORMAT_SINCE = {1: Version("0.3.0")}

# The `revision` each uv writes, measured here (`uv lock --offline` on a one-package project
# with that release): uv writes its own revision whatever the old lock had, and a later uv
# never writes a lower one. So a pin writes at most the revision of the first measured
# release at or after it; a pin past the last one has no known bound (no finding).
LOCK_REVISION_WRITTEN = (
    (Version("0.7.2"), 2),
    (Version("0.7.22"), 2),
    (Version("0.8.0"), 2),
    (Version("0.9.0"), 3),
    (Version("0.11.0"), 3),
    (Version("0.13.9"), 5),
)


def revision_bound(pin: Version) -> tuple[int, Version] | None:
    """(the highest lock revision uv `pin` can write, the measured release that bounds it)."""
    for release, revision in LOCK_REVISION_WRITTEN:
        if pin <= release:
            return revision, release
    return None


def newer_than(revision: int) -> Version | None:
    """The last measured release that writes less than revision: the lock's writer is newer."""
    older = [release for release, written in LOCK_REVISION_WRITTEN if written < revision]
    return older[-1] if older else None


def exact_required_version(required: object) -> str | None:
    """The one release `[tool.uv] required-version` names (`==0.7.2` or `0.7.2`), else None
    (a range, or anything that is not a release number)."""
    exact = str(required or "").strip().removeprefix("==").strip()
    return exact if exact and all(part.isdigit() for part in exact.split(".")) and uv_version_allowed(exact) else None


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    pins = [(d, pin) for d in inputs.dockerfiles for pin in d.uv_pins]
    for dockerfile, pin in pins:
        if not uv_version_allowed(pin.version):  # it would name a path and a download: refused, and said
            yield RULES["uv-version-mismatch"].finding(
                dockerfile.path, pin.line, f"{pin.how} {pin.version!r} is not a uv release number", "pin a release such as 0.7.2"
            )
    pins = [(d, pin) for d, pin in pins if uv_version_allowed(pin.version)]
    required = pyproject.uv.get("required-version")
    if required:
        try:
            spec = SpecifierSet(required if required[0] in "<>=!~" else f"=={required}")
        except InvalidSpecifier:
            spec = None
        for dockerfile, pin in pins:
            try:
                ok = spec is None or Version(pin.version) in spec
            except InvalidVersion:
                ok = True
            if not ok:
                yield RULES["uv-version-mismatch"].finding(
                    dockerfile.path,
                    pin.line,
                    f"the image pins uv {pin.version} ({pin.how}) but pyproject requires uv {required}",
                    "change the pin or [tool.uv] required-version so they agree",
                )
    versions = {pin.version for _, pin in pins}
    if len(versions) > 1:
        for dockerfile, pin in pins:
            yield RULES["uv-version-inconsistent"].finding(
                dockerfile.path,
                pin.line,
                f"uv {pin.version} here, but other pins say {', '.join(sorted(versions - {pin.version}))}",
                "pin one uv version in every image that installs from this lock",
            )
    lock = inputs.lock
    if lock is None:
        return
    since = LOCK_FORMAT_SINCE.get(lock.version or 0)
    if since is None:
        yield RULES["uv-lock-format"].finding(
            lock.path,
            lock.line_of_key("version"),
            f"lock format version {lock.version!r} is not one depsync knows uv to read",
            "relock with `depsync lock`",
        )
        return
    for dockerfile, pin in pins:
        try:
            pinned = Version(pin.version)
        except InvalidVersion:
            continue
        bound = revision_bound(pinned)
        if pinned >= since and bound is not None and lock.revision > bound[0]:
            writer = newer_than(lock.revision)
            yield RULES["uv-lock-newer-than-pin"].finding(
                dockerfile.path,
                pin.line,
                f"{lock.path} has revision {lock.revision}, written by a uv newer than the image's uv {pin.version} ({pin.how})"
                + (f": uv {writer} and older write a lower revision" if writer else "")
                + f"; uv {pin.version} writes revision {bound[0]}, so relocking in the image (`depsync lock`) downgrades the lock "
                f"to revision {bound[0]} and rewrites its markers, and the lock the team commits was not made with the image's uv",
                f"pin {'a uv newer than ' + str(writer) if writer else 'the uv that made the lock'} in the image, or relock with "
                f"uv {pin.version} (`depsync lock`) and commit that lock",
            )
        if pinned < since:
            yield RULES["uv-lock-format"].finding(
                dockerfile.path,
                pin.line,
                f"uv {pin.version} cannot read lock format version {lock.version} (needs uv >= {since})",
                f"pin uv >= {since} in the image",
            )
