"""Shell: read files from git refs without a checkout. Argument lists only, never a shell.

One `Session` per repository and process: the toplevel, the git dir and the project's
prefix are asked once, and every object (blobs at `ref:path`, refs resolved to commits)
is read through one long-lived `git cat-file --batch`, not a process per read.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from depsync.core.trust import project_relative, require_ref
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.shell import git_files

if TYPE_CHECKING:  # a check in a clone without the owner ref asks the files only: no subprocess
    import subprocess

    from depsync.core.sync.squashed import HistoryCommit


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    from depsync.core.redact import redact
    from depsync.shell import process

    try:
        result = process.run(["git", "-C", str(root), *args])
    except FileNotFoundError:
        raise DepsyncError("git is not installed (needed for --ref and protected paths)") from None
    if check and result.returncode != 0:
        message = redact(result.stderr.decode(errors="replace").strip().splitlines()[-1:][0] if result.stderr.strip() else "failed")
        raise DepsyncError(f"git {args[0]}: {message}")
    return result


class Session:
    """A repository as seen from `root`: asked once, then objects read through one cat-file process."""

    def __init__(self, root: Path, top: Path, git_dir: Path, prefix: str) -> None:
        self.root, self.top, self.git_dir, self.prefix = root, top, git_dir, prefix
        self._batch: subprocess.Popen[bytes] | None = None

    def _process(self) -> subprocess.Popen[bytes]:
        if self._batch is None or self._batch.poll() is not None:
            import subprocess

            from depsync.shell import signals

            with signals.deferred():  # a signal between fork and here would lose track of the child
                self._batch = subprocess.Popen(
                    ["git", "-C", str(self.root), "cat-file", "--batch"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True,
                )
        return self._batch

    def object(self, name: str) -> tuple[str, str, bytes] | None:
        """(object id, type, content) of an object name (`ref:path`, `ref^{commit}`, an id); None when missing."""
        if "\n" in name or "\r" in name:  # one name per line: never a second request
            return None
        batch = self._process()
        assert batch.stdin is not None and batch.stdout is not None
        try:
            batch.stdin.write(name.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().decode(errors="replace").split()
            if len(header) != 3:  # "<name> missing" / "ambiguous", or the process died
                if not header:
                    raise DepsyncError("git cat-file stopped answering")
                return None
            oid, kind, size = header
            data = batch.stdout.read(int(size))
            batch.stdout.read(1)  # the newline after the content
        except BaseException:
            self.close()  # a half-read answer would shift every later one
            raise
        return oid, kind, data

    def blob(self, name: str) -> bytes | None:
        found = self.object(name)
        return found[2] if found is not None and found[1] == "blob" else None

    def relative(self, path: str) -> str:
        """path (relative to root) as a path from the repository top, for `ref:path`.

        Only the project root is resolved: the path inside it names a tree entry at the ref and
        must not follow the work tree's symlinks (which could point anywhere)."""
        return (PurePosixPath(self.prefix) / project_relative(path, "path")).as_posix().removeprefix("./")

    def close(self) -> None:
        batch, self._batch = self._batch, None
        if batch is not None:
            import subprocess

            from depsync.shell import signals

            with signals.deferred():
                try:
                    batch.kill()
                    batch.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    pass
                for stream in (batch.stdin, batch.stdout):
                    try:
                        stream.close()  # type: ignore[union-attr]
                    except OSError:
                        pass


_sessions: dict[str, Session] = {}


def session(root: Path) -> Session:
    """The session for root, started on first use (one `git rev-parse` for top, git dir and prefix)."""
    key = str(Path(root).absolute())
    found = _sessions.get(key)
    if found is not None:
        return found
    result = _git(root, "rev-parse", "--show-toplevel", "--git-dir", "--show-prefix", check=False)
    lines = result.stdout.decode().splitlines()
    if result.returncode != 0 or len(lines) < 2:
        raise DepsyncError(f"{root} is not a git repository")
    top, git_dir = Path(lines[0]), Path(lines[1])
    prefix = lines[2] if len(lines) > 2 else ""
    made = Session(Path(root), top, git_dir if git_dir.is_absolute() else Path(root) / git_dir, prefix.rstrip("/") or ".")
    _sessions[key] = made
    return made


