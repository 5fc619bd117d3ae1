"""Shell: load the triple from the work tree or from a git ref into CheckInputs."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import TYPE_CHECKING

from depsync.core.config import Config, DockerfileSpec, load_config
from depsync.core.dockerfile_discovery import Unparsed
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.tomltext import conflict_marker_lines
from depsync.errors import DepsyncError
from depsync.records import field, record
from depsync.shell import dockerfile_scan
from depsync.shell.members import member_directories
from depsync.shell.reader import FileReader, inside

if TYPE_CHECKING:  # imported where used: `depsync lock` and a cache replay need none of them
    from depsync.core.model.lock import Lock
    from depsync.core.model.uv_settings import UvSettings
    from depsync.core.rules.inputs import CheckInputs, ProtectedFile


@record
class CliOverrides:
    """What CLI flags say; None means "use config"."""

    dockerfiles: tuple[DockerfileSpec, ...] | None = None
    owner_ref: str | None = None
    lock: str | None = None
    pyproject: str | None = None
    config: Config | None = None  # the operator's trusted config (reconcile: dev's); None: the file's


def config_of(*readers: FileReader, pyproject_path: str = "pyproject.toml") -> Config:
    """[tool.depsync] of the first of readers whose pyproject.toml exists and is not mid-merge;
    the defaults when none is."""
    for reader in readers:
        text = reader.read_text(pyproject_path, required=False)
        if text is not None and not conflict_marker_lines(text):
            return _config_in(text, pyproject_path)
    return Config()


def _config_in(text: str, pyproject_path: str) -> Config:
    return load_config(Pyproject.from_text(text, pyproject_path).depsync_config, text, pyproject_path)


def load_config_from(reader: FileReader, overrides: CliOverrides) -> tuple[Config, str, str]:
    pyproject_path = overrides.pyproject or "pyproject.toml"
    text = reader.read_text(pyproject_path)
    assert text is not None
    base = overrides.config or (Config() if conflict_marker_lines(text) else _config_in(text, pyproject_path))
    config = base.with_overrides(
        pyproject=overrides.pyproject,
        lock=overrides.lock,
        owner_ref=overrides.owner_ref,
        dockerfiles=overrides.dockerfiles,
        dockerfiles_configured=True if overrides.dockerfiles is not None else None,
    )
    return config, pyproject_path, text


def _is_repository(root: Path) -> bool:
    from depsync.shell import git

    return git.is_repository(root)


def load_inputs(root: Path, ref: str | None = None, overrides: CliOverrides = CliOverrides()) -> CheckInputs:
    from depsync.core.model.lock import Lock
    from depsync.core.rules.inputs import CheckInputs
    from depsync.shell.git_files import has_git_dir

    if ref is not None:
        from depsync.shell import git

        if not git.is_repository(root):
            raise DepsyncError(f"--ref needs a git repository, and {root} is not one")
        git.resolve(root, ref)
    elif not root.is_dir():
        raise DepsyncError(f"{root} is not a directory")
    reader = FileReader(root, ref)
    config, pyproject_path, pyproject_text = load_config_from(reader, overrides)
    conflicted: list[tuple[str, tuple[int, ...]]] = []
    markers = conflict_marker_lines(pyproject_text)
    if markers:
        # nothing else can be read reliably from a half-merged pyproject
        placeholder = Pyproject.from_text("", config.pyproject)
        return CheckInputs(config, placeholder, None, conflict_markers=((config.pyproject, tuple(markers)),))
    pyproject = Pyproject.from_text(pyproject_text, config.pyproject)

    lock_text = reader.read_text(config.lock)
    assert lock_text is not None
    lock: Lock | None = None
    markers = conflict_marker_lines(lock_text)
    if markers:
        conflicted.append((config.lock, tuple(markers)))
    else:
        lock = Lock.from_text(lock_text, config.lock)

    from depsync.shell.ci_dockerfiles import ci_dockerfiles

    ci = ci_dockerfiles(reader, config)
    dockerfiles, skipped, unparsed = list(ci.dockerfiles), ci.discovery.skipped, ci.discovery.unparsed
    scan_stopped = 0  # the discovery's directory-entry bound, when it was reached
    if ci.discovery.truncated:
        skipped += (("", f"the scan for Dockerfiles stopped after {dockerfile_scan.MAX_ENTRIES} directory entries"),)
        scan_stopped = dockerfile_scan.MAX_ENTRIES

    files = uv_project_files(reader, config, pyproject, lock)

    table = pyproject.depsync_config
    # asked once: outside a repository it is a git process each time; with no .git at all, not
    # even git's module (and subprocess) is imported
    repository = has_git_dir(str(root)) and _is_repository(root)
    # the owner's committed list counts too: a PR cannot unprotect a path by editing its own config
    owner_paths, owner_configured = _owner_protected_paths(root, config) if repository else ((), False)
    config = config.with_overrides(protected_paths=tuple(dict.fromkeys((*config.protected_paths, *owner_paths))))
    protected, note, skipped_why = _protected(
        root, ref, config, explicit=overrides.owner_ref is not None or "owner-ref" in table, paths_configured="protected-paths" in table or owner_configured,
        repository=repository,
    )
    if skipped_why:
        from depsync.report import ui

        ui.detail(f"protected paths not compared: {skipped_why}")
    return CheckInputs(
        config, pyproject, lock, tuple(dockerfiles), protected, config.owner_ref, tuple(conflicted), note or "",
        files.local_projects, files.workspace_members, skipped, dockerfiles_unparsed=unparsed, uv_settings=files.uv_settings,
        dockerfile_scan_stopped=scan_stopped, workspace_members_outside=files.members_outside, members_not_checked_out=files.not_checked_out,
    )


@record
class UvProjectFiles:
    """What uv reads for the lock besides the root pyproject.toml and uv.lock (CheckInputs fields)."""

    local_projects: dict[str, Pyproject]
    workspace_members: frozenset[str] | None  # from the work tree only: None at a ref
    uv_settings: UvSettings | None
    members_outside: tuple[str, ...] = ()  # members that resolve outside the project (not read)
    # members the lock records in git submodules that are not checked out: name -> lock path
    not_checked_out: dict[str, str] = field(default_factory=dict)


def uv_project_files(reader: FileReader, config: Config, pyproject: Pyproject, lock: Lock | None) -> UvProjectFiles:
    """One reading of them for check, reconcile's closing check and guard."""
    local, not_checked_out = _local_projects(reader, lock) if lock else ({}, {})
    members, outside = _workspace_members(reader.root, pyproject) if reader.ref is None else (_workspace_members_at(reader, pyproject), ())
    return UvProjectFiles(local, members, uv_settings_file(reader, config, pyproject), outside, not_checked_out)


