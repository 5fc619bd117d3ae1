"""Is the merged pyproject consistent with itself (pure)? Checked before reconcile writes it.

Entries decided apart can contradict each other even when each decision is right on its own:
a kept source naming an index the merge removed, main's `==` pin next to dev's wheel URL of
another version, a default group or included group that no longer exists. uv cannot lock such
a file. Only what the merge introduced is reported (dev's own file is dev's business and
`depsync check` sees it); each problem names the key, both sides' values and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from packaging.utils import (
    InvalidWheelFilename,
    canonicalize_name,
    parse_wheel_filename,
)

from depsync.core.model.pyproject import Pyproject
from depsync.core.model.requirements import ParsedRequirement, uv_requirement
from depsync.core.sync.surface import conflict_names
from depsync.records import record


@record(order=True)
class Inconsistency:
    key: str  # where: "tool.uv.sources.vllm", "tool.uv.default-groups"
    line_of: tuple[str, str]  # ("source"|"group"|"table", name) to find the line in the merged text
    message: str
    fix: str


def _tables(value: Any) -> list[Mapping[str, Any]]:
    return [t for t in (value if isinstance(value, list) else [value]) if isinstance(t, Mapping)]


def _requirements(data: Mapping[str, Any]) -> list[str]:
    project = data.get("project", {}) if isinstance(data.get("project"), Mapping) else {}
    out = [r for r in project.get("dependencies", []) if isinstance(r, str)]
    for items in (project.get("optional-dependencies", {}) or {}).values():
        out += [r for r in items if isinstance(r, str)]
    for items in (data.get("dependency-groups", {}) or {}).values():
        out += [r for r in items if isinstance(r, str)] if isinstance(items, list) else []
    return out


def _wheel_version(url: str) -> str | None:
    name = url.split("?", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1]
    if not name.endswith(".whl"):
        return None
    try:
        return str(parse_wheel_filename(name)[1])
    except (InvalidWheelFilename, ValueError):
        return None


def problems(data: Mapping[str, Any]) -> set[Inconsistency]:
    """Everything in one parsed pyproject that uv would refuse, of the kinds a merge can introduce."""
    tool = data.get("tool", {}) if isinstance(data.get("tool"), Mapping) else {}
    uv = tool.get("uv", {}) if isinstance(tool.get("uv"), Mapping) else {}
    found: set[Inconsistency] = set()
    indexes = {str(i.get("name")) for i in uv.get("index", []) if isinstance(i, Mapping) and i.get("name")}
    sources = uv.get("sources", {}) if isinstance(uv.get("sources"), Mapping) else {}
    pins: dict[str, list[ParsedRequirement]] = {}
    for text in _requirements(data):
        requirement = uv_requirement(text)  # as uv reads it (packaging rejects some that uv accepts)
        if requirement is None:
            continue
        pins.setdefault(canonicalize_name(requirement.name), []).append(requirement)
    for name, value in sources.items():
        for table in _tables(value):
            index = table.get("index")
            if isinstance(index, str) and index not in indexes:
                found.add(Inconsistency(f"tool.uv.sources.{name}", ("source", str(name)), f"the source for {name} names index {index!r}, which [[tool.uv.index]] no longer declares",
                                        f"keep the [[tool.uv.index]] entry {index!r}, or drop the source for {name}"))
            url = table.get("url")
            version = _wheel_version(url) if isinstance(url, str) else None
            if version is None:
                continue
            for requirement in pins.get(canonicalize_name(str(name)), []):
                exact = [s for s in requirement.specifier if s.operator in ("==", "===")]
                if exact and not requirement.specifier.contains(version, prereleases=True):
                    found.add(Inconsistency(f"tool.uv.sources.{name}", ("source", str(name)),
                                            f"the wheel source for {name} is version {version}, which the requirement {str(requirement)!r} excludes: no wheel satisfies both",
                                            f"take the requirement and the source from the same side (both dev's or both main's) for {name}"))
    groups = {canonicalize_name(str(g)) for g in (data.get("dependency-groups", {}) or {})}
    if "dev-dependencies" in uv:
        groups.add("dev")
    defaults = uv.get("default-groups")
    for group in defaults if isinstance(defaults, list) else []:
        if isinstance(group, str) and canonicalize_name(group) not in groups:
            found.add(Inconsistency("tool.uv.default-groups", ("table", "tool.uv"), f"default-groups names group {group!r}, which the merged pyproject does not define",
                                    f"keep the group {group!r}, or drop it from default-groups"))
    for owner, items in (data.get("dependency-groups", {}) or {}).items():
        for item in items if isinstance(items, list) else []:
            included = item.get("include-group") if isinstance(item, Mapping) else None
            if isinstance(included, str) and canonicalize_name(included) not in groups:
                found.add(Inconsistency(f"dependency-groups.{owner}", ("group", canonicalize_name(str(owner))), f"group {owner!r} includes group {included!r}, which the merged pyproject does not define",
                                        f"keep the group {included!r}, or drop the include-group"))
    project = data.get("project", {}) if isinstance(data.get("project"), Mapping) else {}
    extras = {canonicalize_name(str(e)) for e in (project.get("optional-dependencies", {}) or {})}
    tables = {f"project.optional-dependencies.{e}" for e in extras} | {f"dependency-groups.{g}" for g in groups}
    for conflict in uv.get("conflicts", []) if isinstance(uv.get("conflicts"), list) else []:
        for label, table in conflict_names(conflict)[0]:  # another member's extra or group: that member's pyproject says
            if table not in tables:
                found.add(Inconsistency("tool.uv.conflicts", ("table", "tool.uv"), f"a conflicts set names {label}, which the merged pyproject does not define",
                                        f"drop the set, or keep the {label}"))
    return found


def introduced(merged: Mapping[str, Any], dev: Mapping[str, Any]) -> list[Inconsistency]:
    """The merged file's problems that dev's own file does not have: the merge's doing."""
    return sorted(problems(merged) - problems(dev))


def line_in(project: Pyproject, problem: Inconsistency) -> int:
    kind, name = problem.line_of
    if kind == "source":
        return project.line_of_source(name)
    if kind == "group":
        return project.line_of_group(name)
    return project.lines.table(name)
