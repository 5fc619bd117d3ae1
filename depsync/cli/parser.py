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
import io
import os
import sys
from typing import Any, TextIO

from depsync import __version__
from depsync.cli.common import Formatter, Parser, global_options
from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.shell import signals

_ROOT_EPILOG = """\
Run `depsync COMMAND --help` for a command's options, examples and exit codes,
and `depsync rule RULE-ID` for what a check finding means.

exit codes (every command):
  0  success / consistent
  1  findings, or done but needs review
  2  usage, config or input error (one line on stderr; --debug shows the traceback)
"""


COMMANDS = ("check", "reconcile", "lock", "diff", "install", "guard", "rule", "completion", "merge_driver")


def _command_module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"depsync.cli.{name}")


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
        _command_module(name).register(commands)
    return root


def _run(args: argparse.Namespace) -> int:
    return _command_module(args.command.replace("-", "_")).run(args)


def _print_traceback() -> None:
    """--debug: the traceback, with secrets masked like every other output."""
    import traceback

    print(redact(traceback.format_exc()), file=sys.stderr, end="")


class _ClosedPipeGuard:
    """A text stream that goes quiet once its reader has gone (`depsync check | head -1`).

    The first BrokenPipeError points the file descriptor at /dev/null, so the interpreter's
    final flush of sys.stdout cannot fail either, and later writes are dropped: the command
    runs to its end and exits with the status it would have had (0 for a clean check), which
    is what `bash -o pipefail` (GitHub Actions' default shell) looks at."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def _silence(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            pass  # no file descriptor (a test's StringIO): dropping the writes is enough

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def __getattr__(self, name: str) -> Any:
        if name == "_stream":  # copy/pickle before __init__
            raise AttributeError(name)
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    """Parse, run, map errors to exit codes; stdout and stderr redact every line meanwhile
    (one sink for tables, summaries, logs and errors), and signals follow depsync.shell.signals."""
    from depsync.core.redact import RedactingStream
    from depsync.report import ui
    from depsync.report.markdown import without_legacy_commands

    streams = sys.stdout, sys.stderr
    # everything depsync prints may be a CI log: no `##[command]` from a repository's text
    # reaches one (depsync never writes that form; its own `::error` annotations are built inert)
    sys.stdout, sys.stderr = (RedactingStream(_ClosedPipeGuard(s), inert=without_legacy_commands) for s in streams)  # type: ignore[arg-type]
    previous: dict[int, Any] = {}
    saved_env = {name: os.environ.get(name) for name in ("NO_COLOR", "FORCE_COLOR")}
    try:
        cli = parser(sys.argv[1:] if argv is None else argv)
        args = cli.parse_args(argv)  # inside: `depsync --help | head -1` is quiet too
        if args.command is None:  # like uv: the help, on stderr, and a usage error
            cli.print_help(sys.stderr)
            return 2
        ui.configure(args.color, args.verbose - args.quiet)
        previous = signals.install()
        return _main(args)
    finally:
        signals.restore(previous)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except ValueError:  # closed under us
                pass
        sys.stdout, sys.stderr = streams
        for name, value in saved_env.items():  # --color set them for this run only
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        ui.configure()


def _main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except signals.Interrupted as exc:
        print(f"depsync: interrupted ({exc}); files left as they were", file=sys.stderr)
        return exc.exit_code
    except DepsyncError as exc:
        if args.debug:
            _print_traceback()
        message = " ".join(str(exc).split())  # always one line: what a log or `head -1` keeps
        print(f"depsync: error: {redact(message)}", file=sys.stderr)
        if exc.frame:  # then where it is, as uv and ruff show it (built without control characters)
            print(redact(exc.frame), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("depsync: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the disk, not depsync: full, read-only, gone
        if args.debug:
            _print_traceback()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"depsync: error: {redact(exc.strerror or str(exc))}{redact(where)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug in depsync, not bad input: still one line, still masked
        if args.debug:
            _print_traceback()
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        print(f"depsync: internal error: {redact(message)} (rerun with --debug for the traceback, and please report it)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
