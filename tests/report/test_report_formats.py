"""GitHub annotations, SARIF and GitLab Code Quality: paths from the repository root, GitHub's
per-step annotation limit, rule links. Real input: Megatron-LM dev's triple (17+ findings)
in a subdirectory of a git repository, as a project like TGI's `server/` sits."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUNDLED, git

from depsync import HOMEPAGE
from depsync.core.findings import Finding, Severity
from depsync.report.findings import GITHUB_ANNOTATIONS_PER_LEVEL, to_github
from depsync.report.gitlab import to_gitlab

REPO = Path(__file__).resolve().parents[2]


def depsync(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "depsync", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def in_subdirectory(tmp_path: Path) -> Path:
    """A repository whose uv project is `server/` (the bundled Megatron dev triple)."""
    repo = tmp_path / "repo"
    shutil.copytree(BUNDLED / "megatron-dev", repo / "server")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    return repo


def annotations(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("::") and not line.startswith(("::group::", "::endgroup::"))]


def test_github_paths_are_from_the_repository_root_from_any_cwd(in_subdirectory: Path) -> None:
    for cwd, target in ((in_subdirectory, "server"), (in_subdirectory / "server", "."), (in_subdirectory / "server" / "docker", "..")):
        result = depsync("check", target, "--no-cache", "--format", "github", cwd=cwd)
        assert result.returncode == 1, result.stderr
        files = {part.split("=", 1)[1] for line in annotations(result.stdout) for part in line.split(" ", 1)[1].split("::")[0].split(",") if part.startswith("file=")}
        assert files == {"server/docker/Dockerfile.ci.dev", "server/pyproject.toml"}, (cwd, files)


def test_github_shows_at_most_ten_per_level_with_a_summary(in_subdirectory: Path) -> None:
    """Megatron dev: 12 errors (renamed CUDA flags) and 6 warnings: over GitHub's 10."""
    result = depsync("check", "server", "--no-cache", "--format", "github", cwd=in_subdirectory)
    shown = annotations(result.stdout)
    for level in ("error", "warning", "notice"):
        assert sum(1 for line in shown if line.startswith(f"::{level} ")) <= GITHUB_ANNOTATIONS_PER_LEVEL
    assert shown[0].startswith("::notice title=depsync check::12 error(s), 6 warning(s)")
    grouped = next(line for line in shown if "docker-no-install-renamed" in line)
    assert "line=45,endLine=56," in grouped and "12 findings, one fix" in grouped
    # nothing lost: every finding is in the log, one line each, in a collapsed group
    log = result.stdout.split("::group::depsync: every finding\n", 1)[1].split("::endgroup::")[0].splitlines()
    assert len(log) == 18 and log[0].startswith("server/docker/Dockerfile.ci.dev:11 warning uv-lock-newer-than-pin")


def test_github_past_the_limit_even_grouped_says_how_many_more() -> None:
    findings = [Finding(f"f{i}.toml", 1, "lock-stale", Severity.ERROR, f"m{i}", f"fix{i}") for i in range(14)]
    shown = annotations(to_github(findings))
    errors = [line for line in shown if line.startswith("::error ")]
    assert len(errors) == GITHUB_ANNOTATIONS_PER_LEVEL
    assert errors[-1].endswith("5 more error(s) in f5.toml, f6.toml, f7.toml, f8.toml, f9.toml: see the step's log")


def test_github_under_the_limit_is_one_annotation_per_finding() -> None:
    findings = [Finding("pyproject.toml", 3, "lock-stale", Severity.ERROR, "m", "f"), Finding("Dockerfile", 0, "docker-not-locked", Severity.WARNING, "w", "g")]
    assert to_github(findings, prefix="server/").splitlines() == [
        "::error file=server/pyproject.toml,line=3,title=depsync lock-stale::m. Fix: f",
        "::warning file=server/Dockerfile,title=depsync docker-not-locked::w. Fix: g",
    ]


