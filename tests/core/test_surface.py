"""The dependency surface merged three-way per entry: the pure rule table, the tomlkit
edits, the import scan, and reconcile on the real Megatron-LM triple in a real git repository
whose main brings Python code that imports (or guards) main's new packages."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import MEGATRON, REPO, git, megatron_history, write_files

from depsync.core.config import Config
from depsync.core.sync.merge import dev_requires, reconciled_surface
from depsync.core.sync.sources import Evidence, Ownership, Policy
from depsync.core.sync.surface import (
    RULES,
    SurfaceEvidence,
    Use,
    merge_surface,
    rules_markdown,
    surface_entries,
)
from depsync.core.sync.surface_edit import apply_surface
from depsync.shell.surface_evidence import scan_uses

BASE = '[project]\nname = "app"\nversion = "1"\ndependencies = ["numpy>=1", "requests"]\n\n[project.optional-dependencies]\nx = [\n    "alpha",  # kept comment\n    "beta==1",\n]\n'


def data(text: str) -> dict:
    return tomllib.loads(text)


def decide(base: str, dev: str, main: str, evidence: SurfaceEvidence = SurfaceEvidence(gathered=True), side: str = "dev", policy: Policy = Policy()):
    return {(d.table, d.name): d for d in merge_surface(data(base), data(dev), data(main), policy, evidence, side)}


def test_values_compare_parsed_not_as_text() -> None:
    spelled = surface_entries(data('[project]\ndependencies = ["A>=1,<2; python_version >= \'3.10\'"]\n'))
    respelled = surface_entries(data('[project]\ndependencies = ["a <2, >=1.0 ; python_version>=\\"3.10\\""]\n'))
    assert spelled[("project.dependencies", "a")].value == respelled[("project.dependencies", "a")].value


def test_main_added_taken_only_with_an_unguarded_import() -> None:
    main = BASE.replace('"beta==1",', '"beta==1",\n    "gamma",\n    "delta",\n    "eps",')
    uses = {"gamma": Use("import", ("pkg/a.py:3",)), "delta": Use("guarded", ("pkg/b.py:9",)), "eps": Use("none", scope="10 Python files")}
    found = decide(BASE, BASE, main, SurfaceEvidence(uses=uses, gathered=True))
    gamma, delta, eps = (found[("project.optional-dependencies.x", n)] for n in ("gamma", "delta", "eps"))
    assert (gamma.taken_from, gamma.needs_review) == ("main", False) and "pkg/a.py:3" in " ".join(gamma.evidence)
    # an extra is what a guarded import is for: taken
    assert (delta.taken_from, delta.needs_review, delta.rule) == ("main", False, "main-added/guarded import, optional table")
    assert (eps.result, eps.needs_review, eps.main_not_taken) == (None, True, True)
    assert "no import of eps in the merged code (10 Python files)" in eps.evidence


def test_a_guarded_import_does_not_make_a_required_dependency() -> None:
    main = BASE.replace('"requests"]', '"requests", "delta"]')
    found = decide(BASE, BASE, main, SurfaceEvidence(uses={"delta": Use("guarded", ("pkg/b.py:9",))}, gathered=True))
    delta = found[("project.dependencies", "delta")]
    assert (delta.result, delta.needs_review, delta.rule) == (None, True, "main-added/guarded import only")


def test_a_guarded_import_does_not_recreate_an_extra_dev_removed() -> None:
    dev = BASE.replace('x = [\n    "alpha",  # kept comment\n    "beta==1",\n]\n', "")
    main = BASE.replace('"beta==1",', '"beta==1",\n    "delta",')
    found = decide(BASE, dev, main, SurfaceEvidence(uses={"delta": Use("guarded", ("pkg/b.py:9",))}, gathered=True))
    delta = found[("project.optional-dependencies.x", "delta")]
    assert delta.result is None and delta.needs_review and delta.rule != "main-added/guarded import, optional table"


def test_main_s_requires_python_is_a_resolution_change_kept_dev_s_and_flagged() -> None:
    dev_base = BASE.replace('version = "1"', 'version = "1"\nrequires-python = ">=3.10"')
    main = dev_base.replace(">=3.10", ">=3.12")
    found = decide(dev_base, dev_base, main, SurfaceEvidence(gathered=True))
    setting = found[("project.requires-python", "requires-python")]
    assert (setting.taken_from, setting.needs_review, setting.rule) == ("dev", True, "main-changed/requires-python moves dev's resolution")
    followed = decide(dev_base, dev_base, main, SurfaceEvidence(gathered=True), side="main")[("project.requires-python", "requires-python")]
    assert followed.taken_from == "main" and not followed.needs_review  # a branch following main takes it


def test_main_changed_taken_when_dev_never_chose_it_kept_when_dev_did() -> None:
    main = BASE.replace('"beta==1"', '"beta==2"')
    key = ("project.optional-dependencies.x", "beta")
    never = SurfaceEvidence(ownership={key: Ownership("main", "history", "dev's history never changed it")}, gathered=True)
    chose = SurfaceEvidence(ownership={key: Ownership("dev", "history", "dev's commit abc chose it")}, gathered=True)
    assert decide(BASE, BASE, main, never)[key].taken_from == "main"
    kept = decide(BASE, BASE, main, chose)[key]
    assert (kept.taken_from, kept.needs_review, kept.main_not_taken) == ("dev", True, True)
    # config overrides history, in every table
    owned = decide(BASE, BASE, main, never, policy=Policy(owned_by_dev=frozenset({"beta"})))[key]
    assert (owned.taken_from, owned.needs_review, owned.rule) == ("dev", False, "main-changed/dev owns it (config)")


def test_default_side_main_takes_mains_changes_and_keeps_the_branchs_own() -> None:
    dev = BASE.replace('"requests"', '"requests>=2"')
    main = BASE.replace('"beta==1"', '"beta==2"').replace('"numpy>=1"', '"numpy>=2"')
    found = decide(BASE, dev, main, SurfaceEvidence(), side="main")  # no evidence needed
    assert found[("project.optional-dependencies.x", "beta")].taken_from == "main"
    assert found[("project.dependencies", "requests")].taken_from == "dev"
    both = decide(BASE, BASE.replace('"beta==1"', '"beta==3"'), main, side="main")[("project.optional-dependencies.x", "beta")]
    assert (both.case, both.needs_review) == ("conflict", True)


def test_dev_removed_it_itself_stays_removed_and_a_new_table_is_said() -> None:
    main = BASE + '\n[dependency-groups]\nnew = ["zeta"]\n'
    found = decide(BASE, BASE, main)
    new = found[("dependency-groups.new", "zeta")]
    assert new.rule == "main-added/table new on main" and new.needs_review and "dependency-groups.new does not exist on dev" in new.evidence
    key = ("project.optional-dependencies.x", "gamma")
    removal = SurfaceEvidence(removed_by_dev={key: 'commit 1234 "drop gamma"'}, gathered=True)
    readded = decide(BASE, BASE, BASE.replace('"beta==1",', '"beta==1",\n    "gamma",'), removal)[key]
    assert (readded.result, readded.needs_review, readded.rule) == (None, True, "main-added/dev removed it itself")  # not carried: flagged


def test_every_case_ends_in_a_row_that_always_applies_and_the_docs_have_the_table() -> None:
    for case in {r.case for r in RULES}:
        assert [r for r in RULES if r.case == case][-1].condition in ("always", "otherwise", "dev never chose it")
    assert rules_markdown() in (REPO / "docs" / "reconcile.md").read_text()


def test_import_scan_tells_guarded_from_unguarded() -> None:
    files = [
        ("a.py", b"import os\ntry:\n    import PIL.Image\nexcept ImportError:\n    PIL = None\n"),
        ("b/c.py", b"def f():\n    from gigatoken import encode\n"),
        ("d.py", b"x = 'gigatoken'  # a string, not an import\n"),
        ("bad.py", b"def (:\n"),
    ]
    uses, scope = scan_uses(files, {"pillow": ("PIL",), "gigatoken": ("gigatoken",), "absent-pkg": ("absent_pkg",)})
    assert (uses["pillow"].strength, uses["pillow"].where) == ("guarded", ("a.py:3",))
    assert (uses["gigatoken"].strength, uses["gigatoken"].where) == ("import", ("b/c.py:2",))
    assert uses["absent-pkg"].strength == "none" and scope == "4 Python files scanned"


# -- the real Megatron triple --------------------------------------------------------------------


def _texts() -> dict[str, str]:
    return {side: (MEGATRON / side / "pyproject.toml").read_text() for side in ("base", "dev", "main")}


def test_megatron_pure_merge_with_imports_carries_the_requirements_and_their_sources() -> None:
    texts = _texts()
    parsed = {side: tomllib.loads(t) for side, t in texts.items()}
    uses = {n: Use("import", (f"megatron/{n}.py:1",)) for n in ("gigatoken", "nemo-lens", "torch-memory-saver", "deep-gemm")}
    uses["pillow"] = Use("guarded", ("megatron/img.py:2",))
    text, sources, _, surface = reconciled_surface(texts, parsed, Config(), Evidence(dev_requires=dev_requires(texts["dev"])), SurfaceEvidence(uses=uses, gathered=True))
    result = tomllib.loads(text)
    extras, groups = result["project"]["optional-dependencies"], result["dependency-groups"]
    assert "gigatoken" in extras["mlm"] and "gigatoken" in extras["training"]
    assert "nemo-lens" in extras["dev"] and "torch-memory-saver" in extras["dev"] and "Pillow" in extras["dev"]  # guarded, in an extra
    assert "deep_gemm" in groups["no_pypi_wheels"]
    by_name = {d.name: d for d in sources}
    for name in ("deep_gemm", "nemo-lens", "torch-memory-saver"):  # the sources come with their requirements
        assert by_name[name].taken_from == "main" and by_name[name].rule == "main-added/taken with main's requirement"
    flagged = {(d.table, d.name) for d in surface if d.needs_review}
    assert ("project.optional-dependencies.dev", "pillow") not in flagged  # guarded, in an extra: taken
    assert ("project.optional-dependencies.dev", "nvidia-cudnn-frontend") in flagged  # both changed the pin
    for decision in surface:  # nothing main changed is left without a flag or a taken value
        assert not decision.main_not_taken or decision.needs_review or "config" in decision.rule
    # surgical: comments and the untouched parts of dev's file stay
    assert "# Forcing a little bit more recent version of fastapi" in text and text.count("\n") - texts["dev"].count("\n") < 13


def _depsync(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(repo.parent / "cache")}
    return subprocess.run([str(Path(os.sys.executable)), "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env)


@pytest.fixture
def megatron_with_code(tmp_path: Path) -> Path:
    """The Megatron history, where main's commit also brings code: an unguarded gigatoken import,
    a guarded PIL one, a symlink pointing out of the repository (never followed)."""
    repo = megatron_history(tmp_path / "megatron")
    git(repo, "checkout", "-q", "main")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text("import torch_memory_saver\n")
    write_files(repo, {
        "megatron/training/tokenizer.py": "import os\n\nfrom gigatoken import Tokenizer\n",
        "megatron/core/vision.py": "try:\n    from PIL import Image\nexcept ImportError:\n    Image = None\n",
    })
    (repo / "megatron" / "linked").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "main: code that uses the new dependencies")
    git(repo, "checkout", "-q", "sync")
    return repo


def test_reconcile_on_megatron_with_code_is_surgical_and_idempotent(megatron_with_code: Path, tmp_path: Path) -> None:
    repo = megatron_with_code
    merge = subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True, text=True)
    assert merge.returncode != 0
    plan = tmp_path / "plan.json"
    result = _depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch", "--plan-json", str(plan), "--summary", str(tmp_path / "s.md"))
    assert result.returncode == 1, result.stderr
    document = json.loads(plan.read_text())
    rows = {(d["table"], d["name"]): d for d in document["dependencies"]}
    giga = rows[("project.optional-dependencies.mlm", "gigatoken")]
    assert giga["taken_from"] == "main" and not giga["needs_review"]
    assert any("megatron/training/tokenizer.py:3" in e for e in giga["evidence"])
    pillow = rows[("project.optional-dependencies.dev", "pillow")]
    # PIL is pillow's module (the renamed table); a guarded import in an extra: taken, with its evidence
    assert pillow["taken_from"] == "main" and not pillow["needs_review"] and any("megatron/core/vision.py" in e for e in pillow["evidence"])
    saver = rows[("project.optional-dependencies.dev", "torch-memory-saver")]
    assert saver["result"] is None and saver["needs_review"]  # the import behind the symlink was not read
    assert {"table", "name", "base", "dev", "main", "result", "case", "rule", "taken_from", "reason", "evidence", "needs_review"} <= set(giga)
    summary = (tmp_path / "s.md").read_text()
    assert "#### main's dependency changes not taken" in summary and "#### Taken from main" in summary
    assert "| **yes** | `torch-memory-saver` | `project.optional-dependencies.dev` | `torch-memory-saver` | absent |" in summary
    first = (repo / "pyproject.toml").read_bytes()
    assert b'"gigatoken",' in first and b"torch-memory-saver = {" not in first  # no inert source without its requirement
    again = _depsync(repo, "reconcile", "--dev", "dev", "--no-lock", "--no-fetch")
    assert again.returncode == 1, again.stderr
    assert (repo / "pyproject.toml").read_bytes() == first  # a second reconcile changes nothing


def test_reconcile_default_side_main_follows_main(megatron_with_code: Path, tmp_path: Path) -> None:
    repo = megatron_with_code
    plan = tmp_path / "plan.json"
    result = _depsync(repo, "reconcile", "--dev", "dev", "--main", "main", "--no-merge", "--dry-run", "--no-fetch", "--default-side", "main", "--plan-json", str(plan))
    assert result.returncode == 1, result.stderr
    document = json.loads(plan.read_text())
    assert document["default_side"] == "main"
    rows = [d for d in document["dependencies"] if d["main_not_taken"]]
    assert rows and all(d["case"] == "conflict" and d["needs_review"] for d in rows)  # only both-changed entries keep the branch's value


def test_dockerfile_follows_the_surface() -> None:
    from depsync.core.model.dockerfile import Dockerfile
    from depsync.core.rules.dockerfile import used_tables
    from depsync.core.sync.surface import dockerfile_findings

    dockerfile = Dockerfile.from_text(
        'FROM python:3.12\nARG IMAGE_TYPE=dev\nRUN uv sync --locked --extra ${IMAGE_TYPE} \\\n    --group ci --only-group build\n', "docker/Dockerfile.ci.dev"
    )
    uses = list(used_tables(dockerfile))
    assert ("extra", "dev", 3) in uses and ("group", "ci", 4) in uses
    dev = data('[project]\nname = "a"\n[project.optional-dependencies]\ndev = ["x"]\n[dependency-groups]\nci = ["y"]\nbuild = ["z"]\n')
    main = data('[project]\nname = "a"\n[project.optional-dependencies]\ndevel = ["x"]\n[dependency-groups]\nbuild = ["z"]\n')
    merged = data('[project]\nname = "a"\n[project.optional-dependencies]\ndev = []\n[dependency-groups]\nbuild = ["z"]\n')
    found = dockerfile_findings(uses, "docker/Dockerfile.ci.dev", merged, dev, main)
    assert [(f.rule, f.line) for f in found] == [("docker-unknown-extra", 3), ("docker-unknown-group", 4)]
    assert "empties; main has no extra 'dev' (dropped or renamed there)" in found[0].message
    assert "does not define" in found[1].message
    assert dockerfile_findings(uses, "d", dev, dev, main) == []


def test_lock_rewrites_say_markers_and_a_revision_downgrade() -> None:
    from depsync.core.lockdiff import lock_rewrites

    old = 'version = 1\nrevision = 3\n\n[[package]]\nname = "a"\ndependencies = [\n    { name = "b", marker = "sys_platform == \'linux\'" },\n]\n'
    new = old.replace("revision = 3", "revision = 2").replace("sys_platform == 'linux'", "sys_platform=='linux'")
    assert lock_rewrites(old, new) == (1, (3, 2))
    assert lock_rewrites(old, old) == (0, None)
    # the real dev lock (revision 3, a newer uv) against a revision-2 lock of the same project
    dev, base = ((MEGATRON / side / "uv.lock").read_text() for side in ("dev", "base"))
    rewritten, revision = lock_rewrites(dev, base)
    assert revision == (3, 2) and rewritten > 100


def test_lock_section_says_what_a_relock_rewrote() -> None:
    from depsync.core.sync.reconciliation import LockOutcome, Reconciliation
    from depsync.report.reconcile import to_json, to_markdown

    result = Reconciliation("dev", "main", "a" * 40, "b" * 40, "c" * 40, [], [], lock=LockOutcome("relocked", "relocked with uv 0.7.2", [], markers_rewritten=180, revision=(3, 2)))
    text = to_markdown(result)
    assert "- lock revision downgraded: 3 -> 2" in text and "- 180 marker lines rewritten" in text
    lock = json.loads(to_json(result))["lock"]
    assert lock["markers_rewritten"] == 180 and lock["revision"] == {"old": 3, "new": 2}


CORPUS = REPO.parent / "shared" / "corpus-ml"


def _corpus_histories() -> list[list[Path]]:
    """States of one repository, oldest first (real pyprojects at real commits, not written here)."""
    by_repo: dict[str, list[tuple[str, Path]]] = {}
    for state in sorted(CORPUS.iterdir()) if CORPUS.is_dir() else ():
        if (state / "PROVENANCE.toml").is_file():
            provenance = tomllib.loads((state / "PROVENANCE.toml").read_text())
            project = state / provenance.get("project", ".") / "pyproject.toml"
            by_repo.setdefault(provenance["repo"], []).append((provenance["date"], project))
    return [[p for _, p in sorted(states)] for states in by_repo.values() if len(states) > 1]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared real corpus is not here")
def test_real_histories_merge_per_entry_surgically_and_idempotently() -> None:
    """On real pyprojects of one repository at two or three commits: a branch that follows main
    (default-side main) with no changes of its own ends with exactly main's surface, the edit is
    idempotent, and with default-side dev nothing main changed is dropped without a flag."""
    compared = 0
    for states in _corpus_histories():
        texts = [p.read_text() for p in states]
        for old, new in zip(texts, texts[1:]):
            before, after = tomllib.loads(old), tomllib.loads(new)
            decisions = merge_surface(before, before, after, Policy(), SurfaceEvidence(gathered=True), "main")
            merged = apply_surface(old, new, decisions)
            want = {k: e.value for k, e in surface_entries(after).items()}
            assert {k: e.value for k, e in surface_entries(tomllib.loads(merged)).items()} == want, states
            again = merge_surface(before, tomllib.loads(merged), after, Policy(), SurfaceEvidence(gathered=True), "main")
            assert apply_surface(merged, new, again) == merged
            compared += sum(d.differs for d in decisions)
            for decision in merge_surface(before, before, after, Policy(), SurfaceEvidence(gathered=True), "dev"):
                assert not decision.main_not_taken or decision.needs_review, (states, decision)
        if len(texts) > 2:  # base, dev and main from three real commits: the case decides, per entry
            base, dev, main = (tomllib.loads(t) for t in texts[:3])
            result = tomllib.loads(apply_surface(texts[1], texts[2], merge_surface(base, dev, main, Policy(), SurfaceEvidence(gathered=True), "main")))
            b, d, m, r = (surface_entries(x) for x in (base, dev, main, result))
            for key in set(b) | set(d) | set(m):
                values = [x.get(key).value if x.get(key) else None for x in (b, d, m, r)]
                expected = values[2] if values[1] == values[0] else values[1]
                assert values[3] == expected, (states, key)
    assert compared > 300


def test_module_names_from_real_dist_infos_and_a_scan_of_a_real_tree(tmp_path: Path) -> None:
    """The project's own .venv (pip-installed dist-infos) names pyyaml's module `yaml`; the scan of
    this repository's committed tree finds its real imports, guarded ones as guarded."""
    from depsync.shell.surface_evidence import merged_code_uses, module_names

    if not (REPO / ".venv").is_dir():
        pytest.skip("no .venv in the checkout")
    names = module_names(REPO, ["PyYAML", "tomlkit", "no-such-dist"])
    assert "yaml" in names["pyyaml"] and names["tomlkit"] == ("tomlkit",) and names["no-such-dist"] == ("no_such_dist", "no.such.dist", "such_dist", "nosuchdist")  # the name, its namespace path, without a vendor word, run together
    head = git(REPO, "rev-parse", "HEAD").strip()
    uses = merged_code_uses(REPO, ["tomlkit", "no-such-dist"], head, merged_in_work_tree=False)
    assert uses["tomlkit"].strength == "import" and any(w.startswith("depsync/") for w in uses["tomlkit"].where)
    assert uses["no-such-dist"].strength == "none" and "Python files scanned in main's commit" in uses["no-such-dist"].scope
    # a work tree with a symlinked directory pointing out: never followed
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    outside.mkdir(), tree.mkdir()
    (outside / "x.py").write_text("import secretpkg\n")
    (tree / "link").symlink_to(outside)
    (tree / "linked.py").symlink_to(outside / "x.py")
    from depsync.shell.surface_evidence import Bounds, _work_tree_files, scan_uses

    assert scan_uses(_work_tree_files(tree, Bounds()), {"secretpkg": ("secretpkg",)})[0]["secretpkg"].strength == "none"


