"""The import scan behind the surface merge, against what main can steer (real git repositories,
merges in progress and main's commit read from git): dev's own code is read first and main's
changes last, a bound that is reached is said and flags the decisions it could have changed,
module names never come from a dist-info in the repository, and a file of many imports keeps
only what is shown."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import git, write_files

from depsync.core.sync.surface import SurfaceEvidence, Use, merge_surface
from depsync.shell import surface_evidence
from depsync.shell.surface_evidence import (
    MAX_PLACES,
    merged_code_uses,
    module_names,
    scan_uses,
)

PYPROJECT = '[project]\nname = "app"\nversion = "1"\ndependencies = [{deps}]\n'
WITH_SIX = PYPROJECT.format(deps='"six", "numpy"')
WITHOUT_SIX = PYPROJECT.format(deps='"numpy"')


def history(root: Path, base: dict[str, str], dev: dict[str, str], main: dict[str, str]) -> tuple[str, str]:
    """A repository with base, then dev's and main's commits on top of it; dev checked out with
    main merged in (conflicts none, not committed: a merge in progress). (dev, main) commits."""
    root.mkdir()
    git(root, "init", "-q", "-b", "dev")
    write_files(root, base)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-q", "-b", "main")
    write_files(root, main)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-q", "dev")
    write_files(root, dev)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "dev", "--allow-empty")
    dev_commit, main_commit = git(root, "rev-parse", "dev").strip(), git(root, "rev-parse", "main").strip()
    subprocess.run(["git", "-C", str(root), "merge", "-q", "--no-commit", "--no-ff", "main"], capture_output=True)  # conflicts may stay
    return dev_commit, main_commit


def removal_of_six(use: Use) -> tuple[bool, str, tuple[str, ...], bool]:
    """main removed six; dev did not touch it: (kept, reason, evidence, flagged) as the surface merge decides with this use."""
    evidence = SurfaceEvidence(uses={"six": use}, gathered=True)
    (decision,) = [d for d in merge_surface(tomllib.loads(WITH_SIX), tomllib.loads(WITH_SIX), tomllib.loads(WITHOUT_SIX), evidence=evidence) if d.name == "six"]
    return decision.result is not None, decision.reason, decision.evidence, decision.needs_review


@pytest.fixture
def few_files(monkeypatch: pytest.MonkeyPatch) -> int:
    """The file bound made small enough to reach with a handful of files (the logic is the same at 50,000)."""
    monkeypatch.setattr(surface_evidence, "MAX_FILES", 5)
    return 5


@pytest.mark.parametrize("in_work_tree", [True, False], ids=["merge-in-progress", "mains-commit"])
def test_devs_code_is_read_before_the_files_main_adds(tmp_path: Path, few_files: int, in_work_tree: bool) -> None:
    """main adds more empty files than the bound, sorted before dev's code, and removes six,
    which dev's code imports: the import is still found, so the removal is not taken silently."""
    padding = {f"aaa/{i:03}.py": "" for i in range(few_files * 3)}
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "app/core.py": "X = 1\n"},
                        {"zz_dev/uses.py": "import six\n"}, {"pyproject.toml": WITHOUT_SIX, **padding})
    use = merged_code_uses(tmp_path / "repo", ["six"], main, in_work_tree, dev)["six"]
    assert use.strength == "import" and use.where == ("zz_dev/uses.py:1",), use
    kept, _, _, flagged = removal_of_six(use)
    assert kept and flagged  # "main removed it but the merged code still needs six: dev's kept, check"


@pytest.mark.parametrize("in_work_tree", [True, False], ids=["merge-in-progress", "mains-commit"])
def test_code_neither_side_changed_is_read_before_mains_changes(tmp_path: Path, few_files: int, in_work_tree: bool) -> None:
    padding = {f"aaa/{i:03}.py": "" for i in range(few_files * 3)}
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "lib/old.py": "import six\n"}, {"zz_dev/other.py": "X = 1\n"},
                        {"pyproject.toml": WITHOUT_SIX, **padding})
    use = merged_code_uses(tmp_path / "repo", ["six"], main, in_work_tree, dev)["six"]
    assert use.where == ("lib/old.py:1",) and use.incomplete == f"scan stopped at {few_files} files"  # main's padding, last, is what was not read


def test_a_reached_bound_is_said_and_flags_the_decision(tmp_path: Path, few_files: int) -> None:
    """More files than the bound before the import, none of them changed by main: the scan
    stops, and the evidence says so; the removal it would have kept is flagged."""
    unchanged = {f"aaa/{i:03}.py": "" for i in range(few_files * 2)}
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, **unchanged, "lib/old.py": "import six\n"}, {}, {"pyproject.toml": WITHOUT_SIX})
    use = merged_code_uses(tmp_path / "repo", ["six"], main, True, dev)["six"]
    assert use.strength == "none" and use.incomplete == f"scan stopped at {few_files} files"
    kept, reason, evidence, flagged = removal_of_six(use)
    assert not kept and flagged and reason.endswith(f"(scan stopped at {few_files} files: evidence incomplete, check)")
    assert any(f"scan stopped at {few_files} files: evidence incomplete" in line for line in evidence), evidence
    # a complete scan that found nothing decides as before, unflagged
    assert removal_of_six(Use("none", scope="3 Python files scanned"))[3] is False


def test_a_file_too_large_to_read_makes_the_evidence_incomplete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(surface_evidence, "MAX_FILE_BYTES", 64)
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "lib/big.py": "import six\n" + "#" * 100 + "\n"}, {}, {"pyproject.toml": WITHOUT_SIX})
    use = merged_code_uses(tmp_path / "repo", ["six"], main, True, dev)["six"]
    assert use.strength == "none" and use.incomplete == "1 file(s) over 64 bytes not read"
    assert removal_of_six(use)[3]


