"""The JSON Schemas of depsync's JSON outputs (depsync/schemas/, package data), and real
outputs validated against them: `check --format json` on the Megatron-LM data and on real
corpus-ml states, a reconcile plan of the real Megatron merge (and of a relock by real uv),
`diff --format json` of the real Megatron dev and main locks.

The schemas are closed where the output is (additionalProperties false, every key
required): a renamed, dropped or new field fails here, in the same change that makes it.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import BUNDLED, MEGATRON, SHARED, env_for, git, megatron_history
from uvprojects import LocalMaterial

from depsync import __version__
from depsync.api import json_schema, schema_file
from depsync.core.sync import sources, surface
from depsync.errors import DepsyncError
from depsync.report import findings, lockdiff, reconcile

SCHEMAS = {findings.SCHEMA: "check-2.schema.json", reconcile.SCHEMA: "reconcile-1.schema.json", lockdiff.SCHEMA: "diff-2.schema.json"}
CORPUS = SHARED / "corpus-ml"
# a fresh workspace with duplicate overrides, a stale marker-scoped state, a stale project in a
# subdirectory, a stale state with dependency-metadata and required-version
CORPUS_STATES = ("crewAIInc__crewAI__2bc3acc", "docling-project__docling__ee51730", "huggingface__text-generation-inference__c5e6f9a__server",
                 "PrimeIntellect-ai__verifiers__f9959cd")


def validator(schema_id: str) -> jsonschema.Draft202012Validator:
    schema = json_schema(schema_id)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_valid(document: dict[str, Any]) -> None:
    errors = sorted(validator(document["schema"]).iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:10])


def run_depsync(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0, 1)) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "depsync", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode in ok, done.stdout[-2000:] + done.stderr[-2000:]
    return done


# -- the schemas themselves ----------------------------------------------------------------------

@pytest.mark.parametrize(("schema_id", "name"), SCHEMAS.items())
def test_every_output_has_its_schema(schema_id: str, name: str) -> None:
    assert schema_file(schema_id) == name
    schema = json_schema(schema_id)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/depsync/schemas/{name}")
    jsonschema.Draft202012Validator.check_schema(schema)
    # each output says which schema and which depsync wrote it, in the same two fields
    assert schema["properties"]["schema"] == {"const": schema_id}
    assert schema["properties"]["depsync"] == {"$ref": "#/$defs/version"}
    assert {"schema", "depsync"} <= set(schema["required"]) and schema["additionalProperties"] is False
    assert set(schema["required"]) == set(schema["properties"])  # closed, every key always written
    assert jsonschema.Draft202012Validator(schema["$defs"]["version"]).is_valid(__version__)


def test_an_unknown_schema_is_one_readable_error() -> None:
    for wrong in ("depsync.check/9", "check/1", "depsync.../1", "depsync.check/../x"):
        with pytest.raises(DepsyncError):
            json_schema(wrong)


def test_the_decision_cases_are_the_ones_the_tables_have() -> None:
    """A new case in reconcile's decision tables fails here until the schema names it."""
    cases = set(json_schema(reconcile.SCHEMA)["$defs"]["case"]["enum"])
    assert {rule.case for rule in sources.RULES} | {rule.case for rule in surface.RULES} <= cases


# -- check ---------------------------------------------------------------------------------------

