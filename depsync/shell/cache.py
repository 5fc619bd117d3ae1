"""A content-addressed cache of `depsync check` results: a check on unchanged inputs replays.

Like ruff's cache, the result is addressed by everything it was computed from:

- the request: the project root (absolute), `--ref`, `--dockerfile`/`--build-arg`,
  `--owner-ref`, `--lock` (the output format and --strict only change the rendering);
- depsync itself: its version, a fingerprint of its code (size and mtime of every file of
  the package, so an edited checkout never replays an old result), the Python version and
  the import path (installing or removing a package changes a site directory's mtime);
- the environment that changes what check computes or prints: GIT_*, HOME and
  XDG_CONFIG_HOME (git), and the values the redactor would mask (a superset of them);
- the bytes of every input: pyproject.toml (so [tool.depsync] and the pinned uv version),
  uv.lock, the Dockerfiles, the pyproject.toml of local packages and workspace members,
  the uv.toml uv would read (looked for where uv looks), the protected files; files that were looked for and absent count as absent, and a path
  that became a symlink elsewhere does not match;
- the Dockerfiles discovery could find (when no `dockerfiles` are configured): the bounded
  listing of depsync/dockerfile_scan.py is recomputed, so an added Dockerfile is a miss;
- git facts, when the check used git: what `--ref` and the owner ref resolve from (the loose
  ref files git would read, the symbolic refs they name, packed-refs and config by their
  stat, the repository's top and prefix), read from a plain `.git` directory without a git
  process; in another layout (a worktree, a submodule, reftable, GIT_DIR) the commits git
  resolves them to. A branch that moves is a different key.

Two files per entry under $XDG_CACHE_HOME/depsync/check (default ~/.cache/depsync/check):
`<k1>.m` lists, for one request k1, what to look at (paths, globs, refs); `<k2>.r` holds
the findings for k2 = hash(k1, what those look like now), with the outputs already
rendered (and redacted) per format. Entries are written to a temporary file and renamed
into place, so concurrent runs see a whole old or a whole new entry; an entry that cannot
be read is a miss, and a cache that cannot be written only costs time, never a failure.

The lookup imports nothing beyond the interpreter's own modules (marshal, _blake2): it
runs before the CLI is imported (depsync/entry.py). Entries are marshal data, the format
Python itself trusts for its bytecode cache in __pycache__.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

from depsync.shell.git_files import REF_RULES, has_git_dir, plain_git_dir, ref_file

TYPE_CHECKING = False  # typing itself is not imported on the replay path
if TYPE_CHECKING:
    from typing import Any

try:
    from _blake2 import (
        blake2b,  # the interpreter's own: hashlib would load OpenSSL first
    )
except ImportError:  # pragma: no cover - every CPython build has it
    from hashlib import blake2b

SCHEMA = 2  # 2: glob states from depsync/members.py
MAX_ENTRIES = 512  # files in the cache directory before the oldest half is removed
_SECRET_WORDS = ("TOKEN", "PASSWORD", "PASSWD", "SECRET", "KEY", "CREDENTIAL", "AUTH")

Finding = "tuple[str, int, str, int, str, str]"  # file, line, rule, severity, message, fix
# root (absolute), --ref, --dockerfile paths with their --build-arg pairs, --owner-ref, --lock, pyproject path
Request = tuple[str, "str | None", "tuple[tuple[str, tuple[tuple[str, str], ...]], ...] | None", "str | None", "str | None", "str | None"]


def root() -> str:
    """depsync's one cache root, $XDG_CACHE_HOME/depsync (default ~/.cache/depsync): the check
    results, git source mirrors, uv binaries and image facts all live below it."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "depsync")


def directory() -> str:
    return os.path.join(root(), "check")


def enabled() -> bool:
    # fault injection makes a run differ from its inputs: never replay one
    return not os.environ.get("DEPSYNC_FAULT")


def _digest(*parts: bytes) -> bytes:
    h = blake2b(digest_size=20)
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


