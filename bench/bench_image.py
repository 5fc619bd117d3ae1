"""Time `depsync check --image` (first read of the image, and a repeat from the image cache) against
a plain `docker run --rm IMAGE true`.

Paired, in one run: each round runs the baseline and both depsync runs (alternating the order), on
the real Megatron-LM dev triple (fixtures/megatron-dev) and an NGC-like image built FROM the test
image with ~300 dist-info directories in its site-packages (the size of an NGC PyTorch image's).
"first" has an empty depsync cache (the image's python runs in a container); "cached" reuses
the cache of the previous run (the engine is asked for the image id only). The plain check
(`depsync check --no-cache`, no image) is timed too: what --image adds is the difference. Reported:
medians, ratios against the baseline, the median of per-round ratios. Needs the engine and the
test image of containers/setup-engine.sh.

    python bench/bench_image.py [--runs 9] [--dists 300]
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from imagebuild import build, dist_files, remove  # noqa: E402

BASE = os.environ.get("DEPSYNC_TEST_IMAGE", "depsync-test:bookworm")
IMAGE = "depsync-bench:ngc-like"


def timed(argv: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode not in ok:
        raise SystemExit(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr[-600:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--dists", type=int, default=300)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "depsync"), quiet=1)
    shipped = {"torch": "2.8.0a0+5228986c39.nv25.06", "transformer-engine": "2.4.0+3cd6870", "numpy": "1.26.4"}
    shipped.update({f"pkg{i:03d}": "1.0" for i in range(args.dists - len(shipped))})
    build(IMAGE, BASE, dist_files(shipped), env={"CUDA_VERSION": "12.9.1.010"})
    try:
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "megatron"
            shutil.copytree(ROOT / "fixtures" / "megatron-dev", project)
            base_env = {**os.environ, "NO_COLOR": "1"}
            warm_env = {**base_env, "XDG_CACHE_HOME": f"{tmp}/warm"}
            check = [sys.executable, "-m", "depsync", "check", str(project)]
            with_image = [*check, "--image", IMAGE]
            baseline = ["docker", "run", "--rm", IMAGE, "true"]
            timed(baseline, base_env)
            timed(with_image, warm_env, (0, 1))  # fills the warm cache
            rows: dict[str, list[float]] = {"baseline": [], "first": [], "cached": [], "plain check": []}
            for round_ in range(args.runs):
                cold_env = {**base_env, "XDG_CACHE_HOME": f"{tmp}/cold{round_}"}
                steps = [
                    ("baseline", baseline, base_env),
                    ("first", with_image, cold_env),
                    ("cached", with_image, warm_env),
                    ("plain check", [*check, "--no-cache"], warm_env),
                ]
                for label, argv, env in steps if round_ % 2 == 0 else reversed(steps):
                    rows[label].append(timed(argv, env, (0, 1)))
    finally:
        remove(IMAGE)
    base = rows["baseline"]
    print(f"depsync check --image on the Megatron-LM dev triple, an image with {args.dists} distributions, {args.runs} paired rounds, load {os.getloadavg()[0]:.2f}")
    for label, values in rows.items():
        median = statistics.median(values)
        pair = statistics.median(a / b for a, b in zip(values, base, strict=True))
        print(f"  {label:12s} median {median * 1000:6.0f} ms  {median / statistics.median(base):5.2f}x baseline (per-round {pair:.2f}x)   runs {' '.join(f'{x * 1000:.0f}' for x in values)}")
    extra_first = statistics.median(a - b for a, b in zip(rows["first"], rows["plain check"], strict=True))
    extra_cached = statistics.median(a - b for a, b in zip(rows["cached"], rows["plain check"], strict=True))
    print(f"  --image adds {extra_first * 1000:.0f} ms on a first read, {extra_cached * 1000:.0f} ms from the image cache (median per round, vs the plain check)")


if __name__ == "__main__":
    main()
