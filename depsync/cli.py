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
import dataclasses
import io
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from depsync import __version__, signals
from depsync.errors import DepsyncError
from depsync.redact import redact

HELP_WIDTH = 100  # at most: help stays readable on wide terminals, and README's copy is stable


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Epilogs (examples, exit codes) keep their lines; help columns are aligned."""

    def __init__(self, prog: str) -> None:
        width = min(shutil.get_terminal_size((HELP_WIDTH, 24)).columns, HELP_WIDTH) - 2
        super().__init__(prog, max_help_position=34, width=width)


_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every other input error
        match = _CHOICE.search(message)
        if match:
            given, choices = match.group(1), re.findall(r"'([^']*)'", match.group(2))
            visible = [c for c in choices if c not in _HIDDEN]
            from depsync.findings import did_you_mean

            guess = did_you_mean(given, visible)
            message = message[: match.start()] + f"invalid choice: {given!r} (choose from {', '.join(visible)})"
            if guess:
                message += f"; did you mean {guess!r}?"
        self.exit(2, f"depsync: error: {message} (see {self.prog} --help)\n")


_HIDDEN = ("merge-driver",)  # internal: git runs it (`depsync install` registers it)


def _build_arg(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def _global_options(parser: argparse.ArgumentParser, *, root: bool) -> None:
    """-q, -v, --color, --debug: before the command (root) or after it (each command; their
    defaults are SUPPRESS there so they do not undo what was given before the command)."""
    from depsync.ui import COLOR_CHOICES

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


def _project_path(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        type=Path,
        metavar="PATH",
        help="the project directory (default: the nearest one upwards from the current directory with a pyproject.toml "
        "and a uv.lock or [tool.uv], as uv finds it)",
    )


def _command(commands: Any, name: str, summary: str, description: str, epilog: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=summary, description=description, epilog=epilog, formatter_class=_Formatter)
    return parser


_CHECK_EPILOG = """\
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
  0  consistent: no error (warnings and notes allowed); with --diff: nothing to fix
  1  errors found (with --strict: warnings too); with --diff: something to fix
  2  usage, config or input error: one line on stderr (--debug shows the traceback)
"""

_RECONCILE_EPILOG = """\
examples:
  git checkout -b sync-main origin/dev && git merge origin/main   # conflicts or not
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

_LOCK_EPILOG = """\
examples:
  depsync lock                           relock in the CI image with the uv the Dockerfile pins
  depsync lock --upgrade-package nemo-run
  depsync lock --runner local            uv on this machine (projects without a CUDA image)
  depsync lock --check                   is uv.lock fresh? (uv lock --check in the image)
  depsync lock --build --target main     build the Dockerfile first and lock in the result

exit codes:
  0  uv.lock written (or, with --check, fresh)
  1  --check: uv.lock is stale
  2  error: no engine, no image, uv failed; uv.lock is left as it was
  130, 143, 129  interrupted: the container is removed, uv.lock is left as it was
"""

_DIFF_EPILOG = """\
OLD and NEW are lock files, directories (their uv.lock) or git REF:path. Registry versions are
shown plain, other sources are named (git with its short commit); forked resolutions of one
name are paired by where they come from.

examples:
  depsync diff                               HEAD:uv.lock against the work tree's uv.lock
  depsync diff origin/dev:uv.lock uv.lock --format markdown
  depsync diff path/to/project               that project's HEAD:uv.lock against its uv.lock
  depsync diff --exit-code                   exit 1 when the locks differ, like git diff

exit codes:
  0  compared (with --exit-code: the locks have the same packages)
  1  --exit-code: the locks differ
  2  usage or input error: a missing file or ref, a lock that does not parse
"""

_INSTALL_EPILOG = """\
examples:
  depsync install                   merge drivers for uv.lock and pyproject.toml
  depsync install --relock --pre-push
  depsync install --uninstall       remove what install added

exit codes:
  0  installed (or removed); running it again changes nothing
  2  error (not a git repository, an unwritable .gitattributes)
"""

_GUARD_EPILOG = """\
examples:
  depsync guard                     the sync merge at HEAD
  depsync guard --ref sync-main --dev origin/dev --main origin/main
  depsync guard --pre-push          as a pre-push hook (depsync install --pre-push sets it up)

exit codes:
  0  the invariants hold (or the push has no sync merge)
  1  violations, each with the command that restores it
  2  error
"""

_RULE_EPILOG = """\
examples:
  depsync rule docker-stale-no-install
  depsync rule --all
  depsync rule --all --format json

exit codes:
  0  shown
  2  unknown rule (the nearest one is suggested)
"""

