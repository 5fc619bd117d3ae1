"""Just enough POSIX shell to find `uv` commands in RUN instructions, with line numbers.

Splits a script into simple commands (on newlines, `;`, `&&`, `||`, `|`, `&`, parens),
each a list of words that remember the line they start on, whether they were quoted
and which of their parts are literal (single quotes, backslash escapes: never
expanded). Redirections are taken out of the words; a here-document (`<<EOF`) or a
here-string (`<<<`) on standard input is kept with its command, because `bash <<EOF`
runs it. `expand_bounded`/`expand_word` substitute variables within the caps of
depsync/limits.py (the input is untrusted: doubling ARGs reach megabytes in a few
lines). Nothing here ever runs a shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from depsync.core import limits
from depsync.core.lazy_pattern import LazyPattern

_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")", "{", "}")
_PLAIN = re.compile(r"[^\s\\'\"$`#<>&|;(){}]+")  # characters with no meaning to the splitter
# words that open or close a compound command: the simple command starts after them
_KEYWORDS = {"then", "do", "else", "elif", "if", "while", "until", "!", "fi", "done", "esac"}
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", "<&", "<>", "<", ">>", ">&", ">|", ">")


class Word:
    """One shell word. A plain class, not a dataclass: thousands are made per file, and a
    dataclass costs its module ~1 ms to define at import (the check's start-up budget)."""

    __slots__ = ("text", "line", "quoted", "parts")

    def __init__(self, text: str, line: int, quoted: bool, parts: tuple[tuple[str, bool], ...] = ()) -> None:
        self.text = text  # quotes removed, variable references kept as written
        self.line = line
        self.quoted = quoted  # some part was quoted: no word splitting after expansion
        # (text, expandable) pieces of text; () is one expandable piece. Single-quoted and
        # backslash-escaped text is literal: `'$X'` is the three characters, not a reference.
        self.parts = parts

    def __repr__(self) -> str:
        return f"Word({self.text!r}, {self.line}, {self.quoted})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Word) and (self.text, self.line, self.quoted, self.segments()) == (other.text, other.line, other.quoted, other.segments())

    def __hash__(self) -> int:
        return hash((self.text, self.line, self.quoted))

    def segments(self) -> tuple[tuple[str, bool], ...]:
        return self.parts or ((self.text, True),)

    def after(self, count: int) -> Word:
        """The word without its first count characters (the value of `NAME=value`)."""
        parts: list[tuple[str, bool]] = []
        for text, expandable in self.segments():
            if count >= len(text):
                count -= len(text)
                continue
            parts.append((text[count:], expandable))
            count = 0
        return Word("".join(t for t, _ in parts), self.line, self.quoted, tuple(parts))


class Command(list[Word]):
    """A simple command's words; `stdin` is the here-document or here-string it reads, with its first line."""

    stdin: tuple[str, int] | None = None


def split_commands(script: str, first_line: int = 1, heredoc_bodies: list[tuple[str, int]] | None = None) -> list[Command]:
    """Simple commands of a script; continuation lines, comments, quotes and here-documents handled.

    heredoc_bodies: here-document bodies already cut out of the text (BuildKit does that for
    a RUN line), handed to the `<<` redirections in order; None reads them from the script.
    """
    return _Splitter(script, first_line, heredoc_bodies).run()


class _Splitter:
    def __init__(self, script: str, first_line: int, bodies: list[tuple[str, int]] | None) -> None:
        self.s, self.n = script, len(script)
        self.line = first_line
        self.bodies: Iterator[tuple[str, int]] | None = iter(bodies) if bodies is not None else None
        self.commands: list[Command] = []
        self.current = Command()
        self.parts: list[tuple[str, bool]] = []
        self.in_word = False
        self.word_line = first_line
        self.quoted = False
        self.redirect: str | None = None  # operator whose target word comes next
        self.redirect_fd = 0
        self.pending: list[tuple[str, bool, Command, int]] = []  # here-documents whose body follows the line

    # -- words -------------------------------------------------------------------------------------

    def add(self, text: str, expandable: bool) -> None:
        if not self.in_word:
            self.in_word, self.word_line = True, self.line
        if self.parts and self.parts[-1][1] == expandable:
            self.parts[-1] = (self.parts[-1][0] + text, expandable)
        else:
            self.parts.append((text, expandable))

    def end_word(self) -> None:
        if self.in_word:
            parts = tuple(self.parts)
            word = Word("".join(t for t, _ in parts), self.word_line, self.quoted, parts if len(parts) != 1 or not parts[0][1] else ())
            if self.redirect is not None:
                self.redirected(word)
            else:
                self.current.append(word)
        self.parts, self.in_word, self.quoted = [], False, False

    def redirected(self, target: Word) -> None:
        op, fd = self.redirect, self.redirect_fd
        self.redirect = None
        if op in ("<<", "<<-"):
            if self.bodies is not None:
                body = next(self.bodies, None)
                if body is not None and fd == 0:
                    self.current.stdin = body
            else:
                self.pending.append((target.text, op == "<<-", self.current, fd))
        elif op == "<<<" and fd == 0:
            self.current.stdin = (target.text, target.line)

    def end_command(self) -> None:
        self.end_word()
        self.redirect = None
        if self.current or self.current.stdin is not None:
            self.commands.append(self.current)
        self.current = Command()

    # -- the scan ----------------------------------------------------------------------------------

    def run(self) -> list[Command]:
        s, n = self.s, self.n
        i = 0
        while i < n:
            ch = s[i]
            if ch == "\\":
                if i + 1 >= n:  # a trailing escape at the very end: nothing follows
                    i += 1
                    continue
                if s[i + 1] == "\n":  # line continuation
                    i += 2
                    self.line += 1
                    continue
                self.add(s[i + 1], False)
                self.quoted = True
                i += 2
                continue
            if ch == "'":
                end = s.find("'", i + 1)
                end = n if end < 0 else end
                self.add(s[i + 1 : end], False)
                self.quoted = True
                self.line += s.count("\n", i, end)
                i = end + 1
                continue
            if ch == '"':
                i = self.double_quoted(i + 1)
                continue
            if ch == "$" and i + 1 < n and s[i + 1] == "'":  # bash $'...': literal here
                end = s.find("'", i + 2)
                end = n if end < 0 else end
                self.add(s[i + 2 : end], False)
                self.quoted = True
                self.line += s.count("\n", i, end)
                i = end + 1
                continue
            if (ch == "$" and i + 1 < n and s[i + 1] in "({") or ch == "`":
                end = construct_end(s, i)
                self.add(s[i:end], True)
                self.line += s.count("\n", i, end)
                i = end
                continue
            if ch == "#" and not self.in_word:
                while i < n and s[i] != "\n":
                    i += 1
                continue
            if ch == "\n":
                self.end_command()
                self.line += 1
                i = self.heredoc_bodies(i + 1)
                continue
            if ch in " \t\r":
                self.end_word()
                i += 1
                continue
            if ch in "<>&":
                redirect = next((r for r in _REDIRECTS if s.startswith(r, i)), None)
                if redirect is not None:
                    fd = 0 if redirect.startswith("<") else 1
                    if self.in_word and not self.quoted and "".join(t for t, _ in self.parts).isdigit():
                        fd = int("".join(t for t, _ in self.parts)[:4])  # `2>&1`: the digits name a descriptor
                        self.parts, self.in_word = [], False
                    else:
                        self.end_word()
                    self.redirect, self.redirect_fd = redirect, fd
                    i += len(redirect)
                    continue
            operator = next((op for op in _OPERATORS if s.startswith(op, i)), None) if ch in "&|;(){}" else None
            if operator and not (operator in "{}" and self.in_word):
                self.end_command()
                i += len(operator)
                continue
            plain = _PLAIN.match(s, i)  # a run of ordinary characters at once: per-character work is the cost here
            end = plain.end() if plain and plain.end() > i else i + 1
            self.add(s[i:end], True)
            i = end
        self.end_command()
        return [c for c in (_strip_keywords(c) for c in self.commands) if c or c.stdin is not None]

    def double_quoted(self, i: int) -> int:
        """Scan a "..." body from i (after the quote); return the index after the closing quote."""
        s, n = self.s, self.n
        self.quoted = True
        if not self.in_word:
            self.in_word, self.word_line = True, self.line
        while i < n and s[i] != '"':
            ch = s[i]
            if ch == "\\" and i + 1 < n:
                nxt = s[i + 1]
                if nxt == "\n":  # removed by the shell; kept here so a `sh -c "..."` script keeps its line numbers
                    self.add("\\\n", True)
                    self.line += 1
                elif nxt in '"\\$`':
                    self.add(nxt, False)
                else:
                    self.add(ch + nxt, True)
                i += 2
                continue
            if (ch == "$" and i + 1 < n and s[i + 1] in "({") or ch == "`":
                end = construct_end(s, i)
                self.add(s[i:end], True)
                self.line += s.count("\n", i, end)
                i = end
                continue
            if ch == "\n":
                self.line += 1
            self.add(ch, True)
            i += 1
        if not self.parts:
            self.add("", False)  # `""` is a word: an empty argument
        return i + 1

    def heredoc_bodies(self, i: int) -> int:
        """Read the bodies of the here-documents opened on the line that just ended."""
        s, n = self.s, self.n
        for delimiter, strip_tabs, command, fd in self.pending:
            start, body_line, lines = i, self.line, []
            while i < n:
                end = s.find("\n", i)
                end = n if end < 0 else end
                text = s[i:end]
                i = min(end + 1, n)
                self.line += 1
                if (text.lstrip("\t") if strip_tabs else text) == delimiter:
                    break
                lines.append(text)
            del start
            if fd == 0:
                command.stdin = ("\n".join(lines) + ("\n" if lines else ""), body_line)
        self.pending = []
        return i


def construct_end(s: str, i: int) -> int:
    """s[i] opens `$(...)`, `$((...))`, `${...}` or a backquote: the index just after its end
    (len(s) when unterminated). One pass, nested constructs and quotes inside skipped."""
    n = len(s)
    if s[i] == "`":
        j = i + 1
        while j < n:
            if s[j] == "\\":
                j += 2
                continue
            if s[j] == "`":
                return j + 1
            j += 1
        return n
    stack = [")" if s[i + 1] == "(" else "}"]
    j = i + 2
    while j < n and stack:
        c = s[j]
        if c == "\\":
            j += 2
            continue
        if c == "'" and stack[-1] == ")":
            end = s.find("'", j + 1)
            j = n if end < 0 else end + 1
            continue
        if c == '"':
            j += 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            j += 1
            continue
        if c == "`":
            j += 1
            while j < n and s[j] != "`":
                j += 2 if s[j] == "\\" else 1
            j += 1
            continue
        if c == "$" and j + 1 < n and s[j + 1] in "({":
            stack.append(")" if s[j + 1] == "(" else "}")
            j += 2
            continue
        if c == "(" and stack[-1] == ")":
            stack.append(")")
        elif c == stack[-1]:
            stack.pop()
        j += 1
    return min(j, n)


def _strip_keywords(command: Command) -> Command:
    """Drop leading shell keywords (`then`, `do`, `!`, ...): the simple command follows them."""
    start = 0
    while start < len(command) and command[start].text in _KEYWORDS and not command[start].quoted:
        start += 1
    if start == 0:
        return command
    out = Command(command[start:])
    out.stdin = command.stdin
    return out


_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)


