"""Replay reconcile on generated main/dev histories whose right answer is known.

Each scenario is a real git history, written with `git fast-import`:

- upstream source repositories (`file://`), one per package: a main line and release
  branches forking off it, so a pin can move forward on its line, jump to another
  branch (diverged) or move back;
- a project whose `main` and `dev` branches live through several sync cycles. Main bumps
  pins, re-pins them to another branch, adds and removes sources. Dev chooses its own pins
  (ownership passes to dev), copies main's pin (hands it back), removes sources, starts
  depending on packages from the index, merges feature branches, and makes unrelated
  commits. Each sync merges main into dev, resolved the way a maintainer would;
- a final sync, evaluated: for every entry dev and main disagree on, the maintainer's
  decision comes from what the generator knows (who owns the pin, which upstream commit
  descends from which), never from git; reconcile's plan must find it from the history.

The maintainer's rules: take main's forward move on the same line; keep dev's
on diverged branches, on a move back, or when dev owns the package; decline main's new
source for a package dev already depends on, or one dev removed itself; keep dev's
source when main removes one dev depends on (or owns by config); keep dev's in a conflict.

Reported per decision maker (reconcile with the evidence, reconcile offline where the
upstream repositories cannot be reached, the old literal rules, keeping dev's table):
agreement with the maintainer, flag rate, and disagreements that were not flagged.

    python bench/replay.py [--scenarios 200] [--seed 1] [--no-offline] [--misses]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

EPOCH = 1_700_000_000
LOCK = "version = 1\nrevision = 3\n"
PACKAGES = ("alpha-kernels", "beta_ops", "gamma.io", "delta-runner", "epsilon-fx", "zeta-engine")
INDEX_ONLY = ("numpy-lite", "omega-tools")  # packages dev may depend on from the index
# requirement histories: packages of the extra and the group, from the index
REQ_PACKAGES = ("tok-lib", "img-kit", "mem-saver", "kern-ops", "fmt-tool", "log-x", "viz-core", "io-fast")
DEPS = "project.dependencies"
REQ_TABLES = ("project.optional-dependencies.train", "dependency-groups.test")


def module_of(name: str) -> str:
    """The module a package's code imports (its normalized name, as depsync guesses without a dist-info)."""
    return name.replace("-", "_").replace(".", "_")


# -- upstream repositories -------------------------------------------------------------------------


@dataclass
class Upstream:
    """A package's source repository, modelled here (for the truth) and built as a real git repository."""

    name: str
    parents: dict[int, tuple[int, ...]] = field(default_factory=dict)
    branch: dict[int, str] = field(default_factory=dict)
    sha: dict[int, str] = field(default_factory=dict)
    path: Path | None = None

    def ancestors(self, node: int) -> set[int]:
        seen, todo = set(), list(self.parents[node])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(self.parents[n])
        return seen

    def forward(self, node: int, rng: random.Random) -> int | None:
        later = [n for n in self.parents if node in self.ancestors(n)]
        return rng.choice(later) if later else None

    def backward(self, node: int, rng: random.Random) -> int | None:
        earlier = sorted(self.ancestors(node))
        return rng.choice(earlier) if earlier else None

    def diverged(self, node: int, rng: random.Random) -> int | None:
        apart = [n for n in self.parents if n != node and n not in self.ancestors(node) and node not in self.ancestors(n)]
        return rng.choice(apart) if apart else None

    @property
    def url(self) -> str:
        assert self.path is not None
        return self.path.as_uri()


def make_upstream(name: str, rng: random.Random) -> Upstream:
    up = Upstream(name)
    main_line = list(range(rng.randint(8, 12)))
    for i in main_line:
        up.parents[i] = (i - 1,) if i else ()
        up.branch[i] = "main"
    next_id = len(main_line)
    for r in range(rng.randint(2, 3)):
        fork = rng.choice(main_line[1:-1])
        previous = fork
        for _ in range(rng.randint(2, 4)):
            up.parents[next_id] = (previous,)
            up.branch[next_id] = f"release-{r}"
            previous, next_id = next_id, next_id + 1
    return up


