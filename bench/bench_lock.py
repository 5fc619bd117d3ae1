"""Time `depsync lock` in the container against uv on the host, and cold vs warm container runs.

The project is generated: N packages in a flat wheel index inside the project (only the
project is mounted into the container), chained dependencies so uv has real work.
Needs the engine and test image of containers/setup-engine.sh.

    python bench/bench_lock.py [--runs 5] [--packages 150]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from uvprojects import FakeDist, build_find_links  # noqa: E402

IMAGE = "depsync-test:bookworm"


def make_project(root: Path, packages: int) -> Path:
    dists = []
    for index in range(packages):
        requires = (f"pkg{index + 1:03d}>=1.0",) if index + 1 < packages else ()
        for version in ("1.0", "1.1", "2.0"):
            dists.append(FakeDist(f"pkg{index:03d}", version, requires_dist=requires))
    build_find_links(root / "wheels", dists)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f'dependencies = [{", ".join(f"{chr(34)}pkg{i:03d}{chr(34)}" for i in range(0, packages, 10))}]\n\n'
        '[[tool.uv.index]]\nname = "local"\nurl = "wheels"\nformat = "flat"\ndefault = true\n'
    )
    return root


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {result.stderr[-600:]}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--packages", type=int, default=150)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "bench", args.packages)
        depsync = [sys.executable, "-m", "depsync", "lock", str(project)]
        relock_host = [*depsync, "--runner", "local", "--upgrade"]
        relock_docker = [*depsync, "--runner", "docker", "--image", IMAGE, "--upgrade"]
        timed(relock_host)
        timed(relock_docker)  # warm the cache volume
        host = [timed(relock_host) for _ in range(args.runs)]
        warm = [timed(relock_docker) for _ in range(args.runs)]
        volumes = [f"depsync-bench-{uuid.uuid4().hex[:8]}" for _ in range(args.runs)]
        cold = [timed([*relock_docker, "--cache-volume", volume]) for volume in volumes]
    subprocess.run(["docker", "volume", "rm", *volumes], capture_output=True)
    h, w, c = (statistics.median(x) for x in (host, warm, cold))
    print(f"relock of a {args.packages}-package project (--upgrade), median of {args.runs} runs")
    print(f"  host (local runner)        {h * 1000:7.0f} ms")
    print(f"  container, warm cache      {w * 1000:7.0f} ms   ratio container/host = {w / h:.2f}")
    print(f"  container, cold cache      {c * 1000:7.0f} ms   ratio cold/warm = {c / w:.2f}")


if __name__ == "__main__":
    main()
