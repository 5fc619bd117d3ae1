"""Squash- and rebase-merged syncs, found from what commits wrote (pure)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from depsync.core.sync.squashed import REVIEW_GRACE, HistoryCommit, squashed_syncs

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
        assert [f.carried for f in found] == ([tuple(carried)] if len(carried) >= 2 else [])
