"""Shell: is main's git rev newer than dev's? Asked of the source repository itself.

Each source repository is fetched (no blobs) into a cache once per run; when it cannot be
asked the answer is "unknown" with the reason, never a guess. Without fetching
(`--no-fetch`) only what is already on this machine answers: depsync's cache of earlier
fetches (commits never change, so neither does their order) and `file://` repositories.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from depsync.shell import cache, process
from depsync.core.redact import redact
from depsync.core.sync.sources import Pin, RevOrder, RevPair, combine_orders, rev_pairs
from depsync.core.trust import GIT_ALLOW_PROTOCOL, git_url_allowed, is_full_commit

_HEX = re.compile(r"^[0-9a-f]{7,40}\Z")


def cache_dir() -> Path:
    return Path(cache.root()) / "git-sources"


def _git(args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    # no prompts, and only transports that move data (never `ext::`), whatever the URL says
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", GIT_ALLOW_PROTOCOL=GIT_ALLOW_PROTOCOL)
    return process.run(["git", *args], timeout=timeout, env=env)


def _short(commit: str) -> str:
    return commit[:10]


@dataclass
class SourceRepos:
    """The source repositories of one run: each fetched at most once, answers remembered."""

    fetch: bool = True
    cache: Path | None = None
    timeout: float = 60
    _state: dict[str, str] = field(default_factory=dict)  # url -> "" (usable) or why not

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
        if url in self._state:
            return self._state[url]
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
            fetched = self._run(
                repo, "fetch", "--quiet", "--no-tags", "--filter=blob:none", "--", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"
            )
            if fetched.returncode != 0:
                lines = [line.strip() for line in fetched.stderr.decode(errors="replace").splitlines() if line.strip()]
                said = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[0] if lines else "no message")
                self._state[url] = f"fetch failed: {redact(said)[:160]}"
                return self._state[url]
            missing = [p.value for p in wanted if p.kind == "rev" and is_full_commit(p.value.lower()) and not self._commit(repo, p)]
            if missing:  # a commit no branch or tag reaches (a PR head): ask for it by id
                self._run(repo, "fetch", "--quiet", "--no-tags", "--filter=blob:none", "--", url, *missing)
        except subprocess.TimeoutExpired:
            self._state[url] = f"no answer within {self.timeout:.0f}s"
            return self._state[url]
        except OSError as exc:
            self._state[url] = f"cache not usable: {exc.strerror or exc}"
            return self._state[url]
        self._state[url] = ""
        return ""

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
        pairs = rev_pairs(dev, main)
        if isinstance(pairs, str):
            return RevOrder("unknown", pairs)
        orders = [self.pair_order(p) for p in pairs]
        if len(orders) == 1:
            return orders[0]
        combined = combine_orders(o.order for o in orders)
        return RevOrder(combined, "; ".join(f"{o.order}: {o.detail}" for o in orders))


def orders_for(values: Mapping[str, tuple[Any, Any]], fetch: bool, cache: Path | None = None) -> dict[str, RevOrder]:
    """name -> order of main's value against dev's, for every name given, each repository fetched once."""
    repos = SourceRepos(fetch, cache)
    return {name: repos.order(dev, main) for name, (dev, main) in values.items()}
