"""The docker runner's containers against a real engine: hardening, labels, cleanup, engine loss, signals.

Every container depsync makes (the uv probe and the lock) runs as the caller's uid:gid with no
capabilities, no-new-privileges, a pids limit, never privileged, auto-removed, labelled with
its run. These tests look at what the engine really applied and what uv really sees, kill
depsync (SIGKILL, SIGTERM, SIGHUP) and take the engine away from it mid-run (a unix-socket
proxy to the real engine that is closed, so the shared engine itself stays up), then check
that nothing is left: no container, no secret in `docker inspect`, no work copy, uv.lock as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import IMAGE, indexed_project
from support import labelled_containers

RUN = "io.depsync.run"
ROLE = "io.depsync.role"
OWNER = "io.depsync.owner"
INTROSPECT_IMAGE = "depsync-test:introspect-uv"
NO_UV_IMAGE = "depsync-test:no-uv"
PASSWORD = "plantedIndexPassword789"

pytestmark = pytest.mark.docker


# -- helpers -----------------------------------------------------------------------------------

@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose index (a flat wheel directory) lives inside it: only the project is mounted."""
    return indexed_project(tmp_path / "proj")


@pytest.fixture
def locked(project: Path) -> Path:
    """The project with a lock from the host's uv (the one a failed or interrupted run must leave alone)."""
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "local"], capture_output=True, text=True, env=with_venv_path(dict(os.environ)), timeout=120)
    assert result.returncode == 0, result.stderr
    return project


@pytest.fixture
def private_tmp(tmp_path: Path) -> Path:
    """TMPDIR for a depsync process: its `depsync-lock-*` work copy must be gone when it ends."""
    path = tmp_path / "tmpdir"
    path.mkdir()
    return path