def fast_import(repo: Path, stream: str) -> dict[str, str]:
    """Run `git fast-import` on stream in a new repository; mark -> commit."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    marks = repo / ".git" / "replay-marks"
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet", f"--export-marks={marks}"], input=stream.encode(), check=True, capture_output=True)
    return dict(line.split() for line in marks.read_text().splitlines())


def _data(text: str) -> str:
    return f"data {len(text.encode())}\n{text}\n"


def build_upstream(up: Upstream, directory: Path) -> None:
    lines = []
    for node in sorted(up.parents):  # parents always have smaller ids
        lines.append(f"commit refs/heads/{up.branch[node]}\nmark :{node + 1}\ncommitter u <u@example.invalid> {EPOCH + node} +0000\n")
        lines.append(_data(f"{up.name} {node}"))
        lines += [f"from :{p + 1}\n" for p in up.parents[node][:1]]
        lines.append("M 100644 inline VERSION\n" + _data(str(node)))
    up.path = directory / f"{up.name}.git-src"
    marks = fast_import(up.path, "".join(lines))
    up.sha = {int(mark[1:]) - 1: sha for mark, sha in marks.items()}


# -- the project's history ---------------------------------------------------------------------------


@dataclass
class Side:
    sources: dict[str, int] = field(default_factory=dict)  # package -> upstream node
    deps: set[str] = field(default_factory=set)
    version: int = 0
    style: int = 0  # how the source tables are written (key order, spacing): text changes, values do not
    notes: int = 0  # a file other than pyproject.toml
    reqs: dict[str, dict[str, str]] = field(default_factory=lambda: {t: {} for t in REQ_TABLES})  # table -> package -> requirement
    code: dict[str, str] = field(default_factory=dict)  # package -> "import" | "guarded": how this side's Python code uses it

    def copy(self) -> Side:
        return Side(dict(self.sources), set(self.deps), self.version, self.style, self.notes, {t: dict(r) for t, r in self.reqs.items()}, dict(self.code))

    def value(self, table: str, name: str) -> str | None:
        if table == DEPS:
            return name if name in self.deps else None
        return self.reqs[table].get(name)

    def set(self, table: str, name: str, value: str | None) -> None:
        if table == DEPS:
            (self.deps.add if value is not None else self.deps.discard)(name)
        elif value is None:
            self.reqs[table].pop(name, None)
        else:
            self.reqs[table][name] = value


@dataclass
class Commit:
    mark: int
    branch: str
    parents: tuple[int, ...]
    time: int
    message: str
    text: str
    notes: str
    code: dict[str, str] = field(default_factory=dict)


@dataclass
class Truth:
    """One evaluated entry: the three values and what the maintainer does, with the reason."""

    name: str
    base: int | None
    dev: int | None
    main: int | None
    result: int | None
    why: str
    ff: bool | None  # main's pin descends from dev's (None: not a rev move)


@dataclass
class ReqTruth:
    """One evaluated requirement entry: (table, package), the three values, what the maintainer does."""

    table: str
    name: str
    base: str | None
    dev: str | None
    main: str | None
    result: str | None
    why: str


class Scenario:
    def __init__(self, seed: int, directory: Path, side: str = "dev") -> None:
        self.rng = rng = random.Random(seed)
        self.directory = directory
        names = rng.sample(PACKAGES, rng.randint(3, 5))
        self.upstreams = {n: make_upstream(n, rng) for n in names}
        for up in self.upstreams.values():  # the pins name real commits from the first commit on
            build_upstream(up, directory)
        self.owner = {n: "main" for n in names}
        self.config_owned = {rng.choice(names)} if rng.random() < 0.2 else set()
        for name in self.config_owned:
            self.owner[name] = "dev"
        self.removed_by_dev: set[str] = set()
        self.side = side  # the maintainer's model: "dev" owns the surface, or "main" (a branch following main)
        self.req_owner: dict[tuple[str, str], str] = {}  # (table, package) -> who chose its value on dev
        self.req_removed_by_dev: set[tuple[str, str]] = set()
        self.commits: list[Commit] = []
        self.tips: dict[str, int] = {}
        self.time = EPOCH + 10_000
        main = Side()
        for name in names:
            if rng.random() < 0.75:
                main.sources[name] = rng.randrange(len(self.upstreams[name].parents) // 2)
                main.deps.add(name)
        for table in REQ_TABLES:
            for pkg in rng.sample(REQ_PACKAGES, rng.randint(1, 3)):
                main.reqs[table][pkg] = f"{pkg}>=1.0"
                main.code[pkg] = "import"
        self.main, self.dev = main, main.copy()
        self.dev.deps |= {n for n in (*names, *INDEX_ONLY) if rng.random() < 0.3}
        self.commit("main", "base", main, ())
        self.tips["dev"] = self.tips["main"]
        self.base = main.copy()

    # -- text and commits

    def text(self, side: Side, branch: str) -> str:
        deps = ", ".join(f'"{d}"' for d in sorted(side.deps))
        lines = ['[project]\nname = "app"\n', f'version = "0.{side.version}"\n', f"dependencies = [{deps}]\n\n"]
        extra, group = (", ".join(f'"{r}"' for _, r in sorted(side.reqs[t].items())) for t in REQ_TABLES)
        lines.append(f"[project.optional-dependencies]\ntrain = [{extra}]\n\n[dependency-groups]\ntest = [{group}]\n\n")
        lines.append("# sources: upstream pins\n[tool.uv.sources]\n")
        for name, node in side.sources.items():
            key = name if name.replace("-", "").replace("_", "").isalnum() else f'"{name}"'  # `gamma.io` would be a dotted key
            url, rev = self.upstreams[name].url, self.upstreams[name].sha[node]
            table = f'{{ git = "{url}", rev = "{rev}" }}' if side.style % 2 == 0 else f'{{rev="{rev}",git="{url}"}}'
            lines.append(f"{key} = {table}\n")
        if branch != "main" and self.config_owned:
            lines.append(f"\n[tool.depsync]\nowned-by-dev = {sorted(self.config_owned)!r}\n".replace("'", '"'))
        return "".join(lines)

    def commit(self, branch: str, message: str, side: Side, parents: tuple[int, ...] | None = None) -> int:
        self.time += self.rng.randint(60, 86_400)
        mark = len(self.commits) + 1
        if parents is None:
            parents = (self.tips[branch],)
        self.commits.append(Commit(mark, branch, parents, self.time, message, self.text(side, branch), f"notes {side.notes}\n", dict(side.code)))
        self.tips[branch] = mark
        return mark

    # -- events

    def pick(self, names: list[str]) -> str | None:
        return self.rng.choice(names) if names else None

    def main_event(self) -> None:
        rng, main = self.rng, self.main
        kind = rng.choices(
            ["bump", "repin", "back", "add", "adopt", "remove", "noise", "req-add", "req-bump", "req-remove"], [5, 2.5, 0.7, 2, 1.2, 0.7, 1.5, 3, 2, 0.7]
        )[0]
        if kind.startswith("req-") and self.req_event(kind):
            return
        name = self.pick(sorted(main.sources))
        if kind in ("bump", "repin", "back") and name:
            up = self.upstreams[name]
            move = {"bump": up.forward, "repin": up.diverged, "back": up.backward}[kind](main.sources[name], rng)
            if move is not None:
                main.sources[name] = move
                self.commit("main", f"main: {kind} {name}", main)
                return
        if kind == "adopt":  # main takes dev's pin (dev's work upstreamed): dev still chose it
            name = self.pick(sorted(n for n, node in self.dev.sources.items() if main.sources.get(n) != node))
            if name:
                main.sources[name] = self.dev.sources[name]
                main.deps.add(name)
                self.commit("main", f"main: take dev's {name} pin", main)
                return
        if kind == "add":  # often a package dev takes from the index
            missing = sorted(set(self.upstreams) - set(main.sources))
            wanted = [n for n in missing if n in self.dev.deps and n not in self.dev.sources]
            name = self.pick(wanted if wanted and rng.random() < 0.5 else missing)
            if name:
                main.sources[name] = rng.randrange(len(self.upstreams[name].parents))
                if name not in main.deps and rng.random() < 0.6:  # main's code starts using it
                    main.code[name] = "import"
                main.deps.add(name)
                self.commit("main", f"main: add a source for {name}", main)
                return
        if kind == "remove" and name:
            del main.sources[name]
            self.commit("main", f"main: {name} from the index again", main)
            return
        main.version += 1
        self.commit("main", "main: unrelated change", main)

    def req_event(self, kind: str) -> bool:
        """main adds a requirement (its code imports it, guards the import, or does not use it), bumps one, removes one."""
        rng, main = self.rng, self.main
        table = rng.choice(REQ_TABLES)
        present = sorted(main.reqs[table])
        if kind == "req-add":
            name = self.pick(sorted(set(REQ_PACKAGES) - set(present)))
            if name is None:
                return False
            main.reqs[table][name] = f"{name}>=1.{rng.randint(0, 9)}"
            use = rng.choices(["import", "guarded", None], [5.5, 2, 2.5])[0]
            if use and main.code.get(name) != "import":
                main.code[name] = use
            self.commit("main", f"main: {table.rsplit('.', 1)[1]} needs {name}", main)
            return True
        name = self.pick(present)
        if name is None:
            return False
        if kind == "req-bump":
            major = int(main.reqs[table][name].split(">=")[1].split(".")[0]) + 1 if ">=" in main.reqs[table][name] else 2
            main.reqs[table][name] = f"{name}>={major}.0"
            self.commit("main", f"main: bump {name}", main)
            return True
        del main.reqs[table][name]
        if not any(name in main.reqs[t] for t in REQ_TABLES) and name not in main.deps:
            main.code.pop(name, None)  # main's code stopped using it
        self.commit("main", f"main: drop {name} from {table}", main)
        return True

    def dev_req_event(self, kind: str) -> bool:
        """dev pins a requirement its own way, drops one deliberately, or adds its own."""
        rng, dev = self.rng, self.dev
        table = rng.choice(REQ_TABLES)
        present = sorted(dev.reqs[table])
        if kind == "req-add":
            name = self.pick(sorted(set(REQ_PACKAGES) - set(present) - set(self.main.reqs[table])))
            if name is None:
                return False
            dev.reqs[table][name] = f"{name}>=0.{rng.randint(1, 9)}"
        else:
            name = self.pick(present)
            if name is None:
                return False
            if kind == "req-pin":
                dev.reqs[table][name] = f"{name}=={rng.randint(1, 5)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}"
            else:
                del dev.reqs[table][name]
                self.req_removed_by_dev.add((table, name))
        self.req_owner[(table, name)] = "dev"
        if kind != "req-drop":
            self.req_removed_by_dev.discard((table, name))
        self.commit("dev", f"dev: {kind} {name}", dev)
        return True

    def dev_choice(self, name: str) -> int | None:
        up, current = self.upstreams[name], self.dev.sources.get(name)
        if current is None:  # a pin of dev's own choosing: not the one main has
            choices = [n for n in up.parents if n != self.main.sources.get(name)]
            return self.rng.choice(choices)
        move = up.forward(current, self.rng) if self.rng.random() < 0.6 else up.diverged(current, self.rng)
        return move if move is not None and move != self.main.sources.get(name) else None

    def dev_event(self) -> None:
        rng, dev = self.rng, self.dev
        kind = rng.choices(
            ["claim", "claim-pr", "copy", "early", "remove", "depend", "reformat", "notes", "noise", "req-pin", "req-drop", "req-add"], [2, 1, 1.2, 0.5, 0.6, 1, 0.7, 1, 1, 1.2, 0.8, 0.6]
        )[0]
        if kind.startswith("req-") and self.dev_req_event(kind):
            return
        if kind in ("claim", "claim-pr"):
            name = self.pick(sorted(n for n in dev.deps if n in self.upstreams))
            node = self.dev_choice(name) if name else None
            if name and node is not None:
                dev.sources[name] = node
                self.owner[name] = "dev"
                self.removed_by_dev.discard(name)
                if kind == "claim":
                    self.commit("dev", f"dev: pin {name} for dev's work", dev)
                else:  # a feature branch merged into dev with a merge commit
                    before = self.tips["dev"]
                    feature = self.commit("feature", f"feature: {name} at a new pin", dev, (before,))
                    self.commit("dev", f"Merge pull request: {name} pin", dev, (before, feature))
                return
        if kind == "copy":
            name = self.pick(sorted(n for n, node in self.main.sources.items() if dev.sources.get(n) not in (None, node)))
            if name and name not in self.config_owned:
                dev.sources[name] = self.main.sources[name]
                self.owner[name] = "main"
                self.commit("dev", f"dev: take main's {name} pin early", dev)
                return
        if kind == "early":  # dev takes a bump of main's before main lands it: still main's pin
            name = self.pick(sorted(n for n in self.main.sources if n in dev.sources and n not in self.config_owned))
            node = self.upstreams[name].forward(self.main.sources[name], rng) if name else None
            if name and node is not None and node != dev.sources[name]:
                dev.sources[name] = node
                self.owner[name] = "main"
                self.commit("dev", f"dev: take main's coming {name} bump early", dev)
                self.main.sources[name] = node
                self.commit("main", f"main: bump {name}", self.main)
                return
        if kind == "remove":
            name = self.pick(sorted(dev.sources))
            if name:
                del dev.sources[name]
                self.owner[name] = "dev"
                self.removed_by_dev.add(name)
                self.commit("dev", f"dev: {name} from the index", dev)
                return
        if kind == "depend":
            name = self.pick(sorted(set(self.upstreams) | set(INDEX_ONLY)))
            if name and name not in dev.deps:
                dev.deps.add(name)
                self.commit("dev", f"dev: depend on {name}", dev)
                return
        if kind == "reformat":  # the same values written differently: not a change of any pin
            dev.style += 1
            self.commit("dev", "dev: reformat pyproject.toml", dev)
            return
        if kind == "notes":  # pyproject.toml untouched
            dev.notes += 1
            self.commit("dev", "dev: notes", dev)
            return
        dev.version += 1
        self.commit("dev", "dev: unrelated change", dev)

    # -- the maintainer

    def truth(self, name: str) -> Truth:
        b, d, m = self.base.sources.get(name), self.dev.sources.get(name), self.main.sources.get(name)
        up = self.upstreams[name]
        ff = None if d is None or m is None else (d == m or d in up.ancestors(m))

        def decide(result: int | None, why: str) -> Truth:
            return Truth(name, b, d, m, result, why, ff)

        if d == m:
            return decide(d, "same on both")
        if d == b:  # only main moved
            if b is None:
                if name in self.config_owned:
                    return decide(None, "main added, dev owns (config)")
                if name in self.dev.deps:
                    return decide(None, "main added, dev depends on it")
                if name in self.removed_by_dev:
                    return decide(None, "main added, dev had removed it")
                if name in self.main.deps and name not in self.base.deps:  # with a requirement: decided together
                    taken = self.req_truth(DEPS, name).result is not None
                    return decide(m if taken else None, "main added, with a requirement taken" if taken else "main added, requirement not taken")
                return decide(m, "main added, inert on dev")
            if m is None:  # a source nothing in dev depends on is inert: who chose it does not matter
                if name in self.config_owned or name in self.dev.deps:
                    return decide(d, "main removed, dev owns or depends")
                return decide(None, "main removed")
            if self.owner[name] == "dev":
                return decide(d, "main changed, dev owns it")
            if ff:
                return decide(m, "main moved forward")
            if m in up.ancestors(d):
                return decide(d, "main moved back")
            return decide(d, "main moved to a diverged line")
        if m == b:
            return decide(d, "dev changed")
        return decide(d, "both changed")

    def req_truth(self, table: str, name: str) -> ReqTruth:
        """What the maintainer does with one requirement entry (the surface's principles)."""
        key = (table, name)
        b, d, m = self.base.value(table, name), self.dev.value(table, name), self.main.value(table, name)
        uses = self.main.code.get(name)

        def decide(result: str | None, why: str) -> ReqTruth:
            return ReqTruth(table, name, b, d, m, result, why)

        if d == m:
            return decide(d, "same on both")
        if m == b:
            return decide(d, "dev changed")
        if d != b:
            return decide(d, "both changed")
        if self.side == "main":  # a branch following main takes main's change
            return decide(m, "main changed, branch follows main")
        if b is None:
            if key in self.req_removed_by_dev:
                return decide(None, "main added, dev had dropped it")
            if uses == "import":
                return decide(m, "main added, its code imports it")
            if uses == "guarded" and table != DEPS:  # an extra or a group: what a guarded import is for
                return decide(m, "main added to an optional table, guarded import")
            return decide(None, "main added, guarded import" if uses == "guarded" else "main added, code does not use it")
        if m is None:
            if self.req_owner.get(key) == "dev":
                return decide(d, "main removed, dev chose it")
            if uses == "import":
                return decide(d, "main removed, code still imports it")
            return decide(None, "main removed")
        if self.req_owner.get(key) == "dev":
            return decide(d, "main bumped, dev chose its pin")
        return decide(m, "main bumped, dev never touched it")

    def req_keys(self) -> list[tuple[str, str]]:
        keys = {(DEPS, n) for side in (self.base, self.dev, self.main) for n in side.deps}
        keys |= {(t, n) for side in (self.base, self.dev, self.main) for t in REQ_TABLES for n in side.reqs[t]}
        return sorted(keys)

    def sync(self) -> None:
        """Merge main into dev the way the maintainer does; sometimes dev hands a pin back to main."""
        names = set(self.base.sources) | set(self.dev.sources) | set(self.main.sources)
        resolved = {}
        for name in sorted(names):
            decision = self.truth(name)
            result = decision.result
            handback = self.owner[name] == "dev" and name not in self.config_owned and decision.main is not None and result != decision.main
            if handback and self.rng.random() < 0.15:
                result = decision.main
                self.owner[name] = "main"
                self.removed_by_dev.discard(name)
            elif result is not None and result == decision.main and result != decision.dev:
                self.owner[name] = "main" if name not in self.config_owned else "dev"
            if result is not None:
                resolved[name] = result
        requirements = {key: self.req_truth(*key) for key in self.req_keys()}
        for (table, name), truth in requirements.items():
            if truth.result is not None and truth.result == truth.main and truth.result != truth.dev:
                self.req_owner[(table, name)] = "main"
            self.dev.set(table, name, truth.result)
        self.dev.sources = resolved
        self.dev.code |= self.main.code  # the merged code
        self.commit("dev", "Merge main into dev", self.dev, (self.tips["dev"], self.tips["main"]))
        self.base = self.main.copy()

    def generate(self) -> None:
        for _ in range(self.rng.randint(2, 5)):
            for _ in range(self.rng.randint(1, 4)):
                self.main_event()
            for _ in range(self.rng.randint(1, 3)):
                self.dev_event()
            self.sync()
        for _ in range(self.rng.randint(3, 6)):  # the sync being evaluated: mostly main's moves
            self.main_event()
        for _ in range(self.rng.randint(0, 2)):
            self.dev_event()

    def build(self) -> Path:
        stream = []
        for c in self.commits:
            ref = "refs/heads/" + c.branch
            stream.append(f"commit {ref}\nmark :{c.mark}\ncommitter d <d@example.invalid> {c.time} +0000\n" + _data(c.message))
            stream += [f"from :{c.parents[0]}\n"] if c.parents else []
            stream += [f"merge :{p}\n" for p in c.parents[1:]]
            stream.append("deleteall\nM 100644 inline pyproject.toml\n" + _data(c.text) + "M 100644 inline uv.lock\n" + _data(LOCK) + "M 100644 inline NOTES.md\n" + _data(c.notes))
            for pkg, how in sorted(c.code.items()):
                module = module_of(pkg)
                body = f"import {module}\n" if how == "import" else f"try:\n    import {module}\nexcept ImportError:\n    {module} = None\n"
                stream.append(f"M 100644 inline src/app/uses_{module}.py\n" + _data(f'"""uses {pkg}"""\n' + body))
        stream.append(f"reset refs/heads/dev\nfrom :{self.tips['dev']}\n")
        project = self.directory / "project"
        fast_import(project, "".join(stream))
        subprocess.run(["git", "-C", str(project), "checkout", "-q", "-f", "dev"], check=True)
        return project

    def evaluated_requirements(self) -> list[ReqTruth]:
        return [t for t in (self.req_truth(*key) for key in self.req_keys()) if t.dev != t.main]

    def evaluated(self) -> list[Truth]:
        names = sorted(set(self.base.sources) | set(self.dev.sources) | set(self.main.sources))
        return [t for t in (self.truth(n) for n in names) if t.dev != t.main]


# -- decision makers -------------------------------------------------------------------------------


@dataclass
class Verdict:
    result: int | None
    flagged: bool
    rule: str = ""
    evidence: tuple[str, ...] = ()


def old_rules(t: Truth, scenario: Scenario) -> Verdict:
    """The literal table's rules (before decisions took evidence): take main's change unless main's rev is older,
    add main's additions, drop main's removals unless dev depends, dev's value in a conflict."""
    if t.name in scenario.config_owned:
        return Verdict(t.dev, True)
    if t.dev == t.base:
        if t.base is None:
            return Verdict(t.main, False)
        if t.main is None:
            return Verdict(t.dev, True) if t.name in scenario.dev.deps else Verdict(None, False)
        if t.dev is not None and t.main in scenario.upstreams[t.name].ancestors(t.dev):
            return Verdict(t.dev, True)
        return Verdict(t.main, False)
    if t.main == t.base:
        return Verdict(t.dev, False)
    return Verdict(t.dev, True)


def keep_dev(t: Truth, scenario: Scenario) -> Verdict:
    return Verdict(t.dev, False)


@contextmanager
def environment(**values: str) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def reconcile_verdicts(scenario: Scenario, project: Path, cache: Path) -> dict[Any, Verdict]:
    """reconcile's plan for the final sync, in this process (real git; no lock, no writes)."""
    from packaging.utils import canonicalize_name

    from depsync.commands.reconcile import ReconcileOptions, plan
    from depsync.shell import git

    nodes = {canonicalize_name(n): {sha: node for node, sha in up.sha.items()} for n, up in scenario.upstreams.items()}
    with environment(XDG_CACHE_HOME=str(cache)):
        try:
            result = plan(ReconcileOptions(project, dev="dev", main="main", no_merge=True, dry_run=True, no_lock=True, default_side=scenario.side))[0]
        finally:
            git.forget()
    verdicts = {}
    for d in result.decisions:
        key = canonicalize_name(d.name)
        rev = d.result.get("rev") if isinstance(d.result, dict) else None
        verdicts[key] = Verdict(nodes[key].get(rev) if rev else None, d.needs_review, d.rule, d.evidence)
    for entry in result.dependencies:  # the rest of the surface, by (table, package)
        value = None if entry.result is None else str(entry.result.raw[0])
        verdicts[(entry.table, entry.name)] = Verdict(value, entry.needs_review, entry.rule, entry.evidence)  # type: ignore[arg-type]
    return verdicts


def table_kind(table: str) -> str:
    return "sources" if table == "sources" else table.rsplit(".", 1)[0] if table.count(".") > 1 else table.split(".")[0] if table.startswith("dependency-groups") else table


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Tally:
    entries: int = 0
    agree: int = 0
    flagged: int = 0
    silent: int = 0  # disagreements nobody was asked to look at
    by_why: Counter[str] = field(default_factory=Counter)
    wrong_by_why: Counter[str] = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)  # what a disagreement looked like, for --misses
    main_changes: int = 0  # entries main changed since the merge-base
    main_agree: int = 0
    main_flagged: int = 0
    main_dropped: int = 0  # main's change not carried and not flagged
    dropped_rules: Counter[str] = field(default_factory=Counter)  # the rows that did that (config ownership is deliberate)

    def add(self, truth: Truth | ReqTruth, verdict: Verdict, where: str = "") -> None:
        self.entries += 1
        self.by_why[truth.why] += 1
        self.flagged += verdict.flagged
        if truth.main != truth.base:
            self.main_changes += 1
            self.main_agree += verdict.result == truth.result
            self.main_flagged += verdict.flagged
            if verdict.result != truth.main and not verdict.flagged:
                self.main_dropped += 1
                self.dropped_rules[verdict.rule] += 1
        if verdict.result == truth.result:
            self.agree += 1
        else:
            self.wrong_by_why[truth.why] += 1
            self.silent += not verdict.flagged
            self.misses.append(
                f"{where} {truth.name}: maintainer {truth.why} -> {truth.result}; got {verdict.result} ({'flagged' if verdict.flagged else 'silent'}, {verdict.rule or '-'})"
                + "".join(f"\n        {e}" for e in verdict.evidence)
            )

    def row(self, label: str) -> str:
        n = max(self.entries, 1)
        return f"  {label:<34} {self.agree / n:8.1%} {self.flagged / n:9.1%} {self.silent:8d}"


