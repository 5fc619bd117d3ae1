"""Replay reconcile on Megatron-LM's own syncs of main into dev, judged by what its maintainers did.

A sync S is a first-parent merge on dev whose first parent D is dev's (not on main's history) and
which brings main in: its second parent is on main's history, or (the sync PRs) its second
parent is a PR branch with a merge whose second parent is on main's history. M is the newest
main commit the sync merged. The last --count syncs where pyproject.toml changed on either side
since merge-base(D, M) are replayed, each in a temp repository that borrows the mirror's objects
(git alternates: the whole tree and history, nothing copied):

- `depsync check` on D's clean checkout, twice with one fresh XDG_CACHE_HOME: cold, then warm;
- `git checkout -b sync D; git merge --no-commit --no-ff M` (nothing resolved), then
  `depsync reconcile --no-lock --no-fetch --dev D --main M --plan-json`, with another fresh
  XDG_CACHE_HOME (cold); the merge is redone and reconcile run again with that cache (warm);
  the merge is redone once more for `--default-side main` (warm cache).

Judged per entry main changed that dev does not have (a requirement of a table, a source, an
index, a conflict set, a metadata entry, any other leaf key of pyproject.toml: the units of
bench/replay_real.py, compared the same way): the maintainers' answer is "main's" when S landed
main's value, or dev's first-parent commits within --days days after S (committer dates) gave the
entry main's value; otherwise it is what S landed (not main's). depsync agrees when its result has
main's value exactly when the answer is main's. A disagreement is flagged when a plan entry
naming the unit needs review, silent otherwise; a main change not taken is "dropped" (unflagged:
named in the plan as not taken, or not named at all).

    python bench/replay_megatron.py [--mirror /work/.mirror/NVIDIA+Megatron-LM/repo] [--count 15]
        [--days 14] [--sync SHA ...] [--keep] [--json out.json]

bench/results/replay-megatron.txt is a run's output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from replay_real import DEPSYNC, Plan, _req, _show, dotted, git, req_tables, units  # noqa: E402

MIRROR = Path("/work/.mirror/NVIDIA+Megatron-LM/repo")
DAY = 86_400
Unit = tuple[str, ...]


# -- the syncs ---------------------------------------------------------------------------------

@dataclass
class Sync:
    sync: str  # S: the merge on dev's first-parent line
    dev: str  # D: S's first parent
    main: str  # M: the newest main commit S merged
    base: str  # merge-base(D, M)
    date: int  # S's committer date
    subject: str
    dev_touched: bool
    main_touched: bool


def find_syncs(mirror: Path, dev: str, main: str) -> list[Sync]:
    """Every sync of main into dev, newest first."""
    on_main = set(git(mirror, "rev-list", main).split())
    out = []
    for line in git(mirror, "log", "--first-parent", "--merges", "--format=%H %P", dev).splitlines():
        sync, first, second, *_ = line.split()
        if first in on_main:  # dev's history before it forked from main
            continue
        brought = [second] if second in on_main else [
            parents[2] for parents in (row.split() for row in git(mirror, "rev-list", "--merges", "--parents", second, f"^{first}").splitlines())
            if parents[2] in on_main and parents[1] not in on_main
        ]
        if not brought:
            continue
        tips = [c for c in set(brought) if not any(c != o and subprocess.run(["git", "--git-dir", str(mirror), "merge-base", "--is-ancestor", c, o], check=False).returncode == 0 for o in set(brought))]
        newest = max(tips, key=lambda c: int(git(mirror, "log", "-1", "--format=%ct", c)))
        base = git(mirror, "merge-base", first, newest).strip()
        touched = lambda side: bool(git(mirror, "diff", "--name-only", base, side, "--", "pyproject.toml").strip())  # noqa: E731
        date, subject = git(mirror, "log", "-1", "--format=%ct %s", sync).strip().split(" ", 1)
        out.append(Sync(sync, first, newest, base, int(date), subject, touched(first), touched(newest)))
    return out


def pyproject_at(mirror: Path, commit: str) -> dict[str, Any]:
    return tomllib.loads(git(mirror, "show", f"{commit}:pyproject.toml"))


_PARSED: dict[str, dict[str, Any] | None] = {}  # pyproject blob -> its data (None: does not parse)


def later_dev(mirror: Path, dev: str, sync: Sync) -> list[tuple[str, int, str, dict[str, Any]]]:
    """dev's first-parent commits after S that changed pyproject.toml, oldest first: (sha, date, subject, data)."""
    rows = [(row.split(" ", 2) + [""])[:3] for row in git(mirror, "log", "--first-parent", "--reverse", "--format=%H %ct %s", f"{sync.sync}..{dev}").splitlines()]
    query = "".join(f"{sha}:pyproject.toml\n" for sha, _, _ in [(sync.sync, 0, ""), *rows]).encode()
    blobs = [line.split()[0] for line in git(mirror, "cat-file", "--batch-check", data=query).splitlines()]
    out, last_blob = [], blobs[0]
    for (sha, date, subject), blob in zip(rows, blobs[1:], strict=True):
        if blob == last_blob or not blob.isalnum():  # "<rev>:pyproject.toml missing": no such file
            continue
        last_blob = blob
        if blob not in _PARSED:
            try:
                _PARSED[blob] = tomllib.loads(git(mirror, "cat-file", "blob", blob))
            except tomllib.TOMLDecodeError:
                _PARSED[blob] = None
        if _PARSED[blob] is not None:
            out.append((sha, int(date), subject, _PARSED[blob]))
    return out


