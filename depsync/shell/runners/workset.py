"""What of a project goes into a runner's work copy: what `uv lock` reads, not the whole tree.

uv lock reads the manifests (pyproject.toml of the root, of each workspace member and of each
path package it can reach, uv.lock, uv.toml, .python-version), local indexes and find-links
directories, and, only when it has to resolve, whatever the build backend of a package with
dynamic metadata reads (which may be the package's whole source). So:

- the candidates are the files git knows in the work tree: tracked plus untracked-but-not-ignored
  (`git ls-files --cached --others --exclude-standard`), never .git, venvs or ignored build output;
  outside a git work tree, the whole tree as before (runners.copy_project's skip list);
- a reachable package directory or local index that git ignores is copied whole: uv reads it;
- `minimal`: manifests, local indexes and the sources of dynamic path packages (uv builds those
  to validate even a fresh lock), for a run that should not resolve (a lock uv answers from what
  it recorded of the workspace members). The runner checks the outcome: when uv failed or wrote
  another lock than it was given, it runs again on the `full` set, so a wrong guess costs time,
  never a wrong lock;
- `full`: the manifests, local indexes and every file of the packages whose metadata uv has to
  build (dynamic fields, or no [project] table).

Paths outside the project are never copied (the local runner's copy sits next to the project,
so `../x` resolves to the same place; a container sees only the copy).
"""

from __future__ import annotations

import os
import stat
import subprocess
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from depsync.errors import DepsyncError
from depsync.records import record
from depsync.shell import process
from depsync.shell.runners.protocol import LineSink, LockRun
from depsync.shell.runners.workcopy import read_result

# files uv reads in a package directory (the root also has the lock and uv's own settings)
_PACKAGE_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
_ROOT_MANIFESTS = ("uv.lock", "uv.toml", ".python-version", ".python-versions")
# uv options that make it resolve whatever the lock says
_RESOLVING_ARGS = ("--upgrade", "-U", "--upgrade-package", "-P")


@record
class WorkSet:
    """files: paths relative to the project (files or symlinks); whole: directories copied with
    everything in them (runners' skip list applied); None for files means the whole tree."""

    files: tuple[str, ...] | None
    whole: tuple[str, ...]
    minimal: bool
    reason: str
    self_contained: bool = False  # every path source and local index is inside the project
    members: tuple[str, ...] = ()  # the workspace members: always in the copy, wherever they are

    def fingerprint(self, project: Path) -> str:
        """The bytes uv reads in a minimal run (manifests and lock), for remembering its outcome."""
        import hashlib

        digest = hashlib.sha256()
        for relative in sorted(self.files or ()):
            try:
                digest.update(relative.encode() + b"\0" + _read_no_follow(project / relative) + b"\0")
            except OSError:
                digest.update(relative.encode() + b"\0-\0")
        for relative in sorted(self.whole):
            digest.update(b"dir\0" + relative.encode() + b"\0")
        return digest.hexdigest()


