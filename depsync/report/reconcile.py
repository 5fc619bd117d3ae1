"""Render a reconciliation: Markdown for the PR body, JSON ("depsync.reconcile/1", depsync/schemas/reconcile-1.schema.json) for bots.

The summary is for a reviewer: rows only for the entries dev and main disagree on (with
links to the commits and the comparison on GitHub), the evidence of every flagged entry,
the lock changes, and what is left to do. It stays under GitHub's body limit by folding
and shortening its least important sections first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from depsync import __version__
from depsync.core.redact import redact, redacted_json
from depsync.core.sync.reconciliation import DockerfileKept, Reconciliation
from depsync.core.sync.sources import SourceDecision, describe, pin_of
from depsync.report import dependencies as surface_report
from depsync.report import keys as keys_report
from depsync.report import markdown
from depsync.report import squashed as squashed_report
from depsync.report.lockdiff import counts_line
from depsync.report.lockdiff import to_markdown as lockdiff_markdown

SCHEMA = "depsync.reconcile/1"
BODY_LIMIT = 65536  # GitHub's limit for a PR body, in characters
_TARGET = BODY_LIMIT - 1536  # room for what a workflow appends
_TABLE_FOLD = 30  # more differing entries than this: the table goes into <details>
_CASES = {
    "unchanged": "unchanged",
    "same-change": "same change on both sides",
    "dev-changed": "dev changed",
    "dev-added": "dev added",
    "dev-removed": "dev removed",
    "main-changed": "main changed",
    "main-added": "main added",
    "main-removed": "main removed",
    "conflict": "**conflict**",
    "unknown-shape": "**unknown shape**",
}
_GITHUB = re.compile(r"^(?:git\+)?(?:https?://(?:[^@/]+@)?|ssh://git@|git@)github\.com[/:]([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?\Z")


# no redact() per cell: every sink (stdout, write_report, to_json) masks the whole text once
_cell = markdown.text  # prose: Markdown, HTML and mentions escaped, control characters gone
_code = markdown.code  # a code span, inert by construction


def github_repo(url: str) -> str | None:
    """`https://github.com/o/r` for a GitHub-hosted git URL (https, ssh or scp-like), else None."""
    found = _GITHUB.match(url.strip())
    return f"https://github.com/{found.group(1)}/{found.group(2)}" if found else None


def _tables(value: Any) -> list[Mapping[str, Any]]:
    tables = value if isinstance(value, list) else [value]
    return [t for t in tables if isinstance(t, Mapping)]


def commit_link(table: Mapping[str, Any]) -> str | None:
    repo = github_repo(str(table.get("git", "")))
    pin = pin_of(table)
    if repo is None or pin.kind not in ("rev", "tag") or not pin.value:
        return None
    return markdown.link(f"{repo}/commit/{pin.value}")  # a rev or tag that is not plain: no link


def compare_link(dev: Any, main: Any) -> str | None:
    """`.../compare/<dev>...<main>` when both are pins of one GitHub repository."""
    ours, theirs = _tables(dev), _tables(main)
    if len(ours) != 1 or len(theirs) != 1:
        return None
    a, b = ours[0], theirs[0]
    repo_a, repo_b = github_repo(str(a.get("git", ""))), github_repo(str(b.get("git", "")))
    pa, pb = pin_of(a), pin_of(b)
    if repo_a is None or repo_a.lower() != (repo_b or "").lower() or pa.kind not in ("rev", "tag") or pb.kind not in ("rev", "tag") or pa.value == pb.value:
        return None
    return markdown.link(f"{repo_a}/compare/{pa.value}...{pb.value}")


def _source(value: Any) -> str:
    """A source cell: its short description, linked to the commit on GitHub when it can be."""
    text = _cell(describe(value))
    tables = _tables(value)
    if len(tables) == 1:
        link = commit_link(tables[0])
        if link:
            return f"[{text}]({link})"
    return text


def _decision(d: SourceDecision) -> str:
    kept = {"dev": "dev's", "main": "main's", "none": "no source"}[d.taken_from]
    return f"{kept} ({_CASES.get(d.case, d.case)})"


def _evidence_lines(d: SourceDecision) -> list[str]:
    lines = [f"  - {_cell(e)}" for e in d.evidence]
    link = compare_link(d.dev, d.main)
    if link:
        lines.append(f"  - [compare dev...main]({link})")
    return lines


# -- sections ----------------------------------------------------------------------------------


def whole_file_headline(result: Reconciliation) -> str:
    """One count over everything main changed: sources, the dependency surface, every other
    key of pyproject and the other files uv reads ("main changed 14 entries in 6 tables ...")."""
    count = result.main_change_count()
    if not count.entries:
        return "main changed nothing that dev does not already have"
    where = [f"{count.tables} table{'s' if count.tables != 1 else ''}"] if count.tables else []
    where += [f"{count.files} file{'s' if count.files != 1 else ''} uv reads"] if count.files else []
    tables = " and ".join(where)
    sources = f" ({count.sources} source{'s' if count.sources != 1 else ''})" if count.sources else ""
    return (
        f"main changed {count.entries} entr{'ies' if count.entries != 1 else 'y'} in {tables}{sources}: "
        f"{count.taken} taken, {count.not_taken} kept dev's, {count.flagged} flagged"
    )


def _count_json(result: Reconciliation) -> dict[str, int]:
    count = result.main_change_count()
    return {"entries": count.entries, "tables": count.tables, "files": count.files, "sources": count.sources, "taken": count.taken, "not_taken": count.not_taken, "flagged": count.flagged}


def _headline(result: Reconciliation) -> list[str]:
    rate = whole_file_headline(result)
    if result.failure:
        lines = [f"**Failed**: {_cell(result.failure)}", "", "The work tree was put back as it was before reconcile; below is the plan it would have applied."]
    elif result.dry_run:
        lines = [f"**Dry run**: nothing was changed; {rate}."]
    elif result.status == "planned":
        lines = [f"**Planned, relocking now** ({_cell(result.lock.note)}): {rate}."]
    elif result.unmerged:
        # "Ready" only when nothing is left: code conflicts are the next step's, not done
        left = f"{len(result.unmerged)} code file{'s' if len(result.unmerged) != 1 else ''} still conflicted"
        state = "Needs review; triple reconciled" if result.needs_review else "Triple reconciled"
        lines = [f"**{state}; {left}**: resolve them and `git add` them (next steps below); {rate}."]
    elif result.needs_review:
        lines = [f"**Needs review**: {rate}."]
    else:
        lines = [f"**Ready**: {rate}."]
    squash = squashed_report.headline(result.squashed, result.base_sha)
    if squash and not result.failure:
        lines[0] += squash
    return lines


def _sources_section(result: Reconciliation, compact: bool) -> list[str]:
    differing = result.differing
    same = [d for d in result.decisions if not d.differs]
    lines = ["### Sources that differ between dev and main (`[tool.uv.sources]`, three-way)", ""]
    if differing:
        rows = differing if not compact else [d for d in differing if d.needs_review][:100]
        table = ["| review | package | dev | main | kept | why |", "|---|---|---|---|---|---|"]
        for d in rows:
            link = compare_link(d.dev, d.main)
            main = _source(d.main) + (f" ([compare]({link}))" if link else "")
            table.append(f"| {'**yes**' if d.needs_review else ''} | {_code(d.name)} | {_source(d.dev)} | {main} | {_decision(d)} | {_cell(d.reason)} |")
        if compact and len(rows) < len(differing):
            table.append(f"\n{len(differing) - len(rows)} rows left out to fit GitHub's limit (flagged ones first); the plan JSON has them all.")
        if len(differing) > _TABLE_FOLD:
            lines += [f"<details><summary>{len(differing)} entries differ</summary>", "", *table, "", "</details>"]
        else:
            lines += table
    else:
        lines.append("No entry differs between dev and main.")
    if same:
        names = ", ".join(f"{_code(d.name)}" for d in same[:20]) + (f" and {len(same) - 20} more" if len(same) > 20 else "")
        lines += ["", f"{len(same)} {'entry is' if len(same) == 1 else 'entries are'} the same on dev and main: {names}."]
    return lines


def _review_section(result: Reconciliation, compact: bool) -> list[str]:
    flagged = [d for d in result.decisions if d.needs_review]
    meta = [m for m in result.metadata if m.needs_review]
    errors = [f for f in result.findings if str(f.severity) == "error"]
    surface = surface_report.review_lines(result) + keys_report.review_lines(result) + keys_report.files_review_lines(result)
    if not (flagged or meta or errors or surface or result.config_drift or result.hint_drift):
        return []
    lines = ["### Needs review", ""]
    if result.config_drift:
        keys = ", ".join(f"{_code(k)}" for k in result.config_drift)
        lines.append(f"- main changed `[tool.depsync]` ({keys}): ignored: the bot runs on dev's committed table, which the merge keeps")
    for path in result.hint_drift:
        keep = _code(f"git checkout {result.dev_commit} -- {path}")
        lines.append(f"- main changed the image hint {_code(path)}: ignored, the relock used dev's committed one; the merged work tree has main's ({keep} keeps dev's)")
    shown = flagged[:50] if compact else flagged
    for d in shown:
        lines.append(f"- {_code(d.name)}: {_cell(d.reason)}")
        lines += _evidence_lines(d)[: 2 if compact else None]
    if len(shown) < len(flagged):
        rest = flagged[len(shown) :]
        lines.append(f"- and {len(rest)} more (evidence in the plan JSON): " + ", ".join(f"{_code(d.name)}" for d in rest))
    for m in meta:
        lines.append(f"- {_code(m.name)} (dependency metadata): {_cell(m.reason)}")
    lines += surface[:50] if compact else surface
    if compact and len(surface) > 50:
        lines.append(f"- and {len(surface) - 50} more dependency entries (the plan JSON has them)")
    if errors:
        lines.append(f"- {len(errors)} `depsync check` error(s): see below")
    return lines


def _other_evidence(result: Reconciliation, compact: bool) -> list[str]:
    rows = [d for d in result.differing if not d.needs_review and d.evidence]
    if not rows or compact:
        return []
    lines = [f"<details><summary>Evidence for the {len(rows)} unflagged decision(s)</summary>", ""]
    for d in rows:
        lines.append(f"- {_code(d.name)}: {_cell(d.reason)}")
        lines += _evidence_lines(d)
    return [*lines, "", "</details>"]


def _metadata_section(result: Reconciliation) -> list[str]:
    if not result.metadata:
        return []
    lines = ["### Dependency metadata", ""]
    for m in result.metadata:
        changes = ", ".join(f"{f}: {_code(str(old))} -> {_code(str(new))}" for f, old, new in m.changes) or "no change made"
        lines.append(f"- {_code(m.name)} ({m.action}): {changes}; {_cell(m.reason)}")
    return lines


def _dockerfile_line(kept: DockerfileKept, result: Reconciliation) -> str:
    what = f"CI Dockerfile, {kept.how}"
    if not kept.main_changed:
        return f"- {_code(kept.path)} ({what}): main did not change it"
    if kept.main_added:
        return (f"- {_code(kept.path)} (CI Dockerfile, discovered on main): main added it ({kept.added} lines) and dev has none, so it stays "
                "as main wrote it; the closing check reads it against the reconciled pyproject")
    change = "main deleted it" if kept.main_deleted else f"main changed it since the merge-base (+{kept.added} -{kept.removed} lines)"
    return f"- {_code(kept.path)} ({what}): {change}; dev's version is kept, review main's change: {_code(f'git diff {result.base_commit} {result.main_commit} -- {kept.path}')}"


def _files_section(result: Reconciliation) -> list[str]:
    dockerfiles = {k.path for k in result.ci_dockerfiles}
    lines = ["### Files restored to dev's version", "", *([f"- {_code(p)}" for p in result.restored if p not in dockerfiles] or ["- none needed"])]
    if result.ci_dockerfiles:
        lines += ["", "### CI Dockerfiles (dev's kept, like the triple)", "", *(_dockerfile_line(k, result) for k in result.ci_dockerfiles)]
    if result.taken_from_main:
        lines += ["", "### Files taken from main (`take-from-main`)", "",
                  "Their dev versions were replaced by main's: check the callers of their APIs on dev.", "",
                  *(f"- {_code(p)}" for p in result.taken_from_main)]
    return lines


def _lock_section(result: Reconciliation, compact: bool) -> list[str]:
    lines = ["### Lock", "", f"- {_cell(result.lock.note)}"]
    if result.lock.revision is not None:
        old, new = result.lock.revision
        what = "downgraded" if old is not None and new is not None and new < old else "changed"
        lines.append(f"- lock revision {what}: {old} -> {new} (the uv that relocked writes revision {new})")
    if result.lock.markers_rewritten:
        lines.append(f"- {result.lock.markers_rewritten} marker lines rewritten (uv's spelling of markers, not a change of what is locked)")
    if result.lock.uv_output:
        tail = result.lock.uv_output if not compact else result.lock.uv_output[-1500:]
        lines += ["", "uv's output (last lines):", "", "~~~text", tail.replace("~~~", "~ ~ ~"), "~~~"]
    changes = result.lock.changes
    if changes is not None:
        if compact:
            lines += ["", counts_line(changes) + ". The full table is in the plan JSON (left out to fit GitHub's limit)."]
        else:
            lines += ["", lockdiff_markdown(changes).rstrip()]
    return lines


def _check_section(result: Reconciliation, compact: bool) -> list[str]:
    if not result.checked:
        return []
    findings = result.findings
    lines = ["### depsync check", ""]
    stale = [f for f in findings if f.rule == "lock-stale"]
    if result.lock.state == "not-relocked" and stale:
        # expected: the lock is dev's until the relock; one line, not a bullet per entry
        lines.append(f"- `lock-stale` ({len(stale)}): expected with --no-lock, uv.lock is dev's until `depsync lock` relocks it")
        findings = [f for f in findings if f.rule != "lock-stale"]
    shown = findings[:20] if compact else findings
    lines += [f"- {f.severity} `{f.rule}` {_cell(f.file)}:{f.line}: {_cell(f.message)}" for f in shown] or ([] if stale and result.lock.state == "not-relocked" else ["- clean"])
    if len(shown) < len(findings):
        lines.append(f"- ... and {len(findings) - len(shown)} more (run `depsync check`)")
    return lines


def next_steps(result: Reconciliation) -> list[str]:
    """What is left to do after this run, in order, as commands."""
    files = ", ".join(f"{_code(p)}" for p in result.unmerged[:30]) + (f" and {len(result.unmerged) - 30} more" if len(result.unmerged) > 30 else "")
    resolve = f"Resolve the files still conflicted ({len(result.unmerged)}, from `git diff --name-only --diff-filter=U`): {files}; then `git add` them."
    if result.failure:
        return [
            "Fix the failure above, then rerun `depsync reconcile` (the work tree is as it was before it ran).",
            "Or apply the plan without relocking now: `depsync reconcile --no-lock`, and relock later with `depsync lock`.",
            *([resolve] if result.unmerged else []),
        ]
    steps = []
    if result.dry_run:
        steps.append("Apply this plan: rerun `depsync reconcile` without `--dry-run`.")
    if result.unmerged:
        steps.append(resolve)
    if result.lock.state == "not-relocked":
        steps.append("Relock in the CI image: `depsync lock` (uv.lock is dev's and was not relocked).")
    if any(d.needs_review for d in result.decisions) or any(m.needs_review for m in result.metadata) or any(d.needs_review for d in result.dependencies) or any(d.needs_review for d in result.keys) or any(d.needs_review for d in result.uv_files):
        steps.append(
            "Review the flagged entries above. To take main's value where main changed an entry dev did not, edit pyproject.toml "
            "(the entry's table) and relock with `depsync lock`; for a conflict (both changed it) `depsync guard` accepts main's "
            "value only once dev says so: land `prefer = { NAME = \"main\" }` in dev's `[tool.depsync]` first, then rerun the sync."
        )
    expected = ("lock-stale",) if result.lock.state == "not-relocked" else ()  # the relock step above fixes those
    if any(str(f.severity) == "error" and f.rule not in expected for f in result.findings):
        steps.append("Fix the `depsync check` errors above (`depsync check` shows each with its fix).")
    squash = squashed_report.next_step(result.squashed, result.merging)
    if squash:
        steps.append(squash)
    steps.append("Commit: " + ("`git commit --no-edit` (concludes the merge)." if result.merging else "`git commit -am \"sync main into dev\"`."))
    steps.append("Before pushing: `depsync guard` (the sync merge keeps dev's triple with main reconciled).")
    return steps


def to_markdown(result: Reconciliation, limit: int = _TARGET) -> str:
    """The PR body; sections are shortened, least important first, until it fits in limit."""
    title = f"## depsync reconcile: {_code(result.main_ref)} into {_code(result.dev_ref)}" + (" (dry run)" if result.dry_run else "")
    refs = f"dev {_code(result.dev_ref)} at {result.dev_commit}, main {_code(result.main_ref)} at {result.main_commit}, merge-base {result.base_commit}."
    compact: set[str] = set()

    def render() -> list[str]:
        sections = [
            [title, "", *_headline(result), "", refs],
            squashed_report.markdown_section(result.squashed, result.base_sha),
            _review_section(result, "review" in compact),
            _sources_section(result, "sources" in compact),
            _other_evidence(result, "evidence" in compact),
            surface_report.sections(result, "dependencies" in compact),
            keys_report.sections(result, "dependencies" in compact),
            keys_report.files_section(result, "dependencies" in compact),
            _metadata_section(result),
            _files_section(result),
            _lock_section(result, "lock" in compact),
            _check_section(result, "check" in compact),
            ["### Next steps", "", *(f"{n}. {step}" for n, step in enumerate(next_steps(result), 1))],
        ]
        return ["\n".join(s) for s in sections if s]

    def size(parts: list[str]) -> int:
        return sum(len(p) for p in parts) + 2 * len(parts)

    parts = render()
    for section in ("lock", "evidence", "check", "dependencies", "sources", "review"):  # least important first
        if size(parts) <= limit:
            break
        compact.add(section)
        parts = render()
    note = "\n\n*(cut to fit GitHub's limit: the plan JSON has everything)*"
    while size(parts) > limit:  # thousands of flagged entries: cut the longest section, never the next steps
        longest = max(range(len(parts) - 1), key=lambda i: len(parts[i]))
        room = max(len(parts[longest]) - (size(parts) - limit) - len(note), 0)
        parts[longest] = parts[longest][:room].rsplit("\n", 1)[0] + note
    return redact("\n\n".join(parts) + "\n")


# -- JSON --------------------------------------------------------------------------------------


def _decision_json(d: SourceDecision) -> dict[str, Any]:
    return {
        "name": d.name,
        "case": d.case,
        "rule": d.rule,
        "base": d.base,
        "dev": d.dev,
        "main": d.main,
        "result": d.result,
        "taken_from": d.taken_from,
        "reason": d.reason,
        "needs_review": d.needs_review,
        "differs": d.differs,
        "evidence": list(d.evidence),
        "links": {k: v for k, v in (("compare", compare_link(d.dev, d.main)),) if v},
    }


def to_json(result: Reconciliation) -> str:
    differing = result.differing
    document = {
        "schema": SCHEMA,
        "depsync": __version__,
        "status": result.status,
        "failure": result.failure,
        "dev": {"ref": result.dev_ref, "commit": result.dev_commit, "sha": result.dev_sha},
        "main": {"ref": result.main_ref, "commit": result.main_commit, "sha": result.main_sha},
        "merge_base": result.base_commit,
        "dry_run": result.dry_run,
        "sources": [_decision_json(d) for d in result.decisions],
        "flags": {"flagged": sum(d.needs_review for d in differing), "differing": len(differing), "rate": round(result.flag_rate, 4)},
        "dependencies": surface_report.to_json(result),
        "dependency_flags": surface_report.counts(result),
        "main_changes": _count_json(result),
        "keys": keys_report.to_json(result),
        "uv_files": keys_report.files_json(result),
        "default_side": result.default_side,
        "dockerfile_findings": [{"file": f.file, "line": f.line, "rule": f.rule, "severity": str(f.severity), "message": f.message, "fix": f.fix} for f in result.surface_findings],
        "metadata": [surface_report.metadata_json(m, result) for m in result.metadata],
        "restored": result.restored,
        "ci_dockerfiles": [{"path": k.path, "how": k.how, "main_changed": k.main_changed, "added": k.added, "removed": k.removed, "main_deleted": k.main_deleted, "main_added": k.main_added} for k in result.ci_dockerfiles],
        "taken_from_main": result.taken_from_main,
        "squashed_syncs": squashed_report.to_json(result.squashed, result.base_sha),
        "lock": {
            "state": result.lock.state,
            "note": result.lock.note,
            "changes": None if result.lock.changes is None else [vars(c) for c in result.lock.changes],
            "uv_output": result.lock.uv_output or None,
            "markers_rewritten": result.lock.markers_rewritten,
            "revision": None if result.lock.revision is None else {"old": result.lock.revision[0], "new": result.lock.revision[1]},
        },
        "findings": [{"file": f.file, "line": f.line, "rule": f.rule, "severity": str(f.severity), "message": f.message} for f in result.findings],
        "unmerged": result.unmerged,
        "evidence_fetches": result.evidence_fetches,
        "next_steps": next_steps(result),
        "config_drift": list(result.config_drift),
        "hint_drift": list(result.hint_drift),
        "needs_review": result.needs_review,
    }
    return redacted_json(document, indent=2)
