"""uv.lock: header, [manifest], [options] and packages, with their lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from packaging.utils import canonicalize_name

from depsync.errors import DepsyncError
from depsync.model.requirements import Req, Source, req_from_lock_table, source_from_lock_table
from depsync.model.tomltext import parse_toml



@dataclass(frozen=True)
class LockPackage:
    name: str  # normalized
    version: str | None
    source: Source
    raw: dict[str, Any] = field(repr=False, compare=False)
    line: int = 0  # line of its [[package]] header

    def is_project_root(self) -> bool:
        return self.source.kind in ("editable", "virtual", "directory") and self.source.value == "."


@dataclass(frozen=True)
class Lock:
    path: str
    text: str = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    packages: tuple[LockPackage, ...] = field(repr=False)

    @classmethod
    def from_text(cls, text: str, path: str = "uv.lock") -> Lock:
        data = parse_toml(text, path, fast=True)
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
            version = raw.get("version")
            packages.append(
                LockPackage(canonicalize_name(raw["name"]), str(version) if version is not None else None, source_from_lock_table(source), raw, line)
            )
        for key in ("version", "revision"):
            if key in data and not isinstance(data[key], int):
                raise DepsyncError(f"`{key}` must be an integer", path)
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
