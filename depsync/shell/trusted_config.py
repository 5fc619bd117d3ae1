"""Shell: the bot's own configuration, from places main cannot write.

A sync merge is content that anyone whose PR landed on main controls, and `[tool.depsync]`
is part of it. So everything that decides who dev is and what is protected (owner and
upstream refs, protected paths, policies, image, Dockerfiles) comes from:

1. the operator: CLI flags, then the environment (DEPSYNC_OWNER_REF, DEPSYNC_UPSTREAM_REF);
2. the owner ref's *committed* pyproject.toml, read through git (never the work tree, never
   the merge commit, never main).

The owner ref itself needs a bootstrap that no repository content decides: `--dev`/`--ref`,
else DEPSYNC_OWNER_REF, else the default `origin/dev`. An `owner-ref` written in the owner
ref's own config is not followed (it would let a committed file re-point the bot); when it
names another ref, the operator is told to pass it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from depsync.core.config import Config
from depsync.core.trust import require_ref
from depsync.errors import DepsyncError
from depsync.shell import git
from depsync.shell.workspace import FileReader, config_of

OWNER_REF_ENV = "DEPSYNC_OWNER_REF"
UPSTREAM_REF_ENV = "DEPSYNC_UPSTREAM_REF"
DEFAULT_OWNER_REF = Config().owner_ref


def owner_ref(cli: str | None, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(the owner ref, where it came from): the CLI, the environment or the default."""
    environ = os.environ if environ is None else environ
    if cli:
        return require_ref(cli), "the command line"
    named = environ.get(OWNER_REF_ENV, "").strip()
    if named:
        return require_ref(named), OWNER_REF_ENV
    return DEFAULT_OWNER_REF, "the default"


def resolve_owner(root: Path, cli: str | None, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(owner ref, its commit); a missing one is one line saying how to name it."""
    ref, how = owner_ref(cli, environ)
    try:
        return ref, git.resolve(root, ref)
    except DepsyncError as exc:
        hint = "" if how == "the command line" else f" (the owner ref, from {how}: pass --dev REF or set {OWNER_REF_ENV}; it is never read from the merged tree)"
        raise DepsyncError(exc.message + hint, exc.where) from None


def owner_config(root: Path, owner_commit: str, environ: Mapping[str, str] | None = None) -> Config:
    """[tool.depsync] of the owner's committed pyproject.toml, with the operator's environment
    on top. The owner ref is the one the operator named, whatever the file says."""
    environ = os.environ if environ is None else environ
    config = config_of(FileReader(root, owner_commit))
    upstream = environ.get(UPSTREAM_REF_ENV, "").strip()
    return config.with_overrides(upstream_ref=require_ref(upstream) if upstream else None)


def bound_to(config: Config, owner: str) -> Config:
    """config with the operator's owner ref: the file's own `owner-ref` never re-points the bot."""
    return config.with_overrides(owner_ref=owner)
