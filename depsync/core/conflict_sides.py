"""The two sides of a file git left with conflict markers (pure).

A conflicted Python file does not parse, but it is still the code of both branches: each
side's text, with the other side's lines and the marker lines blanked so every line keeps its
number, parses on its own. Markers are git's: `<<<<<<<`, `|||||||` (diff3's base), `=======`,
`>>>>>>>`, seven or more characters at the start of a line, in that order.
"""

from __future__ import annotations

_START, _BASE, _SEPARATOR, _END = b"<" * 7, b"|" * 7, b"=" * 7, b">" * 7


def conflict_sides(data: bytes) -> tuple[bytes, bytes] | None:
    """(ours, theirs) with line numbers kept; None when the file has no complete conflict."""
    if _START not in data:
        return None
    ours: list[bytes] = []
    theirs: list[bytes] = []
    state = "both"  # both, ours, base, theirs
    found = False
    for line in data.split(b"\n"):
        if state == "both" and line.startswith(_START):
            state, found = "ours", True
        elif state == "ours" and line.startswith(_BASE):
            state = "base"
        elif state in ("ours", "base") and line.startswith(_SEPARATOR):
            state = "theirs"
        elif state == "theirs" and line.startswith(_END):
            state = "both"
        else:
            ours.append(line if state in ("both", "ours") else b"")
            theirs.append(line if state in ("both", "theirs") else b"")
            continue
        ours.append(b"")  # a marker line: blank on both sides
        theirs.append(b"")
    if not found or state != "both":
        return None
    return b"\n".join(ours), b"\n".join(theirs)