def uv_settings_candidates(config: Config, pyproject: Pyproject) -> list[str]:
    """Where uv looks for its settings, in order: the uv.toml beside the root pyproject (it wins
    over [tool.uv]); without [tool.uv] there, the uv.toml and pyproject.toml of each directory
    above (here: up to the project root; above it is the operator's)."""
    directory = posixpath.dirname(config.pyproject)
    candidates = [posixpath.join(directory, "uv.toml")]
    if "uv" in pyproject.data.get("tool", {}):
        return candidates
    while directory:
        directory = posixpath.dirname(directory)
        candidates += [posixpath.join(directory, "uv.toml"), posixpath.join(directory, "pyproject.toml")]
    return candidates


def uv_settings_file(reader: FileReader, config: Config, pyproject: Pyproject) -> UvSettings | None:
    """uv's resolver settings when they are not the root pyproject's [tool.uv] (None: they are)."""
    from depsync.core.model.uv_settings import UvSettings

    for path in uv_settings_candidates(config, pyproject):
        text = reader.read_text(path, required=False)
        if text is None:
            continue
        if posixpath.basename(path) == "uv.toml":
            return UvSettings.from_uv_toml(text, path)
        if not conflict_marker_lines(text):
            found = Pyproject.from_text(text, path)
            if "uv" in found.data.get("tool", {}):
                return found.uv_settings
    return None