_package_files: list[list[tuple[str, int, int]]] = []  # once per process: the code running is the code read


def _code_fingerprint() -> bytes:
    """depsync's files (name, size, mtime) and the import path's directories (mtime)."""
    from depsync import __version__

    if not _package_files:
        _package_files.append(_package_file_stats())
    paths: list[tuple[str, int]] = []
    for item in sys.path:
        try:
            paths.append((item, os.stat(item or ".").st_mtime_ns))
        except OSError:
            paths.append((item, -1))
    return marshal.dumps((__version__, sys.version, _package_files[0], paths))


def _package_file_stats() -> list[tuple[str, int, int]]:
    # the whole package (this module sits in depsync/shell/): an edited rule must miss the cache
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    seen: list[tuple[str, int, int]] = []
    pending = [package]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name == "__pycache__":
                continue
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.name.endswith((".py", ".so", ".pyd")):
                stat = entry.stat()
                seen.append((entry.path, stat.st_size, stat.st_mtime_ns))
    return sorted(seen)


def _environment() -> bytes:
    """What in the environment changes a check's result or its (redacted) output.

    The redactor masks values of secret-looking variables and credentials in URLs; every
    variable that could be one of those is in here (more than it masks: only a miss)."""
    picked = []
    for name, value in os.environ.items():
        upper = name.upper()
        if upper.startswith("GIT_") or upper in ("HOME", "XDG_CONFIG_HOME") or "://" in value or any(w in upper for w in _SECRET_WORDS):
            picked.append((name, value))
    return marshal.dumps(sorted(picked))


def request_key(request: Request) -> bytes:
    return _digest(b"depsync.check", str(SCHEMA).encode(), _code_fingerprint(), _environment(), marshal.dumps(tuple(request)))


# -- reading what the inputs look like now -----------------------------------------------------------


# A file whose stat is what it was when its digest was kept, and whose times are this much older
# than that moment, still has those bytes (git's index trusts its stat data the same way): a
# change of content sets ctime, which nothing but the clock moves. Nearer than this, a change in
# the same timestamp tick could hide (coarse file systems tick in seconds), so it is hashed.
_RACY_NS = 2_000_000_000

Stat = tuple[int, int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns
Known = dict[str, tuple[Stat, bytes, str]]  # path -> (its stat, digest of its bytes, where it really is)


def _file_state(root: str, path: str, known: Known | None = None, known_at: int = 0, seen: Known | None = None) -> tuple[str, bytes | None, str]:
    """(path, digest of its bytes or None when absent, where it really is). known: what an
    earlier run kept at known_at (ns), so an unchanged file need not be read and hashed; seen,
    when given, gets what this one found."""
    full = os.path.join(root, path)
    try:
        info = os.stat(full)
    except (FileNotFoundError, NotADirectoryError):
        return (path, None, "")
    stat = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    real = os.path.realpath(full)
    earlier = known.get(path) if known else None
    if earlier is not None and earlier[0] == stat and earlier[2] == real and max(info.st_mtime_ns, info.st_ctime_ns) < known_at - _RACY_NS:
        digest = earlier[1]
    else:
        try:
            with open(full, "rb") as handle:
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return (path, None, "")
        digest = _digest(data)
    if seen is not None:
        seen[path] = (stat, digest, real)
    return (path, digest, real)


def _glob_state(root: str, pattern: str) -> tuple[str, tuple[tuple[str, bool], ...]]:
    """The directories a workspace pattern matches and which have a pyproject.toml: computed by
    the same code check uses (depsync/members.py), so a member check would read is never missed."""
    from depsync.shell.members import member_directories

    return (pattern, tuple(member_directories(root, pattern)))


def _git(root: str, args: list[str]) -> tuple[int, str]:
    """Run git with stdout captured, without importing subprocess (the replay's import budget)."""
    read, write = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_DUP2, devnull, 2), (os.POSIX_SPAWN_CLOSE, read)]
        try:
            pid = os.posix_spawnp("git", ["git", "-C", root, *args], dict(os.environ), file_actions=actions)
        except OSError:
            return 127, ""
        os.close(write)
        write = -1
        chunks = []
        while True:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")
    finally:
        for fd in (read, write, devnull):
            if fd >= 0:
                os.close(fd)


