"""Which Docker engine: found like the docker CLI finds it (DOCKER_HOST, contexts), then podman's socket."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from depsync.core.redact import redact
from depsync.errors import DepsyncError


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
