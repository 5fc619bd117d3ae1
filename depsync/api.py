"""Small stable entry points for tests and other tools."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from depsync.core.findings import Finding
from depsync.core.rules import freshness
from depsync.errors import DepsyncError
from depsync.shell.workspace import load_inputs


def lock_freshness(project_dir: Path) -> list[Finding]:
    """Findings of the static lock-freshness rule for the project in project_dir.

    Empty list: depsync predicts `uv lock --check` accepts the lock.
    """
    return list(freshness.check(load_inputs(Path(project_dir))))


def schema_file(schema_id: str) -> str:
    """The file name, in depsync/schemas/, of the JSON Schema of an output: `depsync.check/2` ->
    `check-2.schema.json` (the package data every wheel carries)."""
    name, _, version = schema_id.removeprefix("depsync.").partition("/")
    if not schema_id.startswith("depsync.") or not name.isalpha() or not version.isdigit():
        raise DepsyncError(f"{schema_id!r} is not a depsync schema id (depsync.NAME/VERSION)")
    return f"{name}-{version}.schema.json"


def json_schema(schema_id: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the output whose `schema` field is schema_id:
    depsync.check/2 (`check --format json`), depsync.reconcile/1 (`reconcile --plan-json`),
    depsync.diff/2 (`diff --format json`)."""
    try:
        text = resources.files("depsync").joinpath("schemas", schema_file(schema_id)).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DepsyncError(f"no schema {schema_id!r} in this depsync") from None
    schema: dict[str, Any] = json.loads(text)
    return schema


def pinned_uv_version(project_dir: Path) -> str | None:
    """The uv release the project pins: `[tool.uv] required-version` when it names one exact
    release (uv itself refuses to run at another), else the first pin of the Dockerfiles
    `depsync check` reads (`ARG UV_VERSION=0.7.2`, `pip install uv==...`); None when neither
    does. Only a release number is ever returned (it becomes `uv==VERSION` on a command line)."""
    from depsync.core.rules.uv_version import exact_required_version
    from depsync.shell.uv_confirm import pinned_version

    from depsync.cli.root import find_root

    inputs = load_inputs(find_root(Path(project_dir)))  # the root `depsync check PATH` finds
    return exact_required_version(inputs.pyproject.uv.get("required-version")) or pinned_version(inputs)
