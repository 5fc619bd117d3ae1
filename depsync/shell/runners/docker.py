"""The docker runner: `uv lock` inside the CI image, through the Docker Engine API.

Lifecycle of one run (one `lock()` call, one run id): find the engine (DOCKER_HOST, the
current docker context, podman's socket, the default socket) and ping it -> remove what
earlier runs left -> inspect the image (pulled with the docker CLI when missing) -> settle the
uv version (the image's when it matches the pin, else the exact pinned binary for the image's
platform from depsync's cache, mounted read-only) -> copy the project -> create the container
-> make the cache volume's root writable when it is not yet (a new volume) -> attach to its
output and ask for its exit status -> start -> wait with a timeout. What an image has (its uv,
its C library) is remembered per image id, so a warm run makes no container but the lock
container and about as many engine requests as `docker run --rm`.

The engine is spoken to directly (HTTP/1.1 over its socket, a small client below): the docker
SDK costs ~80-115 ms to import, more than half of a warm run's overhead. (It is still used
for one thing: a `--build` on a machine without any docker CLI, depsync/runners/choose.py.)

Every container (the uv probe and the lock) is made by `_Run.create`, hardened the same way:
the caller's uid:gid, no capabilities, no-new-privileges, a pids limit, never privileged, an
optional memory limit, and auto-remove: the engine deletes it as soon as uv exits, so the
forwarded index credentials do not outlive uv (dockerd also deletes auto-remove containers
left by a crash when it starts again). Each carries the run id, its role and its owner
process as labels; nothing without the `io.depsync.run` label is ever touched.

Signals follow depsync.shell.signals: the run is one deferred block (a signal never cuts a create
or a thread start in half), the waits and the uv download re-open it (`immediate`), and
whatever unwinds the run (an error, a signal, a timeout, the engine going away) removes all
of the run's containers. What a SIGKILLed depsync or a lost engine leaves (containers, work
copies) is removed by the next run.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from depsync.shell import signals
from depsync.errors import DepsyncError
from depsync.core.redact import redact, secret_values
from depsync.shell.runners import LineSink, LockRun, PhaseSink, path_rewriter, write_replacements
from depsync.core.streaming import LineSplitter, Tail
from depsync.shell.runners import read_result
from depsync.core.trust import image_reference_allowed
from depsync.shell.runners import leftovers
from depsync.shell.runners.workset import WorkSet, copy_work_set, first_work_set, settled, work_set

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
REQUEST_TIMEOUT = 30  # s, for one engine request that is not a wait
API_VERSION = (1, 41)  # Docker 20.10 and later, podman 3 and later; older engines are asked for theirs
MIN_API_VERSION = (1, 30)  # wait?condition=removed
_NO_EXECUTABLE = re.compile(r'exec: "uv": |executable file \S* ?not found', re.IGNORECASE)
_VERSION = re.compile(r"^uv (\d+\.\d+\S*)", re.MULTILINE)
_WORK_PREFIX = "depsync-lock-"
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)([kmgt]?)(?:i?b)?\Z", re.IGNORECASE)
_ROOTFUL_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock")


def forwarded_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Proxy and index settings to pass into the container (UV_INDEX_* credentials included)."""
    return {k: v for k, v in environ.items() if k in FORWARDED or k.startswith("UV_INDEX_")}


def host_ca_bundle(environ: Mapping[str, str] | None = None) -> Path | None:
    """The CA bundle the host trusts (SSL_CERT_FILE, pip's `cert`, the system bundle): mounted
    into the container, since a TLS-inspecting proxy's CA is in it on such networks."""
    from depsync.shell.uvwheel import ca_bundle

    return ca_bundle(environ)


def project_cache_volume(project: Path, uid: int | None = None) -> str:
    """The uv cache volume of one project checkout and one caller: `depsync-uv-cache-<uid>-<hash>`.

    One shared writable cache would be a channel between projects: a build backend of one
    project could rewrite a cached package that another project's next lock runs. The key is
    what the operator controls (the checkout's real path and the uid), never a name from the
    repository, which a hostile project could copy."""
    import hashlib

    uid = os.getuid() if uid is None else uid
    digest = hashlib.sha256(os.fsencode(project.resolve())).hexdigest()[:16]
    return f"depsync-uv-cache-{uid}-{digest}"


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


# -- which engine: like the docker CLI, then podman ----------------------------------------------

