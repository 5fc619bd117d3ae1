"""`depsync install` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from typing import Any

from depsync.cli.common import command, global_options, project_path
from depsync.cli.root import find_root_of

EPILOG = """\
examples:
  depsync install                   merge drivers for uv.lock and pyproject.toml
  depsync install --relock --pre-push
  depsync install --uninstall       remove what install added

exit codes:
  0  installed (or removed); running it again changes nothing
  2  error (not a git repository, an unwritable .gitattributes)
"""


def register(commands: Any) -> None:
    install = command(
        commands,
        "install",
        "register the merge drivers (and the pre-push guard) in this repository",
        "Register depsync's git merge drivers for uv.lock and pyproject.toml in this repository.",
        EPILOG,
    )
    project_path(install)
    install.add_argument("--uninstall", action="store_true", help="remove what install added")
    install.add_argument("--pre-push", action="store_true", help="also install a pre-push hook running `depsync guard`")
    install.add_argument("--relock", action="store_true", help="the lock driver relocks against the merged pyproject")
    install.add_argument("--command", dest="command_line", metavar="CMD", help="how git calls depsync (default: this Python, `<python> -m depsync`, so merges work without depsync on PATH)")
    global_options(install, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import install

    find_root_of(args)
    return install.run(
        install.InstallOptions(root=args.path, uninstall=args.uninstall, pre_push=args.pre_push, relock=args.relock, command=args.command_line)
    )
