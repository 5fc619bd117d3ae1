"""repository text cannot inject into the PR body, the job summary or the log.

Source keys, revs and Dockerfile words are chosen by whoever landed a PR. Rendered with a
real CommonMark parser (markdown-it, GitHub's table syntax on), the reconcile summary and
the check action's job summary must hold no HTML from the repository, no link to a
repository-chosen target, no comment that hides the rest, no live @mention, and no line
of the job log may begin a workflow command. Real git, real depsync subprocesses.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, git, init_repo
from markdown_it import MarkdownIt

KEY = 'evil](https://x.example)<img src=x onerror=alert(1)>@org/team\\r<!--'
REV = "b" * 39 + ') [click](https://evil.example) \\r::warning::pwned @org/secret <!--'
LOCK = 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\nsource = { virtual = "." }\n'


def pyproject(rev: str) -> str:
    return ('[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n'
            f'[tool.uv.sources]\n"{KEY}" = {{ git = "https://github.com/o/r", rev = "{rev}" }}\n')


def assert_inert(markdown: str, log: str) -> None:
    html = MarkdownIt("commonmark").enable("table").render(markdown)
    assert "<img" not in html and "<!--" not in html  # as text they are escaped: &lt;img, &lt;!--
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h.startswith("https://github.com/o/r/") for h in hrefs), hrefs
    assert not re.search(r"(?<![\w\u2060])@(org|team)", re.sub(r"<code>.*?</code>", "", html))  # no live mention
    assert "\r" not in markdown and "\r" not in log
    assert not [line for line in log.splitlines() if line.lstrip().startswith("::")]  # no workflow command


def test_the_reconcile_summary_is_inert(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo", {"pyproject.toml": pyproject("a" * 40), "uv.lock": LOCK}, branch="dev")
    git(repo, "checkout", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text(pyproject(REV))
    git(repo, "commit", "-qam", "main")
    git(repo, "checkout", "-q", "dev")
    summary = tmp_path / "pr.md"
    env = dict(os.environ, DEPSYNC_OWNER_REF="dev", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    result = subprocess.run([sys.executable, "-m", "depsync", "reconcile", "--dry-run", "--no-merge", "--dev", "dev", "--main", "main", "--no-fetch", "--summary", str(summary)],
                            cwd=repo, capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stderr
    assert "evil.example" in summary.read_text()  # shown, as text
    assert_inert(summary.read_text(), result.stdout + result.stderr)


def test_the_check_actions_job_summary_is_inert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hostile = "<img src=x>@org/team\\r::warning::x<!--"
    project = init_repo(tmp_path / "proj", {
        "pyproject.toml": '[project]\nname = "demo"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n',
        "uv.lock": LOCK,
        "docker/Dockerfile.ci.dev": f"FROM debian:12\nRUN uv sync --locked --extra '{hostile.replace(chr(92) + 'r', chr(13))}'\n",
    })
    spec = importlib.util.spec_from_file_location("summary", REPO / ".github/actions/depsync-check/summary.py")
    assert spec and spec.loader
    summary = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(summary)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    report, counts = summary.check_report(f"{Path(sys.executable).parent}/depsync", str(project), "", False, "1")
    assert counts["errors"] >= 1 and "img" in report
    assert_inert(report, report)
