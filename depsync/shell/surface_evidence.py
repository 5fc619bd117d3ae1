"""Evidence for the surface merge (shell): does the merged code import a package, and under which module names.

The code scanned is the merged tree: the work tree while a merge is in progress (or once
main is merged into HEAD), else main's commit read from git (the code main brings), after
the files dev changed since the merge-base as dev has them. The scan is bounded (files, bytes
per file, bytes in all) and confined: the work tree walk never follows a symlink, stays out of
hidden, virtualenv and cache directories, and reads only `*.py` files; a git tree skips
symlink entries. What was scanned is said in the evidence.

main controls most of the merged tree, so the order and the bounds are chosen against it: dev's
own code (the files changed on dev since the merge-base) first, then the files neither side
changed, main's changes last, so files main adds cannot use up the bounds before the code that
may still need what main removes; and a bound that is reached, a file too large to read or one
naming the package that does not parse (conflict markers) is said in the evidence ("evidence
incomplete"), which flags each decision it could have changed.
Only the first MAX_PLACES occurrences of a package are kept: a file of a million imports costs
its parse, not memory per import.

Module names of a distribution: its `top_level.txt` or RECORD in a dist-info depsync can
read (the project's own `.venv` when git tracks nothing in it, so never one the merge wrote
there, then the wheels unpacked in uv's cache; reached without symlinks), else the normalized
name (`torch-memory-saver` -> `torch_memory_saver`). A dist-info committed to the repository
would let main say that a typosquat it adds is imported as a module the code uses. An import inside a
`try:` whose handler catches ImportError (or ModuleNotFoundError, Exception, bare) is
"guarded": the code runs without the package, so it is weaker evidence.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from depsync.core.conflict_sides import conflict_sides
from depsync.core.module_names import candidates
from depsync.core.names import canonicalize_name
from depsync.core.sync.surface import Use
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.shell import cache, git

MAX_FILES = 50_000  # Megatron-LM has ~2,000 Python files
MAX_FILE_BYTES = 2 * 1024 * 1024  # generated code past this is not what imports a dependency
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_PLACES = 3  # file:line shown per package, and all that is kept of its occurrences
MAX_LISTED = 4 * MAX_FILES  # work-tree entries (files and directories) looked at before reading
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv", "build", "dist"}
_GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _tracked(root: Path, path: str, *commits: str) -> bool:
    """git tracks something at path (relative to root): in the index (the merge's result and its
    conflicts included) or in one of the commits. Unknown (git fails) counts as tracked."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--", path], capture_output=True, check=False)
    if listed.returncode != 0 or listed.stdout:
        return True
    for commit in commits:
        tree = subprocess.run(["git", "-C", str(root), "ls-tree", "--name-only", "--end-of-options", commit, "--", path], capture_output=True, check=False)
        if tree.returncode != 0 or tree.stdout:
            return True
    return False


def _dist_info_dirs(root: Path, commits: tuple[str, ...] = ()) -> Iterator[Path]:
    """dist-info directories of the project's own .venv, reached without following symlinks;
    none when git tracks anything in .venv (the merged tree, or the commits, would be speaking)."""
    venv = root / ".venv"
    if venv.is_symlink() or not venv.is_dir() or _tracked(root, ".venv", *commits):
        return
    lib = venv / "lib"
    if lib.is_symlink() or not lib.is_dir():
        return
    for python in sorted(lib.iterdir())[:4]:
        site = python / "site-packages"
        if python.is_symlink() or site.is_symlink() or not site.is_dir():
            continue
        for entry in sorted(site.iterdir())[:20_000]:
            if entry.name.endswith(".dist-info") and not entry.is_symlink() and entry.is_dir():
                yield entry


MAX_CACHE_ENTRIES = 50_000  # unpacked wheels looked at in uv's cache


def _uv_cache_dist_infos() -> Iterator[Path]:
    """dist-info directories of the wheels uv unpacked into its cache (the operator's
    UV_CACHE_DIR, else the XDG cache), reached without following symlinks."""
    configured = os.environ.get("UV_CACHE_DIR")
    base = Path(configured) if configured else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uv"
    archive = base / "archive-v0"
    if archive.is_symlink() or not archive.is_dir():
        return
    try:
        entries = sorted(os.scandir(archive), key=lambda e: e.name)[:MAX_CACHE_ENTRIES]
    except OSError:
        return
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        try:
            inner = list(os.scandir(entry.path))
        except OSError:
            continue
        for item in inner:
            if item.name.endswith(".dist-info") and item.is_dir(follow_symlinks=False):
                yield Path(item.path)


