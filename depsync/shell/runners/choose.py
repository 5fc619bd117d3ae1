"""Which runner locks, in which image, with which uv; and `--build`, through BuildKit when there is one.

`--build` runs the docker CLI (argument lists only; every value from a Dockerfile or config is
one `--name=value` word or follows `--`, so none can become an option). The builder, best first:

1. `docker buildx build --load`: BuildKit with the frontend the Dockerfile asks for.
2. `DOCKER_BUILDKIT=1 docker build` with a classic CLI (before Docker 23, no buildx needed):
   the engine's built-in BuildKit. Its Dockerfile frontend is the engine's: Docker 20.10's
   has `RUN --mount` but no heredocs; a `# syntax=` line makes BuildKit fetch the named
   frontend from its registry instead.
3. The legacy builder (`DOCKER_BUILDKIT=0 docker build`, or the docker SDK without a CLI):
   no heredocs, no `RUN --mount`, no `# syntax=`.

Every `docker` on PATH is considered (a machine may have a new CLI without buildx before an
old one that still drives the engine's BuildKit). What the chosen builder cannot build is
found before it starts, with BuildKit's own parser, and refused with one line naming the
feature and the way out: build the image in CI and pass it with --image.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.core.redact import redact
from depsync.core.trust import uv_version_allowed
from depsync.errors import DepsyncError
from depsync.report import ui
from depsync.shell import process, signals
from depsync.shell.runners.protocol import LineSink, PhaseSink, Runner
from depsync.shell.runners.request import LockRequest
from depsync.shell.workspace import FileReader

if TYPE_CHECKING:
    from depsync.core.config import Config
    from depsync.core.model.dockerfile import Dockerfile
    from depsync.core.model.pyproject import Pyproject
    from depsync.shell.runners.endpoint import Endpoint
    from depsync.shell.workspace import FileReader

_TARGET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
_ARG_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_DIRECTIVE = re.compile(r"^#\s*([A-Za-z][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*\Z")
_CLI_VERSION = re.compile(r"version (\d+)\.(\d+)")
_ENGINE_VERSION = re.compile(r"^(\d+)\.(\d+)")
_ERROR_LINE = re.compile(r"error|failed|denied|not found|unknown", re.IGNORECASE)
CLASSIC_CLI_UNTIL = 23  # a docker CLI before 23 drives the engine's BuildKit itself; later ones need buildx


def wanted_uv_version(pyproject: Pyproject, dockerfile: Dockerfile | None) -> str | None:
    """The Dockerfile's pin, else an exact `required-version`."""
    if dockerfile is not None and dockerfile.uv_pins:
        pin = dockerfile.uv_pins[0]
        if not uv_version_allowed(pin.version):  # it names a cache path and a download: never used as given
            raise DepsyncError(f"{pin.how} {pin.version!r} is not a uv release number", f"{dockerfile.path}:{pin.line}")
        return pin.version
    from depsync.core.rules.uv_version import exact_required_version

    return exact_required_version(pyproject.uv.get("required-version"))


# files that name the relock image besides the Dockerfile: the image receives the forwarded
# proxy and index credentials and writes the lock, so reconcile reads them from dev's commit
IMAGE_HINTS = ("docker/.ngc_version.dev",)


def image_from_dockerfile(hints: FileReader, dockerfile: Dockerfile | None) -> str | None:
    """The base image the CI Dockerfile builds FROM (ARG defaults applied); Megatron-style
    `docker/.ngc_version.dev` beside it overrides the tag source. `hints` reads the hint files:
    the work tree for `depsync lock`, dev's commit for reconcile (confined like every read)."""
    for path in IMAGE_HINTS:
        text = (hints.read_bytes(path) or b"").decode(errors="replace").strip()
        if text:
            return text.splitlines()[0].strip()
    if dockerfile is None or not dockerfile.from_images:
        return None
    image = dockerfile.from_images[0][0]
    return None if "$" in image else image


def _say(text: str) -> None:
    ui.note(text)


