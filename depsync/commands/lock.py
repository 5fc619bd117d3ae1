"""`depsync lock`: `uv lock` in the CI image with the image's uv version, written back atomically.

The runner works on a copy; the new uv.lock replaces the old one only when uv
succeeded and the result parses. Timeout, Ctrl-C and SIGTERM leave uv.lock untouched.
Which runner, image and uv: depsync/runners/choose.py.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from depsync.core.dockerfile_discovery import refuse_unparsed
from depsync.core.model.pyproject import Pyproject
from depsync.errors import DepsyncError
from depsync.report import ui
from depsync.shell import faults
from depsync.shell.ci_dockerfiles import ci_dockerfiles
from depsync.shell.fileio import (
    Snapshot,
    confined,
    output_file,
    write_atomic,
    write_report,
)
from depsync.shell.runners.choose import choose_runner
from depsync.shell.runners.protocol import LockRun
from depsync.shell.runners.request import LockRequest
from depsync.shell.uv import error_summary
from depsync.shell.workspace import FileReader, config_of


def run(options: LockRequest) -> int:
    from depsync.report.lock import LockProgress, print_changes, to_markdown

    root = options.root
    if options.summary:
        output_file(options.summary, "--summary")  # a bad one fails now, not after uv.lock was replaced
    reader = FileReader(root)
    pyproject = Pyproject.from_text(reader.read_text("pyproject.toml") or "")  # required: a missing one is an error
    config = config_of(reader)
    ci = ci_dockerfiles(reader, config, options.build_args)  # the set `check` checks: configured, else discovered
    refuse_unparsed(ci)
    dockerfile = ci.for_lock()
    dockerfile_path = dockerfile.path if dockerfile else None
    lock_path = confined(root, config.lock, "the lock path")
    old_bytes = lock_path.read_bytes() if lock_path.is_file() else None
    if old_bytes is not None:
        refuse_missing_members(root, old_bytes, config.lock)
    args = (["--upgrade"] if options.upgrade else []) + [a for p in options.upgrade_packages for a in ("--upgrade-package", p)] + (["--check"] if options.check else [])

    started = time.monotonic()
    with LockProgress(sys.stderr) as progress:
        runner, why = choose_runner(options, config, pyproject, dockerfile, dockerfile_path, on_line=progress.line, on_phase=progress.phase, say=progress.say)
        # which Dockerfile gave the uv version and image, and why (after the choice: an error stays one line)
        if dockerfile is not None:
            progress.say(ci.describe_lock())
        else:
            ui.detail(ci.describe_lock())
        progress.say(f"uv lock: starting ({why})")
        result: LockRun = runner.lock(root, args, options.timeout, progress.line, on_phase=progress.phase)
    elapsed = time.monotonic() - started
    for note in result.notes:
        ui.note(note)
    ui.note(f"uv {result.uv_version} via {why}, {elapsed:.1f}s")

    if options.check:
        if result.returncode == 0:
            print("uv.lock is fresh", file=sys.stderr)
            return 0
        if result.returncode == 1:
            print("uv.lock needs to be updated: run `depsync lock`", file=sys.stderr)
            return 1
    if result.returncode != 0 or result.new_lock is None:
        raise DepsyncError(f"uv {result.uv_version} lock failed; uv.lock is unchanged: {error_summary(result.output, 800)}")
    if result.new_lock == old_bytes:  # nothing to parse, compare or write (a 1.5 MB lock parses in ~20-150 ms)
        if options.summary:
            write_report(options.summary, to_markdown([], result.uv_version, why, against_image(root, runner, dockerfile_path)))
        print_changes([], sys.stdout, written=False)
        return 0
    from depsync.core.lockdiff import diff_locks
    from depsync.core.model.lock import Lock

    new_lock = Lock.from_text(result.new_lock.decode(), config.lock)  # only a lock that parses replaces the old one
    empty = Lock.from_text("version = 1\n", config.lock)
    changes = diff_locks(Lock.from_text(old_bytes.decode(), config.lock) if old_bytes else empty, new_lock)
    snapshot = Snapshot(root, [config.lock])
    try:
        faults.point("lock:after-uv")
        write_atomic(lock_path, result.new_lock)
        if options.summary:
            write_report(options.summary, to_markdown(changes, result.uv_version, why, against_image(root, runner, dockerfile_path)))
    except BaseException:
        snapshot.restore()  # all or nothing: no new lock without the summary the caller asked for
        raise
    print_changes(changes, sys.stdout, written=True)
    return 0


def against_image(root: Path, runner: object, dockerfile_path: str | None) -> str:
    """The new lock held against the image the docker runner locked in (the image rules of
    `check --image`), for `--summary` only (a plain relock stays as fast as before): said on
    stderr, and returned as the summary's Markdown section. The lock is written already;
    nothing here fails the run (a note says what could not be read)."""
    from depsync.report.lock import image_lines, image_markdown
    from depsync.shell.image_hold import held_against_image

    held = held_against_image(root, runner, dockerfile_path)
    if held is None:
        return ""
    described, findings = held
    for line in image_lines(described, findings):
        ui.note(line)
    return image_markdown(described, findings)


def prune_caches() -> int:
    """`depsync lock --prune-caches`: only the cache volumes of checkouts that no longer exist
    (each docker-runner lock removes a few of them too), then exit."""
    from depsync.shell.runners.volumes import prune_now

    ui.note(prune_now())
    return 0


def refuse_missing_members(root: Path, old_lock: bytes, lock_name: str) -> None:
    """A member the lock records whose directory is empty (a git submodule not checked out): uv
    would drop it from the lock or fail on it, so no relock runs."""
    import os

    from depsync.core.findings import listed
    from depsync.core.model.lock import Lock
    from depsync.core.rules.missing_members import HINT, recorded_member_dirs

    try:
        members = recorded_member_dirs(Lock.from_text(old_lock.decode(), lock_name))
    except (DepsyncError, UnicodeDecodeError):
        return  # a lock that does not parse is uv's to replace; check reports it
    missing = sorted(path for path in members.values()
                     if not os.path.isabs(path) and ".." not in path.split("/") and not os.path.isfile(os.path.join(root, path, "pyproject.toml")))
    if missing:
        raise DepsyncError(f"member directory missing: {listed(missing)} ({HINT}); relocking now would drop it, so uv.lock is unchanged", lock_name)


__all__ = ["LockRequest", "prune_caches", "run"]
