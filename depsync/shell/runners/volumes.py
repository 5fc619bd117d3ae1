"""The docker runner's uv cache volumes: one per project checkout and uid, labelled with their
owner, and the removal of those whose checkout no longer exists.

A volume made by depsync for a checkout carries, besides `io.depsync.role=cache`, the
checkout's real path, the uid and this machine (labels below). The engine may be remote or
shared by several machines (DOCKER_HOST), and a path means something only on the machine that
made it: a run judges only its own machine's and uid's volumes, and removes one only when its
name is the one depsync derives from those labels and the path is no longer a directory there.
A volume without these labels (an older depsync's, one named with --cache-volume, anyone
else's) is never removed. Pruning is housekeeping: a refusal or any error leaves the volumes
as they are and the lock goes on, and one run removes at most PRUNE_LIMIT of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.shell.runners.containers import ROLE_LABEL
from depsync.shell.runners.engine import (
    EngineAPI,
    EngineError,
    EngineLost,
    quote_segment,
)

PATH_LABEL = "io.depsync.cache.path"  # the checkout's real path, on the machine below


UID_LABEL = "io.depsync.cache.uid"


HOST_LABEL = "io.depsync.cache.host"  # "<machine id>/<hostname>", see machine()


CACHE_ROLE = "cache"


PRUNE_LIMIT = 8  # removals a run attempts; more are left for the next runs


MANUAL_PRUNE_LIMIT = 1000  # `depsync lock --prune-caches`: the operator asked, so all of them (within reason)


PRUNE_TIMEOUT = 10.0  # s, for each engine request of the pruning (the run's own requests keep theirs)


_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


_NAME_PREFIX = "depsync-uv-cache-"


_NAME = re.compile(r"depsync-uv-cache-\d+-[0-9a-f]{16}")


def cache_volume_name(real_path: str, uid: int) -> str:
    """`depsync-uv-cache-<uid>-<hash of the real path>`: the name is derived from what the
    operator controls, never from a name in the repository, which a hostile project could copy."""
    digest = hashlib.sha256(os.fsencode(real_path)).hexdigest()[:16]
    return f"{_NAME_PREFIX}{uid}-{digest}"


def project_cache_volume(project: Path, uid: int | None = None) -> str:
    """The uv cache volume of one project checkout and one caller.

    One shared writable cache would be a channel between projects: a build backend of one
    project could rewrite a cached package that another project's next lock runs."""
    return cache_volume_name(str(project.resolve()), os.getuid() if uid is None else uid)


def machine() -> str:
    """This machine, as the volumes' labels name it: the machine id (systemd's, or D-Bus's copy)
    and the hostname. Both: cloned VMs and containers made from one image can share a machine
    id, and their hostnames differ; a renamed machine only leaves its old volumes alone."""
    host = socket.gethostname()
    for name in _MACHINE_ID_FILES:
        try:
            text = Path(name).read_text(errors="replace").strip()
        except OSError:
            continue
        if re.fullmatch(r"[0-9a-fA-F]{32}", text):
            return f"{text.lower()}/{host}"
    return host


def owner_labels(real_path: str, uid: int, host: str) -> dict[str, str]:
    """The labels a new project volume gets: role, path, uid, machine. A path that is not
    UTF-8 cannot be stored as it is (the engine's JSON would change it): such a volume gets
    the role only, so it is never pruned."""
    labels = {ROLE_LABEL: CACHE_ROLE}
    try:
        real_path.encode("utf-8")
    except UnicodeEncodeError:
        return labels
    return {**labels, PATH_LABEL: real_path, UID_LABEL: str(uid), HOST_LABEL: host}


