"""Shell: the one set of CI Dockerfiles every command uses (check, lock, reconcile, guard, the merge driver).

Configured (`[tool.depsync] dockerfiles`: each must exist, naming one is asking for it) or else
discovered (depsync/core/dockerfile_discovery.py: the project's Dockerfiles that run uv on it).
`check` checks every one of the set, `lock` relocks with the uv (and image) of the first that pins
uv, `reconcile` keeps dev's version of each and lists what main changed in it, `guard` holds each
to dev's. Read through a FileReader: the work tree, or a commit (reconcile and guard read dev's).
"""

from __future__ import annotations

from pathlib import Path

from depsync.core.config import Config
from depsync.core.dockerfile_discovery import (
    CiDockerfiles,
    Discovery,
    NotParsed,
    decide,
    not_parsed,
    owning_project,
)
from depsync.core.model.dockerfile import Dockerfile
from depsync.errors import DepsyncError
from depsync.shell import dockerfile_scan
from depsync.shell.reader import FileReader


def ci_dockerfiles(reader: FileReader, config: Config, build_args: dict[str, str] | None = None) -> CiDockerfiles:
    """The CI Dockerfiles (depsync/core/dockerfile_discovery.py CiDockerfiles): the configured ones (each must exist: exit 2 when one does not, or does not parse),
    else those discovery finds. build_args (`lock --build-arg`) override the configured ones."""
    if config.dockerfiles_configured:
        found = []
        for spec in config.dockerfiles:
            text = reader.read_text(spec.path, required=True)
            assert text is not None
            found.append(Dockerfile.from_text(text, spec.path, {**spec.build_args, **(build_args or {})}))
        return CiDockerfiles("configured", tuple(found))
    discovery = discover(reader, build_args)
    return CiDockerfiles("discovered", discovery.checked, discovery)


def candidates(reader: FileReader) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """dockerfile_scan over the work tree, or over the tree at reader.ref."""
    if reader.ref is None:
        return dockerfile_scan.scan(str(reader.root))
    from depsync.shell import git

    return dockerfile_scan.git_scan(git.list_tree(reader.root, reader.ref))


def discover(reader: FileReader, build_args: dict[str, str] | None = None) -> Discovery:
    """The project's Dockerfiles that run uv on it (depsync/core/dockerfile_discovery.py), each
    candidate read through reader (so never through a symlink out of the project)."""
    paths, projects, truncated = candidates(reader)
    parsed: dict[str, Dockerfile | NotParsed | str] = {}
    real: dict[Path, str] = {}
    for path in paths:
        if owning_project(path, projects) is not None:
            continue
        if reader.ref is None:
            target = (reader.root / path).resolve()
            if target in real:  # `Dockerfile -> docker/Dockerfile.ci`: one file, checked once
                parsed[path] = f"the same file as {real[target]}"
                continue
            real[target] = path
        text = None
        try:
            text = reader.read_text(path, required=False)
            parsed[path] = "not found" if text is None else Dockerfile.from_text(text, path, build_args)
        except DepsyncError as exc:
            # read, then refused (its syntax, a bound): its text says whether it runs uv (a finding)
            parsed[path] = f"not read: {exc.message}" if text is None else not_parsed(text, exc)
    return decide(paths, projects, parsed, truncated)
