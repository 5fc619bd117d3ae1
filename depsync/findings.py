"""Findings: what a rule reports. Pure data, no I/O."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    INFO = 0
    WARNING = 1
    ERROR = 2

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True)
class Finding:
    """One problem: where it is, which rule saw it, what is wrong and how to fix it."""

    file: str
    line: int  # 1-based; 0 when the finding is about the file as a whole
    rule: str
    severity: Severity
    message: str
    fix: str

    def with_severity(self, severity: Severity) -> Finding:
        return Finding(self.file, self.line, self.rule, severity, self.message, self.fix)
