"""`depsync guard` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from typing import Any

from depsync.cli.common import command, global_options, project_path
from depsync.cli.root import find_root_of

EPILOG = """\
examples:
  depsync guard                     the sync merge at HEAD
  depsync guard --ref sync-main --dev origin/dev --main origin/main
  depsync guard --pre-push          as a pre-push hook (depsync install --pre-push sets it up)

exit codes:
  0  the invariants hold (or the push has no sync merge)
  1  violations, each with the command that restores it
  2  error
"""


def register(commands: Any) -> None:
    guard = command(
        commands,
        "guard",
        "check a sync merge commit before it is pushed",
        "Check a sync merge commit before it is pushed: protected paths and Dockerfiles are dev's,\n"
        "pyproject.toml differs only where the three-way merge says, uv.lock is fresh and not main's.",
        EPILOG,
    )
    project_path(guard)
    guard.add_argument("--ref", default="HEAD", metavar="REF", help="the merge commit to check (default: HEAD)")
    guard.add_argument("--dev", metavar="REF", help="the dev parent (default: the merge's parent on the owner ref, else the first)")
    guard.add_argument("--main", metavar="REF", help="the main parent (with --dev: checks a non-merge commit too)")
    guard.add_argument("--pre-push", action="store_true", help="pre-push hook: read the pushed refs from stdin (or pre-commit's PRE_COMMIT_* variables), check each sync merge being pushed, pass every other push")
    global_options(guard, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import guard

    find_root_of(args)
    return guard.run(guard.GuardOptions(root=args.path, ref=args.ref, dev=args.dev, main=args.main, pre_push=args.pre_push))
