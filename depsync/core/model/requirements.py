"""Requirements in one normal form, whether written in pyproject.toml or recorded in uv.lock.

A `Req` is what uv records for one requirement: the normalized name, extras,
version specifier, marker and source (registry, git, path, url, index). Two Reqs
`matches` when uv would consider them the same input.
"""

from __future__ import annotations

import functools
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from depsync.core.model.marker_text import InvalidMarker, normalize_marker
from depsync.core.model.markers import markers_equivalent
from depsync.core.names import canonicalize_name, canonicalize_version
from depsync.errors import DepsyncError
from depsync.records import field, record

# Source kinds uv writes in a requirement table of uv.lock.
SOURCE_KEYS = ("git", "path", "editable", "directory", "url", "index", "registry", "virtual")


@record
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


def _version_key(operator: str, version: str) -> str:
    """A specifier's version the way uv compares it (measured with uv 0.13.9).

    By value: `>=2.6.0` is `>=2.6`, `==1.1` is `==1.1.0`, and `==1.*` is `==1.0.*`. Except
    for `~=`, whose release segments carry its meaning: `~=1.0.0` is not `~=1.0`. `===` is
    a plain string comparison.
    """
    if operator == "===":
        return version
    if version.endswith(".*"):
        return canonicalize_version(version[:-2]) + ".*"
    if operator == "~=":
        return str(Version(version))  # normalized spelling, segments kept
    return canonicalize_version(version)


@functools.lru_cache(maxsize=4096)  # the same few specifiers again and again: pyproject, the lock's metadata, members
def specifier_key(text: str) -> frozenset[tuple[str, str]]:
    """Specifier set as a set of (operator, version key): order and spelling ignored."""
    specs = SpecifierSet(_normalize_space(text))
    try:
        return frozenset((s.operator, _version_key(s.operator, s.version)) for s in specs)
    except InvalidVersion as exc:
        raise InvalidSpecifier(str(exc)) from None


@record
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


@record
class ParsedRequirement:
    """A PEP 508 requirement as uv reads it: the specifier a packaging object, the marker its
    text in packaging's normal form."""

    name: str  # as written
    extras: tuple[str, ...]
    specifier: SpecifierSet
    url: str | None
    marker: str | None


class RequirementSyntaxError(ValueError):
    """A requirement string uv would not accept either."""


def _normalize_space(text: str) -> str:
    """Every whitespace character outside quotes as one space.

    uv treats any Unicode whitespace (newlines from TOML multi-line strings, tabs, NBSP) as a
    separator; packaging accepts only spaces and tabs, so it gets the text this way.
    """
    out: list[str] = []
    quote = ""
    for char in text:
        if quote:
            out.append(char)
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            out.append(char)
        else:
            out.append(" " if char.isspace() else char)
    return "".join(out).strip()


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_EXTRA = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def _url_end(text: str) -> tuple[int, int] | None:
    """(start, end) of what ends a direct URL: `;` followed by whitespace, or whitespace
    followed by `;`. uv 0.13.9 reads `pkg @ URL; marker` (no space before `;`) this way;
    packaging rejects it. One pass, so a hostile run of spaces costs linear time."""
    for index, char in enumerate(text):
        if char != ";":
            continue
        if index + 1 < len(text) and text[index + 1].isspace():
            start = index
            while start > 0 and text[start - 1].isspace():
                start -= 1
            return start, index + 1
        if index > 0 and text[index - 1].isspace():
            start = index
            while start > 0 and text[start - 1].isspace():
                start -= 1
            return start, index + 1
    return None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _parse_marker_text(text: str) -> str:
    if not text.strip():
        raise RequirementSyntaxError("expected a marker after ';'")
    return normalize_marker(_normalize_space(text))