def test_hostile_names_and_paths_stay_inert_in_the_summary() -> None:
    """main's pyproject and file names are repository content: no Markdown, HTML or terminal escapes reach the PR body."""
    from depsync.core.sync.reconciliation import Reconciliation
    from depsync.report.reconcile import to_markdown

    base = '[project]\nname = "a"\nversion = "1"\n'
    main = base + '[project.optional-dependencies]\n"<img src=x onerror=alert(1)>" = ["pkg-x\\u001b[31m ; python_version >= \'3\'", "ok-pkg"]\n'
    uses = {"ok-pkg": Use("guarded", ("evil](http://x.invalid)<b>.py:1",))}
    decisions = merge_surface(data(base), data(base), data(main), Policy(), SurfaceEvidence(uses=uses, gathered=True))
    result = Reconciliation("dev", "main", "a" * 40, "b" * 40, "c" * 40, [], [], dependencies=decisions)
    text = to_markdown(result)
    import re

    prose = re.sub(r"`[^`\n]*`", "", text)  # a code span shows its text literally; the rest must be inert
    assert "<img" not in prose and "<b>" not in prose and "evil](" not in text and "\x1b" not in text
    assert "main's dependency changes not taken (1)" in text  # ok-pkg: guarded, in an extra, taken


def test_an_index_comes_with_the_requirement_and_source_that_need_it() -> None:
    base = '[project]\nname = "a"\nversion = "1"\ndependencies = ["numpy"]\n'
    main = (
        '[project]\nname = "a"\nversion = "1"\ndependencies = ["numpy", "torch>=2"]\n\n'
        '[[tool.uv.index]]\nname = "cu128"\nurl = "https://download.example.invalid/whl/cu128"\nexplicit = true\n\n'
        '[tool.uv.sources]\ntorch = [{ index = "cu128", marker = "sys_platform == \'linux\'" }]\n'
    )
    texts = {"base": base, "dev": base, "main": main}
    parsed = {side: tomllib.loads(t) for side, t in texts.items()}
    uses = {"torch": Use("import", ("app/model.py:1",))}
    text, sources, _, surface = reconciled_surface(texts, parsed, Config(), Evidence(gathered=True), SurfaceEvidence(uses=uses, gathered=True))
    result = tomllib.loads(text)
    assert "torch>=2" in result["project"]["dependencies"]
    assert result["tool"]["uv"]["index"][0]["name"] == "cu128" and result["tool"]["uv"]["sources"]["torch"][0]["index"] == "cu128"
    index = next(d for d in surface if d.table == "tool.uv.index")
    assert index.taken_from == "main" and any("uses index 'cu128'" in e for e in index.evidence)
    # without the import, none of the three comes in, and each is said
    text, sources, _, surface = reconciled_surface(texts, parsed, Config(), Evidence(gathered=True), SurfaceEvidence(gathered=True))
    assert text == base and all(d.needs_review for d in sources if d.differs)
    # the requirement is the flagged decision; its explicit index stays out with it, said, not flagged again
    assert all(d.needs_review for d in surface if d.main_not_taken and d.kind == "requirement")
    index = next(d for d in surface if d.table == "tool.uv.index")
    assert index.main_not_taken and not index.needs_review and "only for entries that were not taken" in index.reason


