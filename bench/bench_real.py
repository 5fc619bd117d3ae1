"""Speed at real size: depsync against its uv/docker baseline on a Megatron-LM-sized tree.

The tree is generated: the real dev pyproject.toml and uv.lock (../shared/fixtures/megatron-lm/dev)
and the bundled CI Dockerfile (fixtures/megatron-dev/docker/Dockerfile.ci.dev), plus about 3,500
tracked files of about 80 MB (Python packages, tests, docs, a few large data files) committed in a
git repository, and untracked build output (build/, *.egg-info) as a developer's checkout has it.
Two of pyproject's tables that the fixture removed are put back so the root package builds as the
real one does: `[tool.setuptools.dynamic]` (version from megatron/core/package_info.py, readme
from README.md) and `[tool.setuptools.packages.find]`.

Every pair runs in this process, round by round, alternating which side goes first:
  (a) `depsync lock --runner local` vs plain `uv lock` (the same uv binary) on a copy of the tree:
      - nothing changed: the real dev triple; uv answers from the lock;
      - one requirement changed: each round flips `numpy<3`/`numpy<4` in [project] dependencies so uv
        re-resolves. The real dev pyproject's git sources point at GitHub and its index is renamed
        (index.invalid), neither reachable here, so this variant drops [tool.uv.sources], drops the
        git-only flash_mla from a group, points the index at PyPI, locks once online and then runs
        every timed resolution with UV_OFFLINE=1 from the warm uv cache (no network noise);
  (b) `depsync lock --runner docker` vs plain `docker run --rm` of the image's uv, nothing changed
      (the real triple), the same image, cache volume and tree;
  (c) cold `depsync check` (empty result cache) vs warm `uv lock --check --offline`;
  (d) repeated `depsync check` (answered from the result cache) vs the same uv;
  (e) `depsync reconcile --dev dev --no-lock --no-fetch` on the real merge (tests/conftest.py
      megatron_history(), merged with `git merge main`) vs a cold check of the same repository:
      once on that 3-commit history, once with --history commits more on each side (a real clone
      has thousands: reconcile walks dev's and main's history of pyproject and the merge base,
      a check walks none; that is why a real clone gave 3.4x where bench_reconcile.py gave 1.4-1.8x).
Also printed: the cold check's budget per phase (interpreter start, imports, load, each rule family).

The Dockerfile's `ARG UV_VERSION` is set to the uv that runs the baseline (the real dev lock is
revision 3, written by a newer uv than the 0.7.2 the real Dockerfile pins; 0.7.2 would rewrite it,
so "nothing changed" would not be nothing). depsync runs in an "installed" interpreter (a venv with
a plain .pth, no editable-install import hook) with its bytecode compiled, as a user has it.

    python bench/bench_real.py [--runs 7] [--skip docker,resolve] [--table]

--table prints the speed table of CONTRIBUTING.md (render_table()) after the raw numbers.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DEPSYNC_SHARED", REPO.parent / "shared"))
MEGATRON = SHARED / "fixtures" / "megatron-lm"
DOCKERFILE = REPO / "fixtures" / "megatron-dev" / "docker" / "Dockerfile.ci.dev"
IMAGE = os.environ.get("DEPSYNC_TEST_IMAGE", "depsync-test:bookworm")
VOLUME = "depsync-uv-cache"
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.invalid"}

SETUPTOOLS_TABLES = """
[tool.setuptools.dynamic]
version = { attr = "megatron.core.package_info.__version__" }
readme = { file = "README.md", content-type = "text/markdown" }

