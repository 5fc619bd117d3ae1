"""lock-artifact-mismatch on direct-URL wheels whose file name carries a local version.

GPU projects publish renamed builds of one release (`flash_attn-1.2.0+cu12torch2.10cxx11abiTRUE-
cp311-cp311-linux_x86_64.whl` whose METADATA says `1.2.0`). uv takes the version from the wheel's
METADATA, so the lock says `version = "1.2.0"` next to that file name: uv's own record, not a hand
edit. Checked here with real uv on real wheels, from a path and from a URL (a loopback server),
and a wheel of another release or name stays an error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import depsync, inputs
from uvprojects import (
    FakeDist,
    lock_project,
    serve_directory,
    uv_check,
    uv_env,
    wheel_bytes,
)

from depsync.core.rules.integrity import _local_only_difference
from depsync.core.rules.run import run_rules

RENAMED = "flash_attn-1.2.0+cu12torch2.10cxx11abiTRUE-cp311-cp311-linux_x86_64.whl"


def project(root: Path, requirement: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(
        "[project]\nname = \"gpu-app\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\n"
        f"dependencies = [\"{requirement}\"]\n\n[tool.uv]\nenvironments = [\"sys_platform == 'linux'\"]\n"
    )
    return root


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    directory = tmp_path / "wheels"
    directory.mkdir()
    # the release's METADATA says 1.2.0; only the file name carries the build's local segment
    (directory / RENAMED).write_bytes(wheel_bytes(FakeDist("flash-attn", "1.2.0")))
    return directory


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return uv_env(tmp_path / "uv-cache", tmp_path / "uv-config")


def artifact_findings(root: Path) -> list[str]:
    result = depsync("check", str(root), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return [line for line in result.stdout.splitlines() if "lock-artifact" in line]


def test_uv_records_the_metadata_version_for_a_path_wheel(tmp_path: Path, wheels: Path, env: dict[str, str]) -> None:
    root = project(tmp_path / "app", f"flash-attn @ {(wheels / RENAMED).as_uri()}")
    lock_project(root, env)
    lock = (root / "uv.lock").read_text()
    # what uv writes: the METADATA version, and the file name (lower-cased) with the local segment
    assert 'name = "flash-attn"\nversion = "1.2.0"\nsource = { path = ' in lock
    assert "flash_attn-1.2.0+cu12torch2.10cxx11abitrue-cp311-cp311-linux_x86_64.whl" in lock
    assert uv_check(root, env)
    result = depsync("check", str(root))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lock-artifact-mismatch" not in result.stdout


def test_uv_records_the_metadata_version_for_a_url_wheel(tmp_path: Path, wheels: Path, env: dict[str, str]) -> None:
    with serve_directory(wheels) as base:
        root = project(tmp_path / "app", f"flash-attn @ {base}/{RENAMED}")
        lock_project(root, env, offline=False)  # a loopback server, no network
        lock = (root / "uv.lock").read_text()
        assert 'version = "1.2.0"\nsource = { url = ' in lock and "+cu12torch2.10cxx11abi" in lock
        assert uv_check(root, env)
    result = depsync("check", str(root))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "lock-artifact-mismatch" not in result.stdout


def test_a_hand_edited_version_of_a_direct_wheel_stays_an_error(tmp_path: Path, wheels: Path, env: dict[str, str]) -> None:
    root = project(tmp_path / "app", f"flash-attn @ {(wheels / RENAMED).as_uri()}")
    lock_project(root, env)
    path = root / "uv.lock"
    text = path.read_text()
    # another release's version, then another package's file name: both hand edits
    path.write_text(text.replace('version = "1.2.0"', 'version = "1.3.0"', 1))
    result = depsync("check", str(root))
    assert result.returncode == 1 and "lock-artifact-mismatch" in result.stdout
    assert "flash-attn 1.3.0 lists artifact flash_attn-1.2.0+cu12torch2.10cxx11abitrue" in result.stdout
    path.write_text(text.replace('{ filename = "flash_attn-1.2.0', '{ filename = "flash_mla-1.2.0', 1))
    result = depsync("check", str(root))
    assert result.returncode == 1 and "which is flash-mla 1.2.0+cu12torch2.10cxx11abitrue" in result.stdout


REGISTRY_LOCK = """\
version = 1
revision = 3
requires-python = ">=3.11"

[[package]]
name = "torch"
version = "2.7.0"
source = { registry = "https://download.pytorch.org/whl/cu128" }
wheels = [
    { url = "https://download.pytorch.org/whl/cu128/torch-2.7.0%2Bcu128-cp311-cp311-manylinux_2_28_x86_64.whl", hash = "sha256:HASH" },
]
""".replace("HASH", "0" * 64)


def test_an_index_wheel_with_a_local_version_the_lock_lacks_is_still_an_error() -> None:
    # from an index, uv records the version the file name says (`2.7.0+cu128`): dropping it is an edit
    findings = run_rules(inputs('[project]\nname = "demo"\nversion = "0"\ndependencies = ["torch"]\n', REGISTRY_LOCK))
    assert [f.rule for f in findings if f.rule.startswith("lock-artifact")] == ["lock-artifact-mismatch"]


@pytest.mark.parametrize(
    ("file_version", "locked", "same_release"),
    [("1.2.0+cu12torch2.10", "1.2.0", True), ("1.2.0", "1.2.0", False), ("1.2.1+cu12", "1.2.0", False),
     ("1.2.0+cu12", "1.2.0+cu13", False), ("not a version", "1.2.0", False)],
)
def test_local_only_difference(file_version: str, locked: str, same_release: bool) -> None:
    assert _local_only_difference(file_version, locked) is same_release
