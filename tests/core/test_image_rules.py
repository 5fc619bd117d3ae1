"""The image-* rules (`depsync check --image`), pure: a lock, a Dockerfile and an ImageEnv in, findings out.

The images here are ImageEnv values as the reader's parser makes them (tests/shell/test_image_env.py
reads real images on the real engine)."""

from __future__ import annotations

import json

import pytest
from support import inputs

from depsync.core.config import Config, load_config
from depsync.core.findings import Severity
from depsync.core.model.image_env import (
    MAX_DISTRIBUTIONS,
    ImageDist,
    ImageEnv,
    from_json,
    parse_report,
)
from depsync.core.rules import image as image_rules
from depsync.core.rules.image import image_summary, satisfies, within_policy
from depsync.core.rules.image_install import cuda_major_of, marker_holds, selection_of
from depsync.core.rules.run import apply_severity
from depsync.errors import DepsyncError
from depsync.records import replace

PYPROJECT = """\
[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch>=2.9", "numpy"]

[project.optional-dependencies]
gpu = ["nvidia-nccl-cu13"]
"""

LOCK = """\
version = 1
revision = 3
requires-python = ">=3.10"

[[package]]
name = "demo"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "numpy" },
    { name = "torch" },
]

[package.optional-dependencies]
gpu = [
    { name = "nvidia-nccl-cu13" },
]

[package.metadata]
requires-dist = [
    { name = "numpy" },
    { name = "nvidia-nccl-cu13", marker = "extra == 'gpu'" },
    { name = "torch", specifier = ">=2.9" },
]
provides-extras = ["gpu"]

[[package]]
name = "numpy"
version = "2.4.4"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "nvidia-nccl-cu13"
version = "2.28.9"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "torch"
version = "2.9.1"
source = { registry = "https://pypi.org/simple" }
dependencies = [
    { name = "triton", marker = "sys_platform == 'linux'" },
]

[[package]]
name = "triton"
version = "3.5.0"
source = { registry = "https://pypi.org/simple" }
"""

DOCKERFILE = """\
FROM nvcr.io/nvidia/pytorch:25.06-py3
RUN uv sync --locked --extra gpu \\
    --no-install-package torch \\
    --no-install-package triton
"""

SITE = "/usr/local/lib/python3.12/dist-packages"
LINUX = {
    "python_version": "3.12", "python_full_version": "3.12.3", "os_name": "posix", "sys_platform": "linux", "platform_release": "",
    "platform_system": "Linux", "platform_version": "", "platform_machine": "x86_64", "platform_python_implementation": "CPython",
    "implementation_name": "cpython", "implementation_version": "3.12.3",
}  # fmt: skip


def image(python: str = "3.12.3", cuda: str = "12.9.1.010", **dists: str) -> ImageEnv:
    shipped = tuple(ImageDist(name.replace("_", "-"), version, f"{SITE}/{name}-{version}.dist-info") for name, version in dists.items())
    return ImageEnv("nvcr.io/nvidia/pytorch:25.06-py3", "sha256:" + "ab" * 32, python, {**LINUX, "python_full_version": python}, shipped, cuda)


NGC = image(torch="2.8.0a0+nv25.06", numpy="1.26.4")


def findings(pyproject: str = PYPROJECT, lock: str = LOCK, dockerfile: str = DOCKERFILE, env: ImageEnv = NGC, config: Config | None = None) -> list:  # type: ignore[type-arg]
    checked = inputs(pyproject, lock, (dockerfile,), config, image=env, image_dockerfile="docker/Dockerfile.ci.dev")
    return sorted(image_rules.check(checked), key=lambda f: (f.rule, f.line, f.message))


def by_rule(found: list) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for finding in found:
        out.setdefault(finding.rule, []).append(finding)
    return out


