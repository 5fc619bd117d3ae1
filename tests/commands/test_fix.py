"""`depsync check --fix` / `--diff`: the mechanical fixes, on real files, real git and real uv."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import git, init_repo, write_files
from support import LOCK, PYPROJECT, depsync, inputs
from uvprojects import LocalMaterial, run_uv

from depsync.core import autofix
from depsync.core.rules.run import run_rules


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_fixable_rule_has_a_fix() -> None:
    from depsync.core.findings import FIXABLE

    assert FIXABLE == {autofix._STALE, autofix._RENAMED, autofix._PIN, autofix._METADATA}


# -- the Megatron dev triple -----------------------------------------------------------------------


def test_diff_shows_and_writes_nothing(megatron_dev_project: Path, tmp_path: Path) -> None:
    before = snapshot(megatron_dev_project)
    result = depsync("check", str(megatron_dev_project), "--diff")
    assert result.returncode == 1, result.stderr  # like `ruff check --diff`: 1 when something would change
    assert snapshot(megatron_dev_project) == before
    assert result.stdout.startswith("--- a/docker/Dockerfile.ci.dev\n+++ b/docker/Dockerfile.ci.dev\n")
    assert "-        --no-install-package nvidia-cudnn-cu12 \\\n" in result.stdout
    assert '+    { git = "https://github.com/deepseek-ai/FlashMLA", rev = "b7643bd54521f563b839b98289b5cd048c062ba2" },' in result.stdout
    assert "would fix 16 findings" in result.stderr
    # the diff is a real patch: git apply gives exactly what --fix writes
    patched = tmp_path / "patched"
    subprocess.run(["cp", "-r", str(megatron_dev_project), str(patched)], check=True)
    (tmp_path / "fix.patch").write_text(result.stdout)
    subprocess.run(["git", "apply", "--unsafe-paths", "--directory", ".", str(tmp_path / "fix.patch")], cwd=patched, check=True)
    assert depsync("check", str(megatron_dev_project), "--fix").returncode == 1
    assert snapshot(patched) == snapshot(megatron_dev_project)


def test_fix_megatron(megatron_dev_project: Path) -> None:
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    pyproject = megatron_dev_project / "pyproject.toml"
    old_docker, old_pyproject = dockerfile.read_text(), pyproject.read_text()
    result = depsync("check", str(megatron_dev_project), "--fix")
    # re-checked after applying: the pins changed, so the lock is stale until `depsync lock`
    assert result.returncode == 1, result.stderr
    assert "fixed 16 findings" in result.stderr and "run `depsync lock`" in result.stderr
    assert "docker-stale-no-install" not in result.stdout and "source-pin-not-commit" not in result.stdout
    assert "docker-no-install-renamed" not in result.stdout
    assert "lock-stale" in result.stdout
    # the 12 CUDA 12 flags now name the lock's CUDA 13 builds (kept, not deleted); the 2 with no other build go, said by name
    assert "renamed 12 `--no-install-package` flags to the lock's other build: nvidia-cublas-cu12 -> nvidia-cublas," in result.stderr
    assert "nvidia-cudnn-cu12 -> nvidia-cudnn-cu13" in result.stderr
    assert "removed 2 stale `--no-install-package` flags (the lock has no such package, nor another build of it): torchvision, transformer-engine-cu12" in result.stderr

    new_docker = dockerfile.read_text()
    old_lines, new_lines = old_docker.splitlines(), new_docker.splitlines()
    assert len(old_lines) - len(new_lines) == 2
    assert "        --no-install-package nvidia-cudnn-cu13 \\" in new_lines and "        --no-install-package nvidia-nvtx" in new_lines
    assert not any("torchvision" in line or "transformer-engine-cu12" in line for line in new_lines)
    # every other line as it was, in order
    kept = [line for line in old_lines if "torchvision" not in line and "transformer-engine-cu12" not in line and "nvidia-" not in line]
    assert [line for line in new_lines if "nvidia-" not in line] == kept
    # pyproject.toml: exactly the two pin lines changed, comments and layout kept
    assert len(old_pyproject.splitlines()) == len(pyproject.read_text().splitlines())
    changed = [(a, b) for a, b in zip(old_pyproject.splitlines(), pyproject.read_text().splitlines(), strict=True) if a != b]
    assert len(changed) == 2
    assert changed[1] == (
        'emerging_optimizers = { git = "https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git", rev = "v0.3.0" }',
        'emerging_optimizers = { git = "https://github.com/NVIDIA-NeMo/Emerging-Optimizers.git", rev = "b309e2f01cda75dc96a6dc1a2355a7b3b64b5e16" }',
    )

    # idempotent: a second run changes nothing
    after = snapshot(megatron_dev_project)
    again = depsync("check", str(megatron_dev_project), "--fix")
    assert snapshot(megatron_dev_project) == after
    assert "nothing to fix" in again.stderr


def test_the_dockerfile_still_builds_the_same_commands(megatron_dev_project: Path) -> None:
    from depsync.core.model.dockerfile import Dockerfile

    path = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    before = Dockerfile.from_text(path.read_text())
    assert depsync("check", str(megatron_dev_project), "--fix").returncode == 1
    after = Dockerfile.from_text(path.read_text())
    words = [[w.value for w in c.words] for c in after.uv_commands]
    assert words[-1][-4:] == ["--no-install-package", "nvidia-nccl-cu13", "--no-install-package", "nvidia-nvtx"]
    assert "torchvision" not in words[-1] and words[-1].count("--no-install-package") == 14
    assert [c.subcommand for c in before.uv_commands] == [c.subcommand for c in after.uv_commands]


def test_severity_off_is_not_fixed(megatron_dev_project: Path) -> None:
    pyproject = megatron_dev_project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.depsync]\nseverity = { source-pin-not-commit = "off" }\n')
    before = pyproject.read_bytes()
    result = depsync("check", str(megatron_dev_project), "--fix")
    assert result.returncode == 0, result.stdout + result.stderr  # only the Dockerfile changed: the lock stays fresh
    assert pyproject.read_bytes() == before and "fixed 14 findings" in result.stderr


# -- with real uv: fix, relock, clean ---------------------------------------------------------------


def test_fix_then_relock_gives_a_clean_check(tmp_path: Path, material: LocalMaterial) -> None:
    c, url = material.git.commits, material.git.url
    project = tmp_path / "app"
    write_files(
        project,
        {
            "pyproject.toml": '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["zeta", "eta"]\n\n'
            "[tool.uv.sources]\n"
            f'zeta = {{ git = "{url}", tag = "v1.0.0" }}  # the release\n'
            f'eta = {{ git = "{url}", subdirectory = "sub/eta", branch = "feature" }}\n\n'
            # the metadata names c2's sha, but the tag is c1: metadata-rev-mismatch
            f'[[tool.uv.dependency-metadata]]\nname = "zeta"\nversion = "1.0.0+{c["c2"][:8]}"\nrequires-dist = ["alpha"]\n'
            + material.index_toml(),
        },
    )
    assert run_uv(["lock", "--offline"], project, material.env).returncode == 0
    found = depsync("check", str(project), "--format", "json")
    assert found.returncode == 1
    assert sorted(f["rule"] for f in json.loads(found.stdout)["findings"]) == [
        "metadata-rev-mismatch",
        "source-pin-not-commit",
        "source-pin-not-commit",
    ]
    fixed = depsync("check", str(project), "--fix")
    text = (project / "pyproject.toml").read_text()
    assert f'zeta = {{ git = "{url}", rev = "{c["c1"]}" }}  # the release' in text  # in place, comment kept
    assert f'eta = {{ git = "{url}", subdirectory = "sub/eta", rev = "{c["c3"]}" }}' in text
    assert f'version = "1.0.0+{c["c1"][:8]}"' in text
    assert "lock-stale" in fixed.stdout and fixed.returncode == 1
    # what the fix asks for next: relock (here with the host uv), and all is clean
    assert run_uv(["lock", "--offline"], project, material.env).returncode == 0
    lock = (project / "uv.lock").read_text()
    assert f"#{c['c1']}" in lock and f"#{c['c3']}" in lock  # the same commits as before
    clean = depsync("check", str(project))
    assert clean.returncode == 0 and "is consistent" in clean.stdout, clean.stdout
    assert run_uv(["lock", "--check", "--offline"], project, material.env).returncode == 0


# -- refusals ----------------------------------------------------------------------------------------


def test_fix_never_writes_through_a_symlink(megatron_dev_project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.Dockerfile"
    real = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    outside.write_text(real.read_text())
    real.unlink()
    real.symlink_to(outside)
    before = snapshot(megatron_dev_project), outside.read_bytes()
    # named: a refusal (exit 2), nothing written
    result = depsync("check", str(megatron_dev_project), "--fix", "--dockerfile", "docker/Dockerfile.ci.dev")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert (snapshot(megatron_dev_project), outside.read_bytes()) == before
    # found by discovery: not read (-v says why), and the fix never writes through it
    found = depsync("check", str(megatron_dev_project), "--fix", "-v")
    assert "Dockerfile not checked: docker/Dockerfile.ci.dev: not read: docker/Dockerfile.ci.dev resolves outside the project" in found.stderr
    assert outside.read_bytes() == before[1]


def test_fix_with_ref_is_refused(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    result = depsync("check", str(repo), "--ref", "HEAD", "--fix")
    assert result.returncode == 2 and "--fix" in result.stderr and "--ref" in result.stderr
    git(repo, "status")  # untouched


# -- the Dockerfile edit, case by case (pure) -------------------------------------------------------

_LOCK_WITH_TORCH = LOCK + '\n[[package]]\nname = "torch"\nversion = "2.0"\nsource = { registry = "https://pypi.org/simple" }\n'


def _fixed(dockerfile: str) -> tuple[str, list[str]]:
    project = inputs(PYPROJECT, _LOCK_WITH_TORCH, (dockerfile,))
    plan = autofix.plan(project, run_rules(project), lambda path: dockerfile)
    return plan.after.get("docker/Dockerfile.ci.dev", dockerfile), [u.reason for u in plan.unfixed]


@pytest.mark.parametrize(
    "before, after",
    [
        # in the middle of a line: the words around it stay
        ("RUN uv sync --locked --no-install-package gone --no-install-package torch\n", "RUN uv sync --locked --no-install-package torch\n"),
        # at the end of a line, `=` form, quoted
        ("RUN uv sync --locked --no-install-package=gone\n", "RUN uv sync --locked\n"),
        ("RUN uv sync --locked --no-install-package 'gone' && echo ok\n", "RUN uv sync --locked && echo ok\n"),
        ("RUN uv sync --locked --no-install-package gone; echo ok\n", "RUN uv sync --locked; echo ok\n"),
        # a whole continuation line goes; the last one closes the continuation above it
        ("RUN uv sync --locked \\\n    --no-install-package gone \\\n    --no-install-package torch\n", "RUN uv sync --locked \\\n    --no-install-package torch\n"),
        ("RUN uv sync --locked \\\n    --no-install-package torch \\\n    --no-install-package gone\nRUN echo next\n", "RUN uv sync --locked \\\n    --no-install-package torch\nRUN echo next\n"),
        # a comment line inside the continuation is skipped over, as BuildKit skips it
        ("RUN uv sync --locked \\\n    # keep torch out\n    --no-install-package gone\nRUN echo next\n", "RUN uv sync --locked\n    # keep torch out\nRUN echo next\n"),
        # CRLF line endings are kept
        ("RUN uv sync --locked \\\r\n    --no-install-package gone\r\n", "RUN uv sync --locked\r\n"),
        # a heredoc
        ('RUN bash -ex <<"EOF"\n    uv sync --locked \\\n        --no-install-package gone\nEOF\n', 'RUN bash -ex <<"EOF"\n    uv sync --locked\nEOF\n'),
    ],
)
def test_dockerfile_edits(before: str, after: str) -> None:
    before = "FROM base\n" + before
    fixed, unfixed = _fixed(before)
    assert (fixed, unfixed) == ("FROM base\n" + after, [])


@pytest.mark.parametrize(
    "dockerfile",
    [
        'FROM base\nARG PKG=gone\nRUN uv sync --locked --no-install-package "$PKG"\n',  # a variable: not written literally
        "FROM base\nRUN uv sync --locked --no-install-package \\\n    gone\n",  # the value on the next line
        'FROM base\nRUN ["uv", "sync", "--locked", "--no-install-package", "gone"]\n',  # exec form
    ],
)
def test_dockerfile_cases_left_alone(dockerfile: str) -> None:
    fixed, unfixed = _fixed(dockerfile)
    assert fixed == dockerfile and len(unfixed) == 1


def test_a_line_is_edited_whole_or_not_at_all() -> None:
    dockerfile = 'FROM base\nARG PKG=also-gone\nRUN uv sync --locked --no-install-package gone --no-install-package "$PKG"\n'
    fixed, unfixed = _fixed(dockerfile)
    assert fixed == dockerfile and len(unfixed) == 2


def test_fix_keeps_the_file_mode(megatron_dev_project: Path) -> None:
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    os.chmod(dockerfile, 0o640)
    depsync("check", str(megatron_dev_project), "--fix")
    assert dockerfile.stat().st_mode & 0o777 == 0o640
