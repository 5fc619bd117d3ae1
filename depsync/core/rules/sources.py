"""Source policy for [tool.uv.sources]: full-commit pins, allowed hosts, inert sources."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.requirements import InvalidRequirement, Requirement
from depsync.core.names import canonicalize_name, host_of

from depsync.core.findings import Finding
from depsync.core.model.lock import Lock
from depsync.core.model.requirements import git_source
from depsync.core.rules.registry import RULES
from depsync.core.rules.inputs import CheckInputs
from depsync.core.trust import is_full_commit



def required_names(project) -> set[str]:  # type: ignore[no-untyped-def]
    """Names any requirement of the project asks for (dependencies, extras, groups, overrides...)."""
    names = set()
    for text, _ in project.all_requirement_strings():
        try:
            names.add(canonicalize_name(Requirement(text).name))
        except InvalidRequirement:
            continue
    return names


def locked_commit(lock: Lock | None, name: str, table: dict) -> str | None:  # type: ignore[type-arg]
    """The full commit the lock resolved a git source table to (after `#`), when the lock has
    exactly one entry for that name from that repository (and subdirectory)."""
    if lock is None or not isinstance(table.get("git"), str):
        return None
    wanted = git_source(str(table["git"]), subdirectory=str(table.get("subdirectory", "")))
    commits = set()
    for package in lock.find(name):
        source = package.source
        if source.kind == "git" and source.value == wanted.value and source.subdirectory == wanted.subdirectory:
            commits.add(str(package.raw.get("source", {}).get("git", "")).partition("#")[2].lower())
    (commit,) = commits if len(commits) == 1 else (None,)
    return commit if is_full_commit(commit) else None


def pin_fix(shown: str, commit: str | None, what: str) -> str:
    """The fix text of source-pin-not-commit: the exact rev when the lock knows it."""
    if commit:
        return f'pin rev = "{commit}" (the commit the lock resolved {what} to), then relock with `depsync lock`'
    return f'pin rev = "<40-hex commit>" (the lock records none for {shown}: run `depsync lock` first, then `depsync check --fix`)'


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    allowed = {h.lower() for h in inputs.config.allowed_hosts}
    needed = required_names(pyproject)
    # workspace members use the root's sources too (uv merges them per package name)
    members = set(inputs.workspace_members or ()) | {canonicalize_name(str(m)) for m in (inputs.lock.manifest.get("members", []) if inputs.lock else [])}
    for project in inputs.local_projects.values():
        if project.name in members:
            needed |= required_names(project)
    written = pyproject.source_names()
    for name, tables in pyproject.sources().items():
        line = pyproject.line_of_source(name)
        shown = written.get(name, name)
        # `{ workspace = true }` naming a member: the member is part of the workspace whether or
        # not something depends on it; the entry is the usual boilerplate, not a forgotten source
        workspace_member = name in members and all(t.get("workspace") for t in tables)
        if name not in needed and not workspace_member:
            yield RULES["source-inert"].finding(
                pyproject.path,
                line,
                f"source for {shown} is inert: no dependency, extra or group asks for {shown}, so uv ignores it",
                f"remove it, or add {shown} to the extra or group that needs it",
            )
        for table in tables:
            if "git" in table:
                pin = table.get("rev")
                if pin is None or not is_full_commit(str(pin).lower()):
                    kind, value = next(((k, table[k]) for k in ("rev", "tag", "branch") if k in table), ("", ""))
                    what = f"{kind} {value!r}" if kind else "no rev (the default branch)"
                    yield RULES["source-pin-not-commit"].finding(
                        pyproject.path,
                        line,
                        f"{shown} is pinned to {what}, which can move; the lock records a commit but a relock may silently pick another",
                        pin_fix(shown, locked_commit(inputs.lock, name, table), what),
                    )
            url = table.get("git") or table.get("url")
            if allowed and isinstance(url, str) and host_of(url) not in allowed:
                yield RULES["source-host-not-allowed"].finding(
                    pyproject.path,
                    line,
                    f"{shown} comes from host {host_of(url) or '?'!r}, not in allowed-hosts ({', '.join(sorted(allowed))})",
                    "use an allowed host, or add this one to [tool.depsync] allowed-hosts after review",
                )
