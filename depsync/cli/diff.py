"""`depsync diff` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from depsync.cli.common import command, global_options
from depsync.cli.root import find_root_of

EPILOG = """\
OLD and NEW are lock files, directories (their uv.lock) or git REF:path. Registry versions are
shown plain, other sources are named (git with its short commit); forked resolutions of one
name are paired by where they come from; a direct wheel/sdist URL pairs with the new URL of the
same file kind (a newer release is one upgrade row, not a removal and an addition).

examples:
  depsync diff                               HEAD:uv.lock against the work tree's uv.lock
  depsync diff origin/dev:uv.lock uv.lock --format markdown
  depsync diff path/to/project               that project's HEAD:uv.lock against its uv.lock
  depsync diff --exit-code                   exit 1 when the locks differ, like git diff

exit codes:
  0  compared (with --exit-code: the locks have the same packages)
  1  --exit-code: the locks differ
  2  usage or input error: a missing file or ref, a lock that does not parse
"""


def register(commands: Any) -> None:
    diff = command(
        commands,
        "diff",
        "what changed between two locks (files, directories or REF:path)",
        "A semantic diff of two locks: packages added, removed, upgraded, downgraded and moved to\n"
        "another source, direct dependencies apart from transitive ones.",
        EPILOG,
    )
    diff.add_argument("old", nargs="?", default="HEAD:uv.lock", metavar="OLD", help="the old lock (default: HEAD:uv.lock)")
    diff.add_argument("new", nargs="?", default="uv.lock", metavar="NEW", help="the new lock (default: uv.lock, the work tree's)")
    diff.add_argument("-C", "--project", dest="path", default=None, type=Path, metavar="PATH", help="the project directory (default: found upwards as for every command)")
    diff.add_argument("--format", "--output-format", dest="output_format", choices=("human", "markdown", "json"), default="human", metavar="FORMAT", help="human (default), markdown (a PR comment) or json (schema depsync.diff/2)")
    diff.add_argument("--exit-code", action="store_true", help="exit 1 when the locks differ, 0 when not (like git diff --exit-code)")
    diff.add_argument("--show-registry", action="store_true", help="label registry versions `(registry)` too")
    global_options(diff, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import diff

    if args.path is None:
        args.path = Path(".")
        if args.old == diff.DEFAULT_OLD and args.new == diff.DEFAULT_NEW:
            find_root_of(args)
    return diff.run(
        diff.DiffOptions(
            root=args.path,
            old=args.old,
            new=args.new,
            output_format=args.output_format,
            exit_code=args.exit_code,
            show_registry=args.show_registry,
        )
    )
