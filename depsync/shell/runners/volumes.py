"""The docker runner's uv cache volumes: one per project checkout and uid, labelled with their
owner, and the removal of those whose checkout no longer exists.

A volume made by depsync for a checkout carries, besides `io.depsync.role=cache`, the
checkout's real path, the uid, this machine and the repository's identity (a digest of its
origin URL, else of its root commit; labels below), and its name is derived from the path and
that identity. CI that checks every repository out at one fixed path on a shared engine gives
each repository its own volume; and a volume under the derived name is used only when its
labels are this checkout's: any other (made beforehand, by anyone) is replaced by a fresh one,
with a note. The engine may be remote or shared by several machines (DOCKER_HOST), and a path
means something only on the machine that made it: a run judges only its own machine's and
uid's volumes, and removes one only when its name is the one depsync derives from those labels
(or, for the volumes of the depsync before the repository label, from the path alone) and the
path is no longer a directory there. A volume without these labels (a much older depsync's,
one named with --cache-volume, anyone else's) is never removed. Pruning is housekeeping: a refusal or any error leaves the volumes
as they are and the lock goes on, and one run removes at most PRUNE_LIMIT of them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import subprocess
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.records import record
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


REPO_LABEL = "io.depsync.cache.repo"  # a digest of the repository's identity, see repository_digest()


CACHE_ROLE = "cache"


PRUNE_LIMIT = 8  # removals a run attempts; more are left for the next runs


MANUAL_PRUNE_LIMIT = 1000  # `depsync lock --prune-caches`: the operator asked, so all of them (within reason)


PRUNE_TIMEOUT = 10.0  # s, for each engine request of the pruning (the run's own requests keep theirs)


_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


_NAME_PREFIX = "depsync-uv-cache-"


_NAME = re.compile(r"depsync-uv-cache-\d+-[0-9a-f]{16}")


_CREDENTIALS = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/@]*@")


def cache_volume_name(real_path: str, uid: int, repo: str | None) -> str:
    """`depsync-uv-cache-<uid>-<hash of the real path and the repository digest>`: derived from
    what the operator controls (where the checkout is, which repository CI cloned there), never
    from a name in the repository, which a hostile project could copy. repo None: the name an
    older depsync gave (the path only), still recognised when pruning."""
    key = os.fsencode(real_path) if repo is None else os.fsencode(real_path) + b"\0" + repo.encode()
    return f"{_NAME_PREFIX}{uid}-{hashlib.sha256(key).hexdigest()[:16]}"


def repository_identity(project: Path) -> str:
    """Which repository the checkout is, beyond where it is: its origin URL (credentials dropped,
    so a rotated token keeps the cache), else its root commits (not in a shallow clone, whose
    root moves with every fetch), else "" (not a repository: the path alone tells checkouts
    apart). Read from the checkout's own git config, which CI writes, not from its files."""
    from depsync.shell import process

    def git(*args: str) -> str | None:
        try:
            result = process.run(["git", "-C", str(project), *args], timeout=30, text=True)
        except (OSError, subprocess.SubprocessError):
            return None
        return result.stdout.strip() if result.returncode == 0 else None

    origin = git("config", "--get", "remote.origin.url")
    if origin:
        return "origin " + _CREDENTIALS.sub(r"\1", origin).removesuffix("/").removesuffix(".git")
    if git("rev-parse", "--is-shallow-repository") == "false":
        roots = git("rev-list", "--max-parents=0", "HEAD", "--")
        if roots:
            return "root " + " ".join(sorted(roots.split()))
    return ""


def repository_digest(identity: str) -> str:
    """The identity as the label stores it: a digest (an origin URL is not engine metadata
    everyone who may list volumes should read)."""
    return hashlib.sha256(identity.encode("utf-8", "surrogateescape")).hexdigest()[:32]


@record
class ProjectCache:
    """A checkout's own cache volume: its name and the labels that prove it is this checkout's."""

    name: str
    labels: dict[str, str]


