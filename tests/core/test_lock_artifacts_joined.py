"""The joined tests of a lock's artifacts (hashes, wheel names) say what the per-artifact tests say.

integrity.check tests all sha256 hashes of a lock, and each package's wheel names, on one joined
string first (a lock has ~4,000 artifacts); only when that fails are the artifacts tested one by
one. Real input: Megatron-LM dev's lock, as is and with one artifact broken in each way.
"""

from __future__ import annotations

import pytest
from conftest import megatron

from depsync.core.config import Config
from depsync.core.model.lock import Lock
from depsync.core.model.pyproject import Pyproject
from depsync.core.rules import integrity
from depsync.core.rules.inputs import CheckInputs

GOOD = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    "digests",
    [
        [GOOD],
        [GOOD, "sha256:" + "f" * 64, GOOD],
        [GOOD, GOOD.upper()],
        [GOOD, "sha256:" + "a" * 63],
        [GOOD, "sha256:" + "a" * 65],
        ["sha256:" + "a" * 63, "sha256:" + "a" * 65],  # lengths that add up
        [GOOD[:70] + "\n", GOOD],
        ["0" + GOOD[:70], GOOD],
        [GOOD, "sha384:" + "a" * 96],  # well formed, but not the common shape
        ["md5:" + "a" * 32],
        ["sha256:" + "g" * 64],
        ["sha256:" + "a" * 63 + "\u00e9"],
        ["sha256;" + "a" * 64],
        ["sha256:sha256:" + "a" * 57],
        [GOOD, 12],
        [],
    ],
)
def test_joined_hashes_agree_with_each_hash(digests: list[object]) -> None:
    each = bool(digests) and all(integrity.well_formed_hash(d) for d in digests)
    joined = integrity.all_plain_sha256(digests)
    # True only when every digest is plain sha256; False may still be all well formed (then each is tested)
    assert not joined or each
    assert joined == (bool(digests) and all(isinstance(d, str) and d.startswith("sha256:") and integrity.well_formed_hash(d) for d in digests))


PREFIX = integrity.wheel_prefix("nvidia-cudnn-cu12", "9.1.0")
URL = "https://files.example/packages/ab/cd/"


@pytest.mark.parametrize(
    ("wheels", "expected"),
    [
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-manylinux2014_x86_64.whl"}], True),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-1-py3-none-any.whl"}, {"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl"}], True),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none.whl"}], False),  # too few tags
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.1-py3-none-any.whl"}], False),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.tar.gz"}], False),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-x/other-py3-none-any.whl"}], False),  # the prefix is not the file's
        ([{"url": URL + "Nvidia_Cudnn_cu12-9.1.0-py3-none-any.whl"}], False),  # the per-wheel test decides
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl?x=1"}], False),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl#sha256=00"}], False),
        ([{"url": URL + "nvidia%5Fcudnn_cu12-9.1.0-py3-none-any.whl"}], False),
        ([{"url": URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl\n" + URL + "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl"}], False),
        ([{"filename": "nvidia_cudnn_cu12-9.1.0-py3-none-any.whl", "url": URL + "x.whl"}], False),
        ([{"path": "wheels/nvidia_cudnn_cu12-9.1.0-py3-none-any.whl"}], False),
        ([{"url": 3}], False),
    ],
)
def test_joined_wheel_names(wheels: list[dict[str, object]], expected: bool) -> None:
    assert PREFIX is not None
    assert integrity.wheels_named(wheels, PREFIX) is expected


def test_wheel_prefix() -> None:
    assert integrity.wheel_prefix("nvidia-cudnn-cu12", "9.1.0") == "nvidia_cudnn_cu12-9.1.0-"
    assert integrity.wheel_prefix("torch", None) is None
    assert integrity.wheel_prefix("odd", "1.0-1") is None  # a dash in the version: no unambiguous prefix


def _one_by_one(lock: Lock) -> list[object]:
    """What integrity.check reports, every artifact tested on its own (no joined test)."""
    return [f for p in lock.packages for f in integrity._check_artifacts(lock, p, integrity._artifacts(p), False)]


@pytest.mark.parametrize(
    ("old", "new", "count"),
    [
        ("", "", 0),
        ("sha256:", "sha256:0", 1),  # one hash too long
        ("sha256:", "SHA256:", 7),  # one bad hash, far into the lock
        ("-py3-none-any.whl", "-py3-none.whl", 1),  # one wheel with too few tags
        ("torch-2.", "torch-9.", 1),  # a wheel of another version
    ],
)
def test_findings_on_the_real_lock_are_the_per_artifact_ones(old: str, new: str, count: int) -> None:
    text = megatron("dev", "uv.lock")
    if old:
        pieces = text.split(old)  # the count-th occurrence only
        text = old.join(pieces[:count]) + new + old.join(pieces[count:])
    lock = Lock.from_text(text)
    inputs = CheckInputs(Config(), Pyproject.from_text(megatron("dev", "pyproject.toml")), lock)
    found = [f for f in integrity.check(inputs) if f.rule in ("lock-bad-hash", "lock-artifact-mismatch")]
    assert found == _one_by_one(lock)
    assert bool(found) == bool(old)
