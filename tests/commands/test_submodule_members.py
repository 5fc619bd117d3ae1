"""A workspace whose member is a git submodule that is not checked out (a plain `git clone`).

Real git (a real submodule), real uv (the lock made with the member present). With the member
checked out everything is clean; in a clone without `git submodule update --init`, one finding
says so (members-not-checked-out, never lock-stale), every rule that reads members says "member
directory missing" instead of an unrelated error, `check --ref HEAD` gives the same verdict as the
work tree, and nothing crashes.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SHARED, git, uv_lock
from support import depsync
from uvprojects import LocalMaterial, static_pyproject, uv_check

HINT = "member directory missing: packages/member-lib (`git submodule update --init`?)"


def _git(cwd: Path, *args: str) -> str:
    # the file:// transport for submodules is off by default since git 2.38.1 (CVE-2022-39253)
    return git(cwd, "-c", "protocol.file.allow=always", *args)


@pytest.fixture
def clones(tmp_path: Path, material: LocalMaterial) -> tuple[Path, Path]:
    """(a clone with the submodule initialised, a clone without)."""
    member = tmp_path / "member-lib"
    member.mkdir()
    git(member, "init", "-q", "-b", "main")
    (member / "pyproject.toml").write_text(
        static_pyproject("member-lib", "0.2.0", ["zeta"], requires_python=">=3.10")
        + '\n[project.optional-dependencies]\ngpu = ["eta"]\n\n[dependency-groups]\nbench = ["eta"]\n'
    )
    git(member, "add", "-A")
    git(member, "commit", "-qm", "member")
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "-q", "-b", "main")
    _git(origin, "submodule", "-q", "add", member.as_uri(), "packages/member-lib")
    commit = material.git.commits["c2"]
    (origin / "pyproject.toml").write_text(
        '[project]\nname = "root-app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["member-lib"]\n\n'
        '[tool.uv.workspace]\nmembers = ["packages/*"]\n\n'
        "[tool.uv.sources]\nmember-lib = { workspace = true }\n"
        f'zeta = {{ git = "{material.git.url}", rev = "{commit}" }}\n'
        f'eta = {{ git = "{material.git.url}", subdirectory = "sub/eta", rev = "{commit}" }}\n'
        + material.index_toml()
    )
    (origin / "docker").mkdir()
    (origin / "docker" / "Dockerfile").write_text(
        "FROM python:3.11\n"
        "RUN uv sync --locked --package member-lib --extra gpu --group bench\n"
        "RUN uv sync --locked --all-packages --extra gpu\n"
    )
    uv_lock(origin, material)
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "root")
    full, bare = tmp_path / "full", tmp_path / "bare"
    _git(tmp_path, "clone", "-q", "--recurse-submodules", str(origin), str(full))
    _git(tmp_path, "clone", "-q", str(origin), str(bare))
    assert (full / "packages/member-lib/pyproject.toml").is_file()
    assert (bare / "packages/member-lib").is_dir() and not any((bare / "packages/member-lib").iterdir())
    return full, bare


def findings(root: Path, *args: str) -> list[dict]:  # type: ignore[type-arg]
    result = depsync("check", str(root), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)["findings"]


def test_checked_out_the_workspace_is_clean(clones: tuple[Path, Path], material: LocalMaterial) -> None:
    full, _ = clones
    assert uv_check(full, material.env)
    # `--package member-lib --extra gpu` and `--all-packages --extra gpu` name the member's extra, as uv reads them
    assert [f for f in findings(full) if f["severity"] != "info"] == []


def test_not_checked_out_every_rule_says_member_directory_missing(clones: tuple[Path, Path], material: LocalMaterial) -> None:
    _, bare = clones
    assert not uv_check(bare, material.env)  # uv cannot use the lock either
    found = [f for f in findings(bare) if f["rule"] != "protected-unchecked"]
    assert {f["rule"] for f in found} == {"members-not-checked-out", "docker-unknown-extra", "docker-unknown-group", "source-inert"}
    for finding in found:
        assert "git submodule update --init" in finding["fix"], finding
        if finding["rule"] != "members-not-checked-out":
            assert HINT in finding["message"], finding
    # one error of its own, never lock-stale (relocking would drop the member); what the member defines is unknown: notes
    (own,) = [f for f in found if f["severity"] == "error"]
    assert own == {
        "file": "uv.lock",
        "line": own["line"],
        "rule": "members-not-checked-out",
        "severity": "error",
        "message": "1 workspace member is in a git submodule that is not checked out (packages/member-lib), so what the lock "
        "records for it was not checked: `git submodule update --init`",
        "fix": "check out the submodules (`git submodule update --init`; in GitHub Actions, `actions/checkout` with `submodules: true`) and check again",
        "items": ["packages/member-lib"],
    }
    assert (bare / "uv.lock").read_text().splitlines()[own["line"] - 1].startswith("members = [")


@pytest.mark.parametrize("which", ["full", "bare"])
def test_the_ref_and_the_work_tree_give_the_same_verdict(clones: tuple[Path, Path], which: str) -> None:
    """`check` said "uv.lock is stale" in a clone without submodules; `check --ref HEAD` on the same commit said nothing."""
    root = dict(zip(("full", "bare"), clones))[which]

    def verdict(*args: str) -> list[tuple[str, str, str]]:
        return sorted((f["rule"], f["severity"], f["message"]) for f in findings(root, "--no-cache", *args) if f["rule"] != "protected-unchecked")

    here, at_ref = verdict(), verdict("--ref", "HEAD")
    assert here == at_ref
    errors = [rule for rule, severity, _ in here if severity == "error"]
    assert errors == ([] if which == "full" else ["members-not-checked-out"])


def test_not_checked_out_deep_runs_no_uv_and_says_it_once(clones: tuple[Path, Path], material: LocalMaterial) -> None:
    """uv fails on the incomplete checkout for that reason alone: members-not-checked-out is the
    one finding (with its hint, never a relock's advice), and stderr says uv was not run."""
    _, bare = clones
    result = depsync("check", str(bare), "--deep", "--format", "json", env=material.env)
    assert result.returncode == 1, result.stderr
    rules = [f["rule"] for f in json.loads(result.stdout)["findings"]]
    assert "members-not-checked-out" in rules and "uv-lock-check" not in rules and "lock-stale" not in rules
    assert "--deep: uv was not run: 1 workspace member is in a git submodule that is not checked out" in result.stderr
    assert "depsync lock" not in result.stdout


def test_fix_on_a_missing_member_changes_nothing(clones: tuple[Path, Path]) -> None:
    _, bare = clones
    before = {p: p.read_bytes() for p in (bare / "pyproject.toml", bare / "uv.lock", bare / "docker" / "Dockerfile")}
    result = depsync("check", str(bare), "--fix")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert {p: p.read_bytes() for p in before} == before
    subprocess.run(["git", "diff", "--exit-code"], cwd=bare, check=True, capture_output=True)


def test_lock_refuses_to_relock_without_the_member(clones: tuple[Path, Path], material: LocalMaterial) -> None:
    full, bare = clones
    before = (bare / "uv.lock").read_bytes()
    result = depsync("lock", "--runner", "local", str(bare), env=material.env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert HINT in result.stderr and "uv.lock is unchanged" in result.stderr
    assert (bare / "uv.lock").read_bytes() == before
    # checked out, the same relock runs (and changes nothing)
    done = depsync("lock", "--runner", "local", str(full), env=material.env)
    assert done.returncode == 0, done.stderr


LIVEKIT = SHARED / "corpus-ml" / "livekit__agents__c1acd5d"  # real: 83 members, uv 0.13.9 says fresh


@pytest.fixture
def livekit_clones(tmp_path: Path) -> tuple[Path, Path]:
    """The real livekit/agents workspace with each of its 72 plugin members made a git submodule:
    (the repository, every submodule checked out; a plain clone, none checked out)."""
    if not (LIVEKIT / "uv.lock").is_file():
        pytest.skip("the shared corpus-ml is not here")
    full = tmp_path / "livekit"
    shutil.copytree(LIVEKIT, full, ignore=shutil.ignore_patterns("PROVENANCE.toml"))
    for path in (full, *full.rglob("*")):
        if path.is_dir():
            path.chmod(0o755)
        else:
            path.chmod(0o644)  # the shared corpus may be read-only
    modules = []
    for member in sorted((full / "livekit-plugins").iterdir()):
        if (member / "pyproject.toml").is_file():
            git(member, "init", "-q", "-b", "main")
            git(member, "add", "-A")
            git(member, "commit", "-qm", "plugin")
            relative = member.relative_to(full).as_posix()
            modules.append(f'[submodule "{relative}"]\n\tpath = {relative}\n\turl = ./{relative}\n')
    (full / ".gitmodules").write_text("".join(modules))
    git(full, "init", "-q", "-b", "main")
    git(full, "add", "-A")  # each plugin directory, a repository of its own, becomes a gitlink
    git(full, "commit", "-qm", "workspace")
    bare = tmp_path / "bare"
    git(tmp_path, "clone", "-q", str(full), str(bare))
    return full, bare


def test_a_real_workspace_of_72_submodules_not_checked_out_is_one_short_finding(livekit_clones: tuple[Path, Path]) -> None:
    """It was one 5,594-character lock-stale line naming every member (and `--ref HEAD` said consistent)."""
    full, bare = livekit_clones
    links = [line for line in git(bare, "ls-files", "-s").splitlines() if line.startswith("160000")]
    assert len(links) == 72 and not any((bare / "livekit-plugins" / "livekit-plugins-xai").iterdir())
    for args in ((), ("--ref", "HEAD")):
        (finding,) = findings(bare, "--no-cache", *args)
        assert finding["rule"] == "members-not-checked-out" and finding["severity"] == "error"
        assert finding["message"].startswith("72 workspace members are in git submodules that are not checked out (livekit-plugins/livekit-plugins-anam, ")
        assert " and 69 more), " in finding["message"] and len(finding["message"]) < 320
        assert len(finding["items"]) == 72 and "livekit-plugins/livekit-plugins-xai" in finding["items"]
        human = depsync("check", str(bare), "--no-cache", *args)
        assert human.returncode == 1 and max(len(line) for line in human.stdout.splitlines()) < 400
        for output in ("github", "sarif", "gitlab"):  # the cut list everywhere but JSON's items
            shown = depsync("check", str(bare), "--no-cache", "--format", output, *args).stdout
            assert "and 69 more" in shown and "livekit-plugins-xai" not in shown, output
        assert findings(full, "--no-cache", *args) == []  # checked out: fresh, as uv says


def test_the_cached_verdict_follows_a_submodule_checked_out_later(clones: tuple[Path, Path]) -> None:
    """The result cache (work tree and --ref): `git submodule update --init` is a change of input."""
    _, bare = clones
    for args in ((), ("--ref", "HEAD")):
        assert [f["rule"] for f in findings(bare, *args) if f["severity"] == "error"] == ["members-not-checked-out"]
    _git(bare, "submodule", "-q", "update", "--init")
    for args in ((), ("--ref", "HEAD")):
        assert [f["rule"] for f in findings(bare, *args) if f["severity"] == "error"] == [], args
