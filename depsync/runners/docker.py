"""The docker runner: `uv lock` inside the CI image, through the docker SDK.

Lifecycle of one run (one `lock()` call, one run id): ping the engine -> remove what earlier
runs left -> find the image -> settle the uv version (the image's when it matches, else an
exact binary from depsync's cache, mounted read-only) -> copy the project -> create the
container -> make the cache volume writable -> attach to its output and ask for its exit
status -> start -> wait with a timeout -> remove every container of the run.

Every container (the uv probe and the lock) is made by `_Run.create`, hardened the same way:
the caller's uid:gid, no capabilities, no-new-privileges, a pids limit, never privileged, an
optional memory limit, and auto-remove: the engine deletes it as soon as uv exits, so the
forwarded index credentials do not outlive uv (dockerd also deletes auto-remove containers
left by a crash when it starts again). Each carries the run id, its role and its owner
process as labels; nothing without the `io.depsync.run` label is ever touched.

Signals follow depsync.signals: the run is one deferred block (a signal never cuts a create
or a thread start in half), the waits re-open it (`immediate`), and whatever unwinds the
run (an error, a signal, a timeout, the engine going away) removes all of the run's
containers. What a SIGKILLed depsync or a lost engine leaves is removed by the next run.
"""

from __future__ import annotations

import io
import os
import re
import socket
import ssl
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from depsync import signals
from depsync.errors import DepsyncError
from depsync.redact import redact, secret_values
from depsync.runners import LineSink, LockRun, copy_project, write_replacements

WORKDIR = "/workspace"
CACHE_MOUNT = "/uv-cache"
CA_MOUNT = "/etc/depsync/ca-bundle.pem"
UV_MOUNT = "/opt/depsync/bin/uv"
FORWARDED = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX")

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
PROBE_TIMEOUT = 120  # s, for `uv --version`
# the probe's command cannot run: the image has no (usable) uv (runc and crun wordings)
_NO_EXECUTABLE = re.compile(r'exec: "uv": |executable file \S* ?not found', re.IGNORECASE)
_VERSION = re.compile(r"^uv (\d+\.\d+\S*)", re.MULTILINE)


def forwarded_environment(environ: dict[str, str]) -> dict[str, str]:
    """Proxy and index settings to pass into the container (UV_INDEX_* credentials included)."""
    out = {k: v for k, v in environ.items() if k in FORWARDED or k.startswith("UV_INDEX_")}
    return out


def host_ca_bundle() -> Path | None:
    """The CA bundle the host trusts (a TLS-inspecting proxy's CA is in it on such networks)."""
    for candidate in (os.environ.get("SSL_CERT_FILE"), ssl.get_default_verify_paths().cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def caller_user() -> str:
    """The uid:gid every container runs as: the caller's, so the work copy stays theirs."""
    return f"{os.getuid()}:{os.getgid()}"


def hardening(memory: str | None = None) -> dict[str, Any]:
    """The create() options every depsync container gets."""
    options: dict[str, Any] = {
        "user": caller_user(),
        # No capability is added back: uv writes only the work copy (mode 0777, owned by the
        # caller) and the cache volume (mode 1777), so neither root nor another uid needs
        # CAP_DAC_OVERRIDE, CAP_CHOWN or CAP_FOWNER; it binds no port and switches no user.
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],  # no setuid binary in the image can raise it
        "pids_limit": PIDS_LIMIT,
        "privileged": False,
        "auto_remove": True,
    }
    if memory:
        options["mem_limit"] = memory
    return options


def client():  # type: ignore[no-untyped-def]
    """A docker client whose engine answers, or a DepsyncError saying what to do."""
    import docker
    from docker.errors import DockerException

    try:
        engine = docker.from_env(timeout=30)
        engine.ping()
    except DockerException as exc:
        raise DepsyncError(
            f"no Docker engine answers ({redact(str(exc).splitlines()[0])[:200]}): start one "
            "(containers/setup-engine.sh on Debian), set DOCKER_HOST, or use --runner local"
        ) from None
    return engine


