"""Pure: `git log --raw -z` output read as it comes, one commit at a time, in bounded memory.

The squashed-sync detection reads thousands of commits of main and dev, some of which write
thousands of files. The output is never held whole: the bytes are fed in chunks, each commit is
handed on when the next one starts, and a commit keeps at most `max_files` of its paths (the
rest are counted, so the report can say what was cut). A `keep` predicate lets the caller drop,
while reading, what can never be evidence (dev's writes that match nothing of main's).

The format it reads: `--format=%x1e%H%x1f%ct%x1f%P%x1f%s` with `--raw --no-abbrev -z`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from depsync.core.sync.squashed import HistoryCommit

FORMAT = "--format=%x1e%H%x1f%ct%x1f%P%x1f%s"
MAX_TOKEN = 64 * 1024  # a path or a header longer than this is cut (git's own limit is PATH_MAX)


class RawLogReader:
    """Chunks of `git log --raw -z` in, HistoryCommits out (newest first, as git writes them)."""

    def __init__(self, max_files: int, keep: Callable[[str, str | None], bool] | None = None) -> None:
        self.max_files = max_files
        self.keep = keep
        self._rest = b""
        self._pending: tuple[str, bool] | None = None  # a raw line's (new blob, is a gitlink): its path is next
        self._header: tuple[str, int, tuple[str, ...], str] | None = None
        self._changes: dict[str, str | None] = {}
        self._seen = 0  # paths of the current commit, kept or not
        self._paths: dict[str, str] = {}  # one string per path, shared by every commit that writes it

    def feed(self, chunk: bytes) -> Iterator[HistoryCommit]:
        data = self._rest + chunk
        start = 0
        while (end := data.find(b"\0", start)) >= 0:
            done = self._token(data[start:end][:MAX_TOKEN].decode(errors="replace"))
            if done is not None:
                yield done
            start = end + 1
        self._rest = data[start:]
        if len(self._rest) > MAX_TOKEN:  # a token without its NUL yet: only its head can matter
            self._rest = self._rest[:MAX_TOKEN]

    def close(self) -> Iterator[HistoryCommit]:
        if self._rest:
            done = self._token(self._rest.decode(errors="replace"))
            self._rest = b""
            if done is not None:
                yield done
        last = self._finish()
        if last is not None:
            yield last

    def _finish(self) -> HistoryCommit | None:
        if self._header is None:
            return None
        sha, when, parents, subject = self._header
        commit = HistoryCommit(sha, when, subject, self._changes, parents, max(0, self._seen - self.max_files))
        self._header, self._changes, self._seen = None, {}, 0
        return commit

    def _token(self, token: str) -> HistoryCommit | None:
        if self._pending is not None:
            blob, gitlink = self._pending
            self._pending = None
            if not gitlink:
                self._seen += 1
                new = None if blob.strip("0") == "" else blob
                if self._seen <= self.max_files and (self.keep is None or self.keep(token, new)):
                    self._changes[self._paths.setdefault(token, token)] = new
            return None
        token = token.removeprefix("\n")
        if token.startswith("\x1e"):  # a header; a subject cannot hold a NUL, so it ends here
            done = self._finish()
            sha, _, rest = token[1:].partition("\x1f")
            when, _, rest = rest.partition("\x1f")
            parents, _, subject = rest.partition("\x1f")
            self._header = (sha, int(when) if when.isdigit() else 0, tuple(parents.split()), subject[:1000])
            return done
        if token.startswith(":"):
            fields = token[1:].split()
            if len(fields) >= 4:
                self._pending = (fields[3], "160000" in (fields[0], fields[1]))
        return None