def _local_projects(reader: FileReader, lock: Lock) -> tuple[dict[str, Pyproject], dict[str, str]]:
    """(pyproject.toml of each local package in the lock (path, editable, workspace member), by
    lock path; the recorded workspace members in git submodules that are not checked out).

    At a ref, a member inside a submodule is read from the submodule's checkout at the commit
    the ref records (depsync/shell/submodules.py): `check --ref` sees what `check` sees."""
    from depsync.core.rules.missing_members import recorded_member_dirs
    from depsync.shell.submodules import Submodules, submodules_of

    out: dict[str, Pyproject] = {}
    unread: list[str] = []
    submodules: Submodules | None = None
    for package in lock.packages:
        path = package.source.value
        if package.source.kind not in ("editable", "directory", "virtual") or path == ".":
            continue
        name = f"{path}/pyproject.toml"
        try:
            text = reader.read_text(name, required=False)
            if text is None and reader.ref is not None:
                submodules = submodules or submodules_of(reader.root, reader.ref)
                data = submodules.read_at_ref(name)
                text = data.decode("utf-8", errors="replace") if data is not None else None
        except (DepsyncError, ValueError):
            continue  # outside the repository (with --ref) or unreadable: not compared
        if text is None:
            unread.append(path)
        elif not conflict_marker_lines(text):
            out[path] = Pyproject.from_text(text, name)
    if not unread:
        return out, {}
    submodules = submodules or submodules_of(reader.root, reader.ref)
    members = recorded_member_dirs(lock)
    return out, {member: path for member, path in sorted(members.items()) if path in unread and submodules.containing(path) is not None}


def _workspace_members(root: Path, pyproject: Pyproject) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    """(names of the workspace members on disk, root included, None without [tool.uv.workspace];
    the members that resolve outside the project, by path: uv reads them, depsync does not)."""
    from depsync.shell.members import named_members

    workspace = pyproject.uv.get("workspace")
    if not isinstance(workspace, dict):
        return None, ()
    names = {pyproject.name} if pyproject.name else set()
    members, outside = named_members(str(root), list(workspace.get("members", [])), list(workspace.get("exclude", [])))
    for relative in members:
        member = Pyproject.from_text((root / relative / "pyproject.toml").read_text(), f"{relative}/pyproject.toml")
        if member.name:
            names.add(member.name)
    return frozenset(names), tuple(outside)


def _workspace_members_at(reader: FileReader, pyproject: Pyproject) -> frozenset[str] | None:
    """_workspace_members at reader.ref, from the tree: a member inside a git submodule is read
    through the submodule's checkout at the commit the ref records (as `check` reads it on disk)."""
    import fnmatch

    from depsync.core.paths_of import glob_regex
    from depsync.shell import git
    from depsync.shell.submodules import submodules_of

    workspace = pyproject.uv.get("workspace")
    if not isinstance(workspace, dict) or reader.ref is None:
        return None
    excluded = [str(p).rstrip("/") for p in workspace.get("exclude", [])]
    entries = git.tree_entries(reader.root, reader.ref)
    directories = {path.rpartition("/")[0] for mode, path, _ in entries if path.endswith("/pyproject.toml") and mode in ("100644", "100755")}
    submodules = submodules_of(reader.root, reader.ref)
    directories |= set(submodules.links)
    names = {pyproject.name} if pyproject.name else set()
    for pattern in workspace.get("members", []):
        matches = glob_regex(str(pattern).rstrip("/"))
        for relative in sorted(d for d in directories if d and matches.fullmatch(d)):
            if any(fnmatch.fnmatch(relative, e) for e in excluded):
                continue
            path = f"{relative}/pyproject.toml"
            try:
                text = reader.read_text(path, required=False)
                if text is None:
                    data = submodules.read_at_ref(path)
                    text = data.decode("utf-8", errors="replace") if data is not None else None
            except (DepsyncError, ValueError):
                continue
            if text is not None and not conflict_marker_lines(text):
                member = Pyproject.from_text(text, path)
                if member.name:
                    names.add(member.name)
    return frozenset(names)


