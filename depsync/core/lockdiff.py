"""What changed between two locks, package by package (pure).

Forked resolutions put several entries with one name in a lock (Megatron's dev lock
has two `nvidia-cudnn-frontend 1.25.0`, one from the index and one from git), so
entries are compared as (version, source) sets per name, and what changed is paired
by where it comes from: main's registry 1.26.0 and dev's registry 1.25.0 are one
downgrade, dev's git 1.25.0 is an addition next to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from packaging.version import InvalidVersion, Version

from depsync.core.model.lock import Lock, LockPackage
from depsync.core.names import canonicalize_name
from depsync.records import record


@record
class PackageChange:
    name: str
    kind: str  # added, removed, upgraded, downgraded, source-changed
    old: str  # "1.2.0 (registry)", "2.14.0+f031cf87 (git f031cf87)"; "" when added
    new: str
    direct: bool  # asked for by the project itself, not only by other packages
    # the same, as separate fields (diff's JSON and the renderers use these)
    old_version: str | None = None
    old_source: str = ""  # "registry", "git", "path", "url", "editable", ... ("" when added)
    old_url: str = ""  # the index URL, the git repository, the path or the URL
    old_commit: str = ""  # git: the full commit the lock resolved
    new_version: str | None = None
    new_source: str = ""
    new_url: str = ""
    new_commit: str = ""
    forked: bool = False  # several entries with this name in either lock
    entries: int = 1  # lock entries this row stands for: forked wheel URLs that moved alike are one row


def _commit(package: LockPackage) -> str:
    if package.source.kind != "git":
        return ""
    return str(package.raw.get("source", {}).get("git", "")).partition("#")[2]


def _origin(package: LockPackage) -> tuple[str, str, str]:
    """Where an entry comes from, without the commit: what pairs an old entry with a new one."""
    source = package.source
    return (source.kind, source.value, source.subdirectory)


def label(version: str | None, source: str, url: str, commit: str, *, registry: bool = True) -> str:
    """`1.2.0 (registry)`, `2.14.0+f031cf87 (git f031cf87)`; registry=False: a plain `1.2.0`."""
    if not source:
        return ""
    if source == "git":
        suffix = f"git {commit[:8]}" if commit else "git"
    elif source == "registry":
        suffix = "registry" if registry else ""
    else:
        suffix = f"{source} {url}".strip()
    return f"{version or '?'}" + (f" ({suffix})" if suffix else "")


_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-\d[^-]*)?-(?P<tags>[^-]+-[^-]+-[^-]+)\.whl$")
_SDIST = (".tar.gz", ".zip", ".tar.bz2", ".tgz")


def _url_shape(package: LockPackage) -> tuple[str, str] | None:
    """What a direct-URL entry is apart from its version and where it is hosted: (distribution,
    wheel tags or "sdist"). Forked URL entries (a wheel per Python or platform) pair by it, so a bump of
    every wheel URL is one upgrade per wheel, not a removal and an addition of each."""
    if package.source.kind != "url":
        return None
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(package.source.value)
    filename = unquote(parts.path.rsplit("/", 1)[-1])
    wheel = _WHEEL.match(filename)
    if wheel:
        return (canonicalize_name(wheel.group("name")), wheel.group("tags"))
    if filename.endswith(_SDIST):
        return (package.name, "sdist")
    return None


def _url_fork(package: LockPackage) -> tuple[tuple[str, str], tuple[str, ...]] | None:
    """_url_shape and the fork the entry is for (its resolution-markers): `alpha 1.0` for Python
    < 3.11 pairs with the new `alpha` for Python < 3.11, whatever order the lock lists them in."""
    shape = _url_shape(package)
    if shape is None:
        return None
    markers = package.raw.get("resolution-markers", [])
    return shape, tuple(str(m) for m in markers) if isinstance(markers, list) else ()


def _identity(package: LockPackage) -> tuple[str | None, str, str, str, str]:
    return (package.version, *_origin(package), _commit(package))


def _compare(old: str | None, new: str | None) -> str:
    try:
        return "upgraded" if Version(new or "0") > Version(old or "0") else "downgraded"
    except InvalidVersion:
        return "upgraded"


def direct_names(lock: Lock) -> set[str]:
    """Names the root packages ask for directly (requires-dist and requires-dev)."""
    names: set[str] = set()
    for package in lock.packages:
        if not package.is_project_root():
            continue
        metadata = package.raw.get("metadata", {})
        tables: list = list(metadata.get("requires-dist", []))
        for group in metadata.get("requires-dev", {}).values():
            tables.extend(group)
        names.update(canonicalize_name(str(t.get("name", ""))) for t in tables if isinstance(t, dict))
    return names


def _change(name: str, a: LockPackage | None, b: LockPackage | None, direct: bool, forked: bool) -> PackageChange:
    if a is None:
        kind = "added"
    elif b is None:
        kind = "removed"
    elif a.version == b.version:
        kind = "source-changed"
    else:
        kind = _compare(a.version, b.version)

    def parts(p: LockPackage | None) -> tuple[str | None, str, str, str]:
        return (p.version, p.source.kind, p.source.value, _commit(p)) if p is not None else (None, "", "", "")

    old, new = parts(a), parts(b)
    return PackageChange(name, kind, label(*old), label(*new), direct, *old, *new, forked=forked)


def _pair(before: list[LockPackage], after: list[LockPackage]) -> list[tuple[LockPackage | None, LockPackage | None]]:
    """Entries that changed, paired: same origin first (registry with registry, the same git
    repository, the same URL), then direct URLs of the same shape (the cp311 wheel with the
    cp311 wheel, sdist with sdist: the URL names the version), of the same fork first, then one left on each side with
    each other; the rest added or removed."""
    after_ids = {_identity(p) for p in after}
    before_ids = {_identity(p) for p in before}
    gone = [p for p in before if _identity(p) not in after_ids]
    came = [p for p in after if _identity(p) not in before_ids]
    pairs: list[tuple[LockPackage | None, LockPackage | None]] = []
    keys: tuple[Callable[[LockPackage], object], ...] = (_origin, _url_fork, _url_shape)
    for key in keys:
        for old in list(gone):
            wanted = key(old)
            match = next((new for new in came if wanted is not None and key(new) == wanted), None)
            if match is not None:
                pairs.append((old, match))
                gone.remove(old)
                came.remove(match)
    if len(gone) == 1 and len(came) == 1:
        pairs.append((gone.pop(), came.pop()))
    pairs += [(old, None) for old in gone] + [(None, new) for new in came]
    return pairs


def diff_locks(old: Lock, new: Lock, direct: Iterable[str] | None = None) -> list[PackageChange]:
    direct_set = set(direct) if direct is not None else direct_names(new) | direct_names(old)
    by_name_old: dict[str, list[LockPackage]] = {}
    by_name_new: dict[str, list[LockPackage]] = {}
    for package in old.packages:
        by_name_old.setdefault(package.name, []).append(package)
    for package in new.packages:
        by_name_new.setdefault(package.name, []).append(package)
    changes = []
    for name in sorted(set(by_name_old) | set(by_name_new)):
        before, after = by_name_old.get(name, []), by_name_new.get(name, [])
        if {_identity(p) for p in before} == {_identity(p) for p in after}:
            continue
        forked = len(before) > 1 or len(after) > 1
        changes += _one_row_per_move([_change(name, a, b, name in direct_set, forked) for a, b in _pair(before, after)])
    return changes


def _one_row_per_move(changes: list[PackageChange]) -> list[PackageChange]:
    """Direct-URL changes of one package that moved alike (every wheel of 2.7.4 to the wheel of
    2.8.3 with the same tags) as one row: the first wheel's URLs, and how many entries it covers."""
    from depsync.records import replace

    rows: list[PackageChange] = []
    alike: dict[tuple[str, str | None, str | None], int] = {}
    for change in changes:
        if change.old_source == change.new_source == "url":
            key = (change.kind, change.old_version, change.new_version)
            if key in alike:
                index = alike[key]
                rows[index] = replace(rows[index], entries=rows[index].entries + 1)
                continue
            alike[key] = len(rows)
        rows.append(change)
    return rows


def summarize(changes: Iterable[PackageChange]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    return counts


_REVISION = re.compile(r"^revision\s*=\s*(\d+)\s*$", re.MULTILINE)


def _revision(text: str) -> int | None:
    header = text[: text.find("[[package]]")] if "[[package]]" in text else text
    found = _REVISION.search(header)
    return int(found.group(1)) if found else None


def lock_rewrites(old: str, new: str) -> tuple[int, tuple[int | None, int | None] | None]:
    """What a relock rewrote beyond the packages: marker lines of the old lock that the new one
    does not have as they were (uv of another version spells and simplifies markers differently),
    and (old, new) lock revision when it changed (an older uv writes an older revision)."""
    def markers(text: str) -> Counter[str]:
        return Counter(line.strip() for line in text.splitlines() if "marker" in line)

    rewritten = sum((markers(old) - markers(new)).values())
    revisions = (_revision(old), _revision(new))
    return rewritten, revisions if revisions[0] != revisions[1] else None
