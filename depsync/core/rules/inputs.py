"""What the rules read: the loaded models of one project, and the facts the loader found."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from depsync.core.config import Config
from depsync.core.dockerfile_discovery import Unparsed
from depsync.core.findings import Finding
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.uv_settings import UvSettings
from depsync.records import field, record

if TYPE_CHECKING:
    from depsync.core.model.image_env import ImageEnv  # only `check --image` makes one


@record
class ProtectedFile:
    """Comparison of one protected path with the owner ref (computed by the shell)."""

    path: str
    status: str  # "same", "differs", "missing-here", "missing-owner"


@record
class CheckInputs:
    config: Config
    pyproject: Pyproject
    lock: Lock | None  # None when it has conflict markers (reported, not parsed)
    dockerfiles: tuple[Dockerfile, ...] = ()
    protected: tuple[ProtectedFile, ...] = ()
    owner_ref: str = ""
    # facts the loader found before parsing: conflict marker lines per file, and why the
    # protected paths could not be compared (empty: they were); the rules turn them into findings
    conflict_markers: tuple[tuple[str, tuple[int, ...]], ...] = ()
    protected_unchecked: str = ""
    # pyproject.toml of local packages the lock records (path, editable, workspace members), by lock path
    local_projects: dict[str, Pyproject] = field(default_factory=dict)
    # names of the workspace members on disk (root included); None when unknown (no workspace, or --ref)
    workspace_members: frozenset[str] | None = None
    # Dockerfiles discovery looked at and left out, with why (empty when `dockerfiles` is configured)
    dockerfiles_skipped: tuple[tuple[str, str], ...] = ()
    # of those, the ones that run uv on the project but do not parse or are past a bound (docker-unparsed)
    dockerfiles_unparsed: tuple[Unparsed, ...] = ()
    # the discovery stopped at its bound of directory entries (0: it read the whole tree)
    dockerfile_scan_stopped: int = 0
    # uv's resolver settings when they are not the root pyproject's [tool.uv] (a uv.toml beside
    # it, or above it in the project when it has no [tool.uv]); None: the root's [tool.uv]
    uv_settings: UvSettings | None = None
    # `check --image`: what the CI base image ships, and the Dockerfile that builds FROM it (its
    # `uv sync` flags are the ones held against the image); None: the image rules do not run
    image: ImageEnv | None = None
    image_dockerfile: str | None = None
    # workspace members that resolve outside the project (a symlink out, `../`): uv reads them, depsync does not
    workspace_members_outside: tuple[str, ...] = ()
    # workspace members the lock records in git submodules that are not checked out (name ->
    # lock path): their pyproject.toml cannot be read, here or at the ref
    members_not_checked_out: dict[str, str] = field(default_factory=dict)


RuleFamily = Callable[[CheckInputs], Iterable[Finding]]
