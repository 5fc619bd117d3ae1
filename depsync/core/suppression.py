"""Inline suppressions: `# depsync: ignore[rule-id, ...]` in pyproject.toml and Dockerfiles (pure).

Like ruff's `# noqa: CODE`, a comment names the rules it silences for one place, and one that
silences nothing is itself reported (`unused-suppression`), so stale comments do not pile up.
Only the comment's text is read: nothing in it is run, and what it names reaches a report only
as a quoted, escaped, shortened id.

Where a comment counts (docs/configuration.md says the same to users):

- pyproject.toml: trailing a line (`"torch>=2.6",  # depsync: ignore[lock-stale]`), for the
  findings on that line; or alone on a line, for the findings on the next line that is not a
  comment. A `#` inside a string is not a comment.
- Dockerfile: alone on a line, for the next line that is not a comment; when that line starts
  an instruction, for every line of the instruction (a `RUN` with a heredoc included). Inside a
  `\\` continuation BuildKit drops comment lines, so the same comment can sit directly above a
  flag's line. Trailing a line only where the shell reads it as a comment: the last line of a
  shell-form `RUN`, or a line of a heredoc script (not one ending in `\\`). Docker itself has
  no trailing comments: after `ARG`, `FROM` or an exec-form `RUN` the text is part of the
  instruction, so such a comment suppresses nothing and is reported as misplaced.

uv.lock has no suppressions: it is generated, never edited by hand.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from depsync.core.findings import Finding, Severity
from depsync.core.lazy_pattern import LazyPattern
from depsync.records import record

RULE = "unused-suppression"
_COMMENT = LazyPattern(r"#\s*depsync:\s*ignore\[([^\]\n]{0,400})\]")
_SHOWN = 60  # characters of an id quoted in a report


@record
class Suppression:
    file: str
    line: int  # the comment's line
    rules: tuple[str, ...]
    first: int  # the lines whose findings it silences (0, 0: none, a misplaced comment)
    last: int
    misplaced: str = ""  # why the comment cannot count here (reported, never honoured)

    def covers(self, finding: Finding) -> bool:
        return finding.file == self.file and self.first <= finding.line <= self.last and finding.rule in self.rules


@record
class Suppressed:
    """A finding an inline comment silenced: -v lists it, no count or exit code sees it."""

    finding: Finding
    comment_line: int


def rule_ids(inside: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in inside.split(",") if part.strip())


def _quoted(rule: str) -> str:
    return repr(rule[:_SHOWN])  # repr: control characters come out escaped


# -- pyproject.toml -------------------------------------------------------------------------------


def _toml_comment(line: str, in_multiline: str) -> tuple[int | None, str]:
    """(index of the `#` that starts a comment on this line or None, the multi-line string
    delimiter still open after it or "")."""
    i, quote = 0, in_multiline
    while i < len(line):
        if quote:
            if quote in ('"""', '"') and line[i] == "\\":
                i += 2
                continue
            if line.startswith(quote, i):
                i += len(quote)
                quote = ""
                continue
            i += 1
            continue
        char = line[i]
        if char == "#":
            return i, ""
        for delimiter in ('"""', "'''", '"', "'"):
            if line.startswith(delimiter, i):
                quote = delimiter
                i += len(delimiter)
                break
        else:
            i += 1
    return None, quote if quote in ('"""', "'''") else ""


def toml_suppressions(text: str, path: str) -> list[Suppression]:
    lines = text.splitlines()
    found: list[Suppression] = []
    pending: list[tuple[int, tuple[str, ...]]] = []  # whole-line comments waiting for their line
    open_string = ""
    for number, line in enumerate(lines, 1):
        was_open = bool(open_string)
        start, open_string = _toml_comment(line, open_string)
        whole_line = start is not None and not was_open and not line[:start].strip()
        match = _COMMENT.search(line, start) if start is not None else None
        if whole_line:
            if match:
                pending.append((number, rule_ids(match.group(1))))
            continue
        if not line.strip():
            found += [Suppression(path, at, rules, 0, 0, "no line follows it directly (a blank line does)") for at, rules in pending]
        else:
            found += [Suppression(path, at, rules, number, number) for at, rules in pending]
        pending = []
        if match:
            found.append(Suppression(path, number, rule_ids(match.group(1)), number, number))
    found += [Suppression(path, at, rules, 0, 0, "no line follows it") for at, rules in pending]
    return found


