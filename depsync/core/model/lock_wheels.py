"""uv.lock's `wheels = [...]` arrays in the form uv writes them, read without the TOML parser (pure).

Three quarters of a large lock's bytes are its wheel lines (1.2 of 1.5 MB, ~3,750 lines on
the Megatron-LM triple): parsing them made a third of a cold `depsync check`. A block that is
exactly uv's form (`wheels = [` on a line of its own, then only lines
`    { url = "…", hash = "sha256:…", size = N, upload-time = "…" },`, then `]`) is cut out of
the text before the TOML parse and kept as its text, a CanonicalWheels; the TOML parser reads
the rest. Anything else (another key order, escapes, a tab, CRLF line ends, a multi-line
string anywhere in the file) leaves the block, or the whole file, to the TOML parser.

Cutting changes nothing the parser would say: each block's lines become one sentinel string
(a random nonce and the block's number) and blank lines, so the line count, every other byte,
and every syntax error outside the blocks stay; the blocks themselves match a pattern of
valid TOML only. A block is put back only where its sentinel parsed as the whole `wheels`
array of a `[[package]]` table; a sentinel found anywhere else, or not found, and the whole
text is parsed as it is. tests/core/test_lock_wheels.py holds the result equal to the TOML
parser's on every lock of the corpora and fixtures and on generated and hostile texts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from depsync.core.lazy_pattern import LazyPattern

# One wheel line as uv writes it. Strings with no escapes, quotes or control characters (so
# the text between the quotes is the value), the digest as uv writes it, a plain decimal size
# well inside TOML's 64-bit integers.
_STRING = r'"[^"\\\x00-\x1f\x7f]*"'
_LINE = (
    rf"    \{{ url = {_STRING}, hash = \"sha256:[0-9a-f]{{64}}\""
    rf"(?:, size = (?:0|[1-9][0-9]{{0,17}}))?(?:, upload-time = {_STRING})? \}},\n"
)
# led by the newline, not `^`: the regex engine then looks for the literal first (a third faster)
_BLOCK = LazyPattern(rf"\nwheels = \[\n((?:{_LINE})+)\](?=\n|\Z)")
_FIELDS = LazyPattern(
    r'    \{ url = "([^"]*)", hash = "([^"]*)"(?:, size = ([0-9]+))?(?:, upload-time = "([^"]*)")? \},\n'
)


class CanonicalWheels(Sequence[dict[str, Any]]):
    """A `wheels` array uv wrote, kept as its lines: the tables are made when asked for. Every
    digest is `sha256:` and 64 lowercase hex digits, every entry a table with a string url."""

    __slots__ = ("_count", "_tables", "text")

    def __init__(self, text: str, count: int | None = None) -> None:
        self.text = text  # the wheel lines, each ending in a newline
        self._count = text.count("\n") if count is None else count
        self._tables: list[dict[str, Any]] | None = None

    def tables(self) -> list[dict[str, Any]]:
        if self._tables is None:
            tables = []
            for match in _FIELDS.finditer(self.text):
                url, digest, size, uploaded = match.groups()
                table: dict[str, Any] = {"url": url, "hash": digest}
                if size is not None:
                    table["size"] = int(size)
                if uploaded is not None:
                    table["upload-time"] = uploaded
                tables.append(table)
            self._tables = tables
        return self._tables

    def plain_file_names(self) -> list[str] | None:
        """The last part of each wheel's url, without making its table; None when a url has
        a query, a fragment or an escape (`?`, `#`, `%`): its file name needs more than that."""
        text = self.text
        if "?" in text or "#" in text or "%" in text:
            return None
        # each line has one `", hash = "` (no value holds a quote): the piece before it ends in
        # the url, whose last part is after the piece's last `/`, unless the url has none (then
        # the part reaches back over its opening quote)
        names = [piece.rpartition("/")[2] for piece in text.split('", hash = "')[:-1]]
        return None if '"' in "".join(names) else names

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        return self.tables()[index]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.tables())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CanonicalWheels):
            return self.text == other.text
        if isinstance(other, list):
            return self.tables() == other
        return NotImplemented

    def __hash__(self) -> int:  # a list is not hashable: neither is this
        raise TypeError("unhashable type: 'CanonicalWheels'")

    def __repr__(self) -> str:
        return repr(self.tables())

    def __reduce__(self) -> tuple[Any, ...]:
        return (CanonicalWheels, (self.text, self._count))


def parse_lock_text(text: str, parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The lock's TOML data as parse(text) gives it, with uv's own `wheels` arrays of
    [[package]] tables as CanonicalWheels. parse is the TOML parser (errors are its own)."""
    if '"""' in text or "'''" in text:  # a multi-line string could hold a line that looks like a block
        return parse(text)
    nonce = os.urandom(12).hex()  # a text cannot spell a sentinel it cannot know
    blocks: list[tuple[str, int]] = []
    parts: list[str] = []
    position = 0
    for match in _BLOCK.finditer(text):
        start, end = match.span(1)
        body = match.group(1)
        lines = body.count("\n")
        parts.append(text[position:start])
        parts.append(f'"{nonce}:{len(blocks)}",' + "\n" * lines)
        blocks.append((body, lines))
        position = end
    if not blocks:
        return parse(text)
    parts.append(text[position:])
    cut = "".join(parts)
    try:
        data = parse(cut)
    except Exception:  # noqa: BLE001  # any error of the parser: it is given again on the text as written
        return parse(text)
    if _put_back(data, blocks, nonce):
        return data
    return parse(text)


def _put_back(data: dict[str, Any], blocks: list[tuple[str, int]], nonce: str) -> bool:
    """Replace each sentinel array of a [[package]]'s wheels by its block; False unless every
    block is put back exactly once, there."""
    packages = data.get("package")
    if not isinstance(packages, list):
        return False
    prefix = f"{nonce}:"
    placed = 0
    for package in packages:
        if not isinstance(package, dict):
            continue
        wheels = package.get("wheels")
        if isinstance(wheels, list) and len(wheels) == 1 and isinstance(wheels[0], str) and wheels[0].startswith(prefix):
            index = int(wheels[0][len(prefix) :])
            if index != placed:  # blocks are cut in file order and packages come in file order
                return False
            package["wheels"] = CanonicalWheels(*blocks[index])
            placed += 1
    return placed == len(blocks)
