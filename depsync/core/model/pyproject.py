"""pyproject.toml: the tables depsync reads, validated, with line lookup."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from depsync.core.model.tomltext import TomlLines, last_parse, parse_toml, strip_bom
from depsync.core.model.tomltext import expect as _expect
from depsync.core.model.tomltext import string_list as _string_list
from depsync.core.model.uv_settings import UvSettings, validate_settings
from depsync.core.names import (
    canonicalize_name,  # packaging.utils compiles regexes at import
)
from depsync.errors import DepsyncError
from depsync.records import field, record

_ORIGIN_TABLES = {
    "dependencies": ("project", "dependencies"),
    "override-dependencies": ("tool.uv", "override-dependencies"),
    "constraint-dependencies": ("tool.uv", "constraint-dependencies"),
    "build-constraint-dependencies": ("tool.uv", "build-constraint-dependencies"),
}


@record
class Pyproject:
    path: str
    text: str = field(repr=False)
    data: dict[str, Any] = field(repr=False)
    lines: TomlLines = field(repr=False)

    @classmethod
    def from_text(cls, text: str, path: str = "pyproject.toml") -> Pyproject:
        text = strip_bom(text)  # line numbers and lookups work on the text after the BOM
        return last_parse("pyproject", path, text, lambda: cls._parse(text, path))

    @classmethod
    def _parse(cls, text: str, path: str) -> Pyproject:
        project = cls(path, text, parse_toml(text, path), TomlLines(text))
        project.validate()
        return project

    # -- raw tables -------------------------------------------------------------
    @property
    def project(self) -> dict[str, Any]:
        return self.data.get("project", {})

    @property
    def uv(self) -> dict[str, Any]:
        return self.data.get("tool", {}).get("uv", {})

    @property
    def uv_settings(self) -> UvSettings:
        """[tool.uv] as uv's resolver settings (what uv reads when there is no uv.toml)."""
        return UvSettings.of_table(self.path, self.uv, self.lines)

    @property
    def depsync_config(self) -> dict[str, Any]:
        return self.data.get("tool", {}).get("depsync", {})

    def validate(self) -> None:
        """Type-check every table depsync reads, so rules can trust the shapes."""
        where = self.path
        _expect(self.data.get("project", {}), dict, "[project]", where)
        _expect(self.data.get("tool", {}), dict, "[tool]", where)
        _expect(self.data.get("tool", {}).get("uv", {}), dict, "[tool.uv]", where)
        _expect(self.data.get("tool", {}).get("depsync", {}), dict, "[tool.depsync]", where)
        project = self.project
        if "name" in project:
            _expect(project["name"], str, "project.name", where)
        for key in ("version", "requires-python"):
            if key in project:
                _expect(project[key], str, f"project.{key}", where)
        _string_list(project.get("dependencies", []), "project.dependencies", where)
        _string_list(project.get("dynamic", []), "project.dynamic", where)
        optional = _expect(project.get("optional-dependencies", {}), dict, "[project.optional-dependencies]", where)
        for extra, deps in optional.items():
            _string_list(deps, f"optional-dependencies.{extra}", where)
        groups = _expect(self.data.get("dependency-groups", {}), dict, "[dependency-groups]", where)
        for group, entries in groups.items():
            _expect(entries, list, f"dependency-groups.{group}", where)
            for entry in entries:
                if isinstance(entry, dict):
                    _expect(entry.get("include-group"), str, f"include-group in dependency-groups.{group}", where)
                else:
                    _expect(entry, str, f"each entry of dependency-groups.{group}", where)
        uv = self.uv
        for key in (
            "override-dependencies",
            "constraint-dependencies",
            "build-constraint-dependencies",
            "dev-dependencies",
            "environments",
            "required-environments",
        ):
            if key in uv:
                value = uv[key]
                _string_list([value] if isinstance(value, str) and key.endswith("environments") else value, f"tool.uv.{key}", where)
        if "required-version" in uv:
            _expect(uv["required-version"], str, "tool.uv.required-version", where)
        sources = _expect(uv.get("sources", {}), dict, "[tool.uv.sources]", where)
        for name, source in sources.items():
            entries = source if isinstance(source, list) else [source]
            for entry in entries:
                _expect(entry, dict, f"tool.uv.sources.{name}", where)
                for key in ("git", "rev", "tag", "branch", "subdirectory", "path", "url", "index", "marker", "extra", "group", "package"):
                    if key in entry:
                        _expect(entry[key], str, f"tool.uv.sources.{name}.{key}", where)
                for key in ("editable", "workspace", "lfs"):
                    if key in entry:
                        _expect(entry[key], bool, f"tool.uv.sources.{name}.{key}", where)
        validate_settings(uv, "tool.uv", where)
        if "package" in uv:
            _expect(uv["package"], bool, "tool.uv.package", where)
        if "default-groups" in uv and not isinstance(uv["default-groups"], str):
            _string_list(uv["default-groups"], "tool.uv.default-groups", where)
        if "workspace" in uv:
            workspace = _expect(uv["workspace"], dict, "[tool.uv.workspace]", where)
            for key in ("members", "exclude"):
                _string_list(workspace.get(key, []), f"tool.uv.workspace.{key}", where)
        conflicts = _expect(uv.get("conflicts", []), list, "tool.uv.conflicts", where)
        for group in conflicts:
            _expect(group, list, "each tool.uv.conflicts entry", where)
            for item in group:
                _expect(item, dict, "each item of a tool.uv.conflicts entry", where)
                for key in ("extra", "group", "package"):
                    if key in item:
                        _expect(item[key], str, f"tool.uv.conflicts {key}", where)

    # -- derived views ------------------------------------------------------------
    @property
    def name(self) -> str | None:
        name = self.project.get("name")
        return canonicalize_name(name) if name else None

    @property
    def dynamic(self) -> frozenset[str]:
        return frozenset(self.project.get("dynamic", []))

    @property
    def dependencies(self) -> tuple[str, ...]:
        return tuple(self.project.get("dependencies", []))

    @property
    def optional_dependencies(self) -> dict[str, tuple[str, ...]]:
        """Extras by normalized name."""
        return {canonicalize_name(k): tuple(v) for k, v in self.project.get("optional-dependencies", {}).items()}

    @property
    def extra_names(self) -> list[str]:
        """Normalized extra names, in declaration order."""
        return list(self.optional_dependencies)

    def group_names(self) -> set[str]:
        names = {canonicalize_name(g) for g in self.data.get("dependency-groups", {})}
        if "dev-dependencies" in self.uv:
            names.add("dev")
        return names

    def groups(self) -> dict[str, tuple[str, ...]]:
        """Dependency groups by normalized name, include-group expanded, legacy dev-dependencies as "dev"."""
        raw = {canonicalize_name(k): v for k, v in self.data.get("dependency-groups", {}).items()}

        def expand(name: str, seen: tuple[str, ...]) -> list[str]:
            if name in seen:
                raise DepsyncError(f"dependency group {name!r} includes itself", self.path)
            if name not in raw:
                raise DepsyncError(f"include-group names an unknown group {name!r}", self.path)
            out: list[str] = []
            for entry in raw[name]:
                if isinstance(entry, dict):
                    out.extend(expand(canonicalize_name(entry["include-group"]), seen + (name,)))
                else:
                    out.append(entry)
            return out

        groups = {name: tuple(expand(name, ())) for name in raw}
        if "dev-dependencies" in self.uv:
            groups["dev"] = groups.get("dev", ()) + tuple(self.uv["dev-dependencies"])
        return groups

    def sources(self) -> dict[str, list[dict[str, Any]]]:
        """[tool.uv.sources] by normalized package name, each as a list of source tables."""
        out: dict[str, list[dict[str, Any]]] = {}
        for name, source in self.uv.get("sources", {}).items():
            out[canonicalize_name(name)] = list(source) if isinstance(source, list) else [source]
        return out

    @cached_property
    def _source_names(self) -> dict[str, str]:
        return {canonicalize_name(n): n for n in self.uv.get("sources", {})}

    def source_names(self) -> dict[str, str]:
        """normalized name -> name as written in [tool.uv.sources] (for line lookup); computed
        once: a finding per source asks for it (20k sources were quadratic)."""
        return dict(self._source_names)

    def dependency_metadata(self) -> list[dict[str, Any]]:
        return list(self.uv.get("dependency-metadata", []))

    def all_requirement_strings(self) -> list[tuple[str, str]]:
        """Every requirement string with where it stands ("dependencies", "extra:x", "group:g", ...)."""
        out = [(r, "dependencies") for r in self.dependencies]
        for extra, deps in self.optional_dependencies.items():
            out += [(r, f"extra:{extra}") for r in deps]
        for group, deps in self.groups().items():
            out += [(r, f"group:{group}") for r in deps]
        for key in ("override-dependencies", "constraint-dependencies", "build-constraint-dependencies"):
            out += [(r, key) for r in self.uv.get(key, [])]
        return out

    # -- lines ---------------------------------------------------------------------
    def line_of_extra(self, extra: str) -> int:
        for name in self.project.get("optional-dependencies", {}):
            if canonicalize_name(name) == extra:
                return self.lines.key("project.optional-dependencies", name)
        return self.lines.table("project.optional-dependencies")

    def line_of_group(self, group: str) -> int:
        for name in self.data.get("dependency-groups", {}):
            if canonicalize_name(name) == group:
                return self.lines.key("dependency-groups", name)
        return self.lines.table("dependency-groups")

    def line_of_source(self, name: str) -> int:
        written = self._source_names.get(canonicalize_name(name), name)
        return self.lines.key("tool.uv.sources", written) or self.lines.table("tool.uv.sources")

    def line_of_metadata(self, name: str) -> int:
        """Line of the `name = ...` of a [[tool.uv.dependency-metadata]] entry."""
        return self.uv_settings.line_of_metadata(name)

    def line_of_requirement(self, text: str, origin: str = "") -> int:
        """Line of a requirement string, looked up in the list named by origin when given."""
        table, key = _ORIGIN_TABLES.get(origin, ("", ""))
        if origin.startswith("extra:"):
            name = next((n for n in self.project.get("optional-dependencies", {}) if canonicalize_name(n) == origin[6:]), "")
            table, key = "project.optional-dependencies", name
        elif origin.startswith("group:"):
            name = next((n for n in self.data.get("dependency-groups", {}) if canonicalize_name(n) == origin[6:]), "")
            table, key = ("dependency-groups", name) if name else ("tool.uv", "dev-dependencies")
        for quote in ('"', "'"):
            needle = f"{quote}{text}{quote}"
            if key:
                line = self.lines.value(table, key, needle)
                if line and needle in self.lines.lines[line - 1]:
                    return line
            for index, line_text in enumerate(self.lines.lines):
                if needle in line_text:
                    return index + 1
        return 0