def stale_volumes(
    volumes: Iterable[Mapping[str, Any]],
    host: str,
    uid: int,
    checkout_gone: Callable[[str], bool],
    keep: Collection[str] = (),
) -> list[str]:
    """The names, oldest first, of the volumes (Engine API volume objects) to remove: depsync's
    cache volumes of this machine and uid whose checkout is gone. Pure, given checkout_gone."""
    found: list[tuple[str, str]] = []
    for volume in volumes:
        name, labels = volume.get("Name"), volume.get("Labels")
        if not isinstance(name, str) or not isinstance(labels, Mapping) or name in keep:
            continue
        path = labels.get(PATH_LABEL)
        if (
            labels.get(ROLE_LABEL) != CACHE_ROLE
            or labels.get(HOST_LABEL) != host
            or labels.get(UID_LABEL) != str(uid)
            or not isinstance(path, str)
            or not os.path.isabs(path)
            or not _NAME.fullmatch(name)
            or name != cache_volume_name(path, uid)  # labels copied onto another volume do not make it depsync's
        ):
            continue
        if checkout_gone(path):
            created = volume.get("CreatedAt")
            found.append((created if isinstance(created, str) else "", name))
    return [name for _, name in sorted(found)]


def checkout_gone(path: str) -> bool:
    """The path is not a directory any more. A path that cannot be looked at (permissions,
    an I/O error) counts as there: only a definite answer removes a cache."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(mode)


def create_cache_volume(engine: EngineAPI, volume: str, project: Path | None) -> None:
    """The named cache volume, created on first use: labelled with its owner when it is the
    project's own (project is the checkout's real path), with the role only when the operator named it."""
    try:
        engine.call("GET", f"/volumes/{quote_segment(volume)}")
        return
    except EngineError as exc:
        if exc.status != 404:
            raise
    uid = os.getuid()
    labels = owner_labels(str(project), uid, machine()) if project is not None else {ROLE_LABEL: CACHE_ROLE}
    engine.call("POST", "/volumes/create", body={"Name": volume, "Labels": labels})


def prune_cache_volumes(engine: EngineAPI, keep: Collection[str] = (), limit: int = PRUNE_LIMIT, *, strict: bool = False) -> tuple[list[str], int]:
    """Remove this machine's and uid's cache volumes whose checkout is gone: (the names removed,
    how many more are left for later runs). One filtered listing (unused volumes only), then at
    most `limit` removals; whatever the engine refuses or fails to answer is left as it is
    (strict: a listing that fails is a DepsyncError, for the operator who asked)."""
    host, uid = machine(), os.getuid()
    filters = {"label": [f"{ROLE_LABEL}={CACHE_ROLE}", f"{HOST_LABEL}={host}", f"{UID_LABEL}={uid}"], "dangling": ["true"]}
    removed: list[str] = []
    saved, engine.timeout = engine.timeout, min(engine.timeout, PRUNE_TIMEOUT)
    try:
        try:
            listed = engine.json("GET", "/volumes", params={"filters": json.dumps(filters)})
        except (EngineError, EngineLost) as exc:
            if strict:
                reason = exc.explanation if isinstance(exc, EngineError) else exc.reason
                raise DepsyncError(f"the Docker engine did not list the cache volumes ({redact(reason)[:200]}); none was removed") from None
            return [], 0  # housekeeping only: the lock goes on, and so does the next run's pruning
        volumes = listed.get("Volumes") or []
        stale = stale_volumes([v for v in volumes if isinstance(v, dict)] if isinstance(volumes, list) else [], host, uid, checkout_gone, keep)
        for name in stale[:limit]:
            try:
                engine.call("DELETE", f"/volumes/{quote_segment(name)}")
            except EngineError:
                continue  # in use since the listing (409), removed by another run (404): left
            except EngineLost:
                break  # no answer in time: the rest is left for later runs (the lock finds out about the engine itself)
            removed.append(name)
    finally:
        engine.timeout = saved
    return removed, max(0, len(stale) - limit)


def pruned_note(removed: list[str], left: int) -> str | None:
    """The one line that says what pruning removed (None: nothing)."""
    if not removed:
        return None
    plural = "s" if len(removed) != 1 else ""
    more = f"; {left} more on later runs" if left else ""
    return f"removed {len(removed)} uv cache volume{plural} of checkouts that no longer exist: {', '.join(removed)}{more}"


def prune_now() -> str:
    """`depsync lock --prune-caches`: prune on the engine the docker runner would use; the line to say."""
    from depsync.shell.runners.engine import client

    engine = client()  # no engine: one line saying what to do
    try:
        removed, left = prune_cache_volumes(engine, limit=MANUAL_PRUNE_LIMIT, strict=True)
    finally:
        engine.close()
    return pruned_note(removed, left) or "no uv cache volumes of checkouts that no longer exist (on this machine, for this uid)"
