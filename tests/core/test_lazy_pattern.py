"""LazyPattern: a pattern compiled at its first use, with the compiled pattern's methods."""

from __future__ import annotations

import re

from depsync.core.lazy_pattern import LazyPattern


def test_it_compiles_once_at_first_use_and_answers_as_the_pattern() -> None:
    lazy = LazyPattern(r"(a+)b", re.IGNORECASE)
    assert lazy._compiled is None
    assert lazy.match("AAb").group(1) == "AA"
    first = lazy.compiled()
    assert lazy.sub("x", "ab ab") == "x x" and lazy.compiled() is first
    assert lazy.pattern == r"(a+)b" and lazy.flags & re.IGNORECASE
    assert [m.group(0) for m in lazy.finditer("ab aab")] == ["ab", "aab"]
