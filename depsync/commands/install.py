"""`depsync install`: register the merge drivers (.gitattributes + git config) and the pre-push guard.

Idempotent; `--uninstall` removes exactly what it added. git runs the drivers and the hook
through a shell, with the absolute path of this Python (`<python> -m depsync`), so merges
and pushes work whether or not `depsync` is on PATH. .gitattributes is shared through the
repository; git config and hooks are not, so every clone runs `depsync install` once.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from depsync.core.config import Config
from depsync.errors import DepsyncError
from depsync.records import record
from depsync.report import ui
from depsync.shell import git
from depsync.shell.fileio import confined, write_atomic
from depsync.shell.workspace import FileReader, config_of

HOOK_MARK = "# installed by depsync install --pre-push"
DRIVERS = {
    "depsync-lock": ("lock", "depsync: uv.lock is never merged as text; the owner's lock, relocked when configured"),
    "depsync-pyproject": ("pyproject", "depsync: [tool.uv.sources] merged three-way, the rest by git"),
}


@record
class InstallOptions:
    root: Path
    uninstall: bool = False
    pre_push: bool = False
    relock: bool = False
    command: str | None = None  # how git should call depsync; default this Python (`<python> -m depsync`)


def _command(options: InstallOptions) -> str:
    """The shell command git runs. A bare `depsync` would depend on PATH at merge time: in a
    shell without the venv git cannot find it, and the merge silently falls back to text."""
    if options.command:
        return options.command
    return f"{shlex.quote(sys.executable)} -m depsync"


# %S/%X/%Y (the conflict labels) exist from git 2.44; older git passes them through unexpanded
# and the driver then names the sides itself. git quotes %P and the labels for the shell;
# %O/%A/%B are temp file names. `--` keeps a path from .gitattributes from reading as an option.
_DRIVER_ARGS = "--base-label=%S --ours-label=%X --theirs-label=%Y -- %O %A %B %P"


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
        ui.note("merge drivers and pre-push hook removed")
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
        git.set_config(top, f"merge.{name}.driver", f"{command} merge-driver {kind}{relock} {_DRIVER_ARGS}")
    ui.note(f"merge drivers registered in this clone's git config (git runs `{command} merge-driver ...`)")
    _print_attributes_advice(top, lines)
    if options.pre_push:
        hook = git.git_dir(top) / "hooks" / "pre-push"
        if hook.is_symlink():
            raise DepsyncError(f"{hook} is a symlink; depsync never writes through symlinks")
        if hook.exists() and HOOK_MARK not in hook.read_text():
            raise DepsyncError(f"{hook} exists and was not written by depsync; add `{command} guard --pre-push {shlex.quote(str(root.resolve()))}` to it by hand (it reads git's pre-push lines on stdin)")
        hook.parent.mkdir(parents=True, exist_ok=True)
        root_arg = shlex.quote(str(root.resolve()))
        # stdin (git's `<local ref> <sha> <remote ref> <sha>` lines) passes straight through exec
        hook.write_text(f"#!/bin/sh\n{HOOK_MARK}\nexec {command} guard --pre-push {root_arg}\n")
        hook.chmod(0o755)
        ui.note(f"pre-push hook installed ({hook}): each sync merge pushed is checked by `depsync guard`; other pushes pass")
    # the same flags: each clone needs the same git config and hook, so it runs the same command
    flags = "".join(flag for flag, given in ((" --relock", options.relock), (" --pre-push", options.pre_push)) if given)
    ui.note(f"git config and hooks are not cloned: every clone runs `depsync install{flags}` once"
            " (without it git merges uv.lock and pyproject.toml as text)")
    return 0


def _print_attributes_advice(top: Path, lines: list[str]) -> None:
    """Say which .gitattributes lines route the files to the drivers, and whether they still need a commit."""
    committed = (git.read_blob(top, "HEAD", ".gitattributes") or b"").decode(errors="replace").splitlines()
    if all(line in committed for line in lines):
        ui.note(".gitattributes (committed) routes " + ", ".join(line.split()[0] for line in lines) + " to them")
        return
    ui.note(".gitattributes now has these lines; commit them so every clone merges the same way:")
    for line in lines:
        print(f"    {line}")
    print("  git add .gitattributes && git commit -m 'depsync merge drivers'")