def test_settings_conflicts_include_groups_and_tool_uv_lists_follow_main_on_a_following_branch() -> None:
    base = (
        '[project]\nname = "a"\nversion = "1"\nrequires-python = ">=3.10"\n\n[project.optional-dependencies]\ncpu = ["x"]\ngpu = ["y"]\n\n'
        '[dependency-groups]\ntest = ["pytest"]\nci = ["ruff"]\n\n[tool.uv]\nrequired-version = ">=0.7"\noverride-dependencies = ["torch; sys_platform == \'never\'"]\n'
    )
    main = (
        base.replace('">=3.10"', '">= 3.11"').replace('ci = ["ruff"]', 'ci = ["ruff", {include-group = "test"}]')
        .replace('required-version = ">=0.7"', 'required-version = ">=0.8"')
        .replace('"torch; sys_platform == \'never\'"]', '"torch; sys_platform == \'never\'", "urllib3>=2.6.3"]\nconstraint-dependencies = ["numpy<3"]\nconflicts = [[{ extra = "cpu" }, { extra = "gpu" }]]')
    )
    texts, parsed = {"base": base, "dev": base, "main": main}, {"base": data(base), "dev": data(base), "main": data(main)}
    text, _, _, surface = reconciled_surface(texts, parsed, Config(), Evidence(gathered=True), SurfaceEvidence(), "main")
    result, wanted = tomllib.loads(text), tomllib.loads(main)
    assert result["project"]["requires-python"] == ">= 3.11" and result["dependency-groups"]["ci"] == wanted["dependency-groups"]["ci"]
    assert result["tool"]["uv"] == wanted["tool"]["uv"]
    tables = {d.table for d in surface if d.taken_from == "main" and d.changes_dev}
    assert tables == {"project.requires-python", "dependency-groups.ci", "tool.uv.required-version", "tool.uv.override-dependencies", "tool.uv.constraint-dependencies", "tool.uv.conflicts"}
    # the same, seen from a dev that owns its surface: settings dev never chose move with main, and
    # so do resolver entries (overrides, constraints, conflicts: no code imports them, the three-way
    # rule decides); a requirement-like addition (an include-group) waits for evidence, and
    # requires-python, which moves every marker of dev's lock, is dev's and flagged
    never = {(d.table, d.name): Ownership("main", "history", "dev's history never changed it") for d in surface}
    text, _, _, surface = reconciled_surface(texts, parsed, Config(), Evidence(gathered=True), SurfaceEvidence(ownership=never, gathered=True), "dev")
    declined = {d.table for d in surface if d.main_not_taken}
    assert declined == {"dependency-groups.ci", "project.requires-python"}
    assert all(d.needs_review for d in surface if d.main_not_taken)
    resolver = {d.table for d in surface if d.taken_from == "main" and d.changes_dev and "resolver setting" in d.reason}
    assert resolver == {"tool.uv.override-dependencies", "tool.uv.constraint-dependencies", "tool.uv.conflicts"}