class Endpoint:
    """Where the engine listens and how it was found. (A plain class: a dataclass costs ~1.5 ms
    to define, on every run.)"""

    __slots__ = ("url", "source", "context", "tls", "tls_verify", "ca", "cert", "key")

    def __init__(
        self, url: str, source: str, context: str | None = None, tls: bool = False, tls_verify: bool = True,
        ca: str | None = None, cert: str | None = None, key: str | None = None,
    ) -> None:
        self.url = url  # unix:///var/run/docker.sock, tcp://host:2376
        self.source = source  # "DOCKER_HOST", "docker context colima", "podman socket", "default socket"
        self.context = context  # the docker context it came from (a docker CLI is given --context)
        self.tls, self.tls_verify, self.ca, self.cert, self.key = tls, tls_verify, ca, cert, key

    def __repr__(self) -> str:
        return f"Endpoint({self.url!r}, {self.source!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Endpoint) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __hash__(self) -> int:
        return hash((self.url, self.source, self.context))

    def describe(self) -> str:
        return f"{redact(self.url)} ({self.source})"

    @property
    def socket_path(self) -> str | None:
        return self.url[len("unix://") :] if self.url.startswith("unix://") else None


def _context_meta(config_dir: Path, name: str) -> Path:
    import hashlib

    return config_dir / "contexts" / "meta" / hashlib.sha256(name.encode()).hexdigest() / "meta.json"


def discover_endpoint(environ: Mapping[str, str] | None = None) -> Endpoint:
    """The engine the docker CLI would use (DOCKER_HOST, else DOCKER_CONTEXT or the config's
    currentContext), else podman's user socket, else the default socket."""
    environ = os.environ if environ is None else environ
    home = Path(environ.get("HOME") or Path.home())
    config_dir = Path(environ.get("DOCKER_CONFIG") or home / ".docker")
    host = environ.get("DOCKER_HOST", "").strip()
    if host:
        tls = bool(environ.get("DOCKER_TLS_VERIFY") or environ.get("DOCKER_TLS"))
        certs = Path(environ.get("DOCKER_CERT_PATH") or config_dir)
        return Endpoint(host, "DOCKER_HOST", None, tls, bool(environ.get("DOCKER_TLS_VERIFY")), *_tls_files(certs))
    name, how = environ.get("DOCKER_CONTEXT", "").strip(), "DOCKER_CONTEXT"
    if not name:
        how = "current context"
        try:
            name = str(json.loads((config_dir / "config.json").read_text()).get("currentContext") or "")
        except (OSError, ValueError, AttributeError):
            name = ""
    if name and name != "default":
        meta = _context_meta(config_dir, name)
        try:
            docker = json.loads(meta.read_text())["Endpoints"]["docker"]
            url = str(docker["Host"])
        except (OSError, ValueError, KeyError, TypeError):
            raise DepsyncError(f"docker context {name!r} ({how}) has no readable endpoint in {meta}; `docker context ls` lists the contexts") from None
        tls_dir = meta.parent.parent.parent / "tls" / meta.parent.name / "docker"
        files = _tls_files(tls_dir)
        skip = bool(docker.get("SkipTLSVerify"))
        return Endpoint(url, f"docker context {name}", name, any(files) or skip, not skip, *files)
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime:
        podman = Path(runtime) / "podman" / "podman.sock"
        if podman.is_socket():
            return Endpoint(f"unix://{podman}", "podman socket")
    return Endpoint("unix:///var/run/docker.sock", "default socket")


def _tls_files(directory: Path) -> tuple[str | None, str | None, str | None]:
    return tuple(str(directory / n) if (directory / n).is_file() else None for n in ("ca.pem", "cert.pem", "key.pem"))  # type: ignore[return-value]


