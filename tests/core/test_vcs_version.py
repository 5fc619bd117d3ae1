"""Which projects get a stand-in version in a work copy without .git (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from depsync.core.model.vcs_version import (
    OVERRIDES,
    STAND_IN,
    overrides_note,
    version_from_git,
    version_overrides,
)


def pyproject(dynamic: str = '["version"]', requires: str = '["hatchling", "hatch-vcs"]', extra: str = "") -> str:
    return f'[project]\nname = "p"\ndynamic = {dynamic}\n\n[build-system]\nrequires = {requires}\nbuild-backend = "x"\n{extra}'


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


def test_the_operators_own_setting_is_kept_and_the_note_names_what_was_added() -> None:
    added = version_overrides(["", pyproject()], {"SETUPTOOLS_SCM_PRETEND_VERSION": "9.9"})
    assert "SETUPTOOLS_SCM_PRETEND_VERSION" not in added and set(added) == set(OVERRIDES) - {"SETUPTOOLS_SCM_PRETEND_VERSION"}
    assert all(value == STAND_IN for value in added.values())
    assert "PDM_BUILD_SCM_VERSION" in overrides_note(added) and overrides_note({}) == ""
    assert version_overrides([pyproject(requires='["hatchling"]')], {}) == {}


@given(st.text(max_size=300))
def test_any_text_is_an_answer_never_an_error(text: str) -> None:
    assert version_overrides([text], {}) in ({}, dict.fromkeys(OVERRIDES, STAND_IN))