def _split_requirement(text: str) -> ParsedRequirement:
    """The grammar uv's PEP 508 parser (crates/uv-pep508) accepts, written for depsync."""
    pos = _skip_space(text, 0)
    name = _NAME.match(text, pos)
    if name is None:
        raise RequirementSyntaxError("expected a package name starting with a letter or digit")
    pos = _skip_space(text, name.end())
    extras: list[str] = []
    if pos < len(text) and text[pos] == "[":
        close = text.find("]", pos)
        if close < 0:
            raise RequirementSyntaxError("missing closing bracket ']'")
        inner = text[pos + 1 : close]
        if inner.strip():  # `pkg[]` is allowed: no extras
            for part in inner.split(","):
                part = part.strip()
                if not _EXTRA.fullmatch(part):
                    raise RequirementSyntaxError(f"invalid extra name {part!r}")
                extras.append(part)
        pos = _skip_space(text, close + 1)
    rest = text[pos:]
    url: str | None = None
    spec = ""
    marker_text: str | None = None
    if rest.startswith("@"):
        after = rest[1:]
        end = _url_end(after)
        url = (after[: end[0]] if end else after).strip()
        if not url:
            raise RequirementSyntaxError("expected a URL after '@'")
        if end:
            marker_text = after[end[1] :]
    elif rest.startswith("("):
        close = rest.find(")")
        if close < 0:
            raise RequirementSyntaxError("missing closing parenthesis ')'")
        spec = rest[1:close]
        tail = rest[close + 1 :].strip()
        if tail:
            if not tail.startswith(";"):
                raise RequirementSyntaxError(f"unexpected {tail[:20]!r} after the version")
            marker_text = tail[1:]
    elif rest[:1] in ("<", "=", ">", "~", "!"):
        spec, semicolon, tail = rest.partition(";")
        if semicolon:
            marker_text = tail
    elif rest.startswith(";"):
        marker_text = rest[1:]
    elif rest.strip():
        raise RequirementSyntaxError(f"expected one of @ ( < = > ~ ! ; after the name, found {rest.strip()[:1]!r}")
    if spec.strip() and any(part.strip() == "" for part in spec.split(",")[:-1]):
        raise RequirementSyntaxError("empty version specifier between commas")
    spec = spec.strip().rstrip(",")  # uv accepts a trailing comma (`pkg>=1.0,`)
    marker = _parse_marker_text(marker_text) if marker_text is not None else None
    return ParsedRequirement(name.group(0), tuple(extras), SpecifierSet(_normalize_space(spec)), url, marker)


def parse_requirement(text: str, where: str) -> ParsedRequirement:
    """A requirement string the way uv parses it (more lenient than packaging, see
    tests/test_requirements_uv.py); DepsyncError when uv would reject it too."""
    try:
        return _split_requirement(text)
    except (RequirementSyntaxError, InvalidSpecifier, InvalidMarker) as exc:
        reason = str(exc).splitlines()[0]  # packaging adds the text and a caret on more lines
        raise DepsyncError(f"invalid requirement {text!r}: {reason}", where) from None


def uv_requirement(text: str) -> ParsedRequirement | None:
    """A requirement string as uv reads it, None when uv rejects it too. Use it, not packaging's
    Requirement, wherever a requirement is looked at: packaging rejects what uv accepts, e.g.
    `pkg @ git+https://...@310e8fb; sys_platform == 'linux'` (no space before `;`)."""
    try:
        return _split_requirement(text)
    except (RequirementSyntaxError, InvalidSpecifier, InvalidMarker):
        return None


def req_from_text(text: str, where: str) -> Req:
    """A requirement string as a Req (name, extras, specifier, marker, direct-URL source)."""
    parsed = parse_requirement(text, where)
    source = source_from_direct_url(parsed.url) if parsed.url else REGISTRY
    return Req(
        canonicalize_name(parsed.name),
        frozenset(canonicalize_name(e) for e in parsed.extras),
        frozenset() if parsed.url else specifier_key(str(parsed.specifier)),
        parsed.marker,
        source,
        text,
    )


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