def _top_levels(dist_info: Path) -> set[str]:
    for name in ("top_level.txt", "RECORD"):
        file = dist_info / name
        if file.is_symlink() or not file.is_file() or file.stat().st_size > MAX_FILE_BYTES:
            continue
        text = file.read_text(errors="replace")
        if name == "top_level.txt":
            return {line.strip() for line in text.splitlines() if line.strip().isidentifier()}
        found = set()
        for line in text.splitlines():
            first = line.split(",", 1)[0].split("/", 1)
            head = first[0].removesuffix(".py")
            if (len(first) > 1 or first[0].endswith(".py")) and head.isidentifier() and not head.endswith("dist-info"):
                found.add(head)
        if found:
            return found
    return set()


def module_names(root: Path, packages: Iterable[str], commits: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """Top-level module names per canonical package: from a readable dist-info that is not in
    the repository (commits: those whose trees must not have `.venv` either), else from the name."""
    wanted = {canonicalize_name(p) for p in packages}
    found: dict[str, set[str]] = {}
    if wanted:
        for dist_info in itertools.chain(_dist_info_dirs(root, commits), _uv_cache_dist_infos()):
            project = canonicalize_name(dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0])
            if project in wanted and project not in found:
                modules = _top_levels(dist_info)
                if modules:
                    found[project] = modules
    return {p: tuple(sorted(found[p])) if p in found else candidates(p)[0] for p in sorted(wanted)}


# -- the files ---------------------------------------------------------------------------------


@record(frozen=False)
class Bounds:
    """What a scan read, and what it could not: the evidence says so when it is incomplete."""

    files: int = 0
    total: int = 0
    stopped: str = ""  # the bound that ended the scan early
    too_large: int = 0  # files over MAX_FILE_BYTES, not read

    def take(self, size: int) -> bool:
        """Room for one more file of size bytes (counted); False: a bound is reached, and said."""
        if size > MAX_FILE_BYTES:
            self.too_large += 1
            return True  # skipped, not the end
        if self.files + 1 > MAX_FILES:
            self.stopped = f"scan stopped at {MAX_FILES} files"
        elif self.total + size > MAX_TOTAL_BYTES:
            self.stopped = f"scan stopped at {_size(MAX_TOTAL_BYTES)}"
        if self.stopped:
            return False
        self.files, self.total = self.files + 1, self.total + size
        return True

    @property
    def incomplete(self) -> str:
        """"" when everything was read; else why not, for the evidence."""
        parts = [self.stopped] if self.stopped else []
        if self.too_large:
            parts.append(f"{self.too_large} file(s) over {_size(MAX_FILE_BYTES)} not read")
        return "; ".join(parts)


def _size(count: int) -> str:
    return f"{count // (1024 * 1024)} MiB" if count >= 1024 * 1024 and not count % (1024 * 1024) else f"{count} bytes"


def _changed(root: Path, base: str, commit: str, *, relative: bool) -> list[str]:
    """Python files changed (added, copied, modified, renamed, retyped) from base to commit;
    paths from the repository top, or from root (relative)."""
    args = ["git", "-C", str(root), "diff", "--name-only", "-z", "--no-renames", "--diff-filter=ACMRT", *(["--relative"] if relative else []),
            "--end-of-options", base, commit, "--"]
    listed = subprocess.run(args, capture_output=True, check=False)
    if listed.returncode != 0:
        return []
    return sorted(path for path in listed.stdout.decode(errors="surrogateescape").split("\0") if path.endswith(".py"))


def _ordered(paths: Iterable[str], first: Iterable[str], last: Iterable[str]) -> list[str]:
    """paths with `first` (those among them) first and `last` last, each part in its order."""
    listed = list(dict.fromkeys(paths))
    present, early, late = set(listed), list(dict.fromkeys(first)), set(last)
    early = [p for p in early if p in present]
    taken = set(early)
    return [*early, *(p for p in listed if p not in taken and p not in late), *(p for p in listed if p not in taken and p in late)]


def _skipped_dir(part: str) -> bool:
    return part.startswith(".") or part in _SKIP_DIRS