def test_each_mismatch_of_a_pytorch_image_is_one_finding_with_the_image_evidence() -> None:
    found = by_rule(findings())
    assert set(found) == {"image-kept-out-missing", "image-version-mismatch", "image-shadowed", "image-cuda-mismatch"}
    missing = found["image-kept-out-missing"]
    assert [(f.file, f.line) for f in missing] == [("docker/Dockerfile.ci.dev", 4)]
    assert "triton 3.5.0" in missing[0].message and "has no triton" in missing[0].message and "remove `--no-install-package triton`" in missing[0].fix
    versions = found["image-version-mismatch"]
    assert {f.line for f in versions} == {3}
    texts = " | ".join(f.message for f in versions)
    assert "requires torch>=2.9" in texts and "torch 2.8.0a0+nv25.06 at /usr/local/lib/python3.12/dist-packages/torch-2.8.0a0+nv25.06.dist-info" in texts
    assert "the lock's torch 2.9.1 (uv.lock:" in texts and "release" in texts
    assert any("torch==2.8.0.*" in f.fix for f in versions)
    shadowed = found["image-shadowed"]
    assert len(shadowed) == 1 and "numpy 2.4.4" in shadowed[0].message and "numpy 1.26.4" in shadowed[0].message
    assert "`--no-install-package numpy`" in shadowed[0].message and shadowed[0].severity == Severity.WARNING and shadowed[0].line == 2
    cuda = found["image-cuda-mismatch"]
    assert len(cuda) == 1 and cuda[0].file == "uv.lock" and "nvidia-nccl-cu13 2.28.9 is a CUDA 13 build" in cuda[0].message
    assert "CUDA_VERSION=12.9.1.010" in cuda[0].message
    for finding in findings():
        assert finding.fix and finding.line > 0


def test_an_image_that_matches_the_lock_gives_no_finding() -> None:
    matching = image(cuda="13.0.1", torch="2.9.1+nv25.10", triton="3.5.0", numpy="2.4.4")
    assert findings(env=matching) == []


def test_a_kept_out_package_nothing_installs_is_held_against_requirements_only() -> None:
    # without --extra gpu and with torch unreachable, only the project's requirement on torch is compared
    lock = LOCK.replace('    { name = "torch" },\n]', '    { name = "torch", marker = "sys_platform == \'never\'" },\n]', 1)
    found = by_rule(findings(lock=lock, env=image(torch="2.9.0", numpy="2.4.4", triton="3.5.0")))
    assert "image-version-mismatch" not in found  # 2.9.0 satisfies >=2.9; the locked 2.9.1 is never installed
    found = by_rule(findings(lock=lock, env=image(torch="2.8.0", numpy="2.4.4", triton="3.5.0")))
    assert [f.message.count("requires torch>=2.9") for f in found["image-version-mismatch"]] == [1]


@pytest.mark.parametrize(
    ("policy", "shipped", "ok"),
    [
        ("release", "2.9.1a0+nv25.10", True),
        ("release", "2.9.0", False),
        ("exact", "2.9.1+nv", False),
        ("public", "2.9.1+nv", True),
        ("minor", "2.9.0", True),
        ("major", "2.1.0", True),
        ("off", "1.0", True),
    ],
)
def test_the_version_policy_decides_how_close_the_image_must_be(policy: str, shipped: str, ok: bool) -> None:
    assert within_policy("2.9.1", shipped, policy) is ok
    config = load_config({"image-version-policy": policy})
    env = image(cuda="13.0", torch=shipped, triton="3.5.0", numpy="2.4.4")
    messages = [f.message for f in findings(env=env, config=config, lock=LOCK, pyproject=PYPROJECT.replace("torch>=2.9", "torch"))]
    assert any("another" in m for m in messages) is (not ok)


def test_a_bad_policy_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(DepsyncError, match="image-version-policy must be one of release, exact, public, minor, major, off.*'relase'.*did you mean 'release'"):
        load_config({"image-version-policy": "relase"})


def test_severities_are_configurable_like_every_rule() -> None:
    config = load_config({"severity": {"image-shadowed": "off", "image-cuda-mismatch": "warning"}})
    found = apply_severity(findings(config=config), config)
    assert "image-shadowed" not in {f.rule for f in found}
    assert {f.severity for f in found if f.rule == "image-cuda-mismatch"} == {Severity.WARNING}