def check_json(project: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(run_depsync("check", str(project), "--format", "json", *args, env=env).stdout)
    assert document["schema"] == "depsync.check/2" and document["depsync"] == __version__
    return document


def test_check_json_of_the_megatron_data(tmp_path: Path) -> None:
    if not MEGATRON.is_dir():
        pytest.skip(f"real Megatron-LM data not found at {MEGATRON}")
    bundled = shutil.copytree(BUNDLED / "megatron-dev", tmp_path / "bundled")
    document = check_json(bundled)
    assert document["findings"] and document["summary"]["errors"] == 12  # the CUDA 12 flags the CUDA 13 lock renamed
    assert_valid(document)
    for side in ("base", "dev", "main"):
        project = shutil.copytree(MEGATRON / side, tmp_path / side)
        assert_valid(check_json(project))
    # main's pyproject with dev's lock: lock-stale findings, whole-file ones (line null) too
    mixed = shutil.copytree(MEGATRON / "dev", tmp_path / "mixed")
    shutil.copy(MEGATRON / "main" / "pyproject.toml", mixed / "pyproject.toml")
    document = check_json(mixed, "--static")
    assert any(f["rule"] == "lock-stale" for f in document["findings"])
    assert_valid(document)


@pytest.mark.parametrize("state", CORPUS_STATES)
def test_check_json_of_real_corpus_states(state: str, tmp_path: Path) -> None:
    source = CORPUS / state
    if not source.is_dir():
        pytest.skip(f"corpus-ml state not found at {source}")
    import tomllib

    provenance = tomllib.loads((source / "PROVENANCE.toml").read_text())
    copy_ = shutil.copytree(source, tmp_path / "state")
    document = check_json(copy_ / provenance.get("project", "."))
    if provenance["uv_verdict"] == "stale":
        assert document["summary"]["errors"] >= 1, document
    assert_valid(document)


def test_a_renamed_dropped_or_new_field_fails(tmp_path: Path) -> None:
    document = check_json(shutil.copytree(BUNDLED / "megatron-dev", tmp_path / "p"))
    assert_valid(document)
    check = validator(findings.SCHEMA)
    renamed = copy.deepcopy(document)
    renamed["findings"][0]["rule_id"] = renamed["findings"][0].pop("rule")
    dropped = copy.deepcopy(document)
    del dropped["summary"]["info"]
    added = copy.deepcopy(document)
    added["version"] = added.pop("depsync")
    wrong = copy.deepcopy(document)
    wrong["findings"][0]["severity"] = "fatal"
    for broken in (renamed, dropped, added, wrong):
        assert not check.is_valid(broken)


# -- reconcile -----------------------------------------------------------------------------------

def test_reconcile_plan_of_the_real_megatron_merge(tmp_path: Path) -> None:
    if not MEGATRON.is_dir():
        pytest.skip(f"real Megatron-LM data not found at {MEGATRON}")
    repo = megatron_history(tmp_path / "megatron")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "--no-commit", "--no-ff", "main"], capture_output=True)  # conflicts: reconcile's job
    dry = tmp_path / "dry.json"
    run_depsync("reconcile", "--dev", "dev", "--main", "main", "--dry-run", "--no-fetch", "--plan-json", str(dry), cwd=repo)
    plan = tmp_path / "plan.json"
    run_depsync("reconcile", "--dev", "dev", "--main", "main", "--no-lock", "--no-fetch", "--plan-json", str(plan), cwd=repo)
    for path, status in ((dry, "dry-run"), (plan, "needs-review")):
        document = json.loads(path.read_text())
        assert (document["schema"], document["depsync"], document["status"]) == ("depsync.reconcile/1", __version__, status)
        assert document["sources"] and document["dependencies"]  # the real merge has both
        assert_valid(document)
        broken = copy.deepcopy(document)
        broken["sources"][0]["taken"] = broken["sources"][0].pop("taken_from")
        assert not validator(reconcile.SCHEMA).is_valid(broken)


def test_reconcile_plan_of_a_real_relock(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """A sync that relocks with real uv (local runner): the plan's lock changes, metadata and
    lock state as uv left them."""
    env = env_for(material)
    merged = subprocess.run(["git", "-C", str(small_repo), "merge", "--no-commit", "--no-ff", "main"], capture_output=True, text=True, env=env)
    assert merged.returncode in (0, 1), merged.stderr
    plan = tmp_path / "plan.json"
    run_depsync("reconcile", "--dev", "dev", "--main", "main", "--runner", "local", "--no-fetch", "--plan-json", str(plan), cwd=small_repo, env=env)
    document = json.loads(plan.read_text())
    assert document["lock"]["state"] == "relocked" and document["lock"]["changes"], document["lock"]
    assert_valid(document)
    git(small_repo, "merge", "--abort")


# -- diff ----------------------------------------------------------------------------------------

def test_diff_json_of_the_real_megatron_locks(tmp_path: Path) -> None:
    if not MEGATRON.is_dir():
        pytest.skip(f"real Megatron-LM data not found at {MEGATRON}")
    dev, main = str(MEGATRON / "dev" / "uv.lock"), str(MEGATRON / "main" / "uv.lock")
    document = json.loads(run_depsync("diff", dev, main, "--format", "json").stdout)
    assert (document["schema"], document["depsync"]) == ("depsync.diff/2", __version__)
    kinds = {c["kind"] for c in document["changes"]}
    assert {"added", "removed", "upgraded", "downgraded"} <= kinds and any(c["forked"] for c in document["changes"])
    assert_valid(document)
    same = json.loads(run_depsync("diff", dev, dev, "--format", "json").stdout)
    assert same["changes"] == [] and same["summary"] == {}
    assert_valid(same)
    broken = copy.deepcopy(document)
    broken["changes"][0]["old"]["ver"] = broken["changes"][0]["old"].pop("version")
    assert not validator(lockdiff.SCHEMA).is_valid(broken)


def test_reconcile_plan_of_a_failed_relock(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """The plan a failed relock leaves (status failed, the work tree put back): no uv anywhere."""
    env = env_for(material)
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep) if d and not (Path(d) / "uv").exists())
    merged = subprocess.run(["git", "-C", str(small_repo), "merge", "--no-commit", "--no-ff", "main"], capture_output=True, text=True, env=env)
    assert merged.returncode in (0, 1), merged.stderr
    plan = tmp_path / "plan.json"
    run_depsync("reconcile", "--dev", "dev", "--main", "main", "--runner", "local", "--no-fetch", "--plan-json", str(plan), cwd=small_repo, env=env, ok=(1, 2))
    document = json.loads(plan.read_text())
    assert document["status"] == "failed" and document["failure"], document["status"]
    assert_valid(document)
