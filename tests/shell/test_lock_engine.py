"""Which Docker engine depsync talks to: like the docker CLI (DOCKER_HOST, then DOCKER_CONTEXT or
the config's current context), then podman's user socket, then the default socket; and it
says which, in one line.

The engine is always the real one of this machine. A context or a podman socket that points
somewhere else cannot exist here, so the endpoints under test are paths of a fake HOME and
XDG_RUNTIME_DIR, symlinked to the real engine's socket: what is tested is that depsync finds
and uses that path (a path that leads nowhere fails, with the path named).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import IMAGE, indexed_project

ENGINE_SOCKET = "/var/run/docker.sock"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = indexed_project(tmp_path / "proj", '"alpha>=1.0"')
    return root


def fake_home(tmp_path: Path, contexts: dict[str, str], current: str | None) -> Path:
    """A HOME whose ~/.docker has these contexts (name -> endpoint) and currentContext, laid out
    as `docker context create` does: contexts/meta/<sha256 of the name>/meta.json."""
    home = tmp_path / "home"
    docker = home / ".docker"
    docker.mkdir(parents=True)
    for name, host in contexts.items():
        meta = docker / "contexts" / "meta" / hashlib.sha256(name.encode()).hexdigest()
        meta.mkdir(parents=True)
        (meta / "meta.json").write_text(json.dumps({"Name": name, "Metadata": {}, "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": False}}}))
    (docker / "config.json").write_text(json.dumps({"currentContext": current} if current else {}))
    return home


@pytest.fixture
def socket_link():  # type: ignore[no-untyped-def]
    """Makes paths to the real engine's socket (under /tmp: a unix socket path must stay short)."""
    import shutil
    import tempfile

    made: list[Path] = []

    def make(name: str) -> Path:
        where = Path(tempfile.mkdtemp(prefix="dse", dir="/tmp"))
        made.append(where)
        link = where / name
        link.symlink_to(ENGINE_SOCKET)
        return link

    yield make
    for where in made:
        shutil.rmtree(where, ignore_errors=True)