def choose_runner(
    options: LockRequest,
    config: Config,
    pyproject: Pyproject,
    dockerfile: Dockerfile | None,
    dockerfile_path: str | None,
    *,
    on_line: LineSink | None = None,
    on_phase: PhaseSink | None = None,
    say: Callable[[str], None] | None = None,
    hints: FileReader | None = None,
) -> tuple[Runner, str]:
    """The runner and a sentence saying why it was chosen. The Docker endpoint it uses is said
    in one line (`say`, stderr by default)."""
    say = say or _say
    version = wanted_uv_version(pyproject, dockerfile)
    if options.runner == "local":
        return _local(version), "local runner (--runner local)"
    from depsync.shell.runners.docker import DockerRunner
    from depsync.shell.runners.endpoint import discover_endpoint
    from depsync.shell.runners.engine import client

    if on_phase:
        on_phase("looking for the Docker engine")
    try:
        endpoint = discover_endpoint()
        client(endpoint).close()  # fail now, in one line saying what to do, before anything is printed or started
    except DepsyncError as exc:
        if options.runner == "docker":
            raise
        return _local(version), f"local runner: {str(exc).split(': start one')[0].split(';')[0]}"
    image = options.image or config.image
    how = "--image" if options.image else "[tool.depsync] image" if config.image else ""
    if options.build and not dockerfile_path:
        raise DepsyncError("--build needs a CI Dockerfile: none of the project's Dockerfiles runs uv on it; name the one to build in [tool.depsync] dockerfiles")
    if not image and not options.build:
        image, how = image_from_dockerfile(hints or FileReader(options.root), dockerfile), "the Dockerfile's FROM"
        if not image:
            if options.runner == "docker":
                raise DepsyncError("no image: pass --image, set [tool.depsync] image, or use --build")
            return _local(version), "local runner: no CI image could be derived"
    say(f"Docker engine {endpoint.describe()}")
    if options.build:
        assert dockerfile_path is not None
        spec = next((d for d in config.dockerfiles if d.path == dockerfile_path), None)
        build_args = {**(spec.build_args if spec else {}), **options.build_args}
        image, how = build_image(options, dockerfile_path, endpoint, build_args, on_line, on_phase), f"built from {dockerfile_path}"
    assert image is not None  # --image, config, the Dockerfile's FROM or the build: checked above
    return DockerRunner(image, version, options.cache_volume, memory=options.memory, endpoint=endpoint, say=say), f"docker runner, image {image} ({how})"


def runner_for(request: LockRequest, config: Config, reader: FileReader, **sinks: object) -> tuple[Runner, str]:
    """choose_runner for the pyproject and CI Dockerfile `reader` sees (a commit or the work
    tree): the one relock path of reconcile and the merge driver, so both honour the pin."""
    from depsync.core.dockerfile_discovery import refuse_unparsed
    from depsync.core.model.pyproject import Pyproject
    from depsync.shell.ci_dockerfiles import ci_dockerfiles

    pyproject = Pyproject.from_text(reader.read_text(config.pyproject) or "", config.pyproject)
    ci = ci_dockerfiles(reader, config, request.build_args)  # the set `check` checks: configured, else discovered
    refuse_unparsed(ci)
    dockerfile = ci.for_lock()
    path = dockerfile.path if dockerfile else None
    # image hints come from the same reader (dev's commit for reconcile), never the merged tree
    return choose_runner(request, config, pyproject, dockerfile, path, hints=reader, **sinks)  # type: ignore[arg-type]


def _local(version: str | None) -> Runner:
    from depsync.shell.runners.local import LocalRunner

    return LocalRunner(version)


# -- what a Dockerfile needs of its builder ----------------------------------------------------

class Feature:
    """A Dockerfile feature only BuildKit builds. (Plain classes here: this module is imported on
    every `depsync lock`, and a dataclass costs ~1.5 ms to define.)"""

    __slots__ = ("what", "line", "builtin_since")

    def __init__(self, what: str, line: int, builtin_since: int | None) -> None:
        self.what = what  # "a heredoc (`RUN <<EOF`)"
        self.line = line
        self.builtin_since = builtin_since  # the first Docker major whose built-in BuildKit frontend parses it; None: none does


