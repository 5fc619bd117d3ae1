"""`depsync install`: register the merge drivers (.gitattributes + git config) and the pre-push guard.

Idempotent; `--uninstall` removes exactly what it added.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from depsync import git
from depsync.config import Config
from depsync.errors import DepsyncError
from depsync.fileio import confined, write_atomic
from depsync.workspace import FileReader, config_of

HOOK_MARK = "# installed by depsync install --pre-push"
DRIVERS = {
    "depsync-lock": ("lock", "depsync: uv.lock is never merged as text; the owner's lock, relocked when configured"),
    "depsync-pyproject": ("pyproject", "depsync: [tool.uv.sources] merged three-way, the rest by git"),
}


@dataclass(frozen=True)
class InstallOptions:
    root: Path
    uninstall: bool = False
    pre_push: bool = False
    relock: bool = False
    command: str | None = None  # how git should call depsync; default `depsync`, else this Python


def _command(options: InstallOptions) -> str:
    if options.command:
        return options.command
    return "depsync" if shutil.which("depsync") else f"{shlex.quote(sys.executable)} -m depsync"


def _pattern(path: str) -> str:
    """A .gitattributes pattern for exactly this path (git's C-style quoting when needed)."""
    if any(c in path for c in ' "\\\t*?[#'):
        escaped = "".join("\\" + c if c in '"\\*?[' else c for c in path)
        return f'"{escaped}"'
    return path


def _attribute_lines(top: Path, root: Path, config: Config) -> list[str]:
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    return [f"{_pattern(prefix + config.lock)} merge=depsync-lock", f"{_pattern(prefix + config.pyproject)} merge=depsync-pyproject"]


def run(options: InstallOptions) -> int:
    root = options.root
    if not git.is_repository(root):
        raise DepsyncError(f"{root} is not a git repository")
    top = git.toplevel(root)
    config = config_of(FileReader(root))
    attributes = confined(top, ".gitattributes")  # a symlinked one could point anywhere
    existing = attributes.read_text().splitlines() if attributes.is_file() else []
    lines = _attribute_lines(top, root, config)
    if options.uninstall:
        kept = [line for line in existing if line not in lines]
        if kept != existing:
            write_atomic(attributes, ("\n".join(kept) + "\n" if kept else "").encode())
        for name in DRIVERS:
            git.remove_config_section(top, f"merge.{name}")
        hook = git.git_dir(top) / "hooks" / "pre-push"
        if hook.is_file() and HOOK_MARK in hook.read_text():
            hook.unlink()
        print("depsync: merge drivers and pre-push hook removed")
        return 0
    missing = [line for line in lines if line not in existing]
    if missing:
        text = attributes.read_text() if attributes.is_file() else ""
        if text and not text.endswith("\n"):
            text += "\n"
        write_atomic(attributes, (text + "\n".join(missing) + "\n").encode())
    command = _command(options)
    for name, (kind, description) in DRIVERS.items():
        relock = " --relock" if options.relock and kind == "lock" else ""
        git.set_config(top, f"merge.{name}.name", description)
        git.set_config(top, f"merge.{name}.driver", f"{command} merge-driver {kind}{relock} %O %A %B %P")
    print(f"depsync: merge drivers installed for {', '.join(line.split()[0] for line in lines)}")
    if options.pre_push:
        hook = git.git_dir(top) / "hooks" / "pre-push"
        if hook.is_symlink():
            raise DepsyncError(f"{hook} is a symlink; depsync never writes through symlinks")
        if hook.exists() and HOOK_MARK not in hook.read_text():
            raise DepsyncError(f"{hook} exists and was not written by depsync; add `{command} guard` to it by hand")
        hook.parent.mkdir(parents=True, exist_ok=True)
        root_arg = shlex.quote(str(root.resolve()))
        hook.write_text(f"#!/bin/sh\n{HOOK_MARK}\nexec {command} guard {root_arg}\n")
        hook.chmod(0o755)
        print(f"depsync: pre-push hook runs `depsync guard` ({hook})")
    return 0
