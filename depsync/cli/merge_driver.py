"""`depsync merge-driver` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from depsync.cli.common import Formatter, global_options


def register(commands: Any) -> None:
    # internal: git runs it with %O %A %B %P (see `depsync install`); no help= keeps it out of the list
    driver = commands.add_parser("merge-driver", description="git merge driver for uv.lock / pyproject.toml (registered by `depsync install`)", formatter_class=Formatter)
    driver.add_argument("kind", choices=("lock", "pyproject"))
    driver.add_argument("base", type=Path, help="%%O")
    driver.add_argument("ours", type=Path, help="%%A (the result is written here)")
    driver.add_argument("theirs", type=Path, help="%%B")
    driver.add_argument("path", help="%%P")
    driver.add_argument("--relock", action="store_true", help="lock driver: relock against the merged pyproject (local runner)")
    # git >= 2.44 fills %S/%X/%Y with the conflict labels; older git passes them unexpanded, then
    # the driver names the sides itself (branch of HEAD, the ref being merged)
    driver.add_argument("--base-label", default="", help="%%S: label of the merge base")
    driver.add_argument("--ours-label", default="", help="%%X: label of our side")
    driver.add_argument("--theirs-label", default="", help="%%Y: label of their side")
    global_options(driver, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import merge_driver

    labels = merge_driver.Labels(args.base_label, args.ours_label, args.theirs_label)
    return merge_driver.run(merge_driver.DriverOptions(args.kind, args.base, args.ours, args.theirs, args.path, args.relock, labels))
