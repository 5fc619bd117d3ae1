"""The layers, read from the imports (ast): what may import what, no cycles, small modules.

    cli      -> commands -> core, shell, report
    commands -> core, shell, report (never another command)
    shell    -> core, report.ui (never commands or cli)
    report   -> core (and report itself)
    core     -> core only

Every import counts, also those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "depsync"
TOP_LEVEL = {"depsync", "depsync.__main__", "depsync.entry", "depsync.errors", "depsync.records", "depsync.threads", "depsync.api"}
MAX_LINES = 600
# the layer a module belongs to: its first folder under depsync/ ("top" for depsync/*.py)
ALLOWED: dict[str, set[str]] = {
    "core": {"core", "top"},
    "report": {"core", "report", "top"},
    "shell": {"core", "shell", "report.ui", "top"},
    "commands": {"core", "shell", "report", "report.ui", "top"},
    "cli": {"cli", "commands", "core", "shell", "report", "report.ui", "top"},
    "top": {"top", "cli", "commands", "core", "shell", "report", "report.ui"},
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    parts = module.split(".")
    if module == "depsync.report.ui":
        return "report.ui"
    if len(parts) < 3 and module not in {"depsync.cli", "depsync.core", "depsync.shell", "depsync.commands", "depsync.report"}:
        return "top"
    return parts[1]


def imports_of(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """(imported depsync module, line) for every import in the file, resolved to a module."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("depsync"):
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("depsync"):
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in known else base), node.lineno


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {m: {dep for dep, _ in imports_of(m, p, known) if dep != m and dep in known} for m, p in found.items()}


def test_layers_import_only_what_they_may() -> None:
    found = modules()
    known = set(found)
    broken = []
    for module, path in found.items():
        if module == "depsync":  # the package's __version__ only
            continue
        own = layer(module)
        for dep, line in imports_of(module, path, known):
            if dep in {"depsync"}:
                continue
            theirs = layer(dep)
            if theirs not in ALLOWED[own]:
                broken.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {own} imports {theirs} ({dep})")
    assert not broken, "\n".join(broken)


def test_no_command_imports_another_command() -> None:
    found = modules()
    known = set(found)
    broken = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: imports {dep}"
        for module, path in found.items()
        if module.startswith("depsync.commands.")
        for dep, line in imports_of(module, path, known)
        if dep.startswith("depsync.commands.") and dep != module
    ]
    assert not broken, "\n".join(broken)


def test_no_import_cycles() -> None:
    edges = graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(edges.get(node, ())):
            # a package's __init__ is imported with any of its modules: an edge to a parent
            # package is not a dependency on its modules
            if node.startswith(dep + "."):
                continue
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep):], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_package_init_files_are_empty_of_code() -> None:
    # the cached check imports depsync.shell.cache; every package it passes through must cost nothing
    heavy = []
    for path in PACKAGE.rglob("__init__.py"):
        if path.parent == PACKAGE:
            continue
        tree = ast.parse(path.read_text())
        if any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree)):
            heavy.append(str(path.relative_to(PACKAGE.parent)))
    assert not heavy, heavy


def test_few_modules_at_the_top() -> None:
    top = {module_name(p) for p in PACKAGE.glob("*.py")}
    assert top <= TOP_LEVEL, sorted(top - TOP_LEVEL)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_the_size_limit(path: Path) -> None:
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE.parent)}: {lines} lines (split it by concern)"


def test_the_core_touches_no_outside_world() -> None:
    # disk, git, Docker, processes and the environment belong to the shell
    forbidden = {"subprocess", "socket", "shutil", "tempfile", "http", "urllib.request"}
    found = []
    for path in (PACKAGE / "core").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name in forbidden or name.split(".")[0] in {"subprocess", "socket", "shutil", "tempfile"}:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: imports {name}")
    assert not found, "\n".join(found)
