"""Squash- and rebase-merged syncs, found from what commits wrote (pure)."""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from depsync.core.sync.raw_log import RawLogReader
from depsync.core.sync.squashed import (
    EMPTY_BLOBS,
    REVIEW_GRACE,
    HistoryCommit,
    dropped_change,
    scan,
    squashed_syncs,
)

DAY = 86400


def _main(count: int, start: int = 1000 * DAY, paths: int = 50) -> list[HistoryCommit]:
    """main's commits, one a day, each writing a new version of one file (round robin over `paths`)."""
    return [HistoryCommit(f"m{i}", start + i * DAY, f"main {i}", {f"f{i % paths}": f"b{i}"}) for i in range(count)]


def _state(commits: list[HistoryCommit]) -> dict[str, str | None]:
    state: dict[str, str | None] = {}
    for c in commits:
        state.update(c.changes)
    return state


def test_a_squash_of_mains_commits_is_reported() -> None:
    main = _main(10)
    squash = HistoryCommit("s", main[-1].time + DAY, "sync main", {**_state(main), "dev.py": "d1"})
    found = squashed_syncs(main, [HistoryCommit("d", main[0].time, "dev work", {"dev.py": "d0"}), squash])
    assert [(f.kind, f.dev_commits, f.newest_main, len(f.carried), f.eligible) for f in found] == [("squash", ("s",), "m9", 10, 10)]


def test_a_squash_with_conflicts_resolved_to_dev_still_counts() -> None:
    main = _main(10)
    state = _state(main)
    for path in ("f0", "f1", "f2", "f3"):  # the sync resolved these differently
        state[path] = "resolved"
    found = squashed_syncs(main, [HistoryCommit("s", main[-1].time + DAY, "sync", state)])
    assert len(found) == 1 and len(found[0].carried) == 6 and set(found[0].left_out) == {"m0", "m1", "m2", "m3"}


def test_overwritten_commits_do_not_count_against_a_squash() -> None:
    main = _main(12, paths=2)  # f0 and f1 rewritten again and again: only the last of each shows
    found = squashed_syncs(main, [HistoryCommit("s", main[-1].time + DAY, "sync", _state(main))])
    assert len(found) == 1 and found[0].carried == ("m10", "m11") and found[0].left_out == ()


def test_a_backport_of_two_fixes_out_of_many_is_not_reported() -> None:
    main = _main(100)
    backport = HistoryCommit("p", main[-1].time + DAY, "backport", {**main[40].changes, **main[41].changes})
    picks = [HistoryCommit("p1", main[-1].time + DAY, "fix", main[60].changes), HistoryCommit("p2", main[-1].time + DAY, "fix", main[61].changes)]
    assert squashed_syncs(main, [backport, *picks]) == []


def test_a_backport_of_mains_first_fixes_after_main_moved_on_is_not_reported() -> None:
    main = _main(30)
    late = main[-1].time + REVIEW_GRACE
    assert squashed_syncs(main, [HistoryCommit("p", late, "backport", {**main[0].changes, **main[1].changes})]) == []
    picks = [HistoryCommit(f"p{i}", late, "fix", main[i].changes) for i in (0, 1)]
    assert squashed_syncs(main, picks) == []


def test_dev_commits_main_copied_later_are_not_carried() -> None:
    """main backported dev's commits (main's copies are newer): dev carries nothing of main's."""
    dev = [HistoryCommit(f"d{i}", 1000 * DAY + i * DAY, f"dev {i}", {f"f{i}": f"b{i}"}) for i in range(10)]
    main = [HistoryCommit(f"m{i}", c.time + DAY, "backport", c.changes) for i, c in enumerate(dev)]
    assert squashed_syncs(main, dev) == []


def test_a_rebase_merged_sync_is_reported() -> None:
    main = _main(8)
    copies = [HistoryCommit(f"r{i}", main[-1].time + DAY, c.subject, c.changes) for i, c in enumerate(main)]
    found = squashed_syncs(main, [HistoryCommit("d", main[0].time, "dev", {"dev.py": "x"}), *copies, HistoryCommit("e", main[-1].time + DAY, "relock", {"uv.lock": "l"})])
    assert [(f.kind, len(f.dev_commits), len(f.carried), f.newest_main) for f in found] == [("rebase", 8, 8, "m7")]


