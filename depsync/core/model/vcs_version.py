"""Pure: a version for build backends that read it from git, in a work copy without `.git`.

depsync runs uv in a copy of the project, and the copy has no `.git` (the repository's history
is not the build's business, and copying it would cost seconds). A project whose version is
`dynamic` and derived from git tags (setuptools-scm, hatch-vcs, pdm-backend's scm source,
poetry- and uv-dynamic-versioning) then fails to build its metadata there, where `uv lock` in
the checkout works. uv.lock records no version for such a project (a dynamic version would make
every commit a lock change), so any stand-in version gives the lock uv would write in the
checkout. Each tool's documented override is set, unless the operator set it already.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping

from depsync.core.names import canonicalize_name

# the tools' documented overrides of a git-derived version
OVERRIDES = ("SETUPTOOLS_SCM_PRETEND_VERSION", "PDM_BUILD_SCM_VERSION", "POETRY_DYNAMIC_VERSIONING_BYPASS", "UV_DYNAMIC_VERSIONING_BYPASS")
STAND_IN = "0.0.0"


# build requirements that derive the version from git (pdm-backend only with its scm source)
VCS_TOOLS = frozenset({"setuptools-scm", "hatch-vcs", "vcs-versioning", "poetry-dynamic-versioning", "uv-dynamic-versioning", "versioningit"})
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _name(requirement: object) -> str:
    found = _NAME.match(requirement) if isinstance(requirement, str) else None
    return canonicalize_name(found.group(1)) if found else ""


def version_from_git(pyproject_text: str) -> bool:
    """Does the project take its version from git: `[project] dynamic` names the version and its
    build requirements include a tool that reads it from git (an unreadable file: no)?"""
    try:
        data = tomllib.loads(pyproject_text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return False
    project, build = data.get("project", {}), data.get("build-system", {})
    dynamic = project.get("dynamic", []) if isinstance(project, dict) else []
    if not (isinstance(dynamic, list) and "version" in dynamic and isinstance(build, dict)):
        return False
    requires = build.get("requires", [])
    names = {_name(r) for r in requires} if isinstance(requires, list) else set()
    pdm = data.get("tool", {}).get("pdm", {}) if isinstance(data.get("tool"), dict) else {}
    pdm_scm = isinstance(pdm, dict) and isinstance(pdm.get("version"), dict) and pdm["version"].get("source") == "scm"
    return bool(names & VCS_TOOLS) or ("pdm-backend" in names and pdm_scm)


def version_overrides(pyproject_texts: list[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment to add for uv in a work copy: the stand-in version for each override the
    operator has not set, when one of the projects takes its version from git; else nothing."""
    if not any(version_from_git(text) for text in pyproject_texts):
        return {}
    return {name: STAND_IN for name in OVERRIDES if name not in environ}


def overrides_note(added: Mapping[str, str]) -> str:
    """The one-line note for the user; "" when nothing was added."""
    if not added:
        return ""
    return (f"the work copy has no .git, so a version derived from git is given as {STAND_IN} "
            f"({', '.join(sorted(added))}); uv.lock records no version for a dynamic-version project")