def docker_cli(endpoint: Endpoint, cli: str | None = None) -> tuple[list[str], dict[str, str]] | None:
    """argv prefix and environment that make a docker CLI talk to this endpoint (None: no CLI)."""
    cli = cli or shutil.which("docker")
    if not cli:
        return None
    env = {k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONTEXT")}
    if endpoint.context:
        return [cli, "--context", endpoint.context], env
    env["DOCKER_HOST"] = endpoint.url
    if endpoint.source == "DOCKER_HOST":  # its TLS settings came from the environment: keep them
        env.update({k: v for k, v in os.environ.items() if k.startswith("DOCKER_")})
    return [cli], env


# -- the Engine API, spoken directly --------------------------------------------------------------

class EngineError(Exception):
    """The engine answered, with an error status."""

    def __init__(self, status: int, explanation: str) -> None:
        super().__init__(f"{status}: {explanation}")
        self.status, self.explanation = status, explanation


class EngineLost(Exception):
    """No (complete) answer: refused, reset, closed, or nothing within the timeout."""

    def __init__(self, reason: str, timed_out: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.timed_out = reason, timed_out


class _Cut(Exception):
    """The engine's answer ended early or could not be read."""


def _lost(exc: BaseException) -> EngineLost:
    if isinstance(exc, TimeoutError):
        return EngineLost("no answer in time", True)
    if isinstance(exc, _Cut):
        return EngineLost(str(exc))
    if isinstance(exc, ValueError):
        return EngineLost("an answer that is not HTTP")
    return EngineLost(getattr(exc, "strerror", None) or str(exc) or type(exc).__name__)


class _Connection:
    """One HTTP/1.1 connection to the engine (unix socket, TCP, TLS): a request with a JSON or
    tar body, an answer framed by Content-Length or chunks, or, after an attach, the raw
    stream. http.client would do, at ~15 ms more import time per run."""

    def __init__(self, endpoint: Endpoint, timeout: float | None) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.expired = False  # the overall deadline passed and the socket was shut down
        path = endpoint.socket_path
        if path is not None:
            self.host = "docker"
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout)
                sock.connect(path)
            except BaseException:
                sock.close()
                raise
        else:
            sock = self._tcp(endpoint, timeout)
        self.sock = sock
        self.reader = sock.makefile("rb")

    def _tcp(self, endpoint: Endpoint, timeout: float | None) -> socket.socket:
        from urllib.parse import urlsplit

        scheme = endpoint.url.partition("://")[0]
        if scheme not in ("tcp", "http", "https"):
            raise DepsyncError(
                f"the Docker endpoint {endpoint.describe()} uses {scheme}://, which depsync does not speak; "
                "forward the engine's socket (e.g. `ssh -NL /tmp/docker.sock:/var/run/docker.sock HOST`) and set DOCKER_HOST=unix:///tmp/docker.sock"
            )
        tls = endpoint.tls or scheme == "https"
        try:
            parts = urlsplit(endpoint.url)
            host, port = parts.hostname or "localhost", parts.port or (2376 if tls else 2375)
        except ValueError:
            raise DepsyncError(f"the Docker endpoint {endpoint.describe()} is not a valid URL") from None
        self.host = f"{host}:{port}"
        sock = socket.create_connection((host, port), timeout)
        if not tls:
            return sock
        import ssl

        context = ssl.create_default_context(cafile=endpoint.ca)
        if endpoint.cert and endpoint.key:
            context.load_cert_chain(endpoint.cert, endpoint.key)
        if not endpoint.tls_verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        try:
            return context.wrap_socket(sock, server_hostname=host)
        except BaseException:
            sock.close()
            raise

    def send(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str]) -> None:
        head = [f"{method} {target} HTTP/1.1", f"Host: {self.host}", "User-Agent: depsync", *(f"{k}: {v}" for k, v in headers.items())]
        if body is not None or method in ("POST", "PUT"):
            head.append(f"Content-Length: {len(body or b'')}")
        self.sock.sendall("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + (body or b""))

    def head(self) -> None:
        line = self.reader.readline(65537)
        if not line:
            raise _Cut("the connection closed without an answer")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise _Cut("an answer that is not HTTP")
        self.status = int(parts[1])
        self.headers = {}
        while (field := self.reader.readline(65537)) not in (b"\r\n", b"\n", b""):
            name, _, value = field.decode("latin-1").partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def body(self, method: str) -> tuple[bytes, bool]:
        """The answer's body, and whether the connection can carry another request."""
        if method == "HEAD" or self.status in (204, 304) or self.status < 200:
            return b"", True
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            out = bytearray()
            while True:
                line = self.reader.readline(1024)
                if not line:
                    raise _Cut("the answer was cut off")
                size = int(line.split(b";")[0].strip(), 16)
                if size == 0:
                    while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(out), True
                chunk = self.reader.read(size + 2)
                if len(chunk) < size + 2:
                    raise _Cut("the answer was cut off")
                out += chunk[:size]
        if "content-length" in self.headers:
            size = int(self.headers["content-length"])
            data = self.reader.read(size)
            if len(data) < size:
                raise _Cut("the answer was cut off")
            return data, True
        return self.reader.read(), False

    def deadline(self, seconds: float | None) -> threading.Timer | None:
        """Arm one overall deadline for what follows: the socket timeout bounds each read, but an
        engine that trickles a byte at a time would never hit it. At the deadline the socket is
        shut down (a blocked read returns) and `expired` says why. Cancel the returned timer."""
        if seconds is None:
            return None

        def expire() -> None:
            self.expired = True
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        return timer

    def close(self) -> None:
        """Shut down first: a thread blocked reading this connection returns."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.reader.close()
        except OSError:
            pass
        self.sock.close()


class EngineAPI:
    """The few Engine API calls a run needs; one kept-alive connection for request/answer
    calls, a connection of its own for each stream (attach, wait)."""

    def __init__(self, endpoint: Endpoint, timeout: float = REQUEST_TIMEOUT) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.version = "%d.%d" % API_VERSION
        self._connection: _Connection | None = None
        self._lock = threading.Lock()

    def _open(self, timeout: float | None) -> _Connection:
        try:
            return _Connection(self.endpoint, timeout)
        except OSError as exc:
            raise _lost(exc) from exc

    def _target(self, path: str, params: Mapping[str, Any] | None, versioned: bool) -> str:
        from urllib.parse import urlencode

        query = f"?{urlencode({k: v for k, v in params.items() if v is not None})}" if params else ""
        return (f"/v{self.version}" if versioned else "") + path + query

    @staticmethod
    def _error(status: int, data: bytes) -> EngineError:
        try:
            message = str(json.loads(data).get("message", "")) or data.decode(errors="replace")
        except (ValueError, AttributeError):
            message = data.decode(errors="replace")
        return EngineError(status, " ".join(message.split()) or f"HTTP {status}")

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
        versioned: bool = True,
    ) -> tuple[int, bytes, dict[str, str]]:
        """One request on the kept-alive connection: (status, body, headers). Never retried:
        a create whose answer was lost may still have made a container."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": content_type} if data is not None else {}
        with self._lock:
            for attempt in (1, 2):
                reused, connection = self._connection is not None, self._connection or self._open(self.timeout)
                self._connection = None
                timer = connection.deadline(self.timeout)  # one deadline for the whole answer
                try:
                    connection.send(method, self._target(path, params, versioned), data, headers)
                    connection.head()
                    answer, reusable = connection.body(method)
                    break
                except (OSError, ValueError, _Cut) as exc:
                    connection.close()
                    if connection.expired:
                        raise EngineLost(f"no whole answer to {method} {path} within {self.timeout:.0f}s", timed_out=True) from None
                    # a kept-alive connection the engine closed meanwhile: a read-only request goes again
                    stale = reused and method in ("GET", "HEAD") and (isinstance(exc, (BrokenPipeError, ConnectionResetError)) or str(exc).startswith("the connection closed"))
                    if attempt == 2 or not stale:
                        raise _lost(exc) from exc
                finally:
                    if timer is not None:
                        timer.cancel()
            if connection.expired:
                connection.close()
                raise EngineLost(f"no whole answer to {method} {path} within {self.timeout:.0f}s", timed_out=True)
            if reusable and connection.headers.get("connection", "").lower() != "close":
                self._connection = connection
            else:
                connection.close()
        return connection.status, answer, connection.headers

    def call(self, method: str, path: str, **kwargs: Any) -> bytes:
        status, data, _ = self.request(method, path, **kwargs)
        if status >= 400:
            raise self._error(status, data)
        return data

    def json(self, method: str, path: str, *, shape: type = dict, **kwargs: Any) -> Any:
        """The answer as JSON of the expected shape (an object, or a list of objects); anything
        else is one clear line, never a KeyError deep in a run."""
        data = self.call(method, path, **kwargs)
        try:
            value = json.loads(data) if data.strip() else shape()
        except ValueError:
            raise EngineLost(f"the answer to {method} {path} is not JSON") from None
        if not isinstance(value, shape) or (shape is list and not all(isinstance(v, dict) for v in value)):
            raise EngineLost(f"the answer to {method} {path} is not the JSON {'object' if shape is dict else 'list of objects'} the Engine API gives")
        return value

    def open_stream(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, timeout: float | None, upgrade: bool = False) -> _Connection:
        """A request on a connection of its own, returned once the answer's headers are in: the
        body (a wait's result, an attach's output) is read by the caller, who closes it."""
        connection = self._open(timeout)
        timer = connection.deadline(self.timeout)  # the headers, at least, come at once
        try:
            connection.send(method, self._target(path, params, True), None, {"Connection": "Upgrade", "Upgrade": "tcp"} if upgrade else {})
            connection.head()
        except (OSError, ValueError, _Cut) as exc:
            connection.close()
            if connection.expired:
                raise EngineLost(f"no answer to {method} {path} within {self.timeout:.0f}s", timed_out=True) from None
            raise _lost(exc) from exc
        finally:
            if timer is not None:
                timer.cancel()
        if connection.expired:
            connection.close()
            raise EngineLost(f"no answer to {method} {path} within {self.timeout:.0f}s", timed_out=True)
        if connection.status >= 400:
            try:
                data = connection.body(method)[0]
            except (OSError, ValueError, _Cut):
                data = b""
            connection.close()
            raise self._error(connection.status, data)
        return connection

    def ping(self) -> None:
        """Is the engine there; which API version to speak (the lower of ours and the engine's)."""
        status, data, headers = self.request("GET", "/_ping", versioned=False)
        if status != 200:
            raise self._error(status, data)
        theirs = headers.get("api-version", "")
        if re.fullmatch(r"\d+\.\d+", theirs):
            version = tuple(int(p) for p in theirs.split("."))
            if version < MIN_API_VERSION:
                raise DepsyncError(f"the Docker engine at {self.endpoint.describe()} speaks API {theirs}; depsync needs {'%d.%d' % MIN_API_VERSION} (Docker 17.06 or later)")
            self.version = "%d.%d" % min(version, API_VERSION)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def client(endpoint: Endpoint | None = None) -> EngineAPI:
    """The engine's API once it answered a ping, or a DepsyncError saying what to do."""
    endpoint = endpoint or discover_endpoint()
    api = EngineAPI(endpoint)
    try:
        api.ping()
    except (EngineLost, EngineError) as exc:
        api.close()
        reason = exc.reason if isinstance(exc, EngineLost) else exc.explanation
        raise DepsyncError(
            f"no Docker engine answers at {endpoint.describe()} ({redact(reason)[:200]}): start one "
            "(containers/setup-engine.sh on Debian), set DOCKER_HOST, or use --runner local"
        ) from None
    return api


