"""Pure: a version for build backends that read it from git, in a work copy without `.git`.

depsync runs uv in a copy of the project, and the copy has no `.git` (the repository's history
is not the build's business, and copying it would cost seconds). A project whose version is
`dynamic` and derived from git tags (setuptools-scm, hatch-vcs, vcs-versioning, pdm-backend's
scm source, poetry- and uv-dynamic-versioning) then fails to build its metadata there, where
`uv lock` in the checkout works. uv.lock records no version for such a project (a dynamic
version would make every commit a lock change), so any stand-in version gives the lock uv would
write in the checkout.

The stand-in is given to the workspace's own projects by name, never to everything uv builds: a
global override (`SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0`) would also reach a git dependency uv
builds from its tagged checkout, and uv.lock would record that dependency as 0.0.0. Per tool:

- setuptools-scm (with setuptools, which names the distribution) and vcs-versioning:
  `SETUPTOOLS_SCM_PRETEND_VERSION_FOR_<NAME>`, the name normalized as setuptools-scm does (runs
  of `-_.` one `_`, upper case), and as older releases read it (upper-cased as written) when
  that differs;
- poetry-dynamic-versioning: `POETRY_DYNAMIC_VERSIONING_OVERRIDE` = `name=0.0.0, ...` (its
  per-package form; names as written, which it compares exactly);
- hatch-vcs (which calls setuptools-scm without a distribution name, so the named variable
  cannot match), pdm-backend's scm source and uv-dynamic-versioning: no per-package variable;
  the copy's pyproject gets the tool's own fallback instead (`[tool.hatch.version]
  fallback-version`, `[tool.pdm.version] fallback_version`, `[tool.uv-dynamic-versioning]
  fallback-version`), which the tool uses only where it finds no git: per package by construction.

What the operator set is kept: no stand-in for a tool whose variable (global or this project's)
is in the environment already.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from depsync.core.names import canonicalize_name

STAND_IN = "0.0.0"


# build requirements that derive the version from git (pdm-backend only with its scm source)
VCS_TOOLS = frozenset({"setuptools-scm", "hatch-vcs", "vcs-versioning", "poetry-dynamic-versioning", "uv-dynamic-versioning", "versioningit"})
_SCM_NAMED = frozenset({"setuptools-scm", "vcs-versioning"})  # read setuptools-scm's variables, given the distribution's name
SCM_GLOBAL = "SETUPTOOLS_SCM_PRETEND_VERSION"
SCM_NAMED = SCM_GLOBAL + "_FOR_"
POETRY_OVERRIDE = "POETRY_DYNAMIC_VERSIONING_OVERRIDE"
POETRY_BYPASS = "POETRY_DYNAMIC_VERSIONING_BYPASS"
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?")  # PEP 508: nothing else reaches a variable


def _name(requirement: object) -> str:
    found = _NAME.match(requirement) if isinstance(requirement, str) else None
    return canonicalize_name(found.group(1)) if found else ""


def _parsed(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return None


def _table(data: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return data


def git_version_tools(data: Mapping[str, Any]) -> frozenset[str]:
    """The tools that give this project (parsed pyproject) its version from git: `[project]
    dynamic` names the version and the build requirements hold them (pdm-backend with its scm
    source counts as "pdm-backend"). Empty: a static version, or not from git."""
    project, build = _table(data, "project"), _table(data, "build-system")
    dynamic = project.get("dynamic", [])
    if not (isinstance(dynamic, list) and "version" in dynamic):
        return frozenset()
    requires = build.get("requires", [])
    names = {_name(r) for r in requires} if isinstance(requires, list) else set()
    tools = names & VCS_TOOLS
    if "pdm-backend" in names and _table(data, "tool", "pdm", "version").get("source") == "scm":
        tools.add("pdm-backend")
    return frozenset(tools)


def version_from_git(pyproject_text: str) -> bool:
    """Does the project take its version from git (an unreadable file: no)?"""
    data = _parsed(pyproject_text)
    return data is not None and bool(git_version_tools(data))


def _project_names(data: Mapping[str, Any]) -> list[str]:
    """The project's names as written ([project] name, and poetry's own), valid names only."""
    found = [_table(data, "project").get("name"), _table(data, "tool", "poetry").get("name")]
    return list(dict.fromkeys(n for n in found if isinstance(n, str) and _PROJECT_NAME.fullmatch(n)))


def scm_variables(name: str) -> list[str]:
    """setuptools-scm's per-package variables for a project name: the normalized form, and the
    form releases before the normalization read (the name upper-cased), when it differs."""
    normalized = SCM_NAMED + re.sub(r"[-_.]+", "_", name).upper()
    raw = SCM_NAMED + name.upper()
    return [normalized] if raw == normalized else [normalized, raw]


def version_overrides(pyproject_texts: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment to add for uv in a work copy: each per-package stand-in the projects
    that take their version from git need and the operator has not set; never a global one."""
    added: dict[str, str] = {}
    poetry: list[str] = []
    for text in pyproject_texts:
        data = _parsed(text)
        tools = git_version_tools(data) if data is not None else frozenset()
        if not tools:
            continue
        names = _project_names(data)  # type: ignore[arg-type]
        if tools & _SCM_NAMED and SCM_GLOBAL not in environ:
            for name in names:
                for variable in scm_variables(name):
                    if variable not in environ:
                        added[variable] = STAND_IN
        if "poetry-dynamic-versioning" in tools and POETRY_OVERRIDE not in environ and POETRY_BYPASS not in environ:
            poetry += [n for n in names if n not in poetry]
    if poetry:
        added[POETRY_OVERRIDE] = ", ".join(f"{name}={STAND_IN}" for name in poetry)
    return added


