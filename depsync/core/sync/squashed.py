"""Pure: sync PRs that landed on dev without main as a parent (squash- or rebase-merged), found by content.

A sync merged with a merge commit makes main's commit an ancestor of dev: the next merge-base
moves up to it. Squashed (or rebase-merged) it lands main's changes on dev as ordinary
commits: the merge-base stays where it was, the next sync merges the same changes again, and
dev's first-parent history shows main's values as dev's own changes.

Found from what the commits wrote, never from names or messages: a dev commit *carries* a main
commit (made after the merge-base) when it writes, at some path, exactly the blob that main
commit wrote there. One dev commit that carries at least two of main's commits and at least half
of those up to the newest it carries is a squashed sync; consecutive dev commits that each carry
one of main's commits, in main's order, covering as much, are a rebase-merged one (or the same
commits cherry-picked one by one: the effect on the merge-base is the same). A backport of a
few fixes out of many is neither: it carries too few of what main had by then.

Dates are evidence only where a PR author cannot set them. A commit's own dates are whatever its
author wrote (`GIT_COMMITTER_DATE`), so a main commit copying dev's content, dated before it,
would otherwise look carried by dev. The time of a main commit is when it *landed* on main's
first-parent chain (the merge or squash commit GitHub's button makes, never earlier than the
chain commit before it); the time of a dev commit is never later than dev's next first-parent
commit. Topology does the rest: a dev commit that is part of main's history, or a main commit
already in dev's, is never evidence (the shell reads `dev ^main` and `main ^dev`). What can still
look like a squash (dev itself writing two of main's blobs) is reported as likely, with its
evidence, and with what the repair would drop.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence

from depsync.records import field, record

# the empty file (SHA-1 and SHA-256 repositories): an `__init__.py` both sides added is no evidence
EMPTY_BLOBS = frozenset({"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391", "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"})
MIN_CARRIED = 2
# main's commits older than this before the dev commit, and not carried by it, count against it:
# a sync PR is merged within days of being made; a backport is made after main has moved on
REVIEW_GRACE = 7 * 86400


@record
class HistoryCommit:
    """A non-merge commit with what it wrote: {path: new blob id, or None when it deleted the path}."""

    sha: str
    time: int  # committer date, seconds since the epoch (the landing time, once prepared)
    subject: str
    changes: Mapping[str, str | None]
    parents: tuple[str, ...] = ()
    files_cut: int = 0  # paths past the per-commit bound, not read


@record
class DroppedChange:
    """A file main changed up to the repair's commit that dev has differently: `git merge -s ours` keeps dev's."""

    path: str  # untrusted text
    main: str  # "deleted", "emptied" or "changed": what main's tree has there


@record
class SquashedSync:
    """Dev commits that carry main's commits without main as a parent."""

    kind: str  # "squash" (one dev commit carries many) or "rebase" (consecutive dev commits, one each)
    dev_commits: tuple[str, ...]  # oldest first
    subject: str  # the (first) dev commit's subject: untrusted text
    time: int
    carried: tuple[str, ...]  # main's commits carried, in main's order
    left_out: tuple[str, ...]  # main's commits up to the newest carried that could have been, and were not
    newest_main: str  # the newest main commit carried: `git merge -s ours` of it records main as merged
    paths: int = 0  # distinct paths at which the copies match main's writes (the evidence)

    @property
    def eligible(self) -> int:
        return len(self.carried) + len(self.left_out)


@record
class SquashScan:
    """What was read and found: the findings, and whether a history was cut at its newest commits."""

    findings: tuple[SquashedSync, ...] = ()
    truncated: bool = False
    read: tuple[int, int] = field(default=(0, 0))  # (main's commits, dev's commits) read
    error: str = ""  # the histories could not be read: why (nothing was looked at)
    files_cut: int = 0  # commits that wrote more paths than were read of them
    dropped: tuple[DroppedChange, ...] = ()  # what the repair of the newest finding would drop
    dropped_cut: bool = False  # the comparison behind `dropped` reached its bound

    @property
    def left_out(self) -> int:
        """main's commits up to the newest carried that no finding carried: a repair counts them as merged too."""
        return sum(len(f.left_out) for f in self.findings)


