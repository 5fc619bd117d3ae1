"""did_you_mean (core/findings.py): the same build of another CUDA first, then difflib's closest
spelling at 0.8, then a transposition; its length filter never changes difflib's answer."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from depsync.core.findings import did_you_mean

NAMES = st.text(alphabet="abcdeft-_.0123456789", min_size=1, max_size=14)


def test_the_same_package_for_another_build_comes_first() -> None:
    assert did_you_mean("nvidia-cublas-cu12", ["nvidia-cublas", "nvidia-cublas-cu13", "numpy"]) in ("nvidia-cublas", "nvidia-cublas-cu13")
    assert did_you_mean("torchvision", ["torch", "numpy"]) is None  # 0.8, not difflib's 0.6
    assert did_you_mean("transfomers", ["transformers", "tokenizers"]) == "transformers"
    assert did_you_mean("dve", ["dev", "main"]) == "dev"  # a transposition


@settings(max_examples=400, deadline=None)
@given(NAMES, st.lists(NAMES, max_size=30))
def test_the_spelling_guess_is_difflibs(name: str, pool: list[str]) -> None:
    # names whose stem differs from name's: the spelling step decides, as difflib alone would
    from depsync.core.findings import _stem

    others = sorted({c for c in pool if c != name and _stem(c) != _stem(name)})
    close = difflib.get_close_matches(name, others, n=1, cutoff=0.8)
    guess = did_you_mean(name, others)
    if close:
        assert guess == close[0]
    else:
        assert guess is None or sorted(guess.lower()) == sorted(name.lower())
