"""`depsync lock` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from depsync.cli.common import (
    build_arg,
    command,
    global_options,
    project_path,
)
from depsync.cli.root import find_root_of

EPILOG = """\
examples:
  depsync lock                           relock in the CI image with the uv the Dockerfile pins
  depsync lock --upgrade-package nemo-run
  depsync lock --runner local            uv on this machine (projects without a CUDA image)
  depsync lock --check                   is uv.lock fresh? (uv lock --check in the image)
  depsync lock --build --target main     build the Dockerfile first and lock in the result
  depsync lock --prune-caches            remove the uv cache volumes of deleted checkouts

exit codes:
  0  uv.lock written (or, with --check, fresh)
  1  --check: uv.lock is stale
  2  error: no engine, no image, uv failed; uv.lock is left as it was
  130, 143, 129  interrupted: the container is removed, uv.lock is left as it was
"""


def register(commands: Any) -> None:
    lock = command(
        commands,
        "lock",
        "uv lock in the CI image with the uv it pins, written back atomically",
        "Regenerate uv.lock the way the CI image installs it: `uv lock` in the image (or on this\n"
        "machine with --runner local), with the uv version the Dockerfile pins. uv.lock is replaced\n"
        "only when uv succeeded; a table of what changed follows.",
        EPILOG,
    )
    project_path(lock)
    lock.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", metavar="RUNNER", help="where uv runs: auto (default: docker when an engine answers and an image is known), docker or local")
    lock.add_argument("--image", metavar="IMAGE", help="the CI image (default: [tool.depsync] image, else the Dockerfile's FROM)")
    lock.add_argument("--build", action="store_true", help="build the Dockerfile first and lock in the result")
    lock.add_argument("--target", metavar="STAGE", help="the Dockerfile stage --build builds (default: the last)")
    lock.add_argument("--build-arg", action="append", type=build_arg, default=[], metavar="NAME=VALUE", help="an ARG value for --build (repeatable)")
    lock.add_argument("--upgrade", action="store_true", help="allow upgrades of every package")
    lock.add_argument("--upgrade-package", action="append", default=[], metavar="NAME", help="allow upgrades of one package (repeatable)")
    lock.add_argument("--check", action="store_true", help="only check that uv.lock is fresh (uv lock --check in the image)")
    lock.add_argument("--summary", type=Path, metavar="FILE", help="write a Markdown summary of the changes here")
    lock.add_argument("--timeout", type=float, default=1800, metavar="SECONDS", help="how long uv may take (default: 1800)")
    lock.add_argument("--cache-volume", default=None, metavar="NAME", help="the volume for uv's cache (default: one per project checkout and uid, depsync-uv-cache-UID-HASH)")
    lock.add_argument("--prune-caches", action="store_true", help="only remove this machine's and uid's uv cache volumes of checkouts that no longer exist, then exit (no lock)")
    lock.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    global_options(lock, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import lock
    from depsync.shell.runners.request import LockRequest

    if args.prune_caches:
        return lock.prune_caches()
    find_root_of(args, needs_pyproject=True)
    return lock.run(
        LockRequest(
            root=args.path,
            runner=args.runner,
            image=args.image,
            build=args.build,
            target=args.target,
            build_args=dict(args.build_arg),
            upgrade=args.upgrade,
            upgrade_packages=tuple(args.upgrade_package),
            check=args.check,
            timeout=args.timeout,
            summary=args.summary,
            cache_volume=args.cache_volume,
            memory=args.memory,
        )
    )