_COMPLETION_EPILOG = """\
install it where your shell looks for completions:
  depsync completion bash > ~/.local/share/bash-completion/completions/depsync
  depsync completion zsh > "${fpath[1]}/_depsync"
  depsync completion fish > ~/.config/fish/completions/depsync.fish

exit codes:
  0  printed
"""

_ROOT_EPILOG = """\
Run `depsync COMMAND --help` for a command's options, examples and exit codes,
and `depsync rule RULE-ID` for what a check finding means.

exit codes (every command):
  0  success / consistent
  1  findings, or done but needs review
  2  usage, config or input error (one line on stderr; --debug shows the traceback)
"""


def parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog="depsync",
        description="Keep pyproject.toml, uv.lock and the CI Dockerfile consistent across a dev branch synced from main.",
        epilog=_ROOT_EPILOG,
        formatter_class=_Formatter,
    )
    root.add_argument("-V", "--version", action="version", version=f"depsync {__version__}")
    _global_options(root, root=True)
    commands = root.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=_Parser)

    check = _command(
        commands,
        "check",
        "offline consistency gate for pyproject.toml, uv.lock and the CI Dockerfiles",
        "Check that pyproject.toml, uv.lock and the CI Dockerfiles agree (fast, offline, deterministic).\n"
        "Every finding names the file, the line, the rule and a fix.",
        _CHECK_EPILOG,
    )
    _project_path(check)
    check.add_argument(
        "--format",
        "--output-format",
        dest="output_format",
        choices=("human", "json", "github", "sarif"),
        default="human",
        metavar="FORMAT",
        help="human (default), json (schema depsync.check/1), github (workflow annotations) or sarif (SARIF 2.1.0)",
    )
    check.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")
    check.add_argument("--fix", action="store_true", help="apply the mechanical fixes (`fix: yes` in `depsync rule --all`), then check again")
    check.add_argument("--diff", action="store_true", help="print what --fix would change as a unified diff and write nothing")
    check.add_argument("--ref", metavar="REF", help="read every file from this git ref instead of the work tree (no checkout)")
    check.add_argument("--deep", action="store_true", help="also run real `uv lock --check --offline` with the uv version the Dockerfile pins")
    check.add_argument("--dockerfile", action="append", metavar="FILE", help="a Dockerfile to check (repeatable; default: [tool.depsync] dockerfiles)")
    check.add_argument("--build-arg", action="append", type=_build_arg, default=[], metavar="NAME=VALUE", help="an ARG value for the --dockerfile files (repeatable)")
    check.add_argument("--owner-ref", metavar="REF", help="the ref that owns the protected paths (default: [tool.depsync] owner-ref, origin/dev)")
    check.add_argument("--lock", metavar="FILE", help="the lock file (default: [tool.depsync] lock, uv.lock)")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    _global_options(check, root=False)

    reconcile = _command(
        commands,
        "reconcile",
        "resolve a sync merge of main into dev: sources three-way, relock, summary",
        "Resolve a sync merge of main into dev: restore dev's triple and protected paths, merge\n"
        "[tool.uv.sources] three-way, keep dependency-metadata in step, relock, summarize.",
        _RECONCILE_EPILOG,
    )
    _project_path(reconcile)
    reconcile.add_argument("--dev", metavar="REF", help="the dev ref (default: $DEPSYNC_OWNER_REF, else origin/dev; never read from the tree)")
    reconcile.add_argument("--main", metavar="REF", help="the main ref (default: MERGE_HEAD during a merge, else [tool.depsync] upstream-ref)")
    reconcile.add_argument("--no-merge", action="store_true", help="plan from the refs only; ignore a merge in progress")
    reconcile.add_argument("--dry-run", action="store_true", help="print the plan and touch nothing")
    reconcile.add_argument("--no-lock", action="store_true", help="do not relock (uv.lock stays dev's)")
    reconcile.add_argument("--no-fetch", action="store_true", help="do not fetch source repositories to compare revs")
    reconcile.add_argument("--summary", type=Path, metavar="FILE", help="write the Markdown summary (the PR body) here")
    reconcile.add_argument("--plan-json", type=Path, metavar="FILE", help="write the plan as JSON (schema depsync.reconcile/1) here")
    reconcile.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", metavar="RUNNER", help="where uv relocks, as for `depsync lock`: auto (default), docker or local")
    reconcile.add_argument("--image", metavar="IMAGE", help="the CI image (default: [tool.depsync] image, else the Dockerfile's FROM)")
    reconcile.add_argument("--timeout", type=float, default=1800, metavar="SECONDS", help="how long uv lock may take (default: 1800)")
    reconcile.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    _global_options(reconcile, root=False)

    lock = _command(
        commands,
        "lock",
        "uv lock in the CI image with the uv it pins, written back atomically",
        "Regenerate uv.lock the way the CI image installs it: `uv lock` in the image (or on this\n"
        "machine with --runner local), with the uv version the Dockerfile pins. uv.lock is replaced\n"
        "only when uv succeeded; a table of what changed follows.",
        _LOCK_EPILOG,
    )
    _project_path(lock)
    lock.add_argument("--runner", choices=("auto", "docker", "local"), default="auto", metavar="RUNNER", help="where uv runs: auto (default: docker when an engine answers and an image is known), docker or local")
    lock.add_argument("--image", metavar="IMAGE", help="the CI image (default: [tool.depsync] image, else the Dockerfile's FROM)")
    lock.add_argument("--build", action="store_true", help="build the Dockerfile first and lock in the result")
    lock.add_argument("--target", metavar="STAGE", help="the Dockerfile stage --build builds (default: the last)")
    lock.add_argument("--build-arg", action="append", type=_build_arg, default=[], metavar="NAME=VALUE", help="an ARG value for --build (repeatable)")
    lock.add_argument("--upgrade", action="store_true", help="allow upgrades of every package")
    lock.add_argument("--upgrade-package", action="append", default=[], metavar="NAME", help="allow upgrades of one package (repeatable)")
    lock.add_argument("--check", action="store_true", help="only check that uv.lock is fresh (uv lock --check in the image)")
    lock.add_argument("--summary", type=Path, metavar="FILE", help="write a Markdown summary of the changes here")
    lock.add_argument("--timeout", type=float, default=1800, metavar="SECONDS", help="how long uv may take (default: 1800)")
    lock.add_argument("--cache-volume", default=None, metavar="NAME", help="the volume for uv's cache (default: one per project checkout and uid, depsync-uv-cache-UID-HASH)")
    lock.add_argument("--memory", metavar="SIZE", help="memory limit of the lock container, e.g. 8g (default: none)")
    _global_options(lock, root=False)

    diff = _command(
        commands,
        "diff",
        "what changed between two locks (files, directories or REF:path)",
        "A semantic diff of two locks: packages added, removed, upgraded, downgraded and moved to\n"
        "another source, direct dependencies apart from transitive ones.",
        _DIFF_EPILOG,
    )
    diff.add_argument("old", nargs="?", default="HEAD:uv.lock", metavar="OLD", help="the old lock (default: HEAD:uv.lock)")
    diff.add_argument("new", nargs="?", default="uv.lock", metavar="NEW", help="the new lock (default: uv.lock, the work tree's)")
    diff.add_argument("-C", "--project", dest="path", default=None, type=Path, metavar="PATH", help="the project directory (default: found upwards as for every command)")
    diff.add_argument("--format", "--output-format", dest="output_format", choices=("human", "markdown", "json"), default="human", metavar="FORMAT", help="human (default), markdown (a PR comment) or json (schema depsync.diff/2)")
    diff.add_argument("--exit-code", action="store_true", help="exit 1 when the locks differ, 0 when not (like git diff --exit-code)")
    diff.add_argument("--show-registry", action="store_true", help="label registry versions `(registry)` too")
    _global_options(diff, root=False)

    install = _command(
        commands,
        "install",
        "register the merge drivers (and the pre-push guard) in this repository",
        "Register depsync's git merge drivers for uv.lock and pyproject.toml in this repository.",
        _INSTALL_EPILOG,
    )
    _project_path(install)
    install.add_argument("--uninstall", action="store_true", help="remove what install added")
    install.add_argument("--pre-push", action="store_true", help="also install a pre-push hook running `depsync guard`")
    install.add_argument("--relock", action="store_true", help="the lock driver relocks against the merged pyproject")
    install.add_argument("--command", dest="command_line", metavar="CMD", help="how git calls depsync (default: this Python, `<python> -m depsync`, so merges work without depsync on PATH)")
    _global_options(install, root=False)

    guard = _command(
        commands,
        "guard",
        "check a sync merge commit before it is pushed",
        "Check a sync merge commit before it is pushed: protected paths and Dockerfiles are dev's,\n"
        "pyproject.toml differs only where the three-way merge says, uv.lock is fresh and not main's.",
        _GUARD_EPILOG,
    )
    _project_path(guard)
    guard.add_argument("--ref", default="HEAD", metavar="REF", help="the merge commit to check (default: HEAD)")
    guard.add_argument("--dev", metavar="REF", help="the dev parent (default: the merge's parent on the owner ref, else the first)")
    guard.add_argument("--main", metavar="REF", help="the main parent (with --dev: checks a non-merge commit too)")
    guard.add_argument("--pre-push", action="store_true", help="pre-push hook: read the pushed refs from stdin (or pre-commit's PRE_COMMIT_* variables), check each sync merge being pushed, pass every other push")
    _global_options(guard, root=False)

    rule = _command(commands, "rule", "what a check rule finds and how to fix it (like `ruff rule`)", "What a rule finds, why it matters and how to fix it.", _RULE_EPILOG)
    rule.add_argument("rule", nargs="?", metavar="RULE-ID", help="the rule, e.g. docker-stale-no-install")
    rule.add_argument("--all", action="store_true", help="every rule on one line each (with --format json: every page)")
    rule.add_argument("--format", "--output-format", dest="output_format", choices=("text", "json"), default="text", metavar="FORMAT", help="text (default) or json")
    _global_options(rule, root=False)

    completion = _command(commands, "completion", "print a completion script for bash, zsh or fish", "Print a completion script for the shell, generated from this command line.", _COMPLETION_EPILOG)
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), metavar="SHELL", help="bash, zsh or fish")
    _global_options(completion, root=False)

    # internal: git runs it with %O %A %B %P (see `depsync install`); no help= keeps it out of the list
    driver = commands.add_parser("merge-driver", description="git merge driver for uv.lock / pyproject.toml (registered by `depsync install`)", formatter_class=_Formatter)
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
    _global_options(driver, root=False)
    return root


