"""Pure: what one `depsync reconcile` decided and did, for the reports (Markdown, JSON).

The command fills it in phases: the plan (refs, decisions, metadata, files to restore),
then the lock outcome, the closing check and what is still unmerged. The reports are
written from it before relocking and again after, so a failed relock still leaves the
plan, with the failure, where the pipeline looks for it.
"""

from __future__ import annotations

from typing import Any

from depsync.core.findings import Finding, Severity
from depsync.core.lockdiff import PackageChange
from depsync.core.sync.document import KeyDecision
from depsync.core.sync.metadata import MetadataUpdate
from depsync.core.sync.sources import SourceDecision, normalize
from depsync.core.sync.squashed import SquashScan
from depsync.core.sync.surface import EntryDecision
from depsync.core.sync.uv_files import FileDecision
from depsync.records import field, record

# the lock's state: pending (about to relock), relocked, not-relocked (--no-lock), failed, dry-run
LOCK_STATES = ("pending", "relocked", "not-relocked", "failed", "dry-run")


@record(frozen=False)
class LockOutcome:
    state: str = "dry-run"
    note: str = "not relocked (dry run)"
    changes: list[PackageChange] | None = None
    uv_output: str = ""  # a failed relock: the tail of uv's own log (masked)
    markers_rewritten: int | None = None  # marker lines of the lock the relock rewrote
    revision: tuple[int | None, int | None] | None = None  # (dev's lock revision, the new lock's), when they differ


@record
class MainChange:
    """One entry main changed since the merge-base that dev does not have as main has it."""

    kind: str  # "source", "dependency", "key" or "file" (a file uv reads)
    table: str  # the table (or file) it is in
    name: str
    taken: bool  # the result carries main's value (or both merged)
    flagged: bool


@record
class MainChangeCount:
    """The headline's count over the whole file: every entry main changed, by table."""

    entries: int
    tables: int  # of pyproject.toml
    files: int  # other files uv reads (uv.toml, .python-version, members), each one entry
    sources: int
    taken: int
    flagged: int

    @property
    def not_taken(self) -> int:
        return self.entries - self.taken


@record
class DockerfileKept:
    """A CI Dockerfile (configured, or discovered on dev) that reconcile keeps at dev's version,
    and what main changed in it since the merge-base: listed, never taken silently."""

    path: str
    how: str  # "configured" or "discovered"
    added: int = 0  # lines main's version has that the merge-base's lacks
    removed: int = 0
    main_deleted: bool = False  # main removed the file
    main_added: bool = False  # a CI Dockerfile main added that dev does not have: main's, as the merge brought it

    @property
    def main_changed(self) -> bool:
        return self.main_deleted or self.main_added or bool(self.added or self.removed)


def diffstat(old: str, new: str) -> tuple[int, int]:
    """(lines added, lines removed) from old to new, as `git diff --numstat` counts them."""
    import difflib

    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def kept_dockerfile(path: str, how: str, base: bytes | None, main: bytes | None, dev: bytes | None = b"") -> DockerfileKept:
    """What main changed in a CI Dockerfile since the merge-base (base, main, dev: its bytes there;
    None: absent). One dev does not have and main added stays main's (dev has no version to keep)."""
    if dev is None and base is None and main is not None:
        return DockerfileKept(path, how, len(main.decode(errors="replace").splitlines()), 0, main_added=True)
    if base == main:
        return DockerfileKept(path, how)
    if main is None:
        return DockerfileKept(path, how, 0, len((base or b"").decode(errors="replace").splitlines()), main_deleted=True)
    added, removed = diffstat((base or b"").decode(errors="replace"), main.decode(errors="replace"))
    return DockerfileKept(path, how, added, removed)


