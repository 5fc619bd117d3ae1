"""Findings: what a rule reports. Pure data, no I/O."""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Sequence

from depsync.records import field, record

# Rules whose finding `depsync check --fix` fixes (depsync/autofix.py). Here, not in RULES, so
# the human report can say so without importing the rules (a cached check never does).
FIXABLE = frozenset({"docker-stale-no-install", "docker-no-install-renamed", "metadata-rev-mismatch", "source-pin-not-commit"})


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]

    def __str__(self) -> str:
        return self.name.lower()


@record(order=True)
class Finding:
    """One problem: where it is, which rule saw it, what is wrong and how to fix it."""

    file: str
    line: int  # 1-based; 0 when the finding is about the file as a whole
    rule: str
    severity: Severity
    message: str
    fix: str
    # the whole of a list the message cuts to a count and its first few (listed()): JSON has it all
    items: tuple[str, ...] = field(default=(), compare=False)

    def with_severity(self, severity: Severity) -> Finding:
        return Finding(self.file, self.line, self.rule, severity, self.message, self.fix, self.items)

    def with_message(self, message: str) -> Finding:
        return Finding(self.file, self.line, self.rule, self.severity, message, self.fix, self.items)


MAX_LISTED = 3  # names a message shows of a longer list; the rest is a count (the JSON output has them all)


def listed(names: Iterable[str], first: int = MAX_LISTED) -> str:
    """`a, b, c` or, for a longer list, `a, b, c and 97 more`: a message stays one short line
    on a terminal, in a GitHub annotation, in SARIF and in a PR body (a workspace of ~100 members
    made a 6,177-character one). Pass the whole list as the finding's items for the JSON output."""
    names = list(names)
    if len(names) <= first + 1:  # "and 1 more" is no shorter than the name
        return ", ".join(names)
    return f"{', '.join(names[:first])} and {len(names) - first} more"


@record
class FindingGroup:
    """Findings one fix covers: same file, rule, severity and fix text (the 14 stale
    `--no-install-package` flags of one Dockerfile are one group, not 14 repeats)."""

    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def lines(self) -> tuple[int, ...]:
        return tuple(f.line for f in self.findings if f.line)

    def where(self) -> str:
        """`file:line`, `file:first-last` for a group, `file` for a whole-file finding."""
        lines = self.lines
        if not lines:
            return self.first.file
        return f"{self.first.file}:{lines[0]}" + (f"-{lines[-1]}" if len(lines) > 1 and lines[-1] != lines[0] else "")


def group(findings: Iterable[Finding]) -> list[FindingGroup]:
    """Findings sorted by file and line, those sharing file, rule, severity and fix merged
    into one group placed at the first of them."""
    ordered = sorted(findings, key=lambda f: (f.file, f.line, f.rule, f.message))
    groups: dict[tuple[str, str, Severity, str], list[Finding]] = {}
    for finding in ordered:
        groups.setdefault((finding.file, finding.rule, finding.severity, finding.fix), []).append(finding)
    return sorted((FindingGroup(tuple(items)) for items in groups.values()), key=lambda g: (g.first.file, g.first.line, g.first.rule))


# Build variants of one package: nvidia-cudnn-cu12 and nvidia-cudnn-cu13, torch-cpu and torch.
_VARIANT = re.compile(r"[-_.](cu\d+|cuda\d*|cpu|rocm[\d.]*|xpu)$")


@functools.lru_cache(maxsize=4096)
def _stem(name: str) -> str:
    """name without its build variant: one pool of names is often searched several times."""
    return _VARIANT.sub("", name.lower())


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate a near-miss name most likely meant: the same package for another CUDA
    (or CPU) build first, then the closest spelling; None when nothing is close."""
    pool = sorted(set(candidates) - {name})
    stem = _stem(name)
    same_stem = [c for c in pool if _stem(c) == stem]
    if same_stem:
        import difflib

        return max(same_stem, key=lambda c: difflib.SequenceMatcher(None, name, c).ratio())
    # 0.8, not difflib's 0.6: at 0.6 `torchvision` "means" `torch`, which is another package.
    # difflib's first test (real_quick_ratio: the lengths alone) is made here, without a
    # SequenceMatcher per name: the same answer, and no difflib when no name is near in length
    size = len(name)
    near = [c for c in pool if 2.0 * min(size, len(c)) / (size + len(c)) >= 0.8]
    if near:
        import difflib

        close = difflib.get_close_matches(name, near, n=1, cutoff=0.8)
        if close:
            return close[0]
    letters = sorted(name.lower())
    swapped = [c for c in pool if sorted(c.lower()) == letters]  # a transposition: `dve` for `dev`
    return swapped[0] if swapped else None


def each_with_suggestion(names: Sequence[str], guess: Callable[[str], str | None], line_of: Callable[[str], int] | None = None) -> str:
    """`'owner_ref' (did you mean 'owner-ref'?), 'protected-path' at line 9 (did you mean
    'protected-paths'?), 'zzz'`: each unknown name, quoted (a name from the input is printed as a
    literal, never as raw text), with its own suggestion and, from the second on, its line when
    line_of knows it (0: not known). The first one's line leads the message already."""
    parts = []
    for index, name in enumerate(names):
        line = line_of(name) if line_of is not None and index else 0
        meant = guess(name)
        parts.append(repr(name) + (f" at line {line}" if line else "") + (f" (did you mean {meant!r}?)" if meant else ""))
    return ", ".join(parts)