def test_a_committed_dist_info_names_no_module(tmp_path: Path) -> None:
    """main adds a typosquat and commits a .venv dist-info saying it provides `os`, which the
    code imports: the names come from the distribution's name, never from the repository."""
    dist_info = ".venv/lib/python3.12/site-packages/reqeusts-1.0.dist-info"
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "app.py": "import os\n"}, {},
                        {"pyproject.toml": PYPROJECT.format(deps='"six", "reqeusts"'), f"{dist_info}/top_level.txt": "os\n", f"{dist_info}/METADATA": "Name: reqeusts\n"})
    root = tmp_path / "repo"
    assert module_names(root, ["reqeusts"], (dev, main)) == {"reqeusts": ("reqeusts",)}
    assert merged_code_uses(root, ["reqeusts"], main, True, dev)["reqeusts"].strength == "none"
    # the same dist-info, untracked (a developer's own .venv): read
    git(root, "merge", "--abort")
    git(root, "rm", "-q", "--cached", "-r", "--ignore-unmatch", ".venv")
    write_files(root, {f"{dist_info}/top_level.txt": "os\n"})
    assert module_names(root, ["reqeusts"], (dev,)) == {"reqeusts": ("os",)}


def test_many_imports_keep_only_what_is_shown(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Files of nothing but `import six`: three places are kept (one per file: a file's module
    counts once), the same bytes are parsed once, and once six has its places a further file
    that names it is counted but not parsed."""
    import ast

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a cold import store

    parsed: list[str] = []
    real_parse = ast.parse

    def counting_parse(source, filename="<unknown>", *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(filename)
        return real_parse(source, filename, *args, **kwargs)

    monkeypatch.setattr(surface_evidence.ast, "parse", counting_parse)
    body = b"import six\n" * 20_000
    uses, scope = scan_uses(((f"gen/{i}.py", body) for i in range(6)), {"six": ("six",)})
    assert uses["six"].where == ("gen/0.py:1", "gen/1.py:1", "gen/2.py:1") and len(uses["six"].where) == MAX_PLACES
    assert parsed == ["gen/0.py"] and scope == "6 Python files scanned"
    # the next run remembers what each file imports, by its bytes: nothing is parsed again
    parsed.clear()
    again, _ = scan_uses(((f"gen/{i}.py", body) for i in range(6)), {"six": ("six",)})
    assert again["six"].where == uses["six"].where and parsed == []
    # a guarded import first still lets a later file give the unguarded one
    guarded = b"try:\n    import six\nexcept ImportError:\n    pass\n"
    uses, _ = scan_uses([("a.py", guarded), ("b.py", b"import six\n")], {"six": ("six",)})
    assert uses["six"].strength == "import" and uses["six"].where == ("b.py:1",)


def test_a_symlinked_path_dev_changed_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("import secretpkg\n")
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX}, {"lib/x.py": "X = 1\n"}, {"pyproject.toml": WITHOUT_SIX})
    root = tmp_path / "repo"
    subprocess.run(["rm", "-rf", str(root / "lib")], check=True)
    (root / "lib").symlink_to(outside)  # the work tree now differs from dev's commit: lib/x.py is outside
    assert merged_code_uses(root, ["secretpkg"], main, True, dev)["secretpkg"].strength == "none"


def test_a_file_that_does_not_parse_makes_the_evidence_of_what_it_names_incomplete(tmp_path: Path) -> None:
    """main changes the file dev's import of six is in, the merge leaves it with conflict
    markers and dev's side does not parse either: what it imports is unknown, and the removal
    of six is flagged, not taken silently."""
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "lib/old.py": "X = 0\n"},
                        {"lib/old.py": "import six\nX = (\n"}, {"pyproject.toml": WITHOUT_SIX, "lib/old.py": "X = 2\n"})
    root = tmp_path / "repo"
    assert "<<<<<<<" in (root / "lib" / "old.py").read_text()  # the merge left its markers
    uses = merged_code_uses(root, ["six", "numpy"], main, True, dev)
    assert uses["six"].strength == "none" and uses["six"].incomplete == "1 file(s) naming six could not be parsed"
    assert uses["numpy"].incomplete == ""  # a file that does not name it says nothing about it
    assert removal_of_six(uses["six"])[3]


def test_a_conflicted_file_is_read_as_both_its_sides(tmp_path: Path) -> None:
    """The merge leaves dev's `import six` inside conflict markers: each side parses on its own,
    at its own line numbers, so the merged code still needs six and main's removal is not taken."""
    dev, main = history(tmp_path / "repo", {"pyproject.toml": WITH_SIX, "lib/old.py": "X = 0\n"},
                        {"lib/old.py": "import os\nimport six\nX = 1\n"}, {"pyproject.toml": WITHOUT_SIX, "lib/old.py": "try:\n    import numpy\nexcept ImportError:\n    numpy = None\n"})
    root = tmp_path / "repo"
    text = (root / "lib" / "old.py").read_text()
    assert "<<<<<<<" in text
    uses = merged_code_uses(root, ["six", "numpy"], main, True, dev)
    six_line = text.splitlines().index("import six") + 1
    assert (uses["six"].strength, uses["six"].where, uses["six"].incomplete) == ("import", (f"lib/old.py:{six_line}",), "")
    assert uses["numpy"].strength == "guarded"  # main's side, guarded
