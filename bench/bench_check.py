"""Time `depsync check` on the Megatron-LM dev triple against `uv lock --check --offline`.

Both run as subprocesses on the same copy of the files, in this process, several times;
the medians and their ratio are printed. uv is timed warm (its cache knows the
interpreter) and cold (an empty UV_CACHE_DIR each run), because a CI job starts cold.

    python bench/bench_check.py [--runs 9]
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
EXAMPLE = REPO / "fixtures" / "megatron-dev"


def timed(argv: list[str], cwd: Path, env: dict[str, str] | None = None, *, expect: int = 0) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != expect:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    return elapsed


def median(samples: list[float]) -> float:
    return statistics.median(samples)


def in_process_phases(project: Path) -> dict[str, float]:
    """Where depsync's own time goes (no interpreter start-up, imports already done)."""
    from depsync.rules import run_rules
    from depsync.workspace import load_inputs

    start = time.perf_counter()
    inputs = load_inputs(project)
    loaded = time.perf_counter()
    run_rules(inputs)
    done = time.perf_counter()
    return {"load triple": loaded - start, "rules": done - loaded}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    uv = shutil.which("uv")
    if not uv:
        raise SystemExit("uv not on PATH (pip install uv)")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "megatron-dev"
        shutil.copytree(EXAMPLE, project)
        depsync = [sys.executable, "-m", "depsync", "check", "--format", "json"]
        uv_check = [uv, "lock", "--check", "--offline"]
        env = dict(os.environ, UV_PYTHON=os.path.realpath(sys.executable))
        timed(uv_check, project, env)  # warm uv's interpreter cache
        timed(depsync, project)
        depsync_times, uv_times, uv_cold_times = [], [], []
        for run in range(args.runs):
            depsync_times.append(timed(depsync, project))
            uv_times.append(timed(uv_check, project, env))
            cold = dict(env, UV_CACHE_DIR=str(Path(tmp) / f"cold-cache-{run}"))
            uv_cold_times.append(timed(uv_check, project, cold))
        phases = [in_process_phases(project) for _ in range(args.runs)]

    d, u, c = median(depsync_times), median(uv_times), median(uv_cold_times)
    print(f"Megatron-LM dev triple (lock {(EXAMPLE / 'uv.lock').stat().st_size / 1e6:.1f} MB), median of {args.runs} runs")
    print(f"  depsync check (subprocess)          {d * 1000:7.1f} ms")
    print(f"  uv lock --check --offline (warm)    {u * 1000:7.1f} ms   ratio depsync/uv = {d / u:.2f}")
    print(f"  uv lock --check --offline (cold)    {c * 1000:7.1f} ms   ratio depsync/uv = {d / c:.2f}")
    for name in phases[0]:
        print(f"  depsync in-process: {name:<15} {median([p[name] for p in phases]) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
