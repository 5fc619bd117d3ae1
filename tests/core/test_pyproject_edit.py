"""Applying a plan to the real Megatron pyproject: only source and metadata lines change (pure)."""

from __future__ import annotations

import difflib
import tomllib

from conftest import megatron

from depsync.core.sync.metadata import plan_metadata
from depsync.core.sync.pyproject_edit import apply_plan
from depsync.core.sync.sources import Evidence, Policy, merge_sources


def reconcile_texts(base: str, dev: str, main: str, policy: Policy = Policy()) -> tuple[str, list, list]:
    b, d, m = (tomllib.loads(t) for t in (base, dev, main))
    decisions = merge_sources(*(x.get("tool", {}).get("uv", {}).get("sources", {}) for x in (b, d, m)), policy=policy, evidence=Evidence())
    metadata = plan_metadata(
        d.get("tool", {}).get("uv", {}).get("dependency-metadata", []), m.get("tool", {}).get("uv", {}).get("dependency-metadata", []), decisions
    )
    return apply_plan(dev, main, decisions, metadata), decisions, metadata


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0) if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_megatron_pyproject_diff_touches_only_sources() -> None:
    dev = megatron("dev", "pyproject.toml")
    new, _, metadata = reconcile_texts(megatron("base", "pyproject.toml"), dev, megatron("main", "pyproject.toml"))
    assert metadata == []  # TE keeps dev's pin, so its metadata stays
    assert changed_lines(dev, new) == [
        '-nemo-run = { git = "https://github.com/NVIDIA-NeMo/Run.git", rev = "17ae86b64d7f75653351664f5d8c9e466faede00" }',
        '+nemo-run = { git = "https://github.com/NVIDIA-NeMo/Run.git", rev = "e3935393a290aed1822af52139b4b8ee270fed1f" }',
        '+deep_gemm = { git = "https://github.com/deepseek-ai/DeepGEMM.git", rev = "714dd1a4a980f7937a74343d19a8eba4fe321480" }',
        '+nemo-lens = { git = "https://github.com/NVIDIA-NeMo/Lens.git", rev = "b85578fc2b736a1804705e537001b5f45e9c715d" }',
        '+torch-memory-saver = { git = "https://github.com/fzyzcjy/torch_memory_saver.git", rev = "9bc9a442e6d108c7b7903def199896a005143aaf" }',
    ]
    # everything else, comments and blank lines included, is byte-for-byte dev's
    removed = {line[1:] for line in changed_lines(dev, new) if line[0] == "-"}
    added = {line[1:] for line in changed_lines(dev, new) if line[0] == "+"}
    assert [x for x in dev.splitlines() if x not in removed] == [x for x in new.splitlines() if x not in added]
    assert new.endswith(dev.split("fast-hadamard-transform = ")[1].split("\n", 1)[1])


def test_megatron_policy_main_takes_transformer_engine_and_its_metadata() -> None:
    dev = megatron("dev", "pyproject.toml")
    new, _, metadata = reconcile_texts(megatron("base", "pyproject.toml"), dev, megatron("main", "pyproject.toml"), Policy(conflict="main"))
    (update,) = metadata
    assert update.name == "transformer-engine" and ("version", "2.14.0+f031cf87", "2.17.1+4329ff84") in update.changes
    lines = changed_lines(dev, new)
    assert '+version = "2.17.1+4329ff84"' in lines and '-version = "2.14.0+f031cf87"' in lines


def test_local_version_follows_rev_when_main_has_no_metadata() -> None:
    base = '[tool.uv.sources]\nte = { git = "https://x/te.git", rev = "aaaaaaaa11111111111111111111111111111111" }\n'
    dev = base + '\n[[tool.uv.dependency-metadata]]\nname = "te"\nversion = "2.0+aaaaaaaa"  # keep this comment\n'
    main = base.replace("a" * 8 + "1" * 32, "b" * 8 + "2" * 32)
    new, _, (update,) = reconcile_texts(base, dev, main)
    assert update.changes == (("version", "2.0+aaaaaaaa", "2.0+bbbbbbbb"),)
    assert changed_lines(dev, new) == [
        '-te = { git = "https://x/te.git", rev = "aaaaaaaa11111111111111111111111111111111" }',
        '+te = { git = "https://x/te.git", rev = "bbbbbbbb22222222222222222222222222222222" }',
        '-version = "2.0+aaaaaaaa"  # keep this comment',
        '+version = "2.0+bbbbbbbb"  # keep this comment',
    ]


def test_branch_pin_cannot_be_followed_and_says_so() -> None:
    base = '[tool.uv.sources]\nte = { git = "https://x/te.git", rev = "aaaaaaaa11111111111111111111111111111111" }\n'
    dev = base + '\n[[tool.uv.dependency-metadata]]\nname = "te"\nversion = "2.0+aaaaaaaa"\n'
    main = base.replace('rev = "aaaaaaaa11111111111111111111111111111111"', 'branch = "main"')
    _, _, (update,) = reconcile_texts(base, dev, main)
    assert update.needs_review and update.changes == ()


def test_sources_table_created_when_missing() -> None:
    dev = '[project]\nname = "x"\n'
    main = dev + '\n[tool.uv.sources]\nnew = { git = "https://x/new.git", rev = "' + "c" * 40 + '" }\n'
    new, _, _ = reconcile_texts(dev, dev, main)
    assert tomllib.loads(new)["tool"]["uv"]["sources"]["new"]["rev"] == "c" * 40
    assert new.startswith(dev)
