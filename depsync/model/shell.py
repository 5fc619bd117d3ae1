"""Just enough POSIX shell to find `uv` commands in RUN instructions, with line numbers.

Splits a script into simple commands (on newlines, `;`, `&&`, `||`, `|`, `&`, parens),
each a list of words that remember the line they start on and whether they were
quoted; `expand` substitutes variables within the caps of depsync/limits.py (the
input is untrusted: doubling ARGs reach megabytes in a few lines). Nothing here ever
runs a shell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from depsync import limits

_OPERATORS = ("&&", "||", ";;", ";", "|", "&", "(", ")", "{", "}")
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "time", "exec", "sudo", "env", "command"}


@dataclass(frozen=True)
class Word:
    text: str  # quotes removed, variable references kept as written
    line: int
    quoted: bool  # some part was quoted: no word splitting after expansion


def split_commands(script: str, first_line: int = 1) -> list[list[Word]]:
    """Simple commands of a script; continuation lines and comments handled."""
    commands: list[list[Word]] = []
    current: list[Word] = []
    word: list[str] = []
    word_line = first_line
    quoted = False
    in_word = False
    line = first_line
    i, n = 0, len(script)

    def end_word() -> None:
        nonlocal word, in_word, quoted
        if in_word:
            current.append(Word("".join(word), word_line, quoted))
        word, in_word, quoted = [], False, False

    def end_command() -> None:
        nonlocal current
        end_word()
        if current:
            commands.append(current)
        current = []

    while i < n:
        ch = script[i]
        if ch == "\\" and i + 1 < n:
            if script[i + 1] == "\n":  # line continuation
                i += 2
                line += 1
                continue
            if not in_word:
                in_word, word_line = True, line
            word.append(script[i + 1])
            quoted = True
            i += 2
            continue
        if ch in "'\"":
            if not in_word:
                in_word, word_line = True, line
            quoted = True
            end = i + 1
            while end < n and script[end] != ch:
                if ch == '"' and script[end] == "\\" and end + 1 < n:
                    end += 1
                end += 1
            body = script[i + 1 : end]
            line += body.count("\n")
            word.append(body)
            i = end + 1
            continue
        if ch == "#" and not in_word:
            while i < n and script[i] != "\n":
                i += 1
            continue
        if ch == "\n":
            end_command()
            line += 1
            i += 1
            continue
        if ch in " \t":
            end_word()
            i += 1
            continue
        if ch == "$" and script.startswith("$(", i) or ch == "$" and script.startswith("${", i):
            # keep ${...} and $(...) inside the word as written
            close = "}" if script[i + 1] == "{" else ")"
            end = script.find(close, i + 2)
            end = n - 1 if end < 0 else end
            if not in_word:
                in_word, word_line = True, line
            word.append(script[i : end + 1])
            i = end + 1
            continue
        operator = next((op for op in _OPERATORS if script.startswith(op, i)), None)
        if operator and not (operator in "{}" and in_word):
            end_command()
            i += len(operator)
            continue
        if not in_word:
            in_word, word_line = True, line
        word.append(ch)
        i += 1
    end_command()
    return [_strip_keywords(c) for c in commands if _strip_keywords(c)]


def _strip_keywords(command: list[Word]) -> list[Word]:
    """Drop leading shell keywords and wrappers (`then`, `time`, `sudo`, ...)."""
    start = 0
    while start < len(command) and command[start].text in _KEYWORDS and not command[start].quoted:
        start += 1
    return command[start:]


_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def assignment(word: Word) -> tuple[str, str] | None:
    match = _ASSIGNMENT.match(word.text)
    return (match.group(1), match.group(2)) if match else None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# `${NAME<op>word}` operators the expander understands, longest first
_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")


@dataclass
class ExpansionBudget:
    """What all expansions of one file may spend together (limits.py says why these caps)."""

    steps: int = field(default_factory=lambda: limits.MAX_EXPANSION_STEPS)
    bytes: int = field(default_factory=lambda: limits.MAX_EXPANSION_TOTAL_BYTES)


@dataclass(frozen=True)
class Expansion:
    text: str
    unresolved: tuple[str, ...] = ()
    capped: bool = False  # a cap was hit: text is the input as written, `unresolved` names where


class _Capped(Exception):
    """Unwinds an expansion that went past a cap (caught in expand_bounded)."""


def expand_bounded(text: str, variables: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> Expansion:
    """Expand $VAR, ${VAR} and ${VAR<op>word} (op: :- - := = :+ + :? ?, word nested), within caps.

    A variable missing from `variables` counts as unset for the operator forms (`${A:-x}`
    gives x) and as unresolved when used plainly. A variable mapped to None is known to
    exist but to have no single value (assigned differently on different paths): it is
    unresolved, never guessed, and the reference stays as written. Other `${...}` forms
    (`${A%x}`, `${#A}`) stay as written.

    Bounded: the substituted bytes of this one value stay under MAX_EXPANSION_BYTES,
    nesting under MAX_EXPANSION_DEPTH, and every substitution is charged to `budget`
    (one per file). Past any cap the whole value is returned as written, `capped`, with
    the variable that broke the cap among `unresolved`: the caller reports it, as any
    value it cannot resolve.
    """
    expander = _Expander(variables, budget if budget is not None else ExpansionBudget())
    try:
        out = expander.word(text, 0)
    except _Capped:
        return Expansion(text, tuple(expander.unresolved), capped=True)
    return Expansion(out, tuple(expander.unresolved))


def expand(text: str, variables: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> tuple[str, list[str]]:
    """expand_bounded as (text, names that could not be resolved)."""
    result = expand_bounded(text, variables, budget)
    return result.text, list(result.unresolved)


class _Expander:
    """One bounded expansion; `unresolved` collects names in the order met."""

    def __init__(self, variables: Mapping[str, str | None], budget: ExpansionBudget) -> None:
        self.variables, self.budget = variables, budget
        self.unresolved: list[str] = []
        self.substituted = 0  # bytes put in by substitutions, for MAX_EXPANSION_BYTES

    def word(self, text: str, depth: int) -> str:
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            dollar = text.find("$", i)
            if dollar < 0:
                out.append(text[i:])
                break
            out.append(text[i:dollar])
            if text.startswith("${", dollar):
                close = _closing_brace(text, dollar + 2)
                if close == _TOO_DEEP:
                    name = _NAME.match(text, dollar + 2)
                    self.unresolved.append(name.group(0) if name else text[dollar : dollar + 8])
                    raise _Capped
                if close < 0:  # unterminated: literal, as the shell would complain
                    out.append(text[dollar:])
                    break
                out.append(self.braced(text[dollar + 2 : close], text[dollar : close + 1], depth))
                i = close + 1
                continue
            name = _NAME.match(text, dollar + 1)
            if name is None:  # `$1`, `$$`, a lone `$`: left as written
                out.append("$")
                i = dollar + 1
                continue
            out.append(self.lookup(name.group(0), text[dollar : name.end()]))
            i = name.end()
        return "".join(out)

    def braced(self, body: str, written: str, depth: int) -> str:
        name_match = _NAME.match(body)
        if name_match is None:
            return written
        name, rest = name_match.group(0), body[name_match.end() :]
        if not rest:
            return self.lookup(name, written)
        op = next((o for o in _OPS if rest.startswith(o)), None)
        if op is None:
            return written  # ${A%x}, ${A:1:2}, ...: not expanded, as before
        self.charge(name, 0)
        if depth + 1 > limits.MAX_EXPANSION_DEPTH:
            self.unresolved.append(name)
            raise _Capped
        known, value = name in self.variables, self.variables.get(name)
        if known and value is None:
            self.unresolved.append(name)
            return written
        empty_is_unset = op.startswith(":")
        is_set = known and not (empty_is_unset and value == "")
        if op.lstrip(":") in ("-", "="):
            return self.take(name, value) if is_set else self.word(rest[len(op) :], depth + 1)
        if op.lstrip(":") == "+":
            return self.word(rest[len(op) :], depth + 1) if is_set else ""
        # `?`: the build fails when unset; depsync reports it instead
        if is_set:
            return self.take(name, value)
        self.unresolved.append(name)
        return written

    def lookup(self, name: str, written: str) -> str:
        self.charge(name, 0)
        value = self.variables.get(name)
        if value is None:
            self.unresolved.append(name)
            return written
        return self.take(name, value)

    def take(self, name: str, value: str | None) -> str:
        value = value or ""
        if value:
            self.charge(name, len(value))
        return value

    def charge(self, name: str, size: int) -> None:
        """Count one substitution step (size 0) or size substituted bytes; past a cap, stop."""
        budget = self.budget
        if size == 0:
            budget.steps -= 1
        else:
            budget.bytes -= size
            self.substituted += size
        if budget.steps < 0 or budget.bytes < 0 or self.substituted > limits.MAX_EXPANSION_BYTES:
            self.unresolved.append(name)
            raise _Capped


_TOO_DEEP = -2


def _closing_brace(text: str, start: int) -> int:
    """Index of the `}` closing a `${` whose body starts at start (nested `${...}` skipped).

    -1 when it is unterminated, _TOO_DEEP as soon as the braces nest deeper than any
    expansion would follow (so a megabyte of `${A:-${A:-...` is not scanned level by level).
    """
    depth = 1
    i = start
    while True:
        close = text.find("}", i)
        if close < 0:
            return -1
        depth += text.count("${", i, close)  # every opening before this `}`
        if depth > limits.MAX_EXPANSION_DEPTH + 1:  # op forms nest MAX levels, a plain ${A} one more
            return _TOO_DEEP
        depth -= 1
        if depth == 0:
            return close
        i = close + 1
