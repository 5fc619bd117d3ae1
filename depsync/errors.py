"""The one exception type the CLI turns into exit code 2 with a single readable line."""

from __future__ import annotations


class DepsyncError(Exception):
    """Bad input, bad config, a missing file or ref, a failed external tool.

    `where` is "path", "path:line" or "path:line:column" when the problem has a location.
    `frame`: lines that show it (the source line and a caret under the column, as uv and ruff
    show a TOML error), printed on stderr after the one line; "" when there is none.
    """

    def __init__(self, message: str, where: str | None = None, frame: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.frame = frame

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message