def forget(root: Path | None = None) -> None:
    """Close the session of root (every session when None): after a repository was rebuilt or removed."""
    keys = [str(Path(root).absolute())] if root is not None else list(_sessions)
    for key in keys:
        found = _sessions.pop(key, None)
        if found is not None:
            found.close()


atexit.register(forget)


def is_repository(root: Path) -> bool:
    if not git_files.has_git_dir(str(root)):
        return False  # git would look in the same folders and find nothing: no process for that
    if git_files.is_repository(str(root)):
        return True  # a plain `.git` git would open: the session starts when something is read
    try:
        session(root)
        return True
    except (DepsyncError, OSError):
        return False


def toplevel(root: Path) -> Path:
    return session(root).top


def resolve(root: Path, ref: str) -> str:
    """Full commit of ref; a clear error when it does not exist (or could be read as an option)."""
    require_ref(ref)
    # most clones CI makes have no owner ref: the files say so without starting git
    found = None if git_files.ref_absent(str(root), ref) else session(root).object(f"{ref}^{{commit}}")
    if found is None or found[1] != "commit":
        raise DepsyncError(f"git ref {ref!r} not found (fetch it, e.g. `git fetch origin`, or name another ref)")
    return found[0]


def read_blob(root: Path, ref: str, path: str) -> bytes | None:
    """Content of path at ref, or None when the path does not exist there."""
    require_ref(ref)
    repo = session(root)
    return repo.blob(f"{ref}:{repo.relative(path)}")


def blob_by_id(root: Path, oid: str) -> bytes | None:
    """A blob by its object id (from `git log --raw`)."""
    return session(root).blob(oid)


def merge_base(root: Path, a: str, b: str) -> str:
    result = _git(root, "merge-base", "--end-of-options", a, b, check=False)
    if result.returncode != 0:
        raise DepsyncError(f"{a} and {b} have no merge-base (unrelated histories?)")
    return result.stdout.decode().strip()


def short(root: Path, commit: str) -> str:
    return _git(root, "rev-parse", "--short", "--end-of-options", commit).stdout.decode().strip()


def git_dir(root: Path) -> Path:
    return session(root).git_dir


def merge_head(root: Path) -> str | None:
    """The commit being merged when a merge is in progress (MERGE_HEAD), else None."""
    head = git_dir(root) / "MERGE_HEAD"
    return head.read_text().split()[0] if head.is_file() else None


def unmerged_paths(root: Path) -> set[str]:
    """Paths (relative to the repository top) with conflict stages in the index."""
    out = _git(root, "diff", "--name-only", "--diff-filter=U", "-z").stdout.decode()
    return {p for p in out.split("\0") if p}


def stage(root: Path, paths: list[str]) -> None:
    """Stage the given paths (relative to root) as they are in the work tree, deleted ones removed
    from the index, conflict stages resolved: one `git update-index`, like `git add -A -- paths`."""
    if paths:
        _git(root, "--literal-pathspecs", "update-index", "--add", "--remove", "--", *paths)


@record
class PathChange:
    """One commit of a first-parent history that changed a file, with the file's blobs before and after."""

    commit: str
    parents: tuple[str, ...]
    time: int  # committer date, seconds since the epoch
    subject: str
    old_blob: str | None  # None: the file did not exist before
    new_blob: str | None  # None: the commit deleted it


_NO_BLOB = "0" * 40


def path_history(root: Path, rev: str, path: str) -> list[PathChange]:
    """Commits on rev's first-parent line that changed path (merges compared with their first
    parent), newest first, with the blob ids before and after: one `git log --raw`, no diffs."""
    require_ref(rev)
    result = _git(
        root, "--literal-pathspecs", "log", "--first-parent", "--diff-merges=first-parent", "--raw", "--no-abbrev", "--no-renames",
        "--format=%x1e%H %P%x1f%ct%x1f%s", "--end-of-options", rev, "--", project_relative(path, "path"), check=False,
    )
    if result.returncode != 0:
        return []
    changes = []
    for record in result.stdout.decode(errors="replace").split("\x1e")[1:]:
        head, _, rest = record.partition("\n")
        ids, _, tail = head.partition("\x1f")
        when, _, subject = tail.partition("\x1f")
        commit, *parents = ids.split()
        raw = next((line for line in rest.splitlines() if line.startswith(":")), None)
        if raw is None:
            continue
        fields = raw.split("\t", 1)[0].split()
        old, new = fields[2], fields[3]
        changes.append(PathChange(commit, tuple(parents), int(when or 0), subject, None if old == _NO_BLOB else old, None if new == _NO_BLOB else new))
    return changes


