"""Dockerfile vs pyproject and lock: extras, groups, --locked/--frozen, --no-install-package."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.utils import canonicalize_name

from depsync import limits
from depsync.findings import Finding, Severity
from depsync.model.dockerfile import Arg, UvCommand
from depsync.rules import RULES, CheckInputs

_LOCK_READERS = {"sync", "export", "run"}


def _unknown(command: UvCommand, flags: tuple[str, ...], known: set[str]) -> list[Arg]:
    """Resolved values of flags that name nothing in known (names compared normalized)."""
    return [a for a in command.flag_values(*flags) if not a.unresolved and canonicalize_name(a.value) not in known]


def _locked(command: UvCommand, env: dict[str, str]) -> bool:
    if command.has_flag("--locked", "--frozen"):
        return True
    return env.get("UV_LOCKED", "").lower() in ("1", "true") or env.get("UV_FROZEN", "").lower() in ("1", "true")


def _why_unresolved(arg: Arg) -> str:
    if arg.capped:
        # depsync stops expanding there (an untrusted Dockerfile could grow without end); not guessed
        return (
            f"whose expansion goes past what depsync expands (a value over {limits.MAX_EXPANSION_BYTES // 1024} KiB, "
            f"over {limits.MAX_EXPANSION_TOTAL_BYTES // 2**20} MiB or {limits.MAX_EXPANSION_STEPS} substitutions in the file, "
            f"or over {limits.MAX_EXPANSION_DEPTH} nested levels)"
        )
    return "which has no single value here"


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    extras = set(pyproject.extra_names)
    groups = pyproject.group_names()
    lock_names = inputs.lock.names() if inputs.lock else None
    for dockerfile in inputs.dockerfiles:
        path = dockerfile.path
        any_locked = any(c.subcommand == "sync" and _locked(c, dockerfile.args) for c in dockerfile.uv_commands)
        for command in dockerfile.uv_commands:
            if command.subcommand not in _LOCK_READERS and command.subcommand != "pip install":
                continue
            for arg in command.unresolved():
                names = ", ".join("$" + n for n in arg.unresolved)
                yield RULES["docker-unresolved"].finding(
                    path,
                    arg.line,
                    f"`uv {command.subcommand}` argument {arg.value!r} uses {names}, {_why_unresolved(arg)}",
                    "give it an ARG/ENV default, or pass it with [tool.depsync] dockerfiles build-args",
                )
            for arg in _unknown(command, ("--extra",), extras):
                yield RULES["docker-unknown-extra"].finding(
                    path,
                    arg.line,
                    f"`uv {command.subcommand} --extra {arg.value}`: {pyproject.path} defines no extra {arg.value!r} (it has: {', '.join(sorted(extras)) or 'none'})",
                    f"remove `--extra {arg.value}` or add it to [project.optional-dependencies]",
                )
            for arg in _unknown(command, ("--group", "--only-group", "--no-group"), groups):
                yield RULES["docker-unknown-group"].finding(
                    path,
                    arg.line,
                    f"`uv {command.subcommand}` names group {arg.value!r}, which {pyproject.path} does not define (it has: {', '.join(sorted(groups)) or 'none'})",
                    f"remove the flag or add {arg.value!r} to [dependency-groups]",
                )
            if command.subcommand == "sync" and not _locked(command, dockerfile.args):
                finding = RULES["docker-not-locked"].finding(
                    path,
                    command.line,
                    "`uv sync` without --locked or --frozen re-resolves a stale lock at build time (and rewrites it, "
                    "so a later `uv sync --locked` passes too) instead of failing",
                    "add --locked (fails when the lock is stale) or --frozen",
                )
                if any_locked:
                    # another sync in this image is locked: a hazard, not a certain miss
                    finding = finding.with_severity(Severity.WARNING)
                yield finding
            for arg in _unknown(command, ("--no-install-package",), lock_names) if lock_names is not None else ():
                yield RULES["docker-stale-no-install"].finding(
                    path,
                    arg.line,
                    f"--no-install-package {arg.value}: the lock has no package {arg.value!r}, so the flag does nothing",
                    "remove the flag (or check the package name)",
                )