def engine_available() -> bool:
    try:
        client()
        return True
    except DepsyncError:
        return False


# -- who owns a container: this process, a live one, a dead one, or one we cannot see ----------

def _host_identity() -> str | None:
    """This boot of this machine and this pid namespace (pids mean the same only within it)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return None
    return f"{boot}/{namespace}"


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat): tells a reused pid apart."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def _owner(host: str | None) -> str:
    if host is None:
        return ""
    try:
        return f"{host}/{os.getpid()}/{_start_time(os.getpid())}"
    except (OSError, IndexError):
        return ""


def _owner_state(owner: str, host: str | None) -> str:
    """"alive", "dead", or "unknown" (no owner label, another machine or pid namespace, no /proc)."""
    parts = owner.split("/")
    if host is None or len(parts) != 4 or "/".join(parts[:2]) != host or not parts[2].isdigit():
        return "unknown"
    try:
        started = _start_time(int(parts[2]))
    except (FileNotFoundError, ProcessLookupError):
        return "dead"
    except (OSError, IndexError):
        return "unknown"
    return "alive" if started == parts[3] else "dead"


def _remove(engine: Any, container_id: str) -> None:
    """Force-remove a container (a running one is killed); one the engine is already removing
    (auto-remove after exit) is waited for briefly, so "gone" means gone."""
    from docker.errors import APIError, NotFound

    try:
        engine.api.remove_container(container_id, force=True)
    except NotFound:
        return
    except APIError as exc:
        if exc.status_code != 409:  # 409: removal already in progress
            raise
        try:
            engine.api.wait(container_id, timeout=15, condition="removed")
        except Exception:  # NotFound (gone meanwhile), a slow engine: nothing more to do here
            pass


def sweep(engine: Any, keep: str = "") -> list[str]:
    """Remove what earlier depsync runs left; returns the ids removed.

    A container goes when its owner process is known to be gone (same machine and pid
    namespace, pid not running or reused), or, whoever owns it, when it no longer runs
    (exited, dead, or created and never started for STALE_CREATED seconds): such a container
    only holds the forwarded environment. A running container of a live depsync, or of one this
    machine cannot see, is left alone (auto-remove deletes it when uv exits).
    """
    from docker.errors import APIError

    host = _host_identity()
    removed = []
    for info in engine.api.containers(all=True, filters={"label": RUN_LABEL}):
        labels = info.get("Labels") or {}
        state = info.get("State", "")
        if labels.get(RUN_LABEL) == keep or state == "removing":
            continue
        owner = _owner_state(labels.get(OWNER_LABEL, ""), host)
        if owner == "alive":
            continue
        ended = state in ("exited", "dead") or (state == "created" and time.time() - float(info.get("Created") or 0) > STALE_CREATED)
        if owner == "dead" or ended:
            try:
                _remove(engine, info["Id"])
            except APIError:
                continue  # not this run's business to fail over
            removed.append(info["Id"])
    return removed


# -- one run: its containers, the step it is at, and how it ends -------------------------------

class _StartFailed(Exception):
    def __init__(self, explanation: str) -> None:
        super().__init__(explanation)
        self.explanation = explanation


class _Timeout(Exception):
    pass


def _timed_out(exc: BaseException) -> bool:
    """A read timeout, however requests/urllib3 wrapped it (a timeout while reading a body
    comes back as requests.ConnectionError(ReadTimeoutError))."""
    import requests
    import urllib3

    seen: set[int] = set()
    todo: list[object] = [exc]
    while todo:
        item = todo.pop()
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, (TimeoutError, urllib3.exceptions.ReadTimeoutError, requests.exceptions.Timeout)):
            return True
        todo.extend([*item.args, item.__cause__, item.__context__])
    return False


def _reason(exc: BaseException) -> str:
    """An engine error in words, outer to inner: "Connection aborted: No such file or directory"."""
    words: list[str] = []
    item: BaseException | None = exc
    for _ in range(6):  # requests -> urllib3 -> OSError is three deep
        if item is None:
            break
        texts = [a for a in item.args if isinstance(a, str)]
        inner = next((a for a in item.args if isinstance(a, BaseException)), None) or item.__cause__
        if texts:
            words.append(texts[0])
        elif inner is None:
            words.append(getattr(item, "strerror", None) or str(item) or type(item).__name__)
        item = inner
    text = ": ".join(dict.fromkeys(" ".join(w.split()).rstrip(".") for w in words if w.strip()))
    return text or type(exc).__name__


class _Run:
    def __init__(self, engine: Any, secrets: list[str], memory: str | None) -> None:
        self.engine = engine
        self.secrets = secrets
        self.memory = memory
        self.id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.owner = _owner(_host_identity())
        self.step = "starting"

    def create(self, image: str, command: list[str], role: str, **kwargs: Any) -> Any:
        self.step = f"creating the {role} container"
        labels = {RUN_LABEL: self.id, ROLE_LABEL: role, OWNER_LABEL: self.owner}
        return self.engine.containers.create(image, command, labels=labels, detach=True, **hardening(self.memory), **kwargs)

    def execute(self, container: Any, timeout: float, on_line: LineSink | None, what: str) -> tuple[int, list[str]]:
        """Start the container and wait for it; (exit status, output lines, secrets masked).

        The output is attached to and the exit status asked for *before* the start: an
        auto-remove container that ends at once is gone by the time a later request could
        ask. The wait's answer comes when the engine has removed the container.
        """
        from docker.errors import APIError

        self.step = f"attaching to {what}"
        stream = container.attach(stdout=True, stderr=True, stream=True, logs=False)
        api = self.engine.api
        # docker-py's wait() only returns with the body; this request is the same one, but it
        # comes back as soon as the engine has registered the wait (the headers), before start.
        waiter = api._post(api._url("/containers/{0}/wait", container.id), params={"condition": "removed"}, timeout=timeout, stream=True)
        try:
            api._raise_for_status(waiter)
            lines: list[str] = []
            reader = threading.Thread(target=_pump, args=(stream, lines, on_line, self.secrets), daemon=True)
            reader.start()
            self.step = f"starting {what}"
            try:
                container.start()
            except APIError as exc:
                raise _StartFailed(str(exc.explanation or exc)) from None
            self.step = f"waiting for {what}"
            try:
                with signals.immediate():  # the long wait: a signal cuts it at once
                    result = waiter.json()
            except Exception as exc:
                if _timed_out(exc):
                    raise _Timeout from None
                raise
            reader.join(timeout=5)
        finally:
            waiter.close()
        return int(result.get("StatusCode", 1)), lines

    def remove_all(self) -> None:
        """Remove every container of this run, not only the one in hand: a create whose answer
        never came back (a signal, the engine going away) still made one."""
        try:
            for info in self.engine.api.containers(all=True, filters={"label": f"{RUN_LABEL}={self.id}"}):
                _remove(self.engine, info["Id"])
        except Exception:  # the engine is gone: its restart drops auto-remove containers, the next run the rest
            pass

    def engine_answers(self) -> bool:
        try:
            self.engine.ping()
            return True
        except Exception:
            return False


def _cache_mode_archive() -> bytes:
    """A tar of one directory entry, the cache mount point, mode 1777 and root-owned.

    put_archive() into the created (not started) lock container makes the engine extract it
    itself, through the volume mount: the volume's root becomes writable by any uid (like /tmp)
    without a root container.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        entry = tarfile.TarInfo(os.path.basename(CACHE_MOUNT))
        entry.type = tarfile.DIRTYPE
        entry.mode = 0o1777
        entry.uid = entry.gid = 0
        entry.mtime = int(time.time())
        archive.addfile(entry)
    return buffer.getvalue()


