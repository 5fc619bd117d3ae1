"""`depsync lock` with a real Docker engine and the test image from containers/setup-engine.sh.

Everything here runs uv inside a real container; nothing is faked. The engine and the
image are prepared by .ci/run (or by hand: `bash containers/setup-engine.sh`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import IMAGE, indexed_project
from support import labelled_containers

LABEL = "io.depsync.run"
ROLE = "io.depsync.role"

pytestmark = pytest.mark.docker


SPAWNED: set[int] = set()  # depsync processes the tests started (the engine is shared with other developers' runs)


def leftovers(engine) -> list:  # type: ignore[no-untyped-def]
    """The depsync containers of runs these tests started."""
    host = socket.gethostname()
    mine = []
    for container in labelled_containers(engine, LABEL):
        parts = container.labels.get(LABEL, "").split(":")
        if len(parts) == 3 and parts[0] == host and parts[1].isdigit() and int(parts[1]) in SPAWNED:
            mine.append(container)
    return mine


@pytest.fixture(autouse=True)
def record_spawned(monkeypatch: pytest.MonkeyPatch) -> None:
    original = subprocess.Popen.__init__

    def record(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        original(self, *args, **kwargs)
        SPAWNED.add(self.pid)

    monkeypatch.setattr(subprocess.Popen, "__init__", record)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose index (a flat wheel directory) lives inside it: only the project is mounted."""
    return indexed_project(tmp_path / "proj")


def depsync(project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ if env is None else env)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # the local runner's uv: the venv's, however pytest was started
    return subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), *args], capture_output=True, text=True, env=env, timeout=timeout)


