"""Shell: list the files of a project that may be Dockerfiles, bounded, inside the project.

Used when no `dockerfiles` are configured (depsync/dockerfile_discovery.py decides which of
these run uv against the project) and by the check result cache (depsync/cache.py), which
recomputes this listing on a replay: a Dockerfile added later changes the result. So this
module imports nothing beyond the interpreter's own `os`.

What counts as a candidate: a regular file named `Dockerfile*`, `Containerfile*`,
`*.Dockerfile` / `*.dockerfile` / `*.containerfile`, at most MAX_DEPTH directories below
the project root. Hidden directories are skipped except `.devcontainer` and `.github`;
virtual environments, `node_modules` and caches are skipped. Symlinks are never followed
into (a link could point out of the project). The `pyproject.toml` files below the
root are listed too: a Dockerfile next to (or below) one belongs to that project.
"""

from __future__ import annotations

import os

MAX_DEPTH = 3  # `docker/ci/Dockerfile`, `.devcontainer/x/Dockerfile`; real CI Dockerfiles sit at 0-2
MAX_ENTRIES = 20_000  # directory entries looked at before the scan stops (and says so)
_HIDDEN_KEPT = (".devcontainer", ".github")
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist", "target"})


def is_candidate(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(("dockerfile", "containerfile")) or lowered.endswith((".dockerfile", ".containerfile"))


def scan(root: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(candidate Dockerfiles, pyproject.toml files below the root, the scan stopped at
    MAX_ENTRIES), paths relative to root in POSIX form, sorted."""
    candidates: list[str] = []
    projects: list[str] = []
    seen = 0
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        relative, depth = pending.pop()
        try:
            entries = list(os.scandir(os.path.join(root, relative) if relative else root))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                return tuple(sorted(candidates)), tuple(sorted(projects)), True
            name = entry.name
            path = f"{relative}/{name}" if relative else name
            try:
                if entry.is_symlink():
                    if is_candidate(name):
                        candidates.append(path)  # listed, never followed here: the reader refuses one that leaves the project
                    continue
                if entry.is_dir(follow_symlinks=False):
                    hidden = name.startswith(".") and name not in _HIDDEN_KEPT
                    if depth < MAX_DEPTH and not hidden and name not in _SKIPPED_DIRS and not name.endswith(".egg-info"):
                        pending.append((path, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    if is_candidate(name):
                        candidates.append(path)
                    elif name == "pyproject.toml" and relative:
                        projects.append(path)
            except OSError:
                continue
    return tuple(sorted(candidates)), tuple(sorted(projects)), False


def git_scan(entries: list[tuple[str, str]]) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """scan() over a git tree listing: (mode, path relative to the project) pairs."""
    candidates: list[str] = []
    projects: list[str] = []
    for mode, path in entries[:MAX_ENTRIES]:
        if mode not in ("100644", "100755"):
            continue  # a symlink (120000) or a submodule (160000): not read
        parts = path.split("/")
        directories = parts[:-1]
        if len(directories) > MAX_DEPTH:
            continue
        if any((d.startswith(".") and d not in _HIDDEN_KEPT) or d in _SKIPPED_DIRS or d.endswith(".egg-info") for d in directories):
            continue
        if is_candidate(parts[-1]):
            candidates.append(path)
        elif parts[-1] == "pyproject.toml" and directories:
            projects.append(path)
    return tuple(sorted(candidates)), tuple(sorted(projects)), len(entries) > MAX_ENTRIES
