"""What an image has (uv or not, its libc), remembered per image id."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from depsync.errors import DepsyncError
from depsync.shell.runners.engine import EngineAPI


def _memo_path(name: str) -> Path:
    from depsync.shell.uvwheel import cache_dir

    return cache_dir() / name


def memo_load(name: str) -> dict[str, Any]:
    try:
        data = json.loads(_memo_path(name).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def memo_store(name: str, key: str, value: Any) -> None:
    """Add one entry; concurrent runs may lose each other's entry (a cache, not a record)."""
    path = _memo_path(name)
    known = memo_load(name)
    known[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(known))
        os.replace(partial, path)
    except OSError:
        pass


def writable_by_all(engine: EngineAPI, container: str, path: str) -> bool:
    """Is path in the created container (a volume's root) writable by any uid? The engine's stat
    of it (one cheap HEAD) gives the mode as a Go FileMode: permission bits in the low 9."""
    import base64

    status, _, headers = engine.request("HEAD", f"/containers/{container}/archive", params={"path": path})
    try:
        mode = int(json.loads(base64.b64decode(headers.get("x-docker-container-path-stat", ""))).get("mode", 0))
    except (ValueError, TypeError):
        return False
    return status == 200 and mode & 0o007 == 0o007


def image_libc(engine: EngineAPI, container: str, image: dict[str, Any]) -> str:
    from depsync.shell.uvwheel import Platform

    platform = Platform(str(image.get("Os") or "linux"), str(image.get("Architecture") or "amd64"), str(image.get("Variant") or ""))
    try:
        musl, glibc = platform.loaders()
    except (DepsyncError, KeyError):
        return "unknown"
    for path, libc in ((musl, "musl"), (glibc, "glibc")):
        status, _, _ = engine.request("HEAD", f"/containers/{container}/archive", params={"path": path})
        if status == 200:
            return libc
    return "unknown"


def split_reference(image: str) -> tuple[str, str]:
    """("repo", "tag or digest") as the pull API wants them."""
    if "@" in image:
        name, _, digest = image.partition("@")
        return name, digest
    name, sep, tag = image.rpartition(":")
    if sep and "/" not in tag:
        return name, tag
    return image, "latest"
