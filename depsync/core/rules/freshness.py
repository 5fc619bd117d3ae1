"""Static lock freshness: does uv.lock record exactly the inputs pyproject.toml implies?

uv stores its inputs in the lock (top-level requires-python/conflicts, the root's
[package.metadata], [manifest], [options]); `uv lock --check` re-resolves only when
they differ. Comparing them offline predicts its verdict; tests/test_freshness_oracle.py
checks the prediction against real uv.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from typing import Any

from packaging.specifiers import InvalidSpecifier

from depsync.core.findings import Finding, listed
from depsync.core.model import exclude_newer
from depsync.core.model.lock import Lock
from depsync.core.model.lowering import (
    Context,
    ExpectedInputs,
    expected_inputs,
    index_urls,
)
from depsync.core.model.markers import (
    InvalidMarker,
    bounded_check,
    markers_equivalent,
    parse_marker,
    specifiers_equivalent,
)
from depsync.core.model.pyproject import Pyproject
from depsync.core.model.requirements import (
    Req,
    normalize_url,
    req_from_text,
    specifier_key,
)
from depsync.core.model.uv_settings import PROJECT_ONLY, UNMODELLED, UvSettings
from depsync.core.names import canonicalize_name, canonicalize_version
from depsync.core.rules import resolved
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES
from depsync.errors import DepsyncError

_FIX = "run `depsync lock` (uv lock with the image's uv) and commit the new uv.lock"
_PYPI = "https://pypi.org/simple"
# Locks of this revision and later record [tool.uv] default-groups in the root package;
# uv checks them only there (measured: the same lock relabelled revision 4 passes).
DEFAULT_GROUPS_REVISION = 5
# Locks without a `revision` key (revision 0, written by uv before 0.5.x) may lack
# provides-extras and empty dependency groups: uv 0.13.9 then skips the extras comparison
# and ignores empty groups on both sides (measured; revision 1 and later compare both).
EXTRAS_REVISION = 1


def diff_reqs(expected: Iterable[Req], recorded: Iterable[Req], requires_python: str = "") -> tuple[list[Req], list[Req]]:
    """(expected but not recorded, recorded but not expected), as sets: uv compares
    requirement lists as sets of normalized requirements, so a requirement written twice
    (an override repeated) is recorded once and matches once or twice alike.

    Only Reqs of the same name can match, so each looks among its own name only: a
    pyproject of thousands of distinct names is linear, not quadratic.
    """
    expected, recorded = list(expected), list(recorded)
    recorded_by_name: dict[str, list[int]] = {}
    for index, req in enumerate(recorded):
        recorded_by_name.setdefault(req.name, []).append(index)
    matched: set[int] = set()
    missing = []
    for req in expected:
        candidates = recorded_by_name.get(req.name, [])
        # an unmatched entry first (the usual one-to-one case stays linear), then a taken one (a duplicate)
        ordered = [i for i in candidates if i not in matched] + [i for i in candidates if i in matched]
        hit = next((i for i in ordered if req.matches(recorded[i], requires_python)), None)
        if hit is None:
            missing.append(req)
        else:
            matched.add(hit)
    expected_by_name: dict[str, list[Req]] = {}
    for req in expected:
        expected_by_name.setdefault(req.name, []).append(req)
    unpaired = [
        r for index, r in enumerate(recorded)
        if index not in matched and not any(e.matches(r, requires_python) for e in expected_by_name.get(r.name, ()))
    ]
    return missing, unpaired


class _Stale:
    """Collects lock-stale findings with a consistent message and fix."""

    def __init__(self, pyproject: Pyproject, lock: Lock) -> None:
        self.pyproject, self.lock = pyproject, lock
        self.findings: list[Finding] = []
        self.requires_python = lock.requires_python or ""

    def add(self, message: str, *, pyproject_line: int = 0, lock_line: int = 0, fix: str = _FIX, file: str = "", items: tuple[str, ...] = ()) -> None:
        """file: the file pyproject_line is in when it is not the pyproject (a uv.toml); items: a
        long list the message names (cut there to a count), whole in the JSON."""
        if pyproject_line:
            where, line = file or self.pyproject.path, pyproject_line
        else:
            where, line = self.lock.path, lock_line
        self.findings.append(RULES["lock-stale"].finding(where, line, f"uv.lock is stale: {message}", fix, items))

    def setting(self, settings: UvSettings, key: str, message: str, *, fix: str = _FIX) -> None:
        """A finding on a resolver setting, at its line in the file uv reads it from."""
        self.add(f"{settings.label(key)} {message}", pyproject_line=settings.line(key), fix=fix, file=settings.path)

    def reqs(self, what: str, expected: Iterable[Req], recorded: Iterable[Req], lock_line: int) -> None:
        missing, unpaired = diff_reqs(expected, recorded, self.requires_python)
        for req in missing:
            line = self.pyproject.line_of_requirement(req.text, req.origin) if req.text else 0
            was = next((r for r in unpaired if r.name == req.name), None)  # show what the lock has instead
            if was is not None:
                unpaired.remove(was)
            detail = f"; the lock records `{was.describe()}`" if was else "; the lock does not record it"
            where = req.origin.replace("extra:", "extra ").replace("group:", "group ") or what
            self.add(f"{where}: pyproject asks for `{req.describe()}`{detail}", pyproject_line=line, lock_line=lock_line)
        for req in unpaired:
            self.add(f"{what}: the lock records `{req.describe()}`, which pyproject no longer asks for", lock_line=lock_line)


def _spec(text: str | None) -> frozenset[tuple[str, str]] | None:
    return None if text is None else specifier_key(text)


def _metadata_entry(entry: dict[str, Any]) -> tuple[Any, ...]:
    """A dependency-metadata entry without its requires-dist (compared apart, by value)."""
    version = entry.get("version")
    return (
        canonicalize_version(version) if version else None,
        _spec(entry.get("requires-python")),
        frozenset(canonicalize_name(e) for e in entry.get("provides-extras", []) or []),
    )


def _metadata_requires(entry: dict[str, Any], where: str) -> list[Req]:
    """requires-dist of a dependency-metadata entry as Reqs: uv compares parsed requirements,
    so `alpha>=2.6.0` in pyproject equals `alpha>=2.6` in the lock (measured with uv 0.13.9)."""
    return [req_from_text(text, where) for text in entry.get("requires-dist", []) or []]


def _same_metadata(wanted: dict[str, Any], recorded: dict[str, Any], settings: UvSettings, lock: Lock) -> bool:
    if _metadata_entry(wanted) != _metadata_entry(recorded):
        return False
    missing, unpaired = diff_reqs(_metadata_requires(wanted, settings.path), _metadata_requires(recorded, lock.path))
    return not missing and not unpaired


def _conflicts(groups: Iterable[Iterable[dict[str, Any]]], default_package: str | None) -> frozenset[frozenset[tuple[str, str, str]]]:
    out = set()
    for group in groups:
        items = set()
        for item in group:
            package = canonicalize_name(item.get("package", default_package or ""))
            kind = "extra" if "extra" in item else "group"
            items.add((package, kind, canonicalize_name(str(item.get(kind, "")))))
        out.add(frozenset(items))
    return frozenset(out)


def _group_set(groups: Any) -> Any:
    """default-groups as comparable value: "all" or a set of normalized names."""
    if isinstance(groups, str):
        return groups
    return frozenset(canonicalize_name(str(g)) for g in groups)


def _markers_list(values: Any) -> list[Any]:
    if isinstance(values, str):
        values = [values]
    return [parse_marker(v) for v in values or []]


def _same_markers(a: list[Any], b: list[Any], requires_python: str = "") -> bool:
    """Same markers in the same order (uv keeps environments in the order written), compared
    inside requires-python: uv records `environments` simplified against it (a
    `python_version == '3.13'` clause that requires-python implies is not written)."""
    return len(a) == len(b) and all(markers_equivalent(x, y, requires_python) for x, y in zip(a, b))


def _compare_exclude_newer(stale: _Stale, settings: UvSettings, lock: Lock) -> None:
    """exclude-newer and exclude-newer-package (of [tool.uv] or uv.toml) against the lock's [options]."""
    options = lock.options
    reason = exclude_newer.change(
        exclude_newer.parse_cutoff(settings.get("exclude-newer")),
        exclude_newer.recorded_cutoff(options.get("exclude-newer"), options.get("exclude-newer-span")),
    )
    if reason:
        stale.setting(settings, "exclude-newer", reason)
    wanted = {canonicalize_name(k): v for k, v in (settings.get("exclude-newer-package") or {}).items()}
    recorded = {canonicalize_name(k): v for k, v in (options.get("exclude-newer-package") or {}).items()}
    locked_names = lock.names()
    for name in sorted(set(wanted) | set(recorded)):
        if name not in recorded and name not in locked_names:
            continue  # uv keeps per-package cutoffs of packages in the lock only (until it relocks)
        reason = exclude_newer.change(exclude_newer.parse_cutoff(wanted.get(name)), exclude_newer.recorded_cutoff(recorded.get(name)))
        if reason:
            stale.setting(settings, "exclude-newer-package", f"for {name} {reason}")


