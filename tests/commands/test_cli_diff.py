"""`depsync diff`: real Megatron locks, REF:path through git, the three formats."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MEGATRON, git, init_repo


def depsync(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "diff", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    if not MEGATRON.exists():
        pytest.skip("real Megatron-LM data not available")
    repo = init_repo(tmp_path / "repo", {"uv.lock": (MEGATRON / "main" / "uv.lock").read_text()})
    shutil.copy(MEGATRON / "dev" / "uv.lock", repo / "uv.lock")
    return repo


def test_megatron_main_vs_dev_json(locks: Path) -> None:
    result = depsync("--format", "json", cwd=locks)  # HEAD:uv.lock (main's) vs the work tree (dev's)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "depsync.diff/2"
    by_name: dict[str, list[dict]] = {}
    for change in document["changes"]:
        by_name.setdefault(change["name"], []).append(change)
    (te,) = by_name["transformer-engine"]
    te_repo = "https://github.com/NVIDIA/TransformerEngine.git"
    assert te["old"] == {"version": "2.17.1+4329ff84", "source": "git", "url": te_repo, "commit": "4329ff84bfbdaa778a33cba02a15fb0807c64689"}
    assert te["new"] == {"version": "2.14.0+f031cf87", "source": "git", "url": te_repo, "commit": "f031cf87bd054c7558b887df7bed93975456667f"}
    assert te["direct"] and te["kind"] == "downgraded" and not te["forked"]
    # forked: main's registry 1.26.0 pairs with dev's registry 1.25.0; dev's git 1.25.0 is new beside it
    cudnn = sorted(by_name["nvidia-cudnn-frontend"], key=lambda c: c["kind"])
    assert [c["kind"] for c in cudnn] == ["added", "downgraded"] and all(c["forked"] for c in cudnn)
    added, downgraded = cudnn
    assert added["old"] is None and added["new"]["source"] == "git" and added["new"]["commit"].startswith("0a14b718")
    assert (downgraded["old"]["version"], downgraded["new"]["version"]) == ("1.26.0", "1.25.0")
    assert downgraded["old"]["source"] == downgraded["new"]["source"] == "registry" and "commit" not in downgraded["old"]
    assert not by_name["urllib3"][0]["direct"] if "urllib3" in by_name else True


def test_registry_versions_are_unlabelled_and_git_ones_named(locks: Path) -> None:
    table = depsync("--format", "markdown", cwd=locks).stdout
    assert "| `transformer-engine` | downgraded | 2.17.1+4329ff84 (git 4329ff84) | 2.14.0+f031cf87 (git f031cf87) | yes |" in table
    assert "| `nvidia-cudnn-frontend` (forked) | downgraded | 1.26.0 | 1.25.0 | yes |" in table
    assert "(registry)" not in table
    labelled = depsync("--format", "markdown", "--show-registry", cwd=locks).stdout
    assert "| 1.26.0 (registry) | 1.25.0 (registry) |" in labelled


def test_exit_code_like_git_diff(locks: Path) -> None:
    assert depsync("--exit-code", cwd=locks).returncode == 1
    assert depsync("--exit-code", "HEAD:uv.lock", "HEAD:uv.lock", cwd=locks).returncode == 0
    assert depsync("HEAD:uv.lock", "uv.lock", cwd=locks).returncode == 0  # without it: 0 whatever changed


def test_project_path_positional_or_dash_c(locks: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    positional = depsync(str(locks), "--format", "json", cwd=elsewhere)
    dash_c = depsync("-C", str(locks), "--format", "json", cwd=elsewhere)
    long_form = depsync("--project", str(locks), "--format", "json", cwd=elsewhere)
    assert positional.returncode == dash_c.returncode == long_form.returncode == 0, positional.stderr + dash_c.stderr
    assert json.loads(positional.stdout)["changes"] == json.loads(dash_c.stdout)["changes"] == json.loads(long_form.stdout)["changes"]


def test_markdown_collapses_long_lists_and_keeps_direct_ones_visible(locks: Path) -> None:
    result = depsync("HEAD:uv.lock", "uv.lock", "--format", "markdown", cwd=locks)
    assert result.returncode == 0
    visible, _, hidden = result.stdout.partition("<details>")
    assert "`transformer-engine` downgraded" in visible
    assert "| `transformer-engine` | downgraded |" in hidden and hidden.rstrip().endswith("</details>")


def test_human_table_and_ref_to_ref(locks: Path) -> None:
    git(locks, "commit", "-qam", "dev's lock")
    result = depsync("HEAD~1:uv.lock", "HEAD:uv.lock", cwd=locks)
    assert result.returncode == 0
    assert "transformer-engine" in result.stdout and "2.14.0+f031cf87 (git f031cf87)" in result.stdout
    assert "nvidia-cudnn-frontend (forked)" in result.stdout
    same = depsync("HEAD:uv.lock", "uv.lock", cwd=locks)
    assert "no package changed" in same.stdout


def test_bad_specs_exit_2(locks: Path) -> None:
    for args, needle in ((["nope:uv.lock"], "git ref 'nope' not found"), (["HEAD:missing.lock"], "missing.lock does not exist at HEAD"), (["x.lock"], "x.lock not found")):
        result = depsync(*args, cwd=locks)
        assert result.returncode == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_forked_wheel_urls_that_move_are_upgrades_with_real_uv(tmp_path: Path) -> None:
    """Two direct wheel URLs, one per Python (the flash-attn pattern), both moved to a newer
    release: real uv writes four entries across the two locks; the diff pairs them by fork."""
    from uvprojects import build_find_links, run_uv, serve_directory, uv_env

    wheels = build_find_links(tmp_path / "wheels")
    env = uv_env(tmp_path / "uv-cache", tmp_path / "uv-config")
    project = tmp_path / "proj"
    project.mkdir()

    def lock(low: str, high: str, base: str) -> str:
        (project / "pyproject.toml").write_text(
            '[project]\nname = "proj"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = [\n'
            f"  \"alpha @ {base}/alpha-{low}-py3-none-any.whl ; python_version < '3.11'\",\n"
            f"  \"alpha @ {base}/alpha-{high}-py3-none-any.whl ; python_version >= '3.11'\",\n]\n"
        )
        result = run_uv(["lock", "-q"], project, env)
        assert result.returncode == 0, result.stderr
        return (project / "uv.lock").read_text()

    with serve_directory(wheels) as base:
        (tmp_path / "old.lock").write_text(lock("1.0", "1.1", base))
        (tmp_path / "new.lock").write_text(lock("2.0", "2.1rc1", base))
    result = depsync("--format", "json", str(tmp_path / "old.lock"), str(tmp_path / "new.lock"), cwd=project)
    assert result.returncode == 0, result.stderr
    changes = json.loads(result.stdout)["changes"]
    assert [(c["kind"], c["old"]["version"], c["new"]["version"]) for c in changes] == [("upgraded", "1.0", "2.0"), ("upgraded", "1.1", "2.1rc1")]
    assert all(c["old"]["source"] == c["new"]["source"] == "url" and c["forked"] for c in changes)
    assert changes[0]["new"]["url"].endswith("/alpha-2.0-py3-none-any.whl")
