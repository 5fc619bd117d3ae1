"""The work copy a runner gives uv: made without links, written into only by uv, read back without following links."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

# not copied into the work copy: VCS data, environments, caches and build metadata uv does not read
_SKIP = (".git", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", ".nox", "*.egg-info")


_SKIP_NAMES = frozenset(p for p in _SKIP if "*" not in p)


_SKIP_SUFFIXES = tuple(p.removeprefix("*") for p in _SKIP if p.startswith("*"))  # "*.egg-info" -> ".egg-info"


_FICLONE = 0x40049409  # linux/fs.h: share extents copy-on-write (btrfs, xfs); not an inode


# a filesystem that cannot reflink or copy_file_range says so with one of these: stop asking it
_NO_FAST_COPY = {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EBADF, errno.EPERM}


def path_rewriter(copy: str, project: str) -> Callable[[str], str]:
    """Rewrites the work copy's path in uv's messages to the project's, so what the user reads
    names their files. Only whole path components: `/workspace2` stays as it is."""
    pattern = re.compile(r"(?<![\w.-])" + re.escape(copy.rstrip("/")) + r"(?=$|[/\s'\"`:,;)\]>])")
    target = project.rstrip("/") or "/"

    def rewrite(line: str) -> str:
        return pattern.sub(lambda _: target, line) if copy in line else line

    return rewrite


def write_replacements(copy: Path, replace: Mapping[str, bytes] | None) -> None:
    for relative, data in (replace or {}).items():
        target = copy / relative
        target.unlink(missing_ok=True)  # a symlink in the copy is replaced, never written through
        target.write_bytes(data)


def read_result(copy: Path, name: str = "uv.lock") -> bytes | None:
    """A file uv wrote at the top of the work copy, read without following links: a build
    backend in the copy can replace uv.lock with a symlink (or a hard link, a FIFO, a device)
    to a host file, and that file must never become the caller's lock. None when there is
    no such regular file; anything else is an error."""
    from depsync.core.limits import check_size
    from depsync.errors import DepsyncError

    try:
        handle = os.open(copy / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DepsyncError(f"the {name} uv left in the work copy is a symlink (a build backend replaced it); not read, nothing changed") from None
        raise
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise DepsyncError(f"the {name} uv left in the work copy is not a plain file (a link or a special file); not read, nothing changed")
        check_size(info.st_size, name)
        with os.fdopen(handle, "rb", closefd=False) as stream:
            return stream.read()
    finally:
        os.close(handle)


def _skipped(name: str) -> bool:
    # the globs are all "*<suffix>": a suffix test, not fnmatch, for each of a project's files
    return name in _SKIP_NAMES or name.endswith(_SKIP_SUFFIXES)


class _Copier:
    """Copies regular files with the fewest syscalls: a reflink, else copy_file_range (in the
    kernel), else read/write. The first refusal of a fast way is remembered for the whole copy."""

    def __init__(self) -> None:
        self.reflink = True
        self.copy_range = hasattr(os, "copy_file_range")  # Linux only

    def file(self, source: str, destination: str, info: os.stat_result) -> None:
        src = os.open(source, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        try:
            # O_EXCL: never through a symlink or onto a file someone planted meanwhile
            dst = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                self._data(src, dst, info.st_size)
                os.fchmod(dst, stat.S_IMODE(info.st_mode))
                os.utime(dst, ns=(info.st_atime_ns, info.st_mtime_ns))  # uv compares mtimes of path sources
            finally:
                os.close(dst)
        finally:
            os.close(src)

    def _data(self, src: int, dst: int, size: int) -> None:
        if self.reflink and size:
            try:
                fcntl.ioctl(dst, _FICLONE, src)
                return
            except OSError as exc:
                if exc.errno not in _NO_FAST_COPY:
                    raise
                self.reflink = False
        if self.copy_range and size:
            try:
                left = size
                while left > 0:
                    done = os.copy_file_range(src, dst, left)
                    if done == 0:
                        break
                    left -= done
                if left <= 0:
                    return
            except OSError as exc:
                if exc.errno not in _NO_FAST_COPY:
                    raise
                self.copy_range = False
            os.lseek(src, 0, os.SEEK_SET)
            os.ftruncate(dst, 0)
            os.lseek(dst, 0, os.SEEK_SET)
        while chunk := os.read(src, 1 << 20):
            view = memoryview(chunk)
            while view:
                view = view[os.write(dst, view) :]


def copy_project(project: Path, destination: Path) -> Path:
    """Copy the project (without VCS data, venvs and caches) into destination (may exist, empty).

    Symlinks stay symlinks (never followed while copying); in the container they resolve
    inside the container. Only regular files, directories and symlinks are copied: a FIFO or
    a device node in a work tree would block or mean nothing in the copy."""
    copier = _Copier()
    destination.mkdir(parents=True, exist_ok=True)
    directories: list[tuple[str, str, os.stat_result]] = []
    todo = [(str(project), str(destination))]
    while todo:
        source_dir, target_dir = todo.pop()
        with os.scandir(source_dir) as entries:
            for entry in entries:
                if _skipped(entry.name):
                    continue
                target = f"{target_dir}/{entry.name}"
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    os.symlink(os.readlink(entry.path), target)
                elif stat.S_ISDIR(info.st_mode):
                    os.mkdir(target, 0o700)
                    directories.append((entry.path, target, info))
                    todo.append((entry.path, target))
                elif stat.S_ISREG(info.st_mode):
                    copier.file(entry.path, target, info)
    for _, target, info in reversed(directories):  # modes and times last: a read-only directory is filled first
        os.chmod(target, stat.S_IMODE(info.st_mode))
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    return destination


def version_environment(copy: Path, environ: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """(environment to add for uv in the copy, a note): a stand-in version for the workspace's
    own projects (the root and its members) whose build backend reads it from git, by name,
    and the fallback written into the copy's pyproject for the tools that have no per-package
    variable (depsync/core/model/vcs_version.py). Never a global override: it would reach the
    git dependencies uv builds too."""
    import tomllib

    from depsync.core.model.vcs_version import (
        fallback_edits,
        overrides_note,
        version_overrides,
        with_fallbacks,
    )
    from depsync.shell.members import member_directories

    def text(path: Path) -> str:
        try:
            return path.read_text(errors="replace") if path.is_file() and not path.is_symlink() else ""
        except OSError:
            return ""

    files = [copy / "pyproject.toml"]
    root = text(files[0])
    try:
        members = tomllib.loads(root).get("tool", {}).get("uv", {}).get("workspace", {}).get("members", [])
    except tomllib.TOMLDecodeError:
        members = []
    for pattern in members[:100] if isinstance(members, list) else []:
        if isinstance(pattern, str) and not pattern.startswith("/") and ".." not in pattern:  # never outside the copy
            # uv's member globbing (dot directories, `**` at any depth), as check reads members
            found = member_directories(str(copy), pattern)[:500]
            files += [copy / relative / "pyproject.toml" for relative, has_pyproject in found if has_pyproject]
    files = list(dict.fromkeys(files))
    texts = [root, *(text(path) for path in files[1:])]
    fallbacks = 0
    for path, content in zip(files, texts):
        edited = with_fallbacks(content, fallback_edits(content, environ))
        if edited is not None and not path.is_symlink() and path.resolve().is_relative_to(copy.resolve()):  # the copy's own files only
            path.write_text(edited)
            fallbacks += 1
    added = version_overrides(texts, environ)
    return added, overrides_note(added, fallbacks)
