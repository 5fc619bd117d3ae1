"""Layout-keeping insertions into tomlkit containers, the same with every supported tomlkit.

tomlkit's public API only appends, and where an appended key lands has changed between
releases (0.13 put a new table entry before the table's trailing comment, 0.15 puts it
after). depsync decides the place itself: right after the key it follows, before any
trailing blank lines and comments that belong to what comes next.
"""

from __future__ import annotations

from typing import Any

from tomlkit.container import Container


def _position_after(container: Container, after: str | None) -> int | None:
    """Body index just past `after` (the last key when None); None when there is no such key."""
    keys = [i for i, (key, _) in enumerate(container.body) if key is not None and (after is None or key.key == after)]
    return keys[-1] + 1 if keys else None


def insert_after(container: Container, key: str, value: Any, after: str | None = None) -> None:
    """Add key = value just after key `after` (default: the container's last key).

    _insert_at is tomlkit's own positional insert, present and alike in every release we
    support (>=0.13); where it is missing the entry is appended (same data, plainer layout)."""
    position = _position_after(container, after)
    insert_at = getattr(container, "_insert_at", None)
    if position is None or position >= len(container.body) or insert_at is None:
        container.append(key, value)
        return
    insert_at(position, key, value)
