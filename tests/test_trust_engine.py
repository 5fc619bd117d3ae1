"""an engine that trickles or answers in the wrong shape is one clear line.

The engine here is a fake (a unix socket speaking just enough HTTP), because a real Docker
engine cannot be made to trickle its headers or answer `/containers/json` with an object:
this is the one thing the real engine cannot stand in for. Everything else is depsync's
own client, over a real socket.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from depsync.errors import DepsyncError
from depsync.shell.runners.docker import DockerRunner
from depsync.shell.runners.endpoint import Endpoint
from depsync.shell.runners.engine import EngineAPI, EngineLost

PING = b"HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK"


def respond(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


class FakeEngine:
    """Answers each request with answer(path) (bytes, or a callable that writes to the socket)."""

    def __init__(self, path: Path, answer: Callable[[str], bytes | Callable[[socket.socket], None]]) -> None:
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        self.answer = answer
        self.endpoint = Endpoint(f"unix://{path}", "test")
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                path = line.split()[1].decode()
                length = 0
                while (field := reader.readline()) not in (b"\r\n", b""):
                    if field.lower().startswith(b"content-length:"):
                        length = int(field.split(b":")[1])
                reader.read(length)
                answer = self.answer(path.split("?")[0])
                if callable(answer):
                    answer(conn)
                    return
                conn.sendall(answer)
        except OSError:
            return
        finally:
            conn.close()

    def close(self) -> None:
        self.server.close()


def trickle(conn: socket.socket) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for _ in range(600):  # a header byte every 0.2 s: each read succeeds, the answer never ends
        conn.sendall(b"X")
        time.sleep(0.2)


def test_a_trickling_engine_hits_one_overall_deadline(tmp_path: Path) -> None:
    engine = FakeEngine(tmp_path / "engine.sock", lambda path: trickle)
    try:
        api = EngineAPI(engine.endpoint, timeout=2)
        started = time.monotonic()
        with pytest.raises(EngineLost) as caught:
            api.ping()
        assert caught.value.timed_out and "within 2s" in caught.value.reason
        assert time.monotonic() - started < 30  # a hang guard, not a timing: it used to never return
    finally:
        engine.close()


@pytest.mark.parametrize("containers", [b'{"not": "a list"}', b"[1, 2]", b'[{"Id": "../../../images/x", "State": "exited"}]'])
def test_a_wrongly_shaped_answer_is_one_clear_line(tmp_path: Path, containers: bytes) -> None:
    def answer(path: str) -> bytes:
        if path == "/_ping":
            return PING
        if path.endswith("/containers/json"):
            return respond(containers)
        if path.startswith("/v1.41/images/"):
            return respond(b'["an image is an object"]')
        return respond(b"{}")

    engine = FakeEngine(tmp_path / "engine.sock", answer)
    try:
        with pytest.raises(DepsyncError) as caught:
            DockerRunner("depsync-test:bookworm", endpoint=engine.endpoint).lock(tmp_path, [], 30)
        message = str(caught.value)
        assert "uv.lock is unchanged" in message and "\n" not in message
        assert "is not the JSON" in message or "no image id" in message
    finally:
        engine.close()


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n",  # a chunk of 2**76 bytes
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999\r\n\r\n{}",
        respond(b"[" * 100_000 + b"]" * 100_000),  # JSON nested past the interpreter's recursion limit
    ],
)
def test_a_hostile_engine_answer_is_one_clear_line(tmp_path: Path, answer: bytes) -> None:
    """A huge chunk size, a Content-Length past any real answer, JSON nested past the
    interpreter's limit: one line (the engine is lost), never MemoryError or RecursionError."""

    def reply(path: str) -> bytes:
        return PING if path == "/_ping" else answer

    engine = FakeEngine(tmp_path / "engine.sock", reply)
    try:
        api = EngineAPI(engine.endpoint, timeout=5)
        with pytest.raises(EngineLost) as caught:
            api.json("GET", "/containers/json", shape=list)
        assert "\n" not in caught.value.reason
    finally:
        engine.close()
