"""`depsync check` with no `dockerfiles` configured, on a discovered CI Dockerfile that does not
parse: a `docker-unparsed` error when its text runs uv on the project (and `depsync lock` refuses
to relock: the uv version it pins is unknown), nothing for another broken Dockerfile, and the
cache sees the fix.

Real inputs: the bundled Megatron dev triple (real pyproject.toml and uv.lock, the CI
Dockerfile as documented), its Dockerfile broken the way people break one (the closing `EOF`
of the `uv sync` heredoc forgotten), real git, the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, warnings_only

from depsync.core import limits

CI = "docker/Dockerfile.ci.dev"
UV_RUN_LINE, UV_SYNC_LINE = 28, 33  # the RUN whose heredoc runs `uv sync`, and its first `uv sync`
FIX = "fix the syntax (docker build fails on it too), or list the Dockerfiles to check in [tool.depsync] dockerfiles"


def depsync(project: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", "check", str(project), *args], capture_output=True, text=True, env=env)


def findings(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return json.loads(result.stdout)["findings"]  # type: ignore[no-any-return]


def unparsed(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [f for f in findings(result) if f["rule"] == "docker-unparsed"]


@pytest.fixture
def project(megatron_dev_project: Path) -> Path:
    """The Megatron dev triple, exit 0 as it is (its renamed CUDA flags made warnings)."""
    return warnings_only(megatron_dev_project)


def break_heredoc(project: Path) -> str:
    """Drop the `EOF` that closes the `uv sync` heredoc; returns the file as it was."""
    path = project / CI
    good = path.read_text()
    head, _, tail = good.rpartition("\nEOF\n")
    path.write_text(head + "\n" + tail)
    return good


def test_a_ci_dockerfile_that_does_not_parse_is_an_error_with_its_line(project: Path) -> None:
    """It was a warning and the gate passed: a CI image that runs `uv sync` went unchecked."""
    break_heredoc(project)
    result = depsync(project, "--no-cache", "--format", "json")
    assert result.returncode == 1, result.stderr  # an error: the gate fails
    (finding,) = unparsed(result)
    assert finding == {
        "file": CI,
        "line": UV_RUN_LINE,
        "rule": "docker-unparsed",
        "severity": "error",
        "message": f"runs `uv sync` (line {UV_SYNC_LINE}) but does not parse (unterminated heredoc; line {UV_RUN_LINE} opens a "
        "heredoc that never ends), so nothing in it was checked",
        "fix": FIX,
    }
    assert not [f for f in findings(result) if str(f["rule"]).startswith("docker-") and f["rule"] != "docker-unparsed"]
    verbose = depsync(project, "--no-cache", "-v")
    assert f"{CI}:{UV_RUN_LINE} error docker-unparsed" in verbose.stdout
    assert verbose.stdout.splitlines()[-1].endswith("; checked 0 Dockerfiles")
    assert f"Dockerfile not checked: {CI}: not read: Dockerfile does not parse: unterminated heredoc" in verbose.stderr


def test_lock_refuses_to_relock_without_the_uv_version_of_a_broken_ci_dockerfile(project: Path) -> None:
    """The Dockerfile check reads is the one lock takes its uv from: unreadable, no relock with another uv."""
    break_heredoc(project)
    before = (project / "uv.lock").read_bytes()
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", str(project), "--runner", "local"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("depsync: error:")]
    assert error.startswith(f"depsync: error: {CI}:{UV_RUN_LINE}: runs `uv sync` (line {UV_SYNC_LINE}) but does not parse")
    assert "the uv version it pins is unknown" in error and "uv.lock is unchanged" in error
    assert (project / "uv.lock").read_bytes() == before


def test_a_parse_error_without_a_line_points_at_the_first_uv_command(project: Path) -> None:
    path = project / CI
    path.write_text(path.read_text().replace("ENV UV_LINK_MODE=copy", "ENV UV_LINK_MODE"))
    (finding,) = unparsed(depsync(project, "--no-cache", "--format", "json"))
    assert finding["line"] == UV_SYNC_LINE and "(ENV must have two arguments; the error names no line)" in str(finding["message"])


def test_another_broken_dockerfile_is_no_finding(project: Path) -> None:
    """A docs image that does not parse, and one that runs uv but not on this project: -v only."""
    (project / "docker" / "Dockerfile.docs").write_text("FROM python:3.12\nRUN <<EOF\npip install mkdocs\nmkdocs build\n")
    (project / "Dockerfile.lint").write_text("FROM python:3.12\nRUN <<EOF\nuv pip install --system ruff\n")
    result = depsync(project, "--no-cache", "--format", "json")
    assert result.returncode == 0 and unparsed(result) == []
    verbose = depsync(project, "--no-cache", "-v")
    assert "Dockerfile not checked: docker/Dockerfile.docs: not read: Dockerfile does not parse: unterminated heredoc" in verbose.stderr
    assert "Dockerfile not checked: Dockerfile.lint: not read: Dockerfile does not parse: unterminated heredoc" in verbose.stderr
    assert f"Dockerfiles checked (found in the project): {CI}" in verbose.stderr


def test_an_oversized_ci_dockerfile_gives_the_bound(project: Path) -> None:
    path = project / CI
    padding = "".join(f'LABEL org.example.note{i}="{"x" * 100}"\n' for i in range(limits.MAX_DOCKERFILE_BYTES // 100))
    path.write_text(path.read_text() + padding)
    size = path.stat().st_size
    (finding,) = unparsed(depsync(project, "--no-cache", "--format", "json"))
    assert finding["line"] == UV_SYNC_LINE and finding["severity"] == "error"
    assert finding["message"] == (
        f"runs `uv sync` (line {UV_SYNC_LINE}) but is past depsync's bounds (the Dockerfile is {size} bytes; depsync reads at most "
        f"{limits.MAX_DOCKERFILE_BYTES} bytes per Dockerfile), so nothing in it was checked"
    )
    assert finding["fix"] == "simplify or split the Dockerfile (depsync's bounds are fixed), or list the Dockerfiles to check in [tool.depsync] dockerfiles"


def test_the_cache_sees_the_fixed_file(project: Path, tmp_path: Path) -> None:
    good = break_heredoc(project)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = depsync(project, "--format", "json", env=env)
    again = depsync(project, "--format", "json", "-v", env=env)
    assert "its result, from the cache" in again.stderr  # replayed: the same finding
    assert first.stdout == again.stdout and [f["line"] for f in unparsed(again)] == [UV_RUN_LINE]
    (project / CI).write_text(good)
    fixed = depsync(project, "--format", "json", env=env)
    assert fixed.returncode == 0 and unparsed(fixed) == []
    # the file is checked again: its own findings (the renamed CUDA flags, warnings here) are back
    assert {f["rule"] for f in findings(fixed) if f["file"] == CI} >= {"docker-no-install-renamed"}
    break_heredoc(project)
    assert [f["line"] for f in unparsed(depsync(project, "--format", "json", env=env))] == [UV_RUN_LINE]


def test_at_a_ref_the_committed_file_is_read(project: Path) -> None:
    git(project, "init", "-q", "-b", "dev")
    break_heredoc(project)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "broken CI image")
    git(project, "checkout", "-q", "--", ".")
    (project / CI).unlink()  # gone from the work tree, broken at HEAD
    result = depsync(project, "--ref", "HEAD", "--no-cache", "--format", "json")
    assert [(f["file"], f["line"]) for f in unparsed(result)] == [(CI, UV_RUN_LINE)]


def test_a_configured_dockerfile_that_does_not_parse_stops_the_check(project: Path) -> None:
    """Unchanged: naming the file is asking for it to be checked, so it is an input error (exit 2)."""
    break_heredoc(project)
    result = depsync(project, "--no-cache", "--dockerfile", CI)
    assert result.returncode == 2 and f"{CI}: Dockerfile does not parse: unterminated heredoc" in result.stderr
