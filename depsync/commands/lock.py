"""`depsync lock`: `uv lock` in the CI image with the image's uv version, written back atomically.

The runner works on a copy; the new uv.lock replaces the old one only when uv
succeeded and the result parses. Timeout, Ctrl-C and SIGTERM leave uv.lock untouched.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from depsync import faults
from depsync.config import Config
from depsync.errors import DepsyncError
from depsync.fileio import Snapshot, confined, output_file, write_atomic, write_report
from depsync.lockdiff import diff_locks
from depsync.model.dockerfile import Dockerfile
from depsync.model.lock import Lock
from depsync.model.pyproject import Pyproject
from depsync.runners import LockRun, Runner
from depsync.untrusted import uv_version_allowed
from depsync.uv import error_summary
from depsync.workspace import FileReader, ci_dockerfile, config_of


@dataclass(frozen=True)
class LockOptions:
    root: Path
    runner: str = "auto"  # auto, docker, local
    image: str | None = None
    build: bool = False
    target: str | None = None
    build_args: dict[str, str] = field(default_factory=dict)
    upgrade: bool = False
    upgrade_packages: tuple[str, ...] = ()
    check: bool = False
    timeout: float = 1800
    summary: Path | None = None
    cache_volume: str = "depsync-uv-cache"
    memory: str | None = None  # docker runner: the container's memory limit (e.g. "8g")


def wanted_uv_version(pyproject: Pyproject, dockerfile: Dockerfile | None) -> str | None:
    """The Dockerfile's pin, else an exact `required-version`."""
    if dockerfile is not None and dockerfile.uv_pins:
        pin = dockerfile.uv_pins[0]
        if not uv_version_allowed(pin.version):  # it names a cache path and a download: never used as given
            raise DepsyncError(f"{pin.how} {pin.version!r} is not a uv release number", f"{dockerfile.path}:{pin.line}")
        return pin.version
    required = str(pyproject.uv.get("required-version", "")).strip()
    exact = required.removeprefix("==")
    if exact and all(part.isdigit() for part in exact.split(".")):
        return exact
    return None


def image_from_dockerfile(root: Path, dockerfile: Dockerfile | None) -> str | None:
    """The base image the CI Dockerfile builds FROM (ARG defaults applied); Megatron-style
    `docker/.ngc_version.dev` beside it overrides the tag source."""
    ngc = root / "docker" / ".ngc_version.dev"
    if ngc.is_file() and ngc.read_text().strip():
        return ngc.read_text().strip().splitlines()[0]
    if dockerfile is None or not dockerfile.from_images:
        return None
    image = dockerfile.from_images[0][0]
    return None if "$" in image else image


def _build(root: Path, dockerfile_path: str, options: LockOptions) -> str:
    from depsync.runners.docker import client

    engine = client()
    tag = f"depsync-lock:{abs(hash((str(root.resolve()), dockerfile_path, options.target))) % 10**10}"
    try:
        engine.images.build(path=str(root), dockerfile=dockerfile_path, target=options.target, buildargs=options.build_args or None, tag=tag, rm=True)
    except Exception as exc:  # docker.errors.BuildError / APIError
        raise DepsyncError(f"building {dockerfile_path} failed: {str(exc)[:300]}") from None
    return tag


def choose_runner(options: LockOptions, config: Config, pyproject: Pyproject, dockerfile: Dockerfile | None, dockerfile_path: str | None) -> tuple[Runner, str]:
    """The runner and a sentence saying why it was chosen."""
    from depsync.runners.local import LocalRunner

    version = wanted_uv_version(pyproject, dockerfile)
    if options.runner == "local":
        return LocalRunner(version), "local runner (--runner local)"
    from depsync.runners.docker import DockerRunner, client, engine_available

    if options.runner == "auto" and not engine_available():
        return LocalRunner(version), "local runner: no Docker engine answers"
    if options.runner == "docker":
        client()  # fail now, with what to do, before anything starts
    image = options.image or config.image
    how = "--image" if options.image else "[tool.depsync] image" if config.image else ""
    if options.build:
        if not dockerfile_path:
            raise DepsyncError("--build needs a Dockerfile ([tool.depsync] dockerfiles)")
        image, how = _build(options.root, dockerfile_path, options), f"built from {dockerfile_path}"
    if not image:
        image, how = image_from_dockerfile(options.root, dockerfile), "the Dockerfile's FROM"
    if not image:
        if options.runner == "docker":
            raise DepsyncError("no image: pass --image, set [tool.depsync] image, or use --build")
        return LocalRunner(version), "local runner: no CI image could be derived"
    return DockerRunner(image, version, options.cache_volume, memory=options.memory), f"docker runner, image {image} ({how})"


def run(options: LockOptions) -> int:
    from depsync.report.lock import LockProgress, print_changes, to_markdown

    root = options.root
    if options.summary:
        output_file(options.summary, "--summary")  # a bad one fails now, not after uv.lock was replaced
    reader = FileReader(root)
    pyproject = Pyproject.from_text(reader.read_text("pyproject.toml") or "")  # required: a missing one is an error
    config = config_of(reader)
    dockerfile, dockerfile_path = ci_dockerfile(reader, config, options.build_args)
    lock_path = confined(root, config.lock, "the lock path")
    old_bytes = lock_path.read_bytes() if lock_path.is_file() else None
    runner, why = choose_runner(options, config, pyproject, dockerfile, dockerfile_path)
    args = (["--upgrade"] if options.upgrade else []) + [a for p in options.upgrade_packages for a in ("--upgrade-package", p)] + (["--check"] if options.check else [])

    progress = LockProgress(sys.stderr, why)
    started = time.monotonic()
    with progress:
        result: LockRun = runner.lock(root, args, options.timeout, progress.line)
    elapsed = time.monotonic() - started
    for note in result.notes:
        print(f"depsync: {note}", file=sys.stderr)
    print(f"depsync: uv {result.uv_version} via {why}, {elapsed:.1f}s", file=sys.stderr)

    if options.check:
        if result.returncode == 0:
            print("uv.lock is fresh", file=sys.stderr)
            return 0
        if result.returncode == 1:
            print("uv.lock needs to be updated: run `depsync lock`", file=sys.stderr)
            return 1
    if result.returncode != 0 or result.new_lock is None:
        raise DepsyncError(f"uv {result.uv_version} lock failed; uv.lock is unchanged: {error_summary(result.output, 800)}")
    new_lock = Lock.from_text(result.new_lock.decode(), config.lock)  # only a lock that parses replaces the old one
    empty = Lock.from_text("version = 1\n", config.lock)
    changes = diff_locks(Lock.from_text(old_bytes.decode(), config.lock) if old_bytes else empty, new_lock)
    snapshot = Snapshot(root, [config.lock])
    try:
        faults.point("lock:after-uv")
        if result.new_lock != old_bytes:
            write_atomic(lock_path, result.new_lock)
        if options.summary:
            write_report(options.summary, to_markdown(changes, result.uv_version, why))
    except BaseException:
        snapshot.restore()  # all or nothing: no new lock without the summary the caller asked for
        raise
    print_changes(changes, sys.stdout, written=result.new_lock != old_bytes)
    return 0
