"""Shell: read files from git refs without a checkout. Argument lists only, never a shell."""

from __future__ import annotations

import subprocess
from pathlib import Path, PurePosixPath

from depsync import process
from depsync.errors import DepsyncError
from depsync.redact import redact
from depsync.untrusted import project_relative, require_ref


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    try:
        result = process.run(["git", "-C", str(root), *args])
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
    """Full commit of ref; a clear error when it does not exist (or could be read as an option)."""
    require_ref(ref)
    result = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if result.returncode != 0:
        raise DepsyncError(f"git ref {ref!r} not found (fetch it, e.g. `git fetch origin`, or name another ref)")
    return result.stdout.decode().strip()


def _relative(root: Path, path: str) -> str:
    """path (relative to root) as a path from the repository top, for `ref:path`.

    Only the project root is resolved: the path inside it names a tree entry at the ref and
    must not follow the work tree's symlinks (which could point anywhere)."""
    prefix = root.resolve().relative_to(toplevel(root).resolve())
    return (PurePosixPath(prefix.as_posix()) / project_relative(path, "path")).as_posix().removeprefix("./")


def read_blob(root: Path, ref: str, path: str) -> bytes | None:
    """Content of path at ref, or None when the path does not exist there."""
    require_ref(ref)
    result = _git(root, "cat-file", "blob", f"{ref}:{_relative(root, path)}", check=False)
    return result.stdout if result.returncode == 0 else None


def merge_base(root: Path, a: str, b: str) -> str:
    result = _git(root, "merge-base", a, b, check=False)
    if result.returncode != 0:
        raise DepsyncError(f"{a} and {b} have no merge-base (unrelated histories?)")
    return result.stdout.decode().strip()


def short(root: Path, commit: str) -> str:
    return _git(root, "rev-parse", "--short", commit).stdout.decode().strip()


def git_dir(root: Path) -> Path:
    path = Path(_git(root, "rev-parse", "--git-dir").stdout.decode().strip())
    return path if path.is_absolute() else (root / path)


def merge_head(root: Path) -> str | None:
    """The commit being merged when a merge is in progress (MERGE_HEAD), else None."""
    head = git_dir(root) / "MERGE_HEAD"
    return head.read_text().split()[0] if head.is_file() else None


def unmerged_paths(root: Path) -> set[str]:
    """Paths (relative to the repository top) with conflict stages in the index."""
    out = _git(root, "diff", "--name-only", "--diff-filter=U", "-z").stdout.decode()
    return {p for p in out.split("\0") if p}


def stage(root: Path, paths: list[str]) -> None:
    """`git add` (or `git rm --cached` for deleted files) the given paths, relative to root."""
    present = [p for p in paths if (root / p).exists()]
    gone = [p for p in paths if not (root / p).exists()]
    if present:
        _git(root, "add", "--", *present)
    if gone:
        _git(root, "rm", "--cached", "--quiet", "--ignore-unmatch", "--", *gone)


def commits_touching(root: Path, revision_range: str, path: str, pattern: str) -> list[str]:
    """`abc1234 subject` of commits in range whose diff of path adds or removes a line matching pattern."""
    result = _git(root, "log", "--format=%h %s", "-G", pattern, revision_range, "--", path, check=False)
    return [line for line in result.stdout.decode(errors="replace").splitlines() if line.strip()]


def describe_ref(root: Path, commit: str) -> str:
    """A readable name for a commit (`main`, `origin/main~2`), else the commit itself."""
    result = _git(root, "name-rev", "--name-only", "--no-undefined", commit, check=False)
    name = result.stdout.decode().strip()
    return name.removeprefix("remotes/") if result.returncode == 0 and name else commit


def merge_file(ours: str, base: str, theirs: str, labels: tuple[str, str, str] = ("ours", "base", "theirs")) -> tuple[str, bool]:
    """git's own three-way text merge of three versions: (result with markers if any, clean)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="depsync-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_text(text)
            paths.append(str(path))
        args = ["merge-file", "-p", "-L", labels[0], "-L", labels[1], "-L", labels[2], *paths]
        result = subprocess.run(["git", *args], capture_output=True, check=False)
    if result.returncode < 0 or result.returncode > 127:
        raise DepsyncError(f"git merge-file failed: {result.stderr.decode(errors='replace').strip()}")
    return result.stdout.decode(), result.returncode == 0


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    return _git(root, "merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0


def parents(root: Path, commit: str) -> list[str]:
    line = _git(root, "rev-list", "--parents", "-n", "1", commit).stdout.decode().split()
    return line[1:]


def set_config(root: Path, key: str, value: str) -> None:
    _git(root, "config", "--local", key, value)


def remove_config_section(root: Path, section: str) -> None:
    _git(root, "config", "--local", "--remove-section", section, check=False)
