"""The rest of pyproject three-way (depsync.core.sync.document): git's rule for every key the
dependency surface does not decide, written back in the file's own layout."""

from __future__ import annotations

import tomllib

import pytest

from depsync.core.sync.document import KeyDecision, merge_document, unsanctioned_keys
from depsync.core.sync.document_edit import apply_document

BASE = """\
[project]
name = "app"
version = "1.0"
dependencies = ["requests"]

[project.scripts]
app = "app.cli:main"

[tool.uv]
default-groups = ["dev"]

[tool.uv.workspace]
members = ["packages/a", "packages/b"]

[tool.ruff]
line-length = 100  # the house style
"""


def merged(base: str, dev: str, main: str, conflict_side: str = "dev") -> tuple[str, list[KeyDecision]]:
    decisions = merge_document(tomllib.loads(base), tomllib.loads(dev), tomllib.loads(main), conflict_side)
    return apply_document(dev, main, decisions), decisions


def by_key(decisions: list[KeyDecision]) -> dict[str, KeyDecision]:
    return {d.key: d for d in decisions}


def test_main_changes_outside_the_surface_are_taken_and_dev_keeps_its_own() -> None:
    dev = BASE.replace('version = "1.0"', 'version = "1.0.dev0"')
    main = BASE.replace('app = "app.cli:main"', 'app = "app.cli:main"\napp-serve = "app.serve:main"').replace('"packages/b"', '"libs/b"')
    main = main.replace('default-groups = ["dev"]', 'default-groups = ["dev"]\nexclude-newer-package = { torch = "2026-01-01T00:00:00Z" }')
    text, decisions = merged(BASE, dev, main)
    data = tomllib.loads(text)
    assert data["project"]["scripts"] == {"app": "app.cli:main", "app-serve": "app.serve:main"}
    assert data["tool"]["uv"]["workspace"]["members"] == ["packages/a", "libs/b"]
    assert data["tool"]["uv"]["exclude-newer-package"] == {"torch": "2026-01-01T00:00:00Z"}
    assert data["project"]["version"] == "1.0.dev0"  # dev's own change survives
    found = by_key(decisions)
    assert found["project.scripts.app-serve"].taken_from == "main" and not found["project.scripts.app-serve"].needs_review
    assert found["project.version"].case == "dev-changed" and found["project.version"].taken_from == "dev"
    # the new script sits after the one it follows on main; dev's comment stays
    assert 'app = "app.cli:main"\napp-serve = "app.serve:main"\n' in text
    assert "line-length = 100  # the house style" in text


def test_both_changed_is_a_flagged_conflict_dev_kept_by_default() -> None:
    dev = BASE.replace("line-length = 100", "line-length = 120")
    main = BASE.replace("line-length = 100", "line-length = 88")
    text, decisions = merged(BASE, dev, main)
    (decision,) = decisions
    assert decision.case == "conflict" and decision.needs_review and tomllib.loads(text)["tool"]["ruff"]["line-length"] == 120
    text, _ = merged(BASE, dev, main, conflict_side="main")
    assert tomllib.loads(text)["tool"]["ruff"]["line-length"] == 88


def test_arrays_merge_per_element_in_dev_order_with_mains_additions_in_place() -> None:
    dev = BASE.replace('members = ["packages/a", "packages/b"]', 'members = ["packages/a", "packages/b", "packages/c"]')
    main = BASE.replace('members = ["packages/a", "packages/b"]', 'members = ["packages/a", "packages/d", "packages/b"]')
    text, decisions = merged(BASE, dev, main)
    assert tomllib.loads(text)["tool"]["uv"]["workspace"]["members"] == ["packages/a", "packages/d", "packages/b", "packages/c"]
    assert by_key(decisions)["tool.uv.workspace.members"].taken_from == "merged"
    main_removes = BASE.replace('"packages/a", ', "")
    text, _ = merged(BASE, dev, main_removes)
    assert tomllib.loads(text)["tool"]["uv"]["workspace"]["members"] == ["packages/b", "packages/c"]


def test_a_table_main_adds_is_copied_whole_with_its_comments() -> None:
    main = BASE + '\n[tool.mypy]\n# strict, as CI runs it\nstrict = true\nfiles = [\n    "app",\n    "tests",\n]\n'
    text, decisions = merged(BASE, BASE, main)
    assert "# strict, as CI runs it\nstrict = true" in text and 'files = [\n    "app",\n    "tests",\n]' in text
    assert {d.key for d in decisions} == {"tool.mypy.strict", "tool.mypy.files"}


def test_main_removing_a_key_removes_it_and_an_emptied_table() -> None:
    main = BASE.replace('[project.scripts]\napp = "app.cli:main"\n\n', "")
    text, decisions = merged(BASE, BASE, main)
    assert "scripts" not in tomllib.loads(text)["project"]
    assert by_key(decisions)["project.scripts.app"].case == "main-removed"


def test_main_removing_the_last_key_of_an_inline_table_removes_the_inline_table() -> None:
    # seen replaying PrimeIntellect-ai/verifiers de7ddb3462..0080475390: main dropped the table whole
    base = BASE + '\n[tool.uv.extra-build-variables]\nflash-attn = { FLASH_ATTENTION_SKIP_CUDA_BUILD = "TRUE" }\n'
    text, decisions = merged(base, base, BASE)
    assert "extra-build-variables" not in tomllib.loads(text)["tool"]["uv"]
    assert [d.key for d in decisions] == ["tool.uv.extra-build-variables.flash-attn.FLASH_ATTENTION_SKIP_CUDA_BUILD"]


