"""A stale `--no-install-package` whose package the lock has as another build keeps its intent.

Real input: Megatron-LM dev's lock (CUDA 13: `nvidia-cudnn-cu13`, `nvidia-cublas`) against the
bundled dev CI Dockerfile's CUDA 12 flags (tests/test_fix.py runs the fix on it end to end).
"""

from __future__ import annotations

import pytest
from conftest import megatron

from depsync.core import autofix
from depsync.core.config import Config
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.rules.dockerfile import Counterparts, is_counterpart, renamed_counterparts
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.run import run_rules


@pytest.mark.parametrize(
    ("name", "other", "expected"),
    [
        ("nvidia-cudnn-cu12", "nvidia-cudnn-cu13", True),  # another CUDA build
        ("nvidia-cublas-cu12", "nvidia-cublas", True),  # CUDA 13 wheels dropped the suffix
        ("nvidia-cublas", "nvidia-cublas-cu12", True),
        ("jax-cuda12-plugin", "jax-cuda13-plugin", True),  # a segment in the middle
        ("torch-rocm5", "torch-rocm6", True),
        ("foo-v1", "foo-v2", True),
        ("nvidia-cudnn-cu12", "nvidia-cudnn-py3", False),  # other letters: another kind of segment
        ("torch", "torchvision", False),
        ("torch", "torch-c-dlpack-ext", False),
        ("nvidia-cudnn-cu12", "nvidia-cudnn-frontend", False),
        ("nvidia-nccl-cu12", "nvidia-nccl-cu12", False),
        ("cu12", "cu13-extra", False),
    ],
)
def test_counterparts_differ_only_by_a_version_like_segment(name: str, other: str, expected: bool) -> None:
    assert is_counterpart(name, other) is expected


def test_a_name_the_project_asks_for_is_never_a_counterpart() -> None:
    lock = {"transformer-engine", "nvidia-nccl-cu13"}
    assert renamed_counterparts("transformer-engine-cu12", lock, {"transformer-engine"}) == []
    assert renamed_counterparts("transformer-engine-cu12", lock, set()) == ["transformer-engine"]
    assert renamed_counterparts("nvidia-nccl-cu12", lock, {"transformer-engine"}) == ["nvidia-nccl-cu13"]


PYPROJECT = '[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["torch"]\n'


def _lock(*names: str) -> str:
    root = '[[package]]\nname = "p"\nversion = "0.1.0"\nsource = { virtual = "." }\ndependencies = [{ name = "torch" }]\n\n'
    root += '[package.metadata]\nrequires-dist = [{ name = "torch" }]\n\n'
    packages = "".join(f'[[package]]\nname = "{n}"\nversion = "1.0"\nsource = {{ registry = "https://index.invalid/simple" }}\n\n' for n in ("torch", *names))
    return 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n' + root + packages


DOCKERFILE = "FROM base\nRUN uv sync --locked \\\n    --no-install-package torch \\\n    --no-install-package nvidia-nccl-cu12\n"


def _inputs(*lock_names: str) -> CheckInputs:
    return CheckInputs(Config(), Pyproject.from_text(PYPROJECT), Lock.from_text(_lock(*lock_names)), (Dockerfile.from_text(DOCKERFILE, "Dockerfile"),))


def test_one_counterpart_is_an_error_and_fix_renames_it() -> None:
    inputs = _inputs("nvidia-nccl-cu13")
    findings = [f for f in run_rules(inputs) if f.file == "Dockerfile"]
    assert [(f.line, f.rule, str(f.severity)) for f in findings] == [(4, "docker-no-install-renamed", "error")]
    fixes = autofix.plan(inputs, findings, lambda path: DOCKERFILE)
    assert fixes.after["Dockerfile"] == DOCKERFILE.replace("nvidia-nccl-cu12", "nvidia-nccl-cu13")
    assert [f.description for f in fixes.fixes] == ["renamed a `--no-install-package` flag to the lock's other build: nvidia-nccl-cu12 -> nvidia-nccl-cu13"]


