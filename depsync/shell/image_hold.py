"""Shell: a freshly written lock held against the image the docker runner locked in.

`depsync lock --summary` and `depsync reconcile` (after its relock) both ask the same question
`check --image` asks, of the image that lock ran in: what will `uv sync` in that image install
over, or miss from, what the base image ships. The image's facts are read once per image id
(shell/runners/image_env.py). Nothing here fails the caller: what could not be read is a note.
"""

from __future__ import annotations

from pathlib import Path

from depsync.core.findings import Finding
from depsync.errors import DepsyncError
from depsync.records import replace
from depsync.report import ui


def held_against_image(root: Path, runner: object, dockerfile_path: str | None, inputs: object | None = None) -> tuple[str, list[Finding]] | None:
    """(the image described, the image-* findings of the lock now on disk), or None when the
    runner was not docker or the image could not be read (said in a note). inputs: the check
    inputs already loaded for this tree (reconcile's closing check), else they are loaded."""
    from depsync.core.rules.image import check as image_check
    from depsync.core.rules.run import apply_severity
    from depsync.shell.runners.image_env import read_image_env
    from depsync.shell.workspace import load_inputs

    image = getattr(runner, "image", None) if getattr(runner, "name", "") == "docker" else None
    if not image:
        return None
    try:
        env, _ = read_image_env(image)
        loaded = inputs if inputs is not None else load_inputs(root)
        dockerfile = dockerfile_path or next((d.path for d in loaded.dockerfiles), None)  # type: ignore[attr-defined]
        held = replace(loaded, image=env, image_dockerfile=dockerfile)  # type: ignore[type-var]
        findings = apply_severity(image_check(held), held.config)
    except DepsyncError as exc:
        ui.note(f"the new lock was not held against {image}: {exc.message}")
        return None
    return env.describe(), list(findings)