def test_the_images_python_against_requires_python_and_the_lock() -> None:
    found = findings(env=replace(NGC, python="3.9.18", marker_env={**LINUX, "python_full_version": "3.9.18", "python_version": "3.9"}))
    python = [f for f in found if f.rule == "image-python-mismatch"]
    assert [(f.file, f.line) for f in python] == [("pyproject.toml", 4)]
    assert "Python 3.9.18" in python[0].message and "'>=3.10'" in python[0].message
    # the lock's environments exclude the image's platform: no resolution for it
    lock = LOCK.replace('requires-python = ">=3.10"\n', 'requires-python = ">=3.10"\nsupported-markers = [\n    "sys_platform == \'darwin\'",\n]\n', 1)
    found = [f for f in findings(lock=lock) if f.rule == "image-python-mismatch"]
    assert [(f.file, f.line) for f in found] == [("uv.lock", 4)] and "supported-markers" in found[0].message


def test_no_python_in_the_image_judges_nothing_but_says_what_it_read() -> None:
    bare = ImageEnv("scratch:1", "sha256:" + "cd" * 32, notes=("no python3 or python on the PATH of scratch:1",))
    assert findings(env=bare) == []
    assert image_summary(bare)["python"] is None and image_summary(NGC)["cuda"] == "12"


def test_markers_hold_with_a_set_of_active_extras_as_uv_encodes_conflicts() -> None:
    both = "extra == 'extra-4-demo-dev' and extra == 'extra-4-demo-lts'"
    assert not marker_holds(both, LINUX, frozenset({"extra-4-demo-dev"}))
    assert marker_holds(both, LINUX, frozenset({"extra-4-demo-dev", "extra-4-demo-lts"}))
    assert marker_holds("sys_platform == 'linux' or (" + both + ")", LINUX, frozenset())
    assert not marker_holds("sys_platform == 'never' or (" + both + ")", LINUX, frozenset({"extra-4-demo-dev"}))
    assert marker_holds("python_full_version >= '3.11' and extra != 'extra-4-demo-lts'", LINUX, frozenset({"extra-4-demo-dev"}))
    assert not marker_holds("python_full_version < '3.11'", LINUX)


def test_the_selection_of_a_sync_follows_uv_flags() -> None:
    from depsync.core.model.dockerfile import Dockerfile

    text = "FROM x\nRUN uv sync --only-group build\nRUN uv sync --extra dev,mlm --group extra-tools --no-group dev --no-install-package torch\n"
    first, second = Dockerfile.from_text(text).uv_commands
    only = selection_of(first, {"build", "dev"}, ["dev"])
    assert only.groups == {"build"} and not only.project_deps
    full = selection_of(second, {"build", "dev", "extra-tools"}, ["dev"])
    assert full.extras == {"dev", "mlm"} and full.groups == {"extra-tools"} and full.kept_out == (("torch", 3),)


@pytest.mark.parametrize(
    ("name", "version", "major"),
    [
        ("nvidia-nccl-cu13", "2.28.9", "13"),
        ("nvidia-cudnn-cu12", "9.1", "12"),
        ("cupy-cuda12x", "13.0", "12"),
        ("torch", "2.8.0+cu128", "12"),
        ("torch", "2.9.0+cu130", "13"),
        ("torch", "2.4.0+cu118", "11"),
        ("nvidia-cublas", "13.1.0.3", "13"),
        ("nvidia-cufft", "12.0.0.61", ""),  # its own version numbers, not CUDA's
        ("numpy", "2.4.4", ""),
        ("torch", "2.8.0a0+nv25.06", ""),
    ],
)
def test_the_cuda_major_of_a_distribution(name: str, version: str, major: str) -> None:
    assert cuda_major_of(name, version) == major


def test_pre_releases_of_the_image_count_as_what_they_are() -> None:
    assert satisfies("2.8.0a0+nv25.06", ">=2.6") is True
    assert satisfies("2.8.0a0+nv25.06", ">=2.9") is False
    assert satisfies("not a version", ">=1") is None


# -- the reader's output, parsed under caps -------------------------------------------------------


def _python_line() -> str:
    return json.dumps({"k": "python", "version": "3.12.3", "executable": "/usr/bin/python3", "env": LINUX})


