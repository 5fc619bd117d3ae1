"""Shell: is main's git rev newer than dev's? Asked of the source repository itself.

Each source repository is fetched (no blobs) into a cache once per run, and only what ancestry
needs: the pinned commits (by id) and tags with their history, not every branch and tag; a
pin that names neither (an abbreviated commit) falls back to all branches and tags. What each
fetch asked for, its bytes and its time are recorded (FetchRecord; shown under -v and in the
plan JSON). When a repository cannot be asked the answer is "unknown" with the reason, never a
guess. Without fetching
(`--no-fetch`) only what is already on this machine answers: depsync's cache of earlier
fetches (commits never change, so neither does their order) and `file://` repositories.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from depsync.core.redact import redact
from depsync.core.sync.sources import Pin, RevOrder, RevPair, combine_orders, rev_pairs
from depsync.core.sync.url_order import url_order
from depsync.core.trust import GIT_ALLOW_PROTOCOL, git_url_allowed, is_full_commit
from depsync.records import field, record
from depsync.shell import cache, process

_HEX = re.compile(r"^[0-9a-f]{7,40}\Z")


def cache_dir() -> Path:
    return Path(cache.root()) / "git-sources"


def _git(args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    # no prompts, and only transports that move data (never `ext::`), whatever the URL says
    # and never a lazy fetch: a missing object is missing (the fetch asks for what ancestry needs)
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", GIT_ALLOW_PROTOCOL=GIT_ALLOW_PROTOCOL, GIT_NO_LAZY_FETCH="1")
    return process.run(["git", *args], timeout=timeout, env=env)


def _short(commit: str) -> str:
    return commit[:10]


@record
class FetchRecord:
    """One fetch of a source repository: what was asked, what it cost."""

    url: str  # redacted
    asked: str  # "2 commits, 1 tag" or "all branches and tags"
    bytes: int  # growth of the cached repository's object store
    seconds: float
    outcome: str  # "" when it worked, else why not

    def line(self) -> str:
        said = f", {self.outcome}" if self.outcome else ""
        return f"fetched {self.asked} of {self.url}: {self.bytes / 1024:.0f} KiB in {self.seconds:.1f}s{said}"


def _store_size(repo: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(repo / "objects"):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _refspecs(pins: list[Pin]) -> tuple[list[str], str] | None:
    """Refspecs for exactly these pins (commits by id, tags by name), with a description; None
    when one of them can only be found among all branches and tags (an abbreviated commit)."""
    commits: list[str] = []
    tags: list[str] = []
    for pin in pins:
        value = pin.value.lower()
        if pin.kind == "rev" and is_full_commit(value):
            commits.append(value)
        elif pin.kind == "tag" or (pin.kind == "rev" and not _HEX.match(value)):
            tags.append(pin.value)
        else:
            return None
    # commits under depsync's own refs: an object no ref reaches could be pruned by a gc
    specs = [f"{c}:refs/depsync/{c}" for c in dict.fromkeys(commits)] + [f"+refs/tags/{t}:refs/tags/{t}" for t in dict.fromkeys(tags)]
    what = ", ".join(part for part in (f"{len(set(commits))} commit(s)" if commits else "", f"{len(set(tags))} tag(s)" if tags else "") if part)
    return specs, what


_ALL = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]


@record(frozen=False)
class SourceRepos:
    """The source repositories of one run: each fetched at most once, answers remembered."""

    fetch: bool = True
    cache: Path | None = None
    timeout: float = 60
    _state: dict[str, str] = field(default_factory=dict)  # url -> "" (usable) or why not
    fetches: list[FetchRecord] = field(default_factory=list)
    _asked: set[tuple[str, str, str]] = field(default_factory=set)  # (url, pin kind, value) made present or tried

    def _repo(self, url: str) -> Path:
        return (self.cache or cache_dir()) / hashlib.sha256(url.encode()).hexdigest()[:20]

    def _run(self, repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
        return _git(["-C", str(repo), *args], self.timeout)

    def _commit(self, repo: Path, pin: Pin) -> str | None:
        """The commit a pin names in the cached repository (a tag or a commit, full or abbreviated)."""
        if pin.kind == "tag":
            names = [f"refs/tags/{pin.value}"]
        elif pin.kind == "rev" and _HEX.match(pin.value.lower()):
            names = [pin.value.lower()]
        elif pin.kind == "rev":
            names = [f"refs/tags/{pin.value}"]  # uv takes a tag name in `rev` too; a branch name moves
        else:
            return None
        for name in names:
            result = self._run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}")
            if result.returncode == 0:
                return result.stdout.decode().strip()
        return None

    def _ensure(self, url: str, wanted: list[Pin]) -> str:
        """Make the cached repository hold the pins' commits; "" when it does, else why not."""
        repo = self._repo(url)
        if self._state.get(url):  # it failed once this run: it is not asked again
            return self._state[url]
        wanted = [p for p in wanted if (url, p.kind, p.value) not in self._asked]  # a fetch that did not bring one will not now
        self._asked.update((url, p.kind, p.value) for p in wanted)
        if not wanted:
            return ""
        if not git_url_allowed(url):  # an option (`--upload-pack=...`) or a command transport: never fetched
            self._state[url] = f"URL not fetchable: {redact(url)[:80]}"
            return self._state[url]
        local = url.removeprefix("git+").startswith("file://")
        try:
            if (repo / "HEAD").exists() and all(self._commit(repo, p) for p in wanted):
                self._state[url] = ""
                return ""
            if not (self.fetch or local):
                self._state[url] = "not fetched (--no-fetch) and not in depsync's cache"
                return self._state[url]
            if not (repo / "HEAD").exists():
                repo.mkdir(parents=True, exist_ok=True)
                self._run(repo, "init", "--quiet", "--bare")
            missing = [p for p in wanted if not self._commit(repo, p)]
            narrow = _refspecs(missing)
            fetched = self._fetch(repo, url, *(narrow or (_ALL, "all branches and tags")))
            if fetched.returncode != 0 and narrow is not None:  # a server that refuses a commit by id
                fetched = self._fetch(repo, url, _ALL, "all branches and tags")
            if fetched.returncode != 0:
                lines = [line.strip() for line in fetched.stderr.decode(errors="replace").splitlines() if line.strip()]
                said = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "no message")
                self._state[url] = f"fetch failed: {redact(said)[:160]}"
                return self._state[url]
            by_id = [p.value.lower() for p in wanted if p.kind == "rev" and is_full_commit(p.value.lower()) and not self._commit(repo, p)]
            if by_id:  # a commit no branch or tag reaches (a PR head): ask for it by id
                self._fetch(repo, url, [f"{c}:refs/depsync/{c}" for c in by_id], f"{len(by_id)} commit(s) by id")
        except subprocess.TimeoutExpired:
            self._state[url] = f"no answer within {self.timeout:.0f}s"
            return self._state[url]
        except OSError as exc:
            self._state[url] = f"cache not usable: {exc.strerror or exc}"
            return self._state[url]
        self._state[url] = ""
        return ""

    def _fetch(self, repo: Path, url: str, refspecs: list[str], asked: str) -> subprocess.CompletedProcess[bytes]:
        before, started = _store_size(repo), time.perf_counter()
        outcome = ""
        try:
            result = self._run(repo, "-c", "gc.auto=0", "fetch", "--quiet", "--no-tags", "--filter=blob:none", "--", url, *refspecs)
            if result.returncode != 0:
                outcome = "failed"
            # git made the URL a promisor remote: a read of a missing object (rev-parse of a pin not
            # fetched yet) would fetch it, one object at a time, without asking; older git has no
            # GIT_NO_LAZY_FETCH, so the promise goes (blobs are never read here)
            self._run(repo, "config", "--unset-all", f"remote.{url}.promisor")
            return result
        except subprocess.TimeoutExpired:
            outcome = f"no answer within {self.timeout:.0f}s"
            raise
        finally:
            self.fetches.append(FetchRecord(redact(url), asked, max(0, _store_size(repo) - before), time.perf_counter() - started, outcome))

    def pair_order(self, pair: RevPair) -> RevOrder:
        for side, pin in (("dev", pair.dev), ("main", pair.main)):
            if pin.kind in ("branch", "default"):
                return RevOrder("unknown", f"{side} pins a branch ({pin.value or 'the default branch'}), which moves: no fixed order")
        if pair.dev == pair.main:
            return RevOrder("same", "same pin")
        why = self._ensure(pair.url, [pair.dev, pair.main])
        if why:
            return RevOrder("unknown", why)
        repo = self._repo(pair.url)
        try:
            dev, main = self._commit(repo, pair.dev), self._commit(repo, pair.main)
            if dev is None or main is None:
                side = "dev's" if dev is None else "main's"
                pin = pair.dev if dev is None else pair.main
                return RevOrder("unknown", f"{side} {pin.kind} {pin.value[:40]!r} not found in {redact(pair.url)}")
            if dev == main:
                return RevOrder("same", f"both name {_short(dev)}")
            if self._run(repo, "merge-base", "--is-ancestor", "--end-of-options", dev, main).returncode == 0:
                return RevOrder("main-newer", f"dev's {_short(dev)} is an ancestor of main's {_short(main)}")
            if self._run(repo, "merge-base", "--is-ancestor", "--end-of-options", main, dev).returncode == 0:
                return RevOrder("dev-newer", f"main's {_short(main)} is an ancestor of dev's {_short(dev)}")
            base = self._run(repo, "merge-base", "--end-of-options", dev, main).stdout.decode().strip()
            where = f"; they fork at {_short(base)}" if base else "; no common history"
            return RevOrder("diverged", f"neither of dev's {_short(dev)} and main's {_short(main)} is an ancestor of the other{where}")
        except subprocess.TimeoutExpired:
            return RevOrder("unknown", f"no answer within {self.timeout:.0f}s")
        except OSError as exc:
            return RevOrder("unknown", f"cache not usable: {exc.strerror or exc}")

    def order(self, dev: Any, main: Any) -> RevOrder:
        """The order of main's value against dev's (list-shaped sources pair by pair)."""
        by_file = url_order(dev, main)
        if by_file is not None:
            return by_file
        pairs = rev_pairs(dev, main)
        if isinstance(pairs, str):
            return RevOrder("unknown", pairs)
        orders = [self.pair_order(p) for p in pairs]
        if len(orders) == 1:
            return orders[0]
        combined = combine_orders(o.order for o in orders)
        return RevOrder(combined, "; ".join(f"{o.order}: {o.detail}" for o in orders))


def orders_for(values: Mapping[str, tuple[Any, Any]], fetch: bool, cache: Path | None = None, fetches: list[FetchRecord] | None = None) -> dict[str, RevOrder]:
    """name -> order of main's value against dev's, for every name given, each repository fetched
    once; each fetch's record is appended to `fetches` when given."""
    repos = SourceRepos(fetch, cache)
    # every pin of one repository in one fetch (one round trip per repository, not per entry)
    wanted: dict[str, list[Pin]] = {}
    for dev, main in values.values():
        pairs = rev_pairs(dev, main)
        for pair in pairs if not isinstance(pairs, str) else []:
            if pair.dev != pair.main and not any(pin.kind in ("branch", "default") for pin in (pair.dev, pair.main)):
                wanted.setdefault(pair.url, []).extend((pair.dev, pair.main))
    for url, pins in wanted.items():
        repos._ensure(url, pins)
    orders = {name: repos.order(dev, main) for name, (dev, main) in values.items()}
    if fetches is not None:
        fetches.extend(repos.fetches)
    return orders