def with_venv_path(env: dict[str, str]) -> dict[str, str]:
    """The venv's bin first on PATH: the local runner looks for `uv` there, however pytest was started."""
    return dict(env, PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")


def depsync_env(private_tmp: Path, **extra: str) -> dict[str, str]:
    return with_venv_path(dict(os.environ, TMPDIR=str(private_tmp), **extra))


def all_labelled(engine) -> list:  # type: ignore[no-untyped-def]
    return labelled_containers(engine, RUN)


def of_process(engine, pid: int) -> list:  # type: ignore[no-untyped-def]
    """The containers of the depsync process pid (the run id is <hostname>:<pid>:<hex>)."""
    return [c for c in all_labelled(engine) if c.labels.get(RUN, "").split(":")[-2:-1] == [str(pid)]]


def running_lock(engine, pid: int, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        found = [c for c in of_process(engine, pid) if c.labels.get(ROLE) == "lock" and c.status == "running"]
        if found:
            return found[0]
        assert time.monotonic() < deadline, "the lock container never started"
        time.sleep(0.1)


def docker_ps_labelled(pids: set[int]) -> str:
    """`docker ps -aq` of the depsync containers whose run belongs to one of these processes (the
    engine is shared: other developers' runs are not this test's business)."""
    listing = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", f"label={RUN}", "--format", '{{.ID}} {{.Label "io.depsync.run"}}'], capture_output=True, text=True, check=True).stdout
    host = socket.gethostname()
    mine = []
    for line in listing.splitlines():
        container, _, run = line.partition(" ")
        parts = run.split(":")
        if len(parts) == 3 and parts[0] == host and parts[1].isdigit() and int(parts[1]) in pids:
            mine.append(container[:12])
    return "\n".join(mine)


def lock_cli(project: Path, image: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", "--image", image], capture_output=True, text=True, env=env, timeout=300)


def build(engine, tag: str, dockerfile: str, files: dict[str, str] | None = None) -> str:  # type: ignore[no-untyped-def]
    context = Path(tempfile.mkdtemp(prefix="depsync-image-"))
    try:
        (context / "Dockerfile").write_text(dockerfile)
        for name, text in (files or {}).items():
            (context / name).write_text(text)
        engine.images.build(path=str(context), tag=tag, rm=True)
    finally:
        shutil.rmtree(context)
    return tag


@pytest.fixture(scope="module")
def introspect_image(engine) -> str:  # type: ignore[no-untyped-def]
    """The test image with a uv that reports, before locking, what the container allows it."""
    wrapper = (
        "#!/bin/sh\n"
        'if [ "$1" = lock ]; then\n'
        '  echo "seen: uid=$(id -u)" >&2; echo "seen: gid=$(id -g)" >&2\n'
        "  grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status | sed 's/^/seen: /' >&2\n"
        '  echo "seen: pids.max=$(cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max)" >&2\n'
        '  echo "seen: memory=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)" >&2\n'
        '  echo "seen: cache=$(stat -c %a /uv-cache)" >&2\n'
        "fi\n"
        'exec /usr/local/bin/uv.real "$@"\n'
    )
    dockerfile = f"FROM {IMAGE}\nRUN mv /usr/local/bin/uv /usr/local/bin/uv.real\nCOPY uv /usr/local/bin/uv\nRUN chmod 755 /usr/local/bin/uv\n"
    return build(engine, INTROSPECT_IMAGE, dockerfile, {"uv": wrapper})


@pytest.fixture(scope="module")
def no_uv_image(engine) -> str:  # type: ignore[no-untyped-def]
    return build(engine, NO_UV_IMAGE, f"FROM {IMAGE}\nRUN rm -f /usr/local/bin/uv\n")


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty depsync cache for an in-process run: the image's uv is probed, not remembered."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache


@pytest.fixture(autouse=True)
def spawned(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    """This process and every process a test starts (their runs' containers are the test's)."""
    pids = {os.getpid()}
    original = subprocess.Popen.__init__

    def record(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        original(self, *args, **kwargs)
        pids.add(self.pid)

    monkeypatch.setattr(subprocess.Popen, "__init__", record)
    return pids


@pytest.fixture(autouse=True)
def nothing_left_behind(engine, spawned: set[int]):  # type: ignore[no-untyped-def]
    yield
    assert docker_ps_labelled(spawned) == ""


# -- what every container gets --------------------------------------------------------------------

def test_every_container_is_hardened(engine, introspect_image: str, project: Path, fresh_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The probe and the lock container, as the engine has them right after create, and as uv sees it."""
    from depsync.shell.runners import docker as docker_runner
    from depsync.shell.runners.containers import PIDS_LIMIT
    from depsync.shell.runners.docker import DockerRunner

    seen: list[dict] = []
    original = docker_runner.ContainerRun.create

    def spy(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        container = original(self, *args, **kwargs)
        seen.append(engine.api.inspect_container(container))  # the engine's view, before start
        return container

    monkeypatch.setattr(docker_runner.ContainerRun, "create", spy)
    result = DockerRunner(introspect_image, memory="1g").lock(project, [], 300)
    assert result.returncode == 0, result.output
    assert result.new_lock is not None

    assert [attrs["Config"]["Labels"][ROLE] for attrs in seen] == ["probe", "lock"]
    assert len({attrs["Config"]["Labels"][RUN] for attrs in seen}) == 1  # one run id for the whole run
    for attrs in seen:
        host = attrs["HostConfig"]
        labels = attrs["Config"]["Labels"]
        assert attrs["Config"]["User"] == f"{os.getuid()}:{os.getgid()}"
        assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert host["SecurityOpt"] == ["no-new-privileges"]
        assert host["PidsLimit"] == PIDS_LIMIT
        assert host["Privileged"] is False
        assert host["AutoRemove"] is True
        assert host["Memory"] == 1024**3
        assert labels[RUN].split(":")[1] == str(os.getpid())
        assert labels[OWNER].split("/")[2] == str(os.getpid())

    reported = dict(line.removeprefix("seen: ").replace(":\t", "=").split("=", 1) for line in result.output.splitlines() if line.startswith("seen: "))
    assert reported["uid"] == str(os.getuid()) and reported["gid"] == str(os.getgid())
    assert int(reported["CapEff"], 16) == 0 and int(reported["CapPrm"], 16) == 0 and int(reported["CapBnd"], 16) == 0
    assert reported["NoNewPrivs"] == "1"
    assert reported["pids.max"] == str(PIDS_LIMIT)
    assert reported["memory"] == str(1024**3)
    assert reported["cache"] == "1777"
    assert of_process(engine, os.getpid()) == []


def test_a_non_root_caller_locks_with_a_fresh_cache_volume(engine, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The volume's root is made 1777 by put_archive (the engine extracts it, no root container);
    uid 65534 without capabilities can then write its cache there, and lock."""
    from depsync.shell.runners import docker as docker_runner

    volume = f"depsync-test-cache-{uuid.uuid4().hex[:8]}"
    mount = {volume: {"bind": "/c", "mode": "rw"}}

    def root_of_volume() -> str:
        return engine.containers.run(IMAGE, ["stat", "-c", "%a %u", "/c"], volumes=mount, remove=True).decode().strip()

    engine.volumes.create(volume)
    try:
        assert root_of_volume() == "755 0"  # as the engine makes it: only root could write
        from depsync.shell.runners import containers

        monkeypatch.setattr(containers, "caller_user", lambda: "65534:65534")  # hardening() asks it
        runner = docker_runner.DockerRunner(IMAGE, cache_volume=volume)
        first = runner.lock(project, [], 300)
        assert first.returncode == 0, first.output
        assert first.new_lock is not None and first.new_lock.startswith(b"version = 1\n")
        assert root_of_volume() == "1777 0"
        owners = engine.containers.run(IMAGE, ["sh", "-c", "find /c -mindepth 1 -maxdepth 1 -printf '%U\\n' | sort -u"], volumes=mount, remove=True).decode().split()
        assert owners == ["65534"]  # uv wrote its cache as the caller
        second = runner.lock(project, ["--upgrade"], 300)  # warm: the same volume again
        assert second.returncode == 0, second.output
    finally:
        engine.volumes.get(volume).remove(force=True)


# -- the probe ----------------------------------------------------------------------------------

def test_an_image_without_uv_is_no_uv_not_an_error(engine, no_uv_image: str, project: Path, fresh_cache: Path) -> None:  # type: ignore[no-untyped-def]
    """`uv` missing from the image: the probe says "no uv" (the engine's exec error is caught)."""
    from depsync.errors import DepsyncError
    from depsync.shell.runners.docker import DockerRunner

    with pytest.raises(DepsyncError, match="has no uv and no version is pinned"):
        DockerRunner(no_uv_image).lock(project, [], 300)
    image_id = engine.images.get(no_uv_image).id
    # the image's facts, remembered per image id: no uv; glibc (its /lib64/ld-linux-x86-64.so.2)
    assert json.loads((fresh_cache / "depsync" / "images.json").read_text()) == {image_id: {"uv": "", "libc": "glibc"}}

    pinned = fresh_cache / "depsync" / "uv" / "0.13.9" / "x86_64-glibc" / "uv"  # the test extra's uv, put where a download would go
    pinned.parent.mkdir(parents=True)
    shutil.copy2(shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv", pinned)
    result = DockerRunner(no_uv_image, uv_version="0.13.9").lock(project, [], 300)
    assert result.returncode == 0, result.output
    assert result.uv_version == "0.13.9" and result.new_lock is not None
    assert result.notes == (f"{no_uv_image} has uv none; used uv 0.13.9 (pinned) from depsync's cache, the build for linux/amd64 with glibc",)


# -- cleanup: a normal run, a killed depsync, leftovers of earlier runs -------------------------------

def test_a_normal_run_leaves_no_container(engine, project: Path, private_tmp: Path, spawned: set[int]) -> None:  # type: ignore[no-untyped-def]
    result = lock_cli(project, IMAGE, depsync_env(private_tmp))
    assert result.returncode == 0, result.stderr
    assert docker_ps_labelled(spawned) == ""
    assert list(private_tmp.iterdir()) == []


def test_the_run_after_a_sigkilled_one_removes_its_container_and_secret(engine, slow_image: str, locked: Path, private_tmp: Path) -> None:  # type: ignore[no-untyped-def]
    """SIGKILL: no cleanup runs in depsync. The container (uv still running, the index password in
    its environment) and the work copy are removed by the next run, which sees that their owner
    process is gone."""
    env = depsync_env(private_tmp, UV_INDEX_PRIVATE_PASSWORD=PASSWORD, UV_INDEX_PRIVATE_USERNAME="someone")
    process = subprocess.Popen([sys.executable, "-m", "depsync", "lock", str(locked), "--runner", "docker", "--image", slow_image], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    container = running_lock(engine, process.pid)
    assert f"UV_INDEX_PRIVATE_PASSWORD={PASSWORD}" in container.attrs["Config"]["Env"]  # planted, and there while uv runs
    process.kill()
    process.wait(timeout=30)
    container.reload()
    assert container.status == "running"  # nothing in depsync ran: the engine still has it

    after = lock_cli(locked, IMAGE, depsync_env(private_tmp))
    assert after.returncode == 0, after.stderr
    from docker.errors import NotFound

    with pytest.raises(NotFound):
        engine.containers.get(container.id)
    assert all(PASSWORD not in json.dumps(c.attrs) for c in all_labelled(engine))
    assert list(private_tmp.iterdir()) == []  # the killed run's work copy (its name carries pid and start time) went too


def test_leftovers_of_earlier_runs_go_and_everything_else_stays(engine) -> None:  # type: ignore[no-untyped-def]
    """At the start of a run: containers that ended, and running ones whose depsync is gone, are removed;
    running ones of a live or unknown owner, and any container without the label, are not touched."""
    from depsync.shell.runners.containers import (
        host_identity,
        process_start_time,
        sweep,
    )
    from depsync.shell.runners.engine import client

    host = host_identity()
    assert host is not None
    gone = subprocess.Popen(["true"])
    gone_owner = f"{host}/{gone.pid}/{process_start_time(gone.pid)}"
    gone.wait()
    me = f"{host}/{os.getpid()}/{process_start_time(os.getpid())}"

    def make(name: str, labels: dict[str, str], command: list[str]):  # type: ignore[no-untyped-def]
        container = engine.containers.create(IMAGE, command, labels=labels, environment={"UV_INDEX_X_PASSWORD": PASSWORD}, name=f"depsync-test-{name}-{uuid.uuid4().hex[:6]}")
        container.start()
        if command == ["true"]:
            container.wait(timeout=60)
        return container

    made = {
        "exited, no owner": make("exited", {RUN: "elsewhere:1:0000aaaa", ROLE: "lock"}, ["true"]),
        "running, owner gone": make("orphan", {RUN: f"here:{gone.pid}:0000bbbb", ROLE: "lock", OWNER: gone_owner}, ["sleep", "300"]),
        "running, owner unknown": make("foreign", {RUN: "elsewhere:2:0000cccc", ROLE: "lock"}, ["sleep", "300"]),
        "running, owner alive": make("live", {RUN: f"here:{os.getpid()}:0000dddd", ROLE: "lock", OWNER: me}, ["sleep", "300"]),
        "exited, no label": make("unlabelled", {"io.example": "x"}, ["true"]),
    }
    try:
        api = client()
        try:
            removed = set(sweep(api))
        finally:
            api.close()
        # another depsync run on this shared engine may sweep first: what counts is what is left
        assert {what for what, c in made.items() if c.id in removed} <= {"exited, no owner", "running, owner gone"}
        names = {c.id for c in engine.containers.list(all=True)}
        assert {what for what, c in made.items() if c.id in names} == {"running, owner unknown", "running, owner alive", "exited, no label"}
    finally:
        for container in made.values():
            try:
                container.remove(force=True)
            except Exception:
                pass


# -- the engine goes away mid-run ---------------------------------------------------------------

class EngineProxy:
    """A unix socket forwarding to the real engine, that can go away like an engine does.

    With cut_on, the first request containing those bytes is forwarded, its answer (and every
    later one) is lost, and the socket closes a second later: the engine did the work, depsync
    never hears back.
    """

    def __init__(self, path: Path, cut_on: bytes | None = None, target: str = "/var/run/docker.sock") -> None:
        self.path, self.cut_on, self.target = path, cut_on, target
        self.cut = threading.Event()
        self.closed = threading.Event()
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(self.target)
            with self.lock:
                self.sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        tail = b""
        try:
            while data := source.recv(65536):
                if not requests and self.cut.is_set():
                    continue  # the answer is lost
                sink.sendall(data)
                if requests and self.cut_on and not self.cut.is_set() and self.cut_on in tail + data:
                    self.cut.set()
                    threading.Timer(1.0, self.close).start()
                tail = data[-64:]
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
        self.path.unlink(missing_ok=True)
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()


@pytest.mark.parametrize(
    "cut_on",
    [b'"io.depsync.role": "lock"', b"HEAD /v", b"PUT /v", None],
    ids=["answer-to-create-lost", "during-the-cache-stat", "during-put-archive", "while-waiting-for-uv"],
)
def test_engine_lost_mid_run(engine, slow_image: str, locked: Path, private_tmp: Path, cut_on: bytes | None) -> None:  # type: ignore[no-untyped-def]
    before = (locked / "uv.lock").read_bytes()
    where = Path(tempfile.mkdtemp(prefix="dsx", dir="/tmp"))  # a unix socket path must stay short
    proxy = EngineProxy(where / "engine.sock", cut_on)
    volume = f"depsync-test-cache-{uuid.uuid4().hex[:8]}"  # new: its root is made writable (the PUT) in this run
    try:
        env = depsync_env(private_tmp, DOCKER_HOST=f"unix://{where}/engine.sock", UV_INDEX_PRIVATE_PASSWORD=PASSWORD, UV_INDEX_PRIVATE_USERNAME="someone")
        process = subprocess.Popen(
            [sys.executable, "-m", "depsync", "lock", str(locked), "--runner", "docker", "--image", slow_image, "--cache-volume", volume],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        if cut_on is None:
            running_lock(engine, process.pid)
            proxy.close()
        _, stderr = process.communicate(timeout=120)
    finally:
        proxy.close()
        shutil.rmtree(where, ignore_errors=True)
    assert process.returncode == 2, stderr
    lines = stderr.strip().splitlines()
    assert lines[-1].startswith("depsync: error: the Docker engine stopped answering during the run ("), stderr
    assert "uv.lock is unchanged; start the engine and run again" in lines[-1]
    assert "Traceback" not in stderr and PASSWORD not in stderr
    assert (locked / "uv.lock").read_bytes() == before
    assert list(private_tmp.iterdir()) == []

    left = of_process(engine, process.pid)  # what the real engine still has of that run: its lock container
    assert [c.labels[ROLE] for c in left] == ["lock"]
    assert left[0].status == ("running" if cut_on is None else "created")
    after = lock_cli(locked, IMAGE, depsync_env(private_tmp))  # "once the engine answers again"
    assert after.returncode == 0, after.stderr
    assert of_process(engine, process.pid) == []
    subprocess.run(["docker", "volume", "rm", "-f", volume], capture_output=True)


# -- signals ------------------------------------------------------------------------------------

DRIVER = """
import sys
from pathlib import Path

from depsync.shell import signals
from depsync.errors import DepsyncError

signals.install()  # what the CLI does at start
try:
    from depsync.commands.lock import run
    from depsync.shell.runners.request import LockRequest

    print("ready", flush=True)
    code = run(LockRequest(root=Path(sys.argv[1]), runner="docker", image=sys.argv[2]))
except signals.Interrupted as exc:
    print(f"depsync: interrupted ({exc})", file=sys.stderr)
    code = exc.exit_code
except DepsyncError as exc:
    print(f"depsync: error: {exc}", file=sys.stderr)
    code = 2
raise SystemExit(code)
"""


def drive(project: Path, image: str, private_tmp: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", DRIVER, str(project), image], env=depsync_env(private_tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_signal_while_waiting_for_uv(engine, slow_image: str, locked: Path, private_tmp: Path, signum: int) -> None:  # type: ignore[no-untyped-def]
    before = (locked / "uv.lock").read_bytes()
    process = drive(locked, slow_image, private_tmp)
    running_lock(engine, process.pid)
    started = time.monotonic()
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert time.monotonic() - started < 15  # the wait was cut, not sat out
    assert process.returncode == 128 + signum, stderr
    assert f"interrupted ({signal.Signals(signum).name})" in stderr and "Traceback" not in stderr
    assert of_process(engine, process.pid) == []
    assert (locked / "uv.lock").read_bytes() == before
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("delay", [0.0, 0.15, 0.3, 0.5, 0.8])
def test_signal_at_any_point_of_the_run(engine, slow_image: str, locked: Path, private_tmp: Path, delay: float) -> None:  # type: ignore[no-untyped-def]
    """SIGTERM at some point between start-up and the wait (image lookup, create, put_archive,
    start): acted on at the next safe point, and the run leaves nothing."""
    before = (locked / "uv.lock").read_bytes()
    process = drive(locked, slow_image, private_tmp)
    time.sleep(delay)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    assert of_process(engine, process.pid) == []
    assert (locked / "uv.lock").read_bytes() == before
    assert list(private_tmp.iterdir()) == []
