"""Time `depsync check` on the Megatron-LM dev triple against `uv lock --check --offline`.

Everything runs as subprocesses on the same copy of the files, interleaved round by round
(uv, then each depsync variant), so load on the machine hits them alike; the medians and
the median of the per-round ratios are printed. uv is timed warm (its cache knows the
interpreter, UV_PYTHON pinned), which is the harder baseline.

depsync is timed:
- cold: an empty result cache (a fresh XDG_CACHE_HOME each run), so everything is parsed
  and checked, and the result stored;
- repeated: the same check again on unchanged inputs, answered from the result cache;

four ways: `python -m depsync` in this interpreter (the dev venv, whose editable install
adds an import hook: ~10 ms per start here), and, in an "installed" interpreter (a venv made
here whose site-packages has a plain .pth naming this checkout and this interpreter's
site-packages, so the same code runs as `pip install .` gives it a user), both
`python -m depsync` and the `depsync` script, written as uv writes a console script (what
users and CI type; `python -m` adds runpy's imports); and that script once more in a git
checkout of the same files (a branch `dev` beside it), where CI and developers run it: the
repository is read too. Bytecode is compiled first, as an installed package has it.

    python bench/bench_check.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "fixtures" / "megatron-dev"


def timed(argv: list[str], cwd: Path, env: dict[str, str], *, expect: tuple[int, ...] = (0, 1)) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode not in expect:  # 1: the bundled triple has findings (its renamed CUDA flags)
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {result.stderr[-500:]}")
    return elapsed


def installed_python(tmp: Path) -> tuple[str, str]:
    """A venv that sees this checkout and its dependencies through a plain .pth (no import
    hook), and its `depsync` script."""
    venv = tmp / "installed"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True)
    (Path(purelib.stdout.strip()) / "depsync-bench.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "depsync"
    script.write_text(
        f"#!{python}\n# -*- coding: utf-8 -*-\nimport sys\nfrom depsync.entry import main\n"
        'if __name__ == "__main__":\n    if sys.argv[0].endswith("-script.pyw"):\n        sys.argv[0] = sys.argv[0][:-11]\n'
        '    elif sys.argv[0].endswith(".exe"):\n        sys.argv[0] = sys.argv[0][:-4]\n    sys.exit(main())\n'
    )
    script.chmod(0o755)
    return str(python), str(script)


def in_process_phases(project: Path) -> dict[str, float]:
    """Where depsync's own time goes (no interpreter start-up, imports already done)."""
    import functools
    import gc

    from depsync.core.model import tomltext
    from depsync.core.rules.run import run_rules
    from depsync.shell.workspace import load_inputs

    tomltext._LAST.clear()  # the parse memo and the pure functions' memos: each run starts cold
    for cached in [o for o in gc.get_objects() if isinstance(o, functools._lru_cache_wrapper)]:
        cached.cache_clear()
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
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "depsync")], check=True, capture_output=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        project = tmp / "megatron-dev"
        shutil.copytree(EXAMPLE, project)
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        uv_env = dict(base, UV_PYTHON=os.path.realpath(sys.executable))
        uv_check = [uv, "lock", "--check", "--offline"]
        installed, script = installed_python(tmp)
        repository = tmp / "megatron-dev-git"  # where CI and developers run it: a git checkout
        shutil.copytree(EXAMPLE, repository)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "init.defaultBranch=main"]
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "dev"], ["branch", "dev"]):
            subprocess.run([*git, *step], cwd=repository, check=True, capture_output=True)
        variants = {
            "dev venv, python -m depsync": ([sys.executable, "-m", "depsync", "check", "--format", "json"], project),
            "installed, python -m depsync": ([installed, "-m", "depsync", "check", "--format", "json"], project),
            "installed, depsync script": ([script, "check", "--format", "json"], project),
            "installed, script, git checkout": ([script, "check", "--format", "json"], repository),
        }
        warm_cache = dict(base, XDG_CACHE_HOME=str(tmp / "warm-cache"))
        timed(uv_check, project, uv_env)  # warm uv's interpreter cache
        for argv, where in variants.values():
            timed(argv, where, warm_cache)  # fills the result cache (and the OS file cache)
        time.sleep(2.1)  # the inputs are older than the cache's racy window now, as a user's are
        uv_times: list[float] = []
        cold: dict[str, list[float]] = {name: [] for name in variants}
        repeated: dict[str, list[float]] = {name: [] for name in variants}
        for run in range(args.runs):
            uv_times.append(timed(uv_check, project, uv_env))
            for name, (argv, where) in variants.items():
                cold[name].append(timed(argv, where, dict(base, XDG_CACHE_HOME=str(tmp / f"cold-{run}-{len(cold[name])}-{hash(name)}"))))
                repeated[name].append(timed(argv, where, warm_cache))
        phases = [in_process_phases(project) for _ in range(args.runs)]

    u = statistics.median(uv_times)
    print(f"Megatron-LM dev triple (lock {(EXAMPLE / 'uv.lock').stat().st_size / 1e6:.1f} MB), median of {args.runs} interleaved runs")
    print(f"  uv lock --check --offline (warm, UV_PYTHON pinned)            {u * 1000:7.1f} ms")
    for label, samples in (("cold (empty cache)", cold), ("repeated (cache hit)", repeated)):
        for name, times in samples.items():
            ratio = statistics.median(t / w for t, w in zip(times, uv_times))
            print(f"  depsync {label:<21} {name:<33} {statistics.median(times) * 1000:7.1f} ms   x{ratio:.2f} of uv")
    for name in phases[0]:
        print(f"  depsync in-process: {name:<15} {statistics.median([p[name] for p in phases]) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
