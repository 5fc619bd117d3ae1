"""The docker runner: `uv lock` inside the CI image, through the Docker Engine API.

Lifecycle of one run (one `lock()` call, one run id): find the engine (DOCKER_HOST, the
current docker context, podman's socket, the default socket) and ping it -> remove what
earlier runs left, and this machine's cache volumes of checkouts that no longer exist
(volumes.py) -> inspect the image (pulled with the docker CLI when missing) -> settle the uv
version (the image's when it matches the pin, else the exact pinned binary for the image's
platform from depsync's cache, mounted read-only) -> copy the project -> create the container
-> make the cache volume's root writable when it is not yet (a new volume) -> attach to its
output and ask for its exit status -> start -> wait with a timeout. What an image has (its uv,
its C library) is remembered per image id, so a warm run makes no container but the lock
container and about as many engine requests as `docker run --rm`.

The engine is spoken to directly (HTTP/1.1 over its socket, a small client below): the docker
SDK costs ~80-115 ms to import, more than half of a warm run's overhead. (It is still used
for one thing: a `--build` on a machine without any docker CLI, depsync/runners/choose.py.)

Every container (the uv probe and the lock) is made by `ContainerRun.create`, hardened the same way:
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
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from depsync.core.redact import redact, secret_values
from depsync.core.trust import image_reference_allowed
from depsync.errors import DepsyncError
from depsync.report import ui
from depsync.shell import signals
from depsync.shell.runners.containers import (
    CA_MOUNT,
    CACHE_MOUNT,
    UV_MOUNT,
    WORKDIR,
    ContainerRun,
    RunTimeout,
    StartFailed,
    cache_mode_archive,
    engine_lost_message,
    memory_bytes,
    memory_tmp,
    sweep,
    sweep_work_copies,
    work_prefix,
)
from depsync.shell.runners.endpoint import Endpoint, discover_endpoint, docker_cli
from depsync.shell.runners.engine import (
    EngineAPI,
    EngineError,
    EngineLost,
    client,
    quote_segment,
)
from depsync.shell.runners.images import (
    image_libc,
    memo_load,
    memo_store,
    split_reference,
    writable_by_all,
)
from depsync.shell.runners.protocol import LineSink, LockRun, PhaseSink
from depsync.shell.runners.volumes import (
    create_cache_volume,
    project_cache,
    project_cache_volume,
    prune_cache_volumes,
    pruned_note,
)
from depsync.shell.runners.workcopy import (
    path_rewriter,
    read_result,
    version_environment,
    write_replacements,
)
from depsync.shell.runners.workset import (
    WorkSet,
    copy_work_set,
    lock_on_work_sets,
)

FORWARDED = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX")


PROBE_TIMEOUT = 120  # s, for `uv --version`


_NO_EXECUTABLE = re.compile(r'exec: "uv": |executable file \S* ?not found', re.IGNORECASE)


_VERSION = re.compile(r"^uv (\d+\.\d+\S*)", re.MULTILINE)


def forwarded_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Proxy and index settings to pass into the container (UV_INDEX_* credentials included)."""
    return {k: v for k, v in environ.items() if k in FORWARDED or k.startswith("UV_INDEX_")}


