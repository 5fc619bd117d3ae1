"""Shell: read project files from the work tree or from a git ref, confined to the project."""

from __future__ import annotations

from pathlib import Path

from depsync.core.limits import check_size
from depsync.core.trust import project_relative
from depsync.errors import DepsyncError
from depsync.records import record


def inside(path: Path, root: Path) -> bool:
    """path, symlinks resolved, is root or below it."""
    return path.resolve().is_relative_to(root.resolve())


@record
class FileReader:
    """Reads project files from the work tree (ref None) or from a git ref, by path relative to root."""

    root: Path
    ref: str | None = None

    def read_bytes(self, path: str) -> bytes | None:
        """The file's bytes, None when absent. Paths come from config and the lock: one that
        leaves the project (`..`, absolute, a symlink pointing out) is an error, never read."""
        relative = project_relative(path, "path")
        if self.ref is not None:
            from depsync.shell import git

            data = git.read_blob(self.root, self.ref, relative)
            if data is not None:
                check_size(len(data), f"{self.ref}:{relative}")
            return data
        file = self.root / relative
        if not file.is_file():
            return None
        if not inside(file, self.root):
            raise DepsyncError(f"{path} resolves outside the project (a symlink); depsync does not read it", path)
        check_size(file.stat().st_size, path)
        return file.read_bytes()

    def read_text(self, path: str, *, required: bool = True) -> str | None:
        data = self.read_bytes(path)
        where = f"{self.ref}:{path}" if self.ref else path
        if data is None:
            if required:
                # no `where`: the message names the path already ("uv.lock: uv.lock not found" said it twice)
                raise DepsyncError(f"{path} not found" + (f" at {self.ref}" if self.ref else f" in {self.root}"))
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DepsyncError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", where) from None
