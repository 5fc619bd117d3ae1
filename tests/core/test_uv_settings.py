"""uv.toml: uv locks with the settings of the project's uv.toml and then ignores those of
[tool.uv]; depsync's static freshness model reads them the same way (core/model/uv_settings.py).

Differential, like tests/core/test_freshness_oracle.py: each case locks a real project with the
real uv (local flat indexes, offline), edits pyproject.toml or uv.toml, and asserts both uv's
verdict (`uv lock --check --offline`, written down per case) and that depsync's static verdict
is the same.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from uvprojects import (
    LocalMaterial,
    lock_project,
    static_pyproject,
    uv_check_reason,
    uv_check_result,
    write_project,
)

from depsync.api import lock_freshness
from depsync.core.model.uv_settings import UvSettings
from depsync.errors import DepsyncError

ROOT = textwrap.dedent(
    """
    [project]
    name = "settings"
    version = "0.1.0"
    requires-python = ">=3.10"
    dependencies = ["alpha", "gamma", "beta"]
    """
).lstrip()


def index(url: Path | str, *, table: str = "index", name: str = "local") -> str:
    return f'\n[[{table}]]\nname = "{name}"\nurl = "{url}"\nformat = "flat"\ndefault = true\n'


@dataclass(frozen=True)
class Case:
    id: str
    fresh: bool  # uv's verdict after the edit
    before_pyproject: str  # [tool.uv] text appended to ROOT when locking ("{wheels}", "{second}" filled in)
    before_uv_toml: str | None  # uv.toml when locking (None: no file)
    after_pyproject: str | None = None  # None: unchanged
    after_uv_toml: str | None = "unchanged"  # None: removed


WHEELS_TOOL_UV = "[tool.uv]\n" + index("{wheels}", table="tool.uv.index")
WHEELS_UV_TOML = index("{wheels}")
CUTOFF = 'exclude-newer = "2030-01-01T00:00:00Z"\n'
PATH_SOURCE = '[tool.uv.sources]\nkappa = { path = "kappa" }\n'  # with ROOT's dependencies + kappa

CASES = [
    Case("unchanged", True, "", WHEELS_UV_TOML + CUTOFF),
    Case("uv-toml-beside-tool-uv-unchanged", True, WHEELS_TOOL_UV, WHEELS_UV_TOML),
    # the index moves: uv checks every locked registry package against uv.toml's indexes
    Case("index-changed", False, "", WHEELS_UV_TOML, after_uv_toml=index("{second}")),
    Case("uv-toml-index-replaces-tool-uv-index", False, WHEELS_TOOL_UV, None, after_uv_toml=index("{second}", name="other")),
    Case("extra-find-links-added", True, "", WHEELS_UV_TOML, after_uv_toml=WHEELS_UV_TOML.replace("[[index]]", 'find-links = ["{second}"]\n\n[[index]]')),
    Case("exclude-newer-added", False, "", WHEELS_UV_TOML, after_uv_toml=CUTOFF + WHEELS_UV_TOML),
    Case("exclude-newer-earlier", False, "", CUTOFF + WHEELS_UV_TOML, after_uv_toml='exclude-newer = "2029-01-01T00:00:00Z"\n' + WHEELS_UV_TOML),
    Case("exclude-newer-later", True, "", CUTOFF + WHEELS_UV_TOML, after_uv_toml='exclude-newer = "2031-01-01T00:00:00Z"\n' + WHEELS_UV_TOML),
    # a uv.toml, even one saying nothing of the cutoff, drops [tool.uv]'s
    Case("empty-uv-toml-drops-tool-uv-cutoff", False, "[tool.uv]\n" + CUTOFF + WHEELS_TOOL_UV.removeprefix("[tool.uv]\n"), None, after_uv_toml=""),
    Case("tool-uv-cutoff-shadowed", True, "", CUTOFF + WHEELS_UV_TOML, after_pyproject="[tool.uv]\nexclude-newer = \"2000-01-01T00:00:00Z\"\n"),
    Case("uv-toml-removed-tool-uv-rules-again", False, "[tool.uv]\nresolution = \"lowest-direct\"\n" + index("{wheels}", table="tool.uv.index"), WHEELS_UV_TOML, after_uv_toml=None),
    Case("resolution", False, "", WHEELS_UV_TOML, after_uv_toml='resolution = "lowest-direct"\n' + WHEELS_UV_TOML),
    Case("prerelease", False, "", WHEELS_UV_TOML, after_uv_toml='prerelease = "allow"\n' + WHEELS_UV_TOML),
    Case(
        "dependency-metadata-added", False, "", WHEELS_UV_TOML,
        after_uv_toml=WHEELS_UV_TOML + '\n[[dependency-metadata]]\nname = "gamma"\nversion = "1.0"\nrequires-dist = []\n',
    ),
    Case("no-sources", False, PATH_SOURCE, WHEELS_UV_TOML, after_uv_toml="no-sources = true\n" + WHEELS_UV_TOML),
    Case("empty-uv-toml-beside-tool-uv-index", True, WHEELS_TOOL_UV, None, after_uv_toml=""),
    # [[tool.uv.index]] gives way to uv.toml's, except where a source names it
    Case(
        "source-index-beside-uv-toml", True,
        '[tool.uv.sources]\ngamma = { index = "second" }\n' + WHEELS_TOOL_UV.replace("[tool.uv]\n", "") + '\n[[tool.uv.index]]\nname = "second"\nurl = "{second}"\nformat = "flat"\nexplicit = true\n',
        WHEELS_UV_TOML,
    ),
    Case("unrelated-setting", True, "", WHEELS_UV_TOML, after_uv_toml='index-strategy = "first-index"\n' + WHEELS_UV_TOML),
    # uv refuses a project-only field in uv.toml (exit 2): never fresh
    Case("refused-field", False, "", WHEELS_UV_TOML, after_uv_toml='conflicts = [[{ extra = "a" }, { extra = "b" }]]\n' + WHEELS_UV_TOML),
]


def _fill(text: str, material: LocalMaterial) -> str:
    return text.replace("{wheels}", material.wheels.as_posix()).replace("{second}", material.second_index.as_posix())


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_depsync_reads_uv_toml_as_uv_does(case: Case, material: LocalMaterial, tmp_path: Path) -> None:
    root = ROOT.replace('"beta"]', '"beta", "kappa"]') if PATH_SOURCE in case.before_pyproject else ROOT
    project = write_project(tmp_path / case.id, root + _fill(case.before_pyproject, material), {"kappa/pyproject.toml": static_pyproject("kappa", "0.2.0", ["gamma"])})
    if case.before_uv_toml is not None:
        (project / "uv.toml").write_text(_fill(case.before_uv_toml, material))
    lock_project(project, material.env)
    assert uv_check_result(project, material.env).returncode == 0
    assert lock_freshness(project) == [], "freshly locked"
    if case.after_pyproject is not None:
        (project / "pyproject.toml").write_text(root + _fill(case.after_pyproject, material))
    if case.after_uv_toml is None:
        (project / "uv.toml").unlink()
    elif case.after_uv_toml != "unchanged":
        (project / "uv.toml").write_text(_fill(case.after_uv_toml, material))

    uv = uv_check_result(project, material.env)
    assert (uv.returncode == 0) == case.fresh, f"{uv.describe()}\nuv reason: {uv_check_reason(project, material.env)}"
    findings = lock_freshness(project)
    assert (findings == []) == case.fresh, findings
    for finding in findings:
        assert finding.rule == "lock-stale" and finding.fix


def test_a_uv_toml_finding_names_uv_toml_and_the_line(material: LocalMaterial, tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", ROOT)
    (project / "uv.toml").write_text(_fill(WHEELS_UV_TOML, material))
    lock_project(project, material.env)
    (project / "uv.toml").write_text("# the cutoff\n" + CUTOFF + _fill(WHEELS_UV_TOML, material))
    (finding,) = lock_freshness(project)
    assert (finding.file, finding.line) == ("uv.toml", 2)
    assert finding.message.startswith("uv.lock is stale: uv.toml exclude-newer ")


def test_a_uv_toml_above_a_pyproject_without_tool_uv_is_read(material: LocalMaterial, tmp_path: Path) -> None:
    """uv looks in the directories above the project's for its settings when the project's
    pyproject.toml has no [tool.uv]: inside the checked project, depsync does too."""
    from depsync.core.config import Config
    from depsync.core.model.pyproject import Pyproject
    from depsync.shell.workspace import FileReader, uv_settings_file

    (tmp_path / "uv.toml").write_text(CUTOFF)
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pyproject.toml").write_text(ROOT)
    config = Config().with_overrides(pyproject="app/pyproject.toml")
    settings = uv_settings_file(FileReader(tmp_path), config, Pyproject.from_text(ROOT, "app/pyproject.toml"))
    assert settings is not None and settings.path == "uv.toml" and settings.get("exclude-newer")
    with_tool_uv = ROOT + "[tool.uv]\n"
    (tmp_path / "app" / "pyproject.toml").write_text(with_tool_uv)
    assert uv_settings_file(FileReader(tmp_path), config, Pyproject.from_text(with_tool_uv, "app/pyproject.toml")) is None


def test_a_malformed_uv_toml_is_one_input_error() -> None:
    with pytest.raises(DepsyncError, match="exclude-newer must be a str"):
        UvSettings.from_uv_toml("exclude-newer = 3\n", "uv.toml")
    with pytest.raises(DepsyncError, match="not valid TOML"):
        UvSettings.from_uv_toml("[[index]\n", "uv.toml")


def test_check_fails_on_a_uv_toml_that_moves_the_index(material: LocalMaterial, tmp_path: Path) -> None:
    """The red team's case end to end: `depsync check` exited 0 here while uv said stale."""
    import json
    import subprocess
    import sys

    project = write_project(tmp_path / "moved", ROOT + _fill(WHEELS_TOOL_UV, material))
    lock_project(project, material.env)
    (project / "uv.toml").write_text(_fill(index("{second}"), material))
    env = {**material.env, "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    done = subprocess.run([sys.executable, "-m", "depsync", "check", str(project), "--format", "json"], capture_output=True, text=True, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    (finding,) = json.loads(done.stdout)["findings"]
    assert finding["rule"] == "lock-stale" and "uv.toml does not configure" in finding["message"] and "agrees" in finding["message"]


SETTING_KEYS = ["index", "index-url", "extra-index-url", "find-links", "exclude-newer", "exclude-newer-package", "resolution",
                "prerelease", "fork-strategy", "dependency-metadata", "no-sources", "no-index", "conflicts", "url", "name", "default"]
scalars = st.one_of(st.text(max_size=12), st.integers(), st.booleans())
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(SETTING_KEYS), inner, max_size=3), max_leaves=10)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.dictionaries(st.sampled_from(SETTING_KEYS), values, max_size=5))
def test_a_uv_toml_of_any_shape_is_findings_or_one_input_error(table: dict) -> None:
    """Like tests/core/test_fuzz_readers.py for pyproject.toml: only a DepsyncError may escape."""
    import tomlkit
    from support import LOCK, PYPROJECT

    from depsync.core.config import Config
    from depsync.core.model.lock import Lock
    from depsync.core.model.pyproject import Pyproject
    from depsync.core.rules import freshness
    from depsync.core.rules.inputs import CheckInputs

    try:
        text = tomlkit.dumps(table)
    except Exception:
        return  # not representable as TOML
    try:
        settings_file = UvSettings.from_uv_toml(text, "uv.toml")
        list(freshness.check(CheckInputs(Config(), Pyproject.from_text(PYPROJECT), Lock.from_text(LOCK), uv_settings=settings_file)))
    except DepsyncError as exc:
        assert str(exc).strip()