def test_sarif_is_rooted_at_the_repository_from_any_cwd(in_subdirectory: Path) -> None:
    for cwd, target in ((in_subdirectory, "server"), (in_subdirectory / "server" / "docker", "..")):
        result = depsync("check", target, "--no-cache", "--format", "sarif", cwd=cwd)
        (run,) = json.loads(result.stdout)["runs"]
        assert set(run["originalUriBaseIds"]) == {"SRCROOT"} and str(in_subdirectory.resolve()) not in result.stdout
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]}
        assert uris == {"server/docker/Dockerfile.ci.dev", "server/pyproject.toml"}
        driver = run["tool"]["driver"]
        assert driver["informationUri"] == HOMEPAGE
        assert all(rule["helpUri"].startswith(HOMEPAGE) for rule in driver["rules"])


def test_the_homepage_is_the_projects() -> None:
    import tomllib

    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Homepage"] == HOMEPAGE


def test_gitlab_code_quality_report(in_subdirectory: Path) -> None:
    result = depsync("check", "server", "--no-cache", "--format", "gitlab", cwd=in_subdirectory)
    assert result.returncode == 1
    issues = json.loads(result.stdout)
    assert len(issues) == 18
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert issue["location"]["path"].startswith("server/") and issue["location"]["lines"]["begin"] >= 1
    assert len({i["fingerprint"] for i in issues}) == 18
    renamed = [i for i in issues if i["check_name"] == "docker-no-install-renamed"]
    assert len(renamed) == 12 and {i["severity"] for i in renamed} == {"major"}
    # a replay from the cache gives the same report
    first = depsync("check", "server", "--format", "gitlab", cwd=in_subdirectory)
    again = depsync("check", "server", "--format", "gitlab", cwd=in_subdirectory)
    assert first.stdout == again.stdout == result.stdout


def test_gitlab_fingerprints_survive_a_line_move_and_tell_repeats_apart() -> None:
    a = Finding("Dockerfile", 3, "docker-unknown-extra", Severity.ERROR, "same", "f")
    moved = Finding("Dockerfile", 9, "docker-unknown-extra", Severity.ERROR, "same", "f")
    (one,) = json.loads(to_gitlab([a]))
    (two,) = json.loads(to_gitlab([moved]))
    assert one["fingerprint"] == two["fingerprint"]
    both = json.loads(to_gitlab([a, moved]))
    assert both[0]["fingerprint"] != both[1]["fingerprint"]
    whole_file = json.loads(to_gitlab([Finding("uv.lock", 0, "lock-stale", Severity.WARNING, "m", "f")]))
    assert whole_file[0]["location"]["lines"]["begin"] == 1 and whole_file[0]["severity"] == "minor"


def test_the_info_severity_has_one_name_in_every_output() -> None:
    """`info`, as in config and in each finding's row: not `note(s)` in the summary line, not
    `infos` in the JSON counts. SARIF's `note` and GitHub's `notice` are those formats' own words."""
    from depsync.report.findings import to_json, to_plain

    findings = [Finding("pyproject.toml", 1, "protected-unchecked", Severity.INFO, f"m{i}", f"f{i}") for i in range(12)]
    findings.append(Finding("pyproject.toml", 2, "lock-stale", Severity.ERROR, "m", "f"))
    plain = to_plain(findings, project=".").splitlines()
    assert plain[-1] == "depsync check: 1 error(s), 0 warning(s), 12 info"
    assert all(" info protected-unchecked " in row for row in plain if "protected-unchecked" in row)
    document = json.loads(to_json(findings, project="."))
    assert document["schema"] == "depsync.check/2"
    assert document["summary"] == {"errors": 1, "warnings": 0, "info": 12}
    assert {f["severity"] for f in document["findings"]} == {"error", "info"}
    shown = annotations(to_github(findings))
    assert shown[0].startswith("::notice title=depsync check::1 error(s), 0 warning(s), 12 info; ")
    assert any("4 more info in pyproject.toml" in line for line in shown)
    for text in (*plain, json.dumps(document), *shown):
        assert "note(s)" not in text and "infos" not in text and "notice(s)" not in text
