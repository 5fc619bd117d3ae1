"""The Engine API, spoken directly over the engine's socket (HTTP/1.1), with one deadline per request."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Mapping
from typing import Any

from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.shell.runners.endpoint import Endpoint, discover_endpoint
from depsync.threads import start_timer

REQUEST_TIMEOUT = 30  # s, for one engine request that is not a wait


API_VERSION = (1, 41)  # Docker 20.10 and later, podman 3 and later; older engines are asked for theirs


MIN_API_VERSION = (1, 30)  # wait?condition=removed


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


# the largest answer read into memory: an image list or inspect of a real engine is a few MiB;
# images and archives stream elsewhere, never through body()
MAX_ANSWER_BYTES = 64 * 1024 * 1024


class ResponseCut(Exception):
    """The engine's answer ended early or could not be read."""


def as_engine_lost(exc: BaseException) -> EngineLost:
    if isinstance(exc, TimeoutError):
        return EngineLost("no answer in time", True)
    if isinstance(exc, ResponseCut):
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
            raise ResponseCut("the connection closed without an answer")
        parts = line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ResponseCut("an answer that is not HTTP")
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
                    raise ResponseCut("the answer was cut off")
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise ResponseCut("a chunk size that is not a number") from None
                if size < 0 or len(out) + size > MAX_ANSWER_BYTES:
                    raise ResponseCut(f"an answer over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
                if size == 0:
                    while self.reader.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return bytes(out), True
                chunk = self.reader.read(size + 2)
                if len(chunk) < size + 2:
                    raise ResponseCut("the answer was cut off")
                out += chunk[:size]
        if "content-length" in self.headers:
            try:
                size = int(self.headers["content-length"])
            except ValueError:
                raise ResponseCut("a Content-Length that is not a number") from None
            if size < 0 or size > MAX_ANSWER_BYTES:
                raise ResponseCut(f"an answer over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
            data = self.reader.read(size)
            if len(data) < size:
                raise ResponseCut("the answer was cut off")
            return data, True
        data = self.reader.read(MAX_ANSWER_BYTES + 1)
        if len(data) > MAX_ANSWER_BYTES:
            raise ResponseCut(f"an answer over {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
        return data, False

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

        return start_timer(seconds, expire)

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


def _fail_if_expired(connection: _Connection, message: str) -> None:
    """The request's deadline passed while the answer was read: the connection is useless."""
    if connection.expired:
        connection.close()
        raise EngineLost(message, timed_out=True)


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
            raise as_engine_lost(exc) from exc

    def _target(self, path: str, params: Mapping[str, Any] | None, versioned: bool) -> str:
        from urllib.parse import urlencode

        query = f"?{urlencode({k: v for k, v in params.items() if v is not None})}" if params else ""
        return (f"/v{self.version}" if versioned else "") + path + query

    @staticmethod
    def _error(status: int, data: bytes) -> EngineError:
        try:
            message = str(json.loads(data).get("message", "")) or data.decode(errors="replace")
        except (ValueError, AttributeError, RecursionError):
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
                except (OSError, ValueError, ResponseCut) as exc:
                    connection.close()
                    if connection.expired:
                        raise EngineLost(f"no whole answer to {method} {path} within {self.timeout:.0f}s", timed_out=True) from None
                    # a kept-alive connection the engine closed meanwhile: a read-only request goes again
                    stale = reused and method in ("GET", "HEAD") and (isinstance(exc, (BrokenPipeError, ConnectionResetError)) or str(exc).startswith("the connection closed"))
                    if attempt == 2 or not stale:
                        raise as_engine_lost(exc) from exc
                finally:
                    if timer is not None:
                        timer.cancel()
            _fail_if_expired(connection, f"no whole answer to {method} {path} within {self.timeout:.0f}s")
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
        except (ValueError, RecursionError):  # RecursionError: nested deeper than any Engine API answer
            raise EngineLost(f"the answer to {method} {path} is not JSON depsync reads") from None
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
        except (OSError, ValueError, ResponseCut) as exc:
            connection.close()
            if connection.expired:
                raise EngineLost(f"no answer to {method} {path} within {self.timeout:.0f}s", timed_out=True) from None
            raise as_engine_lost(exc) from exc
        finally:
            if timer is not None:
                timer.cancel()
        _fail_if_expired(connection, f"no answer to {method} {path} within {self.timeout:.0f}s")
        if connection.status >= 400:
            try:
                data = connection.body(method)[0]
            except (OSError, ValueError, ResponseCut):
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


def quote_segment(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="/:@")