[tool.setuptools.packages.find]
include = ["megatron.core", "megatron.core.*"]
"""


# -- the tree --------------------------------------------------------------------------------


def run(argv: Sequence[str], cwd: Path | None = None, env: dict[str, str] | None = None, expect: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode not in expect:
        raise SystemExit(f"{' '.join(argv)} exited {result.returncode}: {(result.stderr or result.stdout)[-800:]}")
    return result


def git(repo: Path, *args: str) -> str:
    return run(["git", "-C", str(repo), *args], env=dict(os.environ, **GIT_ENV)).stdout


def _text(rng: random.Random, size: int) -> bytes:
    """Source-like text: compresses in git about as well as code does (not random bytes)."""
    words = ("def", "return", "self", "tensor", "config", "import", "torch", "parallel", "rank", "layer", "=", "(", ")", ":", "\n    ", "\n")
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words) if rng.random() < 0.7 else f"name_{rng.randrange(10**6)}"
        out.append(word + " ")
        length += len(word) + 1
    return "".join(out).encode()[:size]


def megatron_sized_tree(root: Path, files: int = 3500, total_mb: int = 80, seed: int = 21) -> Path:
    """A git repository shaped like Megatron-LM's dev checkout, with the real dev triple."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    big = [(f"tests/functional_tests/data/golden_{i:02d}.bin", 1_200_000) for i in range(30)]
    big += [(f"docs/source/images/figure_{i:02d}.png", 600_000) for i in range(20)]
    rest = total_mb * 1024 * 1024 - sum(size for _, size in big)
    small = files - len(big)
    layout = ("megatron/core/{a}/{b}/m{i}.py", "megatron/training/{a}/m{i}.py", "tests/unit_tests/{a}/test_{i}.py", "examples/{a}/s{i}.py", "tools/{a}/t{i}.py", "docs/source/{a}/p{i}.md")
    for index in range(small):
        relative = rng.choice(layout).format(a=f"d{rng.randrange(30):02d}", b=f"s{rng.randrange(6)}", i=index)
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_text(rng, max(200, int(rng.expovariate(small / rest)))))
    for relative, size in big:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size))
    for package in ("megatron", "megatron/core"):
        (root / package / "__init__.py").write_text("")
    (root / "megatron/core/package_info.py").write_text('__version__ = "0.16.0rc0"\n')
    (root / "README.md").write_text("# Megatron-LM (generated for bench/bench_real.py)\n")
    (root / ".gitignore").write_text("build/\n*.egg-info/\n__pycache__/\n")
    shutil.copy(MEGATRON / "dev" / "uv.lock", root / "uv.lock")
    (root / "pyproject.toml").write_text((MEGATRON / "dev" / "pyproject.toml").read_text() + SETUPTOOLS_TABLES)
    (root / "docker").mkdir(exist_ok=True)
    uv_version = run(["uv", "--version"]).stdout.split()[1]
    (root / "docker/Dockerfile.ci.dev").write_text(DOCKERFILE.read_text().replace("ARG UV_VERSION=0.7.2", f"ARG UV_VERSION={uv_version}"))
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    git(root, "init", "-q", "-b", "dev")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "dev")
    # untracked build output, as `pip install -e .` or a wheel build leaves it
    for index in range(300):
        path = root / "build" / "lib" / "megatron" / "core" / f"d{index % 30:02d}" / f"m{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_text(rng, 30_000))
    (root / "megatron_core.egg-info").mkdir()
    (root / "megatron_core.egg-info" / "SOURCES.txt").write_text("megatron/core/__init__.py\n")
    return root


def tree_size(root: Path) -> tuple[int, int]:
    tracked = git(root, "ls-files", "-z").split("\0")
    tracked = [name for name in tracked if name]
    return len(tracked), sum((root / name).stat().st_size for name in tracked)


def pypi_variant(pyproject: str) -> str:
    """The real dev pyproject made resolvable here: no git sources (GitHub is unreachable), the
    git-only flash_mla out of its group, the index at PyPI (through the machine's proxy)."""
    start, end = pyproject.index("[tool.uv.sources]"), pyproject.index("# Added for this fixture")
    text = pyproject[:start] + pyproject[end:]
    text = text.replace("https://index.invalid/simple", "https://pypi.org/simple")
    text = text.replace('no_pypi_wheels = ["flash_mla", ', "no_pypi_wheels = [")
    return text.replace('dependencies = ["torch>=2.6.0", "numpy", ', 'dependencies = ["torch>=2.6.0", "numpy<3", ')


