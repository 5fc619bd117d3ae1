"""`pkg @ git+URL@sha; marker` without a space before `;`: uv reads a git URL and a marker (PEP 508
strictly needs the space, packaging rejects it). The requirement model read it as uv does, but the
rules and the merge looked at requirements through packaging and skipped it: the pin policy missed
the direct git URL, and the reconcile merge saw an unparsable string instead of the package.

Real inputs: real uv 0.13.9 locks each project offline (a local wheel index and a file:// git
repository) and is the oracle that it reads the string; the CLI in a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import uv_lock
from packaging.requirements import InvalidRequirement, Requirement
from support import depsync
from uvprojects import LocalMaterial, uv_check

from depsync.core.sync.surface import requirement_key


def _project(root: Path, material: LocalMaterial, requirement: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{json.dumps(requirement)}]\n" + material.index_toml()
    )
    uv_lock(root, material)
    return root


@pytest.mark.parametrize("space", ["", " "])
def test_a_short_commit_in_a_direct_git_url_is_reported_with_or_without_the_space(tmp_path: Path, material: LocalMaterial, space: str) -> None:
    c1 = material.git.commits["c1"]
    requirement = f"zeta @ git+{material.git.url}@{c1[:7]}{space}; sys_platform == 'linux'"
    if not space:
        with pytest.raises(InvalidRequirement):
            Requirement(requirement)  # what the rules used to read it with
    root = _project(tmp_path / "app", material, requirement)
    lock = (root / "uv.lock").read_text()
    assert f"#{c1}" in lock and "sys_platform == 'linux'" in lock  # uv read the git URL and the marker
    assert uv_check(root, material.env)
    result = depsync("check", str(root), "--no-cache", "--format", "json")
    found = [f for f in json.loads(result.stdout)["findings"] if f["rule"] != "protected-unchecked"]
    (finding,) = found  # fresh (no lock-stale), one pin finding
    assert finding["rule"] == "source-pin-not-commit" and finding["line"] == 5
    assert finding["message"].startswith(f"zeta (a direct git URL in dependencies) is pinned to short commit '{c1[:7]}'")
    assert finding["fix"].endswith(f"`zeta @ git+…@{c1}` (the commit the lock resolved it to), then relock with `depsync lock`")


def test_a_source_for_a_package_required_by_such_a_url_is_not_inert(tmp_path: Path, material: LocalMaterial) -> None:
    """uv applies a [tool.uv.sources] entry to the package a direct URL names (the lock records the
    source's commit): the entry is live (it was a source-inert false alarm), and the static model
    lowers the requirement through it (it said stale, and only uv's confirmation saved it)."""
    c1, c2 = material.git.commits["c1"], material.git.commits["c2"]
    root = tmp_path / "app"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f'dependencies = ["zeta @ git+{material.git.url}@{c2}; sys_platform == \'linux\'"]\n\n'
        f'[tool.uv.sources]\nzeta = {{ git = "{material.git.url}", rev = "{c1}" }}\n' + material.index_toml()
    )
    uv_lock(root, material)
    assert f"#{c1}" in (root / "uv.lock").read_text()  # the source won over the URL: it is live
    result = depsync("check", str(root), "--no-cache", "--format", "json")
    # and the static model lowers the URL requirement through the source as uv does: fresh, no disagreement
    assert [f for f in json.loads(result.stdout)["findings"] if f["rule"] != "protected-unchecked"] == []
    assert uv_check(root, material.env)


def test_the_merge_keys_such_a_requirement_by_its_package() -> None:
    name, (extras, spec, marker, url) = requirement_key("zeta @ git+https://example.com/z.git@310e8fb; sys_platform == 'linux'")
    assert (name, marker, url) == ("zeta", 'sys_platform == "linux"', "git+https://example.com/z.git@310e8fb")
    assert requirement_key("zeta @ git+https://example.com/z.git@310e8fb ; sys_platform == 'linux'")[0] == "zeta"