def assignment(word: Word) -> tuple[str, str] | None:
    """`NAME=value` as (NAME, value as written); None for any other word."""
    match = _ASSIGNMENT.match(word.text)
    if not match:
        return None
    first = word.segments()[0]
    if not first[1] or len(first[0]) <= len(match.group(1)):
        return None  # `'A=1'`, `"A"=1`: a quoted name makes a command word, not an assignment
    return (match.group(1), match.group(2))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = LazyPattern(r"[0-9@*#?$!-]")  # `$1`, `$@`, `$?`, ...: shell parameters with no value in a build
_SHELL_DOLLAR = re.compile(r"[$`]")
# `${NAME<op>word}` operators the expander understands, longest first
_OPS = (":-", ":=", ":+", ":?", "-", "=", "+", "?")


class ExpansionBudget:
    """What all expansions of one file may spend together (limits.py says why these caps)."""

    __slots__ = ("steps", "bytes")

    def __init__(self, steps: int | None = None, bytes: int | None = None) -> None:  # noqa: A002 - the cap's name
        self.steps = limits.MAX_EXPANSION_STEPS if steps is None else steps
        self.bytes = limits.MAX_EXPANSION_TOTAL_BYTES if bytes is None else bytes


class Expansion:
    __slots__ = ("text", "unresolved", "capped")

    def __init__(self, text: str, unresolved: tuple[str, ...] = (), capped: bool = False) -> None:
        self.text = text
        self.unresolved = unresolved
        self.capped = capped  # a cap was hit: text is the input as written, `unresolved` names where

    def __repr__(self) -> str:
        return f"Expansion({self.text!r}, {self.unresolved!r}, capped={self.capped})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expansion) and (self.text, self.unresolved, self.capped) == (other.text, other.unresolved, other.capped)

    __hash__ = None  # type: ignore[assignment]


