"""Entries that belong together are decided together (depsync.core.sync.merge): a source and
its index, a package's build settings and its requirement; resolver settings follow the
three-way rule, never import evidence."""

from __future__ import annotations

import tomllib

from depsync.core.config import Config
from depsync.core.sync.merge import MergedPyproject, reconciled_pyproject_whole
from depsync.core.sync.sources import Evidence, Ownership
from depsync.core.sync.surface import SurfaceEvidence, Use

BASE = """\
[project]
name = "app"
version = "1.0"
dependencies = ["torch>=2.6", "vllm>=0.9"]

[tool.uv]
no-build-isolation-package = ["flash-attn"]

[tool.uv.sources]
vllm = { index = "vllm-cu129" }

[[tool.uv.index]]
name = "vllm-cu129"
url = "https://wheels.example.invalid/vllm/cu129"
explicit = true
"""


def whole(base: str, dev: str, main: str, uses: dict[str, Use] | None = None, main_owns: tuple[tuple[str, str], ...] = ()) -> MergedPyproject:
    texts = {"base": base, "dev": dev, "main": main}
    data = {side: tomllib.loads(text) for side, text in texts.items()}
    ownership = {key: Ownership("main", "history", "dev's history never changed it") for key in main_owns}
    evidence = SurfaceEvidence(uses=uses or {}, ownership=ownership, gathered=True)
    return reconciled_pyproject_whole(texts, data, Config(), Evidence(gathered=True), evidence)


def test_mains_override_is_taken_without_any_import() -> None:
    main = BASE.replace("[tool.uv]\n", '[tool.uv]\n# without this, resolution fails outright\noverride-dependencies = ["numpy<2.3"]\n')
    merged = whole(BASE, BASE, main, {"numpy": Use("none")})
    assert tomllib.loads(merged.text)["tool"]["uv"]["override-dependencies"] == ["numpy<2.3"]
    (entry,) = [d for d in merged.surface if d.table == "tool.uv.override-dependencies"]
    assert entry.taken_from == "main" and not entry.needs_review and "resolver setting" in entry.reason


def test_an_index_main_removed_stays_while_devs_kept_source_names_it() -> None:
    dev = BASE.replace('vllm = { index = "vllm-cu129" }', 'vllm = { index = "vllm-cu129", marker = "sys_platform == \'linux\'" }')
    main = BASE.replace('vllm = { index = "vllm-cu129" }\n', "").split("[[tool.uv.index]]")[0]
    merged = whole(BASE, dev, main, {"vllm": Use("import", ("app/serve.py:1",))})
    data = tomllib.loads(merged.text)
    assert data["tool"]["uv"]["sources"]["vllm"] == {"index": "vllm-cu129", "marker": "sys_platform == 'linux'"}
    assert [i["name"] for i in data["tool"]["uv"]["index"]] == ["vllm-cu129"]
    (index,) = [d for d in merged.surface if d.kind == "index"]
    assert "names this index" in index.reason


def test_an_explicit_index_for_a_requirement_not_taken_stays_out_with_it() -> None:
    main = BASE.replace('dependencies = ["torch>=2.6", "vllm>=0.9"]', 'dependencies = ["torch>=2.6", "vllm>=0.9", "sglang>=0.5"]')
    main = main.replace('vllm = { index = "vllm-cu129" }', 'vllm = { index = "vllm-cu129" }\nsglang = { index = "sglang" }')
    main += '\n[[tool.uv.index]]\nname = "sglang"\nurl = "https://wheels.example.invalid/sglang"\nexplicit = true\n'
    main = main.replace('no-build-isolation-package = ["flash-attn"]', 'no-build-isolation-package = ["flash-attn", "sglang"]')
    merged = whole(BASE, BASE, main, {"sglang": Use("none")})
    data = tomllib.loads(merged.text)
    assert "sglang" not in data["tool"]["uv"]["sources"]
    assert [i["name"] for i in data["tool"]["uv"]["index"]] == ["vllm-cu129"]
    assert data["tool"]["uv"]["no-build-isolation-package"] == ["flash-attn"]  # follows the requirement
    (key,) = [k for k in merged.keys if k.key == "tool.uv.no-build-isolation-package"]
    assert "sglang left out" in key.reason
    # once the code needs sglang, all three come together
    merged = whole(BASE, BASE, main, {"sglang": Use("import", ("app/fast.py:3",))})
    data = tomllib.loads(merged.text)
    assert data["tool"]["uv"]["sources"]["sglang"] == {"index": "sglang"} and len(data["tool"]["uv"]["index"]) == 2
    assert data["tool"]["uv"]["no-build-isolation-package"] == ["flash-attn", "sglang"]


