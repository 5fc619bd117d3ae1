"""Requirements in one normal form, whether written in pyproject.toml or recorded in uv.lock.

A `Req` is what uv records for one requirement: the normalized name, extras,
version specifier, marker and source (registry, git, path, url, index). Two Reqs
`matches` when uv would consider them the same input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name, canonicalize_version

from depsync.errors import DepsyncError
from depsync.model.markers import markers_equivalent

# Source kinds uv writes in a requirement table of uv.lock.
SOURCE_KEYS = ("git", "path", "editable", "directory", "url", "index", "registry", "virtual")


@dataclass(frozen=True)
class Source:
    """Where a requirement comes from. kind "registry" with no value: the default index."""

    kind: str
    value: str = ""
    ref: tuple[str, str] | None = None  # ("rev" | "tag" | "branch", value) for git
    subdirectory: str = ""

    def describe(self) -> str:
        if self.kind == "registry" and not self.value:
            return "registry"
        ref = f"@{self.ref[1]}" if self.ref else ""
        sub = f"#subdirectory={self.subdirectory}" if self.subdirectory else ""
        return f"{self.kind} {self.value}{ref}{sub}"


REGISTRY = Source("registry")
_PATH_KINDS = {"path", "editable", "directory", "virtual"}


def normalize_url(url: str) -> str:
    """Index/registry URL for comparison: no trailing slash, `file://` paths as plain paths."""
    return url.removeprefix("file://").rstrip("/")


def git_source(url: str, ref_kind: str | None = None, ref: str | None = None, subdirectory: str = "") -> Source:
    """A git source from its parts; the URL loses a `git+` prefix and any `?rev=`/`#` parts."""
    parts = urlsplit(url.removeprefix("git+"))
    query = dict(parse_qsl(parts.query))
    if ref is None:
        for kind in ("rev", "tag", "branch"):
            if kind in query:
                ref_kind, ref = kind, query[kind]
    subdirectory = subdirectory or query.get("subdirectory", "")
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return Source("git", base, (ref_kind or "rev", ref) if ref else None, subdirectory.strip("/"))


def source_from_lock_table(table: dict[str, Any]) -> Source:
    """Source of a requirement table in uv.lock (`git = "url?rev=x"`, `path = ...`, ...)."""
    for kind in SOURCE_KEYS:
        if kind in table:
            value = str(table[kind])
            if kind == "git":
                return git_source(value)
            if kind in ("url", "index", "registry"):
                return Source(kind, normalize_url(value), subdirectory=str(table.get("subdirectory", "")))
            return Source(kind, value.rstrip("/") or ".")
    return REGISTRY


def source_from_direct_url(url: str) -> Source:
    """Source of a PEP 508 direct reference (`name @ git+https://...@rev`)."""
    parts = urlsplit(url)
    fragment = dict(parse_qsl(parts.fragment))
    subdirectory = fragment.get("subdirectory", "")
    if parts.scheme.startswith("git+"):
        path, _, ref = parts.path.partition("@")
        base = urlunsplit((parts.scheme.removeprefix("git+"), parts.netloc, path, "", ""))
        return Source("git", base, ("rev", ref) if ref else None, subdirectory)
    if parts.scheme == "file":
        return Source("path", parts.path, subdirectory=subdirectory)
    return Source("url", normalize_url(urlunsplit((parts.scheme, parts.netloc, parts.path, parts.query, ""))), subdirectory=subdirectory)


def sources_match(expected: Source, recorded: Source) -> bool:
    """Whether a source derived from pyproject.toml is what uv recorded."""
    if expected.kind == "workspace":
        return recorded.kind in _PATH_KINDS
    if expected.kind in _PATH_KINDS and recorded.kind in _PATH_KINDS:
        editable = {expected.kind, recorded.kind} & {"editable"}
        if editable and expected.kind != recorded.kind:
            return False
        return _norm_path(expected.value) == _norm_path(recorded.value)
    return expected == recorded


def _norm_path(path: str) -> str:
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or "."


def specifier_key(text: str) -> frozenset[tuple[str, str]]:
    """Specifier set as a set of (operator, canonical version): order and spelling ignored."""
    specs = SpecifierSet(text)
    return frozenset(
        (s.operator, s.version if s.operator == "===" or s.version.endswith(".*") else canonicalize_version(s.version))
        for s in specs
    )


@dataclass(frozen=True)
class Req:
    name: str
    extras: frozenset[str] = frozenset()
    specifier: frozenset[tuple[str, str]] = frozenset()
    marker: str | None = field(default=None, compare=False)  # as text; compared semantically
    source: Source = REGISTRY
    text: str = field(default="", compare=False)  # as written, for messages
    origin: str = field(default="", compare=False)  # "dependencies", "extra:x", "group:g", ...

    def matches(self, other: Req, requires_python: str = "") -> bool:
        return (
            self.name == other.name
            and self.extras == other.extras
            and self.specifier == other.specifier
            and sources_match(self.source, other.source)
            and markers_equivalent(self.marker, other.marker, requires_python)
        )

    def describe(self) -> str:
        if self.text:
            return self.text
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        spec = ",".join(f"{op}{v}" for op, v in sorted(self.specifier))
        marker = f"; {self.marker}" if self.marker else ""
        source = "" if self.source == REGISTRY else f" ({self.source.describe()})"
        return f"{self.name}{extras}{spec}{marker}{source}"


def parse_requirement(text: str, where: str) -> Requirement:
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]  # packaging adds the text and a caret on more lines
        raise DepsyncError(f"invalid requirement {text!r}: {reason}", where) from None


def req_from_lock_table(table: Any, where: str) -> Req:
    """A requirement table of uv.lock (`{ name = ..., specifier = ..., marker = ..., git = ... }`)."""
    if not isinstance(table, dict) or not isinstance(table.get("name"), str):
        raise DepsyncError(f"malformed requirement entry {table!r}", where)
    try:
        return Req(
            name=canonicalize_name(table["name"]),
            extras=frozenset(canonicalize_name(e) for e in table.get("extras", [])),
            specifier=specifier_key(table.get("specifier", "")),
            marker=str(table["marker"]) if table.get("marker") else None,
            source=source_from_lock_table(table),
        )
    except (InvalidSpecifier, ValueError) as exc:
        raise DepsyncError(f"malformed requirement {table!r}: {exc}", where) from None