class _Capped(Exception):
    """Unwinds an expansion that went past a cap (caught in expand_bounded)."""


def expand_bounded(text: str, variables: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> Expansion:
    """Expand $VAR, ${VAR} and ${VAR<op>word} (op: :- - := = :+ + :? ?, word nested), within caps.

    A variable missing from `variables` counts as unset for the operator forms (`${A:-x}`
    gives x) and as unresolved when used plainly. A variable mapped to None is known to
    exist but to have no single value (assigned differently on different paths): it is
    unresolved, never guessed, and the reference stays as written. Other `${...}` forms
    (`${A%x}`, `${#A}`) stay as written (this is the ARG/ENV expansion of a Dockerfile;
    expand_word is the shell's).

    Bounded: the substituted bytes of this one value stay under MAX_EXPANSION_BYTES,
    nesting under MAX_EXPANSION_DEPTH, and every substitution is charged to `budget`
    (one per file). Past any cap the whole value is returned as written, `capped`, with
    the variable that broke the cap among `unresolved`: the caller reports it, as any
    value it cannot resolve.
    """
    return _expand(((text, True),), text, variables, budget, shell=False)


def expand_word(word: Word, variables: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> Expansion:
    """A shell word expanded as the shell would, within the same caps as expand_bounded.

    Literal parts (single quotes, escapes) are kept as they are. What a build cannot know
    is unresolved, never guessed: a command substitution (`$(cat f)`, backquotes,
    `$((...))`), a positional or special parameter (`$1`, `$@`), and the `${...}` forms the
    expander does not evaluate (`${A%x}`, `${#A}`); each is named as written (`$(cat f)`)
    or by its variable.
    """
    return _expand(word.segments(), word.text, variables, budget, shell=True)


def _expand(
    segments: tuple[tuple[str, bool], ...], written: str, variables: Mapping[str, str | None], budget: ExpansionBudget | None, *, shell: bool
) -> Expansion:
    if "$" not in written and "`" not in written and "\\\n" not in written:
        return Expansion(written)  # nothing to expand: most words
    expander = _Expander(variables, budget if budget is not None else ExpansionBudget(), shell)
    try:
        out = "".join(expander.word(text.replace("\\\n", "") if shell else text, 0) if expandable else text for text, expandable in segments)
    except _Capped:
        return Expansion(written, tuple(expander.unresolved), capped=True)
    return Expansion(out, tuple(expander.unresolved))


def expand(text: str, variables: Mapping[str, str | None], budget: ExpansionBudget | None = None) -> tuple[str, list[str]]:
    """expand_bounded as (text, names that could not be resolved)."""
    result = expand_bounded(text, variables, budget)
    return result.text, list(result.unresolved)


class _Expander:
    """One bounded expansion; `unresolved` collects names in the order met."""

    def __init__(self, variables: Mapping[str, str | None], budget: ExpansionBudget, shell: bool) -> None:
        self.variables, self.budget, self.shell = variables, budget, shell
        self.unresolved: list[str] = []
        self.substituted = 0  # bytes put in by substitutions, for MAX_EXPANSION_BYTES

    def word(self, text: str, depth: int) -> str:
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            if self.shell:
                found = _SHELL_DOLLAR.search(text, i)
                dollar = found.start() if found else -1
            else:
                dollar = text.find("$", i)
            if dollar < 0:
                out.append(text[i:])
                break
            out.append(text[i:dollar])
            if self.shell and (text[dollar] == "`" or text.startswith("$(", dollar)):
                end = construct_end(text, dollar)
                self.charge(text[dollar:end], 0)
                self.unresolved.append(text[dollar:end])  # a command substitution: its output is not known here
                out.append(text[dollar:end])
                i = end
                continue
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
            if name is None:  # `$1`, `$$`, a lone `$`
                special = _SPECIAL.match(text, dollar + 1) if self.shell else None
                if special:
                    self.unresolved.append(text[dollar : special.end()])
                    out.append(text[dollar : special.end()])
                    i = special.end()
                    continue
                out.append("$")
                i = dollar + 1
                continue
            out.append(self.lookup(name.group(0), text[dollar : name.end()]))
            i = name.end()
        return "".join(out)

    def braced(self, body: str, written: str, depth: int) -> str:
        name_match = _NAME.match(body)
        if name_match is None:
            if self.shell:
                self.unresolved.append(written)  # `${#A}`, `${1}`: not evaluated here
            return written
        name, rest = name_match.group(0), body[name_match.end() :]
        if not rest:
            return self.lookup(name, written)
        op = next((o for o in _OPS if rest.startswith(o)), None)
        if op is None:
            if self.shell:
                self.unresolved.append(name)  # ${A%x}, ${A:1:2}, ...: not evaluated, so not a value
            return written
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
