"""`depsync reconcile` as the sync pipeline runs it: the plan is never lost, and the summary says what is left.

Real git, real uv (local runner, a uv on PATH that records what it saw), the real Docker
engine for an image that cannot be had, a real pseudo-terminal for the rendered summary.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import env_for, git, init_repo, write_files
from support import depsync_in as depsync
from uvprojects import LocalMaterial


def files(repo: Path) -> dict[str, bytes | None]:
    return {p: (repo / p).read_bytes() if (repo / p).exists() else None for p in ("pyproject.toml", "uv.lock", ".github/CODEOWNERS")}


@pytest.fixture
def merging(small_repo: Path) -> Path:
    subprocess.run(["git", "-C", str(small_repo), "merge", "-q", "main"], capture_output=True)
    return small_repo


def test_an_image_that_cannot_be_had_still_leaves_the_plan(engine, merging: Path, material: LocalMaterial, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before, unmerged = files(merging), git(merging, "diff", "--name-only", "--diff-filter=U")
    plan, summary = tmp_path / "plan.json", tmp_path / "pr.md"
    result = depsync(
        merging, "reconcile", "--dev", "dev", "--runner", "docker", "--image", "depsync-test:does-not-exist", "--plan-json", str(plan), "--summary", str(summary),
        env=env_for(material),
    )
    assert result.returncode == 2, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("depsync: error")]
    assert len(errors) == 1 and errors[0] == result.stderr.strip().splitlines()[-1]
    assert errors[0].startswith("depsync: error: image depsync-test:does-not-exist")
    assert "--build" not in result.stderr + result.stdout + summary.read_text() + plan.read_text()  # reconcile has no --build
    assert "--runner local" in errors[0]
    assert files(merging) == before and git(merging, "diff", "--name-only", "--diff-filter=U") == unmerged
    document = json.loads(plan.read_text())
    assert (document["status"], document["lock"]["state"]) == ("failed", "failed")
    assert "depsync-test:does-not-exist" in document["failure"]
    assert {d["name"] for d in document["sources"]} == {"zeta", "eta", "foo-bar"}
    assert "**Failed**: image depsync-test:does-not-exist" in summary.read_text()


def recording_uv(directory: Path) -> Path:
    """A uv first on PATH that copies the summary and the plan aside when `uv lock` starts, then is the real uv."""
    real = shutil.which("uv")
    assert real is not None
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "uv"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = lock ]; then cp "$SUMMARY" "$SUMMARY.during"; cp "$PLAN" "$PLAN.during"; fi\n'
        f'exec {real} "$@"\n'
    )
    script.chmod(0o755)
    return directory


def test_the_plan_is_written_before_the_relock_and_again_after(merging: Path, material: LocalMaterial, tmp_path: Path) -> None:
    plan, summary = tmp_path / "plan.json", tmp_path / "pr.md"
    bin_dir = recording_uv(tmp_path / "bin")
    env = dict(env_for(material), PATH=f"{bin_dir}:{os.environ['PATH']}", SUMMARY=str(summary), PLAN=str(plan))
    result = depsync(merging, "reconcile", "--dev", "dev", "--runner", "local", "--plan-json", str(plan), "--summary", str(summary), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    during = json.loads(Path(f"{plan}.during").read_text())
    assert (during["status"], during["lock"]["state"]) == ("planned", "pending")
    assert during["lock"]["note"].startswith("relocking with local runner")
    assert "**Planned, relocking now**" in Path(f"{summary}.during").read_text()
    after = json.loads(plan.read_text())
    assert (after["status"], after["lock"]["state"]) == ("ready", "relocked")
    assert {c["name"]: c["kind"] for c in after["lock"]["changes"]} == {"zeta": "upgraded"}
    text = summary.read_text()
    assert "**Ready**" in text and "| `zeta` | upgraded |" in text.replace("`zeta` | upgraded", "`zeta` | upgraded")
    steps = text.split("### Next steps")[1]
    assert "depsync lock" not in steps and "`git commit --no-edit`" in steps and "`depsync guard`" in steps


def test_next_steps_name_the_files_still_conflicted(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    for branch, words in (("dev", "dev's notes\n"), ("main", "main's notes\n")):
        git(repo, "checkout", "-q", branch)
        write_files(repo, {"NOTES.md": words})
        git(repo, "add", "NOTES.md")
        git(repo, "commit", "-qm", f"{branch}: notes")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--plan-json", str(plan), env=env_for(material))
    assert result.returncode == 1, result.stderr  # not relocked: check says the lock is stale
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == "NOTES.md"  # reconcile does not touch other files
    document = json.loads(plan.read_text())
    assert document["unmerged"] == ["NOTES.md"]
    steps = result.stdout.split("### Next steps")[1]
    assert "Resolve the files still conflicted (1, from `git diff --name-only --diff-filter=U`): `NOTES.md`" in steps
    assert "Relock in the CI image: `depsync lock`" in steps


def test_no_fetch_asks_local_repositories_and_says_why_when_it_cannot(material: LocalMaterial, tmp_path: Path) -> None:
    """--no-fetch: a file:// repository still answers (no network); a remote one is 'unknown' with the
    reason, and so is a repository that cannot be fetched. Those keep dev's pin and are flagged."""
    c = material.git.commits

    def pyproject(zeta: str, remote: str, gone: str) -> str:
        return (
            '[project]\nname = "app"\nversion = "0"\ndependencies = ["zeta", "remote", "gone"]\n\n[tool.uv.sources]\n'
            f'zeta = {{ git = "{material.git.url}", rev = "{zeta}" }}\n'
            f'remote = {{ git = "https://git.example.invalid/remote.git", rev = "{remote}" }}\n'
            f'gone = {{ git = "{(tmp_path / "gone.git").as_uri()}", rev = "{gone}" }}\n'
        )

    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject(c["c1"], "1" * 40, "2" * 40), "uv.lock": "version = 1\nrevision = 3\n"})
    git(repo, "branch", "dev")
    write_files(repo, {"pyproject.toml": pyproject(c["c2"], "3" * 40, "4" * 40)})
    git(repo, "commit", "-qam", "main: zeta, remote and gone moved")
    env = dict(env_for(material), XDG_CACHE_HOME=str(tmp_path / "cache"))
    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--main", "main", "--no-merge", "--dry-run", "--no-fetch", "--plan-json", str(plan), env=env)
    assert result.returncode == 1, result.stderr
    by_name = {d["name"]: d for d in json.loads(plan.read_text())["sources"]}
    zeta = by_name["zeta"]
    assert zeta["taken_from"] == "main" and not zeta["needs_review"] and zeta["rule"] == "main-changed/fast-forward"
    assert any(e.startswith("rev order: main-newer (dev's") for e in zeta["evidence"])
    for name, why in (("remote", "not fetched (--no-fetch) and not in depsync's cache"), ("gone", "fetch failed: ")):
        decision = by_name[name]
        assert (decision["case"], decision["taken_from"], decision["needs_review"]) == ("main-changed", "dev", True), decision
        assert any(e.startswith(f"rev order: unknown ({why}") for e in decision["evidence"]), decision["evidence"]
        assert "rev order could not be established" in decision["reason"]


def test_the_summary_is_rendered_on_a_terminal(merging: Path, material: LocalMaterial) -> None:
    """On a TTY rich renders the Markdown (no table pipes, no `###`); through a pipe it stays raw."""
    primary, secondary = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "depsync", "reconcile", "--dev", "dev", "--dry-run", "--no-fetch"],
            cwd=merging, stdout=secondary, stderr=subprocess.PIPE, env=dict(env_for(material), COLUMNS="160", TERM="xterm"),
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert child.wait(timeout=120) in (0, 1)
    finally:
        os.close(primary)
    shown = b"".join(chunks).decode(errors="replace")
    assert "depsync reconcile" in shown and "zeta" in shown and "Next steps" in shown
    assert "|---|" not in shown and "### " not in shown
    raw = depsync(merging, "reconcile", "--dev", "dev", "--dry-run", "--no-fetch", env=env_for(material)).stdout
    assert "|---|" in raw and "### Next steps" in raw
