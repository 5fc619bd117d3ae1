"""No false alarm on real repositories: depsync's lock verdict against uv's, on real states.

Each directory of tests/corpus/ is one real state of a public repository that uses uv:
pyproject.toml and uv.lock at one commit (workspace members' and path packages'
pyproject.toml at the same commit, and a Dockerfile where the repository has one), with a
PROVENANCE file (TOML) naming the repository, the commit, the paths, what the state
exercises and the verdict uv 0.13.9 gave:

* ``uv = "fresh"``: `uv lock --check --offline` accepts the lock;
* ``uv = "stale"``: uv decides the lock does not match (its `-v` log says "Resolving despite
  existing lockfile due to ..."), whether or not it can then re-resolve offline;
* ``uv = "no-verdict"``: uv stops before deciding (it needs the network to build a
  package's metadata); ``uv_note`` says why. depsync must then only not crash (no exit 2).

The same tests run on the states of ``../shared/corpus-ml/`` (beside the repository, as
CI clones it; skipped when absent): real states of large ML and scientific repositories
picked for the shapes depsync once got wrong (marker-scoped sources, duplicate overrides,
self-referencing extras, relative ``exclude-newer``, workspaces), 40 MB in all, so read in
place rather than copied here. Their PROVENANCE.toml names the verdict ``uv_verdict``.

The tests run the real uv on every state (in parallel, once per session, on a copy, with a
hermetic environment and ``UV_PYTHON`` pinned to an interpreter that satisfies the lock's
requires-python) and assert (1) uv still gives the recorded verdict and (2) depsync's static
verdict (``check --static``: uv is not asked to confirm it) agrees: a ``lock-stale`` finding
exactly when uv says stale, and never exit code 2 where uv accepts the lock or has no
verdict. uv and depsync both take well under a second per state.
"""

from __future__ import annotations

import contextlib
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from depsync.cli.parser import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # works with any pytest import mode
from uvprojects import UV, uv_env  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# real ML states, beside the repository (CI clones the repository with ../shared next to it)
CORPUS_ML = Path(__file__).resolve().parents[3] / "shared" / "corpus-ml"
CORPORA = {"corpus": (CORPUS, "PROVENANCE", "uv"), "corpus-ml": (CORPUS_ML, "PROVENANCE.toml", "uv_verdict")}
STATES = sorted(p.parent.name for p in CORPUS.glob("*/PROVENANCE"))
ML_STATES = sorted(p.parent.name for p in CORPUS_ML.glob("*/PROVENANCE.toml"))
ALL_STATES = [f"corpus/{name}" for name in STATES] + [f"corpus-ml/{name}" for name in ML_STATES]
VERDICTS = ("fresh", "stale", "no-verdict")
# uv's own words (debug log) for "the lock does not match, re-resolving"
_STALE_MARKERS = ("Resolving despite existing lockfile", "Ignoring existing lockfile")


@dataclass(frozen=True)
class State:
    name: str
    directory: Path
    provenance: dict
    verdict: str  # uv 0.13.9's, as PROVENANCE records it

    @property
    def project(self) -> Path:
        return self.directory / self.provenance.get("project", ".")

    @property
    def dockerfiles(self) -> list[str]:
        return list(self.provenance.get("dockerfiles", []))


def load_state(name: str) -> State:
    """A state by name: `NAME` (tests/corpus) or `CORPUS/NAME` for either corpus."""
    corpus, _, short = name.rpartition("/")
    folder, provenance_file, verdict_key = CORPORA[corpus or "corpus"]
    directory = folder / short
    provenance = tomllib.loads((directory / provenance_file).read_text())
    return State(name, directory, provenance, provenance[verdict_key])


def _interpreters() -> list[tuple[str, str]]:
    """(version, executable) of the Pythons on this machine, newest first: the running one
    and pyenv's (uv refuses to check a lock whose requires-python the interpreter misses)."""
    found = {".".join(map(str, sys.version_info[:3])): os.path.realpath(sys.executable)}
    # pyenv's versions found from PYENV_ROOT or the running interpreter, never from HOME (CI runs
    # with an empty one)
    roots = {Path(sys.base_prefix).parent} | ({Path(os.environ["PYENV_ROOT"]) / "versions"} if os.environ.get("PYENV_ROOT") else set())
    for root in sorted(roots):
        for executable in glob.glob(str(root / "3.*" / "bin" / "python3")):
            found.setdefault(Path(executable).parents[1].name, executable)
    return sorted(found.items(), key=lambda item: [int(x) for x in item[0].split(".") if x.isdigit()], reverse=True)


def interpreter_for(requires_python: str | None) -> str | None:
    spec = SpecifierSet(requires_python or "")
    return next((exe for version, exe in _interpreters() if spec.contains(version, prereleases=True)), None)


@dataclass(frozen=True)
class UvVerdict:
    verdict: str  # fresh | stale | no-verdict | no-python
    returncode: int
    reason: str

    def describe(self) -> str:
        return f"uv: {self.verdict} (rc {self.returncode}): {self.reason}"