def host_ca_bundle(environ: Mapping[str, str] | None = None) -> Path | None:
    """The CA bundle the host trusts (SSL_CERT_FILE, pip's `cert`, the system bundle): mounted
    into the container, since a TLS-inspecting proxy's CA is in it on such networks."""
    from depsync.shell.uvwheel import ca_bundle

    return ca_bundle(environ)


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
        say: Callable[[str], None] | None = None,  # depsync's own one-line notes (None: ui.note); none with -q
    ) -> None:
        self.image, self.uv_version, self.cache_volume, self.memory, self.endpoint = image, uv_version, cache_volume, memory, endpoint
        self.say = say
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
        run = ContainerRun(engine, secrets, self.memory)
        holders: list[Path] = []
        project = project.resolve()
        # the whole run is deferred: a signal is acted on while waiting for uv, or when the block
        # ends; the containers are removed before the work copy, the work copy before returning
        with signals.deferred():
            try:
                return lock_on_work_sets(
                    project, args, replace, on_line,
                    lambda selection, lines: self._lock(run, endpoint, holders, project, args, timeout, lines, replace, phase, selection),
                )
            except RunTimeout:
                raise DepsyncError(f"uv lock did not finish within {timeout:.0f}s; the container was stopped and removed, uv.lock is unchanged") from None
            except EngineError as exc:  # the engine answered, with a refusal
                if not run.engine_answers():
                    raise DepsyncError(engine_lost_message(run, exc)) from None
                raise DepsyncError(f"the Docker engine refused {run.step} ({redact(exc.explanation, secrets)[:300]}); uv.lock is unchanged") from None
            except EngineLost as exc:
                raise DepsyncError(engine_lost_message(run, exc)) from None
            finally:
                if not run.clean:
                    run.remove_all()
                engine.close()
                for holder in holders:
                    shutil.rmtree(holder, ignore_errors=True)

    def _lock(
        self, run: ContainerRun, endpoint: Endpoint, holders: list[Path], project: Path, args: list[str], timeout: float,
        on_line: LineSink | None, replace: Mapping[str, bytes] | None, phase: PhaseSink, selection: WorkSet,
    ) -> LockRun:
        engine = run.engine
        run.step = "removing what earlier runs left"
        sweep(engine, keep=run.id)
        run.step = "removing cache volumes of checkouts that no longer exist"
        owner: dict[str, str] | None = None  # the operator's --cache-volume: used as it is
        if self.cache_volume:
            volume = self.cache_volume
        else:
            owned = project_cache(project)
            volume, owner = owned.name, owned.labels
        self._note(pruned_note(*prune_cache_volumes(engine, keep={volume})))
        run.step = "looking up the image"
        image = self._image(run, endpoint, timeout, phase)
        uv_mounts, uv_exe, version, notes = self._uv(run, image, phase)
        run.step = "creating the cache volume"
        self._note(create_cache_volume(engine, volume, owner))
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
        extra, note = version_environment(copy, self.environ)
        environment.update(extra)
        notes = (*notes, note) if note else notes
        os.chmod(copy, 0o777)  # the container user must be able to write uv.lock there
        mounts.append({"Type": "bind", "Source": str(copy), "Target": WORKDIR})
        phase("starting the container")
        container = run.create(image["Id"], [uv_exe, "lock", *args], "lock", working_dir=WORKDIR, environment=environment, mounts=mounts)
        run.step = "making the cache volume writable"
        if not writable_by_all(engine, container, CACHE_MOUNT):  # a new volume (or one an earlier attempt failed to fix)
            engine.call("PUT", f"/containers/{container}/archive", params={"path": os.path.dirname(CACHE_MOUNT)}, raw=cache_mode_archive(), content_type="application/x-tar")
        phase("uv lock")
        rewrite = path_rewriter(WORKDIR, str(project.resolve()))
        try:
            status, lines = run.execute(container, timeout, on_line, "uv", rewrite)
        except StartFailed as exc:
            raise DepsyncError(f"uv could not start in {self.image} ({redact(exc.explanation, run.secrets)[:300]}); uv.lock is unchanged") from None
        if status != 0 and not run.engine_answers():  # a daemon that shuts down stops uv first
            raise DepsyncError(engine_lost_message(run, ConnectionError(f"uv ended with status {status} and the engine no longer answers")))
        new_lock = read_result(copy) if status == 0 and "--check" not in args else None
        return LockRun(status, "\n".join(lines), version, new_lock, notes)

    def _copy(self, project: Path, endpoint: Endpoint, holders: list[Path], selection: WorkSet) -> Path:
        """The work copy: in /dev/shm when it may go there (see memory_tmp), else in TMPDIR;
        a /dev/shm that fills up is given up for TMPDIR."""
        memory = memory_tmp(endpoint)
        for parent in ([memory] if memory else []) + [None]:
            sweep_work_copies(parent or Path(tempfile.gettempdir()))
            holder = Path(tempfile.mkdtemp(prefix=work_prefix(), dir=parent))
            holders.append(holder)
            try:
                return copy_work_set(project, holder / "project", selection)
            except OSError as exc:
                if parent is None or exc.errno != errno.ENOSPC:
                    raise
                shutil.rmtree(holder, ignore_errors=True)
        raise AssertionError("unreachable")

    def _image(self, run: ContainerRun, endpoint: Endpoint, timeout: float, phase: PhaseSink) -> dict[str, Any]:
        """The image's inspect data (Id, Os, Architecture, Variant), pulling it when the engine
        does not have it."""
        path = f"/images/{quote_segment(self.image)}/json"
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

    def _pull(self, run: ContainerRun, endpoint: Endpoint, timeout: float) -> str:
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
        name, tag = split_reference(self.image)
        try:
            with signals.immediate():
                status, data, _ = run.engine.request("POST", "/images/create", params={"fromImage": name, "tag": tag})
        except EngineLost as exc:
            return exc.reason
        if status >= 400:
            return EngineAPI._error(status, data).explanation
        errors = [json.loads(line).get("error", "") for line in data.splitlines() if line.strip().startswith(b"{")]
        return next((e for e in errors if e), "")

    def _uv(self, run: ContainerRun, image: dict[str, Any], phase: PhaseSink) -> tuple[list[dict[str, Any]], str, str, tuple[str, ...]]:
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

    def _image_facts(self, run: ContainerRun, image: dict[str, Any], phase: PhaseSink) -> dict[str, Any]:
        """{"uv": version or "", "libc": "glibc" | "musl" | "unknown"}, remembered per image id."""
        image_id = str(image["Id"])
        known = memo_load("images.json").get(image_id)
        if isinstance(known, dict) and "uv" in known and "libc" in known:
            return known
        phase(f"probing {self.image} for uv")
        facts, definite = self._probe(run, image)
        if definite:  # a transient answer is not remembered
            memo_store("images.json", image_id, facts)
        return facts

    def _probe(self, run: ContainerRun, image: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Run `uv --version` in the image; before it starts, look for the C library's loader in
        its file system (musl's /lib/ld-musl-ARCH.so.1, glibc's ld-linux): (facts, definite)."""
        container = run.create(str(image["Id"]), ["uv", "--version"], "probe")
        facts: dict[str, Any] = {"uv": "", "libc": image_libc(run.engine, container, image)}
        try:
            status, lines = run.execute(container, PROBE_TIMEOUT, None, "`uv --version`")
        except StartFailed as exc:
            if _NO_EXECUTABLE.search(exc.explanation):
                return facts, True  # no uv in the image (or none this uid may run): the pinned one is mounted
            raise DepsyncError(f"`uv --version` could not start in {self.image}: {redact(exc.explanation, run.secrets)[:300]}") from None
        except RunTimeout:
            raise DepsyncError(f"`uv --version` did not finish within {PROBE_TIMEOUT}s in {self.image}") from None
        match = _VERSION.search("\n".join(lines))  # an entrypoint may print a banner first
        if status == 0 and match:
            facts["uv"] = match.group(1)
            return facts, True
        return facts, status == 127  # 127: an entrypoint script's shell found no uv

    def _note(self, text: str | None) -> None:
        if text and not ui.quiet():
            (self.say or ui.note)(text)


def _inspected(image: dict[str, Any], path: str) -> dict[str, Any]:
    """An image inspect answer with the one field a run cannot do without."""
    if not isinstance(image.get("Id"), str) or not image["Id"]:
        raise EngineLost(f"the answer to GET {path} has no image id")
    return image