def _git_state(root: str, ref: str) -> tuple[str, tuple[str, ...] | None]:
    """(ref, (top, prefix, commit or "")) or (ref, None) outside a repository."""
    if not has_git_dir(root):
        return (ref, None)
    code, out = _git(root, ["rev-parse", "--show-toplevel", "--show-prefix", "--verify", "-q", f"{ref}^{{commit}}"])
    lines = out.split("\n")
    if code not in (0, 1) or len(lines) < 2:
        return (ref, None)
    return (ref, (lines[0], lines[1], lines[2] if code == 0 and len(lines) > 2 else ""))


def _rewritten_whole(path: str) -> tuple[int, ...] | None:
    """A file git rewrites whole (a lock file renamed over it: packed-refs, config) by its stat:
    new contents are a new inode and new times; reading a large packed-refs would cost more
    than asking git."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _refs_state(root: str, refs: list[str]) -> tuple[Any, ...] | None:
    """What the refs resolve from, read from the files git reads (no git process: four of them
    were most of a repeated check inside a repository): the loose ref file of each name git
    would try, the symbolic refs they point to, packed-refs, the top and prefix, and who owns
    `.git` (git refuses a repository another user owns). The same files resolve to the same
    commits, so a moved ref is a miss. None: only git can say (see git_files.plain_git_dir)."""
    found = plain_git_dir(root)
    if found is None:
        return None
    top, git_dir = found
    if not top:
        return ("no repository",)
    files: dict[str, bytes | None] = {}
    pending = [rule.format(ref) for ref in refs for rule in REF_RULES]  # refs may come from the repository's config: never a path out of .git
    while pending and len(files) < 256:  # symbolic refs chain; a loop or a long chain stops here
        name = pending.pop()
        if name in files or ".." in name or name.startswith("/"):
            continue
        content = files[name] = ref_file(os.path.join(git_dir, name))
        if content is not None and content.startswith(b"ref: "):
            pending.append(content[5:].strip().decode(errors="replace"))
    try:
        owner = os.stat(git_dir).st_uid
    except OSError:
        return None
    prefix = os.path.relpath(os.path.realpath(root), top)
    # config: core.worktree moves the top, an include or a safe.directory entry changes what git reads
    whole = (_rewritten_whole(os.path.join(git_dir, "packed-refs")), _rewritten_whole(os.path.join(git_dir, "config")))
    return (top, prefix, owner, os.geteuid(), sorted(files.items()), whole)


def _state(manifest: dict[str, Any], seen: Known | None = None) -> bytes:
    root = manifest["root"]
    known = manifest.get("known")
    files = [_file_state(root, p, known if isinstance(known, dict) else None, int(manifest.get("known_at", 0)), seen) for p in manifest["files"]]
    globs = [_glob_state(root, p) for p in manifest["globs"]]
    refs: Any = _refs_state(root, manifest["refs"]) if manifest["refs"] else ()
    if refs is None:
        refs = [_git_state(root, r) for r in manifest["refs"]]
    scanned = None
    if manifest.get("scan"):  # Dockerfile discovery: a Dockerfile (or a nested project) added later is a miss
        from depsync.shell.dockerfile_scan import scan

        scanned = scan(root)
    return marshal.dumps((files, globs, refs, scanned))


# -- the entries -------------------------------------------------------------------------------------


def _read(path: str, schema_wanted: Any = None) -> Any:
    """A cache entry's payload; None when it is missing, unreadable or of another schema."""
    try:
        with open(path, "rb") as handle:
            schema, payload = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return payload if schema == (SCHEMA if schema_wanted is None else schema_wanted) else None