@dataclass
class DockerRunner:
    image: str
    uv_version: str | None = None  # wanted version; None: the image's uv
    cache_volume: str = "depsync-uv-cache"
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    name: str = "docker"
    memory: str | None = None  # a memory limit for every container ("8g"); None: the engine's default

    def _image(self, engine: Any) -> str:
        """The image's id, pulling it when the engine does not have it."""
        from docker.errors import DockerException, ImageNotFound

        try:
            return str(engine.images.get(self.image).id)
        except ImageNotFound:
            pass
        try:
            return str(engine.images.pull(self.image).id)
        except DockerException as exc:
            raise DepsyncError(
                f"image {self.image} is not on this engine and pulling it failed ({redact(str(exc))[:200]}); "
                "build it (--build), load it (docker load), or name another with --image"
            ) from None

    def _uv(self, run: _Run, image_id: str) -> tuple[dict[str, dict[str, str]], str, str, tuple[str, ...]]:
        """(extra volumes, uv executable in the container, version used, notes)."""
        image_uv = self._image_uv(run, image_id)
        if self.uv_version is None or image_uv == self.uv_version:
            if not image_uv:
                raise DepsyncError(f"{self.image} has no uv and no version is pinned (ARG UV_VERSION) to provide one")
            return {}, "uv", image_uv, ()
        from depsync.uv import uv_binary

        binary = uv_binary(self.uv_version)
        note = f"{self.image} has uv {image_uv or 'none'}; used uv {self.uv_version} (pinned) from depsync's cache"
        return {str(binary): {"bind": UV_MOUNT, "mode": "ro"}}, UV_MOUNT, self.uv_version, (note,)

    def _image_uv(self, run: _Run, image_id: str) -> str:
        """The uv version inside the image ("" when it has none), remembered per image id."""
        import json

        from depsync.uv import cache_root

        memo = cache_root() / "image-uv.json"
        try:
            known = json.loads(memo.read_text()) if memo.is_file() else {}
        except (OSError, ValueError):
            known = {}
        if image_id in known:
            return str(known[image_id])
        version, definite = self._probe_uv(run)
        if not definite:
            return version  # a transient answer is not remembered
        known[image_id] = version
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(known))
        except OSError:
            pass  # a cache, not a requirement
        return version

    def _probe_uv(self, run: _Run) -> tuple[str, bool]:
        """(uv's version in the image or "", whether that answer is definite)."""
        container = run.create(self.image, ["uv", "--version"], "probe")
        try:
            status, lines = run.execute(container, PROBE_TIMEOUT, None, "`uv --version`")
        except _StartFailed as exc:
            if _NO_EXECUTABLE.search(exc.explanation):
                return "", True  # no uv in the image (or none this uid may run): the pinned one is mounted
            raise DepsyncError(f"`uv --version` could not start in {self.image}: {redact(exc.explanation, run.secrets)[:300]}") from None
        except _Timeout:
            raise DepsyncError(f"`uv --version` did not finish within {PROBE_TIMEOUT}s in {self.image}") from None
        match = _VERSION.search("\n".join(lines))  # an entrypoint may print a banner first
        if status == 0 and match:
            return match.group(1), True
        return "", status == 127  # 127: an entrypoint script's shell found no uv

    def _cache(self, engine: Any) -> None:
        """The named cache volume (created on first use; made writable per run, see _cache_mode_archive)."""
        from docker.errors import NotFound

        try:
            engine.volumes.get(self.cache_volume)
        except NotFound:
            engine.volumes.create(self.cache_volume, labels={ROLE_LABEL: "cache"})

    def lock(self, project: Path, args: list[str], timeout: float = 1800, on_line: LineSink | None = None, replace: Mapping[str, bytes] | None = None) -> LockRun:
        from docker.errors import APIError, DockerException
        from requests.exceptions import RequestException
        from urllib3.exceptions import HTTPError

        engine = client()
        secrets = secret_values(self.environ)
        run = _Run(engine, secrets, self.memory)
        # the whole run is deferred: a signal is acted on while waiting for uv, or when the block
        # ends; the containers are removed before the work copy, the work copy before returning
        with signals.deferred(), tempfile.TemporaryDirectory(prefix="depsync-lock-", ignore_cleanup_errors=True) as tmp:
            try:
                return self._lock(run, Path(tmp), project, args, timeout, on_line, replace)
            except _Timeout:
                raise DepsyncError(f"uv lock did not finish within {timeout:.0f}s; the container was stopped and removed, uv.lock is unchanged") from None
            except APIError as exc:  # the engine answered, with a refusal
                if not run.engine_answers():
                    raise DepsyncError(_engine_lost(run, exc)) from None
                raise DepsyncError(f"the Docker engine refused {run.step} ({redact(str(exc.explanation or exc), secrets)[:300]}); uv.lock is unchanged") from None
            except (RequestException, HTTPError, DockerException, ConnectionError) as exc:
                raise DepsyncError(_engine_lost(run, exc)) from None
            finally:
                run.remove_all()

    def _lock(self, run: _Run, tmp: Path, project: Path, args: list[str], timeout: float, on_line: LineSink | None, replace: Mapping[str, bytes] | None) -> LockRun:
        engine = run.engine
        run.step = "removing what earlier runs left"
        sweep(engine, keep=run.id)
        run.step = "looking up the image"
        uv_volumes, uv_exe, version, notes = self._uv(run, self._image(engine))
        run.step = "creating the cache volume"
        self._cache(engine)
        environment = {
            "HOME": "/tmp/depsync-home",
            "UV_CACHE_DIR": CACHE_MOUNT,
            "UV_PYTHON_DOWNLOADS": "never",
            "NO_COLOR": "1",
            **forwarded_environment(self.environ),
        }
        volumes = {self.cache_volume: {"bind": CACHE_MOUNT, "mode": "rw"}, **uv_volumes}
        ca = host_ca_bundle()
        if ca is not None:
            volumes[str(ca)] = {"bind": CA_MOUNT, "mode": "ro"}
            environment["SSL_CERT_FILE"] = CA_MOUNT
        copy = copy_project(project.resolve(), tmp / "project")
        write_replacements(copy, replace)
        os.chmod(copy, 0o777)  # the container user must be able to write uv.lock there
        volumes[str(copy)] = {"bind": WORKDIR, "mode": "rw"}
        container = run.create(self.image, [uv_exe, "lock", *args], "lock", working_dir=WORKDIR, environment=environment, volumes=volumes)
        run.step = "making the cache volume writable"
        container.put_archive(os.path.dirname(CACHE_MOUNT), _cache_mode_archive())  # every run: cheap, and it repairs a failed earlier one
        try:
            status, lines = run.execute(container, timeout, on_line, "uv")
        except _StartFailed as exc:
            raise DepsyncError(f"uv could not start in {self.image} ({redact(exc.explanation, run.secrets)[:300]}); uv.lock is unchanged") from None
        if status != 0 and not run.engine_answers():  # a daemon that shuts down stops uv first
            raise DepsyncError(_engine_lost(run, ConnectionError(f"uv ended with status {status} and the engine no longer answers")))
        lock_file = copy / "uv.lock"
        new_lock = lock_file.read_bytes() if status == 0 and "--check" not in args and lock_file.is_file() else None
        return LockRun(status, "\n".join(lines), version, new_lock, notes)


def _engine_lost(run: _Run, exc: BaseException) -> str:
    return (
        f"the Docker engine stopped answering during the run ({run.step}: {redact(_reason(exc), run.secrets)[:200]}); "
        "uv.lock is unchanged; start the engine and run again (that run removes what this one left)"
    )


def _pump(stream: Any, lines: list[str], on_line: LineSink | None, secrets: list[str]) -> None:
    buffer = b""
    try:
        for chunk in stream:
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = redact(raw.decode(errors="replace").rstrip("\r"), secrets)
                lines.append(line)
                if on_line:
                    on_line(line)
    except Exception:  # the container was removed under us (timeout, signal) or the engine went away
        return
    if buffer.strip():
        lines.append(redact(buffer.decode(errors="replace"), secrets))


__all__ = ["DockerRunner", "PIDS_LIMIT", "caller_user", "engine_available", "forwarded_environment", "hardening", "host_ca_bundle", "sweep"]
