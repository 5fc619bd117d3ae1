"""What every command's command line shares: the help layout, one-line usage errors, the
global options, the project PATH and how the project root is found."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

HELP_WIDTH = 100  # at most: help stays readable on wide terminals, and the docs' copy is stable


def _terminal_columns() -> int:
    """$COLUMNS, else the terminal's width, else HELP_WIDTH: what shutil.get_terminal_size
    answers, without importing shutil (argparse makes a formatter for every option it adds)."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
        if columns > 0:
            return columns
    except ValueError:
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or HELP_WIDTH  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return HELP_WIDTH


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs (examples, exit codes) keep their lines; help columns are aligned."""

    def __init__(self, prog: str) -> None:
        width = min(_terminal_columns(), HELP_WIDTH) - 2
        super().__init__(prog, max_help_position=34, width=width)


# argparse's wording: choices quoted up to 3.13, bare from 3.14
_CHOICE = re.compile(r"(argument [^:]*: )?invalid choice: '([^']*)' \(choose from (.*)\)")


def closest_option(given: str, options: list[str]) -> str | None:
    """The option a mistyped one meant (`--stirct` -> `--strict`, `--no_cache` -> `--no-cache`,
    `-strict` -> `--strict`), compared without the dashes and any `=VALUE`; None when none is close.
    Our own matcher: argparse suggests (`suggest_on_error`) only from Python 3.14."""
    from depsync.core.findings import did_you_mean

    name = given.partition("=")[0]
    if not name.startswith("-") or len(name.lstrip("-")) < 2:
        return None  # a positional, or `-x`: too short to guess from
    bare = {option.lstrip("-"): option for option in options if len(option.lstrip("-")) > 1}
    spelled = name.lstrip("-").replace("_", "-").lower()
    if spelled in bare and bare[spelled] != name:
        return bare[spelled]
    guess = did_you_mean(spelled, bare)
    return bare[guess] if guess else None


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if sys.version_info >= (3, 14):  # ours suggest (closest_option, error); argparse's would word them twice
            kwargs.setdefault("suggest_on_error", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        match = _CHOICE.search(message)
        if match:
            given, choices = match.group(2), [c.strip().strip("'") for c in match.group(3).split(",")]
            visible = [c for c in choices if c not in HIDDEN]
            from depsync.core.findings import did_you_mean

            guess = did_you_mean(given, visible)
            meant = f" (did you mean {guess!r}?)" if guess else ""
            if match.group(1) == "argument COMMAND: ":  # as uv says it: `unrecognized subcommand 'chek'`
                message = f"unrecognized command {given!r}{meant}; commands: {', '.join(visible)}"
            else:
                message = message[: match.end(1) if match.group(1) else match.start()] + f"invalid choice: {given!r}{meant}; choose from {', '.join(visible)}"
        self.exit(2, f"depsync: error: {message} (see {self.prog} --help)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """argparse's, with each unrecognized argument named with the option it likely meant,
        from the options of the command it was given to (and the global ones)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            command = self._command_parser(getattr(parsed, "command", None))
            options = [o for parser in (self, command) if parser is not None for a in parser._actions for o in a.option_strings if a.help != argparse.SUPPRESS]
            from depsync.core.findings import each_with_suggestion

            named = each_with_suggestion(extras, lambda extra: closest_option(extra, options))
            (command or self).error(f"unrecognized argument{'s' if len(extras) > 1 else ''} {named}")
        return parsed

    def _command_parser(self, name: str | None) -> argparse.ArgumentParser | None:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and name in action.choices:
                return action.choices[name]  # type: ignore[no-any-return]
        return None


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
