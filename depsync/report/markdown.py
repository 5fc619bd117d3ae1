"""Pure: repository text made inert for each Markdown sink (PR body, job summary).

Everything shown comes from whoever landed a PR: source keys, revs, package names, finding
messages. Each sink gets its own escape, never raw text:

- `text`: prose in a table cell or a list item. Markdown and HTML punctuation is
  backslash-escaped (no link, image, emphasis or tag can start), `@` cannot start a
  mention, and every control character is gone (a bare CR plus `<!--` hid the rest of a
  body; `\r::warning` became a workflow command in the job log).
- `code`: a code span: inert by construction (no HTML, no mention, no link), fenced with
  more backticks than the value has in a row; `|` escaped so a table keeps its columns.
- `link`: a link target, only from a closed character set (no `(`, `)`, `<`, spaces).

And for a CI log, which is no Markdown but is read for workflow commands: `log_line`, `log_text`.
"""

from __future__ import annotations

from depsync.core.lazy_pattern import LazyPattern

# C0 (tab and newline become spaces below), DEL, C1, and the bidirectional overrides that
# make text display in another order than it is read
_CONTROL = LazyPattern("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MARKDOWN = LazyPattern(r"([\\`*_\[\]|<>~&])")  # `(` and `!` need a `[` to matter: it is escaped
_LINE_START = LazyPattern(r"^(\d{0,9})([.)+-]|#{1,6})(?= |$)")  # `1. `, `# `, `- `: a list or a heading when first
_TICKS = LazyPattern(r"`+")
_LINK = LazyPattern(r"https://[A-Za-z0-9._~/:%#+-]+(?:\.\.\.[A-Za-z0-9._~/+-]+)?")
_MENTION = LazyPattern(r"(?<![A-Za-z0-9])@")  # after a letter or digit (an e-mail, `repo@rev`) it is none
_WORD_JOINER = "\u2060"  # invisible; keeps `@team` from being read as a mention


def clean(value: object) -> str:
    """One line without control characters: for any text sink (a log line, a cell)."""
    return " ".join(_CONTROL.sub("", str(value)).split())


def log_line(value: object) -> str:
    """One line of a CI log that GitHub never reads as a workflow command: no control character,
    no `::` first (the runner reads one after any leading whitespace, so a space before it is no
    escape) and no `##[` anywhere (the older form, read mid-line: `##[stop-commands]` would switch
    the step's commands off). Both are broken by a space: `: :error::`, `## [error]`."""
    line = without_legacy_commands(" ".join(_CONTROL.sub("", str(value)).splitlines()))
    start = len(line) - len(line.lstrip())
    return line[:start] + ": :" + line[start + 2:] if line.startswith("::", start) else line


def without_legacy_commands(text: str) -> str:
    """text with no `##[` (GitHub's older workflow commands, read anywhere in a line)."""
    return text.replace("##[", "## [")


def log_text(text: str) -> str:
    """Text (a git log, a tool's output) for a CI log, each of its lines made a log_line."""
    return "".join(log_line(line) + "\n" for line in text.splitlines())


def text(value: object) -> str:
    escaped = _LINE_START.sub(r"\1\\\2", _MARKDOWN.sub(r"\\\1", clean(value)))
    return _MENTION.sub("@" + _WORD_JOINER, escaped)


def code(value: object) -> str:
    inner = clean(value).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _TICKS.findall(inner)), default=0) + 1)
    if inner.startswith(("`", " ")) or inner.endswith(("`", " ")) or not inner:
        inner = f" {inner} "
    return f"{fence}{inner}{fence}"


def link(url: str) -> str | None:
    """url when it is a plain https URL of the closed set, else None (shown without a link)."""
    return url if _LINK.fullmatch(url) else None
