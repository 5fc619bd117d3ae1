"""source-pin-not-commit on short commits and direct git URLs, with real uv and a file:// git repo.

uv resolves a short commit (`rev = "abc1234"`) and a `name @ git+...@ref` requirement to a full
commit and records it after `#` in uv.lock; depsync names that commit. `--fix` pins a source's
short commit like a branch or tag, and says it leaves a requirement string alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import uv_lock
from support import depsync
from uvprojects import LocalMaterial, uv_check


def app(root: Path, material: LocalMaterial, *, sources: str = "", dependencies: str = '"alpha"', groups: str = "", extras: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{dependencies}]\n\n"
        + (f"[project.optional-dependencies]\n{extras}\n\n" if extras else "")
        + (f"[dependency-groups]\n{groups}\n\n" if groups else "")
        + (f"# the pins\n[tool.uv.sources]\n{sources}\n" if sources else "")
        + material.index_toml()
    )
    uv_lock(root, material)
    return root


def pin_findings(root: Path) -> list[dict]:  # type: ignore[type-arg]
    result = depsync("check", str(root), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "source-pin-not-commit"]


def test_a_short_commit_source_names_the_full_commit_and_fix_pins_it(tmp_path: Path, material: LocalMaterial) -> None:
    c2 = material.git.commits["c2"]
    root = app(tmp_path / "app", material, dependencies='"zeta"', sources=f'zeta = {{ git = "{material.git.url}", rev = "{c2[:7]}" }}  # short')
    lock = (root / "uv.lock").read_text()
    assert f"?rev={c2[:7]}#{c2}" in lock  # what uv records: the short rev asked for, the full commit resolved
    assert uv_check(root, material.env)
    (finding,) = pin_findings(root)
    assert finding["severity"] == "warning"
    assert (root / "pyproject.toml").read_text().splitlines()[finding["line"] - 1].startswith("zeta = { git = ")
    assert f"short commit '{c2[:7]}' (a hex prefix, not a full commit)" in finding["message"]
    assert f"the lock resolved it to {c2}" in finding["message"] and f'rev = "{c2}"' in finding["fix"]

    result = depsync("check", str(root), "--fix")
    assert "pinned zeta: rev" in result.stderr, result.stderr
    assert f'zeta = {{ git = "{material.git.url}", rev = "{c2}" }}  # short\n' in (root / "pyproject.toml").read_text()
    uv_lock(root, material)  # the relock --fix asks for: the same commit
    assert f"?rev={c2}#{c2}" in (root / "uv.lock").read_text() and uv_check(root, material.env)
    final = depsync("check", str(root))
    assert final.returncode == 0, final.stdout + final.stderr


@pytest.mark.parametrize(
    ("table", "origin"),
    [("groups", "group dev"), ("extras", "extra tools"), ("dependencies", "dependencies")],
)
def test_a_direct_git_url_on_a_branch_is_a_warning_in_every_list(tmp_path: Path, material: LocalMaterial, table: str, origin: str) -> None:
    c2 = material.git.commits["c2"]
    url = f"zeta @ git+{material.git.url}@main"
    lists = {"groups": {"groups": f'dev = ["{url}"]'}, "extras": {"extras": f'tools = ["{url}"]'},
             "dependencies": {"dependencies": f'"alpha", "{url}"'}}[table]
    root = app(tmp_path / "app", material, **lists)
    assert f"?rev=main#{c2}" in (root / "uv.lock").read_text()
    assert uv_check(root, material.env)
    (finding,) = pin_findings(root)
    line = (root / "pyproject.toml").read_text().splitlines()[finding["line"] - 1]
    assert url in line
    assert finding["message"].startswith(f"zeta (a direct git URL in {origin}) is pinned to rev 'main', which can move")
    assert f"`zeta @ git+…@{c2}`" in finding["fix"]
    assert material.git.url not in finding["message"] + finding["fix"]  # a URL may carry a token

    before = (root / "pyproject.toml").read_bytes(), (root / "uv.lock").read_bytes()
    result = depsync("check", str(root), "--fix")
    assert result.returncode == 0  # a warning, left as it was
    assert "a direct git URL requirement is not rewritten by --fix" in result.stderr, result.stderr
    assert ((root / "pyproject.toml").read_bytes(), (root / "uv.lock").read_bytes()) == before


def test_direct_git_urls_on_a_tag_or_short_commit_warn_and_a_full_commit_does_not(tmp_path: Path, material: LocalMaterial) -> None:
    c1, c2 = material.git.commits["c1"], material.git.commits["c2"]
    url = material.git.url
    root = app(tmp_path / "app", material, groups=f'tagged = ["zeta @ git+{url}@v1.0.0"]\nshort = ["eta @ git+{url}@{c2[:9]}#subdirectory=sub/eta"]')
    assert uv_check(root, material.env)
    findings = pin_findings(root)
    assert sorted(f["message"].split(" is pinned to ")[1].split(",")[0].split(";")[0] for f in findings) == [
        "rev 'v1.0.0'", f"short commit '{c2[:9]}' (a hex prefix"]
    tagged, short = sorted(findings, key=lambda f: "v1.0.0" not in f["message"])
    assert f"@{c1}`" in tagged["fix"] and f"the lock resolved it to {c2}" in short["message"]

    full = app(tmp_path / "full", material, groups=f'tagged = ["zeta @ git+{url}@{c1}"]\nshort = ["eta @ git+{url}@{c2}#subdirectory=sub/eta"]')
    assert uv_check(full, material.env)
    assert pin_findings(full) == []


@pytest.mark.parametrize(
    ("kind", "value", "commit", "said"),
    [("rev", "abc1234", None, "short commit 'abc1234' (a hex prefix, not a full commit)"),
     ("rev", "ABC1234", "abc1234" + "0" * 33, "short commit 'ABC1234' (a hex prefix, not a full commit)"),
     ("rev", "cafe1234", "0" * 40, "rev 'cafe1234'"),  # a branch named like hex: the lock's commit does not begin with it
     ("rev", "abc", None, "rev 'abc'"), ("tag", "abc1234", None, "tag 'abc1234'"), ("", "", None, "no rev (the default branch)")],
)
def test_describe_pin(kind: str, value: str, commit: str | None, said: str) -> None:
    from depsync.core.rules.sources import describe_pin

    assert describe_pin(kind, value, commit) == said
