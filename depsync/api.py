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
    from depsync.cli.root import find_root
    from depsync.core.rules.uv_version import exact_required_version
    from depsync.shell.uv_confirm import pinned_version

    inputs = load_inputs(find_root(Path(project_dir)))  # the root `depsync check PATH` finds
    return exact_required_version(inputs.pyproject.uv.get("required-version")) or pinned_version(inputs)


# the uv depsync's own tests run (the `uv==` pin of pyproject's test extra; tests/test_action.py holds them equal)
DEFAULT_UV = "0.13.9"


def choose_uv(project: Path, requested: str) -> tuple[str, str, str]:
    """(version, why, warning) of the uv a recipe installs next to depsync: the `uv-version`
    input, else the project's pin (pinned_uv_version), else DEFAULT_UV."""
    if requested:
        return requested, "the uv-version input", ""
    warning = ""
    try:
        pinned = pinned_uv_version(project)
    except (DepsyncError, OSError) as exc:  # depsync check reports the same problem, with its fix
        said = " ".join(str(exc).split())[:200]  # one line: a newline would start another workflow command
        warning = f"the project's uv pin could not be read ({said}); installing uv {DEFAULT_UV}"
        pinned = None
    if pinned:
        return pinned, "the project's pin", warning
    return DEFAULT_UV, "no pin in the project: the default", warning


def install_uv(version: str) -> str:
    """pip install uv==version into the running interpreter's venv (wheels only, an argument
    list); the installed uv's version line."""
    import subprocess
    import sys

    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary", ":all:", "--", f"uv=={version}"]
    if subprocess.run(pip).returncode != 0:
        raise DepsyncError(f"pip could not install uv {version}")
    uv = Path(sys.executable).parent / "uv"
    said = subprocess.run([str(uv), "--version"], capture_output=True, text=True)
    if said.returncode != 0 or said.stdout.split()[1:2] != [version]:
        raise DepsyncError(f"{uv} --version said {' '.join(said.stdout.split())[:80]!r}, not uv {version}")
    return said.stdout.strip()


def install_uv_step(title: str) -> int:
    """A workflow step (the action's, the sync workflow's): PROJECT and UV_VERSION from the
    environment, `version` and `why` to $GITHUB_OUTPUT; exit 2 with one `::error` line for a
    `uv-version` that is not a release number or a uv that does not install or run as that version."""
    import os

    from depsync.core.trust import uv_version_allowed

    requested = os.environ.get("UV_VERSION", "").strip()
    if requested and not uv_version_allowed(requested):
        print(f"::error title={title}::uv-version must be a uv release such as 0.7.2, not {requested[:60]!r}")
        return 2
    version, why, warning = choose_uv(Path(os.environ.get("PROJECT") or "."), requested)
    if warning:
        print(f"::warning title={title}::{warning}")
    try:
        line = install_uv(version)
    except DepsyncError as exc:
        print(f"::error title={title}::{exc}")
        return 2
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"version={version}\nwhy={why}\n")
    print(f"{line} ({why})")
    return 0
