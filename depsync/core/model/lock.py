"""uv.lock: header, [manifest], [options] and packages, with their lines."""

from __future__ import annotations

import gc
import re
from typing import Any

from depsync.core.model.lock_wheels import CanonicalWheels, parse_lock_text
from depsync.core.model.requirements import (
    Req,
    Source,
    req_from_lock_table,
    source_from_lock_table,
)
from depsync.core.model.tomltext import last_parse, parse_toml
from depsync.core.names import canonicalize_name
from depsync.errors import DepsyncError
from depsync.records import field, record


@record
class LockPackage:
    name: str  # normalized
    version: str | None
    source: Source
    raw: dict[str, Any] = field(repr=False, compare=False)
    line: int = 0  # line of its [[package]] header

    def is_project_root(self) -> bool:
        return self.source.kind in ("editable", "virtual", "directory") and self.source.value == "."


@record
class Lock:
    path: str
    text: str = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    packages: tuple[LockPackage, ...] = field(repr=False)

    @classmethod
    def from_text(cls, text: str, path: str = "uv.lock") -> Lock:
        return last_parse("lock", path, text, lambda: cls._parse(text, path))

    @classmethod
    def _parse(cls, text: str, path: str) -> Lock:
        # a 1.5 MB lock is ~100,000 new containers, none of them in a cycle: the cyclic collector
        # would walk them again and again while they are made (measured: half the parse time)
        collecting = gc.isenabled()
        gc.disable()
        try:
            return cls._build(text, path)
        finally:
            if collecting:
                gc.enable()

    @classmethod
    def _build(cls, text: str, path: str) -> Lock:
        data = parse_lock_text(text, lambda toml: parse_toml(toml, path))
        raw_packages = data.get("package", [])
        if not isinstance(raw_packages, list):
            raise DepsyncError("`package` must be an array of tables", path)
        lines = _package_lines(text)
        packages = []
        for index, raw in enumerate(raw_packages):
            line = lines[index] if index < len(lines) else 0
            if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
                raise DepsyncError("a [[package]] entry has no name", f"{path}:{line}")
            source = raw.get("source", {})
            if not isinstance(source, dict):
                raise DepsyncError(f"package {raw['name']}: source must be a table", f"{path}:{line}")
            _validate_package(raw, f"{path}:{line}")
            version = raw.get("version")
            try:
                parsed_source = source_from_lock_table(source)
            except ValueError as exc:
                raise DepsyncError(f"package {raw['name']}: malformed source ({exc})", f"{path}:{line}") from None
            packages.append(LockPackage(canonicalize_name(raw["name"]), str(version) if version is not None else None, parsed_source, raw, line))
        for key in ("version", "revision"):
            if key in data and not isinstance(data[key], int):
                raise DepsyncError(f"`{key}` must be an integer", path)
        _validate_top(data, path)
        return cls(path, text, data, tuple(packages))

    @property
    def version(self) -> int | None:
        return self.data.get("version")

    @property
    def revision(self) -> int:
        return self.data.get("revision", 0)

    @property
    def requires_python(self) -> str | None:
        return self.data.get("requires-python")

    @property
    def manifest(self) -> dict[str, Any]:
        manifest = self.data.get("manifest", {})
        return manifest if isinstance(manifest, dict) else {}

    @property
    def options(self) -> dict[str, Any]:
        options = self.data.get("options", {})
        return options if isinstance(options, dict) else {}

    def names(self) -> set[str]:
        return {p.name for p in self.packages}

    def find(self, name: str) -> list[LockPackage]:
        wanted = canonicalize_name(name)
        return [p for p in self.packages if p.name == wanted]

    def root(self, name: str | None) -> LockPackage | None:
        """The project's own package: the one named like it with source "." (editable or virtual)."""
        candidates = [p for p in self.packages if p.is_project_root()]
        if name:
            candidates = [p for p in candidates if p.name == name] or [p for p in self.find(name) if p.source.kind in ("editable", "virtual", "directory")]
        return candidates[0] if candidates else None

    def reqs(self, tables: Any, what: str) -> tuple[Req, ...]:
        if not isinstance(tables, list):
            raise DepsyncError(f"{what} must be an array", self.path)
        return tuple(req_from_lock_table(t, f"{self.path} ({what})") for t in tables)

    def line_of_key(self, key: str) -> int:
        match = re.search(rf"^{re.escape(key)}\s*=", self.text, re.MULTILINE)
        return self.text.count("\n", 0, match.start()) + 1 if match else 0

    def line_of_table(self, header: str) -> int:
        match = re.search(rf"^\[{re.escape(header)}\]\s*$", self.text, re.MULTILINE)
        return self.text.count("\n", 0, match.start()) + 1 if match else 0


