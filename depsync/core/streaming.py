"""Pure: a child's output as lines, in bounded memory, with a bounded tail for the error message.

A build backend can write hundreds of MB (or one line without a newline) to uv's stderr.
Lines are handed on as they complete, each cut at MAX_LINE bytes; only the last TAIL_LINES
lines (at most TAIL_BYTES) are kept for the message that says why uv failed.
"""

from __future__ import annotations

from collections import deque

MAX_LINE = 64 * 1024  # bytes of one line handed on; uv's longest real lines are a few hundred
TAIL_LINES = 2000  # what error_summary and the reports can use; uv's own failures are tens of lines
TAIL_BYTES = 1024 * 1024
CUT_MARK = b" [... line cut]"


class LineSplitter:
    """Bytes as they come -> complete lines (without the newline), each at most MAX_LINE bytes."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._cut = False

    def _add(self, piece: bytes) -> None:
        room = self.max_line - self._size
        if room > 0 and piece:
            kept = piece[:room]
            self._parts.append(kept)
            self._size += len(kept)
        if len(piece) > max(room, 0):
            self._cut = True

    def _take(self) -> bytes:
        line = b"".join(self._parts) + (CUT_MARK if self._cut else b"")
        self._parts, self._size, self._cut = [], 0, False
        return line

    def feed(self, chunk: bytes) -> list[bytes]:
        lines = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._add(chunk[start:end])
            lines.append(self._take())
            start = end + 1
        self._add(chunk[start:])
        return lines

    def close(self) -> bytes | None:
        """What is left after the last newline, if anything."""
        return self._take() if self._parts or self._cut else None


class Tail:
    """The last lines of a stream, bounded in count and bytes; says how many came before."""

    def __init__(self, max_lines: int = TAIL_LINES, max_bytes: int = TAIL_BYTES) -> None:
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self._lines: deque[str] = deque()
        self._size = 0
        self.dropped = 0

    def append(self, line: str) -> None:
        self._lines.append(line)
        self._size += len(line)
        while len(self._lines) > self.max_lines or (self._size > self.max_bytes and len(self._lines) > 1):
            self._size -= len(self._lines.popleft())
            self.dropped += 1

    def lines(self) -> list[str]:
        return list(self._lines)

    def text(self) -> str:
        head = [f"[... {self.dropped} earlier line(s) not kept]"] if self.dropped else []
        return "\n".join(head + list(self._lines))
