"""values validated whole (`\\Z`, not `$`), image references by the OCI grammar.

- A lock fragment `#<sha>\\n` passed the commit regexes (`$` matches before a final newline),
  so integrity said nothing and `check --fix` wrote `rev = "<sha>\\n"` into pyproject.toml.
- An image reference with `..` segments traversed the Engine API path
  (`/images/img/../../../containers/create/json`).
Real files and depsync subprocesses; the image check needs no engine (it fails before one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files

SHA = "0123456789abcdef0123456789abcdef01234567"
PYPROJECT = (
    '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["beta"]\n\n'
    '[tool.uv.sources]\nbeta = { git = "https://github.com/o/beta", branch = "main" }\n'
)
LOCK = f'''version = 1
revision = 3
requires-python = ">=3.10"

[[package]]
name = "beta"
version = "1.0"
source = {{ git = "https://github.com/o/beta?branch=main#{SHA}\\n" }}

[[package]]
name = "demo"
version = "0.1.0"
source = {{ virtual = "." }}
dependencies = [{{ name = "beta" }}]

[package.metadata]
requires-dist = [{{ name = "beta", git = "https://github.com/o/beta?branch=main" }}]
'''


def depsync(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(root.parent / "xdg"))
    return subprocess.run([sys.executable, "-m", "depsync", *args], cwd=root, capture_output=True, text=True, env=env, timeout=120)


def test_a_commit_with_a_trailing_newline_is_not_a_commit(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_files(root, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    result = depsync(root, "check", "--no-cache", "--format", "json")
    assert "lock-git-unresolved" in result.stdout, result.stdout  # the fragment is not a commit
    depsync(root, "check", "--no-cache", "--fix")
    text = (root / "pyproject.toml").read_text()
    assert f'rev = "{SHA}\\n"' not in text and "\\n\"" not in text  # never a newline written into a rev
    assert "\n" not in text.split("beta = ", 1)[1].split("}", 1)[0]


@pytest.mark.parametrize("image", ["img/../../../containers/create", "img:tag\n", "a b", "x?y=1", "-it"])
def test_an_image_reference_outside_the_oci_grammar_is_refused(tmp_path: Path, image: str) -> None:
    from depsync.errors import DepsyncError
    from depsync.shell.runners.docker import DockerRunner

    with pytest.raises(DepsyncError, match="is not an image reference"):
        DockerRunner(image).lock(tmp_path, [], 10)


def test_config_image_is_validated_by_the_grammar(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write_files(root, {"pyproject.toml": PYPROJECT + '\n[tool.depsync]\nimage = "img/../../../containers/create"\n', "uv.lock": LOCK})
    result = depsync(root, "check", "--no-cache")
    assert result.returncode == 2 and "is not an image reference" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("image", ["nvcr.io/nvidia/pytorch:25.01-py3", "localhost:5000/team/ci-image@sha256:" + "a" * 64, "python:3.11-slim", "ghcr.io/o/r:v1.2.3"])
def test_real_image_references_pass(image: str) -> None:
    from depsync.core.trust import image_reference_allowed

    assert image_reference_allowed(image)


# -- JSON sinks redact before escaping ------------------------------------------------------------

NON_ASCII = "pässwörd-ß-9f3c1e7a"


def test_non_ascii_secrets_never_reach_json(tmp_path: Path) -> None:
    import json

    from conftest import git, init_repo

    url = f"https://bot:{NON_ASCII}@git.example.invalid/beta.git"
    lock = LOCK.replace(f"https://github.com/o/beta?branch=main#{SHA}\\n", f"{url}?rev={'a' * 40}#{'a' * 40}")
    pyproject = PYPROJECT.replace('{ git = "https://github.com/o/beta", branch = "main" }', f'{{ git = "{url}", rev = "{"a" * 40}" }}')
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject, "uv.lock": lock}, branch="dev")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(pyproject.replace("a" * 40, "b" * 40))
    (repo / "uv.lock").write_text(lock.replace("a" * 40, "b" * 40))
    git(repo, "commit", "-qam", "main")
    git(repo, "checkout", "-q", "dev")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "xdg"), GITHUB_TOKEN=f"tok-{NON_ASCII}")
    run = lambda *args: subprocess.run([sys.executable, "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=120)  # noqa: E731
    outputs = [run("diff", "dev:uv.lock", "main:uv.lock", "--format", "json").stdout]
    run("reconcile", "--dry-run", "--no-merge", "--dev", "dev", "--main", "main", "--no-fetch", "--plan-json", str(tmp_path / "plan.json"))
    outputs.append((tmp_path / "plan.json").read_text())
    outputs.append(run("check", "--no-cache", "--format", "json").stdout)
    everything = "\n".join(outputs)
    assert "git.example.invalid" in everything
    escaped = json.dumps(NON_ASCII)[1:-1]  # how json.dumps writes it: p\u00e4ssw\u00f6rd...
    assert NON_ASCII not in everything and escaped not in everything and "ssw" not in everything
