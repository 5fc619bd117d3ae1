"""Apply the surface's decisions (depsync.core.sync.surface) to pyproject text with tomlkit (pure: text in, text out).

Only the entries whose result differs from the text are touched; everything else, comments
and order included, stays as written. An entry taken from main is copied as main wrote it
(main's tomlkit item where there is one), in the place of dev's entry, or at the end of
dev's table when dev has none. A table main added is copied whole when all of it is taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tomlkit
from tomlkit.items import AoT, Array

from depsync.core.names import canonicalize_name
from depsync.core.sync.surface import (
    EntryDecision,
    _conflict_key,
    _group_item_key,
    requirement_key,
)


def _child(container: Any, key: str, canonical: bool = False) -> Any:
    if container is None:
        return None
    if not canonical:
        return container.get(key)
    found = next((k for k in container if canonicalize_name(str(k)) == key), None)
    return container[found] if found is not None else None


def _requirement_parent(doc: Any, table: str, create: bool) -> tuple[Any, str, bool]:
    """(the tomlkit container holding the list, the key in it, whether the key is canonical)."""
    if table == "project.dependencies":
        return doc.get("project"), "dependencies", False
    if table.startswith("project.optional-dependencies."):
        project = doc.get("project")
        extras = project.get("optional-dependencies") if project is not None else None
        if extras is None and create and project is not None:
            project["optional-dependencies"] = extras = tomlkit.table()
        return extras, table.split(".", 2)[2], True
    if table.startswith("dependency-groups."):
        groups = doc.get("dependency-groups")
        if groups is None and create:
            doc["dependency-groups"] = groups = tomlkit.table()
        return groups, table.split(".", 1)[1], True
    return _uv(doc, create), table.rsplit(".", 1)[1], False


def _uv(doc: Any, create: bool) -> Any:
    tool = doc.get("tool")
    if tool is None and create:
        doc["tool"] = tool = tomlkit.table(is_super_table=True)
    uv = tool.get("uv") if tool is not None else None
    if uv is None and create and tool is not None:
        tool["uv"] = uv = tomlkit.table()
    return uv


def _key_in(container: Any, key: str, canonical: bool) -> str | None:
    if container is None:
        return None
    if not canonical:
        return key if key in container else None
    return next((str(k) for k in container if canonicalize_name(str(k)) == key), None)


def _item_name(table: str, item: Any) -> str:
    value = item.unwrap() if hasattr(item, "unwrap") else item
    return (_group_item_key(value) if table.startswith("dependency-groups.") else requirement_key(str(value)))[0]


def _multiline(items: Sequence[Any]) -> Array:
    array = tomlkit.array()
    for item in items:
        array.append(_plain(item))
    return array.multiline(len(items) > 1)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update(value)
        return table
    return value


def _apply_requirement(doc: Any, main_doc: Any, decision: EntryDecision) -> None:
    table = decision.table
    parent, key, canonical = _requirement_parent(doc, table, create=decision.result is not None)
    if parent is None:
        return
    found = _key_in(parent, key, canonical)
    wanted = list(decision.result.raw) if decision.result is not None else []
    if found is None:
        if not wanted:
            return
        main_parent, main_key, _ = _requirement_parent(main_doc, table, create=False)
        main_found = _key_in(main_parent, main_key, canonical)
        main_array = main_parent[main_found] if main_found is not None else None
        if main_array is not None and [_item_name(table, i) for i in main_array] == [decision.name] * len(main_array):
            parent[main_found] = main_array  # main's table is exactly this entry: copied as main wrote it
        else:
            parent[main_found or key] = _multiline(wanted)
        return
    array = parent[found]
    positions = [i for i, item in enumerate(array) if _item_name(table, item) == decision.name]
    at = positions[0] if positions else len(array)
    for index in reversed(positions):
        del array[index]
    for offset, item in enumerate(wanted):
        array.insert(at + offset, _plain(item))


def _apply_setting(doc: Any, decision: EntryDecision) -> None:
    parent = doc.get("project") if decision.table.startswith("project.") else _uv(doc, create=decision.result is not None)
    if parent is None:
        return
    key = decision.table.rsplit(".", 1)[1]
    if decision.result is None:
        parent.pop(key, None)
    else:
        parent[key] = decision.result.raw[0]


def _entry_key(table: str, item: Any) -> str:
    value = item.unwrap() if hasattr(item, "unwrap") else item
    if table == "tool.uv.index":
        return str(value.get("name") or value.get("url", ""))
    if table == "tool.uv.conflicts":
        return _conflict_key(value)
    return canonicalize_name(str(value.get("name", "")))


def _apply_listed(doc: Any, main_doc: Any, decision: EntryDecision) -> None:
    """[[tool.uv.index]], [[tool.uv.dependency-metadata]] (arrays of tables) and conflicts (an array)."""
    table, field = decision.table, decision.table.rsplit(".", 1)[1]
    uv = _uv(doc, create=decision.result is not None)
    if uv is None:
        return
    entries = uv.get(field)
    position = next((i for i, item in enumerate(entries or []) if _entry_key(table, item) == decision.name), None)
    replacement = None
    if decision.result is not None:
        main_uv = _uv(main_doc, create=False)
        main_entries = main_uv.get(field) if main_uv is not None else None
        replacement = next((item for item in main_entries or [] if _entry_key(table, item) == decision.name), None)
        if replacement is None or decision.taken_from != "main":
            replacement = _plain(decision.result.raw[0])
    if entries is None:
        if replacement is None:
            return
        uv[field] = entries = AoT([]) if table != "tool.uv.conflicts" else tomlkit.array()
    if position is not None:
        del entries[position]
        if replacement is not None:
            entries.insert(position, replacement)
    elif replacement is not None:
        entries.append(replacement)


def apply_surface(text: str, main_text: str, decisions: Sequence[EntryDecision]) -> str:
    """text (dev's pyproject, usually with its sources already merged) with every decision's result."""
    changing = [d for d in decisions if d.changes_dev]
    if not changing:
        return text
    doc = tomlkit.parse(text)
    main_doc = tomlkit.parse(main_text) if any(d.taken_from == "main" for d in changing) else tomlkit.document()  # copied from only when taken
    for decision in changing:
        if decision.kind == "requirement":
            _apply_requirement(doc, main_doc, decision)
        elif decision.kind == "setting":
            _apply_setting(doc, decision)
        else:
            _apply_listed(doc, main_doc, decision)
    return tomlkit.dumps(doc)
