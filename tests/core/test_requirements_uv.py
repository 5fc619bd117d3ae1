"""Requirement strings read the way uv 0.13.9 reads them, with real uv as the oracle.

uv's PEP 508 parser (crates/uv-pep508) is more lenient than `packaging` in a few places a
real pyproject.toml meets. Each difference found there is a case below:

* the end of a direct URL: uv ends it at `;` followed by whitespace as well as at whitespace
  followed by `;`, so `name @ URL; marker` (no space before `;`) is a URL plus a marker;
  packaging rejects it ("Expected semicolon (after URL and whitespace)");
* whitespace: uv treats every Unicode whitespace character as a separator (newlines from
  TOML multi-line strings, a non-breaking space); packaging accepts only spaces and tabs.

For each case the test locks a real project with the string (offline, local wheels and a
local git repository) and checks that depsync's reading equals what uv recorded in uv.lock,
and that packaging indeed rejects it. Spellings both accept, and spellings uv rejects too,
are pinned the same way, so the parser neither drifts stricter nor looser than uv.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from depsync.core.model.lock import Lock
from depsync.core.model.requirements import (
    parse_requirement,
    req_from_text,
    specifier_key,
)
from depsync.errors import DepsyncError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # works with any pytest import mode
from uvprojects import LocalMaterial, run_uv, write_project  # noqa: E402

GIT = "zeta @ git+{git}@v1.0.0"
# (id, requirement text) that uv accepts and packaging rejects
UV_ONLY = [
    ("url-semicolon-no-space", GIT + "; sys_platform == 'linux'"),
    ("url-semicolon-tab", GIT + ";\tsys_platform == 'linux'"),
    ("url-semicolon-newline", GIT + ";\nsys_platform == 'linux'"),
    ("newline-before-semicolon", "alpha>=1.0\n; python_version >= '3.10'"),
    ("newline-after-semicolon", "alpha>=1.0;\npython_version >= '3.10'"),
    ("newline-inside-marker", "alpha; python_version >= '3.10' and\n    sys_platform != 'win32'"),
    ("leading-and-trailing-newline", "\nalpha>=1.0,<2\n"),
    ("trailing-nbsp", "alpha>=1.0\u00a0"),
]
# accepted by both (depsync must read them as uv records them)
BOTH = [
    ("url-space-semicolon", GIT + " ; sys_platform == 'linux'"),
    ("parenthesized-specifier", "alpha (>=1.0, <2)"),
    ("empty-extras", "alpha[]>=1.0"),
    ("spaced-extras", "beta[ fast ]>=1.0"),
    ("legacy-marker-names", "alpha; os.name == 'posix' and platform.machine != 'ppc'"),
    ("trailing-comma", "alpha>=1.0,"),
    ("v-prefix", "alpha>=v1.0"),
    ("no-space-marker", "alpha>=1.0;python_version>='3.10'"),
]
# rejected by both
REJECTED = [
    ("empty-url", "alpha @"),
    ("empty-marker", "alpha;"),
    ("url-empty-marker", GIT + "; "),
    ("space-separated-specifiers", "alpha>=1.0 <2.0"),
    ("extras-trailing-comma", "alpha[dev,]"),
    ("single-equals", "alpha=1.0"),
    ("comment", "alpha>=1.0 # pinned"),
    ("compatible-one-segment", "alpha~=1"),
    ("ge-wildcard", "alpha>=1.0.*"),
    ("ge-local", "alpha>=1.0+local"),
]


def _text(template: str, material: LocalMaterial) -> str:
    return template.replace("{git}", material.git.url)


def _packaging_accepts(text: str) -> bool:
    try:
        Requirement(text)
    except InvalidRequirement:
        return False
    return True


def _lock_with(text: str, material: LocalMaterial, directory: Path) -> Lock:
    """Lock a project whose only dependency is text (real uv, offline); uv.lock parsed."""
    pyproject = (
        '[project]\nname = "probe"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{json.dumps(text)}]\n" + material.index_toml()
    )
    project = write_project(directory, pyproject)
    result = run_uv(["lock", "--offline"], project, material.env)
    assert result.returncode == 0, f"uv rejected {text!r}:\n{result.describe()}"
    return Lock.from_text((project / "uv.lock").read_text())


def _uv_rejects(text: str, material: LocalMaterial, directory: Path) -> bool:
    """uv refuses the string as a dependency group entry (exit 2, 'malformed')."""
    pyproject = (
        '[project]\nname = "probe"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n'
        f"[dependency-groups]\ng = [{json.dumps(text)}]\n" + material.index_toml()
    )
    project = write_project(directory, pyproject)
    result = run_uv(["lock", "--offline"], project, material.env)
    return result.returncode == 2 and "malformed dependency groups" in result.stderr


def _recorded(lock: Lock) -> list:
    root = lock.root("probe")
    assert root is not None
    return list(lock.reqs(root.raw["metadata"]["requires-dist"], "requires-dist"))


def _assert_depsync_reads_what_uv_records(text: str, material: LocalMaterial, directory: Path) -> None:
    lock = _lock_with(text, material, directory)
    recorded = _recorded(lock)
    assert len(recorded) == 1, recorded
    mine = req_from_text(text, "pyproject.toml")
    # uv drops the specifier for a direct URL and compares markers modulo requires-python
    assert mine.matches(recorded[0], lock.requires_python or ""), f"{mine.describe()} != {recorded[0].describe()}"


@pytest.mark.parametrize(("case", "template"), UV_ONLY, ids=[c for c, _ in UV_ONLY])
def test_uv_accepts_what_packaging_rejects(case: str, template: str, material: LocalMaterial, tmp_path: Path) -> None:
    text = _text(template, material)
    assert not _packaging_accepts(text), "packaging accepts it now: the case no longer shows a difference"
    _assert_depsync_reads_what_uv_records(text, material, tmp_path / case)


@pytest.mark.parametrize(("case", "template"), BOTH, ids=[c for c, _ in BOTH])
def test_both_accept(case: str, template: str, material: LocalMaterial, tmp_path: Path) -> None:
    text = _text(template, material)
    assert _packaging_accepts(text)
    _assert_depsync_reads_what_uv_records(text, material, tmp_path / case)


@pytest.mark.parametrize(("case", "template"), REJECTED, ids=[c for c, _ in REJECTED])
def test_uv_rejects_and_so_does_depsync(case: str, template: str, material: LocalMaterial, tmp_path: Path) -> None:
    text = _text(template, material)
    assert _uv_rejects(text, material, tmp_path / case)
    with pytest.raises(DepsyncError, match="invalid requirement"):
        parse_requirement(text, "pyproject.toml")


def test_url_ends_at_semicolon_and_whitespace_only() -> None:
    """`;` inside a URL with no whitespace after it stays part of the URL, as in uv (which then
    fails to fetch such a ref); the marker starts after the first `; ` or ` ;`."""
    parsed = parse_requirement("pkg @ https://example.com/a;b.whl ; sys_platform == 'linux'", "x")
    assert parsed.url == "https://example.com/a;b.whl"
    assert str(parsed.marker) == 'sys_platform == "linux"'
    parsed = parse_requirement("pkg @ git+https://example.com/r.git@v1;;  os_name == 'nt'", "x")
    assert parsed.url == "git+https://example.com/r.git@v1;"
    assert str(parsed.marker) == 'os_name == "nt"'


def test_marker_literals_keep_their_whitespace() -> None:
    """Whitespace is normalized between tokens only, never inside a quoted value."""
    parsed = parse_requirement("pkg;\npython_version in '3.10  3.11'", "x")
    assert str(parsed.marker) == 'python_version in "3.10  3.11"'


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (">=2.6.0", ">=2.6", True),  # by value (the case)
        ("==1.1", "==1.1.0", True),
        ("!=1.5", "!=1.5.0.0", True),
        (">=1.0", ">=0!1.0", True),
        (">=1.0", ">=v1.0", True),
        ("<2.0.dev0", "<2.dev0", True),
        ("~=1.0.0", "~=1.0", False),  # the release segments are the meaning of ~=
        ("==1.*", "==1.0.*", True),  # uv's lock comparison says equal (oracle: issue11/wildcard-segments)
        (">=1.0,<2", "<2,>=1.0", True),
    ],
)
def test_specifiers_compared_as_uv_compares_them(left: str, right: str, same: bool) -> None:
    """Pinned against uv 0.13.9 (tests/test_freshness_oracle.py has the same pairs as real
    lock checks): by value, except ~= where the segment count matters."""
    assert (specifier_key(left) == specifier_key(right)) is same


def test_lock_records_extras_from_uv_only_spelling(material: LocalMaterial, tmp_path: Path) -> None:
    """Extras and a URL in one uv-only spelling: name, extras, URL and marker all match."""
    text = _text("zeta[Fast_X] @ git+{git}@v1.0.0;\tos_name != 'nt'", material)
    parsed = parse_requirement(text, "x")
    assert parsed.extras == ("Fast_X",) and parsed.url and parsed.url.endswith("@v1.0.0")
    lock = _lock_with(text, material, tmp_path / "p")
    assert tomllib.loads((tmp_path / "p" / "uv.lock").read_text())["version"] == 1
    recorded = _recorded(lock)[0]
    assert req_from_text(text, "x").matches(recorded, lock.requires_python or "")
