"""Sync PRs squash- or rebase-merged into dev: reconcile and guard say so, found from content.
Real git (and real uv for the relock before guard)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from conftest import env_for, git, write_files
from support import depsync_in as depsync
from uvprojects import LocalMaterial

FILES = ("serve/a.py", "serve/b.py", "train/c.py", "train/d.py")


def _main_commits(repo: Path, files: tuple[str, ...], version: str) -> None:
    git(repo, "checkout", "-q", "main")
    for path in files:
        write_files(repo, {path: f"# {path}, main's {version}\nVALUE = {version!r}\n"})
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"main: {path} {version}")


def _history(repo: Path, landing: str) -> str:
    """dev synced main properly once, then main moved on (4 commits) and that sync landed on dev
    as `landing` says; then main changed one of the files again. Returns the proper sync's main commit."""
    git(repo, "checkout", "-q", "dev")
    git(repo, "merge", "-q", "-X", "ours", "main", "-m", "sync main into dev (merge commit)")
    synced = git(repo, "rev-parse", "main")
    _main_commits(repo, FILES, "v1")
    git(repo, "checkout", "-q", "dev")
    if landing == "squash":  # GitHub's "Squash and merge": main's changes as one dev commit
        git(repo, "merge", "-q", "--squash", "main")
        git(repo, "commit", "-qm", "Sync main into dev <img src=x onerror=alert(1)> @team (#12)")
    elif landing == "rebase":  # "Rebase and merge": each main commit copied onto dev
        git(repo, "cherry-pick", "main~4..main")
    elif landing == "merge":
        git(repo, "merge", "-q", "main", "-m", "sync main into dev (merge commit)")
    write_files(repo, {"serve/dev_only.py": "DEV = 1\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dev: its own work")
    _main_commits(repo, FILES[:1], "v2")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    return synced


def _reconcile(repo: Path, material: LocalMaterial, tmp_path: Path) -> tuple[dict, str]:
    plan, summary = tmp_path / "plan.json", tmp_path / "pr.md"
    result = depsync(repo, "reconcile", "--dev", "dev", "--main", "main", "--dry-run", "--no-fetch", "--plan-json", str(plan), "--summary", str(summary), env=env_for(material))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return json.loads(plan.read_text())["squashed_syncs"], summary.read_text()


def test_a_squash_merged_sync_is_reported_with_its_repair(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    synced = _history(repo, "squash")
    merged = subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True, text=True)
    assert merged.returncode != 0 and "serve/a.py" in git(repo, "diff", "--name-only", "--diff-filter=U")  # the same change, again
    squashed, summary = _reconcile(repo, material, tmp_path)
    assert squashed["merge_base"] == synced
    [finding] = squashed["findings"]
    squash_commit = git(repo, "rev-parse", "dev~1")
    assert finding["kind"] == "squash" and finding["dev_commits"] == [squash_commit]
    assert finding["newest_main"] == git(repo, "rev-parse", "main~1") and len(finding["carried"]) == 4 and finding["left_out"] == []
    assert finding["repair"] == f"git merge -s ours {finding['newest_main']}"
    assert "Syncs that landed on dev without main as a parent" in summary
    assert f"the merge-base is stuck at {synced[:10]}" in summary
    assert f"`git merge -s ours {finding['newest_main'][:10]}`" in summary and "carries 4 of main's 4 commits" in summary
    assert not re.search(r"(?<!\\)<img", summary) and "\\<img" in summary and "@team" not in summary  # the subject is escaped

    # the repair, as the summary says: on dev, main up to the squashed commit recorded as merged
    git(repo, "merge", "--abort")
    git(repo, "checkout", "-q", "dev")
    tree = git(repo, "rev-parse", "dev^{tree}")
    git(repo, "merge", "-q", "-s", "ours", finding["newest_main"], "-m", "record main as merged")
    assert git(repo, "rev-parse", "dev^{tree}") == tree  # dev's files unchanged
    assert git(repo, "merge-base", "dev", "main") == finding["newest_main"]
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    again = subprocess.run(["git", "-C", str(repo), "merge", "-q", "main", "-m", "sync"], capture_output=True, text=True)
    assert again.returncode == 0, again.stdout + again.stderr  # main's newer change to serve/a.py merges cleanly now
    assert (repo / "serve/a.py").read_text().endswith("'v2'\n")
    squashed, summary = _reconcile(repo, material, tmp_path)
    assert squashed["findings"] == [] and "without main as a parent" not in summary


def test_a_rebase_merged_sync_is_reported(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    _history(repo, "rebase")
    squashed, summary = _reconcile(repo, material, tmp_path)
    [finding] = squashed["findings"]
    assert finding["kind"] == "rebase" and len(finding["dev_commits"]) == 4 and len(finding["carried"]) == 4
    assert "rebase-merged sync" in summary and "Merge this PR with a merge commit" in summary


def test_a_sync_merged_with_a_merge_commit_is_not_reported(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    _history(repo, "merge")
    squashed, summary = _reconcile(repo, material, tmp_path)
    assert squashed["findings"] == [] and squashed["merge_base"] == git(repo, "rev-parse", "main~1")
    assert "without main as a parent" not in summary


def test_cherry_picked_fixes_from_a_long_main_are_not_reported(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    _main_commits(repo, tuple(f"lib/m{i}.py" for i in range(30)), "v1")
    git(repo, "checkout", "-q", "dev")
    git(repo, "cherry-pick", "main~20", "main~12")  # two fixes, one at a time
    git(repo, "checkout", "-q", "main~8", "--", "lib/m20.py", "lib/m21.py")  # and two more in one commit
    git(repo, "commit", "-qm", "backport two fixes")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    squashed, summary = _reconcile(repo, material, tmp_path)
    assert squashed["findings"] == [] and "without main as a parent" not in summary


def test_guard_warns_of_a_squashed_sync_and_passes(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    _history(repo, "squash")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    result = depsync(repo, "reconcile", "--dev", "dev", env=env_for(material))
    assert result.returncode in (0, 1), result.stdout + result.stderr
    git(repo, "checkout", "--theirs", "--", "serve/a.py")
    git(repo, "add", "serve/a.py")
    git(repo, "commit", "-qm", "sync main into dev")
    guarded = depsync(repo, "guard", env=env_for(material))
    assert guarded.returncode == 0, guarded.stdout + guarded.stderr
    squash = git(repo, "rev-parse", "--short=10", "dev~1")
    assert "warning: dev carries main's commits without main as a parent" in guarded.stderr
    assert squash in guarded.stderr and "a squash-merged sync: carries 4 of main's 4 commits" in guarded.stderr
    assert "git merge -s ours" in guarded.stderr and "<img src=x onerror=alert(1)> @team" in guarded.stderr  # plain text: no Markdown escapes


def _dated(repo: Path, when: int, *args: str) -> str:
    """git with both dates set: what any commit author can write."""
    stamp = f"@{when} +0000"
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True).stdout.strip()


def test_mains_back_dated_copies_of_dev_work_are_not_a_squashed_sync(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """A main PR copies two files dev wrote, its commits dated a month before dev's, and lands
    with a merge commit after dev's: no 'squash-merged sync', no `git merge -s ours` advice."""
    repo = small_repo
    t0 = int(time.time()) + 86400
    git(repo, "checkout", "-q", "dev")
    write_files(repo, {"lib/a.py": "A = 'dev'\n", "lib/b.py": "B = 'dev'\n"})
    git(repo, "add", "-A")
    _dated(repo, t0, "commit", "-qm", "dev: two modules")
    git(repo, "checkout", "-q", "-b", "copy", "main")
    for name in ("a", "b"):
        git(repo, "checkout", "-q", "dev", "--", f"lib/{name}.py")
        _dated(repo, t0 - 30 * 86400, "commit", "-qm", f"main: lib/{name}.py")
    git(repo, "checkout", "-q", "main")
    _dated(repo, t0 + 3600, "merge", "-q", "--no-ff", "copy", "-m", "Merge pull request #9 from someone/copy")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    squashed, summary = _reconcile(repo, material, tmp_path)
    assert squashed["findings"] == [] and "git merge -s ours" not in summary


def test_the_repair_names_what_it_drops_a_deletion_and_an_emptied_file(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    """main deletes one file and empties another between the commits a squash carries (no blob of
    theirs is evidence); the squashed sync kept dev's copies: `git merge -s ours` would keep them
    for good, so the report lists both."""
    repo = small_repo
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"old.py": "OLD = 1\n", "cfg.py": "DEBUG = True\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main: old.py, cfg.py")
    git(repo, "checkout", "-q", "dev")
    git(repo, "merge", "-q", "-X", "ours", "main", "-m", "sync main into dev (merge commit)")
    _main_commits(repo, FILES[:2], "v1")
    git(repo, "rm", "-q", "old.py")
    (repo / "cfg.py").write_text("")
    git(repo, "commit", "-qam", "main: remove old.py, empty cfg.py (the fix)")
    _main_commits(repo, FILES[2:], "v1")
    git(repo, "checkout", "-q", "dev")
    git(repo, "merge", "-q", "--squash", "main")
    git(repo, "checkout", "-q", "HEAD", "--", "old.py", "cfg.py")  # the sync PR kept dev's copies
    git(repo, "commit", "-qm", "Sync main into dev (#13)")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    squashed, summary = _reconcile(repo, material, tmp_path)
    [finding] = squashed["findings"]
    assert finding["newest_main"] == git(repo, "rev-parse", "main") and finding["left_out"] == [] and finding["paths"] == 4
    assert squashed["dropped_by_repair"] == [{"path": "cfg.py", "main": "emptied"}, {"path": "old.py", "main": "deleted"}]
    assert "likely a squash-merged sync" in summary and "evidence: the same content at 4 path(s)" in summary
    assert "The repair keeps dev's version of 2 file(s)" in summary
    assert "- `cfg.py`: main emptied it, dev has it differently" in summary and "- `old.py`: main deleted it" in summary
