"""The marker algebra against real uv: generated markers, locked by real `uv lock` (offline,
local file:// index), and uv's own verdict on pairs of markers (`uv lock --check`).

1. One project carries each generated marker in its own extra; uv writes the markers in
   uv.lock rewritten its way (python_version as python_full_version, platform_system as
   sys_platform, reordered, simplified): each must be the same marker as ours.
2. Pairs: a project locked with one marker, then given another (a reordering, our own
   rendering, a mutation, a clause uv's platform knowledge may absorb): `uv lock --check`
   says fresh exactly when depsync calls the two equivalent.
"""

from __future__ import annotations

import json
import random
import re
import tomllib
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, lock_project, run_uv, write_project

from depsync.core.model.markers import canonical, conjoin, markers_equivalent, negate

pytestmark = pytest.mark.slow  # ~60 real uv runs

REQUIRES_PYTHON = ">=3.10"
PYTHON_VERSIONS = ["3.9", "3.10", "3.11", "3.11.4", "3.12", "3.12.0", "3.13"]
STRINGS = {
    "sys_platform": ["linux", "darwin", "win32", "cygwin"],
    "platform_system": ["Linux", "Darwin", "Windows", "FreeBSD"],
    "os_name": ["nt", "posix"],
    "platform_machine": ["x86_64", "aarch64", "AMD64"],
    "implementation_name": ["cpython", "pypy"],
}


def term(rng: random.Random, releases: list[str]) -> str:
    kind = rng.choice(["python", "python", "string", "string", "string", "release", "ignored"])
    if kind == "python":
        key = rng.choice(["python_version", "python_full_version"])
        op, version = rng.choice(["==", "!=", "<", "<=", ">", ">=", "~="]), rng.choice(PYTHON_VERSIONS)
        if key == "python_version" and rng.random() < 0.15:
            return f"python_version {rng.choice(['in', 'not in'])} '{version} {rng.choice(PYTHON_VERSIONS)}'"
        if op in ("==", "!=") and rng.random() < 0.3:
            return f"{key} {op} '{version}.*'"
        return f"{key} {op} '{version}'"
    if kind == "string":
        key = rng.choice(sorted(STRINGS))
        value = rng.choice(STRINGS[key])
        op = rng.choice(["==", "==", "!=", "!=", "<", "<=", "in", "not in"])
        if op in ("in", "not in"):
            return f"{key} {op} '{value} {rng.choice(STRINGS[key])}'" if rng.random() < 0.5 else f"'{value[:3]}' {op} {key}"
        return f"'{value}' {op} {key}" if rng.random() < 0.2 else f"{key} {op} '{value}'"
    if kind == "release":
        return f"platform_release {rng.choice(['==', '<', '>='])} '{rng.choice(releases)}'"
    return rng.choice(["sys_platform ~= 'linux'", "python_version >= 'foo'"])


# platform_release literals of one marker: versions or not, never both (uv 0.13.9 does not
# read back what it writes for `platform_release == '5.0' and platform_release < 'abc'`: its
# own lock is stale right after `uv lock`; depsync says stale too, test_uv_unstable_release_markers)
RELEASES = (["5.0", "22.1.0"], ["abc", "xyz"])


def marker(rng: random.Random, depth: int = 0, releases: list[str] | None = None) -> str:
    releases = releases or rng.choice(RELEASES)
    if depth >= 3 or rng.random() < 0.3:
        return term(rng, releases)
    return f"({marker(rng, depth + 1, releases)}) {rng.choice(['and', 'or'])} ({marker(rng, depth + 1, releases)})"


def reordered(text: str, rng: random.Random) -> str:
    """The same marker with the operands of its top-level and/or swapped, recursively."""
    depth, split = 0, None
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith((") and (", ") or ("), index):
            split = index
            break
    if split is None:
        return text
    left, rest = text[1:split], text[split + 2 :]
    op, right = rest.split(" ", 1)
    left, right = reordered(left, rng), reordered(right[1:-1], rng)
    return f"({right}) {op} ({left})" if rng.random() < 0.7 else f"({left}) {op} ({right})"