def flip_numpy(project: Path, bound: str) -> None:
    path = project / "pyproject.toml"
    text = path.read_text()
    for old in ('"numpy<3"', '"numpy<4"'):
        text = text.replace(old, f'"numpy<{bound}"')
    path.write_text(text)


# -- timing ----------------------------------------------------------------------------------


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str], expect: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    run(argv, cwd=cwd, env=env, expect=expect)
    return time.perf_counter() - start


@dataclass
class Pair:
    """One measured pair: depsync's times and its baseline's, round by round."""

    label: str
    ours: str
    baseline: str
    goal: str
    ours_times: list[float] = field(default_factory=list)
    base_times: list[float] = field(default_factory=list)

    @property
    def ratio(self) -> float:  # median of the per-round ratios: load hits both sides of a round alike
        return statistics.median(a / b for a, b in zip(self.ours_times, self.base_times, strict=True))

    @property
    def extra(self) -> float:
        return statistics.median(a - b for a, b in zip(self.ours_times, self.base_times, strict=True))


def paired(pair: Pair, runs: int, ours: Callable[[int], float], baseline: Callable[[int], float]) -> Pair:
    for round_ in range(runs):
        if round_ % 2:
            pair.base_times.append(baseline(round_))
            pair.ours_times.append(ours(round_))
        else:
            pair.ours_times.append(ours(round_))
            pair.base_times.append(baseline(round_))
    return pair


def render_table(pairs: Sequence[Pair]) -> str:
    """The speed table of CONTRIBUTING.md (Markdown)."""
    lines = ["| what | depsync | baseline | median ours / baseline | ratio (per round) | extra | goal |", "|---|---|---|---|---|---|---|"]
    for p in pairs:
        lines.append(
            f"| {p.label} | `{p.ours}` | `{p.baseline}` | {statistics.median(p.ours_times) * 1000:.0f} / {statistics.median(p.base_times) * 1000:.0f} ms"
            f" | {p.ratio:.2f}x | {p.extra * 1000:+.0f} ms | {p.goal} |"
        )
    return "\n".join(lines)


README_BEGIN = "<!-- bench_real.py: begin (generated by `python bench/bench_real.py --write-readme`) -->"
README_END = "<!-- bench_real.py: end -->"


def write_readme(pairs: Sequence[Pair], note: str, readme: Path = REPO / "CONTRIBUTING.md") -> None:
    """Replace the generated speed table in CONTRIBUTING.md (its Benches section, between the markers) with this run's."""
    text = readme.read_text()
    if README_BEGIN not in text or README_END not in text:
        raise SystemExit(f"{readme}: markers for the generated table not found")
    head, _, rest = text.partition(README_BEGIN)
    _, _, tail = rest.partition(README_END)
    readme.write_text(f"{head}{README_BEGIN}\n{note}\n\n{render_table(pairs)}\n{README_END}{tail}")


def installed_python(tmp: Path) -> str:
    sys.path.insert(0, str(REPO / "bench"))
    from bench_check import installed_python as make

    return make(tmp)


# -- the pairs -------------------------------------------------------------------------------


def bench_lock_local(tmp: Path, tree: Path, python: str, env: dict[str, str], runs: int) -> list[Pair]:
    ours_tree, plain_tree = tmp / "lock-ours", tmp / "lock-plain"
    for target in (ours_tree, plain_tree):
        run(["git", "clone", "-q", "--no-hardlinks", str(tree), str(target)])
        shutil.copytree(tree / "build", target / "build")
    depsync = [python, "-m", "depsync", "lock", "--runner", "local", "-q"]
    uv = ["uv", "lock"]
    timed(depsync, ours_tree, env)
    timed(uv, plain_tree, env)
    still = paired(Pair("lock, nothing changed", "depsync lock --runner local", "uv lock", "<= +0.3 s"), runs, lambda _: timed(depsync, ours_tree, env), lambda _: timed(uv, plain_tree, env))
    return [still]