def _writes(commit: HistoryCommit) -> list[tuple[str, str]]:
    """(path, blob) the commit wrote that can be evidence: not deletions, not the empty file."""
    return [(path, blob) for path, blob in commit.changes.items() if blob is not None and blob not in EMPTY_BLOBS]


class _Main:
    """main's commits after the merge-base, oldest first, indexed by what they wrote."""

    def __init__(self, commits: Sequence[HistoryCommit]) -> None:
        self.commits = list(commits)
        self.by_write: dict[tuple[str, str], list[int]] = {}
        touches: dict[str, list[int]] = {}
        for index, commit in enumerate(self.commits):
            for path in commit.changes:
                touches.setdefault(path, []).append(index)
            for write in _writes(commit):
                self.by_write.setdefault(write, []).append(index)
        self.writes = [bool(_writes(c)) for c in self.commits]
        # the newest main commit at which commit i's content still shows somewhere (-1: never)
        self.survives_until: list[float] = []
        for index, commit in enumerate(self.commits):
            until: float = -1
            for path, _ in _writes(commit):
                later = touches[path]
                position = bisect.bisect_right(later, index)
                until = max(until, later[position] - 1 if position < len(later) else float("inf"))
            self.survives_until.append(until)

    def carried_by(self, commit: HistoryCommit, floor: int) -> dict[int, str]:
        """main's commits after floor, landed no later than commit, whose write it repeats exactly: {index: path}."""
        found: dict[int, str] = {}
        for write in _writes(commit):
            for index in self.by_write.get(write, ()):
                if index > floor and self.commits[index].time <= commit.time:
                    found.setdefault(index, write[0])
        return found

    def matched_paths(self, commit: HistoryCommit, floor: int) -> int:
        """How many of the commit's paths repeat a write of main's it carries."""
        return sum(1 for write in _writes(commit) if any(i > floor and self.commits[i].time <= commit.time for i in self.by_write.get(write, ())))

    def moved_on(self, newest: int, when: int) -> int:
        """main's commits after newest that were on main well before `when` (a sync would have had them)."""
        return sum(1 for i in range(newest + 1, len(self.commits)) if self.writes[i] and self.commits[i].time <= when - REVIEW_GRACE)


def squashed_syncs(main: Sequence[HistoryCommit], dev: Sequence[HistoryCommit]) -> list[SquashedSync]:
    """Squash- and rebase-merged syncs among dev's first-parent non-merge commits after the
    merge-base (oldest first), against main's non-merge commits after it (oldest first)."""
    index = _Main(main)
    found: list[SquashedSync] = []
    floor = -1  # main's newest commit already reported as carried: the next finding starts after it
    run: list[tuple[HistoryCommit, int, str]] = []  # consecutive dev commits carrying one main commit each (and where)

    def close_run() -> None:
        nonlocal floor
        carried = sorted(i for _, i, _ in run if i > floor)
        if len(carried) >= MIN_CARRIED:
            newest = carried[-1]
            # one by one, every main commit with content could have been copied (none is overwritten)
            eligible = {i for i in range(floor + 1, newest + 1) if index.writes[i]} | set(carried)
            last = run[-1][0]
            if _covers(len(carried), len(eligible), lambda: index.moved_on(newest, last.time)):
                found.append(_finding("rebase", [c for c, _, _ in run], carried, eligible, index, len({p for _, _, p in run})))
                floor = newest
        run.clear()

    for commit in dev:
        carried = index.carried_by(commit, floor)
        if len(carried) == 1 and (not run or min(carried) > run[-1][1]):
            run.append((commit, *next(iter(carried.items()))))
            continue
        if run:
            close_run()
            carried = index.carried_by(commit, floor)  # the run may have moved the floor
        if len(carried) == 1:  # out of main's order: a new run starts here
            run.append((commit, *next(iter(carried.items()))))
            continue
        paths = index.matched_paths(commit, floor)
        if len(carried) < MIN_CARRIED or paths < MIN_CARRIED:
            continue  # one path repeating main's blob twice (a revert reapplied) is one coincidence
        newest = max(carried)
        # a squash holds main's content at `newest`: what was overwritten by then cannot show
        eligible = {i for i in range(floor + 1, newest + 1) if index.survives_until[i] >= newest} | set(carried)
        if _covers(len(carried), len(eligible), lambda: index.moved_on(newest, commit.time)):
            found.append(_finding("squash", [commit], sorted(carried), eligible, index, paths))
            floor = newest
    close_run()
    return found


