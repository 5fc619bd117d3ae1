"""The docker runner: `uv lock` inside the CI image, through the docker SDK.

Lifecycle of one run: ping the engine -> find the image -> settle the uv version (the
image's when it matches, else an exact binary from depsync's cache, mounted read-only)
-> copy the project -> create the container (caller's uid:gid, writable HOME, named
cache volume, CA bundle and proxy/index settings forwarded, nothing else mounted, never
privileged) -> stream its log -> wait with a timeout -> always remove the container.
"""

from __future__ import annotations

import contextlib
import os
import signal
import ssl
import tempfile
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from depsync.errors import DepsyncError
from depsync.redact import redact, secret_values
from depsync.runners import LineSink, LockRun, copy_project, write_replacements

WORKDIR = "/workspace"
CACHE_MOUNT = "/uv-cache"
CA_MOUNT = "/etc/depsync/ca-bundle.pem"
UV_MOUNT = "/opt/depsync/bin/uv"
LABEL = "io.depsync.run"
FORWARDED = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX")


class _Interrupts:
    """SIGINT/SIGTERM during a run: unwind like Ctrl-C so the container is removed.

    A signal is only acted on at safe points (never inside thread start-up or an engine
    call that creates resources); while waiting for uv it interrupts at once.
    """

    def __init__(self) -> None:
        self.requested = False
        self.waiting = False
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested = True
        if self.waiting:
            raise KeyboardInterrupt

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        if self.requested and exc[0] is None:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def immediate(self) -> Iterator[None]:
        if self.requested:
            raise KeyboardInterrupt
        self.waiting = True
        try:
            yield
        finally:
            self.waiting = False


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


@dataclass
class DockerRunner:
    image: str
    uv_version: str | None = None  # wanted version; None: the image's uv
    cache_volume: str = "depsync-uv-cache"
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    name: str = "docker"

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

    def _run_short(self, engine: Any, command: list[str], **kwargs: Any) -> str:
        container = engine.containers.create(self.image, command, labels={LABEL: "probe"}, **kwargs)
        try:
            container.start()
            result = container.wait(timeout=120)
            logs = container.logs().decode(errors="replace")
            if result.get("StatusCode") != 0:
                raise DepsyncError(f"`{' '.join(command)}` failed in {self.image}: {redact(logs.strip())[-300:]}")
            return logs
        finally:
            container.remove(force=True)

    def _uv(self, engine: Any, image_id: str) -> tuple[dict[str, dict[str, str]], str, str, tuple[str, ...]]:
        """(extra volumes, uv executable in the container, version used, notes)."""
        image_uv = self._image_uv(engine, image_id)
        if self.uv_version is None or image_uv == self.uv_version:
            if not image_uv:
                raise DepsyncError(f"{self.image} has no uv and no version is pinned (ARG UV_VERSION) to provide one")
            return {}, "uv", image_uv, ()
        from depsync.uv import uv_binary

        binary = uv_binary(self.uv_version)
        note = f"{self.image} has uv {image_uv or 'none'}; used uv {self.uv_version} (pinned) from depsync's cache"
        return {str(binary): {"bind": UV_MOUNT, "mode": "ro"}}, UV_MOUNT, self.uv_version, (note,)

    def _image_uv(self, engine: Any, image_id: str) -> str:
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
        try:
            version = self._run_short(engine, ["uv", "--version"]).split()[1]
        except (DepsyncError, IndexError):
            version = ""
        known[image_id] = version
        try:
            memo.parent.mkdir(parents=True, exist_ok=True)
            memo.write_text(json.dumps(known))
        except OSError:
            pass  # a cache, not a requirement
        return version

    def _prepare_cache(self, engine: Any) -> None:
        """Create the cache volume once, writable by any uid (the run is not root)."""
        from docker.errors import NotFound

        try:
            engine.volumes.get(self.cache_volume)
            return
        except NotFound:
            engine.volumes.create(self.cache_volume, labels={LABEL: "cache"})
        self._run_short(engine, ["chmod", "1777", CACHE_MOUNT], user="0:0", volumes={self.cache_volume: {"bind": CACHE_MOUNT, "mode": "rw"}})

    def lock(self, project: Path, args: list[str], timeout: float = 1800, on_line: LineSink | None = None, replace: Mapping[str, bytes] | None = None) -> LockRun:
        engine = client()
        uv_volumes, uv_exe, version, notes = self._uv(engine, self._image(engine))
        self._prepare_cache(engine)
        secrets = secret_values(self.environ)
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
        with tempfile.TemporaryDirectory(prefix="depsync-lock-") as tmp:
            copy = copy_project(project.resolve(), Path(tmp) / "project")
            write_replacements(copy, replace)
            os.chmod(copy, 0o777)  # the container user must be able to write uv.lock there
            volumes[str(copy)] = {"bind": WORKDIR, "mode": "rw"}
            container = engine.containers.create(
                self.image,
                [uv_exe, "lock", *args],
                working_dir=WORKDIR,
                user=f"{os.getuid()}:{os.getgid()}",
                environment=environment,
                volumes=volumes,
                labels={LABEL: "lock"},
                privileged=False,
                detach=True,
            )
            lines: list[str] = []
            with _Interrupts() as interrupts:
                try:
                    container.start()
                    reader = threading.Thread(target=_pump, args=(container, lines, on_line, secrets), daemon=True)
                    reader.start()
                    with interrupts.immediate():
                        status = _wait(container, timeout)
                    reader.join(timeout=5)
                finally:
                    container.remove(force=True)
            lock_file = copy / "uv.lock"
            new_lock = lock_file.read_bytes() if status == 0 and "--check" not in args and lock_file.is_file() else None
            return LockRun(status, "\n".join(lines), version, new_lock, notes)


def _pump(container: Any, lines: list[str], on_line: LineSink | None, secrets: list[str]) -> None:
    buffer = b""
    try:
        for chunk in container.logs(stream=True, follow=True):
            buffer += chunk
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                line = redact(raw.decode(errors="replace").rstrip("\r"), secrets)
                lines.append(line)
                if on_line:
                    on_line(line)
    except Exception:  # the container was removed under us (timeout, Ctrl-C): stop reading
        return
    if buffer.strip():
        lines.append(redact(buffer.decode(errors="replace"), secrets))


def _wait(container: Any, timeout: float) -> int:
    import requests

    try:
        result = container.wait(timeout=timeout)
    except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
        container.kill()
        raise DepsyncError(f"uv lock did not finish within {timeout:.0f}s; the container was stopped and removed, uv.lock is unchanged") from None
    return int(result.get("StatusCode", 1))


__all__ = ["DockerRunner", "engine_available", "forwarded_environment", "host_ca_bundle"]
