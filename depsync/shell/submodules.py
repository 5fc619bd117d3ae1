"""Shell: the git submodules of a project (gitlinks), and reading a file inside one at a ref.

A workspace member inside a submodule that is not checked out (actions/checkout's default) has
no pyproject.toml in the work tree; at a ref, a file inside a submodule is never in the parent's
tree. So that `check` and `check --ref` give one verdict, a member's pyproject.toml at a ref is
read from the submodule's own checkout, at the commit the ref records for it; a member that
cannot be read either way is "not checked out" (rule members-not-checked-out).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from depsync.errors import DepsyncError
from depsync.records import field, record

_GITLINK = "160000"


@record
class Submodules:
    """The gitlinks under a project root (path relative to it -> the commit recorded), at a ref
    or in the index (the work tree)."""

    root: Path
    ref: str | None = None
    links: dict[str, str] = field(default_factory=dict)

    def containing(self, path: str) -> str | None:
        """The submodule path that holds path (itself, or a directory above it), if any."""
        parts = PurePosixPath(path).parts
        for index in range(len(parts), 0, -1):
            candidate = PurePosixPath(*parts[:index]).as_posix()
            if candidate in self.links:
                return candidate
        return None

    def read_at_ref(self, path: str) -> bytes | None:
        """At a ref: path inside a submodule, read from the submodule's checkout at the commit
        the ref records (None: no such submodule, not checked out, or that commit not fetched)."""
        if self.ref is None:
            return None
        link = self.containing(path)
        if link is None:
            return None
        checkout = self.root / link
        if not (checkout / ".git").exists():
            return None  # not checked out (`git submodule update --init` was not run)
        from depsync.shell import git

        try:
            if git.toplevel(checkout).resolve() != checkout.resolve():
                return None  # the directory is no repository of its own: the parent's
            inner = PurePosixPath(path).relative_to(link).as_posix()
            return git.read_blob(checkout, self.links[link], inner)
        except (DepsyncError, OSError, ValueError):
            return None


def submodules_of(root: Path, ref: str | None) -> Submodules:
    """The gitlinks under root at ref (work tree: the index); none outside a repository."""
    from depsync.shell import git

    if not git.is_repository(root):
        return Submodules(root, ref)
    try:
        if ref is not None:
            entries = [(mode, path, oid) for mode, path, oid in git.tree_entries(root, ref)]
        else:
            entries = git.index_entries(root)
    except DepsyncError:
        return Submodules(root, ref)
    return Submodules(root, ref, {path: oid for mode, path, oid in entries if mode == _GITLINK})
