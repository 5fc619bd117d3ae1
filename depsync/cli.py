"""Command line: parse arguments, call a command, turn errors into exit code 2.

Exit codes: 0 clean, 1 findings (or a reconcile that needs review), 2 usage, config
or input error. A traceback is shown only with --debug.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import sys
from pathlib import Path
from typing import Any, TextIO

from depsync import __version__, signals
from depsync.config import DockerfileSpec
from depsync.errors import DepsyncError
from depsync.redact import redact


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        self.exit(2, f"depsync: error: {message} (see --help)\n")


def _build_arg(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="depsync", description="Keep pyproject.toml, uv.lock and the CI Dockerfile consistent.")
    root.add_argument("--version", action="version", version=f"depsync {__version__}")
    root.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = root.add_subparsers(dest="command", required=True, parser_class=_Parser)

    check = commands.add_parser("check", help="offline consistency gate: Dockerfile, lock freshness, pins, protected files")
    check.add_argument("path", nargs="?", default=".", type=Path, help="project root (default: .)")
    check.add_argument("--ref", help="read the triple from this git ref instead of the work tree (no checkout)")
    check.add_argument("--format", dest="output_format", choices=("human", "json", "github"), default="human")
    check.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    check.add_argument("--deep", action="store_true", help="also run real `uv lock --check` with the uv version the Dockerfile pins")
    check.add_argument("--dockerfile", action="append", metavar="PATH", help="Dockerfile to check (repeatable; overrides config)")
    check.add_argument("--build-arg", action="append", type=_build_arg, default=[], metavar="NAME=VALUE", help="ARG value for the Dockerfiles given with --dockerfile")
    check.add_argument("--owner-ref", help="ref that owns the protected paths (default from config: origin/dev)")
    check.add_argument("--lock", help="path of uv.lock (default from config)")
    check.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    reconcile = commands.add_parser("reconcile", help="after `git merge origin/main` on a branch from dev: keep dev's triple, merge sources, relock")
    reconcile.add_argument("path", nargs="?", default=".", type=Path, help="project root inside the repository (default: .)")
    reconcile.add_argument("--dev", help="dev ref (default from config: origin/dev)")
    reconcile.add_argument("--main", help="main ref (default: MERGE_HEAD during a merge, else config upstream-ref)")
    reconcile.add_argument("--no-merge", action="store_true", help="plan from the refs only; ignore a merge in progress")
    reconcile.add_argument("--dry-run", action="store_true", help="print the plan and touch nothing")
    reconcile.add_argument("--no-lock", action="store_true", help="do not relock (uv.lock stays dev's)")
    reconcile.add_argument("--no-fetch", action="store_true", help="do not fetch source repositories to compare revs")
    reconcile.add_argument("--summary", type=Path, help="write the Markdown summary (PR body) here")
    reconcile.add_argument("--plan-json", type=Path, help="write the plan as JSON (schema depsync.reconcile/1) here")
    reconcile.add_argument("--timeout", type=float, default=1800, help="seconds uv lock may take (default 1800)")
    reconcile.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", help="where uv relocks (as for `depsync lock`)")
    reconcile.add_argument("--image", help="CI image for the docker runner (default: config or the Dockerfile's FROM)")
    reconcile.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    reconcile.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    lock = commands.add_parser("lock", help="uv lock inside the CI image with the image's uv version, written back atomically")
    lock.add_argument("path", nargs="?", default=".", type=Path, help="project root (default: .)")
    lock.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", help="where uv runs (auto: docker when an engine answers)")
    lock.add_argument("--image", help="CI image (default: [tool.depsync] image, else the Dockerfile's FROM)")
    lock.add_argument("--build", action="store_true", help="build the Dockerfile first and lock in the result")
    lock.add_argument("--target", help="Dockerfile target stage for --build")
    lock.add_argument("--build-arg", action="append", type=_build_arg, default=[], metavar="NAME=VALUE")
    lock.add_argument("--upgrade", action="store_true", help="allow upgrades of all packages")
    lock.add_argument("--upgrade-package", action="append", default=[], metavar="NAME", help="allow upgrades of one package (repeatable)")
    lock.add_argument("--check", action="store_true", help="only check that uv.lock is fresh (uv lock --check in the image)")
    lock.add_argument("--timeout", type=float, default=1800, help="seconds uv may take (default 1800)")
    lock.add_argument("--summary", type=Path, help="write a Markdown summary of the changes here")
    lock.add_argument("--cache-volume", default="depsync-uv-cache", help="named volume for uv's cache (default depsync-uv-cache)")
    lock.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    lock.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    diff = commands.add_parser("diff", help="what changed between two locks (files or REF:path)")
    diff.add_argument("old", nargs="?", default="HEAD:uv.lock", help="old lock: a path or REF:path (default HEAD:uv.lock)")
    diff.add_argument("new", nargs="?", default="uv.lock", help="new lock: a path or REF:path (default: the work tree's uv.lock)")
    diff.add_argument("-C", dest="path", default=".", type=Path, help="repository / project root (default: .)")
    diff.add_argument("--format", dest="output_format", choices=("human", "markdown", "json"), default="human")
    diff.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    driver = commands.add_parser("merge-driver", help="git merge driver for uv.lock / pyproject.toml (see `depsync install`)")
    driver.add_argument("kind", choices=("lock", "pyproject"))
    driver.add_argument("base", type=Path, help="%%O")
    driver.add_argument("ours", type=Path, help="%%A (the result is written here)")
    driver.add_argument("theirs", type=Path, help="%%B")
    driver.add_argument("path", help="%%P")
    driver.add_argument("--relock", action="store_true", help="lock driver: relock against the merged pyproject (local runner)")
    # git >= 2.44 fills %S/%X/%Y with the conflict labels; older git passes them unexpanded, then
    # the driver names the sides itself (branch of HEAD, the ref being merged)
    driver.add_argument("--base-label", default="", help="%%S: label of the merge base")
    driver.add_argument("--ours-label", default="", help="%%X: label of our side")
    driver.add_argument("--theirs-label", default="", help="%%Y: label of their side")
    driver.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    install = commands.add_parser("install", help="register the merge drivers (.gitattributes, git config) and optionally the pre-push guard")
    install.add_argument("path", nargs="?", default=".", type=Path)
    install.add_argument("--uninstall", action="store_true", help="remove what install added")
    install.add_argument("--pre-push", action="store_true", help="also install a pre-push hook running `depsync guard`")
    install.add_argument("--relock", action="store_true", help="the lock driver relocks against the merged pyproject")
    install.add_argument("--command", dest="command_line", help="how git calls depsync (default: this Python, `<python> -m depsync`, so merges work without depsync on PATH)")
    install.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    guard = commands.add_parser("guard", help="pre-push invariants of a sync merge commit")
    guard.add_argument("path", nargs="?", default=".", type=Path)
    guard.add_argument("--ref", default="HEAD", help="the merge commit to check (default HEAD)")
    guard.add_argument("--dev", help="dev parent (default: the merge's parent on the owner ref, else the first)")
    guard.add_argument("--main", help="main parent (with --dev: checks a non-merge commit too)")
    guard.add_argument("--pre-push", action="store_true", help="pre-push hook: read the pushed refs from stdin (or pre-commit's PRE_COMMIT_* variables), check each sync merge being pushed, pass every other push")
    guard.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return root


def _options(cls: type, args: argparse.Namespace, **computed: object) -> object:
    """The command's options dataclass, fields taken from the arguments of the same name."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    return cls(**{**values, "root": args.path, **computed})


