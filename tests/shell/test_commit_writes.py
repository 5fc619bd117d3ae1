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


def test_the_read_is_bounded_per_commit_and_over_all_and_says_so(tmp_path: Path) -> None:
    """Read as it comes: a commit's paths past max_files are counted, not kept; the read stops
    at max_paths kept; a merge is read with its parents (its landing time is evidence)."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"README": "base\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    for round_ in range(3):
        write_files(repo, {f"d/f{i}.txt": f"{round_}-{i}\n" for i in range(40)})
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"forty files, round {round_}")
    git(repo, "checkout", "-q", "-b", "side", base)
    write_files(repo, {"side.txt": "s\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "side")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "merge side")
    commits, cut = shell_git.commit_writes(repo, base, "HEAD", max_files=25)
    assert not cut and commits[0].parents == (git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "side"))
    assert commits[0].changes == {}  # a merge's raw diff is not read: its parents say what it merged
    forty = [c for c in commits if c.subject.startswith("forty")]
    assert [(len(c.changes), c.files_cut) for c in forty] == [(25, 15)] * 3
    capped, cut = shell_git.commit_writes(repo, base, "HEAD", max_files=25, max_paths=60)
    assert cut and len(capped) < len(commits) and sum(len(c.changes) for c in capped) <= 60
    only, _ = shell_git.commit_writes(repo, base, "HEAD", keep=lambda path, blob: path == "d/f7.txt")
    assert [list(c.changes) for c in only if c.subject.startswith("forty")] == [["d/f7.txt"]] * 3
