"""The pinned uv binary: found on the index through the simple API, verified, extracted, cached.

The wheel is the real uv 0.7.2 musllinux wheel from PyPI (fetched once per module, through this
machine's proxy); it is served by a local index server so that the cases PyPI never shows can
be made: an HTML-only index, a wrong hash, no hash, credentials. Which file fits which
platform is decided on PyPI's real file list for uv 0.7.2.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import threading
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from depsync.errors import DepsyncError
from depsync.shell.uvwheel import (
    Platform,
    WheelLink,
    choose_wheel,
    index_url,
    uv_binary,
)

WHEEL = "uv-0.7.2-py3-none-musllinux_1_1_x86_64.whl"
MUSL = Platform("linux", "amd64", "", "musl")


@pytest.fixture(scope="module")
def pypi_listing() -> dict:
    request = urllib.request.Request("https://pypi.org/simple/uv/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=120) as response:  # the host's CA bundle: SSL_CERT_FILE
        return json.load(response)


@pytest.fixture(scope="module")
def wheel(pypi_listing: dict) -> bytes:
    entry = next(f for f in pypi_listing["files"] if f["filename"] == WHEEL)
    with urllib.request.urlopen(entry["url"], timeout=300) as response:
        data = response.read()
    assert hashlib.sha256(data).hexdigest() == entry["hashes"]["sha256"]
    return data


class Index:
    """A local simple-API index: pages and files by path, every request recorded with its headers."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[str, bytes]] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                index.requests.append((self.path, dict(self.headers)))
                found = index.pages.get(self.path.split("?")[0])
                if found is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", found[0])
                self.send_header("Content-Length", str(len(found[1])))
                self.end_headers()
                self.wfile.write(found[1])

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve_json(self, filename: str, data: bytes, sha256: str | None) -> None:
        files = [{"filename": filename, "url": f"../../files/{filename}", "hashes": {"sha256": sha256} if sha256 else {}}]
        self.pages["/simple/uv/"] = ("application/vnd.pypi.simple.v1+json", json.dumps({"meta": {"api-version": "1.0"}, "name": "uv", "files": files}).encode())
        self.pages[f"/files/{filename}"] = ("application/octet-stream", data)

    def serve_html(self, filename: str, data: bytes, sha256: str) -> None:
        page = f'<!DOCTYPE html><html><body><a href="/files/{filename}#sha256={sha256}">{filename}</a><br></body></html>'
        self.pages["/simple/uv/"] = ("text/html", page.encode())
        self.pages[f"/files/{filename}"] = ("application/octet-stream", data)


@pytest.fixture
def index() -> Iterator[Index]:
    served = Index()
    yield served
    served.server.shutdown()
    served.server.server_close()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL", "http_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    return tmp_path / "cache"


def member(wheel: bytes) -> bytes:
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        return archive.read("uv-0.7.2.data/scripts/uv")


def test_pep691_json_index(index: Index, wheel: bytes, cache: Path) -> None:
    index.serve_json(WHEEL, wheel, hashlib.sha256(wheel).hexdigest())
    phases: list[str] = []
    binary = uv_binary("0.7.2", MUSL, {"UV_DEFAULT_INDEX": f"{index.url}/simple"}, phases.append)
    assert binary == cache / "depsync" / "uv" / "0.7.2" / "x86_64-musl" / "uv"
    assert binary.read_bytes() == member(wheel) and binary.stat().st_mode & 0o111
    assert phases == ["fetching uv 0.7.2 for linux/amd64 with musl"]
    assert index.requests[0][1]["Accept"].startswith("application/vnd.pypi.simple.v1+json")
    seen = len(index.requests)
    assert uv_binary("0.7.2", MUSL, {"UV_DEFAULT_INDEX": f"{index.url}/simple"}) == binary  # cached: no request
    assert len(index.requests) == seen
    assert sorted(p.name for p in binary.parent.iterdir()) == ["source.txt", "uv"]  # the wheel itself is not kept


def test_pep503_html_index(index: Index, wheel: bytes, cache: Path) -> None:
    index.serve_html(WHEEL, wheel, hashlib.sha256(wheel).hexdigest())
    binary = uv_binary("0.7.2", MUSL, {"PIP_INDEX_URL": f"{index.url}/simple/"})
    assert binary.read_bytes() == member(wheel)


def test_a_wrong_hash_is_refused_and_nothing_is_cached(index: Index, wheel: bytes, cache: Path) -> None:
    index.serve_json(WHEEL, wheel, "0" * 64)
    with pytest.raises(DepsyncError, match=r"sha256 [0-9a-f]{64} is not the 0{64} the index states; nothing was cached"):
        uv_binary("0.7.2", MUSL, {"UV_DEFAULT_INDEX": f"{index.url}/simple"})
    assert not list((cache / "depsync" / "uv" / "0.7.2" / "x86_64-musl").iterdir())  # no binary, no partial file


