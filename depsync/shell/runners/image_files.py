"""An image's installed distributions read from its files, where no python runs in it.

Nothing in the image runs: a container is created and never started, the engine is asked which
of the usual site directories exist (a HEAD of the archive API each) and hands over each one that
does as a tar, read in memory under the engine client's answer bound; only the METADATA (or
PKG-INFO) of each `*.dist-info`/`*.egg-info` directory at its top level is read, at most
MAX_METADATA bytes of it, and links are never followed. The interpreter's version comes from the
directory's name (`python3.11`), the platform from the image config. The lines made here are
those the reader script prints, so depsync.core.model.image_env parses both alike.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from typing import Any

from depsync.core import limits
from depsync.shell.runners.engine import EngineAPI, EngineError, EngineLost

MAX_METADATA = limits.MAX_IMAGE_METADATA_BYTES
MAX_DISTS = limits.MAX_IMAGE_DISTRIBUTIONS
_MINORS = range(6, 16)
_MACHINES = {"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}
_VERSIONED = re.compile(r"/python(3\.\d{1,2})/")


def candidates() -> list[str]:
    """Where Debian, the python.org builds, NGC and conda images keep distributions."""
    out = ["/usr/lib/python3/dist-packages"]
    for minor in _MINORS:
        out += [f"/usr/local/lib/python3.{minor}/dist-packages", f"/usr/local/lib/python3.{minor}/site-packages",
                f"/usr/lib/python3.{minor}/site-packages", f"/opt/conda/lib/python3.{minor}/site-packages"]  # fmt: skip
    return out


def _exists(engine: EngineAPI, container: str, path: str) -> bool:
    status, _, _ = engine.request("HEAD", f"/containers/{container}/archive", params={"path": path})
    return status == 200


def _headers(raw: bytes) -> list[tuple[str, str]]:
    fields = []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break
        if line[:1] in " \t" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        fields.append((key.strip().lower(), value.strip()))
    return fields


def _dists(archive: bytes, directory: str) -> Iterator[dict[str, Any]]:
    """A record per distribution of one site directory's tar (its top level: `dist-packages/X.dist-info/METADATA`)."""
    import tarfile

    try:
        tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:")
    except tarfile.TarError:
        yield {"k": "note", "text": f"{directory}: the engine's archive is not a tar"}
        return
    with tar:
        for member in tar:
            parts = member.name.split("/")
            if len(parts) != 3 or parts[2] not in ("METADATA", "PKG-INFO") or not parts[1].endswith((".dist-info", ".egg-info")):
                continue
            if not member.isreg():
                yield {"k": "note", "text": f"{directory}/{parts[1]}: no METADATA inside the site directory, not read"}
                continue
            handle = tar.extractfile(member)
            fields = _headers(handle.read(MAX_METADATA) if handle else b"")
            yield {
                "k": "dist",
                "name": next((v for k, v in fields if k == "name"), ""),
                "version": next((v for k, v in fields if k == "version"), ""),
                "path": f"{directory}/{parts[1]}",
                "requires": [v for k, v in fields if k == "requires-dist"],
            }


def report_lines(engine: EngineAPI, container: str, image: dict[str, Any], interpreters: str) -> list[str]:
    """The reader's lines for an image whose python could not run (`interpreters` says which were
    looked for), from the created container's files; no python line when no site directory is there."""
    found = [path for path in candidates() if _exists(engine, container, path)]
    versioned = sorted({m.group(1) for path in found if (m := _VERSIONED.search(path + "/"))}, key=lambda v: int(v.split(".")[1]))
    if not found or not versioned:
        return []
    python = versioned[-1]
    machine = str(image.get("Architecture") or "")
    env = {"python_version": python, "python_full_version": python, "sys_platform": str(image.get("Os") or "linux"), "os_name": "posix",
           "platform_system": str(image.get("Os") or "linux").capitalize(), "platform_machine": _MACHINES.get(machine, machine),
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "implementation_version": python,
           "platform_release": "", "platform_version": ""}  # fmt: skip (every variable set: packaging fills a missing one from the host)
    lines = [json.dumps({"k": "python", "version": python, "executable": "", "env": env})]
    lines.append(json.dumps({"k": "note", "text": f"no {interpreters} ran in the image: its distributions were read from its files, "
                             f"its Python ({python}) from the name of {next(p for p in found if python in p)}"}))  # fmt: skip
    count = 0
    for directory in found:
        try:
            archive = engine.call("GET", f"/containers/{container}/archive", params={"path": directory})
        except (EngineError, EngineLost) as exc:
            reason = exc.explanation if isinstance(exc, EngineError) else exc.reason
            lines.append(json.dumps({"k": "note", "text": f"{directory} was not read ({reason[:150]})"}))
            continue
        for record in _dists(archive, directory):
            count += record["k"] == "dist"
            if count > MAX_DISTS:
                break
            lines.append(json.dumps(record))
    return lines
