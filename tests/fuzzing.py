"""Input mutators for the reader fuzz tests: truncation, bit flips, line surgery, type swaps,
duplicate keys, giant strings. Deterministic for a given seed."""

from __future__ import annotations

import random

TYPE_SWAPS = ('1', '3.5', 'true', '[]', '{}', '[1, "a"]', '{ a = 1 }', '"x"', '1979-05-27T07:32:00Z', '[[]]', '""')


def mutate_text(text: str, rng: random.Random) -> str:
    """One random structural or byte-level mutation of a TOML or Dockerfile text."""
    lines = text.splitlines(keepends=True)
    choice = rng.randrange(12)
    if choice == 0 and text:  # truncate
        return text[: rng.randrange(len(text))]
    if choice == 1 and text:  # flip a bit
        data = bytearray(text.encode())
        index = rng.randrange(len(data))
        data[index] ^= 1 << rng.randrange(8)
        return data.decode("utf-8", errors="replace")
    if choice == 2 and lines:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif choice == 3 and lines:  # duplicate a line (duplicate keys, repeated headers)
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])
    elif choice == 4 and lines:  # swap a value for another type
        index = rng.randrange(len(lines))
        line = lines[index]
        if "=" in line:
            key = line.split("=", 1)[0]
            lines[index] = f"{key}= {rng.choice(TYPE_SWAPS)}\n"
    elif choice == 5 and lines:  # giant string
        index = rng.randrange(len(lines))
        lines.insert(index, f'giant = "{"x" * rng.choice((10_000, 200_000))}"\n')
    elif choice == 6 and lines:  # move a line elsewhere
        line = lines.pop(rng.randrange(len(lines)))
        lines.insert(rng.randrange(len(lines) + 1), line)
    elif choice == 7 and lines:  # comment everywhere / blank lines
        index = rng.randrange(len(lines))
        lines.insert(index, rng.choice(("# comment\n", "\n", "   \n", "#\n")))
    elif choice == 8 and lines:  # replace a quoted string's content with odd characters
        index = rng.randrange(len(lines))
        odd = rng.choice(("", " ", "\\\\", "$(touch /tmp/x)", "`id`", "é", "\u202e", "a" * 300, "0" * 40, "../../etc/passwd", "; rm -rf /"))
        lines[index] = lines[index].replace('"', f'"{odd}', 1)
    elif choice == 9 and text:  # insert random printable junk
        index = rng.randrange(len(text) + 1)
        junk = "".join(rng.choice("[]{}=\"',.#\\\n abc123-_") for _ in range(rng.randrange(1, 12)))
        return text[:index] + junk + text[index:]
    elif choice == 10 and lines:  # turn a table header into an array-of-tables header or back
        index = rng.randrange(len(lines))
        line = lines[index]
        if line.startswith("[["):
            lines[index] = line.replace("[[", "[", 1).replace("]]", "]", 1)
        elif line.startswith("["):
            lines[index] = "[" + line.rstrip("\n") + "]\n"
    elif lines:  # swap two lines
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
    return "".join(lines)


def mutate(text: str, rng: random.Random, rounds: int = 3) -> str:
    for _ in range(rng.randrange(1, rounds + 1)):
        text = mutate_text(text, rng)
    return text