def test_a_wheel_without_a_hash_is_refused(index: Index, wheel: bytes) -> None:
    index.serve_json(WHEEL, wheel, None)
    with pytest.raises(DepsyncError, match="states no sha256"):
        uv_binary("0.7.2", MUSL, {"UV_DEFAULT_INDEX": f"{index.url}/simple"})


def test_pip_config_names_the_index(index: Index, wheel: bytes, tmp_path: Path) -> None:
    index.serve_json(WHEEL, wheel, hashlib.sha256(wheel).hexdigest())
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nindex-url = {index.url}/simple\n")
    assert index_url({"PIP_CONFIG_FILE": str(config), "HOME": str(tmp_path)}) == (f"{index.url}/simple", str(config))
    uv_binary("0.7.2", MUSL, {"PIP_CONFIG_FILE": str(config), "HOME": str(tmp_path)})
    assert index.requests and index.requests[0][0] == "/simple/uv/"


def test_which_setting_wins(tmp_path: Path) -> None:
    config = tmp_path / "pip.conf"
    config.write_text("[global]\nindex-url = https://config.example/simple\n")
    base = {"PIP_CONFIG_FILE": str(config), "HOME": str(tmp_path)}
    assert index_url(base)[0] == "https://config.example/simple"
    assert index_url({**base, "PIP_INDEX_URL": "https://pip.example/simple"}) == ("https://pip.example/simple", "PIP_INDEX_URL")
    assert index_url({**base, "PIP_INDEX_URL": "https://pip.example/simple", "UV_INDEX_URL": "https://uv.example/simple"})[1] == "UV_INDEX_URL"
    assert index_url({**base, "UV_INDEX_URL": "https://uv.example/simple", "UV_DEFAULT_INDEX": "https://default.example/simple"})[1] == "UV_DEFAULT_INDEX"
    assert index_url({"PIP_CONFIG_FILE": "/dev/null", "HOME": str(tmp_path)}) == ("https://pypi.org/simple", "the default index")


def test_credentials_go_to_the_index_host_only_and_never_into_messages(index: Index, wheel: bytes) -> None:
    secret = "s3cretIndexPassword"
    index.serve_json(WHEEL, wheel, hashlib.sha256(wheel).hexdigest())
    host = index.url.removeprefix("http://")
    uv_binary("0.7.2", MUSL, {"UV_DEFAULT_INDEX": f"http://someone:{secret}@{host}/simple"})
    expected = "Basic " + base64.b64encode(f"someone:{secret}".encode()).decode()
    assert [headers.get("Authorization") for _, headers in index.requests] == [expected, expected]  # the page and the file, same host
    index.pages.clear()  # now the index fails: the message names it without the password
    with pytest.raises(DepsyncError) as failure:
        uv_binary("0.7.3", MUSL, {"UV_DEFAULT_INDEX": f"http://someone:{secret}@{host}/simple"})
    assert secret not in str(failure.value) and "could not fetch uv 0.7.3" in str(failure.value)


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (Platform("linux", "amd64", "", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
        (Platform("linux", "amd64", "", "musl"), "uv-0.7.2-py3-none-musllinux_1_1_x86_64.whl"),
        (Platform("linux", "amd64", "", "unknown"), "uv-0.7.2-py3-none-musllinux_1_1_x86_64.whl"),  # no loader: the static one
        (Platform("linux", "arm64", "v8", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"),
        (Platform("linux", "arm64", "v8", "musl"), "uv-0.7.2-py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64.whl"),
        (Platform("linux", "arm", "v7", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_armv7l.manylinux2014_armv7l.whl"),
        (Platform("linux", "arm", "v7", "musl"), "uv-0.7.2-py3-none-musllinux_1_1_armv7l.whl"),
        (Platform("linux", "arm", "v6", "glibc"), "uv-0.7.2-py3-none-linux_armv6l.whl"),
        (Platform("linux", "386", "", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_i686.manylinux2014_i686.whl"),
        (Platform("linux", "ppc64le", "", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_ppc64le.manylinux2014_ppc64le.whl"),
        (Platform("linux", "s390x", "", "glibc"), "uv-0.7.2-py3-none-manylinux_2_17_s390x.manylinux2014_s390x.whl"),
    ],
)
def test_the_wheel_for_each_platform(pypi_listing: dict, platform: Platform, expected: str) -> None:
    links = [WheelLink(f["filename"], f["url"], f["hashes"].get("sha256")) for f in pypi_listing["files"]]
    assert choose_wheel(links, "0.7.2", platform)[0].filename == expected


def test_no_wheel_for_the_platform(pypi_listing: dict) -> None:
    links = [WheelLink(f["filename"], f["url"], f["hashes"].get("sha256")) for f in pypi_listing["files"]]
    with pytest.raises(LookupError, match="no uv 0.7.2 wheel for linux/ppc64le with musl"):
        choose_wheel(links, "0.7.2", Platform("linux", "ppc64le", "", "musl"))  # a manylinux uv would not run on musl
    with pytest.raises(DepsyncError, match="no uv wheel is published for the image's architecture linux/mips64le"):
        choose_wheel(links, "0.7.2", Platform("linux", "mips64le", "", "glibc"))