@record(frozen=False)
class Reconciliation:
    """Everything the reports need: refs, decisions, files, lock outcome, findings, what is left to do."""

    dev_ref: str
    main_ref: str
    dev_sha: str  # full commits
    main_sha: str
    base_sha: str
    decisions: list[SourceDecision]
    metadata: list[MetadataUpdate]
    restored: list[str] = field(default_factory=list)
    ci_dockerfiles: list[DockerfileKept] = field(default_factory=list)  # dev's kept; what main changed in each
    taken_from_main: list[str] = field(default_factory=list)  # `take-from-main` paths, checked out from main
    lock: LockOutcome = field(default_factory=LockOutcome)
    findings: list[Finding] = field(default_factory=list)
    dry_run: bool = False
    merging: bool = False  # a `git merge` is in progress: the commit concludes it
    unmerged: list[str] = field(default_factory=list)  # paths still conflicted afterwards (from the repository top)
    failure: str | None = None  # the step that failed, in one line: files were put back
    checked: bool = False  # the closing `depsync check` ran
    dependencies: list[EntryDecision] = field(default_factory=list)  # the rest of the surface, three-way (depsync.core.sync.surface)
    default_side: str = "dev"  # who owned the surface in this run
    keys: list[KeyDecision] = field(default_factory=list)  # every other key of pyproject, three-way (depsync.core.sync.document)
    uv_files: list[FileDecision] = field(default_factory=list)  # uv.toml, .python-version, workspace members (depsync.core.sync.uv_files)
    surface_findings: list[Finding] = field(default_factory=list)  # dev's Dockerfile vs the reconciled pyproject (before any check)
    config_drift: tuple[str, ...] = ()  # [tool.depsync] keys main changed: ignored, and flagged
    hint_drift: tuple[str, ...] = ()  # image hint files (docker/.ngc_version.dev) main changed: dev's used, flagged
    evidence_fetches: list[dict[str, Any]] = field(default_factory=list)  # source-repository fetches: url, asked, bytes, seconds, outcome
    squashed: SquashScan = field(default_factory=SquashScan)  # syncs that landed on dev without main as a parent

    @property
    def dev_commit(self) -> str:
        return self.dev_sha[:10]

    @property
    def main_commit(self) -> str:
        return self.main_sha[:10]

    @property
    def base_commit(self) -> str:
        return self.base_sha[:10]

    @property
    def differing(self) -> list[SourceDecision]:
        """Entries dev and main disagree on: the decisions a reviewer reads."""
        return [d for d in self.decisions if d.differs]

    @property
    def flagged(self) -> list[SourceDecision]:
        return [d for d in self.decisions if d.needs_review]

    @property
    def flag_rate(self) -> float:
        """Flagged decisions among those where dev and main differ (0 when none differ)."""
        differing = self.differing
        return sum(d.needs_review for d in differing) / len(differing) if differing else 0.0

    def main_changes(self) -> list[MainChange]:
        """Every entry main changed that dev does not have as main has it, in every part of
        pyproject (sources, the dependency surface, the other keys) and the other files uv reads."""
        changes = [
            MainChange("source", "tool.uv.sources", d.name, normalize(d.result) == normalize(d.main), d.needs_review)
            for d in self.decisions
            if d.differs and normalize(d.main) != normalize(d.base)
        ]
        changes += [MainChange("dependency", e.table, e.name, not e.main_not_taken, e.needs_review) for e in self.dependencies if e.main_changed and e.differs]
        changes += [MainChange("key", k.table, k.key, k.taken_from in ("main", "merged") or not k.main_not_taken, k.needs_review) for k in self.keys if k.main_changed and k.differs]
        changes += [MainChange("file", f.path, f.path, f.taken_from in ("main", "merged"), f.needs_review) for f in self.uv_files if f.main_changed]
        return changes

    def main_change_count(self) -> MainChangeCount:
        changes = self.main_changes()
        return MainChangeCount(
            entries=len(changes),
            tables=len({c.table for c in changes if c.kind != "file"}),
            files=sum(c.kind == "file" for c in changes),
            sources=sum(c.kind == "source" for c in changes),
            taken=sum(c.taken for c in changes),
            flagged=sum(c.flagged for c in changes),
        )

    @property
    def needs_review(self) -> bool:
        return (
            any(d.needs_review for d in self.decisions)
            or any(d.needs_review for d in self.dependencies)
            or any(d.needs_review for d in self.keys)
            or any(d.needs_review for d in self.uv_files)
            or any(m.needs_review for m in self.metadata)
            or any(f.severity >= Severity.ERROR for f in self.findings)
            or bool(self.surface_findings)
            or bool(self.config_drift)
            or bool(self.hint_drift)
        )

    @property
    def status(self) -> str:
        """failed, dry-run, planned (reports written before the relock), needs-review or ready."""
        if self.failure:
            return "failed"
        if self.dry_run:
            return "dry-run"
        if self.lock.state == "pending":
            return "planned"
        return "needs-review" if self.needs_review else "ready"