def bench_lock_resolve(tmp: Path, tree: Path, python: str, env: dict[str, str], runs: int) -> Pair:
    ours_tree, plain_tree = tmp / "resolve-ours", tmp / "resolve-plain"
    for target in (ours_tree, plain_tree):
        run(["git", "clone", "-q", "--no-hardlinks", str(tree), str(target)])
        (target / "pyproject.toml").write_text(pypi_variant((target / "pyproject.toml").read_text()))
        (target / "uv.lock").unlink()
    run(["uv", "lock"], cwd=plain_tree, env=env)  # online once: fills the uv cache with every metadata
    shutil.copy(plain_tree / "uv.lock", ours_tree / "uv.lock")
    offline = dict(env, UV_OFFLINE="1")
    depsync = [python, "-m", "depsync", "lock", "--runner", "local", "-q"]

    def ours(round_: int) -> float:
        flip_numpy(ours_tree, "4" if round_ % 2 == 0 else "3")
        return timed(depsync, ours_tree, offline)

    def plain(round_: int) -> float:
        flip_numpy(plain_tree, "4" if round_ % 2 == 0 else "3")
        return timed(["uv", "lock"], plain_tree, offline)

    return paired(Pair("lock, one requirement changed (uv re-resolves 391 packages, offline from a warm cache)", "depsync lock --runner local", "uv lock", "<= 1.1x"), runs, ours, plain)


def bench_lock_docker(tmp: Path, tree: Path, python: str, env: dict[str, str], runs: int) -> Pair:
    ours_tree, plain_tree = tmp / "docker-ours", tmp / "docker-plain"
    for target in (ours_tree, plain_tree):
        run(["git", "clone", "-q", "--no-hardlinks", str(tree), str(target)])
        shutil.copytree(tree / "build", target / "build")
    os.chmod(plain_tree, 0o777)
    depsync = [python, "-m", "depsync", "lock", "--runner", "docker", "--image", IMAGE, "-q"]
    plain = [
        "docker", "run", "--rm", "--user", f"{os.getuid()}:{os.getgid()}",
        "--volume", f"{plain_tree}:/workspace", "--volume", f"{VOLUME}:/uv-cache", "--workdir", "/workspace",
        "--env", "UV_CACHE_DIR=/uv-cache", "--env", "NO_COLOR=1", "--env", "UV_PYTHON_DOWNLOADS=never",
        IMAGE, "uv", "lock",
    ]  # fmt: skip
    timed(depsync, ours_tree, env)
    timed(plain, plain_tree, env)
    return paired(Pair("lock in the CI image, nothing changed", "depsync lock --runner docker", "docker run --rm IMAGE uv lock", "<= 1.15x"), runs, lambda _: timed(depsync, ours_tree, env), lambda _: timed(plain, plain_tree, env))


def bench_check(tmp: Path, tree: Path, python: str, env: dict[str, str], runs: int) -> list[Pair]:
    uv_env = dict(env, UV_PYTHON=os.path.realpath(sys.executable))
    uv = ["uv", "lock", "--check", "--offline"]
    check = [python, "-m", "depsync", "check", "--format", "json"]
    warm = dict(env, XDG_CACHE_HOME=str(tmp / "check-warm"))
    timed(uv, tree, uv_env)
    timed(check, tree, warm, (0, 1))
    counter = iter(range(10**6))
    cold = paired(
        Pair("check, cold (empty result cache)", "depsync check", "uv lock --check --offline (warm)", "<= 3.5x"), runs,
        lambda _: timed(check, tree, dict(env, XDG_CACHE_HOME=str(tmp / f"check-cold-{next(counter)}")), (0, 1)),
        lambda _: timed(uv, tree, uv_env),
    )  # fmt: skip
    repeated = paired(Pair("check, repeated (result cache)", "depsync check", "uv lock --check --offline (warm)", "<= 1.0x"), runs, lambda _: timed(check, tree, warm, (0, 1)), lambda _: timed(uv, tree, uv_env))
    return [cold, repeated]


