"""Shell: atomic file writes and byte-exact snapshots for rollback."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from depsync import faults


def write_atomic(path: Path, data: bytes) -> None:
    """Write data to path via a temp file in the same directory and os.replace (keeps the mode)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:  # a new file gets the mode open() would give it, not mkstemp's 0600
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".depsync-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        faults.point("write:before-replace")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Snapshot:
    """The exact bytes (or absence) of some files, to put back after a failed step."""

    def __init__(self, root: Path, paths: list[str]) -> None:
        self.root = root
        self.saved: dict[str, bytes | None] = {}
        for relative in paths:
            file = root / relative
            self.saved[relative] = file.read_bytes() if file.is_file() else None

    def restore(self) -> None:
        for relative, data in self.saved.items():
            file = self.root / relative
            if data is None:
                file.unlink(missing_ok=True)
            elif not file.is_file() or file.read_bytes() != data:
                write_atomic(file, data)