def _covers(carried: int, eligible: int, moved_on: Callable[[], int]) -> bool:
    """At least half of what the copy could have carried, counting main's commits it left out though
    they were on main well before it (asked only when the rest holds: it walks main's newer commits)."""
    return 2 * carried >= eligible and 2 * carried >= eligible + moved_on()


def _finding(kind: str, commits: list[HistoryCommit], carried: list[int], eligible: set[int], index: _Main, paths: int) -> SquashedSync:
    shas = index.commits
    return SquashedSync(
        kind,
        tuple(c.sha for c in commits),
        commits[0].subject,
        commits[-1].time,
        tuple(shas[i].sha for i in carried),
        tuple(shas[i].sha for i in sorted(eligible - set(carried))),
        shas[carried[-1]].sha,
        paths,
    )


def landed(main: Sequence[HistoryCommit]) -> list[HistoryCommit]:
    """main's commits (newest first, merges included, as `git log --topo-order` gives them) with
    the time each landed on main's first-parent chain: the chain commit that first reached it,
    never earlier than the chain commit before that one. A commit's own (author-set) date is
    never its time: a PR author can date a copy of dev's work before dev made it."""
    if not main:
        return []
    known = {c.sha: c for c in main}
    chain: list[str] = []  # tip first
    sha: str | None = main[0].sha
    while sha is not None and sha in known and len(chain) < len(known):
        chain.append(sha)
        parents = known[sha].parents
        sha = parents[0] if parents else None
    order = {sha: len(chain) - 1 - i for i, sha in enumerate(chain)}  # 0: the oldest chain commit
    reached: dict[str, int] = dict(order)
    for commit in main:  # children before parents: a commit lands with the oldest chain commit above it
        here = reached.get(commit.sha)
        if here is None:
            continue
        for parent in commit.parents:
            if parent in known and parent not in order:
                reached[parent] = min(reached.get(parent, here), here)
    times: list[int] = []
    floor = 0
    for sha in reversed(chain):  # oldest first: a chain commit dated before the one under it lands at that one's time
        floor = max(floor, known[sha].time)
        times.append(floor)
    unreached = max(times) if times else 0  # not on the chain's walk (past the bound): the latest, never evidence early
    return [_at(c, times[reached[c.sha]] if c.sha in reached else unreached) for c in main]


def _at(commit: HistoryCommit, time: int) -> HistoryCommit:
    """The commit with another time (dataclasses.replace costs ten times this, per commit)."""
    return commit if commit.time == time else HistoryCommit(commit.sha, time, commit.subject, commit.changes, commit.parents, commit.files_cut)


def dev_landed(dev: Sequence[HistoryCommit]) -> list[HistoryCommit]:
    """dev's first-parent commits (newest first) with times never later than the next one's: a
    commit dated in the future cannot make main's later commits look older than it."""
    out: list[HistoryCommit] = []
    ceiling: float = float("inf")
    for commit in dev:
        ceiling = min(ceiling, commit.time)
        out.append(_at(commit, int(ceiling)))
    return out


def scan(main: Sequence[HistoryCommit], dev: Sequence[HistoryCommit], main_landed: Sequence[HistoryCommit] | None = None) -> list[SquashedSync]:
    """squashed_syncs on the histories as the shell reads them (newest first, merges included);
    main_landed: landed(main), when the caller has it already."""
    main_commits = [c for c in (landed(main) if main_landed is None else main_landed) if len(c.parents) <= 1]
    dev_commits = [c for c in dev_landed(dev) if len(c.parents) <= 1]
    return squashed_syncs(main_commits[::-1], dev_commits[::-1]) if main_commits and dev_commits else []


def dropped_change(path: str, main_blob: str | None) -> DroppedChange:
    """What main's tree has at a path dev has differently."""
    kind = "deleted" if main_blob is None else "emptied" if main_blob in EMPTY_BLOBS else "changed"
    return DroppedChange(path, kind)
