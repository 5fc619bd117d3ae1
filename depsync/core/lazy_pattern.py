"""Regular expressions compiled at their first use (pure).

A cold `depsync check` defines about sixty module-level patterns and, on a usual project, uses
two thirds of them; compiling one costs 0.05 to 0.5 ms. A pattern a run may well not need (an
error's message, another output format, syntax few files have) is a LazyPattern: the methods of
the compiled pattern, which is compiled when the first one is called.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    __slots__ = ("_compiled", "_flags", "_text")

    def __init__(self, text: str, flags: int = 0) -> None:
        self._text = text
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._text, self._flags)
        return self._compiled

    def __getattr__(self, name: str) -> Any:  # match, search, sub, finditer, pattern, ...
        return getattr(self.compiled(), name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._text!r})"