def test_module_names_from_wheels_in_uvs_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """uv keeps each wheel unpacked under archive-v0/<id>/ with its dist-info: Pillow's names PIL."""
    from depsync.shell.surface_evidence import module_names

    unpacked = tmp_path / "uv-cache" / "archive-v0" / "aBcD1234"
    (unpacked / "pillow-11.0.0.dist-info").mkdir(parents=True)
    (unpacked / "pillow-11.0.0.dist-info" / "RECORD").write_text("PIL/__init__.py,sha256=x,1\nPIL/Image.py,sha256=y,2\npillow-11.0.0.dist-info/METADATA,,\n")
    (tmp_path / "uv-cache" / "archive-v0" / "link").symlink_to(tmp_path)  # never followed
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    assert module_names(tmp_path / "project-without-venv", ["Pillow", "gigatoken"]) == {"gigatoken": ("gigatoken",), "pillow": ("PIL",)}


def test_module_names_without_an_installed_copy() -> None:
    """A CI sync has no .venv: renamed distributions come from the table, namespace packages
    from the dotted name, vendor-prefixed ones without the prefix; each matched as a dotted prefix."""
    from depsync.core.module_names import candidates

    assert candidates("pillow") == (("PIL",), "depsync's table of renamed distributions")
    assert candidates("nemo-lens")[0] == ("nemo_lens", "nemo.lens", "nemolens")
    assert "multistorageclient" in candidates("multi-storage-client")[0] and candidates("opentelemetry-api")[0] == ("opentelemetry",)
    assert "pydantic_config" in candidates("prime-pydantic-config")[0] and "dateutil" in candidates("python-dateutil")[0]
    files = [
        ("m/ckpt.py", b"try:\n    from nemo.lens.helpers import managed_span\nexcept ImportError:\n    pass\n"),
        ("m/img.py", b"from PIL import Image\n"),
        ("m/other.py", b"import nemo.collections\nfrom nemo import lensing\n"),  # another package of the namespace
        ("m/cfg.py", b"from pydantic_config import parse\n"),
    ]
    wanted = {name: candidates(name)[0] for name in ("nemo-lens", "pillow", "prime-pydantic-config", "nemo-toolkit")}
    uses, _ = scan_uses(files, wanted)
    assert (uses["nemo-lens"].strength, uses["nemo-lens"].where) == ("guarded", ("m/ckpt.py:2",))
    assert (uses["pillow"].strength, uses["pillow"].where) == ("import", ("m/img.py:1",))
    assert uses["prime-pydantic-config"].strength == "import"
    assert uses["nemo-toolkit"].strength == "none"  # `nemo.toolkit` is not `nemo.collections`
    # `from nemo import lens` imports the namespace package too
    uses, _ = scan_uses([("x.py", b"from nemo import lens\n")], {"nemo-lens": candidates("nemo-lens")[0]})
    assert uses["nemo-lens"].strength == "import"


