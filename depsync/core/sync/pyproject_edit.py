"""Apply a reconcile plan to pyproject.toml text with tomlkit (pure: text in, text out).

Only the entries that change are touched: comments, order and alignment elsewhere stay
byte-for-byte. A source taken from main is copied as main wrote it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import AoT, Table

from depsync.core.names import canonicalize_name
from depsync.core.sync.metadata import MetadataUpdate
from depsync.core.sync.sources import SourceDecision, normalize
from depsync.core.tomledit import insert_after


def _find_key(table: Any, name: str) -> str | None:
    wanted = canonicalize_name(name)
    return next((str(k) for k in table if canonicalize_name(str(k)) == wanted), None)


def _insert(table: Table, key: str, value: Any) -> None:
    """Add key after the table's last key, before trailing blank lines and comments."""
    insert_after(table.value, key, value)


def _sources_table(doc: tomlkit.TOMLDocument, create: bool) -> Table | None:
    tool = doc.get("tool")
    uv = tool.get("uv") if tool is not None else None
    sources = uv.get("sources") if uv is not None else None
    if sources is None and create:
        if tool is None:
            doc["tool"] = tool = tomlkit.table(is_super_table=True)
        if uv is None:
            tool["uv"] = uv = tomlkit.table()
        uv["sources"] = sources = tomlkit.table()
    return sources


def _current(sources: Table | None, name: str) -> Any:
    key = _find_key(sources, name) if sources is not None else None
    return sources[key].unwrap() if key is not None else None


def _as_item(value: Any) -> Any:
    """A plain source value as TOML writes sources: inline tables, arrays of inline tables."""
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update(value)
        return table
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_as_item(v) for v in value)
        return array
    return value


def _plain_sources(text: str) -> dict[str, Any] | None:
    """[tool.uv.sources] by normalized name, read with tomllib (fast); None when it does not parse."""
    try:
        sources = tomllib.loads(text).get("tool", {}).get("uv", {}).get("sources", {})
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    return {canonicalize_name(str(k)): v for k, v in sources.items()} if isinstance(sources, dict) else None