# -- Dockerfile -----------------------------------------------------------------------------------


def dockerfile_suppressions(
    lines: Sequence[str], path: str, instructions: Iterable[tuple[int, int]], shell_lines: Collection[int], script_lines: Collection[int] = ()
) -> list[Suppression]:
    """instructions: (first, last) line of each; shell_lines: the lines on which a trailing `#`
    is a shell comment; script_lines: the lines of heredoc scripts (the model knows both:
    depsync/core/model/dockerfile.py)."""
    span_of = {first: last for first, last in instructions}
    found: list[Suppression] = []
    pending: list[tuple[int, tuple[str, ...]]] = []
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        match = _COMMENT.search(line)
        if stripped.startswith("#"):
            if match and match.start() == line.index("#"):
                if number in script_lines and number > 1 and lines[number - 2].rstrip().endswith("\\"):
                    # bash joins the `\` line with this one: the comment would end the command
                    found.append(Suppression(path, number, rule_ids(match.group(1)), 0, 0,
                                             "inside a script's `\\` continuation a comment line ends the shell command"))
                else:
                    pending.append((number, rule_ids(match.group(1))))
            continue
        if not stripped:
            found += [Suppression(path, at, rules, 0, 0, "no line follows it directly (a blank line does)") for at, rules in pending]
        else:
            last = span_of.get(number, number)
            found += [Suppression(path, at, rules, number, last) for at, rules in pending]
        pending = []
        if match:
            if number in shell_lines:
                found.append(Suppression(path, number, rule_ids(match.group(1)), number, number))
            else:
                found.append(
                    Suppression(path, number, rule_ids(match.group(1)), 0, 0,
                                "Docker reads no trailing comment on this line (the text is part of the instruction)")
                )
    found += [Suppression(path, at, rules, 0, 0, "no line follows it") for at, rules in pending]
    return found


# -- applying them --------------------------------------------------------------------------------


def apply(findings: Iterable[Finding], suppressions: Sequence[Suppression], known: Collection[str]) -> tuple[list[Finding], list[Suppressed], list[Finding]]:
    """(findings left, findings suppressed, unused-suppression findings): one unused finding
    per rule id of a comment that silenced nothing (a misplaced comment, an unknown id)."""
    from depsync.core.config import suggestion

    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[tuple[str, int, str]] = set()
    for finding in findings:
        by = next((s for s in suppressions if not s.misplaced and s.covers(finding)), None)
        if by is None:
            kept.append(finding)
            continue
        suppressed.append(Suppressed(finding, by.line))
        used.add((by.file, by.line, finding.rule))
    unused: list[Finding] = []
    for s in suppressions:
        if not s.rules:
            unused.append(_unused(s, "names no rule id", "remove the comment, or name the rule: `# depsync: ignore[rule-id]`"))
        for rule in s.rules:
            if (s.file, s.line, rule) in used:
                continue
            if rule not in known:
                why = f"names no rule: {_quoted(rule)}{suggestion(rule, known)} (`depsync rule --all` lists them)"
            elif s.misplaced:
                why = f"cannot suppress {rule} here: {s.misplaced}"
            else:
                where = f"line {s.first}" if s.first == s.last else f"lines {s.first}-{s.last}"
                why = f"suppresses nothing: no {rule} finding on {where}"
            if s.misplaced and rule in known:
                fix = "move the comment alone onto the line above the instruction (it then covers the whole instruction)"
            elif len(s.rules) == 1:
                fix = "remove the comment"
            else:
                fix = f"remove {_quoted(rule)} from the comment"
            unused.append(_unused(s, why, fix))
    return kept, suppressed, unused


def _unused(s: Suppression, why: str, fix: str) -> Finding:
    return Finding(s.file, s.line, RULE, Severity.WARNING, f"`# depsync: ignore[...]` {why}", fix)
