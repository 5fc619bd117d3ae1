"""`depsync check` end to end: real files, real git repos, exit codes and output formats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, init_repo, warnings_only, write_files
from support import LOCK, PYPROJECT, depsync


def assert_clean_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stderr + result.stdout
    lines = result.stderr.rstrip("\n").splitlines()
    # one line, then at most a TOML error's frame (the source line and a caret, uv's gutter)
    assert len(lines) in (1, 4) and all(re.match(r"^ *\d* \|", line) for line in lines[1:]), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0]


def test_bundled_megatron_example_errs_only_on_renamed_cuda_flags(megatron_dev_project: Path) -> None:
    result = depsync("check", str(megatron_dev_project), "--format", "json")
    assert result.returncode == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["schema"] == "depsync.check/2"
    assert document["summary"]["errors"] == 12
    assert {f["rule"] for f in document["findings"] if f["severity"] == "error"} == {"docker-no-install-renamed"}
    warnings_only(megatron_dev_project)
    result = depsync("check", str(megatron_dev_project), "--format", "json")
    assert result.returncode == 0, result.stdout
    for finding in document["findings"]:
        assert set(finding) == {"file", "line", "rule", "severity", "message", "fix"}
    strict = depsync("check", str(megatron_dev_project), "--strict")
    assert strict.returncode == 1  # the branch/tag pins warn


def test_main_style_dockerfile_gives_two_findings_with_lines(megatron_dev_project: Path) -> None:
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    dockerfile.write_text(dockerfile.read_text().replace("--extra mlm \\", "--extra mlm --extra te --extra ssm \\"))
    warnings_only(megatron_dev_project)
    result = depsync("check", str(megatron_dev_project), "--format", "github")
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 2
    # `--extra mlm` is on line 37: the heredoc starts after the `RUN --mount=... \` continuation line
    assert all("file=docker/Dockerfile.ci.dev,line=37,title=depsync docker-unknown-extra" in line for line in errors)


def test_human_output_groups_by_file(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>=2"), "uv.lock": LOCK})
    result = depsync("check", str(tmp_path))
    assert result.returncode == 1
    assert "pyproject.toml:9 error lock-stale" in result.stdout
    assert "fix: run `depsync lock`" in result.stdout
    write_files(tmp_path, {"pyproject.toml": PYPROJECT})
    clean = depsync("check", str(tmp_path))
    assert clean.returncode == 0 and "is consistent" in clean.stdout


@pytest.mark.parametrize(
    "files, needles",
    [
        ({"pyproject.toml": "[project\nname = 1", "uv.lock": LOCK}, ["pyproject.toml:1:9: not valid TOML"]),
        ({"pyproject.toml": PYPROJECT, "uv.lock": "version = 1\n[[package]\n"}, ["uv.lock:2:10: not valid TOML"]),
        ({"pyproject.toml": PYPROJECT}, ["uv.lock not found"]),
        ({"uv.lock": LOCK}, ["no pyproject.toml in", "or any parent directory"]),
        ({"pyproject.toml": '[project]\nname = "x"\ndependencies = "alpha"\n', "uv.lock": LOCK}, ["project.dependencies must be a list"]),
        (
            {"pyproject.toml": PYPROJECT + '[tool.depsync]\nprotected = ["x"]\n', "uv.lock": LOCK},
            ["unknown [tool.depsync] key 'protected' (did you mean 'protected-paths'?)", "valid keys:"],
        ),
        (
            {
                "pyproject.toml": PYPROJECT + '[tool.depsync]\ndockerfiles = ["Dockerfile"]\n',
                "uv.lock": LOCK,
                "Dockerfile": "FROM base\nRUN <<EOF\nuv sync\n",
            },
            ["Dockerfile", "does not parse"],
        ),
        (
            {"pyproject.toml": PYPROJECT + '[tool.depsync]\ndockerfiles = ["docker/missing"]\n', "uv.lock": LOCK},
            ["docker/missing not found"],
        ),
        ({"pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>>1"), "uv.lock": LOCK}, ["invalid requirement 'alpha>>1'"]),
    ],
    ids=["bad-pyproject", "bad-lock", "no-lock", "no-pyproject", "wrong-type", "unknown-config", "bad-dockerfile", "missing-dockerfile", "bad-requirement"],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, files: dict[str, str], needles: list[str]) -> None:
    write_files(tmp_path, files)
    assert_clean_error(depsync("check", str(tmp_path)), *needles)


def test_debug_shows_traceback(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": "[project\n", "uv.lock": LOCK})
    result = depsync("--debug", "check", str(tmp_path))
    assert result.returncode != 0 and "Traceback" in result.stderr


def test_usage_error_exits_2(tmp_path: Path) -> None:
    assert_clean_error(depsync("check", "--format", "xml"), "invalid choice")
    assert_clean_error(depsync("check", str(tmp_path / "nope")), "is not a directory")


def test_conflict_markers_in_lock_are_a_finding(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK.replace('[[package]]\nname = "beta"', '<<<<<<< HEAD\n=======\n>>>>>>> main\n[[package]]\nname = "beta"')})
    result = depsync("check", str(tmp_path), "--format", "json")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["rule"] == "conflict-markers" and finding["file"] == "uv.lock" and finding["line"] == 12


@pytest.fixture
def synced_repo(tmp_path: Path) -> Path:
    """A real repo: `dev` owns CODEOWNERS and the triple, a `sync` branch is checked out."""
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, ".github/CODEOWNERS": "* @dev-team\n"}, branch="dev")
    git(repo, "checkout", "-q", "-b", "sync")
    return repo


def test_protected_path_against_owner_ref(synced_repo: Path) -> None:
    clean = depsync("check", str(synced_repo), "--owner-ref", "dev", "--format", "json")
    assert json.loads(clean.stdout)["findings"] == [] and clean.returncode == 0
    (synced_repo / ".github" / "CODEOWNERS").write_text("* @main-team\n")
    result = depsync("check", str(synced_repo), "--owner-ref", "dev", "--format", "json")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["rule"] == "protected-path-changed"
    assert finding["fix"] == "git checkout dev -- .github/CODEOWNERS"


def test_default_owner_ref_missing_is_a_note_explicit_is_an_error(synced_repo: Path) -> None:
    result = depsync("check", str(synced_repo), "--format", "json")
    assert result.returncode == 0
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["protected-unchecked"]
    assert_clean_error(depsync("check", str(synced_repo), "--owner-ref", "origin/nope"), "git ref 'origin/nope' not found")


def test_ref_reads_blobs_without_checkout(synced_repo: Path) -> None:
    (synced_repo / "pyproject.toml").write_text(PYPROJECT.replace("alpha>=1", "alpha>=2"))
    git(synced_repo, "commit", "-qam", "bump alpha without relocking")
    (synced_repo / "pyproject.toml").write_text(PYPROJECT)  # the work tree is fine again
    at_head = depsync("check", str(synced_repo), "--ref", "HEAD", "--owner-ref", "dev", "--format", "json")
    assert at_head.returncode == 1
    assert [f["rule"] for f in json.loads(at_head.stdout)["findings"]] == ["lock-stale"]
    assert depsync("check", str(synced_repo), "--ref", "dev", "--owner-ref", "dev").returncode == 0
    assert_clean_error(depsync("check", str(synced_repo), "--ref", "no-such-branch"), "git ref 'no-such-branch' not found")


def test_ref_outside_a_repository(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    assert_clean_error(depsync("check", str(tmp_path), "--ref", "HEAD"), "needs a git repository")


def test_secrets_in_source_urls_are_masked(tmp_path: Path) -> None:
    secret = "ghp_plantedSecret123"
    pyproject = PYPROJECT.replace("https://example.com/beta.git", f"https://user:{secret}@example.com/beta.git").replace(
        'rev = "0123456789abcdef0123456789abcdef01234567"', 'branch = "main"'
    )
    write_files(tmp_path, {"pyproject.toml": pyproject, "uv.lock": LOCK})
    for fmt in ("human", "json", "github"):
        result = depsync("check", str(tmp_path), "--format", fmt)
        assert result.returncode == 1
        assert secret not in result.stdout + result.stderr


def test_human_output_off_a_terminal_is_plain_and_imports_no_rich(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>=2"), "uv.lock": LOCK})
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # an empty result cache: the whole check runs
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "depsync", "check", str(tmp_path)], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("pyproject.toml:9 error lock-stale ") and "\x1b[" not in result.stdout
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "depsync.core.rules.freshness" in imported and not {m for m in imported if m.split(".")[0] == "rich"}
