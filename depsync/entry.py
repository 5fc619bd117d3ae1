"""The `depsync` command's entry point: replay a cached `depsync check` before importing the CLI.

Importing the CLI (argparse, dataclasses, pathlib, the models, the rules, packaging) costs
more than answering a repeated check from the result cache (depsync/cache.py). So a
`depsync check` whose command line is plain (the options below, spelled out, no
abbreviation) is looked up here first, with nothing but the interpreter's own modules
imported; anything else, a miss, or a terminal that wants colour goes to depsync.cli.parser as
before. The key is built exactly as depsync.commands.check.request() builds it from the
parsed options (tests/test_check_cache.py holds the two to each other). When the CLI would
check another directory than the one named (it looks upwards for the project root), the
key names a directory no check ran on: a miss, and the CLI takes over.

Wiring: `python -m depsync` and the `depsync` script call main() here.
"""

from __future__ import annotations

import os
import sys

_FORMATS = ("human", "json", "github", "gitlab")
_VALUED = ("--ref", "--format", "--dockerfile", "--build-arg", "--owner-ref", "--lock")


def display_path(raw: str) -> str | None:
    """str(pathlib.Path(raw)) without importing pathlib; None for a form not handled here."""
    if raw.startswith("//") and not raw.startswith("///"):
        return None  # POSIX keeps exactly two leading slashes: left to pathlib
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    return ("/" if raw.startswith("/") else "") + "/".join(parts) or "."


def _plain_check(args: list[str]) -> tuple[str | None, dict[str, list[str]], dict[str, bool]] | None:
    """(PATH, the valued options' values in order, the flags) of `depsync check ARGS` in the
    plain form read here; None for anything else."""
    path: str | None = None
    values: dict[str, list[str]] = {name: [] for name in _VALUED}
    flags = {"--strict": False, "--exit-zero": False}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in flags:
            flags[arg] = True
            i += 1
            continue
        name, sep, value = arg.partition("=")
        name = "--format" if name == "--output-format" else name
        if name in _VALUED:
            if not sep:
                if i + 1 >= len(args) or args[i + 1].startswith("-"):
                    return None
                value = args[i + 1]
                i += 1
            values[name].append(value)
            i += 1
            continue
        if arg.startswith("-") or path is not None:
            return None  # --deep, --debug, --no-cache, -h, an abbreviation, a second path: the CLI's business
        path = arg
        i += 1
    return path, values, flags


def check_request(args: list[str], environ: dict[str, str] | None = None) -> tuple[tuple, str, str, bool, bool] | None:  # type: ignore[type-arg]
    """(cache request, output format, project as printed, --strict, --exit-zero) of `depsync
    check ARGS`, or None when the arguments need the real parser (or are an error it should
    report). The format defaults to $DEPSYNC_OUTPUT_FORMAT, as in depsync.cli.check."""
    plain = _plain_check(args)
    if plain is None:
        return None
    path, values, flags = plain
    output_format = values["--format"][-1] if values["--format"] else ((os.environ if environ is None else environ).get("DEPSYNC_OUTPUT_FORMAT") or "human")
    if output_format not in _FORMATS:
        return None
    build_args: dict[str, str] = {}
    for pair in values["--build-arg"]:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            return None
        build_args[key] = value
    if build_args and not values["--dockerfile"]:
        return None
    shown = display_path(path if path is not None else ".")
    if shown is None:
        return None
    dockerfiles = tuple((p, tuple(sorted(build_args.items()))) for p in values["--dockerfile"]) if values["--dockerfile"] else None
    ref = values["--ref"][-1] if values["--ref"] else None
    owner_ref = values["--owner-ref"][-1] if values["--owner-ref"] else None
    lock = values["--lock"][-1] if values["--lock"] else None
    request = (os.path.abspath(shown), ref, dockerfiles, owner_ref, lock, None)
    project = shown + (f" @ {ref}" if ref else "")
    return request, output_format, project, flags["--strict"], flags["--exit-zero"]


def check_namespace(args: list[str]) -> object | None:
    """What argparse makes of `depsync check ARGS` (depsync/cli/parser.py), for the arguments
    check_request reads; None for the others. A miss of the cache runs the check with it, so a
    plain check imports neither argparse nor the other commands (tests/shell/test_check_cache.py
    holds it to the parser's namespace)."""
    if check_request(args) is None:
        return None
    plain = _plain_check(args)
    assert plain is not None
    path, values, flags = plain
    from pathlib import Path
    from types import SimpleNamespace

    def last(name: str) -> str | None:
        return values[name][-1] if values[name] else None

    return SimpleNamespace(
        quiet=0, verbose=0, color="auto", debug=False, command="check",
        path=Path(path) if path is not None else None, output_format=last("--format"),
        strict=flags["--strict"], select=None, ignore=None, exit_zero=flags["--exit-zero"], fix=False, diff=False,
        ref=last("--ref"), deep=False, image=None, static=False, dockerfile=values["--dockerfile"] or None,
        build_arg=[tuple(pair.split("=", 1)) for pair in values["--build-arg"]],
        owner_ref=last("--owner-ref"), lock=last("--lock"), no_cache=False,
    )  # fmt: skip


def _replay(args: list[str]) -> int | None:
    parsed = check_request(args)
    if parsed is None:
        return None
    request, output_format, project, strict, exit_zero = parsed
    code = _replay_request(request, output_format, project, strict)
    return 0 if exit_zero and code is not None else code


def _replay_request(request: tuple, output_format: str, project: str, strict: bool) -> int | None:  # type: ignore[type-arg]
    try:
        if output_format == "human" and (sys.stdout.isatty() or "FORCE_COLOR" in os.environ):
            return None  # colour: rich renders it, after the CLI's own lookup
    except (AttributeError, ValueError):  # no usable stdout: the CLI says what to say
        return None
    from depsync.shell import cache

    try:
        return cache.replay(request, output_format, project, strict)
    except BrokenPipeError:  # `depsync check | head -1`: the reader left; the status stands
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return cache.replay_status(request, strict)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    namespace = None
    if args[:1] == ["check"]:
        import gc

        # a check keeps what it builds (~100,000 objects of a large lock) until it exits, and
        # makes little garbage: collections while the modules load and the lock is read found
        # nothing worth their 4 ms (bench/bench_check.py); a rarer first generation still bounds it
        gc.set_threshold(50_000, 20, 20)
        replayed = _replay(args[1:])
        if replayed is not None:
            return replayed
        namespace = check_namespace(args[1:])
    if namespace is not None:
        from depsync.cli.run import run_parsed, with_redacted_streams

        code = with_redacted_streams(lambda: run_parsed(namespace))
    else:
        from depsync.cli.parser import main as cli_main

        code = cli_main(argv)
    if argv is None:  # the `depsync` script or `python -m depsync`: the process ends here
        end_process(code)
    return code


def end_process(code: int) -> None:
    """Exit without tearing the interpreter down: freeing what a run built (a 1.5 MB lock is
    ~100,000 objects) and the final collection cost more than a cold check's rules
    (bench/bench_real.py). The streams are flushed and the exit handlers run first (git's
    cat-file session is closed), so nothing written is lost; when a flush fails (a closed pipe),
    the ordinary exit reports it as it always did."""
    import atexit

    if sys.getprofile() is not None or sys.gettrace() is not None:
        return  # a profiler or a debugger writes its results after this returns
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()  # type: ignore[attr-defined]  # the handlers, as an ordinary exit runs them
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