def _work_tree_paths(root: Path, bounds: Bounds) -> list[str]:
    """The `*.py` files of the work tree the walk reaches (relative, sorted), MAX_LISTED entries at most."""
    found: list[str] = []
    listed = 0
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not _skipped_dir(d) and not os.path.islink(os.path.join(directory, d)))
        listed += len(dirs) + len(files)
        if listed > MAX_LISTED:
            bounds.stopped = f"scan stopped at {MAX_LISTED} work-tree entries"
            break
        relative = os.path.relpath(directory, root)
        found += [name if relative == "." else f"{relative}/{name}" for name in sorted(files) if name.endswith(".py")]
    return found


def _work_tree_files(root: Path, bounds: Bounds, first: Iterable[str] = (), last: Iterable[str] = ()) -> Iterator[tuple[str, bytes]]:
    """The work tree's Python files: `first` (dev's changes), the rest, `last` (main's changes).
    Only files the walk listed are read (git's names only order them): none behind a symlink."""
    for relative in _ordered(_work_tree_paths(root, bounds), first, last):
        path = os.path.join(root, relative)
        if os.path.islink(path):
            continue
        try:
            size = os.stat(path).st_size
            if not bounds.take(size):
                return
            if size > MAX_FILE_BYTES:
                continue
            data = Path(path).read_bytes()
        except OSError:
            continue
        yield relative, data


def _git_tree_files(root: Path, commit: str, bounds: Bounds, first_from: str | None = None, first: Iterable[str] = (), last: Iterable[str] = ()) -> Iterator[tuple[str, bytes]]:
    """commit's Python files, after `first` as first_from has them (dev's changes as dev has
    them: the merged code holds those, not main's version); main's own changes last (a file
    both changed is read in both versions)."""
    early = list(first)
    if first_from is not None and early:
        yield from _tree_blobs(root, first_from, bounds, early, ())
        if bounds.stopped:
            return
    # a file only dev changed is in the merged code as dev has it; one both changed, main's too (last)
    yield from _tree_blobs(root, commit, bounds, (), last, skip=set(early) - set(last))


def _tree_blobs(root: Path, commit: str, bounds: Bounds, only: Iterable[str], last: Iterable[str], skip: set[str] | None = None) -> Iterator[tuple[str, bytes]]:
    """commit's Python blobs (only those in `only` when given; never those in skip), `last` last."""
    wanted = set(only)
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "-z", "--long", "--end-of-options", commit], capture_output=True, check=False,
    )  # the whole listing, filtered here: thousands of paths would not fit on a command line
    if listing.returncode != 0:
        return
    entries: dict[str, tuple[str, str]] = {}
    for record in listing.stdout.decode(errors="surrogateescape").split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) < 4 or fields[0] != "100644" and fields[0] != "100755" or not path.endswith(".py"):
            continue  # symlinks (120000), submodules and non-Python files are not read
        if (wanted and path not in wanted) or path in (skip or ()):
            continue
        entries[path] = (fields[2], fields[3])
    for path in _ordered(entries, (), last):
        oid, size = entries[path]
        if not size.isdigit() or not bounds.take(int(size)):
            return
        if int(size) > MAX_FILE_BYTES:
            continue
        data = git.blob_by_id(root, oid)
        if data is None:
            continue
        yield path, data


# -- the scan ----------------------------------------------------------------------------------


def _guarded(handlers: list[ast.ExceptHandler]) -> bool:
    for handler in handlers:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(n, ast.Name) and n.id in _GUARDS or isinstance(n, ast.Attribute) and n.attr in _GUARDS for n in names):
            return True
    return False