def test_two_squashed_syncs_in_a_row_are_both_reported() -> None:
    main = _main(20)
    first = HistoryCommit("s1", main[9].time + DAY, "sync 1", _state(main[:10]))
    second = HistoryCommit("s2", main[-1].time + DAY, "sync 2", {p: b for p, b in _state(main).items() if b not in _state(main[:10]).values()})
    found = squashed_syncs(main, [first, second])
    assert [(f.dev_commits, f.newest_main, len(f.carried)) for f in found] == [(("s1",), "m9", 10), (("s2",), "m19", 10)]


def test_empty_files_and_deletions_are_no_evidence() -> None:
    empty = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    main = [HistoryCommit(f"m{i}", 1000 * DAY + i, "x", {f"pkg{i}/__init__.py": empty, f"old{i}": None}) for i in range(5)]
    dev = [HistoryCommit("d", 2000 * DAY, "y", _state(main))]
    assert squashed_syncs(main, dev) == []


# -- properties --------------------------------------------------------------------------------

_paths = st.sampled_from([f"p{i}" for i in range(6)])


@st.composite
def _history(draw: st.DrawFn, prefix: str, blob_tag: str, deletions: bool = True) -> list[HistoryCommit]:
    blobs = st.integers(0, 5).map(lambda b: f"{blob_tag}{b}")
    changes = draw(st.lists(st.dictionaries(_paths, st.one_of(st.none(), blobs) if deletions else blobs, min_size=1, max_size=3), max_size=12))
    times = draw(st.lists(st.integers(0, 3 * DAY), min_size=len(changes), max_size=len(changes)))
    start = 1000 * DAY
    return [HistoryCommit(f"{prefix}{i}", start + sum(times[: i + 1]), "s", c) for i, c in enumerate(changes)]


@settings(max_examples=200, deadline=None)
@given(_history("m", "main-"), _history("d", "dev-"))
def test_dev_writing_its_own_content_never_reports(main: list[HistoryCommit], dev: list[HistoryCommit]) -> None:
    """A proper merge history: after the merge-base dev writes only its own blobs."""
    assert squashed_syncs(main, dev) == []


@settings(max_examples=200, deadline=None)
@given(_history("m", "main-", deletions=False))
def test_a_squash_of_main_at_any_commit_is_reported_when_it_carries_two(main: list[HistoryCommit]) -> None:
    for upto in range(len(main)):
        state = _state(main[: upto + 1])
        found = squashed_syncs(main[: upto + 1], [HistoryCommit("s", main[upto].time, "sync", state)])
        carried = [c.sha for c in main[: upto + 1] if any(state.get(p) == b for p, b in c.changes.items())]
        paths = {p for c in main[: upto + 1] for p, b in c.changes.items() if state.get(p) == b}
        assert [f.carried for f in found] == ([tuple(carried)] if len(carried) >= 2 and len(paths) >= 2 else [])


# -- dates a PR author sets are no evidence; topology and landing times are ---------------------


def test_mains_copies_of_dev_work_dated_before_it_land_when_their_merge_does() -> None:
    """A main PR copies two of dev's new files, both commits dated a month before dev's commit,
    and lands with a merge commit after it: dev carries nothing (the copies' own dates were
    the old evidence, and made dev's commit look like a squash of them)."""
    dev_commit = HistoryCommit("d", 1000 * DAY, "dev: two modules", {"a.py": "A", "b.py": "B"}, ("d0",))
    fork = HistoryCommit("m0", 990 * DAY, "main", {"x.py": "X"}, ("base",))
    copy1 = HistoryCommit("c1", 970 * DAY, "copy a", {"a.py": "A"}, ("m0",))
    copy2 = HistoryCommit("c2", 970 * DAY, "copy b", {"b.py": "B"}, ("c1",))
    merge = HistoryCommit("L", 1001 * DAY, "Merge pull request #9", {}, ("m0", "c2"))
    main = [merge, copy2, copy1, fork]  # newest first, as git log --topo-order gives them
    assert scan(main, [dev_commit]) == []
    assert len(squashed_syncs([fork, copy1, copy2], [dev_commit])) == 1  # on the copies' own dates it looked carried
    # pushed straight onto main's first-parent chain, dated early: no earlier than the chain commit under them
    after = HistoryCommit("m1", 1000 * DAY + 3600, "main", {"y.py": "Y"}, ("m0",))
    pushed = [HistoryCommit("c2", 970 * DAY, "copy b", {"b.py": "B"}, ("c1",)), HistoryCommit("c1", 970 * DAY, "copy a", {"a.py": "A"}, ("m1",)), after, fork]
    assert scan(pushed, [dev_commit]) == []