# -- judging -----------------------------------------------------------------------------------

def raw(data: Mapping[str, Any] | None, unit: Unit) -> Any:
    """The entry as the file writes it (requirement strings, not their parsed form)."""
    if data is None:
        return None
    if unit[0] == "req":
        items = [x for x in req_tables(data).get(unit[1], []) if (isinstance(x, str) and _req(x)[0] == unit[2]) or (isinstance(x, Mapping) and "include-group:" + str(x.get("include-group")) == unit[2])]
        return (items[0] if len(items) == 1 else items) if items else None
    if unit[0] == "source":
        return next((v for k, v in (data.get("tool", {}).get("uv", {}).get("sources") or {}).items() if _req(k)[0] == unit[1]), None)
    return units(data).get(unit)


def case_of(b: Any, d: Any, m: Any) -> str:
    if d != b:
        return "conflict"
    return "main-added" if b is None else "main-removed" if m is None else "main-changed"


def label(unit: Unit) -> str:
    return f"{unit[0]} {dotted(unit[1:]) if unit[0] == 'key' else ' '.join(unit[1:])}"


@dataclass
class Verdict:
    unit: Unit
    case: str
    answer_main: bool
    adopted: str  # "" when S itself landed main's value or the answer is not main's; else the adopting commit
    eventually: str  # when S did not land main's value: the first later dev commit (any time) that has it, and how long after S
    took_main: bool
    flagged: bool
    named: bool
    rule: str
    values: dict[str, Any]  # base, dev, main, landed, result (as written)
    elsewhere: str  # a requirement: the other tables that declare the package on dev and on main
    evidence: list[str]  # the plan's evidence for the entries naming the unit (the first two, shortened)

    @property
    def agrees(self) -> bool:
        return self.took_main == self.answer_main


@dataclass
class Run:
    side: str
    exit_code: int = 0
    seconds: float = 0.0
    stderr: str = ""
    verdicts: list[Verdict] = field(default_factory=list)


def declared_in(data: Mapping[str, Any], name: str) -> list[str]:
    return [table for table, items in req_tables(data).items() if any(isinstance(x, str) and _req(x)[0] == name for x in items)]


def locked_versions(lock_text: str) -> dict[str, list[str]]:
    """Package name -> the versions a uv.lock resolves it to."""
    out: dict[str, list[str]] = {}
    for package in tomllib.loads(lock_text).get("package") or []:
        out.setdefault(canonicalize_name(str(package.get("name"))), []).append(str(package.get("version")))
    return out