def _imports(tree: ast.AST) -> Iterator[tuple[str, int, bool]]:
    """(dotted module, line, guarded) of every absolute import in a module (`from a import b`
    also as `a.b`: b may be a submodule)."""

    def visit(node: ast.AST, guarded: bool) -> Iterator[tuple[str, int, bool]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, guarded
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module, node.lineno, guarded
            for alias in node.names:  # `from nemo import lens` imports nemo.lens
                yield f"{node.module}.{alias.name}", node.lineno, guarded
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and (getattr(node.func, "id", None) or getattr(node.func, "attr", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield node.args[0].value, node.lineno, True  # dynamic: the caller handles absence
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            inner = guarded or _guarded(node.handlers)  # type: ignore[attr-defined]
            for child in node.body:  # type: ignore[attr-defined]
                yield from visit(child, inner)
            for child in (*node.handlers, *node.orelse, *node.finalbody):  # type: ignore[attr-defined]
                yield from visit(child, guarded)
            return
        for child in ast.iter_child_nodes(node):
            yield from visit(child, guarded)

    yield from visit(tree, False)


def _spelled(module: str) -> bytes:
    """A regex for a dotted module name as code writes it: `a.b`, or `from a import b`."""
    parts = [re.escape(p.encode()) for p in module.split(".")]
    if len(parts) == 1:
        return parts[0]
    return rb"(?:" + rb"\.".join(parts) + rb"|" + rb"\.".join(parts[:-1]) + rb"\s+import\b[^\n]*\b" + parts[-1] + rb")"


def _statement_imports(tree: ast.Module) -> Iterator[tuple[str, int, bool]]:
    """_imports for a module without dynamic imports: only statement lists are walked (an
    import is always a statement), a tenth of the nodes of every expression."""

    def body(statements: list[ast.stmt], guarded: bool) -> Iterator[tuple[str, int, bool]]:
        for node in statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name, node.lineno, guarded
            elif isinstance(node, ast.ImportFrom):
                if node.module and not node.level:
                    yield node.module, node.lineno, guarded
                    for alias in node.names:
                        yield f"{node.module}.{alias.name}", node.lineno, guarded
            elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
                yield from body(node.body, guarded or _guarded(node.handlers))  # type: ignore[attr-defined]
                for handler in node.handlers:  # type: ignore[attr-defined]
                    yield from body(handler.body, guarded)
                yield from body(node.orelse, guarded)  # type: ignore[attr-defined]
                yield from body(node.finalbody, guarded)  # type: ignore[attr-defined]
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    yield from body(case.body, guarded)
            else:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        yield from body(inner, guarded)

    yield from body(tree.body, guarded=False)


_IMPORTS_PER_FILE = 5000  # distinct (module, guarded) pairs remembered of one file


def _file_imports(data: bytes, path: str) -> tuple[tuple[str, int, bool], ...]:
    """Each module a file imports, once per guarded-ness, at its first line (a file of a million
    `import six` is one entry)."""
    tree = ast.parse(data, filename=path)
    first: dict[tuple[str, bool], int] = {}
    for module, line, guarded in _imports(tree) if b"import_module" in data else _statement_imports(tree):
        if (module, guarded) not in first and len(first) < _IMPORTS_PER_FILE:
            first[(module, guarded)] = line
    return tuple((module, line, guarded) for (module, guarded), line in first.items())


def _parsed_imports(data: bytes, path: str) -> tuple[tuple[str, int, bool], ...] | None:
    """The file's imports; a file git left conflicted is read as both its sides (each side's
    lines at their own numbers); None when it (or a side) does not parse."""
    try:
        return _file_imports(data, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    sides = conflict_sides(data)
    if sides is None:
        return None
    found: dict[tuple[str, bool], int] = {}
    for side in sides:
        try:
            imported = _file_imports(side, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        for module, line, guarded in imported:
            found.setdefault((module, guarded), line)
    return tuple((module, line, guarded) for (module, guarded), line in found.items())


_IMPORTS_SCHEMA = ("imports", 2)
_IMPORTS_MAX = 200_000  # files remembered; past it the store starts again (bounded disk and memory)


class _ImportStore:
    """What each file imports, by the hash of its bytes (as git names a blob): the nightly run on
    a tree that barely changed parses only what changed. The operator's cache, like the rest."""

    def __init__(self) -> None:
        self.path = os.path.join(cache.root(), "imports.marshal")
        found = cache.load_entry(self.path, _IMPORTS_SCHEMA)
        self.known: dict[bytes, Any] = found if isinstance(found, dict) and len(found) < _IMPORTS_MAX else {}
        self.changed = False

    def imports(self, data: bytes, path: str) -> tuple[tuple[str, int, bool], ...] | None:
        """The file's imports; None when it does not parse (also remembered)."""
        key = hashlib.sha1(data).digest()
        if key not in self.known:
            self.known[key] = _parsed_imports(data, path)
            self.changed = True
        return self.known[key]

    def save(self) -> None:
        if self.changed:
            cache.store_entry(self.path, self.known, _IMPORTS_SCHEMA)


def scan_uses(files: Iterable[tuple[str, bytes]], modules: Mapping[str, tuple[str, ...]]) -> tuple[dict[str, Use], str]:
    """How the files use each package (by its module names), and what was scanned."""
    by_module: dict[str, list[str]] = {}
    for package, names in modules.items():
        for name in names:
            by_module.setdefault(name, []).append(package)
    if not by_module:
        return {}, "nothing to look for"
    # a cheap filter of literals: a file that names no module's first part imports none of them
    # (`nemo.lens` is written `from nemo.lens.x import` or `from nemo import lens`); the rest is
    # decided by the file's imports, which the store remembers
    first_part = {m: m.split(".", 1)[0].encode() for m in by_module}
    literals = tuple(sorted(set(first_part.values())))  # `in` is C's fast search; a regex alternation is not
    places: dict[str, dict[bool, list[str]]] = {p: {False: [], True: []} for p in modules}
    unreadable: dict[str, int] = {}
    count = 0
    store = _ImportStore()
    for path, data in files:
        count += 1
        if not any(literal in data for literal in literals):
            continue  # most files name none of the modules: no parse
        if all(len(found[False]) >= MAX_PLACES for found in places.values()):
            continue  # every package already has all the unguarded imports shown: nothing to learn (counted, not parsed)
        imported = store.imports(data, path)
        if imported is not None:
            # only the first MAX_PLACES of each package kept: a file of a million `import six`
            # costs its parse, never a string per import
            for module, line, guarded in imported:
                parts = module.split(".")
                prefixes = {".".join(parts[: i + 1]) for i in range(len(parts))}  # `PIL` and `nemo.lens` match `PIL.Image`, `nemo.lens.x`
                for package in {p for prefix in prefixes for p in by_module.get(prefix, ())}:
                    kept, place = places[package][guarded], f"{path}:{line}"
                    if len(kept) < MAX_PLACES and place not in kept:  # `from a import b` is a and a.b: one place
                        kept.append(place)
        else:
            # not Python depsync can read (conflict markers, a newer syntax, nested past the
            # interpreter's limit): what it imports is unknown, so each package it names says so
            for module in by_module:
                if first_part[module] not in data or not re.search(rb"\b" + _spelled(module) + rb"\b", data):
                    continue
                for package in by_module[module]:
                    unreadable[package] = unreadable.get(package, 0) + 1
    store.save()
    scope = f"{count} Python files scanned"
    uses = {}
    for package, found in places.items():
        strength = "import" if found[False] else "guarded" if found[True] else "none"
        where = tuple((found[False] or found[True])[:MAX_PLACES])
        missing = f"{unreadable[package]} file(s) naming {', '.join(modules[package])} could not be parsed" if package in unreadable else ""
        uses[package] = Use(strength, where, modules[package], scope, missing)
    return uses, scope


def merged_code_uses(root: Path, packages: Iterable[str], main_commit: str, merged_in_work_tree: bool, dev_commit: str | None = None) -> dict[str, Use]:
    """Use of each package in the merged tree's Python code (see the module docstring): dev's
    changes since the merge-base with main first, main's last; a bound reached is said."""
    wanted = sorted({canonicalize_name(p) for p in packages})
    if not wanted:
        return {}
    commits = (main_commit,) if dev_commit is None else (dev_commit, main_commit)
    modules = module_names(root, wanted, commits)
    base = _merge_base(root, dev_commit, main_commit) if dev_commit is not None else None
    bounds = Bounds()
    if merged_in_work_tree:
        top = git.toplevel(root)
        dev_changes = _changed(root, base, dev_commit, relative=False) if base and dev_commit else []
        main_changes = _changed(root, base, main_commit, relative=False) if base else []
        files = _work_tree_files(top, bounds, dev_changes, main_changes)
    else:
        dev_changes = _changed(root, base, dev_commit, relative=True) if base and dev_commit else []
        main_changes = _changed(root, base, main_commit, relative=True) if base else []
        files = _git_tree_files(root, main_commit, bounds, dev_commit, dev_changes, main_changes)
    uses, scope = scan_uses(files, modules)
    where = "the work tree (merged)" if merged_in_work_tree else f"main's commit {main_commit[:10]}" + (" and dev's changes" if dev_changes else "")
    incomplete = bounds.incomplete
    return {p: Use(u.strength, u.where, u.modules, f"{scope} in {where}", "; ".join(filter(None, (incomplete, u.incomplete)))) for p, u in uses.items()}


def _merge_base(root: Path, dev_commit: str, main_commit: str) -> str | None:
    try:
        return git.merge_base(root, dev_commit, main_commit) or None
    except DepsyncError:  # no common history (or git failed): no order, every file in the tree's order
        return None
