"""Fuzzing the readers: mutated real Megatron files and generated TOML through the whole check.

Every input must give findings or one clean DepsyncError; anything else is a crash.
Marked slow (run by .ci/run): 10,000+ cases per reader.
"""

from __future__ import annotations

import os
import random
import time

import pytest
from conftest import BUNDLED
from fuzzing import mutate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import LOCK, PYPROJECT

from depsync.core.config import Config
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.run import run_rules
from depsync.errors import DepsyncError

CASES = int(os.environ.get("DEPSYNC_FUZZ_CASES", "10000"))
EXAMPLE = BUNDLED / "megatron-dev"
MEGATRON_PYPROJECT = (EXAMPLE / "pyproject.toml").read_text()
MEGATRON_DOCKERFILE = (EXAMPLE / "docker" / "Dockerfile.ci.dev").read_text()


def _small_megatron_lock() -> str:
    """The root package of the real dev lock plus its first packages: real shapes, fast to parse."""
    text = (EXAMPLE / "uv.lock").read_text()
    header, *packages = text.split("\n[[package]]\n")
    root = next(p for p in packages if p.startswith('name = "megatron-core"'))
    return "\n[[package]]\n".join([header, *packages[:25], root])


SMALL_LOCK = _small_megatron_lock()


def run_check(pyproject: str, lock: str | None, dockerfile: str | None) -> None:
    """Load and check like `depsync check` does; only DepsyncError may escape."""
    project = Pyproject.from_text(pyproject)
    parsed = Lock.from_text(lock) if lock is not None else None
    dockerfiles = (Dockerfile.from_text(dockerfile, "docker/Dockerfile.ci.dev"),) if dockerfile is not None else ()
    run_rules(CheckInputs(Config(), project, parsed, dockerfiles))


def fuzz(reader: str, seeds: list[tuple[str, str, str]], cases: int) -> dict[str, int]:
    rng = random.Random(f"depsync-{reader}-{os.environ.get('DEPSYNC_FUZZ_SEED', '0')}")
    outcomes = {"ok": 0, "input-error": 0}
    started = time.monotonic()
    for case in range(cases):
        pyproject, lock, dockerfile = rng.choice(seeds)
        if reader == "pyproject":
            pyproject = mutate(pyproject, rng)
        elif reader == "lock":
            lock = mutate(lock, rng)
        else:
            dockerfile = mutate(dockerfile, rng)
        try:
            run_check(pyproject, lock, dockerfile)
            outcomes["ok"] += 1
        except DepsyncError as exc:
            assert str(exc).strip(), "an error must say something"
            outcomes["input-error"] += 1
        except Exception as exc:  # a crash: report the input that caused it
            changed = {"pyproject": pyproject, "lock": lock, "dockerfile": dockerfile}[reader]
            raise AssertionError(f"case {case}: {type(exc).__name__}: {exc}\n--- input ---\n{changed[:3000]}") from exc
    outcomes["seconds"] = round(time.monotonic() - started)
    print(f"\nfuzz {reader}: {cases} cases {outcomes}")
    return outcomes


ODD_DOCKERFILE = """# escape=`
ARG BASE=debian
ARG UV_VERSION=0.7.2
FROM ${BASE} AS build
ARG UV_VERSION
ENV EXTRA=gpu GROUP="test"
RUN <<-EOF bash -ex
\tuv sync --locked --extra ${EXTRA} `
\t  --group $GROUP && echo "done # not a comment"
\tif [ -n "$X" ]; then G=--frozen; else G=--locked; fi; uv sync $G
EOF
FROM build AS final
COPY --from=ghcr.io/astral-sh/uv:0.5.4 /uv /bin/uv
RUN ["uv", "sync", "--frozen", "--only-group", "test"]
RUN python -m uv pip install -r pyproject.toml --extra=${EXTRA:-gpu} ; pip install uv==0.6.0
"""
SEEDS = [
    (MEGATRON_PYPROJECT, SMALL_LOCK, MEGATRON_DOCKERFILE),
    (PYPROJECT, LOCK, "FROM base\nRUN uv sync --locked --extra gpu\n"),
    (PYPROJECT, LOCK, ODD_DOCKERFILE),
]


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["pyproject", "lock", "dockerfile"])
def test_mutated_real_files_never_crash(reader: str) -> None:
    outcomes = fuzz(reader, SEEDS, CASES)
    assert outcomes["ok"] + outcomes["input-error"] == CASES


def test_mutations_smoke() -> None:
    """A short run in the default suite, so a crash shows up without the slow marker too."""
    for reader in ("pyproject", "lock", "dockerfile"):
        fuzz(reader, SEEDS, 150)


# valid but unusual TOML: dotted keys, inline vs standard tables, comments everywhere
toml_keys = st.sampled_from(["dependencies", "requires-python", "name", "version", "optional-dependencies", "sources", "dev", "x"])
toml_scalars = st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False))
toml_values = st.recursive(toml_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(toml_keys, inner, max_size=4), max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(project=st.dictionaries(toml_keys, toml_values, max_size=6), uv=st.dictionaries(toml_keys, toml_values, max_size=6))
def test_generated_tables_of_any_type(project: dict, uv: dict) -> None:
    import tomlkit

    document = {"project": {"name": "x", **project}, "tool": {"uv": uv}}
    try:
        text = tomlkit.dumps(document)
    except Exception:
        return  # not representable as TOML
    try:
        run_check(text, LOCK, None)
    except DepsyncError:
        pass