def test_a_key_main_adds_to_a_table_dev_writes_only_as_sub_tables_lands_in_that_table() -> None:
    # seen replaying Lightricks/LTX-2 5cb97a9f07..7954dcb0d9: dev has [tool.uv.sources] and
    # [tool.uv.workspace] but no [tool.uv] header; main adds one with a plain key after sources
    dev = '[project]\nname = "app"\n\n[tool.uv.sources]\na = { workspace = true }\n\n[tool.uv.workspace]\nmembers = ["p/*"]\n'
    main = '[project]\nname = "app"\n\n[tool.uv.sources]\na = { workspace = true }\n\n[tool.uv]\nno-build-isolation-package = ["k"]\n\n[tool.uv.workspace]\nmembers = ["p/*"]\nexclude = ["p/k"]\n'
    text, _ = merged(dev, dev, main)
    uv = tomllib.loads(text)["tool"]["uv"]
    assert uv["no-build-isolation-package"] == ["k"] and uv["sources"] == {"a": {"workspace": True}}
    assert uv["workspace"] == {"members": ["p/*"], "exclude": ["p/k"]}
    with_header = dev.replace("[tool.uv.sources]", '[tool.uv]\npackage = true\n\n[tool.uv.sources]')
    text, _ = merged(with_header, with_header, main.replace("[tool.uv]\n", '[tool.uv]\npackage = true\n'))
    assert tomllib.loads(text)["tool"]["uv"]["no-build-isolation-package"] == ["k"]
    assert 'package = true\nno-build-isolation-package = ["k"]' in text


def test_the_surface_and_the_owners_config_are_not_decided_here() -> None:
    dev = BASE + '\n[tool.depsync]\nowner-ref = "dev"\n'
    main = BASE.replace('dependencies = ["requests"]', 'dependencies = ["requests", "numpy"]') + '\n[tool.depsync]\nowner-ref = "main"\n\n[tool.uv.sources]\nnumpy = { git = "https://x/numpy.git" }\n'
    text, decisions = merged(BASE, dev, main)
    assert decisions == [] and text == dev


def test_dev_and_main_unchanged_gives_dev_byte_for_byte() -> None:
    dev = BASE.replace("[tool.ruff]", "# dev's comment\n[tool.ruff]")
    text, decisions = merged(BASE, dev, BASE)
    assert decisions == [] and text == dev


def test_the_guard_accepts_the_merge_or_either_side_of_a_conflict_only() -> None:
    dev = BASE.replace("line-length = 100", "line-length = 120")
    main = BASE.replace("line-length = 100", "line-length = 88").replace('app = "app.cli:main"', 'app = "app.main:run"')
    text, decisions = merged(BASE, dev, main)
    parsed = {name: tomllib.loads(t) for name, t in (("dev", dev), ("main", main), ("ours", text))}
    assert unsanctioned_keys(parsed["ours"], decisions, parsed["dev"]) == []
    assert unsanctioned_keys(tomllib.loads(text.replace("line-length = 120", "line-length = 88")), decisions, parsed["dev"]) == []
    assert unsanctioned_keys(tomllib.loads(text.replace("line-length = 120", "line-length = 1")), decisions, parsed["dev"]) == ["tool.ruff.line-length"]
    assert unsanctioned_keys(parsed["dev"], decisions, parsed["dev"]) == ["project.scripts.app"]  # main's change dropped


@pytest.mark.parametrize("side", ["base", "dev", "main"])
def test_megatron_triple_rest_of_file(side: str) -> None:
    from conftest import megatron

    texts = {s: megatron(s, "pyproject.toml") for s in ("base", "dev", "main")}
    decisions = merge_document(*(tomllib.loads(texts[s]) for s in ("base", "dev", "main")))
    text = apply_document(texts["dev"], texts["main"], decisions)
    tomllib.loads(text)
    for decision in decisions:
        assert not decision.path[:2] in (("project", "dependencies"), ("tool", "depsync"))


def test_an_empty_extra_main_adds_comes_in_and_is_named() -> None:
    base = '[project]\nname = "app"\nversion = "1"\n\n[project.optional-dependencies]\ncpu = ["numpy"]\n'
    main = base + 'ucast = []\n'
    text, decisions = merged(base, base, main)
    assert tomllib.loads(text)["project"]["optional-dependencies"]["ucast"] == []
    assert [(d.key, d.case, d.taken_from) for d in decisions] == [("project.optional-dependencies.ucast", "main-added", "main")]
    # an extra with entries is the surface's, never decided here
    assert merge_document(tomllib.loads(base), tomllib.loads(base), tomllib.loads(base + 'gpu = ["cupy"]\n')) == []


def test_the_guard_compares_toml_datetimes_as_datetimes() -> None:
    """An unchanged TOML datetime outside the surface is what the merge gives, not a violation."""
    base = "[tool.x]\nwhen = 2026-01-01T00:00:00Z\na = 1\n"
    main = base.replace("a = 1", "a = 2")
    text, decisions = merged(base, base, main)
    assert unsanctioned_keys(tomllib.loads(text), decisions, tomllib.loads(base)) == []
    assert unsanctioned_keys(tomllib.loads(text.replace("2026-01-01", "2026-02-02")), decisions, tomllib.loads(base)) == ["tool.x.when"]
