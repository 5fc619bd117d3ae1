"""Time `depsync reconcile` on the real Megatron-LM merge against a cold `depsync check`.

The merge is built as tests/test_reconcile.py builds it: a git repository whose base, dev
and main commits carry the real pyproject.toml and uv.lock of the three refs
(../shared/fixtures/megatron-lm), a sync branch from dev, and `git merge main` (which
conflicts in both files, as in the real project). Each run restores that merge state
(outside the timing), then runs `depsync reconcile --dev dev --no-lock --no-fetch` in a
fresh interpreter. `depsync check` runs in a fresh interpreter too, on dev's clean
checkout of the same repository. Medians of --runs runs and their ratio are printed,
with the git processes each command starts.

    python bench/bench_reconcile.py [--runs 9] [--replay 200]

--replay N also runs the replay harness (bench/replay.py) on N generated scenarios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEPSYNC_SHARED", REPO.parent / "shared"))
MEGATRON = SHARED / "fixtures" / "megatron-lm"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}


def git(repo: Path, *args: str, check: bool = True) -> str:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=dict(os.environ, **GIT_ENV))
    if check and result.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def megatron_merge(directory: Path) -> Path:
    """base -> dev and base -> main with the real Megatron files, a sync branch from dev."""
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import (
        megatron_history,  # the same history tests/test_reconcile.py builds
    )

    return megatron_history(directory / "megatron")


def start_merge(repo: Path) -> None:
    git(repo, "merge", "--abort", check=False)
    git(repo, "reset", "-q", "--hard", "dev")
    git(repo, "merge", "-q", "main", check=False)  # conflicts in pyproject.toml and uv.lock


def clean_dev(repo: Path) -> None:
    git(repo, "merge", "--abort", check=False)
    git(repo, "reset", "-q", "--hard", "dev")


def counting_git(directory: Path) -> tuple[Path, Path]:
    """A `git` first on PATH that logs each call, then runs the real one."""
    real = shutil.which("git")
    assert real is not None
    log = directory / "git-calls.log"
    shim = directory / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return shim.parent, log


def timed(argv: list[str], cwd: Path, env: dict[str, str], expect: tuple[int, ...]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode not in expect:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--replay", type=int, default=0, metavar="N", help="also replay N generated scenarios (bench/replay.py)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not MEGATRON.exists():
        raise SystemExit(f"real Megatron-LM data not found at {MEGATRON}")
    with tempfile.TemporaryDirectory() as tmp:
        repo = megatron_merge(Path(tmp))
        bin_dir, log = counting_git(Path(tmp))
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        counted = dict(env, PATH=f"{bin_dir}{os.pathsep}{env['PATH']}")
        reconcile = [sys.executable, "-m", "depsync", "reconcile", "--dev", "dev", "--no-lock", "--no-fetch"]
        check = [sys.executable, "-m", "depsync", "check", "--format", "json"]
        # one counted run of each, which also warms the OS caches
        start_merge(repo)
        log.write_text("")
        timed(reconcile, repo, counted, (0, 1))
        reconcile_calls = log.read_text().splitlines()
        clean_dev(repo)
        log.write_text("")
        timed(check, repo, counted, (0, 1))
        check_calls = log.read_text().splitlines()
        reconcile_times, check_times = [], []
        for _ in range(args.runs):
            start_merge(repo)
            reconcile_times.append(timed(reconcile, repo, env, (0, 1)))
            clean_dev(repo)
            check_times.append(timed(check, repo, env, (0, 1)))
    r, c = statistics.median(reconcile_times), statistics.median(check_times)
    bytecode = "off (PYTHONDONTWRITEBYTECODE: every run compiles depsync)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
    print(f"Megatron-LM merge (dev d48bd6be0a, main d98e8a64dd; 1.5 MB lock), median of {args.runs} runs, bytecode cache {bytecode}")
    print(f"  depsync reconcile --no-lock --no-fetch  {r * 1000:7.1f} ms   git processes: {len(reconcile_calls)}")
    print(f"  depsync check (cold, dev's checkout)     {c * 1000:7.1f} ms   git processes: {len(check_calls)}")
    print(f"  ratio reconcile/check = {r / c:.2f} (target <= 2)")
    for call in reconcile_calls:
        print(f"    git {call[:110]}")
    if args.replay:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import replay

        replay.main(["--scenarios", str(args.replay), "--seed", str(args.seed)])


if __name__ == "__main__":
    main()