def _options(cls: type, args: argparse.Namespace, **computed: object) -> object:
    """The command's options dataclass, fields taken from the arguments of the same name."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    return cls(**{**values, "root": args.path, **computed})


def _root(args: argparse.Namespace) -> None:
    """args.path: the project directory given, else found upwards from the current one."""
    from depsync import ui
    from depsync.root import discover

    given = args.path if args.path is not None else Path(".")
    args.path, note = discover(given) if given.is_dir() or args.path is None else (given, None)
    if note:
        ui.note(note)
    else:
        ui.detail(f"project root: {os.path.abspath(args.path)}")


def _run(args: argparse.Namespace) -> int:
    if args.command in ("check", "reconcile", "lock", "install", "guard"):
        _root(args)
    if args.command == "check":
        from depsync.commands import check
        from depsync.config import DockerfileSpec
        from depsync.workspace import CliOverrides

        dockerfiles = None
        if args.dockerfile:
            dockerfiles = tuple(DockerfileSpec(p, dict(args.build_arg)) for p in args.dockerfile)
        elif args.build_arg:
            raise DepsyncError("--build-arg applies to the Dockerfiles named with --dockerfile")
        overrides = CliOverrides(dockerfiles=dockerfiles, owner_ref=args.owner_ref, lock=args.lock)
        options = _options(check.CheckOptions, args, overrides=overrides)
        if args.fix or args.diff:
            from depsync.commands import fix

            return fix.run_check(options, fix=args.fix, diff=args.diff)  # type: ignore[arg-type]
        return check.run(options)  # type: ignore[arg-type]
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

        if args.path is None:
            args.path = Path(".")
            if args.old == diff.DEFAULT_OLD and args.new == diff.DEFAULT_NEW:
                _root(args)
        return diff.run(_options(diff.DiffOptions, args))
    if args.command == "lock":
        from depsync.commands import lock

        computed = {"build_args": dict(args.build_arg), "upgrade_packages": tuple(args.upgrade_package)}
        return lock.run(_options(lock.LockOptions, args, **computed))
    if args.command == "reconcile":
        from depsync.commands import reconcile

        return reconcile.run(_options(reconcile.ReconcileOptions, args, fetch_revs=not args.no_fetch))
    if args.command == "rule":
        from depsync.commands import rule

        return rule.run(rule.RuleOptions(args.rule, args.all, args.output_format))
    if args.command == "completion":
        from depsync.commands import completion

        return completion.run(parser(), args.shell)
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
    from depsync import ui
    from depsync.redact import RedactingStream

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (RedactingStream(_ClosedPipeGuard(s)) for s in streams)  # type: ignore[arg-type]
    previous: dict[int, Any] = {}
    saved_env = {name: os.environ.get(name) for name in ("NO_COLOR", "FORCE_COLOR")}
    try:
        cli = parser()
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