def _package_lines(text: str) -> list[int]:
    """1-based line of each [[package]] header, in file order (str.find: the lock is large)."""
    lines = []
    position, line = 0, 1
    needle = "\n[[package]]\n"
    found = text.find(needle)
    while found >= 0:
        line += text.count("\n", position, found + 1)
        position = found + 1
        lines.append(line)
        found = text.find(needle, position)
    return lines


def _fail(what: str, where: str) -> None:
    raise DepsyncError(f"{what} (uv never writes that: was the lock edited by hand?)", where)


def _tables(value: Any, what: str, where: str) -> None:
    """value must be a list of tables."""
    # map, not a generator: ~4,000 wheel tables a lock, checked at C speed
    if not isinstance(value, list) or not all(map(isinstance, value, [dict] * len(value))):
        _fail(f"{what} must be an array of tables", where)


def _named_tables(value: Any, what: str, where: str) -> None:
    _tables(value, what, where)
    if not all(map(isinstance, [v.get("name") for v in value], [str] * len(value))):
        _fail(f"every entry of {what} needs a string name", where)


def _strings(value: Any, what: str, where: str) -> None:
    if not isinstance(value, list) or not all(map(isinstance, value, [str] * len(value))):
        _fail(f"{what} must be an array of strings", where)


def _groups(value: Any, what: str, where: str) -> None:
    if not isinstance(value, dict):
        _fail(f"{what} must be a table", where)
    for group, entries in value.items():
        _named_tables(entries, f"{what}.{group}", where)


def _validate_package(raw: dict[str, Any], where: str) -> None:
    """The shapes rules read from a [[package]]: checked once so rules can trust them."""
    name = raw["name"]
    if "version" in raw and not isinstance(raw["version"], str):
        _fail(f"package {name}: version must be a string", where)
    source = raw.get("source", {})
    if not all(isinstance(v, str | bool) for v in source.values()):
        _fail(f"package {name}: source values must be strings", where)
    if "dependencies" in raw:
        _named_tables(raw["dependencies"], f"package {name} dependencies", where)
    for section in ("optional-dependencies", "dev-dependencies"):
        if section in raw:
            _groups(raw[section], f"package {name} {section}", where)
    if "wheels" in raw and not isinstance(raw["wheels"], CanonicalWheels):  # uv's own lines are tables
        _tables(raw["wheels"], f"package {name} wheels", where)
    if "sdist" in raw and not isinstance(raw["sdist"], dict):
        _fail(f"package {name}: sdist must be a table", where)
    metadata = raw.get("metadata", {})
    if not isinstance(metadata, dict):
        _fail(f"package {name}: metadata must be a table", where)
    if "requires-dist" in metadata:
        _named_tables(metadata["requires-dist"], f"package {name} requires-dist", where)
    if "provides-extras" in metadata:
        _strings(metadata["provides-extras"], f"package {name} provides-extras", where)
    if "requires-dev" in metadata:
        _groups(metadata["requires-dev"], f"package {name} requires-dev", where)
    default_groups = raw.get("default-groups")
    if default_groups is not None and not isinstance(default_groups, str):
        _strings(default_groups, f"package {name} default-groups", where)


def _validate_top(data: dict[str, Any], path: str) -> None:
    if "requires-python" in data and not isinstance(data["requires-python"], str):
        _fail("requires-python must be a string", path)
    for key in ("supported-markers", "required-markers", "resolution-markers"):
        if key in data:
            _strings(data[key], key, path)
    conflicts = data.get("conflicts", [])
    if not isinstance(conflicts, list) or not all(isinstance(group, list) for group in conflicts):
        _fail("conflicts must be an array of arrays", path)
    for group in conflicts:
        _tables(group, "each conflicts set", path)
    for key in ("manifest", "options"):
        if key in data and not isinstance(data[key], dict):
            _fail(f"[{key}] must be a table", path)
    manifest = data.get("manifest", {})
    for key in ("overrides", "constraints", "build-constraints", "dependency-metadata"):
        if key in manifest:
            _named_tables(manifest[key], f"manifest.{key}", path)
    for entry in manifest.get("dependency-metadata", []):
        for key in ("version", "requires-python"):
            if key in entry and not isinstance(entry[key], str):
                _fail(f"manifest.dependency-metadata {entry['name']}: {key} must be a string", path)
        for key in ("requires-dist", "provides-extras"):
            if key in entry:
                _strings(entry[key], f"manifest.dependency-metadata {entry['name']} {key}", path)
    if "members" in manifest:
        _strings(manifest["members"], "manifest.members", path)