def test_several_counterparts_are_said_and_left_alone() -> None:
    inputs = _inputs("nvidia-nccl-cu11", "nvidia-nccl-cu13")
    findings = [f for f in run_rules(inputs) if f.file == "Dockerfile"]
    assert [(f.rule, str(f.severity)) for f in findings] == [("docker-no-install-renamed", "error")]
    assert "nvidia-nccl-cu11, nvidia-nccl-cu13" in findings[0].message
    fixes = autofix.plan(inputs, findings, lambda path: DOCKERFILE)
    assert fixes.changed == [] and fixes.fixes == []
    assert [u.reason for u in fixes.unfixed] == ["the lock has several other builds of the package: write the one the image must not install"]


def test_no_counterpart_is_a_warning_and_fix_removes_it_by_name() -> None:
    inputs = _inputs()
    findings = [f for f in run_rules(inputs) if f.file == "Dockerfile"]
    assert [(f.rule, str(f.severity)) for f in findings] == [("docker-stale-no-install", "warning")]
    fixes = autofix.plan(inputs, findings, lambda path: DOCKERFILE)
    assert fixes.after["Dockerfile"] == "FROM base\nRUN uv sync --locked \\\n    --no-install-package torch\n"
    assert "nvidia-nccl-cu12" in fixes.fixes[0].description


def test_megatron_dev_flags_are_renamed_to_the_cuda13_builds() -> None:
    from conftest import BUNDLED

    text = (BUNDLED / "megatron-dev" / "docker" / "Dockerfile.ci.dev").read_text()
    inputs = CheckInputs(
        Config(), Pyproject.from_text(megatron("dev", "pyproject.toml")), Lock.from_text(megatron("dev", "uv.lock")),
        (Dockerfile.from_text(text, "docker/Dockerfile.ci.dev"),),
    )
    findings = run_rules(inputs)
    renamed = {f.line: f.message for f in findings if f.rule == "docker-no-install-renamed"}
    assert len(renamed) == 12
    assert "'nvidia-cudnn-cu13' instead" in renamed[49] and "'nvidia-cublas' instead" in renamed[45]
    stale = [f for f in findings if f.rule == "docker-stale-no-install"]
    # transformer-engine is what dev's pyproject asks for (from git): never offered in the flag's place
    te = next(f for f in stale if "transformer-engine-cu12" in f.message)
    assert "did you mean" not in te.message and "a dependency pyproject.toml declares" in te.message


def test_the_counterparts_index_answers_as_testing_every_name() -> None:
    """Counterparts(names).of(name) is exactly the names is_counterpart pairs with name, on the
    real lock's names and on names shaped to hit every branch (a middle segment, a dropped or
    added suffix, the first segment, the name itself)."""
    shaped = {
        "nvidia-cudnn-cu12", "nvidia-cudnn-cu13", "nvidia-cudnn", "nvidia-cublas", "nvidia-cublas-cu12",
        "jax-cuda12-plugin", "jax-cuda13-plugin", "jax-plugin", "cu12", "cu13", "cu13-extra", "v1-foo", "v2-foo",
        "foo", "foo-v1", "foo-v1-v2", "torch", "torchvision", "nvidia-cudnn-py3", "a-1", "a-b2", "a",
    }
    names = Lock.from_text(megatron("dev", "uv.lock")).names() | shaped
    index = Counterparts(names)
    for name in sorted(shaped | {"nvidia-nccl-cu11", "jax-cuda11-plugin", "foo-v3", "nothing-like-it"}):
        assert index.of(name) == {other for other in names if is_counterpart(name, other)}, name


def test_renamed_counterparts_with_and_without_an_index() -> None:
    names = {"nvidia-cudnn-cu13", "nvidia-cudnn-cu11", "nvidia-cublas", "torch"}
    assert renamed_counterparts("nvidia_cudnn_cu12", names, set()) == ["nvidia-cudnn-cu11", "nvidia-cudnn-cu13"]
    assert renamed_counterparts("nvidia-cudnn-cu12", names, {"nvidia-cudnn-cu11"}, Counterparts(names)) == ["nvidia-cudnn-cu13"]
    assert renamed_counterparts("nvidia-cublas-cu12", names, set(), Counterparts(names)) == ["nvidia-cublas"]
