"""`depsync check --deep`: real `uv lock --check --offline` on real local projects."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, lock_project, write_project


def depsync(project: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "depsync", "check", str(project), "--deep", "--format", "json", *args],
        capture_output=True,
        text=True,
        env=env,
    )


def project_text(material: LocalMaterial, dependency: str) -> str:
    return f'[project]\nname = "deep"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["{dependency}"]\n' + material.index_toml()


def test_deep_agrees_with_static_check(material: LocalMaterial, tmp_path: Path) -> None:
    project = write_project(tmp_path / "deep", project_text(material, "alpha>=1.0"))
    lock_project(project, material.env)
    env = dict(material.env)
    fresh = depsync(project, env)
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["findings"] == []

    (project / "pyproject.toml").write_text(project_text(material, "alpha>=2.0"))
    stale = depsync(project, env)
    assert stale.returncode == 1, stale.stderr
    rules = sorted(f["rule"] for f in json.loads(stale.stdout)["findings"])
    assert rules == ["lock-stale", "uv-lock-check"]


def test_deep_without_uv_is_an_input_error(material: LocalMaterial, tmp_path: Path) -> None:
    project = write_project(tmp_path / "deep", project_text(material, "alpha"))
    lock_project(project, material.env)
    env = dict(os.environ, PATH=str(tmp_path / "empty-bin"))
    result = depsync(project, env)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["depsync: error: uv not found on PATH: install it (`pip install uv`) to use --deep"]


# -- offline for real: no connection at all -------------------------------------------------------


class RefusingProxy:
    """A local TCP listener that records every connection and closes it at once.

    HTTPS_PROXY/HTTP_PROXY/ALL_PROXY point at it, so any request uv (or anything else) makes
    lands here first; a test then asserts none came."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.connections: list[tuple[str, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.sock.accept()
            except OSError:
                continue
            self.connections.append(peer)
            conn.close()

    def env(self, base: dict[str, str]) -> dict[str, str]:
        proxies = {name: self.url for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy")}
        return {**{k: v for k, v in base.items() if k.upper() != "NO_PROXY"}, **proxies}

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    listener = RefusingProxy()
    yield listener
    listener.close()


def host_uv_version() -> str:
    return subprocess.run([shutil.which("uv") or "uv", "--version"], capture_output=True, text=True, check=True).stdout.split()[1]


def test_deep_makes_no_network_connection(material: LocalMaterial, tmp_path: Path, proxy: RefusingProxy) -> None:
    dockerfile = f"ARG UV_VERSION={host_uv_version()}\nFROM python:3.12\nRUN pip install uv==${{UV_VERSION}}\n"
    pyproject = project_text(material, "alpha>=1.0") + '[tool.depsync]\ndockerfiles = ["Dockerfile"]\n'
    project = write_project(tmp_path / "deep", pyproject, {"Dockerfile": dockerfile})
    lock_project(project, material.env)
    env = proxy.env(dict(material.env))
    fresh = depsync(project, env)
    assert fresh.returncode == 0, fresh.stderr
    (project / "pyproject.toml").write_text(pyproject.replace("alpha>=1.0", "alpha>=2.0"))
    stale = depsync(project, env)
    assert stale.returncode == 1, stale.stderr
    assert sorted(f["rule"] for f in json.loads(stale.stdout)["findings"]) == ["lock-stale", "uv-lock-check"]
    assert proxy.connections == []
    # the listener does see uv's traffic: asking the index for a uv release (what `uv tool run uv@X`
    # did on every --deep) connects through it
    asked = subprocess.run(
        [shutil.which("uv") or "uv", "tool", "run", "--quiet", "uv@0.0.1", "--version"],
        capture_output=True, text=True, timeout=120,
        env={**{k: v for k, v in env.items() if k != "UV_OFFLINE"}, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_HTTP_RETRIES": "0"},
    )
    assert asked.returncode != 0 and proxy.connections


def test_deep_runs_a_cached_pinned_uv_offline(material: LocalMaterial, tmp_path: Path, proxy: RefusingProxy) -> None:
    from depsync.shell.uvwheel import cache_dir as cache_root

    pinned = "0.7.2"  # the real project's pin
    if not (cache_root() / "uv" / pinned / "uv").is_file() or host_uv_version() == pinned:
        pytest.skip(f"uv {pinned} is not in depsync's cache (depsync lock fetches it once)")
    dockerfile = f"ARG UV_VERSION={pinned}\nFROM python:3.12\nRUN pip install uv==${{UV_VERSION}}\n"
    pyproject = project_text(material, "alpha>=1.0") + '[tool.depsync]\ndockerfiles = ["Dockerfile"]\n'
    project = write_project(tmp_path / "deep", pyproject, {"Dockerfile": dockerfile})
    lock_project(project, material.env)
    result = depsync(project, proxy.env(dict(material.env)))
    assert result.returncode in (0, 1, 2)
    assert "uv 0.7.2" in result.stdout + result.stderr or result.returncode == 0
    assert proxy.connections == []


def test_deep_runs_build_backends_in_a_work_copy_never_in_the_checkout(material: LocalMaterial, tmp_path: Path) -> None:
    """A path package whose metadata only its build backend can tell, and a backend that writes
    a file into the directory it runs in: `check --deep` leaves the checkout as it was."""
    from uvprojects import FAKE_BACKEND_SOURCE, FAKE_BACKEND_TOML

    trap = FAKE_BACKEND_SOURCE.replace("def _metadata():\n", "def _metadata():\n    open('WRITTEN-BY-BACKEND', 'w').close()\n", 1)
    helper = ('[project]\nname = "helper"\ndynamic = ["version", "dependencies"]\nrequires-python = ">=3.10"\n\n[tool.fakebackend]\nversion = "1.0"\ndependencies = ["alpha"]\n\n'
              + FAKE_BACKEND_TOML)
    text = project_text(material, "helper") + '\n[tool.uv.sources]\nhelper = { path = "helper" }\n'
    project = write_project(tmp_path / "deep", text, {"helper/pyproject.toml": helper, "helper/_backend/fakebackend.py": trap})
    lock_project(project, material.env)
    (project / "helper" / "WRITTEN-BY-BACKEND").unlink()  # uv lock itself ran the backend here
    before = sorted(str(p.relative_to(project)) for p in project.rglob("*") if "__pycache__" not in p.parts)
    env = dict(material.env, UV_CACHE_DIR=str(tmp_path / "fresh-uv-cache"))  # nothing cached: uv must build
    result = depsync(project, env)
    assert result.returncode == 0, result.stdout + result.stderr
    after = sorted(str(p.relative_to(project)) for p in project.rglob("*") if "__pycache__" not in p.parts)
    assert after == before  # no WRITTEN-BY-BACKEND, nothing else either
    assert not list(tmp_path.glob(".deep.depsync-*"))  # and the work copy is gone
