"""The order of two URL sources, from the versions in their file names (pure).

A wheel URL that moves from 0.1.26 to 0.2.0 is an order without asking anyone: the same
package, a newer version. Git sources are ordered by their repository (depsync/shell/revs.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from depsync.core.sync.sources import RevOrder, combine_orders


def _file_version(url: Any) -> tuple[str, Any] | None:
    """(package, version) of a wheel or sdist URL, from its file name; None for anything else."""
    from packaging.utils import (
        InvalidSdistFilename,
        InvalidWheelFilename,
        parse_sdist_filename,
        parse_wheel_filename,
    )

    if not isinstance(url, str):
        return None
    name = url.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
    try:
        if name.endswith(".whl"):
            package, version, _, _ = parse_wheel_filename(name)
        elif name.endswith((".tar.gz", ".zip")):
            package, version = parse_sdist_filename(name)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
        return None
    return str(package), version


def url_order(dev: Any, main: Any) -> RevOrder | None:
    """The order of two URL sources by the versions in their file names (a wheel 0.1.26 -> 0.2.0
    is an order without asking anyone); None when they are not such sources on both sides."""
    dev_tables, main_tables = (v if isinstance(v, list) else [v] for v in (dev, main))
    if dev is None or main is None or len(dev_tables) != len(main_tables):
        return None
    orders, details = [], []
    for d, m in zip(dev_tables, main_tables):
        if not (isinstance(d, Mapping) and isinstance(m, Mapping)):
            return None
        old, new = _file_version(d.get("url")), _file_version(m.get("url"))
        if old is None or new is None or old[0] != new[0] or d.get("marker") != m.get("marker"):
            return None
        orders.append("same" if old[1] == new[1] else "main-newer" if new[1] > old[1] else "dev-newer")
        details.append(f"{old[1]} -> {new[1]}")
    return RevOrder(combine_orders(orders), "the file names' versions: " + ", ".join(details))
