"""The depsync-check action's uv step: install uv next to depsync, at the project's pin.

`depsync check` asks a real uv (`uv lock --check --offline`) before it reports a static
`lock-stale` error; without one on PATH the static verdict stands, and a lock uv accepts
fails the check. So the action installs uv into depsync's own venv, at the version the
project pins (depsync.api.pinned_uv_version: an exact `[tool.uv] required-version`, else
the CI Dockerfile's `ARG UV_VERSION`), else DEFAULT_UV; the `uv-version` input overrides it.

Run with the interpreter of the venv depsync is installed in; pip installs `uv==VERSION`
(wheels only) from the package index into that venv, with an argument list. Inputs come in
through environment variables (PROJECT, UV_VERSION); writes `version` and `why` to
$GITHUB_OUTPUT. Exit 2, with one `::error` line, for a `uv-version` input that is not a
release number or a uv that does not install or run as that version.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from depsync.api import pinned_uv_version
from depsync.core.trust import uv_version_allowed
from depsync.errors import DepsyncError

# the uv depsync's own tests run (the `uv==` pin of pyproject's test extra; tests/test_action.py holds them equal)
DEFAULT_UV = "0.13.9"


def choose(project: Path, requested: str) -> tuple[str, str]:
    """(version, why) of the uv to install."""
    if requested:
        return requested, "the uv-version input"
    try:
        pinned = pinned_uv_version(project)
    except (DepsyncError, OSError) as exc:  # depsync check reports the same problem, with its fix
        said = " ".join(str(exc).split())[:200]  # one line: a newline would start another workflow command
        print(f"::warning title=depsync-check::the project's uv pin could not be read ({said}); installing uv {DEFAULT_UV}")
        pinned = None
    if pinned:
        return pinned, "the project's pin"
    return DEFAULT_UV, "no pin in the project: the action's default"


def install(version: str) -> str:
    """pip install uv==version into this venv; the installed uv's version line."""
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary", ":all:", "--", f"uv=={version}"]
    if subprocess.run(pip).returncode != 0:
        raise DepsyncError(f"pip could not install uv {version}")
    uv = Path(sys.executable).parent / "uv"
    said = subprocess.run([str(uv), "--version"], capture_output=True, text=True)
    if said.returncode != 0 or said.stdout.split()[1:2] != [version]:
        raise DepsyncError(f"{uv} --version said {' '.join(said.stdout.split())[:80]!r}, not uv {version}")
    return said.stdout.strip()


def main() -> int:
    requested = os.environ.get("UV_VERSION", "").strip()
    if requested and not uv_version_allowed(requested):
        print(f"::error title=depsync-check::uv-version must be a uv release such as 0.7.2, not {requested[:60]!r}")
        return 2
    version, why = choose(Path(os.environ.get("PROJECT") or "."), requested)
    try:
        line = install(version)
    except DepsyncError as exc:
        print(f"::error title=depsync-check::{exc}")
        return 2
    with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
        out.write(f"version={version}\nwhy={why}\n")
    print(f"{line} ({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