def commit_writes(root: Path, exclude: str, tip: str, *, first_parent: bool = False, since: int | None = None,
                  max_count: int = 5000, max_files: int = 1000, max_paths: int = 300_000,
                  keep: Callable[[str, str | None], bool] | None = None) -> tuple[list[HistoryCommit], bool]:
    """The commits reachable from tip and not from exclude, merges included (first-parent only
    when asked, stopping at the first older than `since`), newest first, each with the blob it
    wrote per path (gitlinks left out; the paths `keep` refuses dropped while reading), and
    whether a bound cut the list: one `git log --raw -z`, read as it comes (core/sync/raw_log.py).

    Bounded three ways: max_count commits, max_files paths read of one commit (the rest counted
    in its `files_cut`), and max_paths kept over all commits (the read stops there)."""
    from depsync.core.redact import redact
    from depsync.core.sync.raw_log import FORMAT, RawLogReader
    from depsync.shell import process

    require_ref(exclude)
    require_ref(tip)
    args = ["log", "--raw", "--no-abbrev", "--no-renames", "-z", FORMAT, f"--max-count={max_count + 1}"]
    args += ["--first-parent"] if first_parent else ["--topo-order"]
    args += [f"--since=@{since}"] if since is not None else []
    reader = RawLogReader(max_files, keep)
    commits: list[HistoryCommit] = []
    kept = 0
    cut = False

    def take(commit: HistoryCommit) -> bool:
        nonlocal kept, cut
        if len(commits) == max_count or kept + len(commit.changes) > max_paths:
            cut = True
            return False
        commits.append(commit)
        kept += len(commit.changes)
        return True

    def consume(chunk: bytes) -> bool:
        return all(take(commit) for commit in reader.feed(chunk))

    try:
        status, errors = process.read_chunks(["git", "-C", str(root), *args, "--end-of-options", tip, f"^{exclude}"], consume)
    except FileNotFoundError:
        raise DepsyncError("git is not installed (needed for --ref and protected paths)") from None
    if status is not None:
        if status != 0:
            message = errors.decode(errors="replace").strip().splitlines()[-1:]
            raise DepsyncError(f"git log: {redact(message[0]) if message else 'failed'}")
        for commit in reader.close():
            if not take(commit):
                break
    return commits, cut


def raw_diff(root: Path, old: str, new: str, *, max_paths: int = 20_000,
             keep: Callable[[str], bool] | None = None) -> tuple[dict[str, str | None], bool]:
    """{path: new's blob, None when new has no file there} of the files that differ between two
    commits (gitlinks left out; paths `keep` refuses dropped while reading), and whether
    max_paths cut it: one `git diff --raw -z`, read as it comes."""
    from depsync.core.redact import redact
    from depsync.shell import process

    require_ref(old)
    require_ref(new)
    found: dict[str, str | None] = {}
    rest = b""
    pending: tuple[str, bool] | None = None
    cut = False

    def consume(chunk: bytes) -> bool:
        nonlocal rest, pending, cut
        data = rest + chunk
        start = 0
        while (end := data.find(b"\0", start)) >= 0:
            token = data[start:end].decode(errors="replace")
            start = end + 1
            if pending is not None:
                blob, gitlink = pending
                pending = None
                if not gitlink and (keep is None or keep(token)):
                    if len(found) == max_paths:
                        cut = True
                        return False
                    found[token] = None if blob.strip("0") == "" else blob
            elif token.startswith(":"):
                fields = token[1:].split()
                if len(fields) >= 4:
                    pending = (fields[3], "160000" in (fields[0], fields[1]))
        rest = data[start:][:65536]
        return True

    status, errors = process.read_chunks(["git", "-C", str(root), "diff", "--raw", "--no-abbrev", "--no-renames", "-z", "--end-of-options", old, new, "--"], consume)
    if status not in (None, 0):
        message = errors.decode(errors="replace").strip().splitlines()[-1:]
        raise DepsyncError(f"git diff: {redact(message[0]) if message else 'failed'}")
    return found, cut


