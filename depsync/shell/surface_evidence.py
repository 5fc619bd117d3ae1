"""Evidence for the surface merge (shell): does the merged code import a package, and under which module names.

The code scanned is the merged tree: the work tree while a merge is in progress (or once
main is merged into HEAD), else main's commit read from git (the code main brings). The
scan is bounded (files, bytes per file, bytes in all) and confined: the work tree walk never
follows a symlink, stays out of hidden, virtualenv and cache directories, and reads only
`*.py` files; a git tree skips symlink entries. What was scanned is said in the evidence.

Module names of a distribution: its `top_level.txt` or RECORD in a dist-info depsync can
read (the project's own `.venv`, then the wheels unpacked in uv's cache; reached without
symlinks), else the normalized name (`torch-memory-saver` -> `torch_memory_saver`). An import inside a
`try:` whose handler catches ImportError (or ModuleNotFoundError, Exception, bare) is
"guarded": the code runs without the package, so it is weaker evidence.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

from depsync.core.sync.surface import Use
from depsync.shell import git

MAX_FILES = 50_000  # Megatron-LM has ~2,000 Python files
MAX_FILE_BYTES = 2 * 1024 * 1024  # generated code past this is not what imports a dependency
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_PLACES = 3  # file:line shown per package
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv", "build", "dist"}
_GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _dist_info_dirs(root: Path) -> Iterator[Path]:
    """dist-info directories of the project's own .venv, reached without following symlinks."""
    venv = root / ".venv"
    if venv.is_symlink() or not venv.is_dir():
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


def module_names(root: Path, packages: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Top-level module names per canonical package: from a readable dist-info, else from the name."""
    wanted = {canonicalize_name(p) for p in packages}
    found: dict[str, set[str]] = {}
    if wanted:
        for dist_info in itertools.chain(_dist_info_dirs(root), _uv_cache_dist_infos()):
            project = canonicalize_name(dist_info.name.removesuffix(".dist-info").rsplit("-", 1)[0])
            if project in wanted and project not in found:
                modules = _top_levels(dist_info)
                if modules:
                    found[project] = modules
    return {p: tuple(sorted(found.get(p) or {p.replace("-", "_").replace(".", "_")})) for p in sorted(wanted)}


# -- the files ---------------------------------------------------------------------------------


def _work_tree_files(root: Path) -> Iterator[tuple[str, bytes]]:
    seen = total = 0
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS and not os.path.islink(os.path.join(directory, d)))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(directory, name)
            if os.path.islink(path):
                continue
            try:
                size = os.stat(path).st_size
                if size > MAX_FILE_BYTES:
                    continue
                data = Path(path).read_bytes()
            except OSError:
                continue
            seen, total = seen + 1, total + len(data)
            if seen > MAX_FILES or total > MAX_TOTAL_BYTES:
                return
            yield os.path.relpath(path, root), data


def _git_tree_files(root: Path, commit: str) -> Iterator[tuple[str, bytes]]:
    listing = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "-z", "--long", "--end-of-options", commit], capture_output=True, check=False,
    )
    if listing.returncode != 0:
        return
    seen = total = 0
    for record in listing.stdout.decode(errors="replace").split("\0"):
        meta, _, path = record.partition("\t")
        fields = meta.split()
        if len(fields) < 4 or fields[0] != "100644" and fields[0] != "100755" or not path.endswith(".py"):
            continue  # symlinks (120000), submodules and non-Python files are not read
        if not fields[3].isdigit() or int(fields[3]) > MAX_FILE_BYTES:
            continue
        data = git.blob_by_id(root, fields[2])
        if data is None:
            continue
        seen, total = seen + 1, total + len(data)
        if seen > MAX_FILES or total > MAX_TOTAL_BYTES:
            return
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
    """(top-level module, line, guarded) of every absolute import in a module."""

    def visit(node: ast.AST, guarded: bool) -> Iterator[tuple[str, int, bool]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".", 1)[0], node.lineno, guarded
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".", 1)[0], node.lineno, guarded
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) and (getattr(node.func, "id", None) or getattr(node.func, "attr", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                yield node.args[0].value.split(".", 1)[0], node.lineno, True  # dynamic: the caller handles absence
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


def scan_uses(files: Iterable[tuple[str, bytes]], modules: Mapping[str, tuple[str, ...]]) -> tuple[dict[str, Use], str]:
    """How the files use each package (by its module names), and what was scanned."""
    by_module: dict[str, list[str]] = {}
    for package, names in modules.items():
        for name in names:
            by_module.setdefault(name, []).append(package)
    if not by_module:
        return {}, "nothing to look for"
    needle = re.compile(rb"\b(?:" + b"|".join(re.escape(m.encode()) for m in sorted(by_module)) + rb")\b")
    places: dict[str, dict[bool, list[str]]] = {p: {False: [], True: []} for p in modules}
    count = 0
    for path, data in files:
        count += 1
        if not needle.search(data):
            continue  # most files name none of the modules: no parse
        try:
            found = list(_imports(ast.parse(data, filename=path)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # not Python depsync can read (or nested past the interpreter's limit): no evidence from it
        for module, line, guarded in found:
            for package in by_module.get(module, ()):
                places[package][guarded].append(f"{path}:{line}")
    scope = f"{count} Python files scanned"
    uses = {}
    for package, found in places.items():
        strength = "import" if found[False] else "guarded" if found[True] else "none"
        where = tuple((found[False] or found[True])[:MAX_PLACES])
        uses[package] = Use(strength, where, modules[package], scope)
    return uses, scope


def merged_code_uses(root: Path, packages: Iterable[str], main_commit: str, merged_in_work_tree: bool) -> dict[str, Use]:
    """Use of each package in the merged tree's Python code (see the module docstring)."""
    wanted = sorted({canonicalize_name(p) for p in packages})
    if not wanted:
        return {}
    modules = module_names(root, wanted)
    top = git.toplevel(root)
    files = _work_tree_files(top) if merged_in_work_tree else _git_tree_files(root, main_commit)
    uses, scope = scan_uses(files, modules)
    where = "the work tree (merged)" if merged_in_work_tree else f"main's commit {main_commit[:10]}"
    return {p: Use(u.strength, u.where, u.modules, f"{scope} in {where}") for p, u in uses.items()}