# run by the installed interpreter in the tree: where a cold check's time goes, in one process
_BUDGET = r"""
import json, sys, time
start = time.perf_counter()
from depsync.cli.parser import parser
cli = time.perf_counter()
from depsync.commands import check
from depsync.shell.workspace import load_inputs
from depsync.core.rules.run import families
imported = time.perf_counter()
from pathlib import Path
inputs = load_inputs(Path(".").resolve())
loaded = time.perf_counter()
phases = {"import: the CLI (argparse, ui)": cli - start, "import: check, models, rules": imported - cli, "load: read and parse the triple": loaded - imported}
for family in families():
    began = time.perf_counter()
    list(family(inputs))
    phases["rules: " + family.__module__.rsplit(".", 1)[-1]] = time.perf_counter() - began
print(json.dumps(phases))
"""


def check_budget(tree: Path, python: str, env: dict[str, str], runs: int) -> dict[str, float]:
    """Median per phase of a cold check, plus the interpreter's own start (`python -c pass`)."""
    samples: dict[str, list[float]] = {"interpreter start (python -c pass)": []}
    for _ in range(runs):
        samples["interpreter start (python -c pass)"].append(timed([python, "-c", "pass"], tree, env))
        for name, seconds in json.loads(run([python, "-c", _BUDGET], cwd=tree, env=env).stdout).items():
            samples.setdefault(name, []).append(seconds)
    return {name: statistics.median(values) for name, values in samples.items()}


def render_budget(budget: dict[str, float], uv_seconds: float, check_seconds: float) -> str:
    lines = [f"cold check budget (median; the whole check {check_seconds * 1000:.0f} ms, uv {uv_seconds * 1000:.0f} ms, goal 3.5x = {uv_seconds * 3500:.0f} ms):"]
    for name, seconds in budget.items():
        lines.append(f"  {name:<42} {seconds * 1000:7.1f} ms")
    rest = check_seconds - sum(budget.values())
    lines.append(f"  {'the rest (report, cache store, exit)':<42} {rest * 1000:7.1f} ms")
    return "\n".join(lines)


def add_history(repo: Path, branch: str, commits: int) -> None:
    """`commits` commits on top of branch that touch a file beside the triple (git fast-import:
    a second for thousands), so history walks cost what they cost in a real clone."""
    tip = git(repo, "rev-parse", branch).strip()
    stream = []
    for index in range(commits):
        body = f"{branch} change {index}\n".encode()
        message = f"{branch}: change {index}".encode()
        stream.append(b"commit refs/heads/" + branch.encode() + b"\n")
        stream.append(f"committer b <b@example.invalid> {1_700_000_000 + index} +0000\n".encode())
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
        if index == 0:
            stream.append(f"from {tip}\n".encode())
        stream.append(f"M 100644 inline src/{branch}_{index % 50}.py\ndata {len(body)}\n".encode() + body + b"\n")
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True)


