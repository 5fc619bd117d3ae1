"""Containers of one lock run: hardening, who owns them, their lifecycle (create, start, wait, remove) and the sweep of leftovers."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from depsync.core.redact import redact
from depsync.core.streaming import LineSplitter, Tail
from depsync.errors import DepsyncError
from depsync.shell import signals
from depsync.shell.runners import leftovers
from depsync.shell.runners.endpoint import Endpoint
from depsync.shell.runners.engine import (
    EngineAPI,
    EngineError,
    EngineLost,
    ResponseCut,
    as_engine_lost,
)
from depsync.shell.runners.protocol import LineSink
from depsync.threads import start_daemon

WORKDIR = "/workspace"


CACHE_MOUNT = "/uv-cache"


CA_MOUNT = "/etc/depsync/ca-bundle.pem"


UV_MOUNT = "/opt/depsync/bin/uv"


RUN_LABEL = "io.depsync.run"  # the run id, "<hostname>:<pid>:<8 hex>": one per lock() call


ROLE_LABEL = "io.depsync.role"  # probe | lock (and "cache" on the volume)


OWNER_LABEL = "io.depsync.owner"  # "<boot id>/<pid namespace>/<pid>/<start time>": a later run can tell its process is gone


LABEL = RUN_LABEL  # every depsync container has it; depsync never touches a container without it


# Each thread and process in the container counts against the pids limit: uv alone runs a
# tokio worker per CPU plus a rayon pool per CPU, and every build backend it starts (python,
# setuptools, git) adds its own. Several hundred on a large CI node; 4096 leaves room for
# that while a fork bomb in a build backend stops there instead of exhausting the host.
PIDS_LIMIT = 4096


STALE_CREATED = 600  # s: a container that stayed "created" this long (owner unknown) is a leftover


_WORK_PREFIX = "depsync-lock-"


_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)([kmgt]?)(?:i?b)?\Z", re.IGNORECASE)


ROOTFUL_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


def caller_user() -> str:
    """The uid:gid every container runs as: the caller's, so the work copy stays theirs."""
    return f"{os.getuid()}:{os.getgid()}"


def memory_bytes(text: str) -> int:
    """A memory limit as docker reads it ("8g", "512m", "1.5GiB", bytes): 1024-based."""
    match = _MEMORY.match(text.strip())
    if not match:
        raise DepsyncError(f"--memory {text!r} is not a size such as 8g or 512m")
    return int(float(match.group(1)) * 1024 ** "bkmgt".index(match.group(2).lower() or "b"))


def hardening(memory: str | None = None) -> dict[str, Any]:
    """The container-create fields every depsync container gets (Engine API names)."""
    host: dict[str, Any] = {
        # No capability is added back: uv writes only the work copy (mode 0777, owned by the
        # caller) and the cache volume (mode 1777), so neither root nor another uid needs
        # CAP_DAC_OVERRIDE, CAP_CHOWN or CAP_FOWNER; it binds no port and switches no user.
        "CapDrop": ["ALL"],
        "SecurityOpt": ["no-new-privileges"],  # no setuid binary in the image can raise it
        "PidsLimit": PIDS_LIMIT,
        "Privileged": False,
        "AutoRemove": True,
    }
    if memory:
        host["Memory"] = memory_bytes(memory)
    return {"User": caller_user(), "HostConfig": host}


