"""The resolver settings uv locks a project with, and the file it reads them from.

uv reads them from the workspace root's uv.toml when there is one, and then ignores those of
[tool.uv] in pyproject.toml (uv's "Configuration files" docs; measured with uv 0.13.9: an empty
uv.toml drops [tool.uv] exclude-newer, resolution, prerelease, fork-strategy,
dependency-metadata and the index settings, and `uv lock --check` calls the lock stale). What
only a project can say (sources, workspace, conflicts, environments, default-groups, package,
override and constraint dependencies, [[tool.uv.index]] names for sources) stays [tool.uv]'s:
uv refuses most of those in a uv.toml and ignores the rest there when it locks.
"""

from __future__ import annotations

from typing import Any

from depsync.core.model.tomltext import (
    TomlLines,
    expect,
    parse_toml,
    string_list,
    strip_bom,
)
from depsync.core.names import canonicalize_name
from depsync.records import record

# fields uv refuses in a uv.toml ("only applicable in the context of a project"): uv cannot lock
PROJECT_ONLY = ("conflicts", "default-groups", "dependency-groups", "dev-dependencies", "environments",
                "managed", "package", "required-environments", "sources", "workspace", "build-backend")
# settings that change what uv accepts as a lock and that depsync does not model: with one set,
# only uv can say the lock is fresh (measured: each turns a fresh lock stale)
UNMODELLED = ("no-sources", "no-index")


def _dotted(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def validate_settings(uv: dict[str, Any], table: str, where: str) -> None:
    """Type-check the resolver settings depsync reads, in [tool.uv] (table "tool.uv") or a uv.toml ("")."""
    for entry in expect(uv.get("dependency-metadata", []), list, f"[[{_dotted(table, 'dependency-metadata')}]]", where):
        expect(entry, dict, f"[[{_dotted(table, 'dependency-metadata')}]] entry", where)
        expect(entry.get("name"), str, "dependency-metadata name", where)
        if "version" in entry:
            expect(entry["version"], str, f"dependency-metadata {entry['name']} version", where)
        string_list(entry.get("requires-dist", []), f"dependency-metadata {entry['name']} requires-dist", where)
        string_list(entry.get("provides-extras", []), f"dependency-metadata {entry['name']} provides-extras", where)
        if "requires-python" in entry:
            expect(entry["requires-python"], str, f"dependency-metadata {entry['name']} requires-python", where)
    for entry in expect(uv.get("index", []), list, f"[[{_dotted(table, 'index')}]]", where):
        expect(entry, dict, f"[[{_dotted(table, 'index')}]] entry", where)
        expect(entry.get("url"), str, f"[[{_dotted(table, 'index')}]] url", where)
        if "name" in entry:
            expect(entry["name"], str, f"[[{_dotted(table, 'index')}]] name", where)
    for key in ("index-url", "resolution", "prerelease", "fork-strategy", "exclude-newer"):
        if key in uv:
            expect(uv[key], str, _dotted(table, key), where)
    for key in ("extra-index-url", "find-links"):
        if key in uv:
            string_list([uv[key]] if isinstance(uv[key], str) else uv[key], _dotted(table, key), where)
    if "exclude-newer-package" in uv:
        for name, value in expect(uv["exclude-newer-package"], dict, f"[{_dotted(table, 'exclude-newer-package')}]", where).items():
            expect(value, (str, bool), f"{_dotted(table, 'exclude-newer-package')}.{name}", where)


@record
class UvSettings:
    """uv's resolver settings for the project: a uv.toml's top level, or a pyproject's [tool.uv]."""

    path: str
    table: str  # "" in a uv.toml, "tool.uv" in a pyproject.toml
    values: dict[str, Any]
    lines: TomlLines

    @classmethod
    def of_table(cls, path: str, uv: dict[str, Any], lines: TomlLines) -> UvSettings:
        return cls(path, "tool.uv", uv, lines)

    @classmethod
    def from_uv_toml(cls, text: str, path: str) -> UvSettings:
        text = strip_bom(text)
        data = parse_toml(text, path)
        validate_settings(data, "", path)
        return cls(path, "", data, TomlLines(text))

    @property
    def is_uv_toml(self) -> bool:
        return not self.table

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def label(self, key: str) -> str:
        """How a finding names the setting: `[tool.uv] exclude-newer`, `uv.toml exclude-newer`."""
        return f"{self.path} {key}" if self.is_uv_toml else f"[tool.uv] {key}"

    def line(self, key: str) -> int:
        """Line of the setting (its table header for a table), else of the table holding it
        (a uv.toml's first line)."""
        found = self.lines.key(self.table, key) or self.lines.table(_dotted(self.table, key))
        return found or (self.lines.table(self.table) if self.table else 1)

    def dependency_metadata(self) -> list[dict[str, Any]]:
        return list(self.values.get("dependency-metadata", []))

    def line_of_metadata(self, name: str) -> int:
        """Line of the `name = ...` of a [[dependency-metadata]] entry."""
        wanted, table = canonicalize_name(name), _dotted(self.table, "dependency-metadata")
        for index, line in enumerate(self.lines.lines):
            stripped = line.strip()
            if stripped.startswith("name") and "=" in stripped:
                value = stripped.split("=", 1)[1].strip().strip("\"'")
                if canonicalize_name(value) == wanted and self.lines.table_of_line[index] == table:
                    return index + 1
        return self.lines.table(table)