def env_without_engine_settings(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_CONFIG", "XDG_RUNTIME_DIR")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return {**env, **extra}


def lock(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", "--image", IMAGE, *args], capture_output=True, text=True, env=env, timeout=300)


def engine_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("depsync: Docker engine ")]
    assert len(lines) == 1, stderr
    return lines[0]


# -- the rules, as pure lookups -------------------------------------------------------------------

def test_discovery_order(tmp_path: Path) -> None:
    from depsync.shell.runners.endpoint import discover_endpoint

    home = fake_home(tmp_path, {"colima": "unix:///somewhere/colima.sock", "other": "tcp://10.0.0.2:2375"}, "colima")
    runtime = tmp_path / "run"
    (runtime / "podman").mkdir(parents=True)
    import socket

    podman = socket.socket(socket.AF_UNIX)
    podman.bind(str(runtime / "podman" / "podman.sock"))  # a socket file: only its existence counts here
    try:
        base = {"HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
        first = discover_endpoint({**base, "DOCKER_HOST": "unix:///x.sock", "DOCKER_CONTEXT": "other"})
        assert (first.url, first.source) == ("unix:///x.sock", "DOCKER_HOST")
        second = discover_endpoint({**base, "DOCKER_CONTEXT": "other"})
        assert (second.url, second.source, second.context) == ("tcp://10.0.0.2:2375", "docker context other", "other")
        third = discover_endpoint(base)
        assert (third.url, third.source) == ("unix:///somewhere/colima.sock", "docker context colima")
        (home / ".docker" / "config.json").write_text("{}")
        fourth = discover_endpoint(base)
        assert (fourth.url, fourth.source) == (f"unix://{runtime}/podman/podman.sock", "podman socket")
        fifth = discover_endpoint({"HOME": str(home)})
        assert (fifth.url, fifth.source) == ("unix:///var/run/docker.sock", "default socket")
        explicit_default = discover_endpoint({"HOME": str(home), "DOCKER_CONTEXT": "default"})
        assert explicit_default.source == "default socket"
    finally:
        podman.close()


def test_a_context_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    from depsync.errors import DepsyncError
    from depsync.shell.runners.endpoint import discover_endpoint

    home = fake_home(tmp_path, {}, "gone")
    with pytest.raises(DepsyncError, match=r"docker context 'gone' \(current context\) has no readable endpoint"):
        discover_endpoint({"HOME": str(home)})


# -- against the real engine ----------------------------------------------------------------------

@pytest.mark.docker
def test_the_current_context_is_used_and_named(engine, project: Path, tmp_path: Path, socket_link) -> None:  # type: ignore[no-untyped-def]
    link = socket_link("ctx.sock")
    home = fake_home(tmp_path, {"ctx-test": f"unix://{link}"}, "ctx-test")
    result = lock(project, env_without_engine_settings(HOME=str(home)))
    assert result.returncode == 0, result.stderr
    assert engine_line(result.stderr) == f"depsync: Docker engine unix://{link} (docker context ctx-test)"
    assert (project / "uv.lock").is_file()


@pytest.mark.docker
def test_docker_host_wins_over_the_context(engine, project: Path, tmp_path: Path, socket_link) -> None:  # type: ignore[no-untyped-def]
    dead = tmp_path / "nothing-listens.sock"  # the context leads nowhere: only DOCKER_HOST can make this run work
    home = fake_home(tmp_path, {"ctx-test": f"unix://{dead}"}, "ctx-test")
    link = socket_link("host.sock")
    result = lock(project, env_without_engine_settings(HOME=str(home), DOCKER_HOST=f"unix://{link}"))
    assert result.returncode == 0, result.stderr
    assert engine_line(result.stderr) == f"depsync: Docker engine unix://{link} (DOCKER_HOST)"

    without = lock(project, env_without_engine_settings(HOME=str(home)))  # and the context is really read
    assert without.returncode == 2
    error = without.stderr.strip().splitlines()[-1]
    assert error.startswith(f"depsync: error: no Docker engine answers at unix://{dead} (docker context ctx-test)"), without.stderr
    assert len(without.stderr.strip().splitlines()) == 1


@pytest.mark.docker
def test_podmans_socket_comes_after_the_context(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No podman here: its user socket path is a symlink to the real engine (see the module doc)."""
    runtime = tmp_path / "xdg-runtime"
    (runtime / "podman").mkdir(parents=True)
    (runtime / "podman" / "podman.sock").symlink_to(ENGINE_SOCKET)
    home = fake_home(tmp_path, {}, None)
    result = lock(project, env_without_engine_settings(HOME=str(home), XDG_RUNTIME_DIR=str(runtime)))
    assert result.returncode == 0, result.stderr
    assert engine_line(result.stderr) == f"depsync: Docker engine unix://{runtime}/podman/podman.sock (podman socket)"


@pytest.mark.docker
def test_build_uses_the_same_engine_through_the_context(engine, project: Path, tmp_path: Path, socket_link) -> None:  # type: ignore[no-untyped-def]
    """--build runs the docker CLI with `--context NAME`: it reads the same fake HOME and builds on
    the engine depsync found there."""
    link = socket_link("ctxb.sock")
    home = fake_home(tmp_path, {"ctx-build": f"unix://{link}"}, "ctx-build")
    (project / "docker").mkdir()
    (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {IMAGE}\nENV DEPSYNC_CONTEXT_BUILD=1\n")
    with (project / "pyproject.toml").open("a") as file:  # it runs no uv: named, not discovered
        file.write('\n[tool.depsync]\ndockerfiles = ["docker/Dockerfile.ci.dev"]\n')
    result = subprocess.run(
        [sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", "--build"],
        capture_output=True, text=True, env=env_without_engine_settings(HOME=str(home)), timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert engine_line(result.stderr) == f"depsync: Docker engine unix://{link} (docker context ctx-build)"
    assert "built from docker/Dockerfile.ci.dev" in result.stderr
    import re

    tag = re.search(r"image (depsync-lock:[0-9a-f]{12})", result.stderr)
    assert tag, result.stderr
    engine.images.remove(tag.group(1))


class TcpToEngine:
    """A TCP port forwarding to the real engine's unix socket: the engine over tcp:// (plain
    HTTP), as a remote engine without TLS is reached. Only the transport is made up here."""

    def __init__(self) -> None:
        import socket
        import threading

        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(ENGINE_SOCKET)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source, sink) -> None:  # type: ignore[no-untyped-def]
        try:
            while data := source.recv(65536):
                sink.sendall(data)
            sink.shutdown(2)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()


@pytest.mark.docker
def test_a_tcp_endpoint(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    forward = TcpToEngine()
    try:
        result = lock(project, env_without_engine_settings(DOCKER_HOST=f"tcp://127.0.0.1:{forward.port}"))
    finally:
        forward.close()
    assert result.returncode == 0, result.stderr
    assert engine_line(result.stderr) == f"depsync: Docker engine tcp://127.0.0.1:{forward.port} (DOCKER_HOST)"
    assert forward.connections >= 3  # the requests, the attach stream, the wait
    assert (project / "uv.lock").is_file()


def test_an_ssh_endpoint_is_one_line_with_the_way_out(project: Path, tmp_path: Path) -> None:
    result = lock(project, env_without_engine_settings(DOCKER_HOST="ssh://someone@build-host"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "uses ssh://, which depsync does not speak" in lines[0] and "DOCKER_HOST=unix://" in lines[0], result.stderr