def engine_available(endpoint: Endpoint | None = None) -> bool:
    try:
        client(endpoint).close()
        return True
    except DepsyncError:
        return False


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="/:@")


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
    return leftovers.start_time(pid)


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
            except (OSError, ValueError, _Cut):
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
    host = _host_identity()
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


def _sweep_work_copies(parent: Path) -> None:
    """Work copies of depsync runs that were SIGKILLed (their names carry pid and start time)."""
    leftovers.sweep(parent, _WORK_PREFIX)


def _work_prefix() -> str:
    return leftovers.owned_prefix(_WORK_PREFIX)


def _memory_tmp(endpoint: Endpoint) -> Path | None:
    """/dev/shm, when the work copy can go there: no TMPDIR chosen, a rootful engine on this
    machine (it sees the host's /dev/shm), a tmpfs with room. Creating files there costs a
    fraction of a journaled disk's (measured: 450 files, 9 ms vs 100-270 ms on this VM's ext4)."""
    path = endpoint.socket_path
    if os.environ.get("TMPDIR") or path is None or os.path.realpath(path) not in _ROOTFUL_SOCKETS:
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


# -- what an image has, remembered per image id -------------------------------------------------

def _memo_path(name: str) -> Path:
    from depsync.shell.uvwheel import cache_dir

    return cache_dir() / name


