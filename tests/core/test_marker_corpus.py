"""Every marker uv wrote in a real lock reads into the marker algebra, and is the same node once
re-rendered: tests/corpus, the bundled Megatron-LM locks (fixtures/) and, when present beside
the repository, ../shared/corpus-ml and ../shared/fixtures (pure: the locks are only read)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from depsync.core.model import marker_tree, markers

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
LOCKS = sorted(
    [*REPO.glob("tests/corpus/**/uv.lock"), *REPO.glob("fixtures/**/uv.lock"), *SHARED.glob("corpus-ml/**/uv.lock"), *SHARED.glob("fixtures/**/uv.lock")]
)
PYPROJECTS = sorted([*REPO.glob("tests/corpus/**/pyproject.toml"), *SHARED.glob("corpus-ml/**/pyproject.toml"), *REPO.glob("fixtures/**/pyproject.toml")])
_LISTS = ("resolution-markers", "supported-markers", "required-markers")


def lock_markers(value: object, found: set[str]) -> set[str]:
    """Every marker text of a parsed lock: `marker` keys anywhere, and the marker lists."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "marker" and isinstance(item, str):
                found.add(item)
            elif key in _LISTS and isinstance(item, list):
                found.update(m for m in item if isinstance(m, str))
            else:
                lock_markers(item, found)
    elif isinstance(value, list):
        for item in value:
            lock_markers(item, found)
    return found


def test_the_corpora_are_there() -> None:
    assert len([p for p in LOCKS if "tests/corpus" in p.as_posix()]) >= 20


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.relative_to(REPO.parent).as_posix())
def test_every_recorded_marker_reads_and_renders_to_itself(lock: Path) -> None:
    texts = lock_markers(tomllib.loads(lock.read_text()), set())
    for text in sorted(texts):
        store = markers._store()
        node = markers._node(store, text)
        rendered = marker_tree.render(store, node)
        assert markers._node(store, rendered or "") == node, (text, rendered)
        assert markers.markers_equivalent(text, rendered)


def pyproject_markers(document: dict) -> set[str]:
    """The markers a pyproject writes: on its requirements, its sources and its environments."""
    project, uv = document.get("project", {}), document.get("tool", {}).get("uv", {})
    requirements = [*project.get("dependencies", []), *(r for group in project.get("optional-dependencies", {}).values() for r in group)]
    requirements += [r for group in document.get("dependency-groups", {}).values() for r in group if isinstance(r, str)]
    requirements += [*uv.get("dev-dependencies", []), *uv.get("override-dependencies", []), *uv.get("constraint-dependencies", [])]
    found = set()
    for text in requirements:
        try:
            marker = Requirement(text).marker
        except InvalidRequirement:
            continue  # not this test's concern (the readers' tests cover bad requirements)
        if marker is not None:
            found.add(str(marker))
    for entries in uv.get("sources", {}).values():
        found.update(e["marker"] for e in (entries if isinstance(entries, list) else [entries]) if isinstance(e, dict) and "marker" in e)
    for key in ("environments", "required-environments"):
        value = uv.get(key, [])
        found.update([value] if isinstance(value, str) else value)
    return found


@pytest.mark.parametrize("pyproject", PYPROJECTS, ids=lambda p: p.relative_to(REPO.parent).as_posix())
def test_every_pyproject_marker_reads_and_renders_to_itself(pyproject: Path) -> None:
    for text in sorted(pyproject_markers(tomllib.loads(pyproject.read_text()))):
        store = markers._store()
        node = markers._node(store, text)
        assert markers._node(store, marker_tree.render(store, node) or "") == node, text
