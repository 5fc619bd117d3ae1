"""The files uv reads besides the root pyproject, decided like the triple (pure).

- `uv.toml` in the project directory (uv reads it *instead of* `[tool.uv]`: its indexes,
  find-links and exclude-newer decide where every package comes from) and `.python-version` /
  `.python-versions` (uv starts the interpreter they name) are dev's: main's change to them
  is not taken, dev's version is written back, and the change is flagged with what it was.
  A sync must not let main's tree choose dev's package sources or interpreter.
- Workspace members' pyproject.toml files are merged like the root's rest of the file: per key
  against the merge-base (depsync.core.sync.document), requirement lists per package. There
  is no import evidence for a member, so main's change to a member's dependency tables is
  taken by the three-way rule and flagged, and so is a member main adds.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from depsync.core.sync.document import (
    KeyDecision,
    Path,
    is_requirement_list,
    merge_document,
)
from depsync.core.sync.document_edit import apply_document
from depsync.core.sync.sources import case_of_values
from depsync.records import field, record

UV_CONFIG_FILES = ("uv.toml", ".python-version", ".python-versions")
MEMBER_SKIP: frozenset[Path] = frozenset({("tool", "depsync")})


@record
class FileDecision:
    path: str
    kind: str  # "uv-config" or "member"
    case: str  # the file's three-way case (sources.case_of_values on its bytes)
    taken_from: str  # "dev", "main", "merged" or "none" (absent)
    result: bytes | None
    reason: str
    needs_review: bool = False
    keys: tuple[KeyDecision, ...] = field(default_factory=tuple)  # a TOML file's keys main changed, three-way

    @property
    def main_changed(self) -> bool:
        return self.case.startswith("main-") or self.case in ("conflict", "merged")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """uv's member glob as a regex over directory paths: `*` within one part, `**` any depth."""
    parts = [p for p in pattern.strip("/").split("/") if p not in ("", ".")]
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".+" if last else "(?:[^/]+/)*"
            continue
        regex += "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part) + ("" if last else "/")
    return re.compile(regex + r"\Z")


def member_pyprojects(paths: Iterable[str], members: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """The pyproject.toml paths of workspace members among a tree's file paths (root left out)."""
    wanted = [_glob_regex(p) for p in members]
    unwanted = [_glob_regex(p) for p in exclude]
    out = []
    for path in paths:
        if not path.endswith("/pyproject.toml"):
            continue
        directory = path.removesuffix("/pyproject.toml")
        if any(r.match(directory) for r in wanted) and not any(r.match(directory) for r in unwanted):
            out.append(path)
    return sorted(out)


def workspace_globs(*pyprojects: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(members, exclude) patterns of any of the parsed root pyprojects (dev's, main's, merged)."""
    members: list[str] = []
    exclude: list[str] = []
    for data in pyprojects:
        workspace = data.get("tool", {}).get("uv", {}).get("workspace", {}) if isinstance(data.get("tool"), Mapping) else {}
        if isinstance(workspace, Mapping):
            members += [m for m in workspace.get("members", []) if isinstance(m, str) and m not in members]
            exclude += [m for m in workspace.get("exclude", []) if isinstance(m, str) and m not in exclude]
    return members, exclude


def _parsed(data: bytes | None) -> dict[str, Any] | None:
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def decide_uv_config(path: str, base: bytes | None, dev: bytes | None, main: bytes | None) -> FileDecision | None:
    """dev's version kept; main's change flagged with what it changed. None: nothing to say."""
    case = case_of_values(base, dev, main)
    if case in ("unchanged", "same-change") or case.startswith("dev-"):
        return None
    keys: tuple[KeyDecision, ...] = ()
    if path.endswith(".toml"):
        parsed = [_parsed(x) for x in (base, dev, main)]
        if all(p is not None for p in parsed):
            keys = tuple(d for d in merge_document(*parsed, skip=frozenset()) if d.main_changed)  # type: ignore[arg-type]
    verb = {"main-added": "added", "main-removed": "removed"}.get(case, "changed")
    reads = "instead of [tool.uv] (indexes, find-links, exclude-newer: where packages come from)" if path.endswith("uv.toml") else "to choose the interpreter it starts"
    keep = "dev's kept" if dev is not None else "not taken (dev has none)"
    reason = f"main {verb} {path}, which uv reads {reads}: {keep}; it is dev's like the triple: land main's change on dev first if dev wants it"
    return FileDecision(path, "uv-config", case, "dev" if dev is not None else "none", dev, reason, True, keys)


def _dependency_change(decisions: Sequence[KeyDecision]) -> bool:
    return any(d.main_changed and (is_requirement_list(d.path) or d.path[:2] == ("tool", "uv") and d.path[2:3] == ("sources",)) for d in decisions)


def decide_member(path: str, base: bytes | None, dev: bytes | None, main: bytes | None, conflict_side: str = "dev") -> FileDecision | None:
    """A workspace member's pyproject, three-way per key. None: dev's as it is, nothing to say."""
    case = case_of_values(base, dev, main)
    if case in ("unchanged", "same-change") or case.startswith("dev-"):
        return None
    if case == "main-added":
        return FileDecision(path, "member", case, "main", main, f"main added the workspace member {path}: taken (the members glob names it); its dependencies are locked with dev's, review them", True)
    if case == "main-removed":
        return FileDecision(path, "member", case, "none", None, f"main removed the workspace member {path}, dev did not change it: removed (three-way)")
    if dev is None or main is None:  # dev removed it and main changed it: dev's side of a conflict
        return FileDecision(path, "member", "conflict", "dev" if dev is not None else "none", dev, f"both changed {path} (one side removed it): dev's kept", True)
    parsed = [_parsed(x) for x in (base, dev, main)]
    if any(p is None for p in parsed):
        return FileDecision(path, "member", "conflict", "dev", dev, f"{path} does not parse on every side: dev's kept, merge it by hand", True)
    decisions = merge_document(*parsed, conflict_side=conflict_side, skip=MEMBER_SKIP)  # type: ignore[arg-type]
    text = apply_document(dev.decode("utf-8"), main.decode("utf-8"), decisions)
    conflicts = [d for d in decisions if d.needs_review]
    review = bool(conflicts) or _dependency_change(decisions)
    why = "three-way per key"
    if conflicts:
        why += f"; {len(conflicts)} key(s) changed on both sides: {'main' if conflict_side == 'main' else 'dev'}'s kept for those"
    if _dependency_change(decisions):
        why += "; main changed its dependencies, taken without import evidence (none is gathered for members): review"
    taken = "merged" if text.encode() != dev else "dev"
    return FileDecision(path, "member", "merged" if not conflicts else "conflict", taken, text.encode(), f"workspace member {path}: {why}", review, tuple(d for d in decisions if d.main_changed or d.needs_review))
