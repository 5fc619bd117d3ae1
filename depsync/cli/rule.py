"""`depsync rule` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from typing import Any

from depsync.cli.common import command, global_options

EPILOG = """\
examples:
  depsync rule docker-stale-no-install
  depsync rule --all
  depsync rule --all --format json

exit codes:
  0  shown
  2  unknown rule (the nearest one is suggested)
"""


def register(commands: Any) -> None:
    rule = command(commands, "rule", "what a check rule finds and how to fix it (like `ruff rule`)", "What a rule finds, why it matters and how to fix it.", EPILOG)
    rule.add_argument("rule", nargs="?", metavar="RULE-ID", help="the rule, e.g. docker-stale-no-install")
    rule.add_argument("--all", action="store_true", help="every rule on one line each (with --format json: every page)")
    rule.add_argument("--format", "--output-format", dest="output_format", choices=("text", "json"), default="text", metavar="FORMAT", help="text (default) or json")
    global_options(rule, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.commands import rule

    return rule.run(rule.RuleOptions(args.rule, args.all, args.output_format))