def test_a_real_squash_is_found_on_landing_times() -> None:
    """main's PRs merged with merge commits; dev squashes main a day later: found."""
    main: list[HistoryCommit] = []
    tip = "base"
    for i in range(4):
        side = HistoryCommit(f"c{i}", 900 * DAY + i * DAY, f"work {i}", {f"f{i}.py": f"v{i}"}, (tip,))
        merge = HistoryCommit(f"L{i}", 900 * DAY + i * DAY + 60, f"Merge #{i}", {}, (tip, side.sha))
        main = [merge, side, *main]
        tip = merge.sha
    squash = HistoryCommit("s", 910 * DAY, "Sync main (#5)", {f"f{i}.py": f"v{i}" for i in range(4)}, ("d0",))
    [found] = scan(main, [squash])
    assert found.kind == "squash" and found.carried == ("c0", "c1", "c2", "c3") and found.paths == 4


def test_a_dev_commit_dated_in_the_future_is_no_later_than_devs_next_commit() -> None:
    main = [HistoryCommit(f"m{i}", 1000 * DAY + i, "main", {f"f{i}": f"b{i}"}, (f"m{i - 1}",) if i else ("base",)) for i in range(3)][::-1]
    early = HistoryCommit("d", 2000 * DAY, "dev, dated far ahead", {"f0": "b0", "f1": "b1", "f2": "b2"}, ("d0",))
    nxt = HistoryCommit("e", 900 * DAY, "dev's next commit", {"dev.py": "x"}, ("d",))
    assert scan(main, [nxt, early]) == []  # it was made before 900 days, before main's commits
    assert len(squashed_syncs(main[::-1], [early, nxt])) == 1  # on its own date it looked like a squash


def test_one_path_repeating_mains_blob_twice_is_one_coincidence() -> None:
    main = [HistoryCommit("m0", 1000 * DAY, "set", {"VERSION": "v"}), HistoryCommit("m1", 1001 * DAY, "revert", {"VERSION": "u"}),
            HistoryCommit("m2", 1002 * DAY, "reapply", {"VERSION": "v"})]
    assert squashed_syncs(main, [HistoryCommit("d", 1003 * DAY, "bump", {"VERSION": "v"})]) == []


def test_dropped_changes_say_what_main_has() -> None:
    empty = next(iter(EMPTY_BLOBS))
    assert [dropped_change(p, b).main for p, b in (("a", None), ("b", empty), ("c", "f00"))] == ["deleted", "emptied", "changed"]


# -- the raw log, read as it comes -------------------------------------------------------------


def _raw_log(commits: int, files: int) -> bytes:
    """`git log --raw -z` output in depsync's format: commits newest first, each writing `files` paths."""
    parts = []
    for i in range(commits, 0, -1):
        parts.append(f"\x1e{i:040x}\x1f{1000 + i}\x1f{i - 1:040x}\x1fsubject {i}\0".encode())
        for j in range(files):
            parts.append(f"\n:100644 100644 {0:040x} {i * files + j:040x} M\0dir/file{j}.py\0".encode())
    return b"".join(parts)


def test_the_raw_log_reader_bounds_paths_per_commit_and_says_so() -> None:
    data = _raw_log(20, 1500)
    reader = RawLogReader(max_files=1000)
    commits = []
    for start in range(0, len(data), 4096):  # chunks cut anywhere: inside a path, a header, a NUL's neighbour
        commits += reader.feed(data[start:start + 4096])
    commits += reader.close()
    assert [c.sha for c in commits] == [f"{i:040x}" for i in range(20, 0, -1)]
    assert all(len(c.changes) == 1000 and c.files_cut == 500 for c in commits)
    assert commits[0].parents == (f"{19:040x}",) and commits[0].time == 1020 and commits[0].subject == "subject 20"
    assert commits[-1].changes["dir/file0.py"] == f"{1500:040x}"


def test_the_raw_log_reader_keeps_only_what_the_caller_wants_and_shares_path_strings() -> None:
    data = _raw_log(50, 200)
    wanted = {f"{i * 200:040x}" for i in range(1, 51)}  # each commit's first write
    reader = RawLogReader(max_files=1000, keep=lambda path, blob: blob in wanted)
    tracemalloc.start()
    commits = list(reader.feed(data)) + list(reader.close())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert all(list(c.changes) == ["dir/file0.py"] for c in commits)
    assert commits[0].changes.keys() and next(iter(commits[0].changes)) is next(iter(commits[1].changes))
    assert peak < 4 * len(data)  # the input once or twice (the chunk), never its tokens as strings
