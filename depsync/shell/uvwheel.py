"""Shell: an exact uv binary for a container's platform, from the `uv` wheel on the package index.

The docker runner mounts it into an image that has no uv, or another version than the
Dockerfile pins. What it fetches, and from where:

- The wheel for the image's OS and architecture (from the image's metadata, not the host's:
  an arm64 image on an amd64 laptop gets the aarch64 wheel). A glibc image gets the
  manylinux wheel (the binary uv's own installer puts there); a musl image, or one with
  neither loader, gets the musllinux wheel, whose uv is statically linked and runs anywhere.
- From the operator's index: UV_DEFAULT_INDEX, UV_INDEX_URL, PIP_INDEX_URL, pip's config
  files (`index-url`), else https://pypi.org/simple. Never from the project: a repository
  cannot choose which uv binary depsync runs.
- Through the simple API (PEP 691 JSON, else PEP 503 HTML), with urllib: no pip needed
  (`uv tool install depsync` has none). TLS trusts the host's CA bundle (SSL_CERT_FILE,
  pip's `cert`, the system bundle), so a TLS-inspecting proxy works as it does for pip.
- The wheel's sha256 must match the one the index states; a wheel without one is refused.
- Cached as `<cache>/depsync/uv/<version>/<arch>-<libc>/uv`, one download per version and
  platform.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from depsync.core.trust import uv_version_allowed
from depsync.errors import DepsyncError
from depsync.records import record

DEFAULT_INDEX = "https://pypi.org/simple"
MAX_WHEEL_BYTES = 512 * 1024 * 1024  # uv wheels are ~20 MB; a response past this is not one
TIMEOUT = 60.0  # s per network operation
_JSON = "application/vnd.pypi.simple.v1+json"
_ACCEPT = f"{_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"

# image architecture (OCI names) -> wheel architecture; 32-bit arm by variant
_ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64", "386": "i686", "i386": "i686", "ppc64le": "ppc64le", "s390x": "s390x", "riscv64": "riscv64"}
_ARM = {"v6": "armv6l", "v7": "armv7l", "": "armv7l"}
# wheel architecture -> (musl's loader name part, glibc's loader path): how an image's libc is told
_LOADERS = {
    "x86_64": ("x86_64", "/lib64/ld-linux-x86-64.so.2"),
    "aarch64": ("aarch64", "/lib/ld-linux-aarch64.so.1"),
    "armv7l": ("armhf", "/lib/ld-linux-armhf.so.3"),
    "armv6l": ("armhf", "/lib/ld-linux-armhf.so.3"),
    "i686": ("i386", "/lib/ld-linux.so.2"),
    "ppc64le": ("powerpc64le", "/lib64/ld64.so.2"),
    "s390x": ("s390x", "/lib/ld64.so.1"),
    "riscv64": ("riscv64", "/lib/ld-linux-riscv64-lp64d.so.1"),
}
_WHEEL = re.compile(r"^uv-(?P<version>[^-]+)-[^-]+-[^-]+-(?P<platforms>[^-]+)\.whl\Z")
_MANYLINUX_ALIASES = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}


@record
class Platform:
    """Where a uv binary must run: the image's OS, architecture and variant, and its C library."""

    os: str
    architecture: str
    variant: str = ""
    libc: str = "unknown"  # "glibc", "musl" or "unknown" (no loader found: a static binary is needed)

    @property
    def arch(self) -> str:
        """The wheel's name for the architecture ("x86_64", "aarch64", "armv7l")."""
        if self.architecture == "arm":
            return _ARM.get(self.variant, "armv7l")
        arch = _ARCH.get(self.architecture)
        if arch is None:
            raise DepsyncError(f"no uv wheel is published for the image's architecture {self.describe()}")
        return arch

    def describe(self) -> str:
        name = "/".join(p for p in (self.os, self.architecture, self.variant) if p)
        return f"{name} with {self.libc}" if self.libc != "unknown" else name

    def loaders(self) -> tuple[str, str]:
        """(musl's dynamic loader, glibc's dynamic loader) in an image of this architecture."""
        musl, glibc = _LOADERS[self.arch]
        return f"/lib/ld-musl-{musl}.so.1", glibc


