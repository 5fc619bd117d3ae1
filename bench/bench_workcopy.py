"""Time the runners' work copy (a real copy, or a reflink where the filesystem has them)
against the hard-linked copy it replaced and against `cp -a`, in one process.

The work copy shares no inode with the caller's files: a build backend that uv runs
can rewrite or chmod anything in it without reaching the caller's tree. This measures what
that costs on the Megatron-LM fixture (the triple: pyproject, a 1.5 MB lock, the Dockerfile)
and on a synthetic tree the size of a Megatron-LM checkout without .git (about 2,500 files,
45 MB).

    python bench/bench_workcopy.py [--runs 9]
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
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from depsync.shell.runners.workcopy import copy_project

FIXTURE = ROOT / "fixtures" / "megatron-dev"


def checkout_sized_tree(root: Path, files: int = 2500, total_mb: int = 45) -> Path:
    """Directories of Python-sized files plus a few large ones, like a real ML repository."""
    size = total_mb * 1024 * 1024 // files
    for index in range(files):
        path = root / f"pkg{index % 40:02d}" / f"sub{index % 7}" / f"module{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size // 2).hex().encode()[:size])
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    return root


def hard_linked(source: Path, destination: Path) -> None:
    """The old copy: hard links (shared inodes) for everything uv only reads."""
    shutil.copytree(source, destination, symlinks=True, copy_function=os.link)


def real_copy(source: Path, destination: Path) -> None:
    copy_project(source, destination)


def cp_a(source: Path, destination: Path) -> None:
    subprocess.run(["cp", "-a", str(source), str(destination)], check=True)


def median_time(copy: Callable[[Path, Path], None], source: Path, scratch: Path, runs: int) -> float:
    times = []
    for run in range(runs):
        destination = scratch / f"{copy.__name__}-{run}"
        start = time.perf_counter()
        copy(source, destination)
        times.append(time.perf_counter() - start)
        shutil.rmtree(destination)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT.parent) as tmp:  # same filesystem as a checkout
        scratch = Path(tmp)
        trees = {"megatron fixture (3 files, 1.5 MB)": FIXTURE, "checkout-sized tree (2,500 files, 45 MB)": checkout_sized_tree(scratch / "tree")}
        for label, source in trees.items():
            base = median_time(hard_linked, source, scratch, args.runs)
            ours = median_time(real_copy, source, scratch, args.runs)
            cp = median_time(cp_a, source, scratch, args.runs)
            print(f"{label}:")
            print(f"  hard links (before)  {base * 1000:8.1f} ms")
            print(f"  cp -a                {cp * 1000:8.1f} ms")
            print(f"  work copy (now)      {ours * 1000:8.1f} ms   {ours / base:5.1f}x hard links, {ours / cp:4.2f}x cp -a")


if __name__ == "__main__":
    main()
