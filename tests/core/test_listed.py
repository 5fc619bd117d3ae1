"""Long lists in finding messages: a count and the first few (pure), and the glob uv matches members with."""

from __future__ import annotations

import glob
from pathlib import Path

from depsync.core.findings import listed
from depsync.core.paths_of import glob_regex


def test_a_short_list_is_whole_and_a_long_one_a_count() -> None:
    assert listed([]) == "" and listed(["a"]) == "a"
    assert listed(["a", "b", "c", "d"]) == "a, b, c, d"  # "and 1 more" would be no shorter
    assert listed([f"m{i}" for i in range(100)]) == "m0, m1, m2 and 97 more"


def test_member_globs_match_what_python_glob_finds(tmp_path: Path) -> None:
    """uv globs members like glob.glob(recursive=True); the ref reader matches tree paths the same way."""
    for directory in ("packages/a", "packages/a/deep", "packages/.hidden", "libs/x/pkg", "libs/pkg", "p-a1", "p-b2"):
        (tmp_path / directory).mkdir(parents=True)
    tree = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_dir())
    for pattern in ("packages/*", "libs/**/pkg", "**", "p-[a]*", "p-[!a]*", "p-?1"):
        expected = sorted(p.rstrip("/") for p in glob.glob(pattern, root_dir=tmp_path, recursive=True, include_hidden=True) if p)
        assert sorted(d for d in tree if glob_regex(pattern).fullmatch(d)) == expected, pattern