def replay(scenarios: int, seed: int, offline: bool = True, work: Path | None = None, side: str = "dev", by_table: dict[str, dict[str, Tally]] | None = None) -> dict[str, Tally]:
    """Generate and evaluate scenarios; returns a Tally per decision maker (by_table, when given,
    gets one per decision maker and table: sources, project.dependencies, optional-dependencies, dependency-groups)."""
    tallies = {k: Tally() for k in ("reconcile", "reconcile offline", "old rules", "keep dev's table")}
    if not offline:
        del tallies["reconcile offline"]
    tables = by_table if by_table is not None else {}

    def add(label: str, table: str, truth: Truth | ReqTruth, verdict: Verdict, where: str = "") -> None:
        tallies[label].add(truth, verdict, where)
        tables.setdefault(table_kind(table), {}).setdefault(label, Tally()).add(truth, verdict, where)

    with tempfile.TemporaryDirectory(prefix="depsync-replay-", dir=work) as tmp:
        for number in range(scenarios):
            directory = Path(tmp) / f"s{number}"
            directory.mkdir()
            scenario = Scenario(seed * 100_003 + number, directory, side)
            scenario.generate()
            project = scenario.build()
            truths = scenario.evaluated()
            online = reconcile_verdicts(scenario, project, directory / "cache")
            from packaging.utils import canonicalize_name

            verdicts = {"reconcile": online}
            if offline:  # the upstream repositories gone: every rev order is unknown
                for up in scenario.upstreams.values():
                    assert up.path is not None
                    up.path.rename(up.path.with_suffix(".gone"))
                verdicts["reconcile offline"] = reconcile_verdicts(scenario, project, directory / "cache-offline")
            where = f"seed {seed * 100_003 + number}"
            for truth in truths:
                key = canonicalize_name(truth.name)
                for label, found in verdicts.items():
                    add(label, "sources", truth, found[key], where)
                add("old rules", "sources", truth, old_rules(truth, scenario))
                add("keep dev's table", "sources", truth, keep_dev(truth, scenario))
            for req in scenario.evaluated_requirements():  # the old rules never merged these: dev's table
                key = (req.table, canonicalize_name(req.name))
                for label, found in verdicts.items():
                    add(label, req.table, req, found.get(key, Verdict(req.dev, False, "no decision")), f"{where} {req.table}")
                add("old rules", req.table, req, Verdict(req.dev, False))
                add("keep dev's table", req.table, req, Verdict(req.dev, False))
            shutil.rmtree(directory, ignore_errors=True)
    return tallies


