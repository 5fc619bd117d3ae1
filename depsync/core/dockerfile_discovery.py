"""Which of a project's Dockerfiles `check` reads when none are configured.

The candidates come from depsync/dockerfile_scan.py (bounded, inside the project, no
symlinks). One is checked when it runs uv against this project: a `uv sync`, `uv lock`,
`uv export` or `uv run` (which read the project's pyproject.toml and uv.lock), or a
`uv pip install` of the project itself (`.`, `-e .`, `-r pyproject.toml`, `--group`,
`--extra`). A Dockerfile in the directory of another pyproject.toml (a nested project, a
workspace member with its own image) is that project's. Every candidate not checked is
listed with its reason (`check -v`): nothing is dropped silently.

decide() is pure: it gets the parsed Dockerfiles (or why one could not be read).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from depsync.core.model.dockerfile import Dockerfile

_PROJECT_COMMANDS = frozenset({"sync", "lock", "export", "run"})
_PIP_INSTALLS = frozenset({"pip install", "pip sync", "pip compile"})


@dataclass(frozen=True)
class Discovery:
    """What discovery found: the Dockerfiles to check and the candidates left out, with why."""

    checked: tuple[Dockerfile, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()  # (path, reason)
    truncated: bool = False  # the scan stopped at dockerfile_scan.MAX_ENTRIES


def owning_project(path: str, projects: tuple[str, ...]) -> str | None:
    """The nearest pyproject.toml below the root whose directory holds path, if any."""
    parents = {p.rsplit("/", 1)[0] for p in projects}
    for parent in PurePosixPath(path).parents:
        if parent.as_posix() in parents:
            return f"{parent.as_posix()}/pyproject.toml"
    return None


def runs_uv_on_project(dockerfile: Dockerfile) -> bool:
    for command in dockerfile.uv_commands:
        if command.subcommand in _PROJECT_COMMANDS:
            return True
        if command.subcommand in _PIP_INSTALLS:
            for word in command.words:
                value = word.value
                if value in (".", "./") or value.endswith(("pyproject.toml", "uv.lock")) or value.startswith(("--group", "--extra", "--all-extras")):
                    return True
    return False


def decide(
    candidates: tuple[str, ...], projects: tuple[str, ...], parsed: dict[str, Dockerfile | str], truncated: bool = False
) -> Discovery:
    """parsed: for each candidate that is not another project's, its model or why it was not read."""
    checked: list[Dockerfile] = []
    skipped: list[tuple[str, str]] = []
    for path in candidates:
        owner = owning_project(path, projects)
        if owner is not None:
            skipped.append((path, f"belongs to the project of {owner}"))
            continue
        found = parsed.get(path)
        if found is None:
            skipped.append((path, "not read"))
        elif isinstance(found, str):
            skipped.append((path, found))
        elif runs_uv_on_project(found):
            checked.append(found)
        else:
            skipped.append((path, "runs no uv command on this project"))
    return Discovery(tuple(checked), tuple(skipped), truncated)
