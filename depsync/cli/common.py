"""What every command's command line shares: the help layout, one-line usage errors, the
global options, the project PATH and how the project root is found."""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path
from typing import Any

HELP_WIDTH = 100  # at most: help stays readable on wide terminals, and the docs' copy is stable


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs (examples, exit codes) keep their lines; help columns are aligned."""

    def __init__(self, prog: str) -> None:
        width = min(shutil.get_terminal_size((HELP_WIDTH, 24)).columns, HELP_WIDTH) - 2
        super().__init__(prog, max_help_position=34, width=width)


_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        match = _CHOICE.search(message)
        if match:
            given, choices = match.group(1), re.findall(r"'([^']*)'", match.group(2))
            visible = [c for c in choices if c not in HIDDEN]
            from depsync.core.findings import did_you_mean

            guess = did_you_mean(given, visible)
            message = message[: match.start()] + f"invalid choice: {given!r} (choose from {', '.join(visible)})"
            if guess:
                message += f"; did you mean {guess!r}?"
        self.exit(2, f"depsync: error: {message} (see {self.prog} --help)\n")


HIDDEN = ("merge-driver",)  # internal: git runs it (`depsync install` registers it)


def build_arg(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def global_options(parser: argparse.ArgumentParser, *, root: bool) -> None:
    """-q, -v, --color, --debug: before the command (root) or after it (each command; their
    defaults are SUPPRESS there so they do not undo what was given before the command)."""
    from depsync.report.ui import COLOR_CHOICES

    def default(value: object) -> object:
        return value if root else argparse.SUPPRESS

    group = parser.add_argument_group("global options")
    group.add_argument("-q", "--quiet", action="count", default=default(0), help="say less: no notes on stderr (errors and the report stay)")
    group.add_argument("-v", "--verbose", action="count", default=default(0), help="say more on stderr: the project root, the files read")
    group.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default=default("auto"),
        metavar="WHEN",
        help="auto (default: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always or never",
    )
    group.add_argument("--debug", action="store_true", default=default(False), help="show the traceback of an error")


def project_path(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        type=Path,
        metavar="PATH",
        help="the project directory (default: the nearest one upwards from the current directory with a pyproject.toml "
        "and a uv.lock or [tool.uv], as uv finds it)",
    )


def command(commands: Any, name: str, summary: str, description: str, epilog: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=summary, description=description, epilog=epilog, formatter_class=Formatter)
    return parser


def find_root(args: argparse.Namespace, *, needs_pyproject: bool = False) -> None:
    """args.path: the project directory given, else found upwards from the current one.
    needs_pyproject: the command reads the work tree's pyproject.toml, so none in the
    directory or above it is an error here, naming where the search went (as uv's does)."""
    from depsync.cli.root import any_pyproject, discover
    from depsync.errors import DepsyncError
    from depsync.report import ui

    given = args.path if args.path is not None else Path(".")
    searched = given.is_dir() or args.path is None
    if searched and needs_pyproject and not any_pyproject(given):
        raise DepsyncError(f"no pyproject.toml in {os.path.abspath(given)} or any parent directory")
    args.path, note = discover(given) if searched else (given, None)
    if note:
        ui.note(note)
    else:
        ui.detail(f"project root: {os.path.abspath(args.path)}")
