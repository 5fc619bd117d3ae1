"""The reconcile summary and plan JSON (pure): links, rows, evidence, next steps, GitHub's size limit."""

from __future__ import annotations

import json

import pytest

from depsync.core.findings import Finding, Severity
from depsync.core.lockdiff import PackageChange
from depsync.core.sync.reconciliation import LockOutcome, Reconciliation
from depsync.core.sync.sources import Evidence, RevOrder, merge_sources
from depsync.report.reconcile import (
    BODY_LIMIT,
    commit_link,
    compare_link,
    github_repo,
    next_steps,
    to_json,
    to_markdown,
)

SHA_A, SHA_B = "a" * 40, "b" * 40


@pytest.mark.parametrize(
    "url, repo",
    [
        ("https://github.com/NVIDIA/TransformerEngine.git", "https://github.com/NVIDIA/TransformerEngine"),
        ("https://github.com/NVIDIA-NeMo/Run", "https://github.com/NVIDIA-NeMo/Run"),
        ("git+https://bot:secret@github.com/o/r.git/", "https://github.com/o/r"),  # credentials never reach a link
        ("ssh://git@github.com/o/r.git", "https://github.com/o/r"),
        ("git@github.com:o/r.git", "https://github.com/o/r"),
        ("https://gitlab.com/o/r.git", None),
        ("https://github.com.evil.example/o/r.git", None),
        ("file:///srv/github.com/o/r", None),
    ],
)
def test_github_repositories(url: str, repo: str | None) -> None:
    assert github_repo(url) == repo


def test_commit_and_compare_links() -> None:
    dev = {"git": "https://github.com/o/r.git", "rev": SHA_A}
    main = {"git": "https://github.com/O/R", "rev": SHA_B}
    assert commit_link(dev) == f"https://github.com/o/r/commit/{SHA_A}"
    assert commit_link({"git": "https://github.com/o/r", "tag": "v1.2"}) == "https://github.com/o/r/commit/v1.2"
    assert commit_link({"git": "https://github.com/o/r", "branch": "main"}) is None  # a branch moves
    assert compare_link(dev, main) == f"https://github.com/o/r/compare/{SHA_A}...{SHA_B}"
    assert compare_link(dev, {"git": "https://github.com/fork/r", "rev": SHA_B}) is None
    assert compare_link(dev, None) is None and compare_link(dev, dev) is None


def reconciliation(decisions: list, **kw) -> Reconciliation:
    return Reconciliation("origin/dev", "origin/main", "d" * 40, "e" * 40, "f" * 40, decisions, [], **kw)


def sample_decisions() -> list:
    a = {"git": "https://github.com/o/a.git", "rev": SHA_A}
    b = {"git": "https://github.com/o/a.git", "rev": SHA_B}
    same = {"git": "https://github.com/o/s.git", "rev": SHA_A}
    evidence = Evidence(rev_order={"a": RevOrder("diverged", "neither is an ancestor of the other")}, gathered=True)
    return merge_sources({"a": a, "same": same}, {"a": a, "same": same}, {"a": b, "same": same}, evidence=evidence)


def test_rows_only_for_entries_that_differ_with_evidence_and_links() -> None:
    result = reconciliation(sample_decisions(), lock=LockOutcome("not-relocked", "not relocked (--no-lock): uv.lock is dev's"), merging=True, checked=True)
    text = to_markdown(result)
    assert "| **yes** | `a` |" in text and "| `same` |" not in text
    assert "1 entry is the same on dev and main: `same`." in text
    assert "  - rev order: diverged (neither is an ancestor of the other)" in text
    assert f"[compare dev...main](https://github.com/o/a/compare/{SHA_A}...{SHA_B})" in text
    assert f"[git a@{SHA_A[:12]}](https://github.com/o/a/commit/{SHA_A})" in text
    assert "**Needs review**: main changed 1 entry in 1 table (1 source): 0 taken, 1 kept dev's, 1 flagged." in text
    steps = next_steps(result)
    assert steps[0].startswith("Relock in the CI image: `depsync lock`")
    assert "`git commit --no-edit` (concludes the merge)." in steps[-2] and "`depsync guard`" in steps[-1]
    document = json.loads(to_json(result))
    assert document["flags"] == {"flagged": 1, "differing": 1, "rate": 1.0}
    assert document["sources"][0]["links"]["compare"].endswith(f"{SHA_A}...{SHA_B}")
    assert document["sources"][0]["rule"] == "main-changed/diverged"


