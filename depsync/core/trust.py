"""Pure: validate values that come from a repository before they reach a command line or a path.

Everything in pyproject.toml, uv.lock, Dockerfiles and [tool.depsync] is written by
whoever landed a PR. These checks keep such values from becoming options (`--upload-pack=`),
transports that run commands (`ext::sh -c ...`), or paths outside the project (`../x`, `/etc`).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from depsync.core.lazy_pattern import LazyPattern
from depsync.errors import DepsyncError

# git transports that only move data; `ext::`, `fd::` and unknown helpers are refused
GIT_SCHEMES = ("https", "http", "ssh", "git", "file")
GIT_ALLOW_PROTOCOL = ":".join(GIT_SCHEMES)  # for git's own GIT_ALLOW_PROTOCOL, a second lock on the same door
_SCP_LIKE = LazyPattern(r"^(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:(?!//)[A-Za-z0-9._~/-][^\s]*\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+){1,3}(?:(?:a|b|rc)[0-9]+)?")
# a full git object name: SHA-1 (40) or SHA-256 (64) hex; fullmatch, so `<sha>\n` is not one
_FULL_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_full_commit(value: object) -> bool:
    """A full commit name (lower-case hex, 40 or 64 digits), nothing before or after it."""
    return isinstance(value, str) and _FULL_COMMIT.fullmatch(value) is not None


def git_url_allowed(url: str) -> bool:
    """True for https/http/ssh/git/file URLs and scp-like `user@host:path`; never an option."""
    url = url.strip()
    if not url or url.startswith("-") or _CONTROL.search(url):
        return False
    url = url.removeprefix("git+")
    scheme, sep, rest = url.partition("://")
    if sep:
        return scheme.lower() in GIT_SCHEMES and bool(rest) and not rest.startswith("-")
    if "::" in url:  # git's `<transport>::<address>` helper syntax (ext::, fd::)
        return False
    return bool(_SCP_LIKE.match(url))


def git_ref_allowed(ref: str) -> bool:
    """A ref or revision name that git cannot read as an option."""
    return bool(ref) and not ref.startswith("-") and not _CONTROL.search(ref)


def require_ref(ref: str) -> str:
    if not git_ref_allowed(ref):
        raise DepsyncError(f"{ref!r} is not a git ref depsync will pass to git (it starts with '-' or has control characters)")
    return ref


# An image reference by the OCI distribution grammar (distribution/reference): a domain with
# an optional port, lowercase path components joined by `.`, `_`, `__` or dashes, a tag, a
# digest. No `..` component, no space, no `?`/`#`: the name becomes part of an Engine API path
# (`/images/<name>/json`), where `img/../../containers/create` would be another endpoint.
_DOMAIN_PART = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[0-9A-Fa-f:]+\])(?::[0-9]+)?"
_PATH_PART = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE_REFERENCE = LazyPattern(
    rf"(?:{_DOMAIN}/)?{_PATH_PART}(?:/{_PATH_PART})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?",
    re.ASCII,
)


def image_reference_allowed(image: str) -> bool:
    """An OCI image reference (`nvcr.io/nvidia/pytorch:25.01-py3`, `localhost:5000/a/b@sha256:...`)."""
    return 0 < len(image) <= 512 and bool(_IMAGE_REFERENCE.fullmatch(image))


def uv_version_allowed(version: str) -> bool:
    """A uv release number such as 0.7.2: it names a cache directory and a wheel, so nothing else."""
    return isinstance(version, str) and _VERSION.fullmatch(version) is not None


def project_relative(path: str, what: str) -> str:
    """A path from a repository, checked to stay inside the project: relative, no `..`, no
    control characters, not an option. Returns it in POSIX form."""
    if not isinstance(path, str) or not path.strip():
        raise DepsyncError(f"{what} must be a non-empty relative path")
    if _CONTROL.search(path):
        raise DepsyncError(f"{what} {path!r} has control characters")
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute() or re.match(r"^[A-Za-z]:", path):
        raise DepsyncError(f"{what} {path!r} is absolute; depsync only reads and writes inside the project")
    if ".." in posix.parts:
        raise DepsyncError(f"{what} {path!r} leaves the project ('..'); depsync only reads and writes inside the project")
    if path.startswith("-"):
        raise DepsyncError(f"{what} {path!r} starts with '-'")
    return posix.as_posix()


def names_interpreter_path(text: str) -> bool:
    """Whether a `.python-version(s)` holds an interpreter *path* (uv executes it to ask what it
    is) rather than a version request (`3.12`, `cpython@3.12`, `pypy3.10`, `>=3.11`): any request
    line with a path separator, or starting with `.` or `~`."""
    for line in text.splitlines():
        request = line.split("#", 1)[0].strip()
        if request and ("/" in request or "\\" in request or request.startswith((".", "~"))):
            return True
    return False