def against_lock(main_text: Any, locked: Sequence[str]) -> str:
    """Whether main's requirement still admits what dev's lock resolves."""
    if not locked:
        return "not in dev's lock"
    try:
        spec = Requirement(str(main_text)).specifier if isinstance(main_text, str) else None
    except InvalidRequirement:
        spec = None
    shown = ", ".join(locked)
    if spec is None or not str(spec):
        return f"dev's lock has {shown}"
    try:
        admits = any(spec.contains(Version(v), prereleases=True) for v in locked)
    except InvalidVersion:
        return f"dev's lock has {shown}"
    return f"dev's lock has {shown}, which main's specifier {'admits' if admits else 'EXCLUDES'}"


def judge(base: dict[str, Any], dev: dict[str, Any], main: dict[str, Any], landed: dict[str, Any], later: Sequence[tuple[str, int, str, dict[str, Any]]], synced: int, days: int, result: dict[str, Any] | None, plan: Plan, locked: Mapping[str, Sequence[str]] | None = None) -> list[Verdict]:
    """Every entry main changed that dev does not have, against the maintainers' answer (dev's
    adoption of main's value counts up to `days` after `synced`, S's committer date)."""
    ub, ud, um, us, ur = units(base), units(dev), units(main), units(landed), units(result)
    ul = [(sha, date, subject, units(data)) for sha, date, subject, data in later]
    out = []
    for unit in sorted(set(ub) | set(um), key=repr):
        b, d, m = ub.get(unit), ud.get(unit), um.get(unit)
        if m == b or m == d:  # main did not change it, or dev has main's change already
            continue
        first = next(((sha, date, subject) for sha, date, subject, u in ul if u.get(unit) == m), None)
        landed_main = us.get(unit) == m
        adopter = f"{first[0][:10]} {first[2][:60]}" if first and first[1] <= synced + days * DAY and not landed_main else ""
        eventually = "" if landed_main else "never (up to dev's tip)" if first is None else f"{first[0][:10]}, {(first[1] - synced) / DAY:.0f} days after S"
        naming = plan.naming(unit)
        elsewhere = ""
        if unit[0] == "req":
            other = lambda data: [t for t in declared_in(data, unit[2]) if t != unit[1]]  # noqa: E731
            elsewhere = f"dev also declares it in {other(dev) or 'no other table'}; main in {other(main) or 'no other table'}"
            if locked is not None:
                elsewhere += f"; {against_lock(raw(main, unit), (locked or {}).get(unit[2], []))}"
        out.append(Verdict(
            unit, case_of(b, d, m), landed_main or bool(adopter), adopter, eventually, ur.get(unit) == m,
            plan.flags(unit), plan.names_not_taken(unit),
            ", ".join(sorted({str(e.get("rule") or e.get("case")) for e in naming})) or "not in the plan",
            {"base": raw(base, unit), "dev": raw(dev, unit), "main": raw(main, unit), "landed": raw(landed, unit), "result": raw(result, unit)},
            elsewhere, [str(x)[:160] for e in naming for x in e.get("evidence") or []][:2],
        ))
    return out


# -- one replay --------------------------------------------------------------------------------