def _memo_load(name: str) -> dict[str, Any]:
    try:
        data = json.loads(_memo_path(name).read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _memo_store(name: str, key: str, value: Any) -> None:
    """Add one entry; concurrent runs may lose each other's entry (a cache, not a record)."""
    path = _memo_path(name)
    known = _memo_load(name)
    known[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(known))
        os.replace(partial, path)
    except OSError:
        pass


# -- one run: its containers, the step it is at, and how it ends -------------------------------

class _StartFailed(Exception):
    def __init__(self, explanation: str) -> None:
        super().__init__(explanation)
        self.explanation = explanation


class _Timeout(Exception):
    pass


class _Run:
    def __init__(self, engine: EngineAPI, secrets: list[str], memory: str | None) -> None:
        self.engine = engine
        self.secrets = secrets
        self.memory = memory
        self.id = f"{socket.gethostname()}:{os.getpid()}:{os.urandom(4).hex()}"
        self.owner = _owner(_host_identity())
        self.step = "starting"
        self.created: list[str] = []
        self.gone: set[str] = set()  # containers the engine said it removed
        self.creating = False  # a create was sent and its answer is not in: it may exist

    def create(self, image: str, command: list[str], role: str, *, environment: Mapping[str, str] | None = None, mounts: list[dict[str, Any]] | None = None, working_dir: str | None = None) -> str:
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
                reader = threading.Thread(target=_pump, args=(attach.reader, lines, on_line, self.secrets, transform), daemon=True)
                reader.start()
                self.step = f"starting {what}"
                try:
                    engine.call("POST", f"/containers/{container}/start")
                except EngineError as exc:
                    raise _StartFailed(exc.explanation) from None
                self.step = f"waiting for {what}"
                try:
                    with signals.immediate():  # the long wait: a signal cuts it at once
                        body, _ = waiter.body("POST")
                except (OSError, ValueError, _Cut) as exc:
                    if isinstance(exc, TimeoutError):
                        raise _Timeout from None
                    raise _lost(exc) from exc
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


def _cache_mode_archive() -> bytes:
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


def _engine_lost(run: _Run, exc: BaseException) -> str:
    reason = exc.reason if isinstance(exc, EngineLost) else str(exc)
    return (
        f"the Docker engine stopped answering during the run ({run.step}: {redact(reason, run.secrets)[:200]}); "
        "uv.lock is unchanged; start the engine and run again (that run removes what this one left)"
    )


class DockerRunner:
    """`uv lock` in a container of `image`. (A plain class for the same reason as Endpoint.)"""

    name = "docker"

    def __init__(
        self,
        image: str,
        uv_version: str | None = None,  # wanted version; None: the image's uv
        cache_volume: str | None = None,  # None: the project's own (project_cache_volume)
        environ: dict[str, str] | None = None,
        memory: str | None = None,  # a memory limit for every container ("8g"); None: the engine's default
        endpoint: Endpoint | None = None,  # None: discovered from environ like the docker CLI
    ) -> None:
        self.image, self.uv_version, self.cache_volume, self.memory, self.endpoint = image, uv_version, cache_volume, memory, endpoint
        self.environ = dict(os.environ) if environ is None else environ

    def __repr__(self) -> str:
        return f"DockerRunner({self.image!r}, uv_version={self.uv_version!r}, cache_volume={self.cache_volume!r})"

    def lock(
        self,
        project: Path,
        args: list[str],
        timeout: float = 1800,
        on_line: LineSink | None = None,
        replace: Mapping[str, bytes] | None = None,
        on_phase: PhaseSink | None = None,
    ) -> LockRun:
        if not image_reference_allowed(self.image):
            raise DepsyncError(f"{self.image!r} is not an image reference (the OCI grammar: [registry/]name[:tag][@digest]); depsync does not pass it to the engine")
        if self.memory:
            memory_bytes(self.memory)  # a bad size fails before anything starts
        endpoint = self.endpoint or discover_endpoint(self.environ)
        phase = on_phase or (lambda _text: None)
        phase("connecting to the Docker engine")
        engine = client(endpoint)
        secrets = secret_values(self.environ)
        run = _Run(engine, secrets, self.memory)
        holders: list[Path] = []
        project = project.resolve()
        # replaced files are not what the freshness prediction read: the full set
        selection = work_set(project, minimal=False) if replace else first_work_set(project, args)
        # the whole run is deferred: a signal is acted on while waiting for uv, or when the block
        # ends; the containers are removed before the work copy, the work copy before returning
        with signals.deferred():
            try:
                while True:
                    result = self._lock(run, endpoint, holders, project, args, timeout, on_line if not selection.minimal else None, replace, phase, selection)
                    if settled(project, selection, result.returncode, result.new_lock, "--check" in args):
                        if selection.minimal and on_line:  # its log is passed on once it stands (short: uv answered from the lock)
                            for line in result.output.splitlines():
                                on_line(line)
                        return result
                    selection = work_set(project, minimal=False)  # see workset.settled
            except _Timeout:
                raise DepsyncError(f"uv lock did not finish within {timeout:.0f}s; the container was stopped and removed, uv.lock is unchanged") from None
            except EngineError as exc:  # the engine answered, with a refusal
                if not run.engine_answers():
                    raise DepsyncError(_engine_lost(run, exc)) from None
                raise DepsyncError(f"the Docker engine refused {run.step} ({redact(exc.explanation, secrets)[:300]}); uv.lock is unchanged") from None
            except EngineLost as exc:
                raise DepsyncError(_engine_lost(run, exc)) from None
            finally:
                if not run.clean:
                    run.remove_all()
                engine.close()
                for holder in holders:
                    shutil.rmtree(holder, ignore_errors=True)

    def _lock(
        self, run: _Run, endpoint: Endpoint, holders: list[Path], project: Path, args: list[str], timeout: float,
        on_line: LineSink | None, replace: Mapping[str, bytes] | None, phase: PhaseSink, selection: WorkSet,
    ) -> LockRun:
        engine = run.engine
        run.step = "removing what earlier runs left"
        sweep(engine, keep=run.id)
        run.step = "looking up the image"
        image = self._image(run, endpoint, timeout, phase)
        uv_mounts, uv_exe, version, notes = self._uv(run, image, phase)
        run.step = "creating the cache volume"
        volume = self.cache_volume or project_cache_volume(project)
        self._cache(engine, volume)
        environment = {
            "HOME": "/tmp/depsync-home",
            "UV_CACHE_DIR": CACHE_MOUNT,
            "UV_PYTHON_DOWNLOADS": "never",
            "NO_COLOR": "1",
            **forwarded_environment(self.environ),
        }
        mounts: list[dict[str, Any]] = [{"Type": "volume", "Source": volume, "Target": CACHE_MOUNT}, *uv_mounts]
        ca = host_ca_bundle(self.environ)
        if ca is not None:
            mounts.append({"Type": "bind", "Source": str(ca.resolve()), "Target": CA_MOUNT, "ReadOnly": True})
            environment["SSL_CERT_FILE"] = CA_MOUNT
        run.step = "copying the project"
        phase("copying the project")
        copy = self._copy(project, endpoint, holders, selection)
        write_replacements(copy, replace)
        os.chmod(copy, 0o777)  # the container user must be able to write uv.lock there
        mounts.append({"Type": "bind", "Source": str(copy), "Target": WORKDIR})
        phase("starting the container")
        container = run.create(image["Id"], [uv_exe, "lock", *args], "lock", working_dir=WORKDIR, environment=environment, mounts=mounts)
        run.step = "making the cache volume writable"
        if not _writable_by_all(engine, container, CACHE_MOUNT):  # a new volume (or one an earlier attempt failed to fix)
            engine.call("PUT", f"/containers/{container}/archive", params={"path": os.path.dirname(CACHE_MOUNT)}, raw=_cache_mode_archive(), content_type="application/x-tar")
        phase("uv lock")
        rewrite = path_rewriter(WORKDIR, str(project.resolve()))
        try:
            status, lines = run.execute(container, timeout, on_line, "uv", rewrite)
        except _StartFailed as exc:
            raise DepsyncError(f"uv could not start in {self.image} ({redact(exc.explanation, run.secrets)[:300]}); uv.lock is unchanged") from None
        if status != 0 and not run.engine_answers():  # a daemon that shuts down stops uv first
            raise DepsyncError(_engine_lost(run, ConnectionError(f"uv ended with status {status} and the engine no longer answers")))
        new_lock = read_result(copy) if status == 0 and "--check" not in args else None
        return LockRun(status, "\n".join(lines), version, new_lock, notes)

    def _copy(self, project: Path, endpoint: Endpoint, holders: list[Path], selection: WorkSet) -> Path:
        """The work copy: in /dev/shm when it may go there (see _memory_tmp), else in TMPDIR;
        a /dev/shm that fills up is given up for TMPDIR."""
        memory = _memory_tmp(endpoint)
        for parent in ([memory] if memory else []) + [None]:
            _sweep_work_copies(parent or Path(tempfile.gettempdir()))
            holder = Path(tempfile.mkdtemp(prefix=_work_prefix(), dir=parent))
            holders.append(holder)
            try:
                return copy_work_set(project, holder / "project", selection)
            except OSError as exc:
                if parent is None or exc.errno != errno.ENOSPC:
                    raise
                shutil.rmtree(holder, ignore_errors=True)
        raise AssertionError("unreachable")

    def _image(self, run: _Run, endpoint: Endpoint, timeout: float, phase: PhaseSink) -> dict[str, Any]:
        """The image's inspect data (Id, Os, Architecture, Variant), pulling it when the engine
        does not have it."""
        path = f"/images/{_quote(self.image)}/json"
        try:
            return _inspected(run.engine.json("GET", path), path)
        except EngineError as exc:
            if exc.status != 404:
                raise
        run.step = "pulling the image"
        phase(f"pulling {self.image}")
        why = self._pull(run, endpoint, timeout)
        try:
            return _inspected(run.engine.json("GET", path), path)
        except EngineError as exc:
            if exc.status != 404:
                raise
        raise DepsyncError(
            f"image {self.image} is not on this engine and pulling it failed ({redact(why, run.secrets)[:200]}); "
            "build it (--build), load it (docker load), or name another with --image"
        )

    def _pull(self, run: _Run, endpoint: Endpoint, timeout: float) -> str:
        """Pull with the docker CLI (it has the registry credentials and helpers); without a
        CLI, through the API (public images only). Returns the last words of a failure."""
        cli = docker_cli(endpoint)
        if cli is not None:
            import subprocess

            from depsync.shell import process

            argv, env = cli
            try:
                with signals.immediate():
                    result = process.run([*argv, "pull", "--", self.image], env=env, timeout=timeout, text=True)
            except subprocess.TimeoutExpired:
                return f"docker pull did not finish within {timeout:.0f}s"
            lines = (result.stderr or result.stdout or "").strip().splitlines()
            return lines[-1] if result.returncode != 0 and lines else ""
        name, tag = _split_reference(self.image)
        try:
            with signals.immediate():
                status, data, _ = run.engine.request("POST", "/images/create", params={"fromImage": name, "tag": tag})
        except EngineLost as exc:
            return exc.reason
        if status >= 400:
            return EngineAPI._error(status, data).explanation
        errors = [json.loads(line).get("error", "") for line in data.splitlines() if line.strip().startswith(b"{")]
        return next((e for e in errors if e), "")

    def _uv(self, run: _Run, image: dict[str, Any], phase: PhaseSink) -> tuple[list[dict[str, Any]], str, str, tuple[str, ...]]:
        """(extra mounts, uv executable in the container, version used, notes)."""
        facts = self._image_facts(run, image, phase)
        image_uv = str(facts.get("uv", ""))
        if self.uv_version is None or image_uv == self.uv_version:
            if not image_uv:
                raise DepsyncError(f"{self.image} has no uv and no version is pinned (ARG UV_VERSION) to provide one")
            return [], "uv", image_uv, ()
        from depsync.shell.uvwheel import Platform, uv_binary

        platform = Platform(str(image.get("Os") or "linux"), str(image.get("Architecture") or "amd64"), str(image.get("Variant") or ""), str(facts.get("libc", "unknown")))
        run.step = f"providing uv {self.uv_version}"
        with signals.immediate():  # a download can take a while: a signal cuts it (its temp files go)
            binary = uv_binary(self.uv_version, platform, self.environ, phase)
        note = f"{self.image} has uv {image_uv or 'none'}; used uv {self.uv_version} (pinned) from depsync's cache, the build for {platform.describe()}"
        return [{"Type": "bind", "Source": str(binary), "Target": UV_MOUNT, "ReadOnly": True}], UV_MOUNT, self.uv_version, (note,)

    def _image_facts(self, run: _Run, image: dict[str, Any], phase: PhaseSink) -> dict[str, Any]:
        """{"uv": version or "", "libc": "glibc" | "musl" | "unknown"}, remembered per image id."""
        image_id = str(image["Id"])
        known = _memo_load("images.json").get(image_id)
        if isinstance(known, dict) and "uv" in known and "libc" in known:
            return known
        phase(f"probing {self.image} for uv")
        facts, definite = self._probe(run, image)
        if definite:  # a transient answer is not remembered
            _memo_store("images.json", image_id, facts)
        return facts

    def _probe(self, run: _Run, image: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Run `uv --version` in the image; before it starts, look for the C library's loader in
        its file system (musl's /lib/ld-musl-ARCH.so.1, glibc's ld-linux): (facts, definite)."""
        container = run.create(str(image["Id"]), ["uv", "--version"], "probe")
        facts: dict[str, Any] = {"uv": "", "libc": _libc(run.engine, container, image)}
        try:
            status, lines = run.execute(container, PROBE_TIMEOUT, None, "`uv --version`")
        except _StartFailed as exc:
            if _NO_EXECUTABLE.search(exc.explanation):
                return facts, True  # no uv in the image (or none this uid may run): the pinned one is mounted
            raise DepsyncError(f"`uv --version` could not start in {self.image}: {redact(exc.explanation, run.secrets)[:300]}") from None
        except _Timeout:
            raise DepsyncError(f"`uv --version` did not finish within {PROBE_TIMEOUT}s in {self.image}") from None
        match = _VERSION.search("\n".join(lines))  # an entrypoint may print a banner first
        if status == 0 and match:
            facts["uv"] = match.group(1)
            return facts, True
        return facts, status == 127  # 127: an entrypoint script's shell found no uv

    def _cache(self, engine: EngineAPI, volume: str) -> None:
        """The named cache volume, created (labelled) on first use."""
        try:
            engine.call("GET", f"/volumes/{_quote(volume)}")
        except EngineError as exc:
            if exc.status != 404:
                raise
            engine.call("POST", "/volumes/create", body={"Name": volume, "Labels": {ROLE_LABEL: "cache"}})


def _inspected(image: dict[str, Any], path: str) -> dict[str, Any]:
    """An image inspect answer with the one field a run cannot do without."""
    if not isinstance(image.get("Id"), str) or not image["Id"]:
        raise EngineLost(f"the answer to GET {path} has no image id")
    return image


def _writable_by_all(engine: EngineAPI, container: str, path: str) -> bool:
    """Is path in the created container (a volume's root) writable by any uid? The engine's stat
    of it (one cheap HEAD) gives the mode as a Go FileMode: permission bits in the low 9."""
    import base64

    status, _, headers = engine.request("HEAD", f"/containers/{container}/archive", params={"path": path})
    try:
        mode = int(json.loads(base64.b64decode(headers.get("x-docker-container-path-stat", ""))).get("mode", 0))
    except (ValueError, TypeError):
        return False
    return status == 200 and mode & 0o007 == 0o007


def _libc(engine: EngineAPI, container: str, image: dict[str, Any]) -> str:
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


def _split_reference(image: str) -> tuple[str, str]:
    """("repo", "tag or digest") as the pull API wants them."""
    if "@" in image:
        name, _, digest = image.partition("@")
        return name, digest
    name, sep, tag = image.rpartition(":")
    if sep and "/" not in tag:
        return name, tag
    return image, "latest"


__all__ = [
    "DockerRunner",
    "EngineAPI",
    "Endpoint",
    "PIDS_LIMIT",
    "caller_user",
    "client",
    "discover_endpoint",
    "engine_available",
    "forwarded_environment",
    "hardening",
    "host_ca_bundle",
    "project_cache_volume",
    "sweep",
]