def _write(path: str, payload: Any, schema: Any = None) -> None:
    """Atomically: a temporary file in the same directory, renamed over the entry."""
    folder = os.path.dirname(path)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(folder, exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(marshal.dumps((SCHEMA if schema is None else schema, payload)))
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def load_entry(path: str, schema: Any) -> Any:
    """Another cache's entry under root() (marshal, atomic writes, a schema tag): None when absent."""
    return _read(path, schema) if enabled() else None


def store_entry(path: str, payload: Any, schema: Any) -> None:
    if enabled():
        _write(path, payload, schema)


_MEMO_MAX = 2048  # answers remembered per memo; past it the memo starts again (bounded disk)
_memos: dict[str, dict[bytes, Any]] = {}


def _memo_path(name: str) -> str:
    return os.path.join(root(), f"memo-{name}.marshal")


def _memo(name: str) -> dict[bytes, Any]:
    if name not in _memos:
        found = load_entry(_memo_path(name), ("memo", name, 1))
        _memos[name] = found if isinstance(found, dict) and len(found) < _MEMO_MAX else {}
    return _memos[name]


def _memo_key(key: Any) -> bytes:
    # depsync's own code is part of the key: an edited rule never reads an older answer
    return _digest(_fingerprint_digest(), marshal.dumps(key))


_fingerprint: list[bytes] = []  # computed once per process


def _fingerprint_digest() -> bytes:
    if not _fingerprint:
        _fingerprint.append(_digest(_code_fingerprint()))
    return _fingerprint[0]


def memo_get(name: str, key: Any) -> Any:
    """An answer remembered under key (marshal data of immutable inputs, e.g. commit ids), or
    None. For work whose answer cannot change: what dev's history says at given commits."""
    if not enabled():
        return None
    return _memo(name).get(_memo_key(key))


def memo_put(name: str, key: Any, value: Any) -> None:
    if not enabled():
        return
    memo = _memo(name)
    memo[_memo_key(key)] = value
    store_entry(_memo_path(name), memo, ("memo", name, 1))


def lookup(request: Request) -> tuple[bytes, dict[str, Any]] | None:
    """(result key, result) of an earlier check on the same request and unchanged inputs."""
    if not enabled():
        return None
    folder = directory()
    k1 = request_key(request)
    manifest_path = os.path.join(folder, k1.hex() + ".m")
    manifest = _read(manifest_path)
    if not isinstance(manifest, dict):
        return None
    seen: Known = {}
    try:
        k2 = _digest(k1, _state(manifest, seen))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    result = _read(os.path.join(folder, k2.hex() + ".r"))
    if not isinstance(result, dict):
        return None
    known_at = int(manifest.get("known_at", 0))
    if seen != manifest.get("known") or any(max(stat[3], stat[4]) >= known_at - _RACY_NS for stat, _, _ in seen.values()):
        # a file was hashed again (too new to trust its stat then): what it is now, for the next replay
        _write(manifest_path, {**manifest, "known": seen, "known_at": time.time_ns()})
    return k2, result


def replay(request: Request, output_format: str, project: str, strict: bool) -> int | None:
    """Print the stored output of this exact check and return its exit code; None when there is none."""
    found = lookup(request)
    if found is None or _needs_uv(found[1]["findings"]):
        return None
    rendered = found[1].get("rendered", {}).get((output_format, project))
    if not isinstance(rendered, str):
        return None
    sys.stdout.write(rendered)
    sys.stdout.flush()
    return _exit_code(found[1]["findings"], strict)


def replay_status(request: Request, strict: bool) -> int | None:
    """The exit code replay() would return, printing nothing."""
    found = lookup(request)
    return _exit_code(found[1]["findings"], strict) if found is not None and not _needs_uv(found[1]["findings"]) else None


def _needs_uv(findings: list[Finding]) -> bool:
    """A static lock-stale verdict is confirmed with uv on every run (commands/check.py): never replayed."""
    return any(f[2] == "lock-stale" for f in findings)


def _exit_code(findings: list[Finding], strict: bool) -> int:
    failing = 1 if strict else 2  # Severity.WARNING / Severity.ERROR
    return 1 if any(f[3] >= failing for f in findings) else 0


def store(request: Request, manifest: dict[str, Any], findings: list[Finding], stable: bool, dockerfiles: tuple[str, ...] = (),
          suppressed: list[tuple[str, int, str, int]] | None = None) -> bytes | None:
    """Keep a result (with the Dockerfiles it checked and the findings inline comments
    suppressed, for -v); its key, or None when an input changed while the check ran (not stored)."""
    if not enabled() or not stable:
        return None
    folder = directory()
    k1 = request_key(request)
    seen: Known = {}
    try:
        k2 = _digest(k1, _state(manifest, seen))
    except (OSError, ValueError):
        return None
    # what the files look like now, so a replay that finds them so need not hash them (_file_state)
    _write(os.path.join(folder, k1.hex() + ".m"), {**manifest, "known": seen, "known_at": time.time_ns()})
    result = {"findings": findings, "dockerfiles": list(dockerfiles), "suppressed": list(suppressed or ()), "rendered": {}}
    _write(os.path.join(folder, k2.hex() + ".r"), result)
    _prune(folder)
    return k2


def add_rendering(key: bytes, output_format: str, project: str, text: str) -> None:
    """Keep the printed output of a result, for a replay that need not render it."""
    if not enabled():
        return
    path = os.path.join(directory(), key.hex() + ".r")
    result = _read(path)
    if not isinstance(result, dict) or result.get("rendered", {}).get((output_format, project)) == text:
        return
    result.setdefault("rendered", {})[(output_format, project)] = text
    _write(path, result)


def _prune(folder: str) -> None:
    try:
        entries = list(os.scandir(folder))
        if len(entries) <= MAX_ENTRIES:
            return
        entries.sort(key=lambda e: e.stat().st_mtime_ns)
        for entry in entries[: len(entries) // 2]:
            os.unlink(entry.path)
    except OSError:
        pass


# -- what a check reads ------------------------------------------------------------------------------

_recording: list[str] | None = None
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _recording is not None and event == "open" and args and isinstance(args[0], (str, os.PathLike)):
        path = os.fspath(args[0])
        if isinstance(path, str):
            _recording.append(path)


class recording:
    """`with recording() as opened`: every file opened meanwhile, seen by an audit hook, so
    whatever load_inputs comes to read is an input of the result."""

    def __enter__(self) -> list[str]:
        global _recording, _hooked
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        self.opened: list[str] = []
        _recording = self.opened
        return self.opened

    def __exit__(self, *exc: object) -> None:
        global _recording
        _recording = None


def manifest(root: str, opened: list[str], probed: list[str], globs: list[str], refs: list[str], scan: bool = False) -> dict[str, Any]:
    """What a run depends on: the files it opened inside root and those it looked for (present
    or not), the globs it expanded, the git refs it resolved and whether it scanned the tree
    for Dockerfiles (depsync/dockerfile_scan.py)."""
    real_root = os.path.realpath(root)
    files = set(probed)
    for path in opened:
        full = os.path.realpath(path)
        if full == real_root or not full.startswith(real_root + os.sep) or os.path.isdir(full):
            continue
        files.add(os.path.relpath(os.path.abspath(path), os.path.abspath(root)))
    return {"root": os.path.abspath(root), "files": sorted(files), "globs": sorted(set(globs)), "refs": sorted(set(refs)), "scan": scan}


def unchanged_since(root: str, files: list[str], started_ns: int) -> bool:
    """No input was modified after the check started reading (else its result may mix two states)."""
    for path in files:
        try:
            if os.stat(os.path.join(root, path)).st_mtime_ns >= started_ns:
                return False
        except OSError:
            continue
    return True
