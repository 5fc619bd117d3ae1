"""Shell: ask a real uv whether the lock is fresh (`uv lock --check --offline`), on a copy.

Used before a static `lock-stale` error is reported (check, reconcile's closing check, guard:
`confirm_stale`) and by `check --deep`.
The copy holds only what uv reads to validate a lock without building anything: every
pyproject.toml, uv.lock and uv.toml under the project (virtual environments, git metadata and
caches skipped, symlinks not followed), and the manifest of every workspace member the root
names wherever it is inside the project (under a skipped directory, behind a link that stays
inside); a member outside the project gives no verdict, never a silent "fresh". uv runs with `--no-build`, so no build backend from the
repository ever runs: a project whose metadata only a build can tell gets no verdict from uv
here, and keeps depsync's static one. Nor does an interpreter the tree names: uv executes the
path a `.python-version` holds (`--no-build` does not stop interpreter discovery), so neither
`.python-version` nor `.python-versions` is copied, the interpreter is depsync's choice
(`confirm_python`: the operator's UV_PYTHON, else the one running depsync) passed as `--python`,
which outranks anything a uv.toml or [tool.uv] says, and Python downloads are off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.shell import process

if TYPE_CHECKING:
    from depsync.core.findings import Finding
    from depsync.core.rules.inputs import CheckInputs

# what uv reads to validate a lock offline without a build; never .python-version(s): uv runs
# the interpreter such a file names, and the tree is not trusted to name one
_COPIED = frozenset({"pyproject.toml", "uv.lock", "uv.toml"})
_SKIPPED_DIRS = frozenset({".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
_MAX_COPIED = 5000  # files: past this the tree is not one uv project (a checkout of everything)
# settings of the caller that would make uv check something else, or refuse --check
_DROPPED_ENV = ("UV_PROJECT", "UV_WORKING_DIRECTORY", "UV_WORKING_DIR", "UV_FROZEN", "UV_LOCKED", "UV_NO_SYNC", "UV_LOCK_TIMEOUT")
# uv's -v words for "the lock does not match, re-resolving" (uv 0.5 to 0.13)
_STALE_MARKERS = ("Resolving despite existing lockfile", "Ignoring existing lockfile")
# uv answers a real project in 0.2-4 s (measured on ../shared/corpus-ml); past this a PR gate
# keeps depsync's static verdict rather than wait (uv needs minutes for a hostile marker bomb)
CONFIRM_TIMEOUT = 30.0


@record
class UvWord:
    """What uv said: "fresh", "stale" (reason: its own line) or "none" (reason: why no verdict)."""

    verdict: str
    version: str
    reason: str = ""


def lock_check_env() -> dict[str, str]:
    """The caller's environment for `uv lock --check`, minus what would redirect or refuse it.

    The cache directory is named (the caller's, else uv's default on Linux), so a `cache-dir`
    in the repository's own uv.toml or [tool.uv] never decides where uv writes."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    if not env.get("UV_CACHE_DIR"):
        env["UV_CACHE_DIR"] = os.path.join(env.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "uv")
    env.update(NO_COLOR="1", UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never")
    return env


def run_lock_check(argv: list[str], cwd: Path, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`uv lock --check --offline` (plus extra arguments) in cwd, the caller's settings that
    would redirect or refuse it removed."""
    try:
        return process.run([*argv, "lock", "--check", "--offline", *extra], cwd=cwd, env=lock_check_env(), text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DepsyncError(f"uv lock --check timed out after {timeout:.0f}s") from None


def confirm_python(environ: Mapping[str, str] | None = None) -> str:
    """The interpreter uv validates the copy with: the operator's UV_PYTHON, else the one
    running depsync. Never one the tree names (.python-version, a uv.toml)."""
    return (os.environ if environ is None else environ).get("UV_PYTHON") or sys.executable


def copy_skeleton(root: Path, dest: Path) -> int:
    """Copy the files uv validates a lock from (see _COPIED) to dest, same relative paths;
    how many. Raises DepsyncError past _MAX_COPIED."""
    copied = 0
    for directory, dirs, files in os.walk(root):  # os.walk does not follow symlinked directories
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS and not os.path.islink(os.path.join(directory, d))]
        for name in files:
            if name not in _COPIED:
                continue
            source = os.path.join(directory, name)
            if os.path.islink(source) or not os.path.isfile(source):
                continue
            target = dest / os.path.relpath(source, root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            copied += 1
            if copied > _MAX_COPIED:
                raise DepsyncError(f"more than {_MAX_COPIED} pyproject.toml/uv.lock files under {root}")
    return copied + _copy_members(root, dest)


def _copy_members(root: Path, dest: Path) -> int:
    """The manifests of every member the workspace names that the walk left out (under a
    directory it skips, `venv/` or `node_modules/`, or behind a symlink that stays inside the
    project): uv in the checkout reads them, so uv in the copy must too, or it accepts a lock
    that lacks them. A member that resolves outside the project is an error, never left out."""
    import tomllib

    from depsync.shell.members import named_members

    try:
        workspace = tomllib.loads((root / "pyproject.toml").read_text()).get("tool", {}).get("uv", {}).get("workspace", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return 0
    if not isinstance(workspace, dict):
        return 0
    members, outside = named_members(str(root), list(workspace.get("members", []) or []), list(workspace.get("exclude", []) or []))
    if outside:
        raise DepsyncError(f"workspace member {outside[0]} resolves outside the project: not copied for uv")
    copied = 0
    for relative in members:
        target = dest / relative / "pyproject.toml"
        if os.path.lexists(target):
            continue
        source = root / relative / "pyproject.toml"
        if os.path.islink(source) or not source.is_file():
            continue  # the manifest itself a link: never followed (the static model refuses it too)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        copied += 1
    return copied


def ask_uv(argv: list[str], version: str, root: Path, timeout: float = CONFIRM_TIMEOUT) -> UvWord:
    """uv's verdict on the lock of the project at root, from a copy (never the work tree)."""
    with tempfile.TemporaryDirectory(prefix="depsync-uv-check-") as scratch:
        copy = Path(scratch) / "project"
        try:
            copy_skeleton(root, copy)
            # uv looks for a uv.toml in the directories above a project without settings of its
            # own: an empty one here is found first, never one someone left in the temp dir
            (Path(scratch) / "uv.toml").write_bytes(b"")
            python = confirm_python()
            if not python:
                return UvWord("none", version, "no interpreter to give uv (set UV_PYTHON)")
            # --python outranks .python-version and every config file: the tree names no interpreter
            result = run_lock_check(argv, copy, "--no-build", "--python", python, "-v", timeout=timeout)
        except (DepsyncError, OSError) as exc:
            return UvWord("none", version, redact(str(exc))[:300])
    if result.returncode == 0:
        return UvWord("fresh", version)
    lines = [line.removeprefix("DEBUG ").strip() for line in (result.stderr or "").splitlines()]
    reason = next((line for line in lines if line.startswith(_STALE_MARKERS)), "")
    if reason:
        return UvWord("stale", version, redact(reason)[:300])
    errors = [line for line in lines if line.startswith(("error:", "cause:", "×", "╰─▶"))]
    said = redact(" ".join(errors) or f"exit code {result.returncode}")[:300]
    if "incompatible with the project" in said:
        said += " (set UV_PYTHON to an interpreter that satisfies requires-python)"
    return UvWord("none", version, said)


def pinned_version(inputs: CheckInputs) -> str | None:
    """The first uv release the checked Dockerfiles pin (a value that is no release is never one)."""
    from depsync.core.trust import uv_version_allowed

    return next((pin.version for d in inputs.dockerfiles for pin in d.uv_pins if uv_version_allowed(pin.version)), None)


def offline_uv(inputs: CheckInputs) -> tuple[list[str], str] | None:
    """(argv, version) of a uv that runs without the network: the pinned one when the host uv
    is that version or depsync cached its binary, else the host's uv; None without either."""
    from depsync.shell.uv import available_uv

    return available_uv(pinned_version(inputs), fetch=False)


def confirm_stale(findings: list[Finding], inputs: CheckInputs, root: Path) -> list[Finding]:
    """Before a static lock-stale error is reported, uv's own word on the project at root (its
    work tree), through rules/freshness.py with_uv_word; runs only when there is such an error."""
    from depsync.core.findings import Severity
    from depsync.core.rules.freshness import with_uv_word
    from depsync.core.rules.run import apply_severity

    if not any(f.rule == "lock-stale" and f.severity >= Severity.ERROR for f in findings):
        return findings
    uv = offline_uv(inputs)
    if uv is None:
        return with_uv_word(findings, "none", "", "no uv that runs offline (neither the pinned one nor one on PATH) to confirm it")
    word = ask_uv(uv[0], uv[1], root)
    reason = word.reason if word.verdict != "none" else f"uv {word.version} gave no verdict offline: {word.reason}"
    return apply_severity(with_uv_word(findings, word.verdict, word.version, reason), inputs.config)