def test_megatron_build_isolation_entry_follows_the_declined_requirement() -> None:
    from conftest import megatron

    texts = {s: megatron(s, "pyproject.toml") for s in ("base", "dev", "main")}
    merged = whole(texts["base"], texts["dev"], texts["main"])
    assert "deep_gemm" not in tomllib.loads(merged.text)["tool"]["uv"]["no-build-isolation-package"]
    assert not any(d.needs_review for d in merged.keys)


def test_a_source_main_removed_with_its_requirement_goes_with_it() -> None:
    base = BASE.replace('dependencies = ["torch>=2.6", "vllm>=0.9"]', 'dependencies = ["torch>=2.6", "vllm>=0.9", "mmmu-v1"]').replace(
        'vllm = { index = "vllm-cu129" }', 'vllm = { index = "vllm-cu129" }\nmmmu-v1 = { path = "environments/mmmu_v1" }')
    main = BASE  # main dropped the environment: its requirement and its path source together
    merged = whole(base, base, main, {"mmmu-v1": Use("none")})
    data = tomllib.loads(merged.text)
    assert "mmmu-v1" not in data["tool"]["uv"]["sources"] and "mmmu-v1" not in str(data["project"]["dependencies"])
    (source,) = [d for d in merged.sources if d.name == "mmmu-v1"]
    assert source.result is None and not source.needs_review


def test_a_workspace_source_main_turned_into_a_path_is_taken() -> None:
    base = BASE.replace('vllm = { index = "vllm-cu129" }', 'vllm = { index = "vllm-cu129" }\nlib = { workspace = true }').replace('"vllm>=0.9"]', '"vllm>=0.9", "lib"]')
    main = base.replace("lib = { workspace = true }", 'lib = { path = "packages/lib", editable = true }')
    merged = whole(base, base, main, {"lib": Use("import", ("app/x.py:1",))})
    (source,) = [d for d in merged.sources if d.name == "lib"]
    assert source.taken_from == "main" and not source.needs_review and "three-way" in source.reason


def test_a_group_or_extra_that_mains_taken_entries_name_comes_with_them() -> None:
    base = '[project]\nname = "app"\nversion = "1"\ndependencies = []\n\n[project.optional-dependencies]\nall = ["app[cpu]"]\ncpu = ["numpy"]\n\n[dependency-groups]\ndev = ["pytest"]\n\n[tool.uv]\ndefault-groups = ["dev"]\n'
    main = base.replace('all = ["app[cpu]"]', 'all = ["app[cpu,email]"]\nemail = ["mail-parser"]').replace('default-groups = ["dev"]', 'default-groups = ["dev", "typing"]')
    main = main.replace('dev = ["pytest"]', 'dev = ["pytest"]\ntyping = ["pandas-stubs"]')
    merged = whole(base, base, main, {"mail-parser": Use("none"), "pandas-stubs": Use("none"), "app": Use("none")}, (("project.optional-dependencies.all", "app"),))
    data = tomllib.loads(merged.text)
    assert data["tool"]["uv"]["default-groups"] == ["dev", "typing"] and data["dependency-groups"]["typing"] == ["pandas-stubs"]
    assert data["project"]["optional-dependencies"]["email"] == ["mail-parser"] and data["project"]["optional-dependencies"]["all"] == ["app[cpu,email]"]
    assert not [f for f in merged.surface if f.needs_review and f.table in ("dependency-groups.typing", "project.optional-dependencies.email")]


