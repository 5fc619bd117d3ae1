"""source-inert in a workspace: the root's [tool.uv.sources] serve the members too (uv merges
them per package name), and `{ workspace = true }` for a member is never inert. A real
workspace locked by real uv (the shape of livekit/agents and crewAI in ../shared/corpus-ml)."""

from __future__ import annotations

from pathlib import Path

from uvprojects import LocalMaterial, lock_project, static_pyproject, write_project

from depsync.core.rules.run import run_rules
from depsync.shell.workspace import load_inputs


def test_root_sources_used_by_members_are_not_inert(material: LocalMaterial, tmp_path: Path) -> None:
    root = (
        "[tool.uv.workspace]\nmembers = [\"packages/*\"]\n\n"
        "[tool.uv.sources]\n"
        "kappa = { workspace = true }\n"  # a member nothing depends on: boilerplate, not inert
        "lambda-pkg = { workspace = true }\n"  # used by kappa
        "gamma = { index = \"second\" }\n"  # used by lambda-pkg only
        "epsilon = { index = \"second\" }\n"  # used by nobody: inert
        + material.index_toml()
        + material.second_index_toml()
    )
    project = write_project(
        tmp_path / "ws",
        root,
        {
            "packages/kappa/pyproject.toml": static_pyproject("kappa", "0.1.0", ["lambda-pkg"]),
            "packages/lambda/pyproject.toml": static_pyproject("lambda-pkg", "0.1.0", ["gamma"]),
        },
    )
    lock_project(project, material.env)
    findings = run_rules(load_inputs(project))
    inert = [f.message for f in findings if f.rule == "source-inert"]
    assert len(inert) == 1 and inert[0].startswith("source for epsilon is inert"), inert
    assert not [f for f in findings if f.rule == "lock-stale"]
