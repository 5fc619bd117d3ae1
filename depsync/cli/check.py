"""`depsync check` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from depsync.cli.root import find_root_of

if TYPE_CHECKING:
    import argparse

EPILOG = """\
examples:
  depsync check                        the project around the current directory
  depsync check path/to/repo --strict  warnings fail too
  depsync check --ref origin/dev       what is committed on origin/dev (read with git, no checkout)
  depsync check --diff                 what --fix would change, as a unified diff; writes nothing
  depsync check --fix                  apply the mechanical fixes, then check again
  depsync check --select lock-stale,docker-not-locked
                                       only these rules (--ignore RULE leaves rules out)
  depsync check --exit-zero            report, but do not fail the step
  depsync check --image                the triple against the CI base image (its Python, distributions, CUDA)
  depsync check --format sarif > depsync.sarif
                                       SARIF 2.1.0 for GitHub code scanning
  depsync rule docker-stale-no-install what a finding means and how to fix it

exit codes:
  0  consistent: no error (warnings and info allowed); with --diff: nothing to fix; always with --exit-zero
  1  errors found (with --strict: warnings too); with --diff: something to fix
  2  usage, config or input error: one line on stderr (--debug shows the traceback)
"""


FORMATS = ("human", "json", "github", "gitlab", "sarif")
FORMAT_VARIABLE = "DEPSYNC_OUTPUT_FORMAT"  # like ruff's RUFF_OUTPUT_FORMAT: the default of --format


def output_format(given: str | None, environ: Mapping[str, str]) -> str:
    """--format when given, else $DEPSYNC_OUTPUT_FORMAT, else human; an unknown value of the
    variable is a usage error naming the valid ones (the flag's own are argparse's)."""
    from depsync.core.config import suggestion
    from depsync.errors import DepsyncError

    if given is not None:
        return given
    value = environ.get(FORMAT_VARIABLE, "")
    if not value:
        return "human"
    if value not in FORMATS:
        raise DepsyncError(f"{FORMAT_VARIABLE}={value[:100]!r} is not an output format{suggestion(value, FORMATS)} (choose from {', '.join(FORMATS)})")
    return value


def register(commands: Any) -> None:
    # argparse and the shared options only here: a plain `depsync check` is parsed without them
    # (depsync/entry.py builds the same namespace)
    from depsync.cli.common import build_arg, command, global_options, project_path

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
        choices=FORMATS,
        default=None,
        metavar="FORMAT",
        help=f"human (default), json (schema depsync.check/2), github (workflow annotations), gitlab (Code Quality report) or sarif (SARIF 2.1.0); "
        f"default: ${FORMAT_VARIABLE} when set, else human",
    )
    check.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    check.add_argument(
        "--select",
        action="append",
        metavar="RULE,...",
        help="report only these rules (repeatable, comma-separated; ALL: every rule); the others are not shown or counted",
    )
    check.add_argument(
        "--ignore",
        action="append",
        metavar="RULE,...",
        help="do not report these rules (repeatable, comma-separated); wins over --select",
    )
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (they are still printed); 2 stays 2")
    check.add_argument("--fix", action="store_true", help="apply the mechanical fixes (`fix: yes` in `depsync rule --all`), then check again")
    check.add_argument("--diff", action="store_true", help="print what --fix would change as a unified diff and write nothing")
    check.add_argument("--ref", metavar="REF", help="read every file from this git ref instead of the work tree (no checkout)")
    check.add_argument("--deep", action="store_true", help="also run real `uv lock --check --offline` with the uv version the Dockerfile pins")
    check.add_argument(
        "--image",
        nargs="?",
        const="",
        default=None,
        metavar="REF",
        help="also hold the triple against what this CI base image ships (its Python, its installed distributions, its CUDA); "
        "REF default: [tool.depsync] image, else the CI Dockerfile's FROM, as `depsync lock` chooses it",
    )
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
    from depsync.core.rules.registry import RULES
    from depsync.core.selection import selection
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
        output_format=output_format(args.output_format, os.environ),
        strict=args.strict,
        selection=selection(args.select, args.ignore, RULES),
        exit_zero=args.exit_zero,
        deep=args.deep,
        static=args.static,
        overrides=CliOverrides(dockerfiles=dockerfiles, owner_ref=args.owner_ref, lock=args.lock),
        no_cache=args.no_cache,
        image=args.image,
    )


def run(args: argparse.Namespace) -> int:
    from depsync.commands import check

    find_root_of(args, needs_pyproject=args.ref is None)  # --ref reads the files from git
    options = options_from(args)
    if args.fix or args.diff:
        return check.run_check(options, fix=args.fix, diff=args.diff)
    return check.run(options)
