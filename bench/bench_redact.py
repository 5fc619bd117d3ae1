"""Time redact() against input length on adversarial shapes, next to a plain str.replace.

Each shape repeats one unit (a letter, `@`, `a://`, `?a=`...) up to the length: the inputs
that made the old `[A-Za-z][A-Za-z0-9+.-]*://` pattern quadratic. str.replace over the same
text, in the same process, is the linear baseline; the ratio should stay flat as n grows.
The environment is emptied first so its secrets do not add work.

    python bench/bench_redact.py [--runs 3] [--old]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TAIL = " https://u:p@h/?token=x Authorization: Bearer x"  # every literal once: no pattern is skipped
SHAPES = {
    "alphanumeric run": "a",
    "alphanumeric run, then one of each secret": "a" + TAIL,
    "run of @": "@",
    "run of a://": "a://",
    "run of ?a=": "?a=",
    "run of a:b@c: ": "a:b@c: ",
    "run of ://u:p@h/": "://u:p@h/",
}
LENGTHS = [1_000, 10_000, 60_000, 200_000, 1_000_000]
OLD_LIMIT = 60_000  # the old implementation needs minutes beyond this


def shaped(unit: str, length: int) -> str:
    if unit == "a" + TAIL:
        return "a" * (length - len(TAIL)) + TAIL
    return (unit * (length // len(unit) + 1))[:length]


def best_of(runs: int, work: Callable[[], object]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return min(samples)


def old_redact() -> Callable[[str], str]:
    """redact() as committed at HEAD, for comparison."""
    source = subprocess.run(["git", "-C", str(REPO), "show", "HEAD:depsync/redact.py"], capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("old_redact")
    exec(compile(source, "HEAD:depsync/redact.py", "exec"), module.__dict__)
    return module.redact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old", action="store_true", help=f"also time HEAD's redact() (up to {OLD_LIMIT:,} characters)")
    args = parser.parse_args()
    os.environ.clear()
    from depsync.core.redact import redact

    old = old_redact() if args.old else None
    print(f"best of {args.runs} runs; replace = text.replace('SECRET', '***') over the same text")
    header = f"  {'length':>9}  {'redact':>10}  {'replace':>10}  {'ratio':>6}"
    print(header + (f"  {'HEAD redact':>12}" if old else ""))
    for name, unit in SHAPES.items():
        print(name)
        for length in LENGTHS:
            text = shaped(unit, length)
            new = best_of(args.runs, lambda: redact(text))
            base = best_of(args.runs, lambda: text.replace("SECRET", "***"))
            line = f"  {length:>9,}  {new * 1000:8.2f}ms  {base * 1000:8.3f}ms  {new / base:6.0f}"
            if old:
                line += f"  {best_of(1, lambda: old(text)) * 1000:10.1f}ms" if length <= OLD_LIMIT else f"  {'-':>12}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