def _registries(settings: UvSettings, root: Pyproject, members: list[Pyproject]) -> set[str] | None:
    """Registry URLs uv may record, or None when they cannot be known statically.

    settings: the root's (uv.toml's when there is one: uv then ignores the root's
    [[tool.uv.index]] here, measured with uv 0.13.9, except the ones a source names);
    members: the workspace members, whose [[tool.uv.index]] entries uv uses too (a member's
    explicit index for its own sources). With no index configured anywhere uv checks no
    registry (measured: a lock from an index the project no longer names stays fresh).
    """
    member_indexes = [i for member in members for i in member.uv.get("index", [])]
    named = {e["index"] for project in (root, *members) for entries in project.sources().values() for e in entries if "index" in e}
    sourced = [i for i in root.uv.get("index", []) if i.get("name") in named] if settings.is_uv_toml else []
    indexes = [*settings.get("index", []), *member_indexes, *sourced]
    written = [i["url"] for i in indexes]
    for key in ("index-url", "extra-index-url", "find-links"):  # workspace settings: the root's only
        value = settings.get(key)
        written += [value] if isinstance(value, str) else value or []
    if not written:
        return None
    if any(not _remote(i["url"]) and not posixpath.isabs(i["url"]) for i in member_indexes):
        return None  # a member's relative path: recorded relative to the workspace root, not predicted
    urls = {_registry_key(url) for url in written}
    if not any(i.get("default") for i in indexes) and "index-url" not in settings:
        urls.add(_PYPI)
    if None in urls:
        return None
    return {url for url in urls if url is not None}