def bench_reconcile(tmp: Path, python: str, env: dict[str, str], runs: int, history: int = 0) -> Pair:
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import megatron_history

    repo = megatron_history(tmp / f"merge-{history}")
    if history:
        for branch in ("dev", "main"):
            add_history(repo, branch, history)
        git(repo, "checkout", "-q", "-B", "sync", "dev")
    reconcile = [python, "-m", "depsync", "reconcile", "--dev", "dev", "--no-lock", "--no-fetch"]
    check = [python, "-m", "depsync", "check", "--format", "json"]
    counter = iter(range(10**6))

    def merged() -> None:
        run(["git", "merge", "--abort"], cwd=repo, expect=(0, 128))
        git(repo, "reset", "-q", "--hard", "dev")
        run(["git", "merge", "-q", "main"], cwd=repo, env=dict(os.environ, **GIT_ENV), expect=(0, 1))

    def clean() -> None:
        run(["git", "merge", "--abort"], cwd=repo, expect=(0, 128))
        git(repo, "reset", "-q", "--hard", "dev")

    def ours(_: int) -> float:
        merged()
        return timed(reconcile, repo, dict(env, XDG_CACHE_HOME=str(tmp / f"rec-{next(counter)}")), (0, 1))

    def base(_: int) -> float:
        clean()
        return timed(check, repo, dict(env, XDG_CACHE_HOME=str(tmp / f"rec-check-{next(counter)}")), (0, 1))

    ours(0), base(0)  # the OS file cache
    label = "reconcile on the real merge" + (f", {history:,} more commits on each side" if history else " (3-commit history)")
    return paired(Pair(label, "depsync reconcile --no-lock --no-fetch", "depsync check (cold)", "<= 2x"), runs, ours, base)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--skip", default="", help="comma-separated: local, resolve, docker, check, reconcile")
    parser.add_argument("--table", action="store_true", help="also print the speed table (as CONTRIBUTING.md shows it)")
    parser.add_argument("--write-readme", action="store_true", help="put the table into CONTRIBUTING.md's Benches section (between its markers)")
    parser.add_argument("--history", type=int, default=5000, help="commits added on dev and on main for the long-history reconcile (default 5000)")
    args = parser.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    if not MEGATRON.exists():
        raise SystemExit(f"real Megatron-LM data not found at {MEGATRON}")
    compileall.compile_dir(str(REPO / "depsync"), quiet=1)
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # this venv's uv for both sides
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as name:
        tmp = Path(name)
        started = time.perf_counter()
        tree = megatron_sized_tree(tmp / "tree")
        count, size = tree_size(tree)
        load = os.getloadavg()[0]
        print(f"tree: {count} tracked files, {size / 1e6:.0f} MB (+300 untracked build files), generated in {time.perf_counter() - started:.0f} s; load {load:.2f}")
        python = installed_python(tmp)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["XDG_CACHE_HOME"] = str(tmp / "xdg")
        pairs: list[Pair] = []
        if "local" not in skip:
            pairs += bench_lock_local(tmp, tree, python, env, args.runs)
        if "resolve" not in skip:
            pairs.append(bench_lock_resolve(tmp, tree, python, env, max(3, args.runs // 2)))
        if "docker" not in skip:
            pairs.append(bench_lock_docker(tmp, tree, python, env, args.runs))
        budget = ""
        if "check" not in skip:
            pairs += bench_check(tmp, tree, python, env, args.runs * 2)
            cold = pairs[-2]
            budget = render_budget(check_budget(tree, python, env, args.runs), statistics.median(cold.base_times), statistics.median(cold.ours_times))
        if "reconcile" not in skip:
            pairs.append(bench_reconcile(tmp, python, env, args.runs))
            pairs.append(bench_reconcile(tmp, python, env, args.runs, history=args.history))
    for p in pairs:
        print(f"{p.label}: {p.ours} {statistics.median(p.ours_times) * 1000:.0f} ms vs {p.baseline} {statistics.median(p.base_times) * 1000:.0f} ms"
              f" -> {p.ratio:.2f}x, {p.extra * 1000:+.0f} ms (goal {p.goal}); rounds ours {' '.join(f'{t * 1000:.0f}' for t in p.ours_times)} | base {' '.join(f'{t * 1000:.0f}' for t in p.base_times)}")  # fmt: skip
    if budget:
        print(budget)
    if args.table:
        print()
        print(render_table(pairs))
    if args.write_readme:
        write_readme(pairs, f"`python bench/bench_real.py --runs {args.runs}` on the 2-core VM ({count} tracked files, {size / 1e6:.0f} MB; load {load:.1f}, other engineers' suites running), medians of paired rounds:")


if __name__ == "__main__":
    main()
