"""What the user asked of the output: colour (`--color`, NO_COLOR, FORCE_COLOR) and how much
depsync says on stderr (`-q`, `-v`). Set once by the CLI, read by every renderer.

Colour, in order: `--color always|never`; then NO_COLOR (set and not empty: no colour,
https://no-color.org); then FORCE_COLOR (set: colour even into a pipe); then whether the
stream is a terminal. The CLI also writes the decision back to the environment, so every
rich Console, whichever module makes it, follows it (rich reads both variables), and so
does a child that honours them; uv is always run with NO_COLOR=1 (its output is parsed).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

COLOR_CHOICES = ("auto", "always", "never")

_color = "auto"
_verbosity = 0  # -1: -q, 0: default, 1+: -v


def configure(color: str = "auto", verbosity: int = 0) -> None:
    global _color, _verbosity
    _color, _verbosity = color, verbosity
    if color == "never":
        os.environ["NO_COLOR"] = "1"
        os.environ.pop("FORCE_COLOR", None)
    elif color == "always":
        os.environ.pop("NO_COLOR", None)
        os.environ["FORCE_COLOR"] = "1"


def color(stream: TextIO | None = None) -> bool:
    """Whether to colour what goes to stream (stdout by default)."""
    if _color != "auto":
        return _color == "always"
    if os.environ.get("NO_COLOR", ""):
        return False
    if "FORCE_COLOR" in os.environ:
        return True
    target = stream if stream is not None else sys.stdout
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):
        return False


def quiet() -> bool:
    return _verbosity < 0


def verbose() -> bool:
    return _verbosity > 0


def note(message: str) -> None:
    """An informational line on stderr (`depsync: ...`), left out with -q."""
    if _verbosity >= 0:
        print(f"depsync: {message}", file=sys.stderr)


def detail(message: str) -> None:
    """A line only -v shows."""
    if _verbosity > 0:
        print(f"depsync: {message}", file=sys.stderr)
