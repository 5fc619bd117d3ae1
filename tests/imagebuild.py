"""Build small test images FROM the test image, without a registry or a builder: a created (never
started) container of the base image, a tar of files put into it through the Engine API, and a
commit of that container (with ENV changes). Real images on the real engine, in about a second."""

from __future__ import annotations

import io
import json
import tarfile
import time
from collections.abc import Mapping

from depsync.shell.runners.engine import EngineAPI, client

SITE = "/usr/local/lib/python3.11/dist-packages"  # the test image's first site directory (Debian's python3.11)


def metadata(name: str, version: str, requires: tuple[str, ...] = ()) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires), "", "long description"]
    return ("\n".join(lines) + "\n").encode()


def dist_files(dists: Mapping[str, str] | list[tuple[str, str]], site: str = SITE) -> dict[str, bytes]:
    """{path: METADATA} for dist-info directories of (name, version)."""
    items = dists.items() if isinstance(dists, Mapping) else dists
    return {f"{site}/{name.replace('-', '_')}-{version}.dist-info/METADATA": metadata(name, version) for name, version in items}


def _tar(files: Mapping[str, bytes | tuple[str, str]]) -> bytes:
    """A tar of files (mode 0644); a value ("symlink", target) makes a symbolic link, ("exec", text) a file of mode 0755."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        dirs: set[str] = set()
        for path in files:
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    entry = tarfile.TarInfo(d)
                    entry.type, entry.mode = tarfile.DIRTYPE, 0o755
                    archive.addfile(entry)
        for path, content in files.items():
            entry = tarfile.TarInfo(path.strip("/"))
            entry.mtime = int(time.time())
            if isinstance(content, tuple) and content[0] == "exec":
                data = content[1].encode() if isinstance(content[1], str) else content[1]
                entry.size, entry.mode = len(data), 0o755
                archive.addfile(entry, io.BytesIO(data))
            elif isinstance(content, tuple):
                entry.type, entry.linkname = tarfile.SYMTYPE, content[1]
                archive.addfile(entry)
            else:
                entry.size, entry.mode = len(content), 0o644
                archive.addfile(entry, io.BytesIO(content))
    return buffer.getvalue()


def build(tag: str, base: str, files: Mapping[str, bytes | tuple[str, str]], env: Mapping[str, str] | None = None, engine: EngineAPI | None = None) -> str:
    """Commit base + files (+ ENV) as tag; returns the image id."""
    api = engine or client()
    try:
        created = api.json("POST", "/containers/create", body={"Image": base, "Cmd": ["true"], "Labels": {"io.depsync.test": "imagebuild"}})
        container = created["Id"]
        try:
            if files:
                api.call("PUT", f"/containers/{container}/archive", params={"path": "/"}, raw=_tar(files), content_type="application/x-tar")
            repo, _, version = tag.rpartition(":")
            changes = "\n".join(f"ENV {k}={v}" for k, v in (env or {}).items())
            params = {"container": container, "repo": repo, "tag": version, **({"changes": changes} if changes else {})}
            answer = api.json("POST", "/commit", params=params)
        finally:
            api.call("DELETE", f"/containers/{container}", params={"force": "1"})
        return str(answer["Id"])
    finally:
        if engine is None:
            api.close()


def remove(tag: str) -> None:
    api = client()
    try:
        api.request("DELETE", f"/images/{tag}", params={"force": "1"})
    finally:
        api.close()


def inspect(tag: str) -> dict:  # type: ignore[type-arg]
    api = client()
    try:
        return json.loads(api.call("GET", f"/images/{tag}/json"))
    finally:
        api.close()
