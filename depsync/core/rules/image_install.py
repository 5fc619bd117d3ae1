"""What one `uv sync` of a Dockerfile installs from uv.lock into a given image (pure).

The lock's dependency graph is walked from the project the way uv walks it for a sync: the
project's dependencies, the extras and groups the command selects (default groups included
unless it says otherwise), then each package's dependencies and the extras they ask for,
each edge kept when its marker holds in the image's environment. uv writes conflicting extras
and groups into markers as `extra == 'extra-13-megatron-core-dev'`: those hold when the command
activates that extra, so markers are evaluated with a *set* of active extras (packaging's own
evaluation takes one). `--no-install-package` names are left out of what is installed but not
of the walk: uv still installs their dependencies.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping

from packaging.markers import InvalidMarker, Marker, UndefinedComparison

from depsync.core.model.lock import Lock, LockPackage
from depsync.core.model.uv_commands import UvCommand
from depsync.core.names import canonicalize_name
from depsync.records import record


@record
class SyncSelection:
    """What a `uv sync` selects of the project: extras, groups, whether the project's own
    dependencies count (not with --only-group), the packages it keeps out; and what it names
    through variables depsync could not resolve (then the selection is a lower bound)."""

    extras: frozenset[str]
    groups: frozenset[str]
    project_deps: bool
    kept_out: tuple[tuple[str, int], ...]  # (canonical name, line) of each --no-install-package
    all_extras: bool = False
    unresolved: bool = False


def selection_of(command: UvCommand, group_names: Iterable[str], default_groups: Iterable[str] | str) -> SyncSelection:
    """The extras, groups and kept-out packages of one `uv sync`, as uv reads its flags."""
    def values(*flags: str, commas: bool = False) -> list[str]:
        out = []
        for arg in command.flag_values(*flags):
            if not arg.unresolved:
                out += arg.value.split(",") if commas else [arg.value]
        return [canonicalize_name(v) for v in out if v]

    unresolved = any(arg.unresolved for arg in command.flag_values("--extra", "--group", "--only-group", "--no-install-package"))
    known = {canonicalize_name(g) for g in group_names}
    only = values("--only-group")
    if command.has_flag("--only-dev"):
        only.append("dev")
    if only or command.has_flag("--all-groups"):
        groups = set(only) if only else set(known)
    else:
        defaults = known if default_groups == "all" else {canonicalize_name(g) for g in default_groups}
        if command.has_flag("--no-default-groups") or command.has_flag("--no-dev"):
            defaults = set()
        groups = (defaults & known) | set(values("--group"))
    groups -= set(values("--no-group"))
    if command.has_flag("--no-dev"):
        groups.discard("dev")
    kept = tuple((canonicalize_name(a.value), a.line) for a in command.flag_values("--no-install-package") if not a.unresolved)
    return SyncSelection(
        frozenset(values("--extra", commas=True)), frozenset(groups), not only, kept, command.has_flag("--all-extras"), unresolved
    )


def _encoded(project: str, kind: str, name: str) -> str:
    """uv's marker name for a project's extra or group: `extra-13-megatron-core-dev`."""
    return f"{kind}-{len(project)}-{project}-{name}"


def _atom_text(atom: tuple) -> str:  # type: ignore[type-arg]
    return " ".join(part.serialize() for part in atom)


@functools.lru_cache(maxsize=4096)
def _atom(text: str, env_key: tuple[tuple[str, str], ...]) -> bool:
    try:
        return Marker(text).evaluate({**dict(env_key), "extra": ""})
    except (InvalidMarker, UndefinedComparison, ValueError, TypeError):
        return True  # a term depsync cannot evaluate in this environment: assume it holds (reports more, never less)


def _tree(markers: list, env_key: tuple[tuple[str, str], ...], active: frozenset[str]) -> bool:  # type: ignore[type-arg]
    """packaging's marker tree (a flat list of terms, "and", "or" and nested lists; `and` binds
    tighter), evaluated with `extra` as a set."""
    groups: list[list[bool]] = [[]]
    for item in markers:
        if isinstance(item, list):
            groups[-1].append(_tree(item, env_key, active))
        elif isinstance(item, tuple):
            left, op, right = item
            variable, literal = (left, right) if type(left).__name__ == "Variable" else (right, left)
            if variable.value == "extra" and op.value in ("==", "!="):
                held = canonicalize_name(literal.value) in active
                groups[-1].append(held if op.value == "==" else not held)
            elif variable.value == "extra":
                groups[-1].append(True)
            else:
                groups[-1].append(_atom(_atom_text(item), env_key))
        elif item == "or":
            groups.append([])
    return any(all(group) for group in groups)


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> Marker | None:
    try:
        return Marker(text)
    except InvalidMarker:
        return None


def marker_holds(text: str | None, env: Mapping[str, str], active: frozenset[str] = frozenset()) -> bool:
    """Does the marker hold in the environment, with these (uv-encoded) extras active? An empty
    environment (no python was read) or a marker depsync cannot parse: it holds."""
    if not text or not env:
        return True
    marker = _parsed(text)
    if marker is None:
        return True
    return _tree(marker._markers, tuple(sorted(env.items())), active)  # the tree packaging itself evaluates


Key = tuple[str, str | None, str]  # name, version, source: one lock package


def _key(package: LockPackage) -> Key:
    return package.name, package.version, package.source.value


class _Index:
    def __init__(self, lock: Lock) -> None:
        self.by_name: dict[str, list[LockPackage]] = {}
        for package in lock.packages:
            self.by_name.setdefault(package.name, []).append(package)

    def target(self, edge: Mapping[str, object]) -> LockPackage | None:
        """The package a dependency entry names: by name, then version and source when several."""
        candidates = self.by_name.get(canonicalize_name(str(edge.get("name", ""))), [])
        if len(candidates) > 1 and isinstance(edge.get("version"), str):
            candidates = [p for p in candidates if p.version == edge["version"]] or candidates
        if len(candidates) > 1 and isinstance(edge.get("source"), dict):
            wanted = set(str(v) for v in edge["source"].values())  # type: ignore[union-attr]
            candidates = [p for p in candidates if p.source.value in wanted] or candidates
        return candidates[0] if candidates else None


def installed(lock: Lock, project: str, selection: SyncSelection, env: Mapping[str, str]) -> dict[Key, LockPackage]:
    """The lock packages this sync reaches in the image, the project itself and other local
    packages included, kept-out ones too (`not_kept` removes them: uv installs the rest)."""
    root = lock.root(project)
    if root is None:
        return {}
    index = _Index(lock)
    name = root.name
    extras = set(selection.extras)
    if selection.all_extras:
        extras |= set(root.raw.get("optional-dependencies", {}))
    active = frozenset({_encoded(name, "extra", e) for e in extras} | {_encoded(name, "group", g) for g in selection.groups})
    start: list[Mapping[str, object]] = []
    if selection.project_deps:
        start += root.raw.get("dependencies", [])
        for extra, edges in root.raw.get("optional-dependencies", {}).items():
            if canonicalize_name(extra) in extras:
                start += edges
    for group, edges in root.raw.get("dev-dependencies", {}).items():
        if canonicalize_name(group) in selection.groups:
            start += edges
    found: dict[Key, LockPackage] = {_key(root): root} if selection.project_deps else {}
    seen: set[tuple[Key, str]] = set()
    queue = list(start)
    while queue:  # each (package, extra) is expanded once: linear in the lock's edges
        edge = queue.pop()
        if not marker_holds(edge.get("marker") if isinstance(edge.get("marker"), str) else None, env, active):  # type: ignore[arg-type]
            continue
        package = index.target(edge)
        if package is None:
            continue
        key = _key(package)
        wanted_extras = [""] + [str(e) for e in edge.get("extra", []) if isinstance(e, str)]  # type: ignore[union-attr]
        found[key] = package
        for extra in wanted_extras:
            if (key, extra) in seen:
                continue
            seen.add((key, extra))
            if extra == "":
                queue += package.raw.get("dependencies", [])
            else:
                queue += package.raw.get("optional-dependencies", {}).get(extra, [])
    return found


def not_kept(found: Mapping[Key, LockPackage], selection: SyncSelection) -> dict[Key, LockPackage]:
    kept = {name for name, _ in selection.kept_out}
    return {key: package for key, package in found.items() if package.name not in kept}


def cuda_major_of_name(name: str) -> str:
    """`nvidia-nccl-cu13` -> "13", `cupy-cuda12x` -> "12"; "" when the name names no CUDA build."""
    last = name.rsplit("-", 1)[-1]
    for prefix in ("cu", "cuda"):
        digits = last[len(prefix):].rstrip("x")
        if last.startswith(prefix) and digits.isdigit() and 1 <= len(digits) <= 3 and (prefix == "cuda" or len(digits) == 2):
            return digits[:2] if len(digits) == 3 else digits
    return ""


def cuda_major_of_local(version: str | None) -> str:
    """`2.8.0+cu128` -> "12", `+cu130` -> "13", `+cu118` -> "11"; "" without a CUDA local segment."""
    if not version or "+" not in version:
        return ""
    for part in version.split("+", 1)[1].lower().replace("_", ".").split("."):
        if part.startswith("cu") and part[2:].isdigit() and len(part) in (4, 5):
            return part[2:-1]
    return ""


# Distributions whose version follows the CUDA release they are (`nvidia-cuda-runtime 13.0.96`);
# most CUDA library wheels carry their own version numbers (cuFFT 12.0 is CUDA 13's).
CUDA_VERSIONED = frozenset(
    {"nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-cuda-cupti", "nvidia-cuda-nvcc", "nvidia-cublas", "nvidia-nvjitlink",
     "nvidia-nvtx", "cuda-toolkit", "cuda-bindings", "cuda-python"}
)  # fmt: skip


def cuda_major_of(name: str, version: str | None) -> str:
    """The CUDA major a distribution is built for, from its name, its local version, or (for
    the few that follow the CUDA release) its version; "" when it does not say."""
    major = cuda_major_of_name(name) or cuda_major_of_local(version)
    if not major and name in CUDA_VERSIONED and version:
        head = version.split(".", 1)[0]
        major = head if head.isdigit() and 9 <= int(head) <= 30 else ""
    return major