def host_platform() -> Platform:
    machine = os.uname().machine
    architecture = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "armv6l": "arm", "i686": "386"}.get(machine, machine)
    variant = {"armv7l": "v7", "armv6l": "v6"}.get(machine, "")
    libc = "musl" if any(Path("/lib").glob("ld-musl-*")) else "glibc"
    return Platform(sys.platform if sys.platform != "linux" else "linux", architecture, variant, libc)


# -- the operator's index and CA bundle ---------------------------------------------------------

def _pip_config_files(environ: Mapping[str, str]) -> list[Path]:
    """pip's configuration files, lowest precedence first (global, user, site, PIP_CONFIG_FILE)."""
    named = environ.get("PIP_CONFIG_FILE")
    if named == os.devnull:
        return []  # pip's way of saying "no configuration files"
    home = Path(environ.get("HOME") or Path.home())
    dirs = [d for d in (environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":") if d]
    files = [Path(d) / "pip" / "pip.conf" for d in reversed(dirs)] + [Path("/etc/pip.conf")]
    files += [home / ".pip" / "pip.conf", Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf"]
    venv = environ.get("VIRTUAL_ENV")
    files.append(Path(venv) / "pip.conf" if venv else Path(sys.prefix) / "pip.conf")
    if named:
        files.append(Path(named))
    return files


def pip_setting(name: str, environ: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """(value, where) of a pip setting: PIP_<NAME>, else the last config file that sets it
    in [global] or [install]."""
    import configparser

    environ = os.environ if environ is None else environ
    variable = "PIP_" + name.upper().replace("-", "_")
    if environ.get(variable):
        return environ[variable], variable
    found: tuple[str, str] | None = None
    for file in _pip_config_files(environ):
        parser = configparser.RawConfigParser()
        try:
            if not parser.read(file, encoding="utf-8"):
                continue
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue  # pip would complain about it; depsync only looks for two settings
        for section in ("global", "install"):
            if parser.has_option(section, name):
                found = (parser.get(section, name).strip(), str(file))
    return found


def index_url(environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(the index's simple API URL, where that came from)."""
    environ = os.environ if environ is None else environ
    for variable in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"):
        if environ.get(variable, "").strip():
            return environ[variable].strip(), variable
    configured = pip_setting("index-url", environ)
    if configured and configured[0]:
        return configured[0].split()[0], configured[1]
    return DEFAULT_INDEX, "the default index"


def ca_bundle(environ: Mapping[str, str] | None = None) -> Path | None:
    """The CA bundle the host trusts: SSL_CERT_FILE, pip's `cert`, Python's default file, the
    Debian/Ubuntu bundle. (A TLS-inspecting proxy's CA is in it on such networks.)"""
    environ = os.environ if environ is None else environ
    named = environ.get("SSL_CERT_FILE")
    if named and Path(named).is_file():
        return Path(named)  # the common case on proxied networks: no config file read, no ssl import
    import ssl

    pip_cert = pip_setting("cert", environ)
    for candidate in (pip_cert[0] if pip_cert else None, ssl.get_default_verify_paths().cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


# -- reading the index --------------------------------------------------------------------------

@record
class WheelLink:
    filename: str
    url: str
    sha256: str | None


def _links_from_json(data: bytes, base: str) -> list[WheelLink]:
    import json
    from urllib.parse import urljoin

    files = json.loads(data).get("files", [])
    return [WheelLink(f["filename"], urljoin(base, f["url"]), (f.get("hashes") or {}).get("sha256")) for f in files if isinstance(f, dict) and "filename" in f and "url" in f]


def _links_from_html(data: bytes, base: str) -> list[WheelLink]:
    from html.parser import HTMLParser
    from urllib.parse import urldefrag, urljoin

    links: list[WheelLink] = []

    class Anchors(HTMLParser):
        href: str | None = None
        text = ""
        base_href = base

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "base":
                self.base_href = urljoin(base, dict(attrs).get("href") or "")
            if tag == "a":
                self.href, self.text = dict(attrs).get("href"), ""

        def handle_data(self, data: str) -> None:
            if self.href is not None:
                self.text += data

        def handle_endtag(self, tag: str) -> None:
            if tag == "a" and self.href:
                url, fragment = urldefrag(urljoin(self.base_href, self.href))
                name = self.text.strip() or url.rsplit("/", 1)[-1]
                digest = fragment.removeprefix("sha256=") if fragment.startswith("sha256=") else None
                links.append(WheelLink(name, url, digest))
                self.href = None

    parser = Anchors()
    parser.feed(data.decode("utf-8", "replace"))
    parser.close()
    return links


def _manylinux_level(tag: str, arch: str) -> tuple[int, int] | None:
    if tag.endswith("_" + arch):
        head = tag[: -len(arch) - 1]
        if head in _MANYLINUX_ALIASES:
            return _MANYLINUX_ALIASES[head]
        match = re.fullmatch(r"manylinux_(\d+)_(\d+)", head)
        if match:
            return int(match.group(1)), int(match.group(2))
    return None


def choose_wheel(links: list[WheelLink], version: str, platform: Platform) -> tuple[WheelLink, str]:
    """The wheel of exactly `version` for the platform, and its kind (manylinux, musllinux, linux).

    glibc: the manylinux wheel needing the oldest glibc, else the static musllinux one;
    musl or unknown: musllinux only (a manylinux uv is linked against glibc)."""
    arch = platform.arch
    ranked: list[tuple[tuple[int, int, int], WheelLink, str]] = []
    for link in links:
        match = _WHEEL.match(link.filename)
        if not match or match.group("version") != version:
            continue
        for tag in match.group("platforms").split("."):
            level = _manylinux_level(tag, arch)
            if level is not None and platform.libc == "glibc":
                ranked.append(((0, *level), link, "manylinux"))
            elif re.fullmatch(rf"musllinux_\d+_\d+_{re.escape(arch)}", tag):
                ranked.append(((1, 0, 0), link, "musllinux"))
            elif tag == f"linux_{arch}":
                ranked.append(((2, 0, 0), link, "linux"))
    if not ranked:
        raise LookupError(f"no uv {version} wheel for {platform.describe()}")
    _, link, kind = min(ranked, key=lambda item: item[0])
    return link, kind


class _Index:
    """GET requests to the operator's index: its CA bundle, its credentials (URL userinfo or
    ~/.netrc) sent only to the index's own host, the environment's proxies."""

    def __init__(self, url: str, environ: Mapping[str, str]) -> None:
        import ssl
        import urllib.request
        from urllib.parse import urlsplit, urlunsplit

        parts = urlsplit(url)
        self.host = parts.hostname or ""
        self.credentials: tuple[str, str] | None = None
        if parts.username is not None:
            from urllib.parse import unquote

            self.credentials = (unquote(parts.username), unquote(parts.password or ""))
            parts = parts._replace(netloc=(parts.hostname or "") + (f":{parts.port}" if parts.port else ""))
        elif self.host:
            self.credentials = _netrc(self.host, environ)
        self.url = urlunsplit(parts).rstrip("/") + "/"
        ca = ca_bundle(environ)
        context = ssl.create_default_context(cafile=str(ca) if ca else None)
        self.opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context))

    def open(self, url: str, accept: str | None = None):  # type: ignore[no-untyped-def]
        import base64
        import urllib.request
        from urllib.parse import urlsplit

        request = urllib.request.Request(url, headers={"User-Agent": "depsync", **({"Accept": accept} if accept else {})})
        if self.credentials and urlsplit(url).hostname == self.host:
            token = base64.b64encode(":".join(self.credentials).encode()).decode()
            request.add_unredirected_header("Authorization", f"Basic {token}")  # never follows a redirect to another host
        return self.opener.open(request, timeout=TIMEOUT)

    def links(self) -> list[WheelLink]:
        from urllib.parse import urljoin

        page = urljoin(self.url, "uv/")
        if page.startswith("file:"):
            page = urljoin(page, "index.html")  # a static PEP 503 tree on disk
        with self.open(page, _ACCEPT) as response:
            data = response.read(64 * 1024 * 1024)
            kind = response.headers.get("Content-Type", "") or ""
            base = response.geturl()
        if kind.startswith(_JSON):
            return _links_from_json(data, base)
        return _links_from_html(data, base)


def _netrc(host: str, environ: Mapping[str, str]) -> tuple[str, str] | None:
    import netrc

    path = environ.get("NETRC") or str(Path(environ.get("HOME") or Path.home()) / ".netrc")
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None
    return (entry[0] or "", entry[2] or "") if entry else None


# -- the binary ---------------------------------------------------------------------------------

def cache_dir() -> Path:
    from depsync.shell import cache

    return Path(cache.root())


def cached_binary(version: str, platform: Platform) -> Path:
    if not uv_version_allowed(version):  # the version names a directory: never a path of its own
        raise DepsyncError(f"{version!r} is not a uv release number")
    return cache_dir() / "uv" / version / f"{platform.arch}-{platform.libc}" / "uv"


def uv_binary(version: str, platform: Platform, environ: Mapping[str, str] | None = None, on_phase: Callable[[str], None] | None = None) -> Path:
    """A Linux uv binary of exactly this version for the platform, from the index, cached."""
    from depsync.core.redact import redact

    environ = os.environ if environ is None else environ
    target = cached_binary(version, platform)
    if target.is_file():
        return target
    if platform.os != "linux":
        raise DepsyncError(f"uv in a container needs a Linux image; this one is {platform.describe()}")
    url, source = index_url(environ)
    where = f"{redact(url)} ({source})"
    if on_phase:
        on_phase(f"fetching uv {version} for {platform.describe()}")
    try:
        index = _Index(url, environ)
        link, kind = choose_wheel(index.links(), version, platform)
        if not link.sha256 or not re.fullmatch(r"[0-9a-fA-F]{64}", link.sha256):
            raise DepsyncError(f"the index {where} states no sha256 for {link.filename}; depsync only mounts a uv it could verify")
        target.parent.mkdir(parents=True, exist_ok=True)
        _download_and_extract(index, link, version, target)
    except LookupError as exc:
        raise DepsyncError(f"{exc} on {where}; pin a version that has one (ARG UV_VERSION), or use an image with uv") from None
    except DepsyncError:
        raise
    except Exception as exc:  # urllib's URLError/HTTPError, ssl errors, timeouts, a broken zip
        reason = getattr(exc, "reason", None) or exc
        raise DepsyncError(f"could not fetch uv {version} for {platform.describe()} from {where}: {redact(str(reason))[:300]}") from None
    return target


def _download_and_extract(index: _Index, link: WheelLink, version: str, target: Path) -> None:
    import zipfile

    # the partial files sit in the cache directory, so the final rename stays on one filesystem
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as tmp:
        wheel = Path(tmp) / link.filename.replace("/", "_")
        digest = hashlib.sha256()
        size = 0
        with index.open(link.url) as response, open(wheel, "wb") as out:
            while chunk := response.read(1 << 20):
                size += len(chunk)
                if size > MAX_WHEEL_BYTES:
                    raise DepsyncError(f"{link.filename} is larger than {MAX_WHEEL_BYTES >> 20} MiB; not a uv wheel")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != link.sha256.lower():  # type: ignore[union-attr]
            raise DepsyncError(f"{link.filename}: sha256 {digest.hexdigest()} is not the {link.sha256} the index states; nothing was cached")
        with zipfile.ZipFile(wheel) as archive:
            member = next((n for n in archive.namelist() if n == f"uv-{version}.data/scripts/uv" or n.endswith(".data/scripts/uv")), None)
            if member is None:
                raise DepsyncError(f"{link.filename} has no uv binary (.data/scripts/uv)")
            partial = Path(tmp) / "uv"
            with archive.open(member) as source, open(partial, "wb") as out:
                while chunk := source.read(1 << 20):
                    out.write(chunk)
        partial.chmod(0o755)
        (target.parent / "source.txt").write_text(f"{link.filename}\nsha256={link.sha256}\n")
        os.replace(partial, target)  # concurrent fetches: the last complete one wins, none is partial