def _section_span(text: str) -> tuple[int, int] | None:
    """(start, end) offsets of a plain `[tool.uv.sources]` section that holds the whole table, else None.

    tomlkit takes ~15 ms for a whole Megatron pyproject; the section alone is a tenth of that,
    and the bytes around it are not touched at all."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == "[tool.uv.sources]"]
    if len(starts) != 1:
        return None
    first = starts[0]
    last = next((i for i in range(first + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    start = sum(len(line) for line in lines[:first])
    end = start + sum(len(line) for line in lines[first:last])
    # the whole table must be in the section: nothing of it (sub-tables, dotted keys) outside
    if _plain_sources(text[start:end]) is None or _plain_sources(text[:start] + text[end:]) != {}:
        return None
    return start, end


def _sources_items(text: str) -> Table | None:
    """The tomlkit [tool.uv.sources] of text, as written (only that section parsed when it can be)."""
    span = _section_span(text)
    part = text[span[0] : span[1]] if span else text
    try:
        return _sources_table(tomlkit.parse(part), create=False)
    except tomlkit.exceptions.ParseError:
        return _sources_table(tomlkit.parse(text), create=False) if span else None


def _apply_sources(doc: tomlkit.TOMLDocument, decisions: Sequence[SourceDecision], main_text: str, dev_text: str | None) -> None:
    present = _sources_table(doc, create=False)
    changing = [d for d in decisions if normalize(_current(present, d.name)) != normalize(d.result)]
    if not changing:
        return
    main_sources = _sources_items(main_text) if any(d.taken_from == "main" for d in changing) else None
    dev_sources = _sources_items(dev_text) if dev_text is not None and any(d.taken_from == "dev" for d in changing) else None
    sources = _sources_table(doc, create=any(d.result is not None for d in changing))
    for decision in changing:
        key = _find_key(sources, decision.name) if sources is not None else None
        if decision.result is None:
            if key is not None:
                del sources[key]
            continue
        main_key = _find_key(main_sources, decision.name) if main_sources is not None else None
        dev_key = _find_key(dev_sources, decision.name) if dev_sources is not None else None
        if decision.taken_from == "main" and main_key:
            value = main_sources[main_key]
        elif decision.taken_from == "dev" and dev_key:
            value = dev_sources[dev_key]
        else:
            value = _as_item(decision.result)
        if key is not None:
            sources[key] = value
        else:
            _insert(sources, main_key or decision.name, value)


def apply_plan(
    text: str, main_text: str, decisions: Sequence[SourceDecision], metadata: Sequence[MetadataUpdate], dev_text: str | None = None
) -> str:
    """Make text's [tool.uv.sources] what the decisions say, then apply the metadata updates.

    text is usually dev's pyproject; entries it already has right are not touched, so
    the same call also aligns main's or the merge-base's text (the merge driver; pass
    dev_text then). A value is copied as the side it comes from wrote it.
    """
    metadata_changes = any(update.changes for update in metadata)
    plain = _plain_sources(text)
    if plain is not None and not metadata_changes:
        if all(normalize(plain.get(canonicalize_name(d.name))) == normalize(d.result) for d in decisions):
            return text  # nothing to change: not even a tomlkit round trip
        span = _section_span(text)
        if span is not None:  # only the section is parsed and rewritten
            part = tomlkit.parse(text[span[0] : span[1]])
            _apply_sources(part, decisions, main_text, dev_text)
            return text[: span[0]] + tomlkit.dumps(part) + text[span[1] :]
    doc = tomlkit.parse(text)
    _apply_sources(doc, decisions, main_text, dev_text)
    if metadata_changes:
        _apply_metadata(doc, tomlkit.parse(main_text), metadata)
    return tomlkit.dumps(doc)


def _apply_metadata(doc: tomlkit.TOMLDocument, main_doc: tomlkit.TOMLDocument, updates: Sequence[MetadataUpdate]) -> None:
    uv = doc["tool"]["uv"]
    entries = uv.get("dependency-metadata")
    main_entries = main_doc.get("tool", {}).get("uv", {}).get("dependency-metadata", [])
    for update in updates:
        if not update.changes:
            continue
        if update.action == "add":
            source = next(e for e in main_entries if canonicalize_name(str(e["name"])) == canonicalize_name(update.name))
            if entries is None:
                uv["dependency-metadata"] = entries = AoT([])
            entries.append(source)
            continue
        entry = next(e for e in entries if canonicalize_name(str(e["name"])) == canonicalize_name(update.name))
        main_entry = next((e for e in main_entries if canonicalize_name(str(e["name"])) == canonicalize_name(update.name)), None)
        for field, _old, new in update.changes:
            if new is None:
                entry.pop(field, None)
            elif main_entry is not None and field in main_entry and main_entry[field] == new:
                entry[field] = main_entry[field]  # main's formatting of the value
            else:
                entry[field] = new


def align_metadata(text: str, final_text: str, names: Sequence[str]) -> str:
    """Make text's dependency-metadata entries for names equal to final_text's (add, replace, remove)."""
    doc, final = tomlkit.parse(text), tomlkit.parse(final_text)
    wanted = {canonicalize_name(n) for n in names}
    final_entries = {canonicalize_name(str(e["name"])): e for e in final.get("tool", {}).get("uv", {}).get("dependency-metadata", [])}
    uv = doc.get("tool", {}).get("uv")
    if uv is None:
        return text
    entries = uv.get("dependency-metadata")
    mine = {canonicalize_name(str(e["name"])): e for e in entries} if entries is not None else {}
    changed = False
    for name in sorted(wanted):
        target, current = final_entries.get(name), mine.get(name)
        if target is None and current is not None:
            entries.remove(current)
            changed = True
        elif target is not None and current is None:
            if entries is None:
                uv["dependency-metadata"] = entries = AoT([])
            entries.append(target)
            changed = True
        elif target is not None and current is not None and target.unwrap() != current.unwrap():
            for key in list(current.keys()):
                if key not in target:
                    del current[key]
            for key, value in target.items():
                current[key] = value
            changed = True
    return tomlkit.dumps(doc) if changed else text
