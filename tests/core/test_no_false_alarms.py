"""No false alarms: `depsync check` on many consistent projects that uv itself locked reports nothing.

Projects are generated from a seed: dependencies with specifiers, markers and extras;
optional dependencies; dependency groups with include-group; git sources pinned to full
commits (with dependency-metadata naming the sha), subdirectory sources, source lists with
markers; overrides, constraints, conflicts; a CI Dockerfile installing from the lock.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from uvprojects import LocalMaterial, lock_project, write_project

from depsync.core.rules.run import run_rules
from depsync.shell.workspace import load_inputs

PROJECTS = 120
REGISTRY = {
    "alpha": ["", ">=1.0", "<2", ">=1.0,<2", "~=1.0", "!=1.1"],
    "beta": ["", ">=1.0"],
    "gamma": ["", ">=1.0"],
    "delta": ["", ">=0.9"],
    "epsilon": ["", ">=1.0", "==1.1"],
    "Foo_Bar": ["", ">=1.0"],
}
MARKERS = ["", "python_version >= '3.10'", "sys_platform != 'win32'", "platform_system == 'Linux' or sys_platform == 'darwin'", "python_full_version < '4'"]


def requirement(rng: random.Random) -> str:
    name = rng.choice(sorted(REGISTRY))
    extras = "[fast]" if name == "beta" and rng.random() < 0.3 else "[cli]" if name == "delta" and rng.random() < 0.3 else ""
    marker = rng.choice(MARKERS)
    return f"{name}{extras}{rng.choice(REGISTRY[name])}" + (f"; {marker}" if marker else "")


def generate(rng: random.Random, material: LocalMaterial) -> tuple[str, str]:
    import tomlkit

    url, c = material.git.url, material.git.commits
    dependencies = sorted({requirement(rng) for _ in range(rng.randrange(1, 4))})
    extras = {f"x{i}": sorted({requirement(rng) for _ in range(rng.randrange(1, 3))}) for i in range(rng.randrange(0, 3))}
    groups: dict[str, list] = {"lint": sorted({requirement(rng) for _ in range(rng.randrange(1, 3))})}
    sources: dict[str, object] = {}
    uv: dict[str, object] = {}
    if rng.random() < 0.6:
        rev = rng.choice([c["c1"], c["c2"]])
        dependencies.append("zeta")
        sources["zeta"] = {"git": url, "rev": rev}
        if rng.random() < 0.5:
            uv["dependency-metadata"] = [{"name": "zeta", "version": f"1.0.0+{rev[:8]}", "requires-dist": ["alpha"]}]
    if rng.random() < 0.4:
        groups["tools"] = ["eta", {"include-group": "lint"}]
        sources["eta"] = {"git": url, "subdirectory": "sub/eta", "rev": c["c3"]}
    if rng.random() < 0.3:
        dependencies.append("epsilon")
        sources["epsilon"] = [
            {"path": str(material.wheel("epsilon", "1.0")), "marker": "sys_platform == 'win32'"},
            {"path": str(material.wheel("epsilon", "1.1")), "marker": "sys_platform != 'win32'"},
        ]
    if rng.random() < 0.3:
        uv["override-dependencies"] = ["alpha<2.1"]
    if rng.random() < 0.3:
        uv["constraint-dependencies"] = ["gamma>=1.0"]
    if len(extras) == 2 and rng.random() < 0.5:
        uv["conflicts"] = [[{"extra": "x0"}, {"extra": "x1"}]]
    if sources:
        uv["sources"] = sources
    document = {
        "project": {"name": "generated", "version": "0.1.0", "requires-python": ">=3.10", "dependencies": dependencies, "optional-dependencies": extras},
        "dependency-groups": groups,
        "tool": {"uv": uv},
    }
    text = tomlkit.dumps(document) + material.index_toml()
    flags = " ".join([*(f"--extra {e}" for e in list(extras)[:1]), *(f"--group {g}" for g in groups)])
    dockerfile = f"ARG UV_VERSION=0.13.9\nFROM python:3.11\nRUN uv sync --locked {flags}\n"
    return text, dockerfile


@pytest.mark.parametrize("seed", range(PROJECTS))
def test_consistent_generated_project_has_no_findings(seed: int, material: LocalMaterial, tmp_path: Path) -> None:
    text, dockerfile = generate(random.Random(seed), material)
    project = write_project(tmp_path / f"p{seed}", text, {"docker/Dockerfile.ci.dev": dockerfile})
    lock_project(project, material.env)
    findings = run_rules(load_inputs(project))
    assert findings == [], f"{text}\n{[f.message for f in findings]}"


def test_bom_is_skipped_and_lines_still_count_from_one() -> None:
    """uv reads a pyproject.toml that starts with a UTF-8 BOM; findings keep their lines."""
    from depsync.core.model.pyproject import Pyproject

    project = Pyproject.from_text('\ufeff[project]\nname = "demo"\nversion = "0.1.0"\n')
    assert project.name == "demo"
    assert project.lines.table("project") == 1
    assert project.lines.key("project", "version") == 3


def test_path_sources_of_path_packages_are_joined_to_their_directory() -> None:
    """uv records `{ path = "../b" }` written in 3rdparty/a as 3rdparty/b (workspace-root relative)."""
    from depsync.core.model.lowering import Context, expected_inputs
    from depsync.core.model.pyproject import Pyproject
    from depsync.core.model.requirements import Source, sources_match

    a = Pyproject.from_text('[project]\nname = "a"\nversion = "1"\ndependencies = ["b"]\n[tool.uv.sources]\nb = { path = "../b" }\n')
    (req,) = expected_inputs(a, Context("3rdparty/a")).requires_dist
    assert sources_match(req.source, Source("directory", "3rdparty/b"))
    (root_req,) = expected_inputs(a).requires_dist  # the same file as a root: relative to itself
    assert sources_match(root_req.source, Source("directory", "../b"))
