"""uv's preview lock format (`[tool.uv] preview = true`: revision 5 without [package.metadata]),
read statically: depsync's verdict against real `uv lock --check --offline` on each edit.

It was always statically stale (every requirement "missing" from the absent metadata) and only
uv's confirmation saved it. uv validates such a lock by what it resolved (tests/UV_LOCK_FORMATS.md,
depsync/core/rules/resolved.py); each case below is an edit of pyproject.toml after a real lock,
with uv's verdict measured on this machine (uv 0.13.9) and pinned, and depsync's asked to agree.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from depsync.api import lock_freshness

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # works with any pytest import mode
from uvprojects import LocalMaterial, lock_project, uv_check, write_project  # noqa: E402


def _base(m: LocalMaterial) -> str:
    c1 = m.git.commits["c1"]
    return (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["alpha>=1.0", "gamma; sys_platform == \'linux\'", "epsilon[fast]>=1.0; python_version >= \'3.10\'", "zeta"]\n\n'
        '[project.optional-dependencies]\nx = ["beta"]\nempty = []\n\n'
        '[dependency-groups]\ndev = ["delta"]\nnone = []\n\n'
        "[tool.uv]\npreview = true\n\n"
        f'[tool.uv.sources]\nzeta = {{ git = "{m.git.url}", rev = "{c1}" }}\n'
        + m.index_toml()
    )


# (id, old text, new text, uv's verdict: fresh?)
EDITS = [
    ("unchanged", "", "", True),
    ("specifier-still-satisfied", '"alpha>=1.0"', '"alpha>=1.5"', True),
    ("specifier-unsatisfied", '"alpha>=1.0"', '"alpha>=3"', False),
    ("dependency-added", '"zeta"]', '"zeta", "foo-bar"]', False),
    ("dependency-removed", '"alpha>=1.0", ', "", False),
    ("marker-changed", "sys_platform == 'linux'", "sys_platform == 'darwin'", False),
    ("marker-spelled-otherwise", "\"gamma; sys_platform == 'linux'\"", '"gamma ; sys_platform==\\"linux\\""', True),
    ("extra-on-a-dependency-dropped", "epsilon[fast]", "epsilon", False),
    ("extra-requirement-unsatisfied", 'x = ["beta"]', 'x = ["beta<2"]', False),
    ("extra-added-empty", "empty = []", "empty = []\nmore = []", False),
    ("extra-removed", "empty = []\n", "", False),
    ("group-requirement-added", 'dev = ["delta"]', 'dev = ["delta", "epsilon"]', False),
    ("group-requirement-unsatisfied", 'dev = ["delta"]', 'dev = ["delta<1"]', False),
    ("group-removed", "none = []\n", "", False),
    ("git-source-moved", "REV1", "REV2", False),
]


@pytest.fixture(scope="module")
def locked(material: LocalMaterial, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_project(tmp_path_factory.mktemp("preview") / "demo", _base(material))
    lock_project(root, material.env)
    text = (root / "uv.lock").read_text()
    root_entry = text[text.index('name = "demo"'):].split("[[package]]")[0]
    assert text.startswith("version = 1\nrevision = 5\n") and "[package.metadata]" not in root_entry  # the preview format
    return root


@pytest.mark.parametrize(("case", "old", "new", "fresh"), EDITS, ids=[e[0] for e in EDITS])
def test_depsync_agrees_with_uv_on_a_preview_lock(locked: Path, material: LocalMaterial, tmp_path: Path, case: str, old: str, new: str, fresh: bool) -> None:
    root = tmp_path / "demo"
    shutil.copytree(locked, root)
    text = (root / "pyproject.toml").read_text()
    old = old.replace("REV1", material.git.commits["c1"])
    new = new.replace("REV2", material.git.commits["c2"])
    if old:
        assert old in text, old
        (root / "pyproject.toml").write_text(text.replace(old, new, 1))
    assert uv_check(root, material.env) is fresh, f"uv's verdict on {case} changed"
    findings = lock_freshness(root)
    assert (findings == []) is fresh, [f.message for f in findings]


@pytest.mark.parametrize(("member_dependency", "fresh"), [('"alpha>=1.0"', True), ('"alpha>=1.5"', True), ('"alpha>=3"', False), ('"alpha>=1.0", "gamma"', False)])
def test_a_workspace_members_resolved_dependencies(material: LocalMaterial, tmp_path: Path, member_dependency: str, fresh: bool) -> None:
    """A member's package has no [package.metadata] in the preview format either."""
    member = '[project]\nname = "m"\nversion = "0.2.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha>=1.0"]\n\n[dependency-groups]\ndev = ["delta"]\n'
    root = write_project(
        tmp_path / "ws",
        '[project]\nname = "root-app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["m"]\n\n[tool.uv]\npreview = true\n\n'
        '[tool.uv.workspace]\nmembers = ["packages/*"]\n\n[tool.uv.sources]\nm = { workspace = true }\n' + material.index_toml(),
        {"packages/m/pyproject.toml": member},
    )
    lock_project(root, material.env)
    assert "[package.metadata]" not in (root / "uv.lock").read_text()
    (root / "packages/m/pyproject.toml").write_text(member.replace('"alpha>=1.0"', member_dependency))
    assert uv_check(root, material.env) is fresh
    assert (lock_freshness(root) == []) is fresh