def test_container_and_host_give_the_same_lock(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    in_container = depsync(project, "--runner", "docker", "--image", IMAGE)
    assert in_container.returncode == 0, in_container.stderr
    assert "docker runner" in in_container.stderr
    container_lock = (project / "uv.lock").read_bytes()
    stat = os.stat(project / "uv.lock")
    assert (stat.st_uid, stat.st_gid) == (os.getuid(), os.getgid())
    assert all(os.stat(p).st_uid == os.getuid() for p in project.rglob("*"))
    (project / "uv.lock").unlink()
    on_host = depsync(project, "--runner", "local")
    assert on_host.returncode == 0, on_host.stderr
    assert (project / "uv.lock").read_bytes() == container_lock
    assert leftovers(engine) == []


def test_pinned_uv_072_is_provided_and_used(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    (project / "docker").mkdir()
    (project / "docker" / "Dockerfile.ci.dev").write_text(f"ARG UV_VERSION=0.7.2\nFROM {IMAGE}\nRUN uv sync --locked\n")
    result = depsync(project, "--runner", "docker", "--image", IMAGE)
    assert result.returncode == 0, result.stderr
    assert "used uv 0.7.2 (pinned)" in result.stderr
    assert "depsync: uv 0.7.2 via docker runner" in result.stderr
    assert (project / "uv.lock").read_text().startswith("version = 1\n")
    check = depsync(project, "--runner", "docker", "--image", IMAGE, "--check")
    assert check.returncode == 0, check.stderr


def test_upgrade_package_and_summary(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    text = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(text.replace('"alpha>=1.0"', '"alpha<2"'))
    assert depsync(project, "--runner", "docker", "--image", IMAGE).returncode == 0
    (project / "pyproject.toml").write_text(text)
    summary = tmp_path / "summary.md"
    result = depsync(project, "--runner", "docker", "--image", IMAGE, "--upgrade-package", "alpha", "--summary", str(summary))
    assert result.returncode == 0, result.stderr
    assert "upgraded" in result.stdout and "alpha" in result.stdout
    assert "| `alpha` | upgraded | 1.1 (registry) | 2.0 (registry) | yes |" in summary.read_text()


def test_resolution_error_leaves_lock_untouched(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    assert depsync(project, "--runner", "docker", "--image", IMAGE).returncode == 0
    before = (project / "uv.lock").read_bytes()
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text().replace('"gamma"', '"gamma", "nosuchpkg"'))
    result = depsync(project, "--runner", "docker", "--image", IMAGE)
    assert result.returncode == 2
    error = [line for line in result.stderr.splitlines() if line.startswith("depsync: error:")]
    assert len(error) == 1 and "lock failed; uv.lock is unchanged" in error[0] and "nosuchpkg" in error[0]
    assert (project / "uv.lock").read_bytes() == before
    assert leftovers(engine) == []


def test_timeout_stops_and_removes_the_container(engine, slow_image: str, project: Path) -> None:  # type: ignore[no-untyped-def]
    assert depsync(project, "--runner", "local").returncode == 0
    before = (project / "uv.lock").read_bytes()
    started = time.monotonic()
    result = depsync(project, "--runner", "docker", "--image", slow_image, "--timeout", "3")
    assert time.monotonic() - started < 40
    assert result.returncode == 2
    assert "did not finish within 3s" in result.stderr
    assert (project / "uv.lock").read_bytes() == before
    assert leftovers(engine) == []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_signal_during_run_removes_the_container(engine, slow_image: str, project: Path, signum: int) -> None:  # type: ignore[no-untyped-def]
    """Through the CLI (depsync.shell.signals): exit 128 + signum, like a shell (130, 143, 129)."""
    assert depsync(project, "--runner", "local").returncode == 0
    before = (project / "uv.lock").read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "depsync", "lock", str(project), "--runner", "docker", "--image", slow_image],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not [c for c in leftovers(engine) if c.labels.get(ROLE) == "lock" and c.status == "running"]:
        assert time.monotonic() < deadline, "the lock container never started"
        time.sleep(0.2)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert (project / "uv.lock").read_bytes() == before
    assert leftovers(engine) == []


def test_engine_unreachable(project: Path, tmp_path: Path) -> None:
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/no-engine.sock")
    result = depsync(project, "--runner", "docker", "--image", IMAGE, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no Docker engine answers" in lines[0] and "--runner local" in lines[0]
    assert not (project / "uv.lock").exists()


def test_missing_image_says_what_to_do(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    result = depsync(project, "--runner", "docker", "--image", "depsync-test:does-not-exist")
    assert result.returncode == 2
    assert "is not on this engine and pulling it failed" in result.stderr and "--build" in result.stderr


def test_tokens_never_appear_in_output(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    token, password = "ghp_plantedTokenValue123", "plantedPasswordValue456"
    text = (project / "pyproject.toml").read_text().replace('"gamma"', '"gamma", "secretpkg"')
    text += f'\n[tool.uv.sources]\nsecretpkg = {{ git = "https://user:{token}@git.invalid/secret.git" }}\n'
    (project / "pyproject.toml").write_text(text)
    env = dict(os.environ, UV_INDEX_PRIVATE_PASSWORD=password, UV_INDEX_PRIVATE_USERNAME="someone")
    result = depsync(project, "--runner", "docker", "--image", IMAGE, env=env)
    assert result.returncode == 2  # git.invalid cannot be fetched
    assert token not in result.stdout + result.stderr
    assert password not in result.stdout + result.stderr
    assert leftovers(engine) == []


def test_build_the_dockerfile_target(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    (project / "docker").mkdir()
    (project / "docker" / "Dockerfile.ci.dev").write_text(f"FROM {IMAGE} AS main\nENV DEPSYNC_BUILT=1\n")
    with (project / "pyproject.toml").open("a") as file:  # it runs no uv: named, not discovered
        file.write('\n[tool.depsync]\ndockerfiles = ["docker/Dockerfile.ci.dev"]\n')
    result = depsync(project, "--runner", "docker", "--build", "--target", "main")
    assert result.returncode == 0, result.stderr
    assert "built from docker/Dockerfile.ci.dev" in result.stderr
    import re

    tag = re.search(r"image (depsync-lock:[0-9a-f]{12})", result.stderr)
    assert tag, result.stderr
    engine.images.remove(tag.group(1))  # one tag per project path: this test's project is gone after it


def test_auto_uses_docker_and_image_from_config(engine, project: Path) -> None:  # type: ignore[no-untyped-def]
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text() + f'\n[tool.depsync]\nimage = "{IMAGE}"\n')
    result = depsync(project)
    assert result.returncode == 0, result.stderr
    assert f"docker runner, image {IMAGE} ([tool.depsync] image)" in result.stderr


def test_reconcile_relocks_in_the_container(engine, project: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from conftest import git

    (project / ".github").mkdir()
    (project / ".github" / "CODEOWNERS").write_text("* @dev\n")
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text() + f'\n[tool.depsync]\nowner-ref = "dev"\nupstream-ref = "main"\nimage = "{IMAGE}"\n')
    assert depsync(project, "--runner", "local").returncode == 0
    git(project, "init", "-q", "-b", "dev")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    git(project, "checkout", "-q", "-b", "main")
    (project / ".github" / "CODEOWNERS").write_text("* @main\n")
    git(project, "commit", "-qam", "main")
    git(project, "checkout", "-q", "dev")
    (project / "pyproject.toml").write_text((project / "pyproject.toml").read_text().replace('"alpha>=1.0"', '"alpha<2"'))
    git(project, "commit", "-qam", "dev: alpha<2 (not relocked)")
    git(project, "checkout", "-q", "-b", "sync")
    subprocess.run(["git", "-C", str(project), "merge", "-q", "main"], capture_output=True)
    plan = tmp_path / "plan.json"
    # dev is the operator's to name (here there is no origin/dev); the policy is dev's committed [tool.depsync]
    result = subprocess.run([sys.executable, "-m", "depsync", "reconcile", str(project), "--dev", "dev", "--plan-json", str(plan)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    import json

    lock = json.loads(plan.read_text())["lock"]
    assert f"docker runner, image {IMAGE}" in lock["note"]
    assert sorted((c["name"], c["kind"]) for c in lock["changes"]) == [("alpha", "downgraded"), ("gamma", "downgraded")]  # gamma 1.5 needs alpha>=2
    assert (project / ".github" / "CODEOWNERS").read_text() == "* @dev\n"
    assert leftovers(engine) == []
