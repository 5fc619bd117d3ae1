"""Shell: read files from git refs without a checkout. Argument lists only, never a shell."""

from __future__ import annotations

import subprocess
from pathlib import Path

from depsync.errors import DepsyncError
from depsync.redact import redact


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        result = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise DepsyncError("git is not installed (needed for --ref and protected paths)") from None
    if check and result.returncode != 0:
        message = redact(result.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if result.stderr.strip() else "failed")
        raise DepsyncError(f"git {args[0]}: {message}")
    return result


def is_repository(root: Path) -> bool:
    try:
        return _git(root, "rev-parse", "--git-dir", check=False).returncode == 0
    except DepsyncError:
        return False


def toplevel(root: Path) -> Path:
    return Path(_git(root, "rev-parse", "--show-toplevel").stdout.decode().strip())


def resolve(root: Path, ref: str) -> str:
    """Full commit of ref; a clear error when it does not exist."""
    result = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    if result.returncode != 0:
        raise DepsyncError(f"git ref {ref!r} not found (fetch it, e.g. `git fetch origin`, or name another ref)")
    return result.stdout.decode().strip()


def _relative(root: Path, path: str) -> str:
    """path (relative to root) as a path from the repository top, for `ref:path`."""
    top = toplevel(root)
    return (root.resolve() / path).resolve().relative_to(top.resolve()).as_posix()


def read_blob(root: Path, ref: str, path: str) -> bytes | None:
    """Content of path at ref, or None when the path does not exist there."""
    result = _git(root, "cat-file", "blob", f"{ref}:{_relative(root, path)}", check=False)
    return result.stdout if result.returncode == 0 else None
