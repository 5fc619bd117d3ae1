"""git.commit_writes: what each commit wrote, read from one `git log --raw -z` (real git)."""

from __future__ import annotations

from pathlib import Path

from conftest import git, write_files

from depsync.shell import git as shell_git


def test_blobs_deletions_odd_paths_and_subjects(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"keep.txt": "1\n", "gone.txt": "x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    odd = "dir with space/new\nline ünï.py"
    write_files(repo, {odd: "odd\n", "keep.txt": "2\n"})
    (repo / "gone.txt").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "subject \x1e with a separator\x1f and more")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    commits, cut = shell_git.commit_writes(repo, base, "HEAD")
    assert not cut and [c.subject for c in commits][0] == "empty" and commits[0].changes == {}
    second = commits[1]
    assert second.changes == {
        odd: git(repo, "rev-parse", f"HEAD:{odd}"),
        "keep.txt": git(repo, "rev-parse", "HEAD:keep.txt"),
        "gone.txt": None,
    }
    assert second.sha == git(repo, "rev-parse", "HEAD~1") and "separator" in second.subject
    capped, cut = shell_git.commit_writes(repo, base, "HEAD", max_count=1)
    assert cut and [c.subject for c in capped] == ["empty"]
