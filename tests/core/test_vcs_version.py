"""Which projects get a stand-in version in a work copy without .git, and in which form:
per package, never a global override (pure)."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from depsync.core.model.vcs_version import (
    STAND_IN,
    fallback_edits,
    overrides_note,
    scm_variables,
    version_from_git,
    version_overrides,
    with_fallbacks,
)

GLOBALS = {"SETUPTOOLS_SCM_PRETEND_VERSION", "PDM_BUILD_SCM_VERSION", "POETRY_DYNAMIC_VERSIONING_BYPASS", "UV_DYNAMIC_VERSIONING_BYPASS", "VCS_VERSIONING_PRETEND_VERSION"}


def pyproject(dynamic: str = '["version"]', requires: str = '["hatchling", "hatch-vcs"]', extra: str = "", name: str = "p") -> str:
    return f'[project]\nname = "{name}"\ndynamic = {dynamic}\n\n[build-system]\nrequires = {requires}\nbuild-backend = "x"\n{extra}'


@pytest.mark.parametrize(("text", "expected"), [
    (pyproject(), True),
    (pyproject(requires='["setuptools>=64", "setuptools_scm[toml]>=8"]'), True),
    (pyproject(requires='["poetry-core", "Poetry-Dynamic-Versioning>=1"]'), True),
    (pyproject(requires='["pdm-backend"]', extra='\n[tool.pdm.version]\nsource = "scm"\n'), True),
    (pyproject(requires='["pdm-backend"]', extra='\n[tool.pdm.version]\nsource = "file"\npath = "p/__init__.py"\n'), False),
    (pyproject(requires='["hatchling"]'), False),  # hatch's regex source: a version in a file
    (pyproject(dynamic='["dependencies"]'), False),
    ('[project]\nname = "p"\nversion = "1.0"\n', False),
    ("<<<<<<< ours\n[project]\n", False),  # not TOML: no
])
def test_only_projects_that_take_their_version_from_git(text: str, expected: bool) -> None:
    assert version_from_git(text) is expected


def test_each_project_gets_its_own_variable_never_a_global_one() -> None:
    """A global SETUPTOOLS_SCM_PRETEND_VERSION would also reach a git dependency uv builds, and
    uv.lock would record it as 0.0.0: only the workspace's own projects get one, by name."""
    scm = '["setuptools", "setuptools-scm"]'
    added = version_overrides([pyproject(name="root-app", requires=scm), pyproject(name="My.Member_x", requires='["vcs-versioning"]'),
                               pyproject(name="static", requires='["hatchling"]')], {})
    assert added == {
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_ROOT_APP": STAND_IN, "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_ROOT-APP": STAND_IN,
        "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY_MEMBER_X": STAND_IN, "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_MY.MEMBER_X": STAND_IN,
    }
    assert not GLOBALS & set(added)
    assert scm_variables("plain") == ["SETUPTOOLS_SCM_PRETEND_VERSION_FOR_PLAIN"]


def test_poetry_dynamic_versioning_gets_its_per_package_override() -> None:
    poetry = '["poetry-core", "poetry-dynamic-versioning"]'
    added = version_overrides([pyproject(name="a", requires=poetry), pyproject(name="b-c", requires=poetry, extra='\n[tool.poetry]\nname = "b_c"\n')], {})
    assert added == {"POETRY_DYNAMIC_VERSIONING_OVERRIDE": "a=0.0.0, b-c=0.0.0, b_c=0.0.0"}


def test_the_operators_own_setting_is_kept() -> None:
    scm = pyproject(requires='["setuptools", "setuptools-scm"]')
    assert version_overrides([scm], {"SETUPTOOLS_SCM_PRETEND_VERSION": "9.9"}) == {}  # the operator's global: theirs
    assert version_overrides([scm], {"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_P": "9.9"}) == {}
    assert version_overrides([pyproject(requires='["poetry-dynamic-versioning"]')], {"POETRY_DYNAMIC_VERSIONING_OVERRIDE": "p=1"}) == {}
    assert version_overrides([pyproject(requires='["hatchling"]')], {}) == {}


def test_a_name_that_is_no_project_name_reaches_no_variable() -> None:
    scm = '["setuptools-scm"]'
    assert version_overrides([pyproject(name="a=1, b", requires=scm)], {}) == {}
    assert version_overrides([pyproject(name="x\\u0000y", requires=scm)], {}) == {}


def test_tools_without_a_per_package_variable_get_a_fallback_in_the_copy() -> None:
    pdm = pyproject(requires='["pdm-backend"]', extra='\n[tool.pdm.version]\nsource = "scm"\n')
    uvdv = pyproject(requires='["hatchling", "uv-dynamic-versioning"]', extra='\n[tool.hatch.version]\nsource = "uv-dynamic-versioning"\n')
    hatch = pyproject(extra='\n[tool.hatch.version]\nsource = "vcs"\n')
    assert version_overrides([pdm, uvdv, hatch], {}) == {}  # no global PDM_BUILD_SCM_VERSION, UV_DYNAMIC_VERSIONING_BYPASS, SETUPTOOLS_SCM_PRETEND_VERSION
    edited = tomllib.loads(with_fallbacks(hatch, fallback_edits(hatch)) or "")
    assert edited["tool"]["hatch"]["version"] == {"source": "vcs", "fallback-version": STAND_IN}
    edited = tomllib.loads(with_fallbacks(pdm, fallback_edits(pdm)) or "")
    assert edited["tool"]["pdm"]["version"] == {"source": "scm", "fallback_version": STAND_IN}
    edited = tomllib.loads(with_fallbacks(uvdv, fallback_edits(uvdv)) or "")
    assert edited["tool"]["uv-dynamic-versioning"] == {"fallback-version": STAND_IN} and edited["tool"]["hatch"]["version"]["source"] == "uv-dynamic-versioning"
    own = pdm + 'fallback_version = "1.0"\n'
    assert fallback_edits(hatch, {"SETUPTOOLS_SCM_PRETEND_VERSION": "4.5.6"}) == [] and fallback_edits(pdm, {"PDM_BUILD_SCM_VERSION": "1"}) == []
    assert fallback_edits(own) == [] and with_fallbacks(own, []) is None  # the project's own fallback stays


def test_the_note_names_what_was_given() -> None:
    note = overrides_note({"SETUPTOOLS_SCM_PRETEND_VERSION_FOR_P": STAND_IN}, 1)
    assert "SETUPTOOLS_SCM_PRETEND_VERSION_FOR_P" in note and "a fallback version in 1 work-copy pyproject.toml" in note
    assert overrides_note({}) == ""


@given(st.text(max_size=300))
def test_any_text_is_an_answer_never_an_error(text: str) -> None:
    added = version_overrides([text], {})
    assert not GLOBALS & set(added) and all(v == STAND_IN or v.endswith(f"={STAND_IN}") for v in added.values())
    with_fallbacks(text, fallback_edits(text))