def _read_no_follow(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def git_files(project: Path) -> list[str] | None:
    """Tracked and untracked-but-not-ignored paths under project, relative to it; None outside a
    git work tree. The repository's config runs nothing: no fsmonitor hook, no external tools."""
    try:
        result = process.run(
            ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C", str(project),
             "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            timeout=60,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):  # no git, or it hung: the whole tree, as before
        return None
    if result.returncode != 0:
        return None
    names = {name for name in result.stdout.decode("utf-8", "surrogateescape").split("\0") if name}
    return sorted(names)


def _load(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_read_no_follow(path).decode())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _inside(project: Path, candidate: Path) -> str | None:
    """candidate relative to project (lexically and after resolving links), or None when outside."""
    try:
        relative = PurePosixPath(os.path.normpath(candidate)).relative_to(PurePosixPath(os.path.normpath(project)))
        Path(os.path.realpath(candidate)).relative_to(os.path.realpath(project))
    except ValueError:
        return None
    return "" if str(relative) == "." else str(relative)


def _local_directory(url: str) -> str | None:
    """The directory a local index or find-links entry names (relative or file:), else None."""
    if url.startswith("file://"):
        return url.removeprefix("file://")
    if "://" in url:
        return None
    return url


def _sources_paths(data: dict[str, Any]) -> list[str]:
    sources = data.get("tool", {}).get("uv", {}).get("sources", {})
    found: list[str] = []
    for value in sources.values() if isinstance(sources, dict) else ():
        for entry in value if isinstance(value, list) else [value]:
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                found.append(entry["path"])
    return found


def _index_dirs(data: dict[str, Any]) -> list[str]:
    uv = data.get("tool", {}).get("uv", {})
    urls: list[str] = []
    for index in uv.get("index", []) if isinstance(uv.get("index"), list) else []:
        if isinstance(index, dict) and isinstance(index.get("url"), str):
            urls.append(index["url"])
    for key in ("find-links", "extra-index-url"):
        value = uv.get(key)
        urls += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    if isinstance(uv.get("index-url"), str):
        urls.append(uv["index-url"])
    return [d for d in map(_local_directory, urls) if d is not None]


def _builds(data: dict[str, Any]) -> bool:
    """Whether uv needs the build backend for this package's metadata."""
    project = data.get("project")
    if not isinstance(project, dict):
        return True  # setup.py only, or no [project]: only a build says what it is
    return bool(project.get("dynamic"))


def _members(project: Path, root_data: dict[str, Any]) -> list[str]:
    """The workspace members the root names (globs, minus excluded), relative to project, as uv
    reads them: under `venv/` or `node_modules/` too, and through a symlink that stays inside
    the project. One that resolves outside it is an error: uv would read it, the copy cannot."""
    from depsync.shell.members import named_members

    workspace = root_data.get("tool", {}).get("uv", {}).get("workspace", {})
    if not isinstance(workspace, dict) or not isinstance(workspace.get("members", []), list):
        return []
    excludes = workspace.get("exclude", [])
    members, outside = named_members(str(project), workspace.get("members", []), excludes if isinstance(excludes, list) else [])
    if outside:
        raise DepsyncError(f"workspace member {outside[0]} resolves outside the project (a symlink or `../`): uv would read it, "
                           "a work copy cannot hold it; move it into the project or exclude it")
    return members


def _linked(project: Path, relative: str) -> bool:
    """Whether the path reaches its directory through a symlink (inside the project: checked before)."""
    return os.path.realpath(project / relative) != os.path.join(os.path.realpath(project), relative)


def reachable(project: Path) -> tuple[dict[str, bool], set[str], set[str], bool]:
    """(package directory -> needs a build to be read, local index directories, workspace
    members, whether all of them are inside project), relative to project: the root, its
    workspace members and the path packages each of them names, transitively."""
    packages: dict[str, bool] = {}
    members: set[str] = {""}
    indexes: set[str] = set()
    outside = False
    settings = _load(project / "uv.toml")  # uv's own settings file: the same keys, at the top level
    for index in _index_dirs({"tool": {"uv": settings}}):
        inside = _inside(project, project / index)
        outside = outside or inside is None
        if inside is not None:
            indexes.add(inside)
    todo = [""]
    while todo:
        relative = todo.pop()
        if relative in packages:
            continue
        directory = project / relative if relative else project
        data = _load(directory / "pyproject.toml")
        if not data and not (directory / "setup.py").is_file() and relative:
            packages[relative] = False  # nothing uv can read as a package; its manifests are copied anyway
            continue
        packages[relative] = _builds(data)
        if not relative:
            for member in _members(project, data):
                members.add(member)
                todo.append(member)
        for path in _sources_paths(data):
            inside = _inside(project, directory / path)
            outside = outside or inside is None
            if inside is not None and (project / inside).is_dir():
                todo.append(inside)
        for index in _index_dirs(data) if not relative else []:  # uv reads index settings at the root only
            inside = _inside(project, directory / index)
            outside = outside or inside is None
            if inside is not None:
                indexes.add(inside)
    return packages, indexes, members, not outside


def _under(path: str, directory: str) -> bool:
    return not directory or path == directory or path.startswith(directory + "/")


def work_set(project: Path, minimal: bool) -> WorkSet:
    """The files of project a `uv lock` run gets (see the module's docstring)."""
    packages, indexes, members, contained = reachable(project)
    # uv answers a fresh lock from what it records of workspace members, but builds a dynamic path
    # package again to compare (its metadata cache is keyed by path, and the copy's path is new)
    building = {p for p, builds in packages.items() if builds and not (minimal and p in members)}
    # git is asked only when a directory's content is copied (manifests are named, not listed)
    found = git_files(project) if building or indexes or not minimal else []
    named = tuple(sorted(m for m in members if m))
    if found is None and not minimal:
        return WorkSet(None, (), False, "not a git work tree: the whole tree", members=named)
    known = found or []  # outside git, a minimal run copies those directories whole
    wanted: set[str] = {name for name in _ROOT_MANIFESTS if os.path.lexists(project / name)}
    whole: set[str] = set()
    for package in packages:
        if package and _linked(project, package):
            whole.add(package)  # behind a link inside the project: copied as a directory, through the link
            continue
        if package and package in building and not any(_under(name, package) for name in known):
            whole.add(package)  # a package git ignores that uv builds: uv reads it all the same
            continue
        for manifest in _PACKAGE_MANIFESTS:
            name = f"{package}/{manifest}" if package else manifest
            if os.path.lexists(project / name):
                wanted.add(name)
    for index in indexes:
        if any(_under(name, index) for name in known):
            wanted.update(name for name in known if _under(name, index))
        elif (project / index).is_dir():
            whole.add(index)
    for package in building - whole:
        wanted.update(name for name in known if _under(name, package))
    wanted = {name for name in wanted if not any(_under(name, directory) for directory in whole)}
    what = f"{'minimal' if minimal else 'full'}: manifests, local indexes and the sources of {len(building)} package(s) uv builds"
    counted = f"{len(wanted)} of {len(known)} files git knows" if found else f"{len(wanted)} files named"
    return WorkSet(tuple(sorted(wanted)), tuple(sorted(whole)), minimal, f"{what}: {counted}", contained, named)


# what uv looks for in the directories above a project (workspace root, settings, interpreter pin)
_FOUND_UPWARDS = ("pyproject.toml", "uv.toml", ".python-version", ".python-versions")


def memory_parent(project: Path, selection: WorkSet) -> Path | None:
    """/dev/shm, when a host work copy may go there instead of next to the project: every path
    uv reads is inside the copy (no `../x` source or index), no directory above the project
    holds anything uv looks for upwards, and /dev/shm is a tmpfs with room that allows running
    programs (a build backend may). Creating files there costs a fraction of a journaled disk's."""
    if selection.files is None or not selection.self_contained:
        return None
    for ancestor in project.parents:
        if any(os.path.lexists(ancestor / name) for name in _FOUND_UPWARDS):
            return None
    shm = Path("/dev/shm")
    try:
        with open("/proc/self/mounts") as mounts:
            fields = next((line.split() for line in mounts if line.split()[1:3] == ["/dev/shm", "tmpfs"]), None)
        if fields is None or "noexec" in fields[3].split(","):
            return None
        stats = os.statvfs(shm)
    except OSError:
        return None
    if stats.f_bavail * stats.f_frsize < 2 << 30 or not os.access(shm, os.W_OK | os.X_OK):
        return None
    return shm


def resolves(args: list[str]) -> bool:
    """Whether the arguments ask uv to resolve whatever the lock says."""
    return any(arg in _RESOLVING_ARGS or arg.startswith(("--upgrade-package=", "-P")) for arg in args)


# -- copying a work set, reading the result back ---------------------------------------------


def copy_work_set(project: Path, destination: Path, selection: WorkSet) -> Path:
    """Copy the selected files (symlinks stay symlinks, never followed) and directories into
    destination. A selected path whose parent is, in the work tree, a link out of the project
    is left out: git listed it before the directory became a link; a link inside the project
    (a workspace member behind one) becomes a real directory with the target's files."""
    from depsync.shell.runners.workcopy import _Copier, copy_project

    if selection.files is None:
        copy_project(project, destination)
        for member in selection.members:  # the whole tree's copy skips venv/, node_modules/... and copies links as links
            target = destination / member
            if not os.path.lexists(target / "pyproject.toml") and not os.path.lexists(target):
                target.parent.mkdir(parents=True, exist_ok=True)
                parent, top = os.path.realpath(target.parent), os.path.realpath(destination)
                if parent == top or parent.startswith(top + os.sep):  # never through a copied link
                    copy_project(Path(os.path.realpath(project / member)), target)
        return destination
    copier = _Copier()
    destination.mkdir(parents=True, exist_ok=True)
    real_project = os.path.realpath(project)
    made: dict[str, bool] = {"": True}  # relative directory -> created (False: unusable)
    directories: list[tuple[str, str]] = []

    def parent_ready(relative: str) -> bool:
        parent = os.path.dirname(relative)
        if parent in made:
            return made[parent]
        ok = parent_ready(parent)
        if ok:
            source = os.path.join(project, parent)
            real = os.path.realpath(source)
            info = os.lstat(source) if os.path.lexists(source) else None
            # a link that stays inside the project (a workspace member behind one): a real directory in the copy
            ok = info is not None and os.path.isdir(source) and (real == real_project or real.startswith(real_project + os.sep))
            if ok:
                os.mkdir(os.path.join(destination, parent), 0o700)
                directories.append((source, os.path.join(destination, parent)))
        made[parent] = ok
        return ok

    for relative in selection.files:
        if not parent_ready(relative):
            continue
        source, target = os.path.join(project, relative), os.path.join(destination, relative)
        try:
            info = os.lstat(source)
        except FileNotFoundError:
            continue  # tracked, deleted in the work tree
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(source), target)
        elif stat.S_ISREG(info.st_mode):
            copier.file(source, target, info)
        elif stat.S_ISDIR(info.st_mode):  # a submodule
            copy_project(Path(source), Path(target))
    for relative in selection.whole:
        source = os.path.join(project, relative)
        real = os.path.realpath(source)
        if parent_ready(relative) and not os.path.lexists(os.path.join(destination, relative)) and os.path.isdir(source) and real.startswith(real_project + os.sep):
            copy_project(Path(real), destination / relative)  # through a link inside the project: its directory
    for source, target in reversed(directories):  # modes and times last: a read-only directory is filled first
        info = os.lstat(source)
        os.chmod(target, stat.S_IMODE(info.st_mode))
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    return destination


# -- which set first ---------------------------------------------------------------------------


def _memo() -> Path:
    from depsync.shell import cache

    return Path(cache.root()) / "workset" / "unchanged"


def remembered_unchanged(fingerprint: str) -> bool:
    """A minimal run on exactly these manifests and lock left the lock as it was before."""
    return (_memo() / fingerprint).is_file()


def remember_unchanged(fingerprint: str) -> None:
    try:
        folder = _memo()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        (folder / fingerprint).touch()
    except OSError:
        pass  # a memo only saves time


def predicted_fresh(project: Path) -> bool:
    """depsync's own static freshness rule (tested against `uv lock --check`) finds nothing: uv
    will answer from the lock without resolving, so it builds nothing."""
    try:
        from depsync.core.rules import freshness
        from depsync.shell.workspace import load_inputs

        inputs = load_inputs(project)
        if inputs.lock is None:  # conflict markers
            return False
        return not any(True for _ in freshness.check(inputs))
    except Exception:  # noqa: BLE001 - any doubt: the full set
        return False


def first_work_set(project: Path, args: list[str]) -> WorkSet:
    """Minimal when uv should not resolve (no upgrade asked, and the lock is fresh: remembered
    from an earlier run on the same bytes, or predicted by the freshness rule); else full."""
    if resolves(args) or not os.path.isfile(project / "uv.lock"):
        return work_set(project, minimal=False)
    minimal = work_set(project, minimal=True)
    if minimal.files is None:
        return minimal
    if remembered_unchanged(minimal.fingerprint(project)) or predicted_fresh(project):
        return minimal
    return work_set(project, minimal=False)


def settled(project: Path, selection: WorkSet, returncode: int, new_lock: bytes | None, checking: bool) -> bool:
    """Whether a run on `selection` stands. A minimal run stands only when uv succeeded and left
    the lock byte for byte as it was (or, checking, found it fresh): anything else may have needed
    a file the minimal set left out, so it runs again on the full set."""
    if not selection.minimal:
        return True
    if returncode != 0:
        return False
    if checking:
        return True
    try:
        old = read_result(project)
    except DepsyncError:  # not a plain file: nothing to compare with
        old = None
    if new_lock is not None and new_lock == old:
        remember_unchanged(selection.fingerprint(project))
        return True
    return False


def lock_on_work_sets(
    project: Path, args: list[str], replace: Mapping[str, bytes] | None, on_line: LineSink | None,
    attempt: Callable[[WorkSet, LineSink | None], LockRun],
) -> LockRun:
    """The runners' one policy: `attempt` a lock on the minimal set when uv should not resolve,
    again on the full set unless that run stands (see settled); a minimal run's log is passed on
    only once it stands (it is short: uv answered from the lock). Replaced files are not what the
    freshness prediction read: they always get the full set."""
    selection = work_set(project, minimal=False) if replace else first_work_set(project, args)
    while True:
        result = attempt(selection, None if selection.minimal else on_line)
        if settled(project, selection, result.returncode, result.new_lock, "--check" in args):
            if selection.minimal and on_line:
                for line in result.output.splitlines():
                    on_line(line)
            return result
        selection = work_set(project, minimal=False)
