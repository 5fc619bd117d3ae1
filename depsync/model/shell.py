"""Just enough POSIX shell to find `uv` commands in RUN instructions, with line numbers.

Splits a script into simple commands (on newlines, `;`, `&&`, `||`, `|`, `&`, parens),
each a list of words that remember the line they start on and whether they were
quoted. Variable expansion is left to the caller. Nothing here ever runs a shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def expand(text: str, variables: dict[str, str | None]) -> tuple[str, list[str]]:
    """Expand $VAR, ${VAR}, ${VAR:-default}. Returns the text and the names that could not be resolved.

    A variable mapped to None is known to exist but to have no single value
    (assigned differently on different paths): it is unresolved, never guessed.
    """
    unresolved: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(4)
        op, default = match.group(2), match.group(3) or ""
        value = variables.get(name)
        if op in (":-", "-", ":=", "="):
            if name not in variables or (op.startswith(":") and value == ""):
                return default
        if name not in variables or value is None:
            unresolved.append(name)
            return match.group(0)
        return value

    return _VARIABLE.sub(replace, text), unresolved