def test_hostile_reader_output_is_bounded_and_said() -> None:
    lines = [_python_line(), "not json", json.dumps([1, 2]), json.dumps({"k": "dist", "name": 5})]
    lines += [json.dumps({"k": "dist", "name": "bad\x1bname", "version": "1\n2", "path": "/p", "requires": ["x"] * 5000})]
    lines += [json.dumps({"k": "dist", "name": f"pkg{i}", "version": "1.0", "path": f"/s/pkg{i}"}) for i in range(MAX_DISTRIBUTIONS + 5)]
    env = parse_report(lines, "hostile:1", "sha256:" + "ef" * 32, ["CUDA_VERSION=12.4.0", "CUDA_VERSION=x"])
    assert len(env.distributions) == MAX_DISTRIBUTIONS and env.dropped == 6
    weird = env.distributions[0]
    assert weird.name == "bad?name" and weird.version == "1?2" and len(weird.requires) == 1000
    assert env.cuda_env == "12.4.0" and env.python == "3.12.3"
    notes = " | ".join(env.notes)
    assert "3 lines of the reader's output were not readable" in notes and "6 distributions past" in notes and "1000 Requires-Dist" in notes
    assert from_json(json.loads(json.dumps(env.to_json())), "hostile:1") == env


def test_a_python_version_that_is_not_one_is_no_python() -> None:
    env = parse_report([json.dumps({"k": "python", "version": "3.12; rm -rf /", "env": LINUX})], "x:1", "sha256:" + "00" * 32)
    assert env.python == ""


def test_the_reader_output_parser_never_fails_on_any_lines() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    record = st.dictionaries(st.sampled_from(["k", "name", "version", "path", "requires", "env", "text"]),
                             st.one_of(st.sampled_from(["python", "dist", "note"]), st.text(max_size=30), st.integers(), st.lists(st.text(max_size=10), max_size=5), st.none()),
                             max_size=7)  # fmt: skip
    line = st.one_of(st.text(max_size=80), record.map(json.dumps))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(line, max_size=20))
    def parse(lines: list[str]) -> None:
        env = parse_report(lines, "x:1", "sha256:" + "11" * 32)
        assert len(env.distributions) <= len(lines)
        assert all(isinstance(d.name, str) and isinstance(d.version, str) for d in env.distributions)

    parse()


def test_kept_out_cuda_libraries_come_from_the_images_own_cuda() -> None:
    """NGC images have CUDA as system libraries, not nvidia-* wheels: a kept-out CUDA library is
    there when the image has CUDA of its major, a mismatch when of another, missing without CUDA."""
    lock = LOCK + '\n[[package]]\nname = "nvidia-cublas"\nversion = "13.1.0.3"\nsource = { registry = "https://pypi.org/simple" }\n'
    lock += '\n[[package]]\nname = "nvidia-cufft"\nversion = "12.0.0.61"\nsource = { registry = "https://pypi.org/simple" }\n'
    dockerfile = DOCKERFILE.replace("--no-install-package triton", "--no-install-package triton --no-install-package nvidia-cublas --no-install-package nvidia-cufft")
    shipped = dict(torch="2.9.1", triton="3.5.0", numpy="2.4.4")
    assert by_rule(findings(lock=lock, dockerfile=dockerfile, env=image(cuda="13.0.1", **shipped))) == {}
    on_cuda_12 = by_rule(findings(lock=lock, dockerfile=dockerfile, env=image(cuda="12.9.1", **shipped)))
    kept = [f for f in on_cuda_12["image-cuda-mismatch"] if f.file == "docker/Dockerfile.ci.dev"]
    assert len(kept) == 1 and "CUDA 13 library (nvidia-cublas 13.1.0.3" in kept[0].message  # cufft's version does not say its CUDA
    no_cuda = by_rule(findings(lock=lock, dockerfile=dockerfile, env=image(cuda="", **shipped)))
    assert {f.message.split("`")[1] for f in no_cuda["image-kept-out-missing"]} == {"--no-install-package nvidia-cublas", "--no-install-package nvidia-cufft"}