def test_a_range_that_excludes_devs_locked_version_moves_its_resolution_and_is_flagged() -> None:
    """Lock impact as evidence: main's `~=6.0` -> `~=7.0` over a locked 6.0.1 is not taken
    silently even where dev's history never chose the entry; a range the lock satisfies is."""
    base = '[project]\nname = "a"\nversion = "1"\ndependencies = ["energon~=6.0", "msc>=0.27"]\n'
    main = base.replace("energon~=6.0", "energon~=7.0").replace("msc>=0.27", "msc>=0.30")
    never = {("project.dependencies", n): Ownership("main", "history", "dev's history never changed it") for n in ("energon", "msc")}
    evidence = SurfaceEvidence(ownership=never, gathered=True, locked={"energon": ("6.0.1",), "msc": ("0.45.1",)})
    decisions = {d.name: d for d in merge_surface(data(base), data(base), data(main), evidence=evidence)}
    assert decisions["energon"].taken_from == "dev" and decisions["energon"].needs_review and "locked 6.0.1" in decisions["energon"].reason
    assert decisions["msc"].taken_from == "main" and not decisions["msc"].needs_review  # the lock already satisfies it
    # a branch that follows main takes it
    following = {d.name: d for d in merge_surface(data(base), data(base), data(main), evidence=evidence, default_side="main")}
    assert following["energon"].taken_from == "main"