def test_a_huge_sync_stays_under_github_s_limit() -> None:
    many = {f"pkg{i}": {"git": f"https://github.com/o/pkg{i}.git", "rev": SHA_A} for i in range(600)}
    moved = {name: dict(value, rev=SHA_B) for name, value in many.items()}
    decisions = merge_sources(many, many, moved, evidence=Evidence(gathered=True))  # 600 flagged: order unknown
    changes = [PackageChange(f"dep{i}", "upgraded", "1.0", "2.0", i % 7 == 0) for i in range(6000)]
    findings = [Finding("pyproject.toml", i, "source-inert", Severity.WARNING, f"finding {i} " + "x" * 80, "remove it") for i in range(500)]
    result = reconciliation(decisions, lock=LockOutcome("relocked", "relocked with uv 0.7.2 (local runner)", changes), findings=findings, checked=True)
    text = to_markdown(result)
    assert len(text) <= BODY_LIMIT
    assert "### Next steps" in text or "summary cut to fit" in text
    assert "<details>" in text
    assert text.startswith("## depsync reconcile")
    small = to_markdown(reconciliation(sample_decisions()))
    assert "<details><summary>" not in small.split("### Sources")[1].split("###")[0]  # a short table is not folded


def test_a_failure_heads_the_summary_and_changes_the_next_steps() -> None:
    result = reconciliation(sample_decisions(), lock=LockOutcome("failed", "relock failed: image x is not on this engine"), failure="image x is not on this engine")
    text = to_markdown(result)
    assert text.splitlines()[2].startswith("**Failed**: image x is not on this engine")
    assert "rerun `depsync reconcile`" in next_steps(result)[0]
    assert json.loads(to_json(result))["status"] == "failed"
    assert len(next_steps(result)) == 2
    left = reconciliation(sample_decisions(), lock=LockOutcome("failed", "relock failed"), failure="relock failed", unmerged=["app.py"])
    assert "Resolve the files still conflicted (1" in next_steps(left)[-1] and json.loads(to_json(left))["unmerged"] == ["app.py"]


def test_secrets_in_sources_are_masked_in_both_reports() -> None:
    leaky = {"git": "https://bot:ghp_abcdefghijklmnopqrstuvwxyz0123456789@git.example.invalid/o/r.git", "rev": SHA_A}
    decisions = merge_sources({}, {}, {"leaky": leaky})
    result = reconciliation(decisions)
    for text in (to_markdown(result), to_json(result)):
        assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in text


def test_ready_only_when_no_code_file_is_left_conflicted() -> None:
    from depsync.core.sync.reconciliation import LockOutcome as Outcome

    clean = reconciliation([], lock=Outcome("relocked", "relocked"))
    assert to_markdown(clean).splitlines()[2].startswith("**Ready**")
    left = reconciliation([], lock=Outcome("relocked", "relocked"), unmerged=["megatron/core/a.py", "megatron/core/b.py"])
    headline = to_markdown(left).splitlines()[2]
    assert headline.startswith("**Triple reconciled; 2 code files still conflicted**") and "Ready" not in headline
    flagged = reconciliation(sample_decisions(), lock=Outcome("relocked", "relocked"), unmerged=["a.py"])
    assert to_markdown(flagged).splitlines()[2].startswith("**Needs review; triple reconciled; 1 code file still conflicted**")


def test_the_headline_counts_everything_main_changed_in_the_whole_file() -> None:
    from depsync.core.sync.document import KeyDecision
    from depsync.core.sync.surface import Entry, EntryDecision
    from depsync.core.sync.uv_files import FileDecision

    dev_only = KeyDecision(("tool", "ruff", "line-length"), "dev-changed", 100, 120, 100, 120, "dev", "dev changed it")
    scripts = KeyDecision(("project", "scripts", "serve"), "main-added", None, None, "app:serve", "app:serve", "main", "main added it")
    members = KeyDecision(("tool", "uv", "workspace", "members"), "merged", ["a"], ["a", "b"], ["a", "c"], ["a", "b", "c"], "merged", "both added members")
    req = Entry("project.dependencies", "numpy", ("numpy", ">=2"), ("numpy>=2",))
    dropped = EntryDecision("project.optional-dependencies.mlm", "numpy", "main-added", None, None, req, None, "none", "not needed", "main-added/otherwise", True)
    member = FileDecision("packages/b/pyproject.toml", "member", "main-added", "main", b"[project]\n", "main added a member", True)
    result = Reconciliation("origin/dev", "origin/main", SHA_A, SHA_B, SHA_A, [], [], keys=[dev_only, scripts, members], dependencies=[dropped], uv_files=[member])
    count = result.main_change_count()
    assert (count.entries, count.tables, count.files, count.taken, count.not_taken, count.flagged) == (4, 3, 1, 3, 1, 2)
    text = to_markdown(result)
    assert "main changed 4 entries in 3 tables and 1 file uv reads: 3 taken, 1 kept dev's, 2 flagged" in text
    assert json.loads(to_json(result))["main_changes"] == {"entries": 4, "tables": 3, "files": 1, "sources": 0, "taken": 3, "not_taken": 1, "flagged": 2}