def test_a_conflict_set_stays_out_with_an_extra_that_was_not_taken() -> None:
    base = '[project]\nname = "e2s"\nversion = "1"\n\n[project.optional-dependencies]\ncpu = ["numpy"]\n\n[tool.uv]\nconflicts = []\n'
    main = base.replace('cpu = ["numpy"]', 'cpu = ["numpy"]\ncosmo = ["cosmos-sdk"]').replace("conflicts = []", 'conflicts = [[{ extra = "cpu" }, { extra = "cosmo" }]]')
    merged = whole(base, base, main, {"cosmos-sdk": Use("none")})
    data = tomllib.loads(merged.text)
    assert "cosmo" not in data["project"]["optional-dependencies"] and data["tool"]["uv"]["conflicts"] == []
    (conflict,) = [d for d in merged.surface if d.kind == "conflict"]
    assert conflict.result is None and "extra 'cosmo'" in " ".join(conflict.evidence)
    # with the extra taken, its conflict set comes too
    merged = whole(base, base, main, {"cosmos-sdk": Use("import", ("e2s/cosmo.py:1",))})
    assert tomllib.loads(merged.text)["tool"]["uv"]["conflicts"] == [[{"extra": "cpu"}, {"extra": "cosmo"}]]


def test_a_conflict_set_main_removed_stays_while_its_extras_do() -> None:
    base = '[project]\nname = "m"\nversion = "1"\n\n[project.optional-dependencies]\ndev = ["te>=2"]\nlts = ["te<2"]\n\n[tool.uv]\nconflicts = [[{ extra = "dev" }, { extra = "lts" }]]\n'
    main = base.replace('lts = ["te<2"]', "lts = []").replace('conflicts = [[{ extra = "dev" }, { extra = "lts" }]]', "conflicts = []")
    merged = whole(base, base, main, {"te": Use("import", ("m/x.py:1",))})
    data = tomllib.loads(merged.text)
    assert data["project"]["optional-dependencies"]["lts"] == ["te<2"]  # dev keeps its lts (main emptied it)
    assert data["tool"]["uv"]["conflicts"] == [[{"extra": "dev"}, {"extra": "lts"}]]  # so its conflict set stays


MOVE_BASE = """\
[project]
name = "app"
version = "1.0"
dependencies = ["numpy"]

[project.optional-dependencies]
dev = ["mamba-ssm~=2.2", "einops"]
lts = ["mamba-ssm~=2.2", "einops"]
"""


def test_a_move_between_extras_is_one_decision() -> None:
    """main moves mamba-ssm out of dev and lts into a new `ssm` extra; dev keeps it where it was
    (the merged code needs it): main's new entry stays out with the move, no duplicate, no flag
    of its own; a package main makes required is not a move."""
    main = MOVE_BASE.replace('dev = ["mamba-ssm~=2.2", "einops"]', 'dev = ["einops"]').replace(
        'lts = ["mamba-ssm~=2.2", "einops"]', 'lts = ["einops"]\nssm = ["mamba-ssm~=2.2"]')
    uses = {"mamba-ssm": Use("import", ("app/model.py:3",))}
    merged = whole(MOVE_BASE, MOVE_BASE, main, uses, main_owns=(("project.optional-dependencies.dev", "mamba-ssm"), ("project.optional-dependencies.lts", "mamba-ssm")))
    result = tomllib.loads(merged.text)["project"]["optional-dependencies"]
    assert "ssm" not in result and "mamba-ssm~=2.2" in result["dev"] and "mamba-ssm~=2.2" in result["lts"]
    added = next(d for d in merged.surface if d.table == "project.optional-dependencies.ssm")
    assert (added.taken_from, added.needs_review, added.rule) == ("none", False, "main-added/a move dev did not take")
    assert "main removed mamba-ssm from project.optional-dependencies.dev, project.optional-dependencies.lts, where dev keeps it" in added.evidence

    promoted = MOVE_BASE.replace('dependencies = ["numpy"]', 'dependencies = ["numpy", "mamba-ssm~=2.2"]').replace('dev = ["mamba-ssm~=2.2", "einops"]', 'dev = ["einops"]')
    merged = whole(MOVE_BASE, MOVE_BASE, promoted, uses, main_owns=(("project.optional-dependencies.dev", "mamba-ssm"),))
    required = next(d for d in merged.surface if d.table == "project.dependencies" and d.name == "mamba-ssm")
    assert required.taken_from == "main" and required.rule == "main-added/the merged code needs it"
