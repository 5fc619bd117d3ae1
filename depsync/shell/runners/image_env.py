"""Read what a CI base image ships for Python (`depsync check --image`), remembered per image id.

The image's own python runs a small script that only reads: the interpreter's version and
marker environment, and the name, version and Requires-Dist of each `*.dist-info` (and
`*.egg-info`) on its site directories and PYTHONPATH, one JSON line each. The project's code
never runs, and neither does the image's: `python -I -S -B` imports no `site`, runs no `.pth`
file or sitecustomize and writes no bytecode. The container is made like every depsync
container (containers.py: caller's uid, no capabilities, no-new-privileges, a pids limit,
auto-remove), and besides has no network, a read-only root file system, a memory limit and a
deadline; its output is bounded (lines, bytes) and parsed by depsync.core.model.image_env
under caps of its own, since the image may be anyone's.

The result is cached under depsync's cache root by the image's content id, so a repeat on the
same image asks the engine for the image's id only (one local request: no registry, no
container). An image the engine does not have is not pulled: check stays offline.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from depsync.core import limits
from depsync.core.model.image_env import (
    FORMAT,
    ImageEnv,
    config_env,
    from_json,
    parse_report,
    without_python,
)
from depsync.core.redact import redact
from depsync.core.trust import image_reference_allowed
from depsync.errors import DepsyncError
from depsync.records import replace
from depsync.shell import signals

READ_TIMEOUT = 60  # s: reading ~300 dist-info directories takes well under a second
READ_MEMORY = "512m"
MAX_OUTPUT_BYTES = limits.MAX_IMAGE_OUTPUT_BYTES
INTERPRETERS = ("python3", "python")  # looked up on the image's PATH, as `docker run IMAGE python3` does
_NO_EXECUTABLE = re.compile(r'exec: "[^"]*": |executable file \S* ?not found|no such file or directory', re.IGNORECASE)

# Runs in the image, with the image's python (3.6 and later): stdlib only, reads only.
READER = r'''
import json, os, stat, sys
def out(o):
    sys.stdout.write(json.dumps(o) + "\n")
MAX_DISTS, MAX_READ, MAX_ENTRIES = @MAX_DISTS@, @MAX_READ@, 100000
try:
    import platform
    iv = sys.implementation.version
    ivs = "%d.%d.%d" % (iv.major, iv.minor, iv.micro) + ("" if iv.releaselevel == "final" else iv.releaselevel[0] + str(iv.serial))
    env = {"implementation_name": sys.implementation.name, "implementation_version": ivs, "os_name": os.name,
           "platform_machine": platform.machine(), "platform_release": platform.release(), "platform_system": platform.system(),
           "platform_version": platform.version(), "python_full_version": platform.python_version(),
           "platform_python_implementation": platform.python_implementation(),
           "python_version": ".".join(platform.python_version_tuple()[:2]), "sys_platform": sys.platform}
except Exception as exc:
    env = {}
out({"k": "python", "version": "%d.%d.%d" % sys.version_info[:3], "executable": sys.executable, "env": env})
dirs = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
try:
    import site
    dirs += site.getsitepackages()
    if sys.prefix != sys.base_prefix:
        cfg = os.path.join(sys.prefix, "pyvenv.cfg")
        text = open(cfg, "rb").read(65536).decode("utf-8", "replace") if os.path.isfile(cfg) else ""
        if any(l.replace(" ", "").lower() == "include-system-site-packages=true" for l in text.splitlines()):
            dirs += site.getsitepackages([sys.base_prefix])
except Exception as exc:
    out({"k": "note", "text": "site directories not known: %s" % type(exc).__name__})
dirs += [p for p in sys.path if p.endswith(("site-packages", "dist-packages"))]
def headers(raw):
    fields = []
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            break
        if line[:1] in " \t" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        fields.append((key.strip().lower(), value.strip()))
    return fields
def read(path, root):
    real = os.path.realpath(path)
    if not (real + os.sep).startswith(root + os.sep) or not stat.S_ISREG(os.stat(real).st_mode):
        return None
    with open(real, "rb") as f:
        return f.read(MAX_READ)
seen, count = set(), 0
for d in dirs:
    try:
        root = os.path.realpath(d)
        if root in seen or not os.path.isdir(root):
            continue
        seen.add(root)
        entries = sorted(os.listdir(root))[:MAX_ENTRIES]
    except Exception:
        continue
    for entry in entries:
        if count >= MAX_DISTS:
            out({"k": "note", "text": "more than %d distributions: the rest were not read" % MAX_DISTS})
            sys.exit(0)
        if entry.endswith(".dist-info"):
            meta = os.path.join(root, entry, "METADATA")
        elif entry.endswith(".egg-info"):
            meta = os.path.join(root, entry, "PKG-INFO") if os.path.isdir(os.path.join(root, entry)) else os.path.join(root, entry)
        else:
            continue
        try:
            raw = read(meta, root)
        except Exception:
            raw = None
        if raw is None:
            out({"k": "note", "text": "%s: no METADATA inside the site directory, not read" % os.path.join(d, entry)[:200]})
            continue
        fields = headers(raw)
        name = next((v for k, v in fields if k == "name"), "")
        version = next((v for k, v in fields if k == "version"), "")
        out({"k": "dist", "name": name, "version": version, "path": os.path.join(d, entry),
             "requires": [v for k, v in fields if k == "requires-dist"]})
        count += 1
'''.replace("@MAX_DISTS@", str(limits.MAX_IMAGE_DISTRIBUTIONS)).replace("@MAX_READ@", str(limits.MAX_IMAGE_METADATA_BYTES))


def _cache_file(image_id: str) -> Path:
    from depsync.shell import cache

    script = hashlib.sha256(READER.encode()).hexdigest()[:12]
    name = hashlib.sha256(f"{image_id}\0{FORMAT}\0{script}".encode()).hexdigest()[:40]
    return Path(cache.root()) / "image-env" / f"{name}.json"


def _cached(image_id: str, reference: str) -> ImageEnv | None:
    try:
        return from_json(json.loads(_cache_file(image_id).read_text()), reference)
    except (OSError, ValueError, RecursionError):
        return None


def _remember(env: ImageEnv) -> None:
    path = _cache_file(env.image_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(env.to_json()))
        os.replace(partial, path)
    except OSError:
        pass  # a cache: the next run reads the image again


class ImageUnavailable(DepsyncError):
    """No engine, or the engine has no such image: check says so and goes on without it."""


def read_image_env(reference: str, *, use_cache: bool = True) -> tuple[ImageEnv, bool]:
    """(what the image ships, whether it came from the cache). ImageUnavailable when there is no
    engine or no such image on it; a DepsyncError when the engine refuses the reader."""
    from depsync.shell.runners.containers import ContainerRun
    from depsync.shell.runners.endpoint import discover_endpoint
    from depsync.shell.runners.engine import (
        EngineError,
        EngineLost,
        client,
        quote_segment,
    )

    if not image_reference_allowed(reference):
        raise DepsyncError(f"{reference!r} is not an image reference (the OCI grammar: [registry/]name[:tag][@digest])")
    try:
        engine = client(discover_endpoint())
    except DepsyncError as exc:
        raise ImageUnavailable(str(exc).split(": start one")[0]) from None
    run = ContainerRun(engine, [], READ_MEMORY)
    try:
        with signals.deferred():
            try:
                image = engine.json("GET", f"/images/{quote_segment(reference)}/json")
            except EngineError as exc:
                if exc.status == 404:
                    raise ImageUnavailable(f"image {reference} is not on this Docker engine (check does not pull: `docker pull {reference}` first)") from None
                raise
            image_id = image.get("Id")
            if not isinstance(image_id, str) or not re.fullmatch(r"(sha256:)?[0-9a-f]{12,128}", image_id):
                raise DepsyncError(f"the engine's answer for image {reference} has no image id")
            if use_cache:
                known = _cached(image_id, reference)
                if known is not None:
                    return known, True
            env = _read(run, reference, image)
            _remember(env)  # an image id names fixed content; what could not be read is raised, not returned
            return env, False
    except (EngineError, EngineLost) as exc:
        reason = exc.explanation if isinstance(exc, EngineError) else exc.reason
        raise DepsyncError(f"reading image {reference} failed ({run.step}: {redact(reason)[:300]})") from None
    finally:
        if not run.clean:
            run.remove_all()
        engine.close()


def _read(run: object, reference: str, image: dict[str, Any]) -> ImageEnv:
    from depsync.shell.runners.containers import ContainerRun, RunTimeout, StartFailed

    assert isinstance(run, ContainerRun)
    image_id, env_list = str(image["Id"]), config_env(image)
    missing: list[str] = []
    why: list[str] = []  # why an interpreter that is there did not report
    for python in INTERPRETERS:
        lines: list[str] = []
        size = [0]

        def keep(line: str) -> None:
            size[0] += len(line) + 1
            if size[0] <= MAX_OUTPUT_BYTES:
                lines.append(line)

        container = run.create(image_id, [python, "-I", "-S", "-B", "-c", READER], "image-reader", isolated=True)
        try:
            status, tail = run.execute(container, READ_TIMEOUT, keep, f"{python} in {reference}")
        except StartFailed as exc:  # not there, or not runnable by this uid: the next one, then the files
            missing.append(python)
            if not _NO_EXECUTABLE.search(exc.explanation):
                why.append(f"{python} could not start ({redact(exc.explanation)[:150]})")
            continue
        except RunTimeout:
            raise DepsyncError(f"reading {reference}'s Python environment did not finish within {READ_TIMEOUT}s") from None
        if status != 0 and not any(line.startswith('{"k": "python"') for line in lines):
            missing.append(python)
            if status not in (126, 127):  # 126/127: a shell entrypoint found none
                last = next((line for line in reversed(tail) if line.strip()), f"exit status {status}")
                why.append(f"{python} failed ({redact(last)[:150]})")
            continue
        env = parse_report(lines, reference, image_id, env_list)
        if size[0] > MAX_OUTPUT_BYTES:
            env = replace(env, notes=(*env.notes, f"the reader printed over {MAX_OUTPUT_BYTES // 2**20} MiB; the rest was not read"))
        return env
    # no python to ask: the distributions from the image's files, in a container that never starts
    from depsync.shell.runners.image_files import report_lines

    container = run.create(image_id, ["true"], "image-files", isolated=True)
    lines = report_lines(run.engine, container, image, " or ".join(missing))
    if lines:
        env = parse_report(lines, reference, image_id, env_list)
        return replace(env, notes=(*why, *env.notes))
    absent = "; ".join(why) or f"no {' or '.join(missing)} on the PATH of {reference}"
    return without_python(reference, image_id, env_list, f"{absent}, and no site directory in its files: its Python environment was not read")