def clean_env(cache: Path) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on some machines) would compile every module on every run:
    # an installed depsync has its bytecode, as both the check and the reconcile measured here
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "DEPSYNC_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["PATH"] = f"{DEPSYNC.parent}:{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def timed(cmd: Sequence[str], cwd: Path, env: Mapping[str, str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    done = subprocess.run(list(cmd), cwd=cwd, env=dict(env), capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done


@dataclass
class Replay:
    sync: Sync
    build_seconds: float = 0.0
    check_cold: float = 0.0
    check_warm: float = 0.0
    check_exit: int = 0
    reconcile_warm: float = 0.0
    git_conflicts: int = 0
    pyproject_conflicted: bool = False
    runs: list[Run] = field(default_factory=list)
    error: str = ""


def replay(mirror: Path, sync: Sync, later: Sequence[tuple[str, int, str, dict[str, Any]]], days: int, keep: bool) -> Replay:
    out = Replay(sync)
    tmp = Path(tempfile.mkdtemp(prefix="replay-megatron-"))
    work = tmp / "repo"
    try:
        started = time.perf_counter()
        git(None, "init", "-q", "-b", "sync", str(work))
        (work / ".git" / "objects" / "info" / "alternates").write_text(f"{mirror / 'objects'}\n")
        for key, value in (("user.name", "replay"), ("user.email", "replay@example.invalid"), ("commit.gpgsign", "false"), ("merge.renames", "true")):
            git(None, "config", key, value, cwd=work)
        git(None, "update-ref", "refs/heads/dev", sync.dev, cwd=work)
        git(None, "update-ref", "refs/heads/main", sync.main, cwd=work)
        git(None, "checkout", "-q", "-B", "sync", sync.dev, cwd=work)
        out.build_seconds = time.perf_counter() - started
        check_env = clean_env(tmp / "cache-check")
        out.check_cold, done = timed([str(DEPSYNC), "check", "--color", "never", "-q"], work, check_env)
        out.check_warm, _ = timed([str(DEPSYNC), "check", "--color", "never", "-q"], work, check_env)
        out.check_exit = done.returncode
        base, dev, main = (pyproject_at(mirror, c) for c in (sync.base, sync.dev, sync.main))
        landed = pyproject_at(mirror, sync.sync)
        locked = locked_versions(git(mirror, "show", f"{sync.dev}:uv.lock"))
        reconcile_env = clean_env(tmp / "cache-reconcile")
        for side, cache_run in (("dev", "cold"), ("dev", "warm"), ("main", "warm")):
            git(None, "reset", "-q", "--hard", sync.dev, cwd=work)
            git(None, "clean", "-qfdx", cwd=work)
            git(None, "merge", "--no-commit", "--no-ff", "-q", "main", cwd=work, check=False)
            conflicted = git(None, "diff", "--name-only", "--diff-filter=U", cwd=work).split()
            out.git_conflicts, out.pyproject_conflicted = len(conflicted), "pyproject.toml" in conflicted
            plan_path = tmp / f"plan-{side}-{cache_run}.json"
            seconds, done = timed([str(DEPSYNC), "reconcile", "--no-lock", "--no-fetch", "--dev", sync.dev, "--main", sync.main, "--plan-json", str(plan_path), "--summary", str(tmp / f"summary-{side}.md"), "--color", "never", "-q", *(["--default-side", "main"] if side == "main" else [])], work, reconcile_env)
            if side == "dev" and cache_run == "warm":
                out.reconcile_warm = seconds
                continue
            run = Run(side, done.returncode, seconds, done.stderr.strip())
            out.runs.append(run)
            if done.returncode >= 2 or not plan_path.exists():
                continue
            try:
                result = tomllib.loads((work / "pyproject.toml").read_text())
            except (OSError, tomllib.TOMLDecodeError) as error:
                run.stderr += f"\nresult pyproject.toml: {error}"
                result = None
            run.verdicts = judge(base, dev, main, landed, later, sync.date, days, result, Plan(json.loads(plan_path.read_text())), locked)
    except Exception as error:  # noqa: BLE001 - one broken replay is reported, the rest run
        out.error = f"harness: {error}"
    finally:
        if keep:
            print(f"  kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return out


# -- the report --------------------------------------------------------------------------------

@dataclass
class Tally:
    changes: int = 0
    agree: int = 0
    flagged_disagree: int = 0
    silent_disagree: int = 0
    dropped_unflagged: int = 0
    dropped_unnamed: int = 0
    flagged: int = 0
    answer_main: int = 0
    adopted_later: int = 0

    def add(self, verdicts: Sequence[Verdict]) -> Tally:
        for v in verdicts:
            self.changes += 1
            self.agree += v.agrees
            self.flagged_disagree += (not v.agrees) and v.flagged
            self.silent_disagree += (not v.agrees) and not v.flagged
            self.dropped_unflagged += (not v.took_main) and not v.flagged
            self.dropped_unnamed += (not v.took_main) and not v.flagged and not v.named
            self.flagged += v.flagged
            self.answer_main += v.answer_main
            self.adopted_later += bool(v.adopted)
        return self

    def row(self, name: str) -> str:
        pct = lambda n: f"{n / self.changes:.0%}" if self.changes else "-"  # noqa: E731
        return (f"| {name} | {self.changes} | {self.answer_main} ({self.adopted_later} later) | {self.agree} ({pct(self.agree)}) | {self.flagged_disagree} | "
                f"{self.silent_disagree} | {self.dropped_unflagged} ({self.dropped_unnamed} unnamed) | {self.flagged} ({pct(self.flagged)}) |")


HEAD = ("sync", "main's changes", "answer main's (adopted later)", "decided as maintainers", "disagree flagged", "disagree silent", "main's dropped unflagged (not named)", "flagged (rate)")


def table(replays: Sequence[Replay], side: str) -> list[str]:
    lines = ["| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    total = Tally()
    for r in replays:
        run = next((x for x in r.runs if x.side == side), None)
        if run is None:
            lines.append(f"| {r.sync.sync[:10]} | harness: {r.error} |")
            continue
        verdicts = run.verdicts
        total.add(verdicts)
        lines.append(Tally().add(verdicts).row(f"{r.sync.sync[:10]} exit {run.exit_code}"))
    lines.append(total.row("**total**"))
    every = [v for r in replays for run in r.runs if run.side == side for v in run.verdicts]
    if every:
        share = lambda n: f"{n} ({n / len(every):.0%})"  # noqa: E731
        procedure = sum(v.answer_main == (v.unit[0] == "source" and v.case == "main-added") for v in every)
        lines.append(f"\nbaselines on the same {len(every)} changes, decided as the maintainers did: dev's file {share(sum(not v.answer_main for v in every))}, "
                     f"main's file {share(sum(v.answer_main for v in every))}, the written procedure (dev's file plus main's new sources) {share(procedure)}")
    return lines


def kind_of(v: Verdict) -> str:
    direction = "dropped main's change the maintainers took" if v.answer_main else "took main's change the maintainers did not"
    return f"{direction}; {v.case} {v.unit[0]}; rule {v.rule}"


def mistake_of(v: Verdict) -> str:
    """A rough name for what went wrong (heuristic: from the unit, the case and the annotations)."""
    if v.answer_main:
        return "main's change dropped without a flag"
    if v.unit[0] == "req" and "EXCLUDES" in v.elsewhere:
        return "main's specifier excludes the version dev's lock resolves, taken"
    if v.unit[0] == "req" and v.case == "main-added" and "dev also declares it in [" in v.elsewhere:
        return "main added a package dev already declares in another table, taken"
    if v.unit[0] == "table" and v.case == "main-added":
        return "main added a table (for packages dev declares elsewhere), taken"
    if v.unit[0] == "req" and v.case == "main-removed":
        return "main removed an entry of a table dev keeps, removal taken"
    if v.unit[0] == "conflict" and v.case == "main-removed":
        return "main removed a resolver entry naming a table dev keeps, removal taken"
    if v.unit[0] == "req" and v.case == "main-added" and "dev's lock has" in v.elsewhere:
        return "main added a direct requirement for a package dev's lock already has, taken"
    if v.unit[0] == "key":
        return "a setting outside the dependency surface, three-way: main's taken"
    return f"other: {v.case} {v.unit[0]}, taken"


def silent(replays: Sequence[Replay], side: str) -> list[str]:
    groups: dict[str, list[str]] = {}
    for r in replays:
        for run in (x for x in r.runs if x.side == side):
            for v in run.verdicts:
                if v.agrees or v.flagged:
                    continue
                vals = v.values
                line = (f"{r.sync.sync[:10]} {label(v.unit)}: main {_show(vals['main'])}; dev {_show(vals['dev'])}; landed {_show(vals['landed'])}; "
                        f"base {_show(vals['base'])}; depsync {_show(vals['result'])}" + (f"; main's adopted by {v.adopted}" if v.adopted else "")
                        + (f"; main's value on dev: {v.eventually}" if v.eventually else "") + (f"; {v.elsewhere}" if v.elsewhere else "") + "".join(f"\n      evidence: {x}" for x in v.evidence))
                groups.setdefault(kind_of(v), []).append(line)
    quiet = [v for r in replays for run in r.runs if run.side == side for v in run.verdicts if not v.agrees and not v.flagged]
    later = sum(not v.answer_main and not v.eventually.startswith("never") for v in quiet)
    out = [f"{len(quiet)} silent; {later} of those where depsync took main's value reached dev after the window"]
    mistakes: dict[str, int] = {}
    for v in quiet:
        mistakes[mistake_of(v)] = mistakes.get(mistake_of(v), 0) + 1
    out += [f"  {n:3d}  {name}" for name, n in sorted(mistakes.items(), key=lambda x: -x[1])]
    for kind, lines in sorted(groups.items(), key=lambda x: (-len(x[1]), x[0])):
        out.append(f"\n{kind} ({len(lines)}):")
        out += [f"  {line}" for line in lines]
    return out


def report(replays: Sequence[Replay], days: int) -> None:
    print(f"{len(replays)} syncs of NVIDIA/Megatron-LM main into dev; the maintainers' answer: S's pyproject.toml, or main's value when dev took it within {days} days")
    print("D = S's first parent (dev when the sync landed), M = the newest main commit S merged (S's second parent, or in a sync PR the main side of its merge)")
    print("XDG_CACHE_HOME: per sync, one fresh directory for the two checks (cold, warm), another for the three reconciles (cold, then warm twice)")
    for r in replays:
        s = r.sync
        when = time.strftime("%Y-%m-%d", time.gmtime(s.date))
        print(f"\n== {s.sync[:10]} {when} {s.subject[:70]}")
        print(f"   D {s.dev[:10]} M {s.main[:10]} base {s.base[:10]}; pyproject changed on {'dev' if s.dev_touched else ''}{' and ' if s.dev_touched and s.main_touched else ''}{'main' if s.main_touched else ''}; "
              f"git conflicts {r.git_conflicts}{' (pyproject.toml among them)' if r.pyproject_conflicted else ''}; repo built in {r.build_seconds:.2f}s")
        if r.error:
            print(f"   {r.error}")
        print(f"   check on D: cold {r.check_cold:.2f}s, warm {r.check_warm:.2f}s (exit {r.check_exit}); reconcile: cold {next((x.seconds for x in r.runs if x.side == 'dev'), 0):.2f}s, warm {r.reconcile_warm:.2f}s, --default-side main (warm) {next((x.seconds for x in r.runs if x.side == 'main'), 0):.2f}s")
        for run in r.runs:
            if run.exit_code >= 2:
                print(f"   {run.side}: exit {run.exit_code}: {run.stderr[-500:]}")
            wrong = [v for v in run.verdicts if not v.agrees]
            print(f"   default-side {run.side}: {len(run.verdicts)} main changes, {len(run.verdicts) - len(wrong)} decided as the maintainers did")
            for v in wrong:
                print(f"     {'FLAGGED' if v.flagged else 'SILENT '} {label(v.unit)} [{v.case}; {v.rule}]: answer {'main' if v.answer_main else 'not main'}{' (adopted ' + v.adopted + ')' if v.adopted else ''}, depsync {'main' if v.took_main else 'not main'}")
    for side in ("dev", "main"):
        print(f"\n### default-side {side}{' (reconcile default)' if side == 'dev' else ''}\n")
        print("\n".join(table(replays, side)))
        kinds: dict[str, int] = {}
        for r in replays:
            for run in (x for x in r.runs if x.side == side):
                for v in run.verdicts:
                    kinds[f"{v.case} {v.unit[0]}"] = kinds.get(f"{v.case} {v.unit[0]}", 0) + 1
        print("\nmain's changes by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda x: -x[1])))
        print(f"\nsilent disagreements (default-side {side}), by kind:")
        print("\n".join(silent(replays, side)))
    timing(replays)


def timing(replays: Sequence[Replay]) -> None:
    ran = [r for r in replays if r.runs]
    if not ran:
        return
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    cold_check, warm_check = [r.check_cold for r in ran], [r.check_warm for r in ran]
    cold_rec, warm_rec = [r.runs[0].seconds for r in ran], [r.reconcile_warm for r in ran]
    ratio_warm = [r.reconcile_warm / r.check_warm for r in ran if r.check_warm]
    ratio_cold = [r.runs[0].seconds / r.check_cold for r in ran if r.check_cold]
    print("\n### wall time (s), medians over the syncs (max)\n")
    print("| what | median | max |\n|---|---|---|")
    for name, xs in (("depsync check on D, cold cache", cold_check), ("depsync check on D, warm cache", warm_check), ("reconcile --no-lock --no-fetch, cold cache", cold_rec), ("reconcile, warm cache (same merge again)", warm_rec), ("temp repository (alternates) + checkout of D", [r.build_seconds for r in ran])):
        print(f"| {name} | {med(xs):.2f} | {max(xs):.2f} |")
    # the goals are against a cold check: a warm (second) reconcile <= 3x, a cold one <= 8x;
    # warm/warm is shown too (a warm check replays its cached result, so it is the strictest)
    ratio_warm_cold = [r.reconcile_warm / r.check_cold for r in ran if r.check_cold]
    print(f"| reconcile warm / check cold (goal <= 3x) | {med(ratio_warm_cold):.1f}x | {max(ratio_warm_cold):.1f}x |")
    print(f"| reconcile cold / check cold (goal <= 8x) | {med(ratio_cold):.1f}x | {max(ratio_cold):.1f}x |")
    print(f"| reconcile warm / check warm | {med(ratio_warm):.1f}x | {max(ratio_warm):.1f}x |")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=MIRROR, help="a bare mirror of NVIDIA/Megatron-LM")
    parser.add_argument("--dev", default="dev")
    parser.add_argument("--main", default="main")
    parser.add_argument("--count", type=int, default=15, help="the newest syncs replayed")
    parser.add_argument("--days", type=int, default=14, help="how long after S dev's adoption of main's value counts")
    parser.add_argument("--sync", action="append", default=[], help="only the syncs whose S starts with this")
    parser.add_argument("--keep", action="store_true", help="keep the temp repositories")
    parser.add_argument("--json", type=Path, help="write every verdict here")
    args = parser.parse_args(argv)
    if not args.mirror.is_dir():
        print(f"no mirror at {args.mirror}")
        return 2
    syncs = [s for s in find_syncs(args.mirror, args.dev, args.main) if s.dev_touched or s.main_touched][: args.count]
    if args.sync:
        syncs = [s for s in syncs if any(s.sync.startswith(p) for p in args.sync)]
    replays = []
    load = os.getloadavg()[0]
    for sync in syncs:
        r = replay(args.mirror, sync, later_dev(args.mirror, args.dev, sync), args.days, args.keep)
        replays.append(r)
        print(f"{sync.sync[:10]}: {len(r.runs[0].verdicts) if r.runs else 0} main changes judged {r.error}", file=sys.stderr, flush=True)
    report(replays, args.days)
    print(f"\nload average (1 min) before {load:.2f}, after {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores, shared)")
    if args.json:
        args.json.write_text(json.dumps([{"sync": vars(r.sync), "runs": [{"side": x.side, "exit": x.exit_code, "seconds": x.seconds, "verdicts": [{**vars(v), "agrees": v.agrees} for v in x.verdicts]} for x in r.runs]} for r in replays], indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
