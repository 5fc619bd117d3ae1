"""Shell: atomic file writes, byte-exact snapshots for rollback, and paths confined to the project.

depsync writes only inside the project it was pointed at (reports the caller names
excepted), never through a symlink, and never leaves a half-written file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path, PurePosixPath

from depsync.core.trust import project_relative
from depsync.errors import DepsyncError
from depsync.shell import faults, signals


def confined(root: Path, relative: str, what: str = "path") -> Path:
    """root/relative, refused when it leaves the project or passes through a symlink.

    relative comes from config or a Dockerfile (repository content): `..`, absolute paths
    and symlinked components could make depsync overwrite a file anywhere."""
    current = root
    for part in PurePosixPath(project_relative(relative, what)).parts:
        current = current / part
        if current.is_symlink():
            raise DepsyncError(f"{what} {relative} is a symlink (or inside one); depsync never writes through symlinks")
    return current


def output_file(path: Path, what: str) -> Path:
    """A report file the caller named (--summary, --plan-json): checked before anything is
    written, so a bad one fails the run early instead of after the lock was replaced."""
    if path.is_symlink():
        raise DepsyncError(f"{what} {path} is a symlink; depsync never writes through symlinks")
    if path.is_dir():
        raise DepsyncError(f"{what} {path} is a directory; name a file")
    if not path.parent.is_dir():
        raise DepsyncError(f"{what} {path}: the directory {path.parent} does not exist")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise DepsyncError(f"{what} {path} is not writable")
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path via a temp file in the same directory and os.replace (keeps the mode).

    A symlink at path is refused: os.replace would swap the link, but reading its mode, a
    rollback or another tool would follow it."""
    if path.is_symlink():
        raise DepsyncError(f"{path} is a symlink; depsync never writes through symlinks")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:  # a new file gets the mode open() would give it, not mkstemp's 0600
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".depsync-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        faults.point("write:before-replace")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(path: Path, text: str) -> None:
    """A summary or JSON plan: a sink like stdout, so it is redacted like stdout."""
    from depsync.core.redact import redact

    write_atomic(path, redact(text).encode())


class Snapshot:
    """The exact bytes (or absence) of some files, to put back after a failed step.

    Paths are relative to root and confined to it; `extra` takes absolute paths depsync
    itself chose (the git index)."""

    def __init__(self, root: Path, paths: list[str], extra: list[Path] = ()) -> None:  # type: ignore[assignment]
        self.saved: dict[Path, bytes | None] = {}
        self.extra = set(extra)
        self.wrote: dict[Path, bytes | None] = {}  # what this run wrote (None: removed), recorded before writing
        for file in [confined(root, relative) for relative in paths] + list(extra):
            self.saved[file] = file.read_bytes() if file.is_file() else None

    def writing(self, file: Path, data: bytes | None) -> None:
        """Say what this run is about to write at file: only that is undone by restore."""
        self.wrote[file] = data

    def _ours(self, file: Path) -> bool:
        """The file holds what this run wrote (or was never written through `writing`: the old
        rule, for callers that do not say): a file someone else changed since is theirs."""
        if file not in self.wrote or file in self.extra:
            return not self.wrote or file in self.extra
        current = file.read_bytes() if file.is_file() else None
        return current == self.wrote[file]

    def restore(self) -> None:
        # a second signal must not cut the rollback in half
        with signals.deferred():
            for file, data in self.saved.items():
                if not self._ours(file):
                    continue  # never written by this run, or changed by someone else since: not ours to undo
                if data is None:
                    file.unlink(missing_ok=True)
                elif not file.is_file() or file.read_bytes() != data:
                    write_atomic(file, data)
