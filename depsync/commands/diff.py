"""`depsync diff [OLD] [NEW]`: what changed between two locks (files or REF:path)."""

from __future__ import annotations

import sys
from pathlib import Path

from depsync.core.lockdiff import diff_locks
from depsync.core.model.lock import Lock
from depsync.core.model.tomltext import conflict_marker_lines
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.report.lockdiff import print_table, to_json, to_markdown
from depsync.shell import git

DEFAULT_OLD, DEFAULT_NEW = "HEAD:uv.lock", "uv.lock"


@record
class DiffOptions:
    root: Path
    old: str = DEFAULT_OLD
    new: str = DEFAULT_NEW
    output_format: str = "human"
    exit_code: bool = False  # like `git diff --exit-code`: 1 when the locks differ
    show_registry: bool = False  # label registry versions `(registry)` like the other sources


def project_and_specs(options: DiffOptions) -> tuple[Path, str, str]:
    """`depsync diff DIR` is the project DIR's `HEAD:uv.lock` against its work tree, so
    the project path is positional here as in every other command; `-C DIR` still works."""
    if options.new == DEFAULT_NEW and options.old != DEFAULT_OLD and ":" not in options.old:
        candidate = options.root / options.old
        if candidate.is_dir():
            return candidate, DEFAULT_OLD, DEFAULT_NEW
    return options.root, options.old, options.new


def read_lock(root: Path, spec: str) -> Lock:
    """A lock from a file path (a directory means its uv.lock), or from `REF:path` through git
    (when no such file exists)."""
    file = root / spec
    if file.is_dir():
        file = file / "uv.lock"
    if file.is_file():
        text = file.read_text()
    elif ":" in spec:
        ref, _, path = spec.partition(":")
        if not git.is_repository(root):
            raise DepsyncError(f"{spec}: {root} is not a git repository")
        git.resolve(root, ref)
        data = git.read_blob(root, ref, path or "uv.lock")
        if data is None:
            raise DepsyncError(f"{path} does not exist at {ref}")
        text = data.decode()
    else:
        raise DepsyncError(f"{spec} not found")
    if conflict_marker_lines(text):
        raise DepsyncError(f"{spec} has conflict markers; resolve the merge first (depsync reconcile)")
    return Lock.from_text(text, spec)


def run(options: DiffOptions) -> int:
    root, old_spec, new_spec = project_and_specs(options)
    old, new = read_lock(root, old_spec), read_lock(root, new_spec)
    changes = diff_locks(old, new)
    if options.output_format == "json":
        print(to_json(changes, old_spec, new_spec))
    elif options.output_format == "markdown":
        print(to_markdown(changes, f"### uv.lock: `{old_spec}` -> `{new_spec}`", registry=options.show_registry), end="")
    else:
        print_table(changes, sys.stdout, title=f"{old_spec} -> {new_spec}", registry=options.show_registry)
    return 1 if options.exit_code and changes else 0
