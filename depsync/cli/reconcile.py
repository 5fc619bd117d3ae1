"""`depsync reconcile` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from depsync.cli.common import command, global_options, project_path
from depsync.cli.root import find_root_of

EPILOG = """\
examples:
  git checkout -b sync/main-into-dev origin/dev
  git merge --no-commit --no-ff origin/main   # conflicts or not (--no-ff: never a fast-forward)
  depsync reconcile --summary pr-body.md    resolve, relock in the CI image, write the PR body
  depsync reconcile --dry-run               print the plan, touch nothing
  depsync reconcile --no-merge --dev origin/dev --main origin/main --dry-run
                                            plan from the refs alone

exit codes:
  0  done
  1  done, but needs review (a conflict, a kept downgrade, an error finding afterwards)
  2  error: every file is left as it was
  130, 143, 129  interrupted (Ctrl-C, SIGTERM, SIGHUP): every file is left as it was
"""


def register(commands: Any) -> None:
    reconcile = command(
        commands,
        "reconcile",
        "resolve a sync merge of main into dev: sources three-way, relock, summary",
        "Resolve a sync merge of main into dev: restore dev's triple and protected paths, merge\n"
        "[tool.uv.sources] three-way, keep dependency-metadata in step, relock, summarize.",
        EPILOG,
    )
    project_path(reconcile)
    reconcile.add_argument("--dev", metavar="REF", help="the dev ref (default: $DEPSYNC_OWNER_REF, else origin/dev; never read from the tree)")
    reconcile.add_argument("--main", metavar="REF", help="the main ref (default: MERGE_HEAD during a merge, else [tool.depsync] upstream-ref)")
    reconcile.add_argument("--no-merge", action="store_true", help="plan from the refs only; ignore a merge in progress")
    reconcile.add_argument("--dry-run", action="store_true", help="print the plan and touch nothing")
    reconcile.add_argument("--no-lock", action="store_true", help="do not relock (uv.lock stays dev's)")
    reconcile.add_argument("--default-side", choices=("dev", "main"), metavar="SIDE", help="who owns the dependency surface: dev (main's changes taken on evidence) or main (a branch following main); default: [tool.depsync] default-side, else dev")
    reconcile.add_argument("--no-fetch", action="store_true", help="do not fetch source repositories to compare revs")
    reconcile.add_argument("--summary", type=Path, metavar="FILE", help="write the Markdown summary (the PR body) here")
    reconcile.add_argument("--plan-json", type=Path, metavar="FILE", help="write the plan as JSON (schema depsync.reconcile/1) here")
    reconcile.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", metavar="RUNNER", help="where uv relocks, as for `depsync lock`: auto (default), docker or local")
    reconcile.add_argument("--image", metavar="IMAGE", help="the CI image (default: [tool.depsync] image, else the Dockerfile's FROM)")
    reconcile.add_argument("--timeout", type=float, default=1800, metavar="SECONDS", help="how long uv lock may take (default: 1800)")
    reconcile.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    global_options(reconcile, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import reconcile

    find_root_of(args)
    return reconcile.run(
        reconcile.ReconcileOptions(
            root=args.path,
            dev=args.dev,
            main=args.main,
            no_merge=args.no_merge,
            dry_run=args.dry_run,
            no_lock=args.no_lock,
            default_side=args.default_side,
            fetch_revs=not args.no_fetch,
            summary=args.summary,
            plan_json=args.plan_json,
            timeout=args.timeout,
            runner=args.runner,
            image=args.image,
            memory=args.memory,
        )
    )
