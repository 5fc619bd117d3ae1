"""Replay reconcile on real repositories' histories, judged by checks that need no judgment.

For each repository (a bare git mirror) and each pair of commits O (older) and N (newer) on its
default branch, both touching pyproject.toml and uv.lock, 5-60 first-parent commits apart:

- a temp repository: `base` = O's files; `dev` = base plus one synthetic commit that edits
  pyproject (a dev-only requirement in a dependency group; one setting outside the dependency
  surface: a `[tool.ruff]` value, a script or a pytest option; in odd replays also an entry
  main changes between O and N, edited differently: a conflict) and, in a workspace, the same two
  edits in the member pyproject main changes most; `main` = base plus N's files.
  Files taken: every pyproject.toml, the project's uv.lock, uv.toml, .python-version, and the
  Python files (capped: so import evidence has something to read);
- on a branch from dev: `git merge --no-commit --no-ff main`, nothing resolved, then
  `depsync reconcile --no-lock --no-fetch --dev dev --main main --plan-json --summary`.

Judged per unit: a requirement (table, package), a source, an index, a conflict set, a metadata
entry, or any other leaf key path of pyproject (arrays whole):
  (a) silent revert: main changed the unit since O, the result does not have main's value, and
      the plan JSON (`dependencies`, `keys`, `sources`) does not name it as not taken or flagged;
      also counted for workspace member pyprojects (`member reverts`): the plan names no member
      file, so any member unit main changed that is not main's in the result;
  (b) lost dev change: dev's synthetic commit changed the unit and the result does not have it,
      unflagged;
  (c) inconsistency: the result does not parse; a source's index is not declared in
      [[tool.uv.index]]; a `workspace = true` source names no member; a workspace member glob
      matches no directory with a pyproject.toml; `conflicts`/`default-groups`/`include-group`/a
      self-extra name an extra or group that does not exist; a unit whose value neither dev nor
      main has (foreign);
  (d) exit code 2 (or worse).
Printed per replay and totals, with the flag rate (flagged / listed entries of the plan) and the
wall time of each reconcile.

    python bench/replay_real.py [--pairs bench/replay_real.toml] [--mirrors /work/.mirror] [--pair SHA]
        [--control dev|main]
        [--repo OWNER/NAME ...] [--pick 5] [--write-pairs] [--keep] [--json out.json] [-v]

--control dev judges dev's own file against a plan naming nothing (every main change must show as a
silent revert: the judge's own check), --control main main's file (dev's changes show as lost).
bench/results/replay-real.txt is a run's output.

The pair list (bench/replay_real.toml) names each repository, optionally its branch and project
directory, and the pairs; a repository without pairs gets `--pick` pairs chosen from its history
(`--write-pairs` writes them back). Mirrors are looked up as MIRRORS/OWNER+NAME/repo.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomlkit
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "bench" / "replay_real.toml"
DEPSYNC = REPO / ".venv" / "bin" / "depsync"
PROBE = "replay-probe-dev"  # the dev-only requirement the synthetic commit adds
MAX_PY_FILES = 3000
MAX_PY_BYTES = 256_000
SKIP_DIRS = ("tests/", "test/", "docs/", "examples/", "cookbook/", "notebooks/", "benchmarks/")
REQ_LISTS = ("dev-dependencies", "override-dependencies", "constraint-dependencies")
SURFACE_KEYS = (
    ("project", "dependencies"), ("project", "optional-dependencies"), ("dependency-groups",),
    ("tool", "uv", "sources"), ("tool", "uv", "index"), ("tool", "uv", "conflicts"),
    ("tool", "uv", "dependency-metadata"), *(("tool", "uv", k) for k in REQ_LISTS), ("tool", "depsync"),
)


def git(git_dir: Path | None, *args: str, cwd: Path | None = None, check: bool = True, data: bytes | None = None) -> str:
    cmd = ["git", *(["--git-dir", str(git_dir)] if git_dir else []), *args]
    done = subprocess.run(cmd, cwd=cwd, input=data, capture_output=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode(errors="replace")


# -- units: what the judge compares ------------------------------------------------------------

def _req(text: Any) -> tuple[str, Any]:
    try:
        r = Requirement(str(text))
    except InvalidRequirement:
        return "?" + " ".join(str(text).split()), str(text)
    return canonicalize_name(r.name), (tuple(sorted(canonicalize_name(e) for e in r.extras)), tuple(sorted(str(s) for s in r.specifier)), str(r.marker or ""), r.url or "")


# The judge keeps its own small helpers (plain, dotted, units) rather than importing
# depsync.core.sync.document's: a judge that shares the code it judges cannot catch its bugs.
def plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), plain(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(plain(v) for v in value)
    return value


def dotted(path: Sequence[str]) -> str:
    return ".".join(k if k and all(c.isalnum() or c in "-_" for c in k) else json.dumps(k) for k in path)


def req_tables(data: Mapping[str, Any]) -> dict[str, list[Any]]:
    project, uv = data.get("project", {}), data.get("tool", {}).get("uv", {})
    out: dict[str, list[Any]] = {}
    if isinstance(project.get("dependencies"), list):
        out["project.dependencies"] = project["dependencies"]
    for extra, items in (project.get("optional-dependencies") or {}).items():
        out[f"project.optional-dependencies.{canonicalize_name(extra)}"] = items
    for group, items in (data.get("dependency-groups") or {}).items():
        out[f"dependency-groups.{canonicalize_name(group)}"] = items
    for key in REQ_LISTS:
        if isinstance(uv.get(key), list):
            out[f"tool.uv.{key}"] = uv[key]
    return out


def conflict_key(item: Any) -> str:
    parts = item if isinstance(item, list) else [item]
    return " | ".join(sorted(",".join(f"{k}={canonicalize_name(str(v))}" for k, v in sorted(p.items())) if isinstance(p, Mapping) else str(p) for p in parts))


def units(data: Mapping[str, Any] | None) -> dict[tuple[str, ...], Any]:
    """Every unit of a parsed pyproject -> its comparable value."""
    if data is None:
        return {}
    out: dict[tuple[str, ...], Any] = {}
    for table, items in req_tables(data).items():
        out[("table", table)] = True
        grouped: dict[str, list[Any]] = {}
        for item in items if isinstance(items, list) else []:
            if isinstance(item, Mapping):
                name, value = "include-group:" + canonicalize_name(str(item.get("include-group"))), plain(item)
            else:
                name, value = _req(item)
            grouped.setdefault(name, []).append(value)
        for name, values in grouped.items():
            out[("req", table, name)] = tuple(sorted(values, key=repr))
    uv = data.get("tool", {}).get("uv", {})
    for name, source in (uv.get("sources") or {}).items():
        out[("source", canonicalize_name(name))] = plain(source)
    for index in uv.get("index") or []:
        out[("index", str(index.get("name") or index.get("url")))] = plain(index)
    for conflict in uv.get("conflicts") or []:
        out[("conflict", conflict_key(conflict))] = True
    for meta in uv.get("dependency-metadata") or []:
        out[("metadata", canonicalize_name(str(meta.get("name"))))] = plain(meta)

    def walk(path: tuple[str, ...], node: Any) -> None:
        if path in SURFACE_KEYS:
            return
        if isinstance(node, Mapping) and (node or not path):
            for k, v in node.items():
                walk((*path, str(k)), v)
        else:
            out[("key", *path)] = plain(node)

    walk((), data)
    return out


# -- the plan JSON: what it names --------------------------------------------------------------

@dataclass
class Plan:
    data: dict[str, Any]

    def entries(self) -> list[tuple[str, dict[str, Any]]]:
        return [(section, e) for section in ("sources", "dependencies", "keys") for e in self.data.get(section) or []]

    def listed(self) -> list[dict[str, Any]]:
        return [e for s, e in self.entries() if s != "sources" or e.get("differs")]

    def naming(self, unit: tuple[str, ...]) -> list[dict[str, Any]]:
        kind = unit[0]
        found = []
        for section, e in self.entries():
            if kind == "req" and section == "dependencies" and e.get("table") == unit[1] and e.get("name") == unit[2]:
                found.append(e)
            elif kind == "table" and section == "dependencies" and e.get("table") == unit[1]:
                found.append(e)
            elif kind == "source" and section == "sources" and canonicalize_name(str(e.get("name"))) == unit[1]:
                found.append(e)
            elif kind in ("index", "metadata") and section == "dependencies" and e.get("table") == f"tool.uv.{'index' if kind == 'index' else 'dependency-metadata'}" and canonicalize_name(str(e.get("name"))) == canonicalize_name(unit[1]):
                found.append(e)
            elif kind == "conflict" and section == "dependencies" and e.get("table") == "tool.uv.conflicts":
                found.append(e)
            elif kind == "key" and section in ("keys", "dependencies"):
                key, mine = str(e.get("key") or e.get("table", "")), dotted(unit[1:])
                if key == mine or mine.startswith(key + ".") or key.startswith(mine + "."):
                    found.append(e)
        return found

    def names_not_taken(self, unit: tuple[str, ...]) -> bool:
        return any(e.get("needs_review") or e.get("main_not_taken") or e.get("taken_from") != "main" for e in self.naming(unit))

    def flags(self, unit: tuple[str, ...]) -> bool:
        return any(e.get("needs_review") for e in self.naming(unit))


# -- the temp repository -----------------------------------------------------------------------

def wanted(paths: Sequence[tuple[str, int]], project: str) -> list[str]:
    prefix = f"{project.rstrip('/')}/" if project not in ("", ".") else ""
    keep, py = [], []
    for path, size in paths:
        name = PurePosixPath(path).name
        if name == "pyproject.toml" or path in (f"{prefix}uv.lock", f"{prefix}uv.toml", f"{prefix}.python-version"):
            keep.append(path)
        elif name.endswith(".py") and size <= MAX_PY_BYTES:
            py.append(path)
    if len(py) > MAX_PY_FILES:
        py = [p for p in py if not any(f"/{d}" in f"/{p}" for d in SKIP_DIRS)][:MAX_PY_FILES]
    return keep + py


def tree_files(mirror: Path, commit: str, project: str) -> dict[str, bytes]:
    listing = git(mirror, "ls-tree", "-r", "-l", "-z", commit)
    rows = []
    for row in listing.split("\0"):
        if not row:
            continue
        meta, path = row.split("\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == "blob" and mode != "120000" and size.isdigit():  # "BAD": the mirror lacks the blob
            rows.append((path, int(size), sha))
    by_path = {p: s for p, _, s in rows}
    chosen = wanted([(p, n) for p, n, _ in rows], project)
    shas = "".join(by_path[p] + "\n" for p in chosen).encode()
    out = subprocess.run(["git", "--git-dir", str(mirror), "cat-file", "--batch"], input=shas, capture_output=True, check=True).stdout
    files, pos = {}, 0
    for path in chosen:
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if header[-1] == b"missing":
            pos = header_end + 1
            continue
        size = int(header[2])
        files[path] = out[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return files


def write_tree(root: Path, files: Mapping[str, bytes]) -> None:
    for child in root.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for path, blob in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)


def commit_all(root: Path, message: str) -> None:
    git(None, "add", "-A", cwd=root)
    git(None, "commit", "-q", "--allow-empty", "-m", message, cwd=root)


# -- the synthetic dev commit ------------------------------------------------------------------

def _table_at(doc: Any, path: Sequence[str]) -> Any:
    """The table at path, made where missing (parents as super tables: no empty [tool] header)."""
    node = doc
    for depth, key in enumerate(path):
        if key not in node:
            node[key] = tomlkit.table(is_super_table=depth < len(path) - 1)
        node = node[key]
    return node


def synthesize(text: str, base: Mapping[str, Any], main: Mapping[str, Any] | None, variant: int) -> tuple[str, list[str]]:
    """dev's pyproject: O's text with the synthetic edits (tomlkit, layout kept) and what they are."""
    doc = tomlkit.parse(text)
    what = []
    groups = doc.get("dependency-groups")
    uv = doc.get("tool", {}).get("uv", {})
    if groups is not None and any(isinstance(v, list) for v in groups.values()):
        group = "dev" if isinstance(groups.get("dev"), list) else next(k for k, v in groups.items() if isinstance(v, list))
        groups[group].append(f"{PROBE}>=1.0")
        what.append(f"dependency-groups.{group} += {PROBE}")
    elif isinstance(uv.get("dev-dependencies"), list):
        uv["dev-dependencies"].append(f"{PROBE}>=1.0")
        what.append(f"tool.uv.dev-dependencies += {PROBE}")
    else:
        table = tomlkit.table()
        table["dev"] = [f"{PROBE}>=1.0"]
        doc["dependency-groups"] = table
        what.append(f"dependency-groups.dev = [{PROBE}] (new table)")
    setting = variant % 3
    ruff = doc.get("tool", {}).get("ruff")
    if setting == 0 and ruff is not None:
        length = ruff.get("line-length")
        ruff["line-length"] = (int(length) + 1) if isinstance(length, int) else 101
        what.append(f"tool.ruff.line-length = {ruff['line-length']}")
    elif (setting == 1 or ruff is None and setting == 0) and "project" in doc:
        scripts = doc.get("project", {}).get("scripts")
        if scripts is None:
            scripts = tomlkit.table()
            doc["project"]["scripts"] = scripts
        scripts["replay-probe"] = "replay_probe.cli:main"
        what.append("project.scripts.replay-probe added")
    else:
        _table_at(doc, ("tool", "pytest", "ini_options"))["replay_probe_timeout"] = 77
        what.append("tool.pytest.ini_options.replay_probe_timeout = 77")
    if variant % 2 == 1 and main is not None:
        what.append(_conflict_edit(doc, base, main))
    return tomlkit.dumps(doc), what


def member_paths(root_data: Mapping[str, Any], files: Mapping[str, bytes], prefix: str) -> list[str]:
    """The workspace members' pyproject.toml paths among files (uv's member globs, excludes honoured)."""
    workspace = root_data.get("tool", {}).get("uv", {}).get("workspace") or {}
    out = []
    for path in sorted(files):
        if not path.endswith("/pyproject.toml") or not path.startswith(prefix):
            continue
        directory = path[len(prefix) : -len("/pyproject.toml")]
        if any(fnmatch.fnmatch(directory, g) for g in workspace.get("members") or []) and not any(fnmatch.fnmatch(directory, g) for g in workspace.get("exclude") or []):
            out.append(path)
    return out


def synthesize_member(files: Mapping[str, bytes], main_files: Mapping[str, bytes], members: Sequence[str], variant: int) -> tuple[str, str, list[str]] | None:
    """One member's pyproject with a dev-only requirement in a group and, in odd replays, an entry
    main changes edited differently: (path, text, what). The member main changes most is chosen."""
    def parse(blob: bytes | None) -> dict[str, Any] | None:
        try:
            return None if blob is None else tomllib.loads(blob.decode())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None
    candidates = [(len(set(units(parse(files[p])).items()) ^ set(units(parse(main_files.get(p))).items())), p) for p in members if parse(files[p]) is not None and "project" in parse(files[p])]
    if not candidates:
        return None
    _, path = max(candidates)
    text = files[path].decode()
    doc = tomlkit.parse(text)
    groups = doc.get("dependency-groups")
    if groups is None:
        groups = tomlkit.table()
        doc["dependency-groups"] = groups
    if not isinstance(groups.get("dev"), list):
        groups["dev"] = tomlkit.array()
    groups["dev"].append(f"{PROBE}>=1.0")
    what = [f"{path}: dependency-groups.dev += {PROBE}"]
    main = parse(main_files.get(path))
    if variant % 2 == 1 and main is not None:
        what.append(f"{path}: {_conflict_edit(doc, parse(files[path]) or {}, main)}")
    return path, tomlkit.dumps(doc), what


def _conflict_edit(doc: Any, base: Mapping[str, Any], main: Mapping[str, Any]) -> str:
    """Edit, differently, one entry main changes: a requirement in [project] first, else a scalar key."""
    b, m = req_tables(base), req_tables(main)
    for table in ("project.dependencies", *sorted(t for t in b if t.startswith("project.optional-dependencies."))):
        before = {_req(x)[0]: x for x in b.get(table, []) if isinstance(x, str)}
        after = {_req(x)[0]: x for x in m.get(table, []) if isinstance(x, str)}
        for name, text in before.items():
            if name in after and _req(after[name]) != _req(text) and not name.startswith("?"):
                array = doc["project"]["dependencies"] if table == "project.dependencies" else next(v for k, v in doc["project"]["optional-dependencies"].items() if canonicalize_name(k) == table.rsplit(".", 1)[1])
                for i, item in enumerate(array):
                    if isinstance(item, str) and _req(item)[0] == name:
                        req = Requirement(item)
                        spec = f"{req.specifier},!=0.0.1" if str(req.specifier) else "!=0.0.1"
                        new = f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{spec}{'; ' + str(req.marker) if req.marker else ''}"
                        array[i] = new
                        return f"conflict: {table} {name}: {item!r} -> {new!r} (main: {after[name]!r})"
    bu, mu = units(base), units(main)
    for unit, value in bu.items():
        if unit[0] == "key" and unit in mu and mu[unit] != value and isinstance(value, str | int) and not isinstance(value, bool):
            path = unit[1:]
            node = doc
            for key in path[:-1]:
                node = node.get(key) if hasattr(node, "get") else None
                if node is None:
                    break
            if node is None or not hasattr(node, "get") or path[-1] not in node:
                continue
            new = value + "-replay" if isinstance(value, str) else value + 7
            node[path[-1]] = new
            return f"conflict: {dotted(path)}: {value!r} -> {new!r} (main: {mu[unit]!r})"
    return "conflict: no entry main changes that dev could edit"


# -- pairs -------------------------------------------------------------------------------------

def default_branch(mirror: Path) -> str:
    return git(mirror, "symbolic-ref", "--short", "HEAD").strip()


def pick_pairs(mirror: Path, branch: str, project: str, count: int) -> list[list[str]]:
    """Pairs (O, N) of first-parent commits touching pyproject.toml and uv.lock, 5-60 apart, newest first."""
    prefix = f"{project.rstrip('/')}/" if project not in ("", ".") else ""
    line = git(mirror, "rev-list", "--first-parent", branch).split()
    position = {c: i for i, c in enumerate(line)}
    touch_py = set(git(mirror, "log", "--first-parent", "--format=%H", branch, "--", f"{prefix}pyproject.toml").split())
    touch_lock = set(git(mirror, "log", "--first-parent", "--format=%H", branch, "--", f"{prefix}uv.lock").split())
    both = sorted((c for c in touch_py & touch_lock if c in position), key=position.__getitem__)
    pairs: list[list[str]] = []
    floor = 0
    for newer in both:
        if position[newer] < floor:
            continue
        candidates = [c for c in both if 5 <= position[c] - position[newer] <= 60]
        # the furthest one within the window: the most for main to change
        for older in reversed(candidates):
            try:
                o = tomllib.loads(git(mirror, "show", f"{older}:{prefix}pyproject.toml"))
                n = tomllib.loads(git(mirror, "show", f"{newer}:{prefix}pyproject.toml"))
            except (RuntimeError, tomllib.TOMLDecodeError):
                continue
            if units(o) != units(n):
                pairs.append([older, newer])
                floor = position[older]
                break
        if len(pairs) >= count:
            break
    return pairs


# -- one replay --------------------------------------------------------------------------------

@dataclass
class Replay:
    repo: str
    older: str
    newer: str
    distance: int = 0
    synthetic: list[str] = field(default_factory=list)
    exit_code: int = 0
    seconds: float = 0.0
    stderr: str = ""
    main_units: int = 0
    taken: int = 0
    named: int = 0
    silent: list[str] = field(default_factory=list)
    member_silent: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)
    listed: int = 0
    flagged: int = 0
    git_conflicts: list[str] = field(default_factory=list)
    flag_rules: dict[str, int] = field(default_factory=dict)  # rule of each flagged entry -> count


def _show(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 110 else text[:109] + "…"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


def consistency(root: Path, project_dir: Path, data: dict[str, Any]) -> list[str]:
    problems = []
    uv = data.get("tool", {}).get("uv", {})
    indexes = {str(i.get("name")) for i in uv.get("index") or [] if isinstance(i, Mapping)}
    workspace = uv.get("workspace") or {}
    members: dict[str, Path] = {}
    excluded = workspace.get("exclude") or []
    for pattern in workspace.get("members") or []:
        matched = [p for p in project_dir.glob(pattern) if p.is_dir() and (p / "pyproject.toml").is_file()
                   and not any(fnmatch.fnmatch(str(p.relative_to(project_dir)), e) for e in excluded)]
        if not matched:
            problems.append(f"tool.uv.workspace.members {pattern!r} matches no directory with a pyproject.toml")
        for path in matched:
            member = _load(path / "pyproject.toml") or {}
            name = member.get("project", {}).get("name")
            if name:
                members[canonicalize_name(name)] = path
    name = canonicalize_name(str(data.get("project", {}).get("name", "")))
    for package, source in (uv.get("sources") or {}).items():
        for item in source if isinstance(source, list) else [source]:
            if isinstance(item, Mapping) and "index" in item and str(item["index"]) not in indexes:
                problems.append(f"tool.uv.sources.{package}: index {item['index']!r} is not declared in [[tool.uv.index]]")
            if isinstance(item, Mapping) and item.get("workspace") and canonicalize_name(package) not in members and canonicalize_name(package) != name:
                problems.append(f"tool.uv.sources.{package}: workspace = true, no workspace member is named {package}")
            if isinstance(item, Mapping) and isinstance(item.get("path"), str) and not (project_dir / item["path"]).exists():
                problems.append(f"tool.uv.sources.{package}: path {item['path']!r} does not exist in the merged tree")
    extras = {canonicalize_name(k) for k in (data.get("project", {}).get("optional-dependencies") or {})}
    groups = {canonicalize_name(k) for k in (data.get("dependency-groups") or {})}
    for conflict in uv.get("conflicts") or []:
        for item in conflict if isinstance(conflict, list) else []:
            if not isinstance(item, Mapping):
                continue
            package = canonicalize_name(str(item.get("package", name)))
            if package == name:
                have_extras, have_groups = extras, groups
            elif package in members:
                member = _load(members[package] / "pyproject.toml") or {}
                have_extras = {canonicalize_name(k) for k in (member.get("project", {}).get("optional-dependencies") or {})}
                have_groups = {canonicalize_name(k) for k in (member.get("dependency-groups") or {})}
            else:
                problems.append(f"tool.uv.conflicts: package {item.get('package')!r} is not a workspace member")
                continue
            if "extra" in item and canonicalize_name(str(item["extra"])) not in have_extras:
                problems.append(f"tool.uv.conflicts: extra {item['extra']!r} of {package} does not exist")
            if "group" in item and canonicalize_name(str(item["group"])) not in have_groups:
                problems.append(f"tool.uv.conflicts: group {item['group']!r} of {package} does not exist")
    default_groups = uv.get("default-groups")
    if isinstance(default_groups, list):
        for group in default_groups:
            if canonicalize_name(str(group)) not in groups:
                problems.append(f"tool.uv.default-groups: group {group!r} does not exist")
    for group, items in (data.get("dependency-groups") or {}).items():
        for item in items:
            if isinstance(item, Mapping) and "include-group" in item and canonicalize_name(str(item["include-group"])) not in groups:
                problems.append(f"dependency-groups.{group}: include-group {item['include-group']!r} does not exist")
    for table, items in req_tables(data).items():
        for item in items:
            if isinstance(item, str):
                try:
                    req = Requirement(item)
                except InvalidRequirement:
                    continue
                if canonicalize_name(req.name) == name:
                    for extra in req.extras:
                        if canonicalize_name(extra) not in extras:
                            problems.append(f"{table}: {item!r} names extra {extra!r}, which does not exist")
    return problems


def orphans(data: Mapping[str, Any] | None) -> set[str]:
    """Sources for packages that no requirement table asks for (inert)."""
    if data is None:
        return set()
    asked = {_req(x)[0] for items in req_tables(data).values() for x in items if isinstance(x, str)}
    asked.add(canonicalize_name(str(data.get("project", {}).get("name", ""))))
    return {canonicalize_name(n) for n in (data.get("tool", {}).get("uv", {}).get("sources") or {})} - asked


def judge(replay: Replay, base: dict[str, Any], dev: dict[str, Any], main: dict[str, Any], result: dict[str, Any] | None, plan: Plan) -> None:
    if result is None:
        replay.inconsistent.append("the result pyproject.toml does not parse")
        return
    ub, ud, um, ur = units(base), units(dev), units(main), units(result)
    for name in sorted(orphans(result) - orphans(dev) - orphans(main)):
        replay.inconsistent.append(f"orphan source {name}: the result keeps its source, no requirement of the result asks for it (neither side had it orphaned)")
    for unit in sorted(set(ub) | set(um) | set(ud) | set(ur), key=repr):
        b, d, m, r = ub.get(unit), ud.get(unit), um.get(unit), ur.get(unit)
        label = f"{unit[0]} {dotted(unit[1:]) if unit[0] == 'key' else ' '.join(unit[1:])}"
        if m != b:
            replay.main_units += 1
            if r == m:
                replay.taken += 1
            elif plan.names_not_taken(unit):
                replay.named += 1
            elif unit[0] == "table" and r is not None and m is None:
                replay.taken += 1  # main removed a table the merge still needs for dev's entries: judged per entry
            else:
                replay.silent.append(f"{label}: base {_show(b)} main {_show(m)} dev {_show(d)} result {_show(r)}")
        if d != b and r != d and not plan.flags(unit) and not (m != b and r == m and d == b):
            replay.lost.append(f"{label}: dev {_show(d)} result {_show(r)} main {_show(m)}")
        if r not in (d, m) and not plan.flags(unit) and unit[0] != "table":
            replay.inconsistent.append(f"foreign value {label}: result {_show(r)} dev {_show(d)} main {_show(m)} base {_show(b)}")


def member_reverts(tmp: Path, base_files: Mapping[str, bytes], main_files: Mapping[str, bytes], root_pyproject: str, dev_members: Mapping[str, str]) -> list[str]:
    """Member units main changed that the result does not have as main has them (units dev's
    synthetic commit also changed are conflicts, judged as lost dev changes; a member that does
    not parse is an inconsistency)."""
    out = []
    for path in sorted(set(base_files) | set(main_files)):
        if not path.endswith("pyproject.toml") or path == root_pyproject:
            continue
        parse = lambda blob: None if blob is None else tomllib.loads(blob.decode())  # noqa: E731
        try:
            b, m = units(parse(base_files.get(path))), units(parse(main_files.get(path)))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue
        result = _load(tmp / path)
        if result is None and (tmp / path).exists():
            continue
        r = units(result)
        d = units(tomllib.loads(dev_members[path])) if path in dev_members else b
        for unit in sorted(set(b) | set(m), key=repr):
            if b.get(unit) != m.get(unit) and r.get(unit) != m.get(unit) and d.get(unit) == b.get(unit):
                out.append(f"{path}: {unit[0]} {dotted(unit[1:]) if unit[0] == 'key' else ' '.join(unit[1:])}: main {_show(m.get(unit))} result {_show(r.get(unit))}")
    return out


def replay_pair(mirror: Path, repo: str, project: str, older: str, newer: str, variant: int, distance: int, keep: bool, verbose: bool, control: str = "", side: str = "") -> Replay:
    replay = Replay(repo, older[:10], newer[:10], distance)
    prefix = f"{project.rstrip('/')}/" if project not in ("", ".") else ""
    root_pyproject = f"{prefix}pyproject.toml"
    tmp = Path(tempfile.mkdtemp(prefix="replay-real-"))
    try:
        base_files, main_files = tree_files(mirror, older, project), tree_files(mirror, newer, project)
        git(None, "init", "-q", "-b", "base", str(tmp))
        for key, value in (("user.name", "replay"), ("user.email", "replay@example.invalid"), ("commit.gpgsign", "false")):
            git(None, "config", key, value, cwd=tmp)
        write_tree(tmp, base_files)
        commit_all(tmp, f"base: {older[:10]}")
        base_text = base_files[root_pyproject].decode()
        base = tomllib.loads(base_text)
        main = tomllib.loads(main_files[root_pyproject].decode())
        dev_text, replay.synthetic = synthesize(base_text, base, main, variant)
        git(None, "checkout", "-q", "-b", "dev", cwd=tmp)
        (tmp / root_pyproject).write_text(dev_text)
        dev_members: dict[str, str] = {}
        member_edit = synthesize_member(base_files, main_files, member_paths(base, base_files, prefix), variant)
        if member_edit is not None:
            path, text, what = member_edit
            (tmp / path).write_text(text)
            dev_members[path] = text
            replay.synthetic += what
        commit_all(tmp, "dev: synthetic edit of pyproject")
        git(None, "checkout", "-q", "-b", "main", "base", cwd=tmp)
        write_tree(tmp, main_files)
        commit_all(tmp, f"main: {newer[:10]}")
        git(None, "checkout", "-q", "-b", "sync", "dev", cwd=tmp)
        git(None, "merge", "--no-commit", "--no-ff", "-q", "main", cwd=tmp, check=False)
        replay.git_conflicts = git(None, "diff", "--name-only", "--diff-filter=U", cwd=tmp).split()
        project_dir = tmp / project if prefix else tmp
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "DEPSYNC_"))}
        env["PATH"] = f"{DEPSYNC.parent}:{env.get('PATH', '')}"
        started = time.perf_counter()
        done = subprocess.run([str(DEPSYNC), "reconcile", "--no-lock", "--no-fetch", "--dev", "dev", "--main", "main", "--plan-json", str(tmp / ".plan.json"), "--summary", str(tmp / ".summary.md"), "--color", "never", "-q", *(["--default-side", side] if side else [])],
                              cwd=project_dir, env=env, capture_output=True, text=True, check=False)
        replay.seconds = time.perf_counter() - started
        replay.exit_code = done.returncode
        replay.stderr = done.stderr.strip()
        if done.returncode >= 2:
            return replay
        plan = Plan(json.loads((tmp / ".plan.json").read_text()))
        if control:  # the judge's own check: dev's (or main's) file as the result, a plan naming nothing
            (tmp / root_pyproject).write_text(dev_text if control == "dev" else main_files[root_pyproject].decode())
            plan = Plan({})
        listed = plan.listed()
        replay.listed, replay.flagged = len(listed), sum(bool(e.get("needs_review")) for e in listed)
        for e in listed:
            if e.get("needs_review"):
                rule = str(e.get("rule") or e.get("case"))
                replay.flag_rules[rule] = replay.flag_rules.get(rule, 0) + 1
        result = _load(tmp / root_pyproject)
        judge(replay, base, tomllib.loads(dev_text), main, result, plan)
        if result is not None:
            # only what the merge made: a problem dev's or main's own tree has is theirs
            known: set[str] = set()
            for side, files in (("dev", {**base_files, root_pyproject: dev_text.encode()}), ("main", main_files)):
                side_root = Path(f"{tmp}.{side}")
                side_root.mkdir()
                write_tree(side_root, files)
                known.update(consistency(side_root, side_root / project if prefix else side_root, tomllib.loads(files[root_pyproject].decode())))
            replay.inconsistent += [p for p in consistency(tmp, project_dir, result) if p not in known]
        replay.member_silent = member_reverts(tmp, base_files, main_files, root_pyproject, dev_members)
        unmerged = set(plan.data.get("unmerged") or [])
        # named by the plan: a file left conflicted, or a file decision (uv_files) that keeps
        # another side than main's or flags it for a reviewer
        named_files = {f["path"] for f in plan.data.get("uv_files") or [] if f.get("needs_review") or f.get("taken_from") != "main"}
        replay.member_silent = [m for m in replay.member_silent if m.split(":", 1)[0] not in unmerged | named_files]
        for path, text in dev_members.items():
            moved = path
            if not (tmp / path).exists():  # git followed main's rename: find the member by its name
                name = tomllib.loads(text).get("project", {}).get("name")
                moved = next((str(p.relative_to(tmp)) for p in tmp.rglob("pyproject.toml") if (_load(p) or {}).get("project", {}).get("name") == name), path)
            result_member = _load(tmp / moved)
            if path in unmerged:
                continue
            if result_member is None and not (tmp / moved).exists():
                replay.lost.append(f"{path}: dev edited it, the result has no such member")
                continue
            if result_member is None:
                replay.inconsistent.append(f"{moved}: does not parse after reconcile (git's conflict markers left: reconcile does not merge member pyprojects)")
                continue
            b, d, r = units(tomllib.loads(base_files[path].decode())), units(tomllib.loads(text)), units(result_member)
            for unit in sorted(set(b) | set(d), key=repr):
                if b.get(unit) != d.get(unit) and r.get(unit) != d.get(unit):
                    replay.lost.append(f"{path}: {unit[0]} {' '.join(unit[1:])}: dev {_show(d.get(unit))} result {_show(r.get(unit))}")
        if verbose:
            print((tmp / ".summary.md").read_text()[:4000])
        return replay
    finally:
        if keep:
            print(f"  kept: {tmp}")
        else:
            for path in (tmp, Path(f"{tmp}.dev"), Path(f"{tmp}.main")):
                shutil.rmtree(path, ignore_errors=True)


# -- main --------------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--repo", action="append", default=[], help="only these repositories (owner/name)")
    parser.add_argument("--pick", type=int, default=5, help="pairs per repository that lists none")
    parser.add_argument("--write-pairs", action="store_true", help="write the picked pairs back into --pairs")
    parser.add_argument("--pair", action="append", default=[], help="only the pairs whose older or newer commit starts with this")
    parser.add_argument("--keep", action="store_true", help="keep the temp repositories")
    parser.add_argument("--json", type=Path, help="write every replay's findings here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each summary")
    parser.add_argument("--default-side", choices=("dev", "main"), default="", help="passed to reconcile (default: its own default, dev)")
    parser.add_argument("--control", choices=("dev", "main"), default="", help="judge dev's (main's) own file with a plan naming nothing: every main (dev) change must show up")
    args = parser.parse_args(argv)
    listing = tomllib.loads(args.pairs.read_text())
    replays: list[Replay] = []
    for entry in listing.get("repo", []):
        repo = entry["repo"]
        if args.repo and repo not in args.repo:
            continue
        mirror = args.mirrors / repo.replace("/", "+") / "repo"
        if not mirror.is_dir():
            print(f"{repo}: no mirror at {mirror}, skipped")
            continue
        branch = entry.get("branch") or default_branch(mirror)
        project = entry.get("project", ".")
        if not entry.get("pairs"):
            entry["pairs"] = pick_pairs(mirror, branch, project, args.pick)
        line = git(mirror, "rev-list", "--first-parent", branch).split()
        position = {c: i for i, c in enumerate(line)}
        for variant, (older, newer) in enumerate(entry["pairs"]):
            older, newer = git(mirror, "rev-parse", older).strip(), git(mirror, "rev-parse", newer).strip()
            if args.pair and not any(older.startswith(p) or newer.startswith(p) for p in args.pair):
                continue
            distance = position.get(older, -1) - position.get(newer, 0)
            try:
                replay = replay_pair(mirror, repo, project, older, newer, variant, distance, args.keep, args.verbose, args.control, args.default_side)
            except Exception as error:  # noqa: BLE001 - one broken replay is reported, the rest run
                replay = Replay(repo, older[:10], newer[:10], distance, exit_code=-1, stderr=f"harness: {error}")
            replays.append(replay)
            report(replay)
    if args.write_pairs:
        args.pairs.write_text(dump_pairs(listing))
    totals(replays)
    if args.json:
        args.json.write_text(json.dumps([vars(r) for r in replays], indent=1))
    return 0


def report(r: Replay) -> None:
    status = "HARNESS" if r.exit_code < 0 else f"exit {r.exit_code}"
    print(f"\n== {r.repo} {r.older}..{r.newer} ({r.distance} commits) {status} {r.seconds:.2f}s; git conflicts: {', '.join(r.git_conflicts) or 'none'}")
    print(f"   dev: {'; '.join(r.synthetic)}")
    print(f"   main changed {r.main_units} units: {r.taken} taken, {r.named} named not taken; listed {r.listed}, flagged {r.flagged}")
    if r.exit_code >= 2 or r.exit_code < 0:
        print(f"   stderr: {r.stderr[-600:]}")
    for title, items in (("SILENT REVERT", r.silent), ("MEMBER REVERT", r.member_silent), ("LOST DEV", r.lost), ("INCONSISTENT", r.inconsistent)):
        for item in items:
            print(f"   {title}: {item}")


def totals(replays: Sequence[Replay]) -> None:
    ran = [r for r in replays if r.exit_code >= 0]
    rows = {}
    for r in replays:
        row = rows.setdefault(r.repo, [0] * 11)
        for i, v in enumerate((1, r.main_units, r.taken, r.named, len(r.silent), len(r.member_silent), len(r.lost), len(r.inconsistent), int(r.exit_code >= 2 or r.exit_code < 0), r.flagged, r.listed)):
            row[i] += v
    head = ("repository", "replays", "main units", "taken", "named", "silent", "member", "lost dev", "inconsist", "exit2", "flagged/listed")
    print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    total = [0] * 11
    for repo, row in rows.items():
        total = [a + b for a, b in zip(total, row)]
        print(f"| {repo} | " + " | ".join(str(v) for v in row[:9]) + f" | {row[9]}/{row[10]} |")
    print("| **total** | " + " | ".join(str(v) for v in total[:9]) + f" | {total[9]}/{total[10]} ({total[9] / max(total[10], 1):.0%}) |")
    rules: dict[str, int] = {}
    for r in replays:
        for rule, count in r.flag_rules.items():
            rules[rule] = rules.get(rule, 0) + count
    if rules:
        print("\nflagged entries by rule: " + ", ".join(f"{rule} {count}" for rule, count in sorted(rules.items(), key=lambda x: -x[1])))
    times = sorted(r.seconds for r in ran if r.seconds)
    if times:
        print(f"\nwall time per reconcile: median {times[len(times) // 2]:.2f}s, max {times[-1]:.2f}s, total {sum(times):.1f}s over {len(times)}")


def dump_pairs(listing: Mapping[str, Any]) -> str:
    lines = ["# Commit pairs (older, newer) on each repository's default branch for bench/replay_real.py.", "# Picked by `--pick 5 --write-pairs`: both touch pyproject.toml and uv.lock, 5-60 first-parent commits apart.", ""]
    for entry in listing.get("repo", []):
        lines.append("[[repo]]")
        for key in ("repo", "branch", "project"):
            if key in entry:
                lines.append(f"{key} = {json.dumps(entry[key])}")
        lines.append("pairs = [")
        lines += [f"  [{json.dumps(o)}, {json.dumps(n)}]," for o, n in entry.get("pairs", [])]
        lines += ["]", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
