"""`depsync reconcile` end to end: real git repos (base, main, dev, a sync branch) and real uv."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import (
    MEGATRON,
    MEGATRON_SOURCE_CASES,
    env_for,
    git,
    megatron_history,
    write_files,
)
from support import depsync_in as depsync
from uvprojects import LocalMaterial, uv_check


def snapshot(repo: Path, *paths: str) -> dict[str, bytes]:
    return {p: (repo / p).read_bytes() for p in paths}


# -- the real Megatron-LM snapshot, as a git history ---------------------------------------


@pytest.fixture
def megatron_repo(tmp_path: Path) -> Path:
    if not MEGATRON.exists():
        pytest.skip("real Megatron-LM data not available")
    return megatron_history(tmp_path / "megatron")


def test_megatron_merge_with_conflicts(megatron_repo: Path, tmp_path: Path) -> None:
    repo = megatron_repo
    merge = subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True, text=True)
    assert merge.returncode != 0  # uv.lock conflicts, as in the real project
    assert "<<<<<<<" in (repo / "uv.lock").read_text()
    dev_lock = subprocess.run(["git", "-C", str(repo), "show", "dev:uv.lock"], capture_output=True).stdout
    dev_pyproject = subprocess.run(["git", "-C", str(repo), "show", "dev:pyproject.toml"], capture_output=True, text=True).stdout

    plan = tmp_path / "plan.json"
    summary = tmp_path / "summary.md"
    result = depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan), "--summary", str(summary))
    assert result.returncode == 1, result.stderr  # rev orders unknown offline: needs review
    document = json.loads(plan.read_text())
    cases = {d["name"]: d["case"] for d in document["sources"]}
    assert cases == MEGATRON_SOURCE_CASES
    by_name = {d["name"]: d for d in document["sources"]}
    te, nemo_run = by_name["transformer-engine"], by_name["nemo-run"]
    assert te["needs_review"] and te["result"]["rev"].startswith("f031cf87")
    assert any(e.startswith("dev owns it: dev's commit") and "dev: TE f031cf87" in e for e in te["evidence"])
    # main changed nemo-run, but without fetching its order is unknown: dev's kept, flagged, and the reason says why
    assert nemo_run["needs_review"] and nemo_run["result"]["rev"].startswith("17ae86b6") and nemo_run["rule"] == "main-changed/order unknown"
    assert "rev order: unknown (not fetched (--no-fetch) and not in depsync's cache)" in nemo_run["evidence"]
    # TE, nemo-run, and the three sources main added with requirements the merged code does not import (decided, and flagged, with them)
    assert document["flags"] == {"flagged": 5, "differing": 7, "rate": round(5 / 7, 4)}
    assert document["restored"] == [".github/CODEOWNERS"]
    assert document["status"] == "needs-review" and document["unmerged"] == []

    # the work tree: dev's lock and CODEOWNERS, pyproject with main's pin change dev never chose that
    # dev's lock still satisfies (pytest==9.1.1 excludes the locked 8.3.5: it would move dev's
    # resolution, so dev's is kept, flagged); the tree has no Python code importing main's new
    # packages: those, and their sources, stay out, flagged
    assert (repo / "uv.lock").read_bytes() == dev_lock
    assert (repo / ".github" / "CODEOWNERS").read_text() == "* @owners\n"
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""
    diff = git(repo, "diff", "--cached", "-U0", "dev", "--", "pyproject.toml").splitlines()
    changed = [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert [line[0] + line[1:].strip() for line in changed] == ['-"opentelemetry-api~=1.33.1",', '+"opentelemetry-api>=1.33.1,<2",']
    (pytest_row,) = [d for d in document["dependencies"] if d["name"] == "pytest"]
    assert pytest_row["needs_review"] and pytest_row["rule"] == "main-changed/main's range excludes dev's locked version" and "locked 8.3.5" in pytest_row["reason"]
    assert (repo / "pyproject.toml").read_text().count("# Added for this fixture") == dev_pyproject.count("# Added for this fixture")

    text = summary.read_text()
    assert "| **yes** | `transformer-engine` |" in text and "**conflict**" in text and "#### main's dependency changes not taken" in text
    assert "| `flash_mla` |" not in text  # the same on both sides: counted, not listed
    assert "3 entries are the same on dev and main: `flash_mla`, `emerging_optimizers`, `fast-hadamard-transform`." in text
    assert "https://github.com/NVIDIA/TransformerEngine/commit/f031cf87bd054c7558b887df7bed93975456667f" in text
    assert "https://github.com/NVIDIA/TransformerEngine/compare/f031cf87bd054c7558b887df7bed93975456667f...4329ff84bfbdaa778a33cba02a15fb0807c64689" in text
    steps = text.split("### Next steps")[1]
    assert "`depsync lock`" in steps and "`git commit --no-edit`" in steps and "`depsync guard`" in steps
    assert "main changed 21 entries in 12 tables (5 sources): 1 taken, 20 kept dev's, 19 flagged" in text
    assert result.stdout.strip() == text.strip()  # not a terminal: the raw Markdown


def test_megatron_dry_run_touches_nothing(megatron_repo: Path) -> None:
    repo = megatron_repo
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    before = snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS")
    status = git(repo, "status", "--porcelain")
    result = depsync(repo, "reconcile", "--dev", "dev", "--dry-run", "--no-fetch")
    assert result.returncode == 1
    assert "(dry run)" in result.stdout
    assert snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS") == before
    assert git(repo, "status", "--porcelain") == status


def test_bad_ref_is_an_error_and_changes_nothing(megatron_repo: Path) -> None:
    repo = megatron_repo
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    before = snapshot(repo, "pyproject.toml", "uv.lock")
    result = depsync(repo, "reconcile", "--dev", "origin/nope")
    assert result.returncode == 2
    assert result.stderr.strip() == "depsync: error: git ref 'origin/nope' not found (fetch it, e.g. `git fetch origin`, or name another ref)"
    assert snapshot(repo, "pyproject.toml", "uv.lock") == before


# -- a small project with real uv relocks ------------------------------------------------------


def test_reconcile_relocks_and_is_idempotent(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo, c = small_repo, material.git.commits
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--plan-json", str(plan), env=env_for(material))
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads(plan.read_text())
    assert {d["name"]: d["case"] for d in document["sources"]} == {"zeta": "main-changed", "eta": "dev-changed", "foo-bar": "main-added"}
    text = (repo / "pyproject.toml").read_text()
    assert f'rev = "{c["c2"]}"' in text and f'subdirectory = "sub/eta", rev = "{c["c3"]}"' in text and '"delta"' in text
    assert "# sources: keep this comment" in text
    assert uv_check(repo, material.env)  # uv itself agrees the lock is fresh
    lock_changes = {ch["name"]: ch["kind"] for ch in document["lock"]["changes"]}
    assert lock_changes == {"zeta": "upgraded"}
    assert (repo / ".github" / "CODEOWNERS").read_text() == "* @dev-team\n"
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""
    assert [f["severity"] for f in document["findings"]] == ["warning"]  # the inert foo-bar source
    owner = os.stat(repo / "uv.lock")
    assert (owner.st_uid, owner.st_gid) == (os.getuid(), os.getgid())

    git(repo, "commit", "-qm", "sync main into dev")
    before = snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS")
    again = depsync(repo, "reconcile", "--dev", "dev", "--main", "main", env=env_for(material))
    assert again.returncode == 0, again.stdout + again.stderr
    assert snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS") == before
    assert git(repo, "status", "--porcelain") == ""


def test_failed_relock_leaves_files_byte_identical_and_reports_the_plan(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    repo = small_repo
    git(repo, "checkout", "-q", "dev")
    text = (repo / "pyproject.toml").read_text().replace('"delta"', '"delta", "no-such-package"')  # uv cannot resolve it
    (repo / "pyproject.toml").write_text(text)
    git(repo, "commit", "-qam", "dev: a dependency the index does not have")
    git(repo, "checkout", "-q", "-B", "sync", "dev")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    before = snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS")
    unmerged = git(repo, "diff", "--name-only", "--diff-filter=U")
    plan, summary = tmp_path / "plan.json", tmp_path / "summary.md"
    result = depsync(repo, "reconcile", "--dev", "dev", "--no-fetch", "--runner", "local", "--plan-json", str(plan), "--summary", str(summary), env=env_for(material))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("depsync: error: uv ") and "lock failed, nothing changed" in lines[-1]
    assert f"the plan and the failure are in {summary} and {plan}" in lines[-1]
    # uv's own words before it, as uv wrapped them: the reason is not cut
    assert lines[0] == "uv's output (last lines):" and any("no-such-package" in line for line in lines[1:-1])
    assert snapshot(repo, "pyproject.toml", "uv.lock", ".github/CODEOWNERS") == before
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == unmerged
    # the plan survives: both reports say what would have been applied, and what failed
    document = json.loads(plan.read_text())
    assert document["status"] == "failed" and "lock failed" in document["failure"] and document["lock"]["state"] == "failed"
    assert "no-such-package" in document["lock"]["uv_output"]
    assert {d["name"]: d["case"] for d in document["sources"]} == {"zeta": "main-changed", "eta": "dev-changed", "foo-bar": "main-added"}
    text = summary.read_text()
    assert text.count("**Failed**: uv ") == 1 and "lock failed" in text and "| `zeta` |" in text
    assert "uv's output (last lines):" in text and "no-such-package" in text.split("uv's output (last lines):")[1]
    assert "rerun `depsync reconcile`" in text.split("### Next steps")[1]


def test_no_merge_plans_from_refs(small_repo: Path, material: LocalMaterial) -> None:
    result = depsync(small_repo, "reconcile", "--dev", "dev", "--main", "main", "--no-merge", "--dry-run", "--no-fetch", env=env_for(material))
    assert result.returncode == 0, result.stderr
    assert "| `zeta` |" in result.stdout and "main changed" in result.stdout


def test_rev_order_from_the_source_repository(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> None:
    # main moves zeta back from c2 to c1 while dev sits on c2: a downgrade must not be taken silently
    c = material.git.commits
    repo = small_repo
    git(repo, "checkout", "-q", "dev")
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace(f'rev = "{c["c1"]}" }}\neta', f'rev = "{c["c2"]}" }}\neta'))
    git(repo, "commit", "-qam", "dev: zeta c2")
    git(repo, "checkout", "-q", "-b", "main2", "dev")
    (repo / "pyproject.toml").write_text((repo / "pyproject.toml").read_text().replace(f'rev = "{c["c2"]}" }}\neta', f'rev = "{c["c1"]}" }}\neta'))
    git(repo, "commit", "-qam", "main2: zeta back to c1")
    git(repo, "checkout", "-q", "dev")
    # base is dev's new head: base == dev for zeta, main changed it to an older commit
    env = dict(env_for(material), XDG_CACHE_HOME=str(tmp_path / "cache"))
    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--main", "main2", "--no-merge", "--dry-run", "--plan-json", str(plan), env=env)
    zeta = next(d for d in json.loads(plan.read_text())["sources"] if d["name"] == "zeta")
    assert result.returncode == 1
    assert zeta["result"]["rev"] == c["c2"] and "older" in zeta["reason"]


# -- every row of the three-way table in one real history, list-shaped sources included -----

ROWS_BASE = {
    "same": '{ git = "https://h/same.git", rev = "' + "1" * 40 + '" }',
    "both": '{ git = "https://h/both.git", rev = "' + "1" * 40 + '" }',
    "mainchg": '{ git = "https://h/mainchg.git", rev = "' + "1" * 40 + '" }',
    "devchg": '{ git = "https://h/devchg.git", rev = "' + "1" * 40 + '" }',
    "devrm": '{ git = "https://h/devrm.git", rev = "' + "1" * 40 + '" }',
    "conflict": '{ git = "https://h/conflict.git", rev = "' + "1" * 40 + '" }',
    "listy": "[\n"
    '    { git = "https://h/listy.git", tag = "v1", marker = "sys_platform == \'linux\'" },\n'
    '    { path = "vendor/listy", marker = "sys_platform != \'linux\'" },\n'
    "]",
}


def rows_pyproject(sources: dict[str, str]) -> str:
    deps = ", ".join(f'"{name}"' for name in ("same", "both", "mainchg", "devchg", "devrm", "conflict", "listy", "mainadd", "devadd"))
    body = "\n".join(f"{name} = {value}" for name, value in sources.items())
    return f'[project]\nname = "rows"\nversion = "0"\ndependencies = [{deps}]\n\n[tool.uv.sources]\n{body}\n\n# trailing comment stays\n'


def test_every_row_of_the_table_in_a_real_merge(tmp_path: Path) -> None:
    repo = tmp_path / "rows"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, {"pyproject.toml": rows_pyproject(ROWS_BASE), "uv.lock": "version = 1\nrevision = 3\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    two = "2" * 40
    dev = dict(ROWS_BASE)
    dev["both"] = dev["both"].replace("1" * 40, two)
    dev["devchg"] = dev["devchg"].replace("1" * 40, two)
    del dev["devrm"]
    dev["conflict"] = dev["conflict"].replace("1" * 40, two)
    dev["devadd"] = '{ git = "https://h/devadd.git", rev = "' + two + '" }'
    main = dict(ROWS_BASE)
    main["both"] = main["both"].replace("1" * 40, two)
    main["mainchg"] = main["mainchg"].replace("1" * 40, two)
    main["conflict"] = main["conflict"].replace("1" * 40, "3" * 40)
    main["listy"] = main["listy"].replace('tag = "v1"', 'tag = "v2"')
    main["mainadd"] = '{ git = "https://h/mainadd.git", rev = "' + two + '" }'
    git(repo, "checkout", "-q", "-b", "dev")
    write_files(repo, {"pyproject.toml": rows_pyproject(dev)})
    git(repo, "commit", "-qam", "dev")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"pyproject.toml": rows_pyproject(main)})
    git(repo, "commit", "-qam", "main")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    assert "<<<<<<<" in (repo / "pyproject.toml").read_text()

    plan = tmp_path / "plan.json"
    result = depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan))
    assert result.returncode == 1  # the conflict
    cases = {d["name"]: (d["case"], d["taken_from"]) for d in json.loads(plan.read_text())["sources"]}
    assert cases == {
        "same": ("unchanged", "dev"),
        "both": ("same-change", "dev"),
        "mainchg": ("main-changed", "dev"),  # offline: order unknown, dev's kept and flagged
        "devchg": ("dev-changed", "dev"),
        "conflict": ("conflict", "dev"),
        "listy": ("main-changed", "dev"),
        "devadd": ("dev-added", "dev"),
        "mainadd": ("main-added", "none"),  # dev depends on mainadd (from the index): main's source declined
        "devrm": ("dev-removed", "none"),
    }
    flagged = {d["name"] for d in json.loads(plan.read_text())["sources"] if d["needs_review"]}
    assert flagged == {"mainchg", "listy", "conflict", "mainadd"}
    text = (repo / "pyproject.toml").read_text()
    assert "<<<<<<<" not in text and text.endswith("# trailing comment stays\n")
    assert 'tag = "v1", marker = "sys_platform == \'linux\'"' in text and "devrm" not in text.split("[tool.uv.sources]")[1]
    assert "mainadd" not in text.split("[tool.uv.sources]")[1]
    assert git(repo, "diff", "--name-only", "--diff-filter=U") == ""