def project_cache(project: Path, uid: int | None = None) -> ProjectCache:
    """The uv cache volume of one project checkout (of one repository) and one caller.

    One shared writable cache would be a channel between projects: a build backend of one
    project could rewrite a cached package that another project's next lock runs."""
    real, uid = str(project.resolve()), os.getuid() if uid is None else uid
    repo = repository_digest(repository_identity(project))
    return ProjectCache(cache_volume_name(real, uid, repo), owner_labels(real, uid, machine(), repo))


def project_cache_volume(project: Path, uid: int | None = None) -> str:
    """The name of project_cache()."""
    return project_cache(project, uid).name


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


def owner_labels(real_path: str, uid: int, host: str, repo: str) -> dict[str, str]:
    """The labels a new project volume gets: role, path, uid, machine, repository digest. A
    path that is not UTF-8 cannot be stored as it is (the engine's JSON would change it): such
    a volume has no path label, so it is never pruned (its name still holds the path's hash)."""
    labels = {ROLE_LABEL: CACHE_ROLE, UID_LABEL: str(uid), HOST_LABEL: host, REPO_LABEL: repo}
    try:
        real_path.encode("utf-8")
    except UnicodeEncodeError:
        return labels
    return {**labels, PATH_LABEL: real_path}


def is_owned(labels: object, wanted: Mapping[str, str]) -> bool:
    """A volume's labels (as the engine gives them) carry every owner label wanted, with its
    value (an engine may add labels of its own)."""
    return isinstance(labels, Mapping) and all(labels.get(key) == value for key, value in wanted.items())


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
        path, repo = labels.get(PATH_LABEL), labels.get(REPO_LABEL)
        if (
            labels.get(ROLE_LABEL) != CACHE_ROLE
            or labels.get(HOST_LABEL) != host
            or labels.get(UID_LABEL) != str(uid)
            or not isinstance(path, str)
            or not os.path.isabs(path)
            or not _NAME.fullmatch(name)
            or not (repo is None or isinstance(repo, str))
            or name != cache_volume_name(path, uid, repo)  # labels copied onto another volume do not make it depsync's
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


def create_cache_volume(engine: EngineAPI, volume: str, owner: Mapping[str, str] | None) -> str | None:
    """The cache volume, created on first use; the note to say when one was replaced.

    owner None: the operator named the volume (`--cache-volume`): used as it is, made with the
    role label only. Otherwise it is the project's own, and `owner` its labels: an existing
    volume under that name is used only when it carries those labels; any other is
    removed and made afresh (one that is in use is refused: exit 2, uv.lock unchanged)."""
    path = f"/volumes/{quote_segment(volume)}"
    try:
        found = engine.json("GET", path)
    except EngineError as exc:
        if exc.status != 404:
            raise
        found = None
    if found is not None and (owner is None or is_owned(found.get("Labels"), owner)):
        return None
    note = None
    if found is not None:
        try:
            engine.call("DELETE", path)
        except EngineError as exc:
            if exc.status != 404:
                raise DepsyncError(
                    f"the uv cache volume {volume} exists but its labels do not show it is this checkout's, and the engine "
                    f"would not remove it ({redact(exc.explanation)[:200]}); depsync does not use it: remove it "
                    f"(`docker volume rm {volume}`) once nothing uses it; uv.lock is unchanged"
                ) from None
        note = f"replaced the uv cache volume {volume}: its labels did not show it is this checkout's (made by someone else, or by an older depsync)"
    made = engine.json("POST", "/volumes/create", body={"Name": volume, "Labels": dict(owner or {ROLE_LABEL: CACHE_ROLE})})
    if owner is not None and not is_owned(made.get("Labels"), owner):  # made by someone else between the two requests
        raise DepsyncError(f"the uv cache volume {volume} was made by someone else while depsync made it; depsync does not use it; uv.lock is unchanged")
    return note


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
