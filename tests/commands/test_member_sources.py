"""A workspace member's own [tool.uv.sources] get the root's pin policy, host policy, inert-source
and metadata rules: a member's `zeta = { git = "..." }` without a rev was missed, the root's reported.

Real inputs: a real uv workspace (root + member), locked by real uv offline against a local wheel
index and a file:// git repository; the CLI in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import uv_lock
from support import depsync
from uvprojects import LocalMaterial, uv_check

MEMBER = "packages/member/pyproject.toml"


def _workspace(root: Path, material: LocalMaterial, member_sources: str, root_tables: str = "") -> Path:
    (root / "packages" / "member").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "root-app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["member", "alpha"]\n\n'
        '[tool.uv.workspace]\nmembers = ["packages/*"]\n\n[tool.uv.sources]\nmember = { workspace = true }\n'
        + root_tables + material.index_toml()
    )
    (root / MEMBER).write_text(
        '[project]\nname = "member"\nversion = "0.2.0"\nrequires-python = ">=3.10"\ndependencies = ["zeta"]\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        "[tool.uv.sources]\n" + member_sources
    )
    uv_lock(root, material)
    assert uv_check(root, material.env)  # uv: fresh
    return root


def findings(root: Path, *args: str) -> list[dict]:  # type: ignore[type-arg]
    result = depsync("check", str(root), "--no-cache", "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["rule"] != "protected-unchecked"]


def test_a_members_git_source_without_a_rev_is_reported_like_the_roots(tmp_path: Path, material: LocalMaterial) -> None:
    root = _workspace(tmp_path / "ws", material, f'zeta = {{ git = "{material.git.url}" }}\n')
    (finding,) = [f for f in findings(root) if f["rule"] == "source-pin-not-commit"]
    locked = material.git.commits["c2"]  # the head of main, which uv resolved the default branch to
    assert finding["file"] == MEMBER and finding["line"] == 12
    assert finding["message"].startswith("zeta is pinned to no rev (the default branch), which can move")
    assert finding["fix"] == f'pin rev = "{locked}" (the commit the lock resolved the default branch to), then relock with `depsync lock`'
    # the same entry in the root is reported the same way (it was, before)
    rooted = _workspace(tmp_path / "rooted", material, "", f'zeta = {{ git = "{material.git.url}" }}\n')
    (at_root,) = [f for f in findings(rooted) if f["rule"] == "source-pin-not-commit"]
    assert at_root["file"] == "pyproject.toml" and at_root["message"] == finding["message"] and at_root["fix"] == finding["fix"]


def test_a_members_full_commit_pin_is_clean(tmp_path: Path, material: LocalMaterial) -> None:
    root = _workspace(tmp_path / "ws", material, f'zeta = {{ git = "{material.git.url}", rev = "{material.git.commits["c1"]}" }}\n')
    assert findings(root) == []


def test_a_members_inert_source_and_host_policy(tmp_path: Path, material: LocalMaterial) -> None:
    c1 = material.git.commits["c1"]
    sources = f'zeta = {{ git = "{material.git.url}", rev = "{c1}" }}\neta = {{ git = "{material.git.url}", subdirectory = "sub/eta", rev = "{c1}" }}\n'
    root = _workspace(tmp_path / "ws", material, sources)
    (inert,) = [f for f in findings(root) if f["rule"] == "source-inert"]
    assert inert["file"] == MEMBER and inert["message"].startswith("source for eta is inert")
    with (root / "pyproject.toml").open("a") as file:
        file.write('\n[tool.depsync]\nallowed-hosts = ["github.com"]\n')
    hosts = [f for f in findings(root) if f["rule"] == "source-host-not-allowed"]
    assert {f["file"] for f in hosts} == {MEMBER} and len(hosts) == 2


@pytest.mark.parametrize("local", ["deadbeef", "c1"])
def test_root_dependency_metadata_follows_a_members_source(tmp_path: Path, material: LocalMaterial, local: str) -> None:
    c1 = material.git.commits["c1"]
    segment = c1[:8] if local == "c1" else local
    metadata = f'\n[[tool.uv.dependency-metadata]]\nname = "zeta"\nversion = "1.0.0+{segment}"\nrequires-dist = ["alpha"]\n'
    root = _workspace(tmp_path / "ws", material, f'zeta = {{ git = "{material.git.url}", rev = "{c1}" }}\n', metadata)
    mismatched = [f for f in findings(root) if f["rule"] == "metadata-rev-mismatch"]
    if local == "c1":
        assert mismatched == []
    else:
        (finding,) = mismatched
        assert finding["file"] == "pyproject.toml"
        assert finding["message"] == f"dependency-metadata for zeta says version 1.0.0+deadbeef (sha deadbeef) but its source (in {MEMBER}) is pinned at rev {c1}"
        assert finding["fix"] == f'set version = "1.0.0+{c1[:8]}" and relock'


def test_fix_pins_a_members_source_in_the_members_file(tmp_path: Path, material: LocalMaterial) -> None:
    """`check --fix` pins a member's source where it is written, as it pins the root's."""
    root = _workspace(tmp_path / "ws", material, f'zeta = {{ git = "{material.git.url}" }}  # the member\'s own\n')
    before = (root / "pyproject.toml").read_bytes()
    result = depsync("check", str(root), "--no-cache", "--fix")
    assert "Traceback" not in result.stderr, result.stderr
    member = (root / MEMBER).read_text()
    (line,) = [line for line in member.splitlines() if line.startswith("zeta = ")]
    assert f'rev = "{material.git.commits["c2"]}"' in line and line.endswith("# the member's own")
    assert (root / "pyproject.toml").read_bytes() == before  # the root's file is not touched
    assert "source-pin-not-commit" not in depsync("check", str(root), "--no-cache", "--format", "json").stdout
