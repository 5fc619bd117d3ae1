"""What the trust fixes cost, and what the bounds save: old code against new, same process.

The old code is a commit's `depsync/` (default: 3e35dab, before them),
extracted with `git archive` and run with PYTHONPATH; the new code is this checkout. Each
round runs every variant once, interleaved, in fresh interpreters, so load hits them alike;
medians and the median of the per-round ratios (new / old) are printed.

Megatron-LM (../shared/fixtures/megatron-lm, the real triple):
- `check --no-cache` on dev's checkout (the trust work adds the members glob and escaping);
- `reconcile --dev dev --no-lock --no-fetch` on the real merge (operator bootstrap, the
  owner's committed config, [tool.depsync] and image-hint drift, the escaped summary).
Hostile shapes (the bounds): a RUN line nesting `${...}` 1000 deep, 5000 `[tool.uv.sources]`
entries, TOML arrays 5000 deep. The old code is cut off after --old-limit seconds.

    python bench/bench_trust.py [--runs 5] [--old 3e35dab] [--old-limit 120]
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
LOCK = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "d"\nversion = "1"\nsource = { virtual = "." }\n'
PYPROJECT = '[project]\nname = "d"\nversion = "1"\nrequires-python = ">=3.10"\ndependencies = []\n'


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def hostile(directory: Path) -> dict[str, Path]:
    value = "x"
    for i in range(1000):
        value = "${A%d:-%s}" % (i, value)
    sources = "".join(f'p{i} = {{ git = "https://github.com/o/p{i}", rev = "{"a" * 40}" }}\n' for i in range(5000))
    return {
        "nested ${...} x1000": write(directory / "nested", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "docker/Dockerfile.ci.dev": f"FROM debian\nRUN echo {value}\n"}),
        "5000 sources": write(directory / "sources", {"pyproject.toml": PYPROJECT + "[tool.uv.sources]\n" + sources, "uv.lock": LOCK}),
        "TOML 5000 deep": write(directory / "deep", {"pyproject.toml": PYPROJECT + "[tool.x]\ny = " + "[" * 5000 + "]" * 5000 + "\n", "uv.lock": LOCK}),
    }


def old_code(commit: str, directory: Path) -> Path:
    target = directory / "old"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "depsync"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def timed(argv: list[str], cwd: Path, env: dict[str, str], limit: float) -> float:
    start = time.perf_counter()
    try:
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return float("inf")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old", default="3e35dab")
    parser.add_argument("--old-limit", type=float, default=120)
    options = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_reconcile import clean_dev, megatron_merge, start_merge

    with tempfile.TemporaryDirectory(prefix="depsync-bench-trust-") as tmp:
        directory = Path(tmp)
        old = old_code(options.old, directory)
        repo = megatron_merge(directory)
        shapes = hostile(directory)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        variants = {"old": dict(base, PYTHONPATH=str(old)), "new": dict(base, PYTHONPATH=str(REPO))}
        for env in variants.values():
            env["XDG_CACHE_HOME"] = str(directory / "xdg")
            env["DEPSYNC_OWNER_REF"] = "dev"
        depsync = [sys.executable, "-m", "depsync"]
        samples: dict[str, dict[str, list[float]]] = {}
        for _ in range(options.runs):
            for name, env in variants.items():
                clean_dev(repo)
                samples.setdefault("megatron check --no-cache", {}).setdefault(name, []).append(timed([*depsync, "check", "--no-cache"], repo, env, options.old_limit))
                start_merge(repo)
                samples.setdefault("megatron reconcile --no-lock", {}).setdefault(name, []).append(
                    timed([*depsync, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch"], repo, env, options.old_limit))
                for label, root in shapes.items():
                    limit = options.old_limit if name == "old" else 600
                    samples.setdefault(label, {}).setdefault(name, []).append(timed([*depsync, "check", "--no-cache", str(root)], root, env, limit))
        print(f"{'case':32} {'old (s)':>10} {'new (s)':>10} {'new/old':>8}   ({options.runs} runs, old = {options.old})")
        for label, by in samples.items():
            o, n = statistics.median(by["old"]), statistics.median(by["new"])
            ratios = [b / a for a, b in zip(by["old"], by["new"]) if a not in (0, float("inf"))]
            ratio = f"{statistics.median(ratios):.2f}" if ratios else f"<{n / options.old_limit:.3f}"
            shown = ">" + f"{options.old_limit:.0f}" if o == float("inf") else f"{o:.3f}"
            print(f"{label:32} {shown:>10} {n:>10.3f} {ratio:>8}")
        shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    main()
