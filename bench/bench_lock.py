"""Time `depsync lock --runner docker` against a plain `docker run --rm` of the same uv command.

Paired, in one run: each round runs both (alternating which goes first), on the same image, the
same warm cache volume, the same project and `uv lock --upgrade`; the plain run mounts a copy of
the project directly (no work copy, no sweep, no probe, no hardening). Reported: the medians,
their ratio and the median of the per-round ratios (the target is <= 1.3). For reference also
the local runner and a cold cache volume.

The project is generated: N packages in a flat wheel index inside the project (only the
project is mounted into the container), chained dependencies so uv has real work.
depsync's bytecode is compiled first, as an install has it (PYTHONDONTWRITEBYTECODE would
otherwise make every run compile every module). Needs the engine and test image of
containers/setup-engine.sh.

    python bench/bench_lock.py [--runs 9] [--packages 150]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from uvprojects import FakeDist, build_find_links  # noqa: E402

IMAGE = os.environ.get("DEPSYNC_TEST_IMAGE", "depsync-test:bookworm")
VOLUME = "depsync-uv-cache"


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


CPU: dict[str, list[float]] = {}  # user+sys seconds of the client process (not the engine's), per command


def timed(argv: list[str], label: str = "") -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {result.stderr[-600:]}")
    if label:
        CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--packages", type=int, default=150)
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "depsync"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project(Path(tmp) / "bench", args.packages)
        plain_project = Path(tmp) / "plain"
        shutil.copytree(project, plain_project)
        os.chmod(plain_project, 0o777)
        depsync = [sys.executable, "-m", "depsync", "lock", str(project), "--upgrade"]
        in_docker = [*depsync, "--runner", "docker", "--image", IMAGE]
        plain = [
            "docker", "run", "--rm", "--user", f"{os.getuid()}:{os.getgid()}",
            "--volume", f"{plain_project}:/workspace", "--volume", f"{VOLUME}:/uv-cache", "--workdir", "/workspace",
            "--env", "UV_CACHE_DIR=/uv-cache", "--env", "NO_COLOR=1", "--env", "UV_PYTHON_DOWNLOADS=never",
            IMAGE, "uv", "lock", "--upgrade",
        ]
        timed(in_docker)  # warm: the cache volume, the image's facts, the pinned nothing
        timed(plain)
        ours: list[float] = []
        theirs: list[float] = []
        for round_ in range(args.runs):
            if round_ % 2:
                theirs.append(timed(plain, "plain"))
                ours.append(timed(in_docker, "depsync"))
            else:
                ours.append(timed(in_docker, "depsync"))
                theirs.append(timed(plain, "plain"))
        host = [timed([*depsync, "--runner", "local"]) for _ in range(3)]
        cold_volume = f"depsync-bench-{uuid.uuid4().hex[:8]}"
        cold = timed([*in_docker, "--cache-volume", cold_volume])
    subprocess.run(["docker", "volume", "rm", cold_volume], capture_output=True)
    o, t = statistics.median(ours), statistics.median(theirs)
    pair = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
    print(f"relock of a {args.packages}-package project (`uv lock --upgrade`), {args.runs} paired rounds, load {os.getloadavg()[0]:.2f}")
    print(f"  depsync lock --runner docker   median {o * 1000:6.0f} ms   runs {' '.join(f'{x * 1000:.0f}' for x in ours)}")
    print(f"  docker run --rm (plain)        median {t * 1000:6.0f} ms   runs {' '.join(f'{x * 1000:.0f}' for x in theirs)}")
    print(f"  ratio of medians {o / t:.2f}, median of per-round ratios {pair:.2f} (target <= 1.3)")
    cpu_ours, cpu_theirs = statistics.median(CPU["depsync"]), statistics.median(CPU["plain"])
    print(f"  client CPU (user+sys) per run: depsync {cpu_ours * 1000:.0f} ms, docker CLI {cpu_theirs * 1000:.0f} ms (the engine's own work is the same for both)")
    print(f"  for reference: local runner {statistics.median(host) * 1000:.0f} ms; docker runner, new cache volume {cold * 1000:.0f} ms")


if __name__ == "__main__":
    main()