def report(tallies: dict[str, Tally], scenarios: int, misses: bool = False, by_table: dict[str, dict[str, Tally]] | None = None, side: str = "dev") -> str:
    first = tallies["reconcile"]
    lines = [
        f"replay (default-side {side}): {scenarios} generated syncs, {first.entries} entries where dev and main differ",
        f"  {'decision maker':<34} {'agrees':>8} {'flagged':>9} {'silent':>8}   (silent: disagrees, not flagged)",
        *(t.row(label) for label, t in tallies.items()),
        "  the maintainer's decisions by situation (count; reconcile's misses):",
    ]
    for why, count in sorted(first.by_why.items(), key=lambda item: -item[1]):
        wrong = ", ".join(f"{label} {t.wrong_by_why[why]}" for label, t in tallies.items() if t.wrong_by_why[why])
        lines.append(f"    {why:<36} {count:5d}   {wrong or 'all agree'}")
    if by_table:
        lines.append("  per table, reconcile (entries, agrees, flagged, silent | of main's changes: count, agrees, flagged, not carried unflagged) and keep dev's table (agrees, silent):")
        for table, per in sorted(by_table.items()):
            ours, keep = per.get("reconcile", Tally()), per.get("keep dev's table", Tally())
            n, c = max(ours.entries, 1), max(ours.main_changes, 1)
            lines.append(
                f"    {table:<30} {ours.entries:5d} {ours.agree / n:7.1%} {ours.flagged / n:7.1%} {ours.silent:4d} | {ours.main_changes:4d} {ours.main_agree / c:7.1%} {ours.main_flagged / c:7.1%} {ours.main_dropped:4d}"
                f" | {keep.agree / n:7.1%} {keep.silent:4d}"
            )
            if ours.dropped_rules:
                lines.append("      main's changes not carried, unflagged, by rule: " + ", ".join(f"{rule} {count}" for rule, count in ours.dropped_rules.most_common()))
    if misses:
        for label in ("reconcile", "reconcile offline"):
            if label in tallies and tallies[label].misses:
                lines.append(f"  {label}'s disagreements:")
                lines += [f"    {miss}" for miss in tallies[label].misses]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-offline", action="store_true", help="skip the offline replay (upstream repositories removed)")
    parser.add_argument("--misses", action="store_true", help="list reconcile's disagreements with their evidence")
    parser.add_argument("--default-side", choices=("dev", "main", "both"), default="both", help="the maintainer's model and reconcile's default-side (default: both, one after the other)")
    args = parser.parse_args(argv)
    for side in ("dev", "main") if args.default_side == "both" else (args.default_side,):
        by_table: dict[str, dict[str, Tally]] = {}
        tallies = replay(args.scenarios, args.seed, offline=not args.no_offline, side=side, by_table=by_table)
        print(report(tallies, args.scenarios, args.misses, by_table, side))


if __name__ == "__main__":
    main()
