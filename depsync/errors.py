"""The one exception type the CLI turns into exit code 2 with a single readable line."""

from __future__ import annotations


class DepsyncError(Exception):
    """Bad input, bad config, a missing file or ref, a failed external tool.

    `where` is "path" or "path:line" when the problem has a location.
    """

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message