# the tools without a per-package variable: their fallback setting (table path, key), and the
# operator's global variable that, when set, is theirs to give (nothing is added then)
_FALLBACKS = {"hatch-vcs": (("tool", "hatch", "version"), "fallback-version", SCM_GLOBAL),
              "pdm-backend": (("tool", "pdm", "version"), "fallback_version", "PDM_BUILD_SCM_VERSION"),
              "uv-dynamic-versioning": (("tool", "uv-dynamic-versioning"), "fallback-version", "UV_DYNAMIC_VERSIONING_BYPASS")}


def fallback_edits(pyproject_text: str, environ: Mapping[str, str] | None = None) -> list[tuple[tuple[str, ...], str]]:
    """(table, key) of each fallback version the work copy's pyproject should get: for the
    tools without a per-package variable, where neither the project nor the operator set one."""
    data = _parsed(pyproject_text)
    if data is None:
        return []
    tools, environ = git_version_tools(data), environ or {}
    return [(table, key) for tool, (table, key, operators) in sorted(_FALLBACKS.items())
            if tool in tools and key not in _table(data, *table) and operators not in environ]


def overrides_note(added: Mapping[str, str], fallbacks: int = 0) -> str:
    """The one-line note for the user; "" when nothing was added."""
    if not added and not fallbacks:
        return ""
    given = sorted(added)
    if fallbacks:
        given.append(f"a fallback version in {fallbacks} work-copy pyproject.toml")
    return (f"the work copy has no .git, so a version derived from git is given as {STAND_IN} to the workspace's own projects "
            f"({', '.join(given)}); uv.lock records no version for a dynamic-version project")


def with_fallbacks(pyproject_text: str, edits: Sequence[tuple[tuple[str, ...], str]]) -> str | None:
    """The pyproject text with each (table, key) set to the stand-in (tables made where missing),
    for the work copy only; None when there is nothing to add or tomlkit cannot edit the text."""
    if not edits:
        return None
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(pyproject_text)
        for table, key in edits:
            node: Any = document
            for part in table:
                if part not in node:
                    node[part] = tomlkit.table()
                node = node[part]
            node[key] = STAND_IN
        return tomlkit.dumps(document)
    except (TOMLKitError, TypeError, ValueError, KeyError, AttributeError):  # a shape tomlkit will not edit: no fallback
        return None