def _run(args: argparse.Namespace) -> int:
    if args.command == "check":
        from depsync.commands import check
        from depsync.workspace import CliOverrides

        dockerfiles = None
        if args.dockerfile:
            dockerfiles = tuple(DockerfileSpec(p, dict(args.build_arg)) for p in args.dockerfile)
        elif args.build_arg:
            raise DepsyncError("--build-arg applies to the Dockerfiles named with --dockerfile")
        overrides = CliOverrides(dockerfiles=dockerfiles, owner_ref=args.owner_ref, lock=args.lock)
        return check.run(_options(check.CheckOptions, args, overrides=overrides))
    if args.command == "merge-driver":
        from depsync.commands import merge_driver

        labels = merge_driver.Labels(args.base_label, args.ours_label, args.theirs_label)
        return merge_driver.run(merge_driver.DriverOptions(args.kind, args.base, args.ours, args.theirs, args.path, args.relock, labels))
    if args.command == "install":
        from depsync.commands import install

        return install.run(_options(install.InstallOptions, args, command=args.command_line))
    if args.command == "guard":
        from depsync.commands import guard

        return guard.run(_options(guard.GuardOptions, args))
    if args.command == "diff":
        from depsync.commands import diff

        return diff.run(_options(diff.DiffOptions, args))
    if args.command == "lock":
        from depsync.commands import lock

        computed = {"build_args": dict(args.build_arg), "upgrade_packages": tuple(args.upgrade_package)}
        return lock.run(_options(lock.LockOptions, args, **computed))
    if args.command == "reconcile":
        from depsync.commands import reconcile

        return reconcile.run(_options(reconcile.ReconcileOptions, args, fetch_revs=not args.no_fetch))
    raise DepsyncError(f"unknown command {args.command}")


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
    (one sink for tables, summaries, logs and errors), and signals follow depsync.signals."""
    from depsync.redact import RedactingStream

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (RedactingStream(_ClosedPipeGuard(s)) for s in streams)  # type: ignore[arg-type]
    previous: dict[int, Any] = {}
    try:
        args = parser().parse_args(argv)  # inside: `depsync --help | head -1` is quiet too
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


def _main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except signals.Interrupted as exc:
        print(f"depsync: interrupted ({exc}); files left as they were", file=sys.stderr)
        return exc.exit_code
    except DepsyncError as exc:
        if args.debug:
            _print_traceback()
        message = " ".join(str(exc).split())  # always one line
        print(f"depsync: error: {redact(message)}", file=sys.stderr)
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
