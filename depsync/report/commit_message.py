"""Pure: the sync workflow's merge commit message, with main's path names inert in it.

A path name is anyone's text that landed on main, and a commit message is read by more than
people: CI services skip a push whose message holds `[skip ci]`, `[ci skip]`, `[no ci]`,
`[skip actions]`, `***NO_CI***` and the like (a directory named so would switch CI off for the
sync), and forges read trailer lines such as `Co-authored-by:` (a newline in a name would add
one). So the message gives the count and a quoted list: each name on its own line after a tab,
in double quotes, with backslash escapes for `\\`, `"`, `[`, `]`, `*`, control and invisible
characters and bytes that are not UTF-8; no line of it can start a trailer or hold a skip marker.
"""

from __future__ import annotations

LISTED_AT_MOST = 50  # names in the message; the artifact's conflicted.txt and the PR list them all


_ESCAPED = {"\\": "\\\\", '"': '\\"', "[": "\\[", "]": "\\]", "*": "\\*", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quoted(name: str) -> str:
    """A path name as one inert double-quoted line (os.fsdecode's surrogates become `\\xNN`)."""
    out: list[str] = []
    for char in name:
        if char in _ESCAPED:
            out.append(_ESCAPED[char])
        elif "\udc80" <= char <= "\udcff":
            out.append(f"\\x{ord(char) - 0xDC00:02x}")
        elif not char.isprintable() and char != " ":  # controls, bidi overrides, zero-width, unassigned
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def sync_message(upstream: str, owner: str, conflicted: list[str]) -> str:
    """`Sync <upstream> into <owner>`, then, when code was committed with its markers, how many
    files and their quoted names (at most LISTED_AT_MOST). The branch names are the operator's."""
    lines = [f"Sync {upstream} into {owner}"]
    if conflicted:
        lines += ["", f"Committed with conflict markers, for the resolver ({len(conflicted)}):"]
        lines += [f"\t{quoted(name)}" for name in conflicted[:LISTED_AT_MOST]]
        if len(conflicted) > LISTED_AT_MOST:
            lines.append(f"\tand {len(conflicted) - LISTED_AT_MOST} more (the PR and the artifact's conflicted.txt list them all)")
    return "\n".join(lines) + "\n"