def describe_ref(root: Path, commit: str) -> str:
    """A readable name for a commit (`main`, `origin/main~2`), else the commit itself."""
    result = _git(root, "name-rev", "--name-only", "--no-undefined", "--end-of-options", commit, check=False)
    name = result.stdout.decode().strip()
    return name.removeprefix("remotes/") if result.returncode == 0 and name else commit


def merge_file(ours: str, base: str, theirs: str, labels: tuple[str, str, str] = ("ours", "base", "theirs")) -> tuple[str, bool]:
    """git's own three-way text merge of three versions: (result with markers if any, clean)."""
    import subprocess
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
    return _git(root, "merge-base", "--is-ancestor", "--end-of-options", ancestor, descendant, check=False).returncode == 0


def parents(root: Path, commit: str) -> list[str]:
    line = _git(root, "rev-list", "--parents", "-n", "1", "--end-of-options", commit).stdout.decode().split()
    return line[1:]


def set_config(root: Path, key: str, value: str) -> None:
    _git(root, "config", "--local", key, value)


def remove_config_section(root: Path, section: str) -> None:
    _git(root, "config", "--local", "--remove-section", section, check=False)


def regular_files(root: Path, *refs: str) -> set[str]:
    """Paths of the regular files under root at any of refs (no symlinks, no submodules)."""
    return {path for ref in refs for mode, path in list_tree(root, ref) if mode in ("100644", "100755")}


def list_tree(root: Path, ref: str) -> list[tuple[str, str]]:
    """(mode, path relative to root) of every file under root at ref (symlinks and submodules
    keep their own modes, so a caller can leave them out)."""
    require_ref(ref)
    return [(fields[0], path) for fields, path in _records(_git(root, "ls-tree", "-r", "-z", ref, "--", ".").stdout)]


def _records(stdout: bytes) -> Iterator[tuple[list[str], str]]:
    """(space-separated fields, path) of each `-z` record `FIELDS<TAB>PATH` (ls-tree, ls-files -s)."""
    for record in stdout.decode(errors="replace").split("\0"):
        meta, tab, path = record.partition("\t")
        if tab:
            yield meta.split(" "), path


def tree_entries(root: Path, ref: str) -> list[tuple[str, str, str]]:
    """(mode, path relative to root, object id) of every entry under root at ref, gitlinks included."""
    require_ref(ref)
    stdout = _git(root, "ls-tree", "-r", "-z", ref, "--", ".").stdout
    return [(fields[0], path, fields[2]) for fields, path in _records(stdout) if len(fields) == 3]  # mode type object


def index_entries(root: Path) -> list[tuple[str, str, str]]:
    """(mode, path relative to root, object id) of every entry of the index under root."""
    stdout = _git(root, "ls-files", "-s", "-z", "--", ".").stdout
    return [(fields[0], path, fields[1]) for fields, path in _records(stdout) if len(fields) == 3]  # mode object stage


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (`main`), None when detached."""
    result = _git(root, "symbolic-ref", "-q", "--short", "HEAD", check=False)
    name = result.stdout.decode(errors="replace").strip()
    return name if result.returncode == 0 and name else None


def branches_named(root: Path, name: str) -> list[str]:
    """Local and remote-tracking branches called name (`dev`, `origin/dev`, `upstream/dev`)."""
    result = _git(root, "for-each-ref", "--format=%(refname:short)", f"refs/heads/{name}", f"refs/remotes/*/{name}", check=False)
    return [line for line in result.stdout.decode(errors="replace").splitlines() if line]


# -- where the work tree starts, without running git (reports name paths from there) ---------------


def repository_root(start: Path) -> Path | None:
    """The top of the git work tree holding start (symlinks resolved), found as git does: the
    nearest directory upwards with a `.git` entry; None outside any repository."""
    directory = Path(os.path.realpath(start))
    for candidate in (directory, *directory.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def repository_prefix(project: Path) -> str:
    """The project's directory from the repository root, `server/` (`""` at the root), for
    reports whose paths a forge resolves from there (GitHub annotations, SARIF, GitLab).
    Outside a repository: from the working directory when the project is inside it, else ""."""
    real = Path(os.path.realpath(project))
    top = repository_root(real)
    if top is None:
        cwd = Path(os.path.realpath(Path.cwd()))
        top = cwd if real.is_relative_to(cwd) else real
    relative = real.relative_to(top).as_posix()
    return "" if relative == "." else relative + "/"
