"""Shell: is main's git rev newer than dev's? Asked of the source repository itself.

The repository is fetched (no blobs) into a cache once; when it cannot be reached in
time the answer is "unknown", never a guess.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

from depsync import process
from depsync.untrusted import GIT_ALLOW_PROTOCOL, git_url_allowed

_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "depsync" / "git-sources"


def _git(args: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    # no prompts, and only transports that move data (never `ext::`), whatever the URL says
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", GIT_ALLOW_PROTOCOL=GIT_ALLOW_PROTOCOL)
    return process.run(["git", *args], timeout=timeout, env=env)


def rev_order(url: str, dev_rev: str, main_rev: str, *, cache: Path | None = None, timeout: float = 60) -> str:
    """'main-newer', 'dev-newer', 'same', 'diverged' or 'unknown'."""
    dev_rev, main_rev = dev_rev.lower(), main_rev.lower()
    if dev_rev == main_rev:
        return "same"
    if not (_COMMIT.match(dev_rev) and _COMMIT.match(main_rev)):
        return "unknown"
    if not git_url_allowed(url):  # an option (`--upload-pack=...`) or a command transport: never fetched
        return "unknown"
    repo = (cache or cache_dir()) / hashlib.sha256(url.encode()).hexdigest()[:20]
    try:
        if not (repo / "HEAD").exists():
            repo.mkdir(parents=True, exist_ok=True)
            _git(["init", "--quiet", "--bare", str(repo)], timeout)
        have = all(_git(["-C", str(repo), "cat-file", "-e", f"{r}^{{commit}}"], timeout).returncode == 0 for r in (dev_rev, main_rev))
        if not have:
            fetched = _git(
                ["-C", str(repo), "fetch", "--quiet", "--no-tags", "--filter=blob:none", "--", url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                timeout,
            )
            if fetched.returncode != 0:
                return "unknown"
        if _git(["-C", str(repo), "merge-base", "--is-ancestor", dev_rev, main_rev], timeout).returncode == 0:
            return "main-newer"
        if _git(["-C", str(repo), "merge-base", "--is-ancestor", main_rev, dev_rev], timeout).returncode == 0:
            return "dev-newer"
        both = _git(["-C", str(repo), "cat-file", "-e", f"{dev_rev}^{{commit}}"], timeout).returncode == 0
        return "diverged" if both else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
