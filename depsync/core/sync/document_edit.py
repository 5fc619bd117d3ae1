"""Write the rest-of-the-file decisions (depsync.core.sync.document) into pyproject text (pure).

Only keys whose result differs from the text are touched. A value taken from main is main's
tomlkit item, so it keeps main's layout (a multi-line array stays one); a key new to a table
goes after the key it follows on main; a table main added whole is copied whole, comments
included. The written text is read back and compared with the decisions: a mismatch is an
error, never a silently different file.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from typing import Any

import tomlkit
from tomlkit.items import AoT, Array, InlineTable, Table

from depsync.core.sync.document import KeyDecision, Path, comparable, under, value_at
from depsync.core.tomledit import insert_after
from depsync.errors import DepsyncError


def _node(doc: Any, path: Path) -> Any:
    node = doc
    for key in path:
        if node is None or not hasattr(node, "get"):
            return None
        node = node.get(key)
    return node


def _container(node: Any) -> Any:
    """The tomlkit Container of a table or document (where positional inserts happen)."""
    return node.value if isinstance(node, Table) else node


def _set(parent: Any, main_parent: Any, key: str, item: Any) -> None:
    """parent[key] = item: in place when the key is there, else after the key it follows on main."""
    if key in parent:
        parent[key] = item
        return
    before = None
    if main_parent is not None and hasattr(main_parent, "keys"):
        keys = list(main_parent.keys())
        earlier = keys[: keys.index(key)] if key in keys else []
        before = next((k for k in reversed(earlier) if k in parent), None)
    container = _container(parent)
    # a plain key goes after a plain key only: after a sub-table it would land in that table's
    # text, and a header-less table ([tool.uv.sources] with no [tool.uv]) has no place of its own
    # (tomlkit's own append gives it a header and puts the key before the sub-tables)
    after_plain = before is not None and not isinstance(parent.get(before), Table | AoT)
    headerless = isinstance(parent, Table) and parent.is_super_table()
    if after_plain and not headerless and hasattr(container, "body") and not isinstance(item, Table | AoT):
        insert_after(container, key, item, after=before)
    else:
        parent[key] = item


def _parent(doc: Any, main_doc: Any, path: Path) -> Any:
    """dev's table at path, made (empty, as a table of its own) where it is missing."""
    node = doc
    for depth, key in enumerate(path):
        child = node.get(key)
        if child is None:
            child = tomlkit.table(is_super_table=depth < len(path) - 1)
            _set(node, _node(main_doc, path[:depth]), key, child)
            child = node[key]
        node = child
    return node


def _merged_array(dev_item: Any, main_item: Any, result: Sequence[Any]) -> Any:
    """The merged elements, each as its side wrote it, in dev's layout."""
    by_value: dict[Any, Any] = {}
    for source in (main_item, dev_item):  # dev's spelling wins where both have the element
        for element in source or ():
            by_value[comparable(element)] = element
    chosen = [by_value.get(comparable(value), value) for value in result]
    if isinstance(dev_item, AoT):
        return AoT([element if isinstance(element, Table) else _table_of(element) for element in chosen])
    array = tomlkit.array()
    array.extend(chosen)
    if isinstance(dev_item, Array) and "\n" in dev_item.as_string():
        array.multiline(True)
    return array


def _table_of(value: Any) -> Table:
    table = tomlkit.table()
    table.update(value)
    return table


def _whole_new_tables(doc: Any, main_doc: Any, changing: Sequence[KeyDecision]) -> list[Path]:
    """The largest tables dev lacks whose every decided key takes main's value: copied whole."""
    roots: list[Path] = []
    for decision in changing:
        if decision.taken_from != "main":
            continue
        for depth in range(1, len(decision.path)):
            prefix = decision.path[:depth]
            if any(under(prefix, r) for r in roots):
                break
            main_table = _node(main_doc, prefix)
            if _node(doc, prefix) is not None or not isinstance(main_table, Table):
                continue
            inside = [d for d in changing if under(d.path, prefix)]
            merged = {d.path: d.result for d in inside}
            if all(d.taken_from == "main" for d in inside) and comparable(_rebuilt(prefix, merged)) == comparable(main_table.unwrap()):
                roots.append(prefix)
            break
    return roots


def _rebuilt(prefix: Path, leaves: dict[Path, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, value in leaves.items():
        node = out
        for key in path[len(prefix) : -1]:
            node = node.setdefault(key, {})
        if value is not None:
            node[path[-1]] = value
    return out


def _prune_empty(doc: Any, path: Path) -> None:
    """Remove tables left empty by a removal, up the path (a table dev had empty stays: only ours).
    Inline ones too: `flash-attn = {}` left behind is a value neither side has."""
    for depth in range(len(path), 0, -1):
        node = _node(doc, path[:depth])
        if isinstance(node, Table | InlineTable) and len(node) == 0:
            parent = _node(doc, path[: depth - 1]) if depth > 1 else doc
            del parent[path[depth - 1]]
        else:
            return


def apply_document(text: str, main_text: str, decisions: Sequence[KeyDecision]) -> str:
    """text with every decision's result in place (text is dev's pyproject, the surface already applied)."""
    changing = [d for d in decisions if d.changes_dev]
    if not changing:
        return text
    doc, main_doc = tomlkit.parse(text), tomlkit.parse(main_text)
    done: set[Path] = set()
    for root in _whole_new_tables(doc, main_doc, changing):
        parent = _parent(doc, main_doc, root[:-1])
        _set(parent, _node(main_doc, root[:-1]), root[-1], _node(main_doc, root))
        done.update(d.path for d in changing if under(d.path, root))
    for decision in changing:
        if decision.path in done:
            continue
        *parents, key = decision.path
        if decision.result is None:
            parent = _node(doc, tuple(parents))
            if parent is not None and key in parent:
                del parent[key]
                _prune_empty(doc, tuple(parents))
            continue
        parent = _parent(doc, main_doc, tuple(parents))
        main_item = _node(main_doc, decision.path)
        if decision.taken_from == "main" and main_item is not None:
            item = main_item
        elif decision.taken_from == "merged":
            item = _merged_array(_node(doc, decision.path), main_item, decision.result)
        else:
            item = decision.result
        _set(parent, _node(main_doc, tuple(parents)), key, item)
    new_text = tomlkit.dumps(doc)
    _verify(new_text, changing)
    return new_text


def _verify(text: str, decisions: Sequence[KeyDecision]) -> None:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DepsyncError(f"pyproject.toml: the merged file does not parse ({error}); nothing was written") from None
    for decision in decisions:
        if comparable(value_at(data, decision.path)) != comparable(decision.result):
            raise DepsyncError(f"pyproject.toml: could not write {decision.key} as the merge decided; nothing was written (rerun with --debug and report it)")
