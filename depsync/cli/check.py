"""`depsync check` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from typing import Any

from depsync.cli.common import (
    build_arg,
    command,
    find_root,
    global_options,
    project_path,
)

EPILOG = """\
examples:
  depsync check                        the project around the current directory
  depsync check path/to/repo --strict  warnings fail too
  depsync check --ref origin/dev       what is committed on origin/dev (read with git, no checkout)
  depsync check --diff                 what --fix would change, as a unified diff; writes nothing
  depsync check --fix                  apply the mechanical fixes, then check again
  depsync check --format sarif > depsync.sarif
                                       SARIF 2.1.0 for GitHub code scanning
  depsync rule docker-stale-no-install what a finding means and how to fix it

exit codes:
  0  consistent: no error (warnings and info allowed); with --diff: nothing to fix
  1  errors found (with --strict: warnings too); with --diff: something to fix
  2  usage, config or input error: one line on stderr (--debug shows the traceback)
"""


def register(commands: Any) -> None:
    check = command(
        commands,
        "check",
        "offline consistency gate for pyproject.toml, uv.lock and the CI Dockerfiles",
        "Check that pyproject.toml, uv.lock and the CI Dockerfiles agree (fast, offline, deterministic).\n"
        "Every finding names the file, the line, the rule and a fix.",
        EPILOG,
    )
    project_path(check)
    check.add_argument(
        "--format",
        "--output-format",
        dest="output_format",
        choices=("human", "json", "github", "gitlab", "sarif"),
        default="human",
        metavar="FORMAT",
        help="human (default), json (schema depsync.check/2), github (workflow annotations), gitlab (Code Quality report) or sarif (SARIF 2.1.0)",
    )
    check.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    check.add_argument("--fix", action="store_true", help="apply the mechanical fixes (`fix: yes` in `depsync rule --all`), then check again")
    check.add_argument("--diff", action="store_true", help="print what --fix would change as a unified diff and write nothing")
    check.add_argument("--ref", metavar="REF", help="read every file from this git ref instead of the work tree (no checkout)")
    check.add_argument("--deep", action="store_true", help="also run real `uv lock --check --offline` with the uv version the Dockerfile pins")
    check.add_argument("--static", action="store_true", help="report depsync's static lock verdict as is: never ask uv to confirm a `lock-stale`")
    check.add_argument("--dockerfile", action="append", metavar="FILE", help="a Dockerfile to check (repeatable; default: [tool.depsync] dockerfiles, else the project's Dockerfiles that run uv)")
    check.add_argument("--build-arg", action="append", type=build_arg, default=[], metavar="NAME=VALUE", help="an ARG value for the --dockerfile files (repeatable)")
    check.add_argument("--owner-ref", metavar="REF", help="the ref that owns the protected paths (default: [tool.depsync] owner-ref, origin/dev)")
    check.add_argument("--lock", metavar="FILE", help="the lock file (default: [tool.depsync] lock, uv.lock)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    global_options(check, root=False)


def options_from(args: argparse.Namespace) -> Any:
    """The check's options, each field from its own flag."""
    from depsync.commands import check
    from depsync.core.config import DockerfileSpec
    from depsync.errors import DepsyncError
    from depsync.shell.workspace import CliOverrides

    dockerfiles = None
    if args.dockerfile:
        dockerfiles = tuple(DockerfileSpec(p, dict(args.build_arg)) for p in args.dockerfile)
    elif args.build_arg:
        raise DepsyncError("--build-arg applies to the Dockerfiles named with --dockerfile")
    return check.CheckOptions(
        root=args.path,
        ref=args.ref,
        output_format=args.output_format,
        strict=args.strict,
        deep=args.deep,
        static=args.static,
        overrides=CliOverrides(dockerfiles=dockerfiles, owner_ref=args.owner_ref, lock=args.lock),
        no_cache=args.no_cache,
    )


def run(args: argparse.Namespace) -> int:
    from depsync.commands import check

    find_root(args, needs_pyproject=args.ref is None)  # --ref reads the files from git
    options = options_from(args)
    if args.fix or args.diff:
        return check.run_check(options, fix=args.fix, diff=args.diff)
    return check.run(options)