def host_identity() -> str | None:
    """This boot of this machine and this pid namespace (pids mean the same only within it)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}/{namespace}"


def process_start_time(pid: int) -> str:
    return leftovers.start_time(pid)


def _owner(host: str | None) -> str:
    if host is None:
        return ""
    try:
        return f"{host}/{os.getpid()}/{process_start_time(os.getpid())}"
    except (OSError, IndexError):
        return ""


def _owner_state(owner: str, host: str | None) -> str:
    """"alive", "dead", or "unknown" (no owner label, another machine or pid namespace, no /proc)."""
    parts = owner.split("/")
    if host is None or len(parts) != 4 or "/".join(parts[:2]) != host or not parts[2].isdigit():
        return "unknown"
    return _process_state(int(parts[2]), parts[3])


def _process_state(pid: int, started: str) -> str:
    return leftovers.process_state(pid, started)


def _remove(engine: EngineAPI, container_id: str) -> None:
    """Force-remove a container (a running one is killed); one the engine is already removing
    (auto-remove after exit) is waited for briefly, so "gone" means gone."""
    try:
        engine.call("DELETE", f"/containers/{container_id}", params={"force": "1"})
    except EngineError as exc:
        if exc.status == 404:
            return
        if exc.status != 409:  # 409: removal already in progress
            raise
        try:
            connection = engine.open_stream("POST", f"/containers/{container_id}/wait", params={"condition": "removed"}, timeout=15)
            try:
                connection.body("POST")
            except (OSError, ValueError, ResponseCut):
                pass
            finally:
                connection.close()
        except (EngineError, EngineLost):  # gone meanwhile, a slow engine
            pass


def sweep(engine: EngineAPI, keep: str = "") -> list[str]:
    """Remove what earlier depsync runs left; returns the ids removed.

    A container goes when its owner process is known to be gone (same machine and pid
    namespace, pid not running or reused), or, whoever owns it, when it no longer runs
    (exited, dead, or created and never started for STALE_CREATED seconds): such a container
    only holds the forwarded environment. A running container of a live depsync, or of one this
    machine cannot see, is left alone (auto-remove deletes it when uv exits).
    """
    host = host_identity()
    removed = []
    for info in engine.json("GET", "/containers/json", params={"all": "1", "filters": json.dumps({"label": [RUN_LABEL]})}, shape=list):
        labels = info.get("Labels") if isinstance(info.get("Labels"), dict) else {}
        state = str(info.get("State", ""))
        if not isinstance(info.get("Id"), str) or not re.fullmatch(r"[0-9a-f]{12,128}", info["Id"]):
            continue  # never a path of the engine's choosing in DELETE /containers/<id>
        if labels.get(RUN_LABEL) == keep or state == "removing":
            continue
        owner = _owner_state(labels.get(OWNER_LABEL, ""), host)
        if owner == "alive":
            continue
        ended = state in ("exited", "dead") or (state == "created" and time.time() - float(info.get("Created") or 0) > STALE_CREATED)
        if owner == "dead" or ended:
            try:
                _remove(engine, info["Id"])
            except EngineError:
                continue  # not this run's business to fail over
            removed.append(info["Id"])
    return removed


def sweep_work_copies(parent: Path) -> None:
    """Work copies of depsync runs that were SIGKILLed (their names carry pid and start time)."""
    leftovers.sweep(parent, _WORK_PREFIX)


def work_prefix() -> str:
    return leftovers.owned_prefix(_WORK_PREFIX)


def memory_tmp(endpoint: Endpoint) -> Path | None:
    """/dev/shm, when the work copy can go there: no TMPDIR chosen, a rootful engine on this
    machine (it sees the host's /dev/shm), a tmpfs with room. Creating files there costs a
    fraction of a journaled disk's (measured: 450 files, 9 ms vs 100-270 ms on this VM's ext4)."""
    path = endpoint.socket_path
    if os.environ.get("TMPDIR") or path is None or os.path.realpath(path) not in ROOTFUL_SOCKETS:
        return None
    shm = Path("/dev/shm")
    try:
        with open("/proc/self/mounts") as mounts:
            fields = next((line.split() for line in mounts if line.split()[1:3] == ["/dev/shm", "tmpfs"]), None)
        if fields is None or "noexec" in fields[3].split(","):  # a build backend may run a script from the copy
            return None
        stats = os.statvfs(shm)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < 1 << 30 or not os.access(shm, os.W_OK | os.X_OK):
        return None
    return shm


class StartFailed(Exception):
    def __init__(self, explanation: str) -> None:
        super().__init__(explanation)
        self.explanation = explanation


class RunTimeout(Exception):
    pass


class ContainerRun:
    def __init__(self, engine: EngineAPI, secrets: list[str], memory: str | None) -> None:
        self.engine = engine
        self.secrets = secrets
        self.memory = memory
        self.id = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        self.owner = _owner(host_identity())
        self.step = "starting"
        self.created: list[str] = []
        self.gone: set[str] = set()  # containers the engine said it removed
        self.creating = False  # a create was sent and its answer is not in: it may exist

    def create(
        self, image: str, command: list[str], role: str, *, environment: Mapping[str, str] | None = None, mounts: list[dict[str, Any]] | None = None,
        working_dir: str | None = None, isolated: bool = False,
    ) -> str:
        """isolated: no network and a read-only root file system (a reader of the image, not a lock)."""
        self.step = f"creating the {role} container"
        labels = {RUN_LABEL: self.id, ROLE_LABEL: role, OWNER_LABEL: self.owner}
        hardened = hardening(self.memory)
        # the entrypoint is set, never the image's: an image's ENTRYPOINT script would run first,
        # with the forwarded credentials, and could rewrite the command
        body: dict[str, Any] = {"Image": image, "Entrypoint": command[:1], "Cmd": command[1:], "Labels": labels, "User": hardened["User"], "AttachStdout": True, "AttachStderr": True}
        if environment:
            body["Env"] = [f"{k}={v}" for k, v in environment.items()]
        if working_dir:
            body["WorkingDir"] = working_dir
        body["HostConfig"] = {**hardened["HostConfig"], **({"Mounts": mounts} if mounts else {})}
        if isolated:
            body["NetworkDisabled"] = True
            body["HostConfig"].update({"NetworkMode": "none", "ReadonlyRootfs": True})
        self.creating = True
        answer = self.engine.json("POST", "/containers/create", body=body)
        self.creating = False
        if not isinstance(answer.get("Id"), str) or not re.fullmatch(r"[0-9a-f]{12,128}", answer["Id"]):
            raise EngineLost("the engine's answer to creating a container has no container id")
        self.created.append(answer["Id"])
        return str(answer["Id"])

    def execute(self, container: str, timeout: float, on_line: LineSink | None, what: str, transform: Any = None) -> tuple[int, list[str]]:
        """Start the container and wait for it; (exit status, output lines, secrets masked).

        The output is attached to and the exit status asked for *before* the start: an
        auto-remove container that ends at once is gone by the time a later request could
        ask. The wait's answer comes when the engine has removed the container.
        """
        engine = self.engine
        self.step = f"attaching to {what}"
        attach = engine.open_stream("POST", f"/containers/{container}/attach", params={"stream": "1", "stdout": "1", "stderr": "1", "logs": "0"}, timeout=None, upgrade=True)
        try:
            waiter = engine.open_stream("POST", f"/containers/{container}/wait", params={"condition": "removed"}, timeout=timeout)
            try:
                lines = Tail()
                # the main thread waits below in one long read: a signal must reach it, not this reader
                reader = start_daemon(_pump, attach.reader, lines, on_line, self.secrets, transform)
                self.step = f"starting {what}"
                try:
                    engine.call("POST", f"/containers/{container}/start")
                except EngineError as exc:
                    raise StartFailed(exc.explanation) from None
                self.step = f"waiting for {what}"
                try:
                    with signals.immediate():  # the long wait: a signal cuts it at once
                        body, _ = waiter.body("POST")
                except (OSError, ValueError, ResponseCut) as exc:
                    if isinstance(exc, TimeoutError):
                        raise RunTimeout from None
                    raise as_engine_lost(exc) from exc
                try:
                    result = json.loads(body)
                except ValueError:
                    raise EngineLost("the wait for the container ended without its status") from None
                if not isinstance(result, dict) or not isinstance(result.get("StatusCode", 1), int):
                    raise EngineLost("the wait for the container ended without its status")
                self.gone.add(container)
                reader.join(timeout=5)
            finally:
                waiter.close()
        finally:
            attach.close()
        return int(result.get("StatusCode", 1)), lines.lines()

    @property
    def clean(self) -> bool:
        """Every container this run made is known to be gone."""
        return not self.creating and set(self.created) <= self.gone

    def remove_all(self) -> None:
        """Remove every container of this run, not only the one in hand: a create whose answer
        never came back (a signal, the engine going away) still made one."""
        try:
            for info in self.engine.json("GET", "/containers/json", params={"all": "1", "filters": json.dumps({"label": [f"{RUN_LABEL}={self.id}"]})}, shape=list):
                _remove(self.engine, info["Id"])
        except Exception:  # the engine is gone: its restart drops auto-remove containers, the next run the rest
            pass

    def engine_answers(self) -> bool:
        try:
            EngineAPI(self.engine.endpoint, timeout=10).ping()
            return True
        except Exception:
            return False


def _frames(stream: BinaryIO):  # type: ignore[no-untyped-def]
    """The payloads of an attach stream (8-byte headers: stream, 0, 0, 0, big-endian size)."""
    while True:
        header = stream.read(8)
        if len(header) < 8:
            return
        size = int.from_bytes(header[4:8], "big")
        while size > 0:  # a frame can be up to 4 GiB: read in pieces, memory stays bounded
            data = stream.read(min(size, 65536))
            if not data:
                return
            size -= len(data)
            yield data


def _pump(stream: BinaryIO, lines: Tail, on_line: LineSink | None, secrets: list[str], transform: Any) -> None:
    """The container's output as lines, in bounded memory (depsync/streaming.py)."""
    def emit(raw: bytes) -> None:
        line = raw.decode(errors="replace").rstrip("\r")
        line = redact(transform(line) if transform else line, secrets)
        lines.append(line)
        if on_line:
            on_line(line)

    splitter = LineSplitter()
    try:
        for chunk in _frames(stream):
            for raw in splitter.feed(chunk):
                emit(raw)
    except Exception:  # the container was removed under us (timeout, signal) or the engine went away
        return
    rest = splitter.close()
    if rest is not None and rest.strip():
        emit(rest)


def cache_mode_archive() -> bytes:
    """A tar of one directory entry, the cache mount point, mode 1777 and root-owned.

    put_archive into the created (not started) lock container makes the engine extract it
    itself, through the volume mount: the volume's root becomes writable by any uid (like /tmp)
    without a root container.
    """
    import tarfile  # ~7 ms to import, and needed once per cache volume

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        entry = tarfile.TarInfo(os.path.basename(CACHE_MOUNT))
        entry.type = tarfile.DIRTYPE
        entry.mode = 0o1777
        entry.uid = entry.gid = 0
        entry.mtime = int(time.time())
        archive.addfile(entry)
    return buffer.getvalue()


def engine_lost_message(run: ContainerRun, exc: BaseException) -> str:
    reason = exc.reason if isinstance(exc, EngineLost) else str(exc)
    return (
        f"the Docker engine stopped answering during the run ({run.step}: {redact(reason, run.secrets)[:200]}); "
        "uv.lock is unchanged; start the engine and run again (that run removes what this one left)"
    )
