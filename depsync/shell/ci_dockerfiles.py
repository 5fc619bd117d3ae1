"""Shell: the one set of CI Dockerfiles every command uses (check, lock, reconcile, guard, the merge driver).

Configured (`[tool.depsync] dockerfiles`: each must exist, naming one is asking for it) or else
discovered (depsync/core/dockerfile_discovery.py: the project's Dockerfiles that run uv on it).
`check` checks every one of the set, `lock` relocks with the uv (and image) of the first that pins
uv, `reconcile` keeps dev's version of each and lists what main changed in it, `guard` holds each
to dev's. Read through a FileReader: the work tree, or a commit (reconcile and guard read dev's).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from depsync.core.config import Config
from depsync.core.dockerfile_discovery import Discovery, NotParsed, decide, not_parsed, owning_project, project_command
from depsync.core.model.dockerfile import Dockerfile
from depsync.errors import DepsyncError
from depsync.shell import dockerfile_scan
from depsync.shell.reader import FileReader


@dataclass(frozen=True)
class CiDockerfiles:
    """The CI Dockerfiles of a project and how they were chosen."""

    how: Literal["configured", "discovered"]
    dockerfiles: tuple[Dockerfile, ...] = ()
    discovery: Discovery = field(default_factory=Discovery)  # empty when configured

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path of the set, the discovered ones that do not parse included (they are CI
        Dockerfiles too: reconcile keeps dev's, guard compares them)."""
        return tuple(dict.fromkeys((*(d.path for d in self.dockerfiles), *(u.path for u in self.discovery.unparsed))))

    def for_lock(self) -> Dockerfile | None:
        """The Dockerfile `lock` takes its uv version and image from: the first that pins uv, else the first."""
        return next((d for d in self.dockerfiles if d.uv_pins), self.dockerfiles[0] if self.dockerfiles else None)

    def why(self, dockerfile: Dockerfile) -> str:
        """`configured in [tool.depsync] dockerfiles` / `discovered: it runs `uv sync` on the project at line 7`."""
        if self.how == "configured":
            return "configured in [tool.depsync] dockerfiles"
        command = project_command(dockerfile)
        return f"discovered: it runs `uv {command.subcommand}` on the project at line {command.line}" if command else "discovered"

    def describe_lock(self) -> str:
        """One line for `depsync lock`: which Dockerfile gives the uv version and image, and why."""
        chosen = self.for_lock()
        if chosen is None:
            return "CI Dockerfile: none (no Dockerfile in the project runs uv on it)"
        pin = f"; it pins uv {chosen.uv_pins[0].version} ({chosen.uv_pins[0].how}, line {chosen.uv_pins[0].line})" if chosen.uv_pins else "; it pins no uv version"
        others = len(self.dockerfiles) - 1
        more = f"; {others} more CI Dockerfile{'s' if others != 1 else ''} checked by `depsync check`" if others else ""
        return f"CI Dockerfile: {chosen.path}, {self.why(chosen)}{pin}{more}"


def ci_dockerfiles(reader: FileReader, config: Config, build_args: dict[str, str] | None = None) -> CiDockerfiles:
    """The configured Dockerfiles (each must exist: exit 2 when one does not, or does not parse),
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


def refuse_unparsed(ci: CiDockerfiles) -> None:
    """A relock needs the uv version its CI Dockerfile pins: a discovered one that runs uv on the
    project but does not parse (check's docker-unparsed error) stops it, uv.lock untouched."""
    for item in ci.discovery.unparsed:
        raise DepsyncError(
            f"runs `{item.uv_command}` (line {item.uv_line}) but does not parse ({item.error}), so the uv version it pins is unknown; "
            "fix it, or list the CI Dockerfiles in [tool.depsync] dockerfiles; uv.lock is unchanged",
            f"{item.path}:{item.line}" if item.line else item.path,
        )


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