def test_main_emptying_a_table_dev_keeps_is_one_decision() -> None:
    """main empties the `lts` extra (`lts = []`) that dev's lts image installs: dev's entries
    stay, as one decision, not each removed on its own evidence (and flagged: main's change is
    not taken)."""
    base = '[project]\nname = "a"\nversion = "1"\n\n[project.optional-dependencies]\nlts = ["av", "tensorstore", "wget"]\ndev = ["av"]\n'
    main = base.replace('lts = ["av", "tensorstore", "wget"]', "lts = []")
    dev = base.replace('"wget"]', '"wget", "nvtx"]')  # dev's own work on lts since the merge-base
    never = {("project.optional-dependencies.lts", n): Ownership("main", "history", "dev's history never changed it") for n in ("av", "tensorstore", "wget")}
    decisions = merge_surface(data(base), data(dev), data(main), evidence=SurfaceEvidence(ownership=never, gathered=True))
    lts = [d for d in decisions if d.table == "project.optional-dependencies.lts" and d.case == "main-removed"]
    assert {d.name for d in lts if d.taken_from == "dev"} == {"av", "tensorstore", "wget"} and all(d.needs_review for d in lts)  # main's change, not taken: said
    assert all("a table is one decision" in d.reason for d in lts)
    # a table dev never touched follows main's removal (three-way)
    untouched = merge_surface(data(base), data(base), data(main), evidence=SurfaceEvidence(ownership=never, gathered=True))
    assert not any("a table is one decision" in d.reason for d in untouched)
