"""[[tool.uv.dependency-metadata]] vs [tool.uv.sources]: a version's local segment names the pinned sha.

Megatron-LM writes `version = "2.14.0+f031cf87"` for TransformerEngine pinned at rev
f031cf87...; when the pin moves and the metadata does not, uv installs the new code
under the old version. The rule checks the local segment against the source rev, or,
when the rev is a branch or tag, against the commit the lock resolved it to.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from depsync.core.findings import Finding
from depsync.core.model.requirements import git_source
from depsync.core.names import canonicalize_name
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES

_HEX = re.compile(r"^[0-9a-f]{7,40}\Z")


def local_sha(version: str) -> str | None:
    """The hex local segment of a version (`2.14.0+f031cf87` -> `f031cf87`), else None."""
    try:
        local = Version(version).local
    except InvalidVersion:
        return None
    if local and _HEX.match(local.lower()):
        return local.lower()
    return None


def follow_rev(version: str, new_rev: str) -> str:
    """The version with its hex local segment following new_rev, same length."""
    sha = local_sha(version)
    if sha is None or not _HEX.match(new_rev.lower()):
        return version
    public = version.rsplit("+", 1)[0]
    return f"{public}+{new_rev.lower()[: len(sha)]}"


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    sources = pyproject.sources()
    for entry in pyproject.dependency_metadata():
        name = canonicalize_name(entry["name"])
        version = entry.get("version")
        sha = local_sha(version) if version else None
        if not sha:
            continue
        git_tables, where = [t for t in sources.get(name, []) if "git" in t], ""
        if not git_tables:
            # the root has no source for it: a workspace member's own source is the pin (uv applies it there)
            in_members = member_git_tables(inputs, name)
            if len({repr(sorted(t.items())) for _, t in in_members}) == 1:
                git_tables, where = [in_members[0][1]], f" (in {in_members[0][0]})"
        if len(git_tables) != 1:
            continue
        table = git_tables[0]
        rev = str(table.get("rev", ""))
        commit = rev.lower() if _HEX.match(rev.lower()) else None
        how = f"rev {rev}"
        if commit is None and inputs.lock is not None:
            # a branch or tag: use the commit the lock resolved it to
            wanted = git_source(str(table["git"]))
            for package in inputs.lock.find(name):
                if package.source.kind == "git" and package.source.value == wanted.value:
                    commit = str(package.raw.get("source", {}).get("git", "")).partition("#")[2].lower() or None
                    how = f"{table.get('rev') or table.get('tag') or table.get('branch')} (locked at {commit})"
        if commit is None or commit.startswith(sha):
            continue
        yield RULES["metadata-rev-mismatch"].finding(
            pyproject.path,
            pyproject.line_of_metadata(name),
            f"dependency-metadata for {entry['name']} says version {version} (sha {sha}) but its source{where} is pinned at {how}",
            f"set version = \"{follow_rev(version, commit)}\" and relock",
        )


def member_git_tables(inputs: CheckInputs, name: str) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    """(member pyproject path, git source table) of each workspace member's own source for name."""
    lock = inputs.lock
    members = set(inputs.workspace_members or ()) | {canonicalize_name(str(m)) for m in (lock.manifest.get("members", []) if lock else [])}
    found = []
    for _, project in sorted(inputs.local_projects.items()):
        if project.name in members and project.name != inputs.pyproject.name:
            found += [(project.path, t) for t in project.sources().get(name, []) if "git" in t]
    return found
