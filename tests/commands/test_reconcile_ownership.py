"""Ownership read from dev's history, and rev order asked of the upstream repository: real git throughout.

One upstream repository (file://): a line u0..u4 and a release branch r0..r1 forking at u1.
One project whose dev and main histories hand pins over in every way the rules name; the
final plan must keep dev's pin where dev chose it, take main's forward move where main
owns the pin, and flag what a reviewer must look at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from depsync.core.config import Config
from depsync.core.sync.merge import expected_pyproject, reconciled_pyproject, uv_tables

LOCK = "version = 1\nrevision = 3\n"


class History:
    """git with a clock that moves one hour per commit (histories made in one second are not real)."""

    def __init__(self, repo: Path) -> None:
        self.repo, self.clock = repo, 1_700_000_000
        repo.mkdir(parents=True)
        self("init", "-q", "-b", "main")

    def __call__(self, *args: str) -> str:
        self.clock += 3600
        stamp = f"{self.clock} +0000"
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid", GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        return subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True, text=True, env=env, check=True).stdout.strip()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    repo = History(tmp_path_factory.mktemp("upstream") / "kernels")
    commits = {}
    for n in range(5):
        (repo.repo / "VERSION").write_text(f"u{n}\n")
        repo("add", "VERSION")
        repo("commit", "-qm", f"u{n}")
        commits[f"u{n}"] = repo("rev-parse", "HEAD")
        if n == 1:
            repo("checkout", "-q", "-b", "release")
            for r in range(2):
                (repo.repo / "VERSION").write_text(f"r{r}\n")
                repo("commit", "-qam", f"r{r}")
                commits[f"r{r}"] = repo("rev-parse", "HEAD")
            repo("checkout", "-q", "main")
    return repo.repo.as_uri(), commits


NAMES = ("owned", "copied", "handed-back", "diverged", "removed", "index")


def pyproject(url: str, commits: dict[str, str], pins: dict[str, str | None], deps: tuple[str, ...]) -> str:
    lines = ['[project]\nname = "app"\nversion = "0"\n', f"dependencies = [{', '.join(repr(d).replace(chr(39), chr(34)) for d in deps)}]\n\n[tool.uv.sources]\n"]
    lines += [f'{name} = {{ git = "{url}", rev = "{commits[pin]}" }}\n' for name, pin in pins.items() if pin]
    return "".join(lines)


def test_ownership_and_rev_order_decide_main_s_moves(upstream: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, u = upstream
    repo = History(tmp_path / "app")
    main_pins: dict[str, str | None] = {"owned": "u1", "copied": "u1", "handed-back": "u1", "diverged": "u2", "removed": "u1"}
    dev_pins = dict(main_pins)
    main_deps = ("owned", "copied", "handed-back", "diverged", "removed")
    dev_deps = ("owned", "copied", "handed-back", "diverged", "index")  # dev takes `index` from the index, no longer needs `removed`

    def commit(branch: str, pins: dict[str, str | None], deps: tuple[str, ...], message: str) -> None:
        if message != "base":  # the first commit makes the branch
            repo("checkout", "-q", branch)
        (repo.repo / "pyproject.toml").write_text(pyproject(url, u, pins, deps))
        (repo.repo / "uv.lock").write_text(LOCK)
        repo("add", "-A")
        repo("commit", "-qm", message)

    def sync(message: str, pins: dict[str, str | None]) -> None:
        """merge main into dev, resolved to pins (the maintainer's choice)."""
        repo("checkout", "-q", "dev")
        subprocess.run(["git", "-C", str(repo.repo), "merge", "-q", "--no-commit", "main"], capture_output=True)
        (repo.repo / "pyproject.toml").write_text(pyproject(url, u, pins, dev_deps))
        repo("add", "-A")
        repo("commit", "-qm", message)

    commit("main", main_pins, main_deps, "base")
    repo("branch", "dev")
    # dev chooses its own pins; dev drops a source it no longer wants
    dev_pins.update({"owned": "u2", "handed-back": "u2", "removed": None})
    commit("dev", dev_pins, dev_deps, "dev: kernels at u2 for the new attention")
    # main bumps one pin (dev copies it early), adopts dev's pin of another, moves a third past dev's
    main_pins.update({"copied": "u2"})
    commit("main", main_pins, main_deps, "main: bump copied")
    dev_pins.update({"copied": "u2"})
    commit("dev", dev_pins, dev_deps, "dev: take main's copied bump early")
    main_pins.update({"owned": "u2", "handed-back": "u3", "removed": None})
    commit("main", main_pins, main_deps, "main: take dev's owned pin; handed-back to u3; drop removed")
    # the maintainer hands `handed-back` to main at this sync (takes main's u3); the rest as the rules say
    dev_pins.update({"handed-back": "u3"})
    sync("Merge main into dev", dev_pins)
    # the sync being reconciled: main moves everything again
    main_pins.update({"owned": "u3", "copied": "u3", "handed-back": "u4", "diverged": "r1", "removed": "u0", "index": "u1"})
    commit("main", main_pins, (*main_deps, "index"), "main: bump everything")

    plan = tmp_path / "plan.json"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = subprocess.run(
        [sys.executable, "-m", "depsync", "reconcile", "-v", "--dev", "dev", "--main", "main", "--no-merge", "--dry-run", "--plan-json", str(plan)],
        cwd=repo.repo, capture_output=True, text=True, env=env,
    )
    assert result.returncode == 1, result.stderr
    # the evidence fetch asked for the pinned commits only, said under -v and in the plan
    fetches = json.loads(plan.read_text())["evidence_fetches"]
    assert len(fetches) == 1 and fetches[0]["asked"].endswith("commit(s)") and fetches[0]["bytes"] > 0 and fetches[0]["outcome"] == ""
    assert f"fetched {fetches[0]['asked']} of {url}" in result.stderr
    decisions = {d["name"]: d for d in json.loads(plan.read_text())["sources"]}
    kept = {name: (d["case"], d["taken_from"], d["needs_review"]) for name, d in decisions.items()}
    assert kept == {
        "owned": ("main-changed", "dev", True),  # dev chose u2 before main took it: dev owns it (read from history: flagged)
        "copied": ("main-changed", "main", False),  # dev only copied main's pin: main owns it, u3 is a fast-forward
        "handed-back": ("main-changed", "main", False),  # a sync took main's value: main owns it again
        "diverged": ("main-changed", "dev", True),  # r1 is on another line than u2
        "removed": ("main-added", "none", True),  # dev removed it itself: main's re-addition not carried, flagged
        "index": ("main-added", "none", True),  # dev takes it from the index
    }
    evidence = {name: " | ".join(d["evidence"]) for name, d in decisions.items()}
    assert "dev owns it: dev's commit" in evidence["owned"] and "dev: kernels at u2 for the new attention" in evidence["owned"]
    assert "main owns it" in evidence["copied"] and "dev: take main's copied bump early" in evidence["copied"]
    assert "main owns it" in evidence["handed-back"] and "sync merge" in evidence["handed-back"]
    assert "rev order: diverged" in evidence["diverged"] and "rev order: main-newer" in evidence["copied"]
    assert "dev removed it: commit" in evidence["removed"]

    # the same merge again: dev's history is remembered by commit (immutable), not read again
    trace = tmp_path / "git-trace"
    again = subprocess.run(
        [sys.executable, "-m", "depsync", "reconcile", "--dev", "dev", "--main", "main", "--no-merge", "--dry-run", "--plan-json", str(tmp_path / "again.json")],
        cwd=repo.repo, capture_output=True, text=True, env=dict(env, GIT_TRACE=str(trace)),
    )
    assert again.returncode == 1, again.stderr
    assert json.loads((tmp_path / "again.json").read_text())["sources"] == json.loads(plan.read_text())["sources"]
    walks = [line for line in trace.read_text().splitlines() if "--first-parent" in line and line.endswith("pyproject.toml")]
    assert walks == []  # no walk of pyproject's history

    # the guard accepts what reconcile decided from evidence it cannot gather itself
    texts = {ref: subprocess.run(["git", "-C", str(repo.repo), "show", f"{ref}:pyproject.toml"], capture_output=True, text=True, check=True).stdout for ref in ("dev", "main")}
    base = subprocess.run(["git", "-C", str(repo.repo), "merge-base", "dev", "main"], capture_output=True, text=True, check=True).stdout.strip()
    texts["base"] = subprocess.run(["git", "-C", str(repo.repo), "show", f"{base}:pyproject.toml"], capture_output=True, text=True, check=True).stdout
    from depsync.commands.reconcile import ReconcileOptions
    from depsync.commands.reconcile import plan as make_plan

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    try:
        ours = make_plan(ReconcileOptions(repo.repo, dev="dev", main="main", no_merge=True, dry_run=True, no_lock=True))
    finally:
        if old is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = old
    written = ours[2]["pyproject.toml"].decode()
    naive, _, _ = reconciled_pyproject(texts["base"], texts["dev"], texts["main"], Config())
    assert uv_tables(naive) != uv_tables(written)  # without evidence the guard would take main's moves
    assert uv_tables(expected_pyproject(written, texts["base"], texts["dev"], texts["main"], Config())) == uv_tables(written)


def test_rev_order_of_commits_tags_and_branches(upstream: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    from depsync.shell.revs import SourceRepos

    url, u = upstream
    repo = Path(url.removeprefix("file://"))
    subprocess.run(["git", "-C", str(repo), "tag", "-f", "v1", u["u1"]], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "tag", "-f", "v3", u["u3"]], check=True, capture_output=True)
    repos = SourceRepos(fetch=False, cache=tmp_path / "cache")  # file:// answers without the network

    def order(dev: dict, main: dict) -> str:
        return repos.order({"git": url, **dev}, {"git": url, **main}).order

    assert order({"rev": u["u1"]}, {"rev": u["u3"]}) == "main-newer"
    assert order({"rev": u["u3"]}, {"rev": u["u1"]}) == "dev-newer"
    assert order({"rev": u["u3"]}, {"rev": u["r1"]}) == "diverged"
    assert order({"rev": u["u3"][:12]}, {"rev": u["u3"]}) == "same"  # an abbreviated commit
    assert order({"tag": "v1"}, {"tag": "v3"}) == "main-newer"
    assert order({"rev": "v1"}, {"rev": u["u4"]}) == "main-newer"  # uv takes a tag in `rev` too
    assert "branch" in repos.order({"git": url, "branch": "main"}, {"git": url, "rev": u["u4"]}).detail
    missing = repos.order({"git": url, "rev": u["u1"]}, {"git": url, "rev": "0" * 40})
    assert missing.order == "unknown" and "not found" in missing.detail
    lists = repos.order([{"git": url, "rev": u["u1"], "marker": "a"}, {"git": url, "rev": u["u2"], "marker": "b"}], [{"git": url, "rev": u["u2"], "marker": "a"}, {"git": url, "rev": u["u2"], "marker": "b"}])
    assert lists.order == "main-newer"
    refused = SourceRepos(fetch=True, cache=tmp_path / "cache2").order({"git": "ext::sh -c touch% x", "rev": u["u1"]}, {"git": "ext::sh -c touch% x", "rev": u["u2"]})
    assert refused.order == "unknown" and refused.detail.startswith("URL not fetchable")
    remote = SourceRepos(fetch=False, cache=tmp_path / "cache3").order({"git": "https://example.invalid/r.git", "rev": u["u1"]}, {"git": "https://example.invalid/r.git", "rev": u["u2"]})
    assert (remote.order, remote.detail) == ("unknown", "not fetched (--no-fetch) and not in depsync's cache")
