"""Command line: parse arguments, call a command, turn errors into exit code 2.

Exit codes: 0 clean, 1 findings (or a reconcile that needs review), 2 usage, config
or input error. A traceback is shown only with --debug.

Conventions, as uv and ruff have them: every command takes the project directory as its
positional PATH (found upwards from the current directory when omitted, as uv finds its
project; `diff` also takes `-C DIR`), `--format` is also spelled `--output-format`, global
options (-q, -v, --color, --debug) go before or after the command, and `depsync` alone prints
the help on stderr and exits 2 (like uv: no command is a usage error, so a script that
forgot it fails). `depsync COMMAND --help` shows examples, defaults and exit codes.
"""

from __future__ import annotations

import argparse
import sys

from depsync import __version__
from depsync.cli.common import Formatter, Parser, global_options
from depsync.cli.run import command_module, run_parsed, with_redacted_streams

_ROOT_EPILOG = """\
Run `depsync COMMAND --help` for a command's options, examples and exit codes,
and `depsync rule RULE-ID` for what a check finding means.

exit codes (every command):
  0  success / consistent
  1  findings, or done but needs review
  2  usage, config or input error (one line on stderr; --debug shows the traceback)
"""


COMMANDS = ("check", "reconcile", "lock", "diff", "install", "guard", "rule", "completion", "merge_driver")


def _named_command(argv: list[str]) -> str | None:
    """The command the arguments name: their first word that is no global option (nor --color's
    value); None when that is no command."""
    words = iter(argv)
    for word in words:
        if word == "--color":
            next(words, None)
        elif not word.startswith("-"):
            name = word.replace("-", "_")
            return name if name in COMMANDS else None
    return None


def parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command line: each command registers its own options (depsync/cli/<command>.py).

    Given the arguments of a run that names a command, only that command is registered: the
    others' modules and options cost a cold `depsync check` 6 ms to import and build, and argparse
    never looks at another command's options. Without one (`depsync`, `depsync --help`, a typo,
    `depsync completion`, which prints them all) every command is there."""
    root = Parser(
        prog="depsync",
        description="Keep pyproject.toml, uv.lock and the CI Dockerfile consistent across a dev branch synced from main.",
        epilog=_ROOT_EPILOG,
        formatter_class=Formatter,
    )
    root.add_argument("-V", "--version", action="version", version=f"depsync {__version__}")
    global_options(root, root=True)
    commands = root.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=Parser)
    named = _named_command(argv) if argv is not None else None
    for name in (named,) if named not in (None, "completion") else COMMANDS:
        command_module(name).register(commands)
    return root


def main(argv: list[str] | None = None) -> int:
    """Parse, run, map errors to exit codes (depsync/cli/run.py): the help and argparse's own
    errors are written inside the redacted streams too, so `depsync --help | head -1` is quiet."""

    def parse_and_run() -> int:
        cli = parser(sys.argv[1:] if argv is None else argv)
        args = cli.parse_args(argv)
        if args.command is None:  # like uv: the help, on stderr, and a usage error
            cli.print_help(sys.stderr)
            return 2
        return run_parsed(args)

    return with_redacted_streams(parse_and_run)


if __name__ == "__main__":
    sys.exit(main())
