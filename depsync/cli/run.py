"""Running a parsed command: every line it prints redacted, signals handled, errors mapped to
exit codes (0 clean, 1 findings or needs review, 2 usage, config or input error; a traceback
only with --debug).

Both ways into a command go through here: the parser (depsync/cli/parser.py) and a plain
`depsync check` that depsync/entry.py parses itself (argparse, its translations and every
command's options cost a cold check more than its rules of the lock's artifacts).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

from depsync.core.redact import redact
from depsync.errors import DepsyncError
from depsync.shell import signals


def command_module(name: str) -> Any:
    """depsync/cli/<name>.py: a command's options (register) and its run(args)."""
    module = f"depsync.cli.{name}"
    __import__(module)  # importlib's module itself costs a cold check more than this
    return sys.modules[module]


def print_traceback() -> None:
    """--debug: the traceback, with secrets masked like every other output."""
    import traceback

    print(redact(traceback.format_exc()), file=sys.stderr, end="")


class ClosedPipeGuard:
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


def with_redacted_streams(body: Callable[[], int]) -> int:
    """body(), with stdout and stderr redacting every line meanwhile (one sink for tables,
    summaries, logs and errors); --color's environment and ui's settings last for it only."""
    from depsync.core.redact import RedactingStream
    from depsync.report import ui
    from depsync.report.markdown import without_legacy_commands

    streams = sys.stdout, sys.stderr
    # everything depsync prints may be a CI log: no `##[command]` from a repository's text
    # reaches one (depsync never writes that form; its own `::error` annotations are built inert)
    sys.stdout, sys.stderr = (RedactingStream(ClosedPipeGuard(s), inert=without_legacy_commands) for s in streams)  # type: ignore[arg-type]
    saved_env = {name: os.environ.get(name) for name in ("NO_COLOR", "FORCE_COLOR")}
    try:
        return body()
    finally:
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


def run_parsed(args: Any) -> int:
    """Run the command args name (argparse's namespace, or one with the same fields), inside
    with_redacted_streams; signals follow depsync.shell.signals meanwhile."""
    from depsync.report import ui

    ui.configure(args.color, args.verbose - args.quiet)
    previous = signals.install()
    try:
        return _main(args)
    finally:
        signals.restore(previous)


def _main(args: Any) -> int:
    try:
        return command_module(args.command.replace("-", "_")).run(args)
    except signals.Interrupted as exc:
        print(f"depsync: interrupted ({exc}); files left as they were", file=sys.stderr)
        return exc.exit_code
    except DepsyncError as exc:
        if args.debug:
            print_traceback()
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
            print_traceback()
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"depsync: error: {redact(exc.strerror or str(exc))}{redact(where)}", file=sys.stderr)
        return 2
    except Exception as exc:  # a bug in depsync, not bad input: still one line, still masked
        if args.debug:
            print_traceback()
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        print(f"depsync: internal error: {redact(message)} (rerun with --debug for the traceback, and please report it)", file=sys.stderr)
        return 2