def _protected(
    root: Path, ref: str | None, config: Config, *, explicit: bool, paths_configured: bool = True, repository: bool = True
) -> tuple[tuple[ProtectedFile, ...], str, str]:
    """(comparisons, a note for the report, why nothing was compared when that is no finding).

    Megatron's defaults (owner ref `origin/dev`, `.github/CODEOWNERS`) apply only where they
    exist: a default path present neither here nor at the owner ref is not compared, and a
    missing default owner ref is a note only when the repository has the protected file and a
    branch of that name (`dev`, `upstream/dev`); otherwise `-v` says it. The owner's upstream branch itself
    (`main` for `origin/main`, or a commit of its history) is not compared: its protected
    files are its own, and a pre-commit hook on main must not fail there."""
    from depsync.core.rules.inputs import ProtectedFile

    if not config.protected_paths:
        return (), "", ""
    if not repository:
        return (), "", ""  # nothing to compare with: not a finding
    from depsync.shell import git

    try:
        git.resolve(root, config.owner_ref)
    except DepsyncError:
        if explicit:
            raise
        here = FileReader(root, ref)
        present = [p for p in config.protected_paths if here.read_bytes(p) is not None]
        # the defaults fit here (CODEOWNERS, a dev branch under another name or not fetched): say so
        branch = config.owner_ref.rsplit("/", 1)[-1]
        if paths_configured or (present and git.branches_named(root, branch)):
            return (), f"owner ref {config.owner_ref} not found: protected paths not compared", ""
        return (), "", f"the default owner ref {config.owner_ref} is not in this clone (set [tool.depsync] owner-ref to require one)"
    checked = ref or "HEAD"
    if _on_upstream(root, checked, ref, config.upstream_ref) and not git.is_ancestor(root, checked, config.owner_ref):
        return (), "", f"{checked} is on {config.upstream_ref}, the branch synced into {config.owner_ref}"
    here = FileReader(root, ref)
    owner = FileReader(root, config.owner_ref)
    out = []
    for path in config.protected_paths:
        mine, theirs = here.read_bytes(path), owner.read_bytes(path)
        if not paths_configured and mine is None and theirs is None:
            continue  # a default path this repository does not have
        if mine == theirs:
            status = "same"
        elif mine is None:
            status = "missing-here"
        elif theirs is None:
            status = "missing-owner"
        else:
            status = "differs"
        out.append(ProtectedFile(path, status))
    return tuple(out), "", ""


def _owner_protected_paths(root: Path, config: Config) -> tuple[tuple[str, ...], bool]:
    """(the protected paths the owner ref's committed config has, whether it names them), in a
    repository; nothing without the owner ref, or when its pyproject is missing, mid-merge or not
    valid (the tree's list stands alone then)."""
    from depsync.shell import git
    try:
        git.resolve(root, config.owner_ref)
    except DepsyncError:
        return (), False
    pyproject_path = config.pyproject
    text = FileReader(root, config.owner_ref).read_text(pyproject_path, required=False)
    if text is None or conflict_marker_lines(text):
        return (), False
    try:
        table = Pyproject.from_text(text, pyproject_path).depsync_config
        return load_config(table, text, pyproject_path).protected_paths, "protected-paths" in table
    except DepsyncError:
        return (), False


def _on_upstream(root: Path, checked: str, ref: str | None, upstream_ref: str) -> bool:
    """Is the checked commit the owner's upstream branch: a commit of its history, or (the work
    tree) the local branch of that name (`main` with commits origin/main does not have yet)?
    The caller still compares a commit the owner's history has too (main merged dev)."""
    from depsync.shell import git

    try:
        git.resolve(root, upstream_ref)
    except DepsyncError:
        return False
    if git.is_ancestor(root, checked, upstream_ref):
        return True
    if ref is None:
        branch = git.current_branch(root)
        return branch is not None and branch == upstream_ref.rsplit("/", 1)[-1] and upstream_ref.endswith("/" + branch)
    return False
