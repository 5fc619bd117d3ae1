"""`depsync diff [OLD] [NEW]`: what changed between two locks (files or REF:path)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from depsync import git
from depsync.errors import DepsyncError
from depsync.lockdiff import diff_locks
from depsync.model.lock import Lock
from depsync.model.tomltext import conflict_marker_lines
from depsync.report.lockdiff import print_table, to_json, to_markdown


@dataclass(frozen=True)
class DiffOptions:
    root: Path
    old: str = "HEAD:uv.lock"
    new: str = "uv.lock"
    output_format: str = "human"


def read_lock(root: Path, spec: str) -> Lock:
    """A lock from a file path, or from `REF:path` through git (when no such file exists)."""
    file = root / spec
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
    old, new = read_lock(options.root, options.old), read_lock(options.root, options.new)
    changes = diff_locks(old, new)
    if options.output_format == "json":
        print(to_json(changes, options.old, options.new))
    elif options.output_format == "markdown":
        print(to_markdown(changes, f"### uv.lock: `{options.old}` -> `{options.new}`"), end="")
    else:
        print_table(changes, sys.stdout, title=f"{options.old} -> {options.new}")
    return 0
