"""uv versions: the Dockerfile's pin, [tool.uv] required-version and the lock format must agree."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from depsync.core.findings import Finding
from depsync.core.rules import RULES, CheckInputs
from depsync.core.trust import uv_version_allowed

# uv has written lock format version 1 since 0.3.0; `revision` bumps inside it are
# read by older uv of the same format (uv 0.7.2 reads Megatron-LM's revision-3 lock).
LOCK_FORMAT_SINCE = {1: Version("0.3.0")}


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
            too_old = Version(pin.version) < since
        except InvalidVersion:
            continue
        if too_old:
            yield RULES["uv-lock-format"].finding(
                dockerfile.path,
                pin.line,
                f"uv {pin.version} cannot read lock format version {lock.version} (needs uv >= {since})",
                f"pin uv >= {since} in the image",
            )