def project_text(material: LocalMaterial, extras: list[str]) -> str:
    listed = "\n".join(f"e{i} = [{json.dumps('alpha; ' + m)}]" for i, m in enumerate(extras))
    return (
        f'[project]\nname = "probe"\nversion = "0.1.0"\nrequires-python = "{REQUIRES_PYTHON}"\ndependencies = []\n\n'
        f"[project.optional-dependencies]\n{listed}\n" + material.index_toml()
    )


def recorded_markers(project: Path) -> dict[str, list[str]]:
    """The markers uv recorded for alpha in the project's metadata, by extra (e0, e1, ...)."""
    lock = tomllib.loads((project / "uv.lock").read_text())
    (probe,) = [p for p in lock["package"] if p["name"] == "probe"]
    by_extra: dict[str, list[str]] = {}
    for requirement in probe["metadata"].get("requires-dist", []):
        text = requirement.get("marker", "")
        for extra in set(re.findall(r"extra == '(e\d+)'", text)) or {""}:
            by_extra.setdefault(extra, []).append(text)
    return by_extra


def test_uv_records_each_marker_as_the_same_marker(material: LocalMaterial, tmp_path: Path) -> None:
    rng = random.Random(508)
    written = [marker(rng) for _ in range(40)]
    project = write_project(tmp_path / "many", project_text(material, written))
    lock_project(project, material.env)
    recorded = recorded_markers(project)
    for index, text in enumerate(written):
        ours = conjoin(f"({text})", f"extra == 'e{index}'")
        found = recorded.get(f"e{index}")
        if found is None:  # uv found the marker never true and recorded it without its extra
            assert markers_equivalent(ours, negate(None), REQUIRES_PYTHON), text
            continue
        (theirs,) = found
        assert markers_equivalent(ours, theirs, REQUIRES_PYTHON), (text, theirs, canonical(ours))


def variants(text: str, rng: random.Random) -> list[str]:
    mutated = text
    for old, new in (("'linux'", "'darwin'"), ("'3.11'", "'3.12'"), ("==", "!="), ("'x86_64'", "'AMD64'"), ("and", "or")):
        if old in mutated and rng.random() < 0.5:
            mutated = mutated.replace(old, new, 1)
            break
    return [reordered(text, rng), canonical(text) or "python_version >= '3'", mutated, f"({text}) and os_name != 'nt'"]


def test_uv_calls_two_markers_the_same_exactly_when_depsync_does(material: LocalMaterial, tmp_path: Path) -> None:
    rng = random.Random(440)
    pairs = [(a, b) for a in (marker(rng) for _ in range(6)) for b in variants(a, rng)]
    agreed = []
    for index, (before, after) in enumerate(pairs):
        project = write_project(tmp_path / f"pair{index}", project_text(material, [before]))
        lock_project(project, material.env)
        (project / "pyproject.toml").write_text(project_text(material, [after]))
        checked = run_uv(["lock", "--check", "--offline"], project, material.env)
        assert checked.returncode in (0, 1), checked.describe()
        ours = markers_equivalent(conjoin(f"({before})", "extra == 'e0'"), conjoin(f"({after})", "extra == 'e0'"), REQUIRES_PYTHON)
        assert ours == (checked.returncode == 0), (before, after, checked.stderr[-300:])
        agreed.append(ours)
    assert True in agreed and False in agreed  # both verdicts were put to uv


def test_uv_unstable_release_markers(material: LocalMaterial, tmp_path: Path) -> None:
    """A marker uv does not read back as it wrote it: uv calls its own fresh lock stale, and so
    does depsync (the recorded marker is not the pyproject's)."""
    text = "platform_release == '5.0' and platform_release < 'abc'"
    project = write_project(tmp_path / "unstable", project_text(material, [text]))
    lock_project(project, material.env)
    assert run_uv(["lock", "--check", "--offline"], project, material.env).returncode == 1
    (recorded,) = recorded_markers(project)["e0"]
    assert not markers_equivalent(conjoin(text, "extra == 'e0'"), recorded, REQUIRES_PYTHON)