def uv_verdict(state: State, scratch: Path) -> UvVerdict:
    """`uv lock --check --offline -v` on a copy of the state."""
    copy = scratch / state.name.replace("/", "__")
    shutil.copytree(state.directory, copy)
    project = copy / state.provenance.get("project", ".")
    lock = tomllib.loads((project / "uv.lock").read_text())
    python = interpreter_for(lock.get("requires-python"))
    if python is None:
        return UvVerdict("no-python", -1, f"no interpreter for {lock.get('requires-python')}")
    env = uv_env(scratch / f"{state.name.replace('/', '__')}-cache", scratch / "config-home")
    env["UV_PYTHON"] = python
    done = subprocess.run([UV, "lock", "--check", "--offline", "-v"], cwd=project, env=env, capture_output=True, text=True, timeout=120)
    lines = [line.removeprefix("DEBUG ").strip() for line in done.stderr.splitlines()]
    reason = next((line for line in lines if line.startswith(_STALE_MARKERS)), "")
    if done.returncode == 0:
        return UvVerdict("fresh", 0, "")
    if reason:
        return UvVerdict("stale", done.returncode, reason)
    errors = [line for line in lines if line.startswith(("error:", "cause:"))]
    return UvVerdict("no-verdict", done.returncode, " / ".join(errors)[:500])


@pytest.fixture(scope="session")
def uv_verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, UvVerdict]:
    """uv's verdict on every state, computed in parallel once per session."""
    scratch = tmp_path_factory.mktemp("corpus")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = pool.map(lambda name: (name, uv_verdict(load_state(name), scratch)), ALL_STATES)
        return dict(results)


@dataclass(frozen=True)
class CheckRun:
    returncode: int
    findings: list[dict]
    output: str

    def stale(self) -> list[str]:
        return [f["message"] for f in self.findings if f["rule"] == "lock-stale"]


def depsync_check(state: State) -> CheckRun:
    """`depsync check --static --format json` in-process (the CLI's own exit-code handling):
    depsync's own verdict, which uv is not asked to confirm here."""
    args = ["check", str(state.project), "--format", "json", "--static"]
    for dockerfile in state.dockerfiles:
        args += ["--dockerfile", dockerfile]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    findings = json.loads(out.getvalue())["findings"] if code in (0, 1) else []
    return CheckRun(code, findings, out.getvalue() + err.getvalue())


def test_corpus_size_and_provenance() -> None:
    """The corpus is what the tests claim: real states with their provenance and a verdict."""
    assert STATES, "tests/corpus is empty"
    repos = set()
    for name in STATES:
        state = load_state(name)
        p = state.provenance
        for key in ("repo", "commit", "paths", "exercises", "uv"):
            assert p.get(key), f"{name}: PROVENANCE lacks {key}"
        assert len(p["commit"]) == 40 and (name.endswith(p["commit"][:7]) or f"__{p['commit'][:7]}__" in name), name
        assert name.startswith(p["repo"].replace("/", "__") + "__"), name
        assert p["uv"] in VERDICTS, name
        assert not p["repo"].lower().startswith(("nvidia/", "nvidia-nemo/")), name
        for path in p["paths"]:
            assert (state.directory / path).is_file(), f"{name}: {path} listed but missing"
        repos.add(p["repo"])
    assert len(repos) >= 1


def test_ml_corpus_size_and_provenance() -> None:
    """The ML corpus beside the repository is what its README says: 39 real states of 20
    repositories, each with its provenance, uv's verdict and the files it lists."""
    if not ML_STATES:
        pytest.skip(f"{CORPUS_ML} is absent (it sits beside the repository in CI)")
    repos = set()
    for name in ML_STATES:
        state = load_state(f"corpus-ml/{name}")
        p = state.provenance
        for key in ("repo", "commit", "paths", "exercises", "uv_verdict", "uv_version"):
            assert p.get(key), f"{name}: PROVENANCE.toml lacks {key}"
        assert p["uv_verdict"] in ("fresh", "stale") and p["uv_version"] == "0.13.9", name
        assert name.startswith(p["repo"].replace("/", "__") + "__" + p["commit"][:7]), name
        for path in p["paths"]:
            assert (state.directory / path).is_file(), f"{name}: {path} listed but missing"
        repos.add(p["repo"])
    assert len(ML_STATES) >= 39 and len(repos) >= 20


def _state_or_skip(name: str) -> State:
    if name.startswith("corpus-ml/") and not CORPUS_ML.is_dir():
        pytest.skip(f"{CORPUS_ML} is absent")
    return load_state(name)


@pytest.mark.parametrize("name", ALL_STATES)
def test_uv_gives_the_recorded_verdict(name: str, uv_verdicts: dict[str, UvVerdict]) -> None:
    """uv 0.13.9 still says what PROVENANCE records (catches a state copied wrong)."""
    state = _state_or_skip(name)
    observed = uv_verdicts[name]
    if observed.verdict == "no-python":
        pytest.skip(observed.reason)
    assert observed.verdict == state.verdict, observed.describe()


@pytest.mark.parametrize("name", ALL_STATES)
def test_depsync_agrees_with_uv(name: str) -> None:
    """depsync reports lock-stale exactly when uv does, and never exits 2 on these states."""
    state = _state_or_skip(name)
    run = depsync_check(state)
    assert run.returncode in (0, 1), f"depsync exit {run.returncode}: {run.output}"
    verdict = state.verdict
    if verdict == "fresh":
        assert run.stale() == [], f"false alarm on a state uv accepts: {run.stale()}"
    elif verdict == "stale":
        assert run.stale(), f"uv says stale ({state.provenance.get('uv_reason', '')}), depsync says fresh"
