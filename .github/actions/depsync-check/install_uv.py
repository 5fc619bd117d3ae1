"""The depsync-check action's uv step: install uv next to depsync, at the project's pin.

`depsync check` asks a real uv (`uv lock --check --offline`) before it reports a static
`lock-stale` error; without one on PATH the static verdict stands, and a lock uv accepts
fails the check. So the action installs uv into depsync's own venv, at the version the
project pins (depsync.api.pinned_uv_version: an exact `[tool.uv] required-version`, else
the CI Dockerfile's `ARG UV_VERSION`), else depsync.api.DEFAULT_UV; the `uv-version` input
overrides it. The sync workflow's step is the same function (depsync.api.install_uv_step).

Run with the interpreter of the venv depsync is installed in. Inputs come in through
environment variables (PROJECT, UV_VERSION); writes `version` and `why` to $GITHUB_OUTPUT.
"""

from __future__ import annotations

import sys

from depsync.api import install_uv_step

if __name__ == "__main__":
    sys.exit(install_uv_step("depsync-check"))
