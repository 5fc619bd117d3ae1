"""Planted secrets never reach any output; hostile values never reach a shell.

Every command runs on repositories whose sources, indexes and environment carry planted
tokens; stdout, stderr, summaries, JSON plans and --debug tracebacks are all searched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git, init_repo

TOKENS = {
    "git": "ghp_PlantedGitToken0001",
    "index": "PlantedIndexPassword0002",
    "env": "PlantedEnvToken0003",
    "uv_index": "PlantedUvIndexPassword0004",
    "docker": "PlantedDockerAuth0005",
}
SHA = "0123456789abcdef0123456789abcdef01234567"


def pyproject(rev: str, dependency: str = "alpha>=1") -> str:
    return (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f'dependencies = ["{dependency}", "beta"]\n\n'
        "[tool.uv.sources]\n"
        f'beta = {{ git = "https://ci:{TOKENS["git"]}@git.example.invalid/beta.git", rev = "{rev}" }}\n\n'
        f'[[tool.uv.index]]\nname = "private"\nurl = "https://bot:{TOKENS["index"]}@index.example.invalid/simple"\ndefault = true\n\n'
        '[tool.depsync]\nowner-ref = "dev"\nupstream-ref = "main"\n'
    )


LOCK = f"""version = 1
revision = 3
requires-python = ">=3.10"

[[package]]
name = "demo"
version = "0.1.0"
source = {{ virtual = "." }}

[package.metadata]
requires-dist = [
    {{ name = "alpha", specifier = ">=1" }},
    {{ name = "beta", git = "https://ci:{TOKENS["git"]}@git.example.invalid/beta.git?rev={SHA}" }},
]
"""


def run(repo: Path, env: dict[str, str], *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "depsync", *args], cwd=repo, capture_output=True, text=True, env=env, timeout=300)
    return result.stdout + result.stderr


def test_no_command_prints_a_planted_secret(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject(SHA), "uv.lock": LOCK, ".github/CODEOWNERS": "* @a\n"}, branch="dev")
    git(repo, "checkout", "-q", "-b", "main")
    write = repo / "pyproject.toml"
    write.write_text(pyproject("f" * 40, "alpha>=2"))
    (repo / ".github" / "CODEOWNERS").write_text("* @b\n")
    git(repo, "commit", "-qam", "main")
    git(repo, "checkout", "-q", "-b", "sync", "dev")
    subprocess.run(["git", "-C", str(repo), "merge", "-q", "main"], capture_output=True)
    home = tmp_path / "home"
    (home / ".docker").mkdir(parents=True)
    (home / ".docker" / "config.json").write_text(json.dumps({"auths": {"registry.example.invalid": {"auth": TOKENS["docker"]}}}))
    env = dict(
        os.environ,
        HOME=str(home),
        GITHUB_TOKEN=TOKENS["env"],
        UV_INDEX_PRIVATE_PASSWORD=TOKENS["uv_index"],
        UV_INDEX_URL=f"https://bot:{TOKENS['index']}@index.example.invalid/simple",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        DEPSYNC_OWNER_REF="dev",  # no origin remote: the operator names the owner ref
    )
    outputs = []
    for fmt in ("human", "json", "github"):
        outputs.append(run(repo, env, "check", "--format", fmt))
        outputs.append(run(repo, env, "--debug", "check", "--format", fmt))
    outputs.append(run(repo, env, "reconcile", "--no-lock", "--summary", str(tmp_path / "summary.md"), "--plan-json", str(tmp_path / "plan.json")))
    outputs.append(run(repo, env, "--debug", "reconcile", "--dry-run"))
    outputs.append(run(repo, env, "lock", "--runner", "local"))  # uv fails to reach the invented hosts
    outputs.append(run(repo, env, "--debug", "lock", "--runner", "local"))
    outputs.append(run(repo, env, "diff", "dev:uv.lock", "uv.lock", "--format", "json"))
    outputs.append(run(repo, env, "check", "--deep"))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sync")
    outputs.append(run(repo, env, "guard"))
    outputs.append(run(repo, env, "--debug", "guard", "--ref", "no-such-ref"))
    outputs += [(tmp_path / "summary.md").read_text(), (tmp_path / "plan.json").read_text()]
    everything = "\n".join(outputs)
    assert "beta" in everything and "git.example.invalid" in everything  # the outputs do talk about the source
    for kind, token in TOKENS.items():
        assert token not in everything, f"the {kind} token leaked"


def test_hostile_values_never_reach_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    payload = f"$(touch {marker})"
    backticks = f"`touch {marker}`"
    text = (
        '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f'dependencies = ["alpha", "beta"]\n\n[tool.uv.sources]\n'
        f'beta = {{ git = "https://example.invalid/{payload}.git", rev = "{backticks}" }}\n'
        f'alpha = {{ path = "{payload}" }}\n\n'
        f'[tool.depsync]\nowner-ref = "{payload}"\ndockerfiles = [{{ path = "Dockerfile", build-args = {{ X = "{backticks}" }} }}]\n'
    )
    dockerfile = f"ARG UV_VERSION=0.7.2\nFROM base\nARG X\nARG Y={payload}\nRUN uv sync --locked --extra $Y --extra $X ; {payload}\n"
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": text, "uv.lock": LOCK, "Dockerfile": dockerfile}, branch="dev")
    git(repo, "branch", "main")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    for args in (
        ("check",),
        ("check", "--format", "json"),
        ("reconcile", "--dev", "dev", "--main", "main", "--no-merge", "--no-lock"),
        ("lock", "--runner", "local"),
        ("diff", "HEAD:uv.lock", "uv.lock"),
        ("install", "--command", f"{sys.executable} -m depsync"),
        ("guard", "--dev", "dev", "--main", "main"),
    ):
        run(repo, env, *args)
    assert not marker.exists()