def _directives(text: str) -> dict[str, tuple[str, int]]:
    """Parser directives (`# syntax=...`, `# escape=...`): only at the very top, as BuildKit reads them."""
    found: dict[str, tuple[str, int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _DIRECTIVE.match(line.strip())
        if not match or match.group(1).lower() in found:
            break
        found[match.group(1).lower()] = (match.group(2), number)
    return found


_RUN_FLAGS = {"mount": ("`RUN --mount`", 20), "network": ("`RUN --network`", 23), "security": ("`RUN --security`", None)}
_COPY_FLAGS = {
    "chmod": ("`{cmd} --chmod`", 20),
    "link": ("`{cmd} --link`", 23),
    "checksum": ("`ADD --checksum`", 25),
    "keep-git-dir": ("`ADD --keep-git-dir`", 25),
    "parents": ("`COPY --parents`", None),
    "exclude": ("`{cmd} --exclude`", None),
}


def buildkit_features(text: str, path: str) -> tuple[list[Feature], tuple[str, int] | None]:
    """The BuildKit-only features a Dockerfile uses, in file order, and its `# syntax=` directive."""
    from depsync.core import limits
    from depsync.threads import import_buildkit

    buildkit = import_buildkit()  # its Go threads never take the process's signals

    limits.check_size(len(text.encode("utf-8", "replace")), path, limits.MAX_DOCKERFILE_BYTES, "Dockerfile")
    try:
        instructions = buildkit.parse_string(text)
    except buildkit.GoParseError as exc:
        raise DepsyncError(f"Dockerfile does not parse: {exc}", path) from None
    features: list[Feature] = []
    for instruction in instructions:
        cmd = instruction.cmd.upper()
        if instruction.heredocs:
            features.append(Feature(f"a heredoc (`{cmd} <<{instruction.heredocs[0].name}`)", instruction.start_line, 23))
        table = _RUN_FLAGS if cmd == "RUN" else _COPY_FLAGS if cmd in ("COPY", "ADD") else {}
        for flag in instruction.flags:
            name = flag.lstrip("-").split("=", 1)[0].lower()
            if name in table:
                what, since = table[name]
                features.append(Feature(what.format(cmd=cmd), instruction.start_line, since))
    syntax = _directives(text).get("syntax")
    return features, syntax


# -- the builder --------------------------------------------------------------------------------

class Builder:
    __slots__ = ("kind", "argv", "env", "cli_version")

    def __init__(self, kind: str, argv: tuple[str, ...], env: dict[str, str], cli_version: str = "") -> None:
        self.kind = kind  # "buildx" | "buildkit" (the engine's, through a classic CLI) | "legacy" | "sdk"
        self.argv = argv  # the CLI and its --context, if any
        self.env = env
        self.cli_version = cli_version

    def describe(self) -> str:
        cli = self.argv[0] if self.argv else ""
        return {
            "buildx": f"docker buildx (through {cli})",
            "buildkit": f"the engine's built-in BuildKit (through {cli} {self.cli_version}, no buildx plugin)",
            "legacy": f"the legacy builder ({cli} {self.cli_version} has no buildx plugin, and drives BuildKit only through one)",
            "sdk": "the legacy builder (no docker CLI on PATH)",
        }[self.kind]


def _docker_clis() -> list[str]:
    """Every `docker` executable on PATH, in PATH order, each file once."""
    found: list[str] = []
    seen: set[str] = set()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory or ".", "docker")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            real = os.path.realpath(candidate)
            if real not in seen:
                seen.add(real)
                found.append(candidate)
    return found


def _quiet(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return process.run(argv, env=env, timeout=30, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return None


def find_builder(endpoint: Endpoint) -> Builder:
    from depsync.shell.runners.endpoint import docker_cli

    prepared: list[tuple[str, list[str], dict[str, str]]] = []
    for cli in _docker_clis():
        found = docker_cli(endpoint, cli)
        if found is not None:
            prepared.append((cli, *found))
    for _, argv, env in prepared:
        result = _quiet([*argv, "buildx", "version"], env)
        if result is not None and result.returncode == 0:
            return Builder("buildx", tuple(argv), env)
    versions: list[tuple[str, int]] = []  # (as printed, major) of each CLI
    for cli, _, env in prepared:
        result = _quiet([cli, "--version"], env)
        match = _CLI_VERSION.search(result.stdout if result is not None else "")
        versions.append((f"{match.group(1)}.{match.group(2)}", int(match.group(1))) if match else ("?", 99))
    for (_, argv, env), (text, major) in zip(prepared, versions, strict=True):
        if major < CLASSIC_CLI_UNTIL:
            return Builder("buildkit", tuple(argv), {**env, "DOCKER_BUILDKIT": "1"}, text)
    if prepared:
        _, argv, env = prepared[0]
        return Builder("legacy", tuple(argv), {**env, "DOCKER_BUILDKIT": "0"}, versions[0][0])
    return Builder("sdk", (), {})


def _engine_major(endpoint: Endpoint) -> tuple[int, str]:
    from depsync.shell.runners.engine import client

    engine = client(endpoint)
    try:
        version = str(engine.json("GET", "/version").get("Version", ""))
    finally:
        engine.close()
    match = _ENGINE_VERSION.match(version)
    return (int(match.group(1)) if match else 0), version


def _frontend_reachable(endpoint: Endpoint, reference: str) -> str | None:
    """None when the engine can resolve the frontend image a `# syntax=` line names, else why not."""
    from depsync.shell.runners.engine import (
        EngineError,
        EngineLost,
        client,
        quote_segment,
    )

    engine = client(endpoint)
    try:
        engine.json("GET", f"/distribution/{quote_segment(reference)}/json")
        return None
    except EngineError as exc:
        return exc.explanation
    except EngineLost as exc:
        return exc.reason
    finally:
        engine.close()


def check_builder(builder: Builder, text: str, path: str, endpoint: Endpoint) -> None:
    """Refuse, before anything is built, a Dockerfile this builder cannot build."""
    if builder.kind == "buildx":
        return  # buildx runs the frontend the Dockerfile asks for
    features, syntax = buildkit_features(text, path)
    alternative = "build the image in CI and pass it with --image, or install the docker-buildx plugin"
    if builder.kind in ("legacy", "sdk"):
        if syntax is not None:
            features.insert(0, Feature(f"the `# syntax={syntax[0]}` directive", syntax[1], 0))
        if features:
            first = features[0]
            raise DepsyncError(f"{first.what} needs BuildKit (docker buildx): the builder here is {builder.describe()}; {alternative}", f"{path}:{first.line}")
        return
    if syntax is not None:  # the named frontend parses the file; BuildKit must fetch it first
        reference = syntax[0].split()[0] if syntax[0] else ""
        why = _frontend_reachable(endpoint, reference) if reference and not reference.startswith("-") else "no image named"
        if why is not None:
            raise DepsyncError(
                f"the `# syntax={syntax[0]}` directive needs BuildKit to fetch that frontend image, and the engine cannot "
                f"({redact(why)[:200]}); build the image in CI and pass it with --image, or give the engine access to its registry",
                f"{path}:{syntax[1]}",
            )
        return
    major, version = _engine_major(endpoint)
    for feature in features:
        if feature.builtin_since is None or major < feature.builtin_since:
            later = f"Docker {feature.builtin_since} and later have it" if feature.builtin_since else "only a labs frontend has it"
            raise DepsyncError(
                f"{feature.what} needs BuildKit (docker buildx): the builder here is {builder.describe()}, and the "
                f"Dockerfile frontend built into Docker {version} does not parse it ({later}); {alternative}",
                f"{path}:{feature.line}",
            )


def build_image(
    options: LockRequest, dockerfile_path: str, endpoint: Endpoint, build_args: dict[str, str], on_line: LineSink | None = None, on_phase: PhaseSink | None = None
) -> str:
    """Build the Dockerfile (--target; config's build-args, then --build-arg) into a tag of its own; returns the tag."""
    from depsync.shell.workspace import FileReader

    root = options.root.resolve()
    if options.target is not None and not _TARGET.match(options.target):
        raise DepsyncError(f"--target {options.target!r} is not a stage name")
    for name, value in build_args.items():
        if not _ARG_NAME.match(name) or _CONTROL.search(value):
            raise DepsyncError(f"--build-arg {name!r}: names are letters, digits and _, values have no control characters")
    text = FileReader(root).read_text(dockerfile_path) or ""
    if on_phase:
        on_phase("finding a builder")
    builder = find_builder(endpoint)
    check_builder(builder, text, dockerfile_path, endpoint)
    import hashlib

    key = hashlib.sha256(f"{root}\0{dockerfile_path}\0{options.target or ''}".encode()).hexdigest()[:12]
    tag = f"depsync-lock:{key}"  # one tag per project, Dockerfile and target: rebuilt in place, not piled up
    if on_phase:
        on_phase(f"building {dockerfile_path} ({builder.kind})")
    if builder.kind == "sdk":
        _build_with_sdk(endpoint, root, dockerfile_path, options, build_args, tag)
        return tag
    words = [f"--file={root / dockerfile_path}", f"--tag={tag}"]
    words += [f"--target={options.target}"] if options.target else []
    words += [f"--build-arg={name}={value}" for name, value in build_args.items()]
    command = {"buildx": ["buildx", "build", "--load", "--progress=plain"], "buildkit": ["build", "--progress=plain"], "legacy": ["build"]}[builder.kind]
    argv = [*builder.argv, *command, *words, "--", str(root)]
    status, tail = _stream(argv, builder.env, options.timeout, on_line)
    if status != 0:
        raise DepsyncError(f"building {dockerfile_path} with {builder.describe()} failed ({tail or f'exit status {status}'}); uv.lock is unchanged")
    return tag


def _stream(argv: list[str], env: dict[str, str], timeout: float, on_line: LineSink | None) -> tuple[int, str]:
    """Run a command, its output streamed line by line (masked); (status, the line saying why it
    failed: the last one that looks like an error, else the last one). Its process group is
    killed on a timeout, an error or a signal."""
    seen = {"error": "", "last": ""}

    def take(text: str) -> None:
        line = redact(text)
        if line.strip():
            seen["last"] = line.strip()
            if _ERROR_LINE.search(line):
                seen["error"] = line.strip()
        if on_line:
            on_line(line)

    try:
        status = process.stream(argv, env=env, timeout=timeout, on_line=take)
    except subprocess.TimeoutExpired:
        return 124, f"it did not finish within {timeout:.0f}s"
    return status, (seen["error"] or seen["last"])[:300]



def _build_with_sdk(endpoint: Endpoint, root: Path, dockerfile_path: str, options: LockRequest, build_args: dict[str, str], tag: str) -> None:
    """No docker CLI at all: the engine's legacy builder through the docker SDK (it makes the context tar)."""
    import docker
    from docker.tls import TLSConfig

    tls = TLSConfig(client_cert=(endpoint.cert, endpoint.key) if endpoint.cert and endpoint.key else None, ca_cert=endpoint.ca, verify=endpoint.tls_verify) if endpoint.tls else False
    engine = docker.DockerClient(base_url=endpoint.url, tls=tls, timeout=int(options.timeout))
    try:
        with signals.immediate():
            engine.images.build(path=str(root), dockerfile=dockerfile_path, target=options.target, buildargs=build_args or None, tag=tag, rm=True)
    except Exception as exc:  # docker.errors.BuildError / APIError
        raise DepsyncError(f"building {dockerfile_path} failed: {redact(str(exc))[:300]}; uv.lock is unchanged") from None
    finally:
        engine.close()