def _remote(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def _registry_key(url: str) -> str | None:
    """An index location as uv records it in the lock (measured with uv 0.13.9): a URL without
    its trailing slash; a local path as written, normalized (`./wheels/` is `wheels`); None for
    a form depsync does not predict (`file://`, `~`, another scheme)."""
    if _remote(url):
        return normalize_url(url)
    if not url or "://" in url or url.startswith("~"):
        return None
    return posixpath.normpath(url)


def _members(inputs: CheckInputs, lock: Lock) -> list[Pyproject]:
    """pyproject.toml of the workspace members the lock records (root excluded)."""
    names = set(inputs.workspace_members or ()) | {canonicalize_name(str(m)) for m in lock.manifest.get("members", []) or ()}
    return [p for _, p in sorted(inputs.local_projects.items()) if p.name in names and p.name != inputs.pyproject.name]


def check(inputs: CheckInputs) -> Iterator[Finding]:
    lock = inputs.lock
    pyproject = inputs.pyproject
    if lock is None or lock.version != 1:
        return
    if not pyproject.name and "workspace" not in pyproject.uv:
        return  # neither a project nor a workspace root: nothing uv would lock
    try:
        # findings are collected inside the bound, so it never outlives a paused generator
        with bounded_check():
            settings = inputs.uv_settings or pyproject.uv_settings
            findings = [*_check(pyproject, settings, lock, _members(inputs, lock)), *_check_local_packages(inputs, lock)]
    except (InvalidSpecifier, InvalidMarker, ValueError) as exc:  # packaging's InvalidRequirement is a ValueError too
        raise DepsyncError(f"cannot compare with the lock: {exc}", pyproject.path) from None
    yield from findings
    yield from _members_outside(inputs)


def _members_outside(inputs: CheckInputs) -> Iterator[Finding]:
    """A member uv reads that depsync does not (a symlink out of the project, `../`): never a
    silent pass, the lock's freshness for it is unknown."""
    from depsync.core.rules.registry import RULES

    for path in inputs.workspace_members_outside:
        yield RULES["workspace-member-outside"].finding(
            inputs.config.pyproject, inputs.pyproject.lines.table("tool.uv.workspace"),
            f"workspace member {path} resolves outside the project (a symlink or `../`): uv reads it, depsync does not, so the lock is not checked against it",
            "move the member into the project (or make the link point inside it), or exclude it in [tool.uv.workspace] exclude",
        )


def _check_local_packages(inputs: CheckInputs, lock: Lock) -> Iterator[Finding]:
    """Path packages and workspace members: uv records their metadata too."""
    root = inputs.pyproject
    stale = _Stale(root, lock)
    members = inputs.workspace_members
    recorded_members = lock.manifest.get("members")
    if recorded_members is None and members is not None and root.name and any(p.name == canonicalize_name(root.name) and p.source.value == "." for p in lock.packages):
        recorded_members = [root.name]  # uv writes [manifest] members only for more than one: none is the root alone
    if members is not None and recorded_members is not None:
        # members in submodules that are not checked out are their own finding
        # (members-not-checked-out), never a stale lock: uv would drop them, relocking is no fix
        recorded = frozenset(canonicalize_name(m) for m in recorded_members) - set(inputs.members_not_checked_out)
        if recorded != members:
            added, dropped = sorted(members - recorded), sorted(recorded - members)
            what = "; ".join(
                part for part in (
                    f"the workspace has member{'s' if len(added) > 1 else ''} {listed(added)} the lock does not record" if added else "",
                    f"the lock records member{'s' if len(dropped) > 1 else ''} {listed(dropped)} the workspace does not have" if dropped else "",
                ) if part
            )
            stale.add(what, pyproject_line=root.lines.table("tool.uv.workspace"), fix=_FIX, items=(*added, *dropped))
    member_names = set(members or ()) | {canonicalize_name(str(m)) for m in recorded_members or ()}
    root_indexes = index_urls(root)
    for path, project in sorted(inputs.local_projects.items()):
        package = next((p for p in lock.packages if p.source.value == path and p.source.kind in ("editable", "directory", "virtual")), None)
        if package is None or not project.name:
            continue
        local = _Stale(project, lock)
        if project.name in member_names:
            # a workspace member: the root's sources and index names apply (uv merges them)
            context = Context(path, root.sources(), root_indexes)
        else:
            context = Context(path)  # a path package: its own sources only
        _compare_metadata(local, project, package, context, member=project.name in member_names)
        yield from local.findings
    yield from stale.findings


def _compare_metadata(stale: _Stale, project: Pyproject, package: Any, context: Context, *, member: bool = True) -> ExpectedInputs:
    """Version, requires-dist, extras and groups of a (root, member or path) package against its lock entry."""
    lines = project.lines
    lock = stale.lock
    version = project.project.get("version")
    if "version" in project.dynamic:
        if package.version is not None:
            # uv 0.13.9 records no version for a dynamic one and re-resolves a lock that has one
            stale.add(
                f"{project.name} has a dynamic version but the lock records {package.version} (uv now locks dynamic versions without one)",
                pyproject_line=lines.key("project", "dynamic"),
            )
    elif version and package.version and canonicalize_version(version) != canonicalize_version(package.version):
        stale.add(f"{project.name} version is {version} but the lock records {package.version}", pyproject_line=lines.key("project", "version"))
    expected = expected_inputs(project, context)
    if {"dependencies", "optional-dependencies"} & project.dynamic:
        return expected  # built at lock time: nothing static to compare
    if resolved.applies(package, lock):  # uv's preview format: no [package.metadata], judged by what was resolved
        for problem in resolved.problems(project, package, lock, context, member=member):
            stale.add(problem.message, pyproject_line=problem.pyproject_line, lock_line=problem.lock_line)
        return expected
    metadata = package.raw.get("metadata", {})
    what = "dependencies" if project is stale.pyproject and package.is_project_root() else f"{project.name} dependencies"
    recorded_dist = lock.reqs(metadata.get("requires-dist", []), "requires-dist")
    flat = expected.flat_requires_dist
    # a package with a dynamic version (no version in the lock) may also record its own extras
    # expanded, as its build backend reports them; uv accepts either form for it
    if not (package.version is None and flat is not None and diff_reqs(flat, recorded_dist, stale.requires_python) == ([], [])):
        stale.reqs(what, expected.requires_dist, recorded_dist, package.line)
    recorded_extras = {canonicalize_name(e) for e in metadata.get("provides-extras", [])}
    if lock.revision >= EXTRAS_REVISION and recorded_extras != set(expected.provides_extras):
        added = sorted(set(expected.provides_extras) - recorded_extras)
        removed = sorted(recorded_extras - set(expected.provides_extras))
        parts = ([f"added {listed(added)}"] if added else []) + ([f"removed {listed(removed)}"] if removed else [])
        stale.add(f"{project.name} extras changed ({'; '.join(parts)})", pyproject_line=lines.table("project.optional-dependencies"))
    if member:
        _compare_groups(stale, project, package, expected)
    return expected


def _check_projectless_root(stale: _Stale, pyproject: Pyproject, lock: Lock) -> None:
    """A workspace root without [project]: uv 0.13 records its dependency groups (legacy
    dev-dependencies as `dev`) under [manifest.dependency-groups], and re-resolves a lock that
    records them the older way, as [manifest] requirements (measured with uv 0.13.9)."""
    manifest_line = lock.line_of_table("manifest")
    if lock.manifest.get("requirements"):
        stale.add("the lock records the root's requirements as [manifest] requirements; uv now records them as dependency groups", lock_line=manifest_line)
    recorded = {canonicalize_name(g): v for g, v in (lock.manifest.get("dependency-groups") or {}).items()}
    wanted = dict(expected_inputs(pyproject, Context()).requires_dev)
    for group in sorted(set(wanted) | set(recorded)):
        if group not in wanted:
            stale.add(f"the lock records dependency group {group!r}, which pyproject no longer defines", lock_line=manifest_line)
        elif group not in recorded:
            if wanted[group] or lock.revision >= EXTRAS_REVISION:
                stale.add(f"dependency group {group!r} is not in the lock", pyproject_line=pyproject.line_of_group(group))
        else:
            stale.reqs(f"group {group}", wanted[group], lock.reqs(recorded[group], f"manifest.dependency-groups.{group}"), manifest_line)


def _compare_groups(stale: _Stale, project: Pyproject, package: Any, expected: ExpectedInputs) -> None:
    """requires-dev of the root or a workspace member against its dependency groups."""
    lock = stale.lock
    recorded_dev = package.raw.get("metadata", {}).get("requires-dev", {})
    wanted_dev = dict(expected.requires_dev)
    if lock.revision < EXTRAS_REVISION:  # revision 0 locks did not write empty groups
        wanted_dev = {g: reqs for g, reqs in wanted_dev.items() if reqs}
        recorded_dev = {g: reqs for g, reqs in recorded_dev.items() if reqs}
    of = "" if package.is_project_root() else f" of {project.name}"
    for group in sorted(set(wanted_dev) | {canonicalize_name(g) for g in recorded_dev}):
        recorded = next((v for k, v in recorded_dev.items() if canonicalize_name(k) == group), None)
        if group not in wanted_dev:
            stale.add(f"the lock records dependency group {group!r}{of}, which pyproject no longer defines", lock_line=package.line)
        elif recorded is None:
            stale.add(f"dependency group {group!r}{of} is not in the lock", pyproject_line=project.line_of_group(group))
        else:
            stale.reqs(f"group {group}", wanted_dev[group], lock.reqs(recorded, f"requires-dev.{group}"), package.line)


def _check(pyproject: Pyproject, settings: UvSettings, lock: Lock, members: list[Pyproject]) -> Iterator[Finding]:
    """The root project (or a workspace root without [project]) and the workspace-wide inputs;
    settings: uv's resolver settings (a uv.toml's, else the root's [tool.uv])."""
    stale = _Stale(pyproject, lock)
    if pyproject.name:
        expected = _check_root_project(stale, pyproject, lock)
        if expected is None:
            yield from stale.findings
            return
    else:
        _check_projectless_root(stale, pyproject, lock)
        expected = expected_inputs(pyproject, Context())
    _check_workspace_inputs(stale, pyproject, settings, lock, members, expected)
    yield from stale.findings


def _check_root_project(stale: _Stale, pyproject: Pyproject, lock: Lock) -> ExpectedInputs | None:
    """requires-python, the root package's kind, default groups and metadata; None when the
    lock has no entry for the project."""
    lines = pyproject.lines

    wanted_python = pyproject.project.get("requires-python")
    if wanted_python and lock.requires_python and not specifiers_equivalent(wanted_python, lock.requires_python):
        stale.add(
            f"requires-python is {wanted_python!r} in pyproject but {lock.requires_python!r} in the lock",
            pyproject_line=lines.key("project", "requires-python"),
        )

    root = lock.root(pyproject.name)
    if root is None:
        stale.add(f"the lock has no entry for the project {pyproject.name!r} itself", pyproject_line=lines.key("project", "name"))
        return None
    packaged = pyproject.uv.get("package", "build-system" in pyproject.data)
    if root.source.kind != ("editable" if packaged else "virtual"):
        wanted = "a package (editable)" if packaged else "virtual (not built)"
        stale.add(
            f"the project is {wanted} now ([build-system] / [tool.uv] package) but the lock records it as {root.source.kind}",
            pyproject_line=lines.key("tool.uv", "package") or lines.table("build-system"),
        )
    if lock.revision >= DEFAULT_GROUPS_REVISION:
        # absent on either side means uv's default, ["dev"]
        wanted_groups = pyproject.uv.get("default-groups", ["dev"])
        recorded_groups = root.raw.get("default-groups", ["dev"])
        if _group_set(wanted_groups) != _group_set(recorded_groups):
            stale.add(f"default-groups are {wanted_groups!r} but the lock records {recorded_groups!r}", pyproject_line=lines.key("tool.uv", "default-groups"))

    return _compare_metadata(stale, pyproject, root, Context())


def _check_workspace_inputs(stale: _Stale, pyproject: Pyproject, settings: UvSettings, lock: Lock, members: list[Pyproject], expected: ExpectedInputs) -> None:
    """[manifest] lists, dependency-metadata, conflicts, environments and [options]: the
    workspace root's [tool.uv] (its resolver settings: uv.toml's when there is one), with or
    without a [project] table."""
    lines = pyproject.lines
    manifest = lock.manifest
    manifest_line = lock.line_of_table("manifest")
    for what, key, wanted in (
        ("override-dependencies", "overrides", expected.overrides),
        ("constraint-dependencies", "constraints", expected.constraints),
        ("build-constraint-dependencies", "build-constraints", expected.build_constraints),
    ):
        stale.reqs(what, wanted, lock.reqs(manifest.get(key, []), f"manifest.{key}"), manifest_line)

    _check_settings_file(stale, settings)
    wanted_meta = {canonicalize_name(e["name"]): e for e in settings.dependency_metadata()}
    recorded_meta = {canonicalize_name(str(e.get("name", ""))): e for e in manifest.get("dependency-metadata", []) if isinstance(e, dict)}
    declared_in = settings.path if settings.is_uv_toml else "pyproject"
    for name in sorted(set(wanted_meta) | set(recorded_meta)):
        if name not in recorded_meta:
            stale.add(f"dependency-metadata for {name} is not in the lock", pyproject_line=settings.line_of_metadata(name), file=settings.path)
        elif name not in wanted_meta:
            stale.add(f"the lock records dependency-metadata for {name}, which {declared_in} no longer declares", lock_line=manifest_line)
        elif not _same_metadata(wanted_meta[name], recorded_meta[name], settings, lock):
            stale.add(
                f"dependency-metadata for {name} changed ({declared_in} version {wanted_meta[name].get('version')!r}, lock {recorded_meta[name].get('version')!r})",
                pyproject_line=settings.line_of_metadata(name),
                file=settings.path,
            )

    # uv gathers [tool.uv] conflicts from every workspace member (package defaults to the member)
    wanted_conflicts = _conflicts(pyproject.uv.get("conflicts", []), pyproject.name)
    for member in members:
        wanted_conflicts |= _conflicts(member.uv.get("conflicts", []), member.name)
    if wanted_conflicts != _conflicts(lock.data.get("conflicts", []), None):
        stale.add("[tool.uv] conflicts differ from the lock's", pyproject_line=lines.key("tool.uv", "conflicts") or lines.table("tool.uv"))

    for key, lock_key in (("environments", "supported-markers"), ("required-environments", "required-markers")):
        if not _same_markers(_markers_list(pyproject.uv.get(key)), _markers_list(lock.data.get(lock_key)), stale.requires_python):
            stale.add(
                f"[tool.uv] {key} differ from the lock's {lock_key}",
                pyproject_line=lines.key("tool.uv", key) or lines.table("tool.uv"),
            )

    options = lock.options
    for key, lock_key, default in (
        ("resolution", "resolution-mode", "highest"),
        ("prerelease", "prerelease-mode", "if-necessary-or-explicit"),
        ("fork-strategy", "fork-strategy", "requires-python"),
    ):
        if settings.get(key, default) != options.get(lock_key, default):
            stale.setting(settings, key, f"is {settings.get(key, default)!r} but the lock was made with {options.get(lock_key, default)!r}")
    _compare_exclude_newer(stale, settings, lock)

    registries = _registries(settings, pyproject, members)
    recorded = {p.source.value: _registry_key(p.source.value) for p in lock.packages if p.source.kind == "registry"}
    if registries is not None and None not in recorded.values():
        unknown = sorted(value for value, key in recorded.items() if key not in registries)
        configured_in = settings.path if settings.is_uv_toml else "pyproject"
        for url in unknown:
            stale.add(f"packages come from index {url}, which {configured_in} does not configure", lock_line=lock.line_of_key("version"))


def _check_settings_file(stale: _Stale, settings: UvSettings) -> None:
    """What depsync cannot compare: a uv.toml field uv refuses (uv then cannot lock at all), and
    settings it does not model (only uv can then say the lock is fresh)."""
    if settings.is_uv_toml:
        for key in PROJECT_ONLY:
            if key in settings:
                stale.setting(settings, key, "is refused by uv in a uv.toml (it belongs in pyproject.toml [tool.uv]): uv cannot lock", fix=f"move `{key}` to [tool.uv] in pyproject.toml, then run `depsync lock`")
    for key in UNMODELLED:
        if settings.get(key):
            stale.setting(settings, key, "changes what uv accepts as a lock, and depsync does not model it: only uv can call this lock fresh", fix="run `depsync check --deep` (or `uv lock --check`); relock with `depsync lock` if uv says stale")


REPORT_URL = "https://github.com/depsync/depsync/issues"  # where a disagreement with uv is reported
_SHOWN = 400  # characters of the static finding quoted in static-model-disagrees


def with_uv_word(findings: list[Finding], verdict: str, version: str, reason: str) -> list[Finding]:
    """The findings once uv was asked about a static `lock-stale` verdict (uv's word wins).

    verdict "fresh": the lock-stale errors give way to one `static-model-disagrees` warning
    with both answers; "stale": each lock-stale says uv agrees; "none" (no usable uv, or uv
    gave no verdict): each says it is depsync's static verdict, and why uv did not answer.
    """
    stale = [f for f in findings if f.rule == "lock-stale"]
    if not stale:
        return findings
    rest = [f for f in findings if f.rule != "lock-stale"]
    if verdict == "fresh":
        first = stale[0]
        more = f" (and {len(stale) - 1} more)" if len(stale) > 1 else ""
        said = first.message.removeprefix("uv.lock is stale: ")
        said = said if len(said) <= _SHOWN else said[: _SHOWN - 3] + "..."
        message = (
            f"depsync's static model says uv.lock is stale ({said}{more}), "
            f"but uv {version} `uv lock --check --offline` accepts it: uv's word wins, the lock is fine"
        )
        fix = f"nothing to change in the lock; please report the disagreement ({REPORT_URL}) with pyproject.toml and uv.lock"
        return [*rest, RULES["static-model-disagrees"].finding(first.file, first.line, message, fix)]
    if verdict == "stale":
        note = f" (uv {version} agrees: {reason})" if reason else f" (uv {version} agrees)"
    else:
        note = f" (depsync's static verdict: {reason})"
    return [*rest, *(f.with_message(f.message + note) for f in stale)]
