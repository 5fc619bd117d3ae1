"""Source policy for [tool.uv.sources]: full-commit pins, allowed hosts, inert sources."""

from __future__ import annotations

import re
from collections.abc import Iterator

from depsync.core.findings import Finding, Severity
from depsync.core.model.lock import Lock
from depsync.core.model.requirements import (
    git_source,
    source_from_direct_url,
    uv_requirement,
)
from depsync.core.names import canonicalize_name, host_of
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.missing_members import FIX as MISSING_FIX
from depsync.core.rules.missing_members import missing_hint, missing_member_dirs
from depsync.core.rules.registry import RULES
from depsync.core.trust import is_full_commit

# a hex prefix of a commit: uv resolves it, but it is not the commit itself (git may call it
# ambiguous later, and a branch or tag may be named like one)
_SHORT_COMMIT = re.compile(r"[0-9a-f]{4,39}")


def required_names(project) -> set[str]:  # type: ignore[no-untyped-def]
    """Names any requirement of the project asks for (dependencies, extras, groups, overrides...)."""
    names = set()
    for text, _ in project.all_requirement_strings():
        requirement = uv_requirement(text)  # as uv reads it: `pkg @ URL; marker` without a space too
        if requirement is not None:
            names.add(canonicalize_name(requirement.name))
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


def describe_pin(kind: str, value: str, commit: str | None) -> str:
    """How a source or URL is pinned, as a finding says it: `short commit 'abc1234' (...)`, `tag 'v1'`.
    A hex rev is a short commit unless the lock resolved it to a commit it does not begin (then it
    is a branch or tag that happens to look like hex)."""
    if not kind:
        return "no rev (the default branch)"
    if kind == "rev" and _SHORT_COMMIT.fullmatch(value.lower()) and (commit is None or commit.startswith(value.lower())):
        return f"short commit {value!r} (a hex prefix, not a full commit)"
    return f"{kind} {value!r}"


def pin_problem(what: str, commit: str | None) -> str:
    """Why a pin that is not a full commit is a risk (after "... is pinned to {what}")."""
    if what.startswith("short commit"):
        resolved = f"the lock resolved it to {commit}" if commit else "the lock records no commit for it yet"
        return f"; {resolved}, and a prefix can turn ambiguous or name a branch or tag later"
    return ", which can move; the lock records a commit but a relock may silently pick another"


def pin_fix(shown: str, commit: str | None, what: str) -> str:
    """The fix text of source-pin-not-commit: the exact rev when the lock knows it."""
    if commit:
        return f'pin rev = "{commit}" (the commit the lock resolved {what} to), then relock with `depsync lock`'
    return f'pin rev = "<40-hex commit>" (the lock records none for {shown}: run `depsync lock` first, then `depsync check --fix`)'


def check(inputs: CheckInputs) -> Iterator[Finding]:
    pyproject = inputs.pyproject
    needed = required_names(pyproject)
    # workspace members use the root's sources too (uv merges them per package name)
    members = set(inputs.workspace_members or ()) | {canonicalize_name(str(m)) for m in (inputs.lock.manifest.get("members", []) if inputs.lock else [])}
    member_projects = [p for _, p in sorted(inputs.local_projects.items()) if p.name in members and p.name != pyproject.name]
    for project in member_projects:
        needed |= required_names(project)
    yield from _source_findings(pyproject, inputs, needed, members, missing_member_dirs(inputs))
    # a member's own [tool.uv.sources] apply to its own requirements: the same policy as the root's
    for project in member_projects:
        yield from _source_findings(project, inputs, required_names(project), members, {})
    for project in (pyproject, *member_projects):
        yield from _direct_git_pins(project, inputs.lock)


def _source_findings(project, inputs: CheckInputs, needed: set[str], members: set[str], missing: dict[str, str]) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
    """Pin policy, allowed hosts and inert entries of one pyproject's [tool.uv.sources] (the
    root's, or a workspace member's); needed: the names the requirements its sources apply to ask for."""
    allowed = {h.lower() for h in inputs.config.allowed_hosts}
    written = project.source_names()
    for name, tables in project.sources().items():
        line = project.line_of_source(name)
        shown = written.get(name, name)
        # `{ workspace = true }` naming a member: the member is part of the workspace whether or
        # not something depends on it; the entry is the usual boilerplate, not a forgotten source
        workspace_member = name in members and all(t.get("workspace") for t in tables)
        if name not in needed and not workspace_member and missing:
            # a member that is not checked out may be the one asking for it: say so, judge nothing
            yield RULES["source-inert"].finding(
                project.path,
                line,
                f"source for {shown}: no checked-out project asks for {shown}, but a member may; {missing_hint(missing)}",
                MISSING_FIX,
            ).with_severity(Severity.INFO)
        elif name not in needed and not workspace_member:
            yield RULES["source-inert"].finding(
                project.path,
                line,
                f"source for {shown} is inert: no dependency, extra or group asks for {shown}, so uv ignores it",
                f"remove it, or add {shown} to the extra or group that needs it",
            )
        for table in tables:
            if "git" in table:
                pin = table.get("rev")
                if pin is None or not is_full_commit(str(pin).lower()):
                    kind, value = next(((k, str(table[k])) for k in ("rev", "tag", "branch") if k in table), ("", ""))
                    commit = locked_commit(inputs.lock, name, table)
                    what = describe_pin(kind, value, commit)
                    yield RULES["source-pin-not-commit"].finding(
                        project.path, line, f"{shown} is pinned to {what}{pin_problem(what, commit)}",
                        pin_fix(shown, commit, f"{kind} {value!r}" if kind else "the default branch"),
                    )
            url = table.get("git") or table.get("url")
            if allowed and isinstance(url, str) and host_of(url) not in allowed:
                yield RULES["source-host-not-allowed"].finding(
                    project.path,
                    line,
                    f"{shown} comes from host {host_of(url) or '?'!r}, not in allowed-hosts ({', '.join(sorted(allowed))})",
                    "use an allowed host, or add this one to [tool.depsync] allowed-hosts after review",
                )


def _direct_git_pins(project, lock: Lock | None) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
    """`name @ git+https://...@ref` requirements (dependencies, extras, groups): the same pin
    policy as [tool.uv.sources]. The URL itself is never shown (it may carry a token)."""
    for text, origin in project.all_requirement_strings():
        requirement = uv_requirement(text)  # packaging misses `pkg @ git+...@sha; marker` (no space before `;`)
        if requirement is None or not requirement.url or not requirement.url.startswith("git+"):
            continue
        source = source_from_direct_url(requirement.url)
        kind, value = source.ref if source.ref else ("", "")
        if is_full_commit(value.lower()):
            continue
        name = canonicalize_name(requirement.name)
        commit = locked_commit(lock, name, {"git": source.value, "subdirectory": source.subdirectory})
        what = describe_pin(kind, value, commit)
        where = origin.replace(":", " ", 1)
        if commit:
            fix = f"put the full commit after `@`: `{requirement.name} @ git+…@{commit}` (the commit the lock resolved it to), then relock with `depsync lock`"
        else:
            fix = f"put a full 40-hex commit after `@` in the URL (the lock records none for {requirement.name}: run `depsync lock` first to see which)"
        yield RULES["source-pin-not-commit"].finding(
            project.path,
            project.line_of_requirement(text, origin),
            f"{requirement.name} (a direct git URL in {where}) is pinned to {what}{pin_problem(what, commit)}",
            fix,
        )
