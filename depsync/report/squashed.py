"""Render squash- or rebase-merged syncs (depsync.core.sync.squashed): Markdown for reconcile's
summary, plain lines for guard's warning, and the plan JSON's `squashed_syncs`.

Commit subjects are whoever wrote them: escaped for Markdown (`markdown.text`), stripped of
control characters for a terminal (`markdown.clean`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from depsync.core.sync.squashed import SquashedSync, SquashScan
from depsync.report import markdown


def _short(sha: str) -> str:
    return sha[:10]


def repair_command(finding: SquashedSync, full: bool = False) -> str:
    """Records main, up to the newest commit the squash carried, as merged; dev's tree unchanged."""
    return f"git merge -s ours {finding.newest_main if full else _short(finding.newest_main)}"


def _what(finding: SquashedSync) -> str:
    """A likely case, with its evidence: content and topology, never a commit's own date."""
    how = "squash-merged sync" if finding.kind == "squash" else "rebase-merged sync (or cherry-picks, one by one)"
    left = f"; {len(finding.left_out)} left out" if finding.left_out else ""
    return (f"likely a {how}: carries {len(finding.carried)} of main's {finding.eligible} commits up to {_short(finding.newest_main)}{left} "
            f"(evidence: the same content at {finding.paths} path(s); those commits had landed on main before it; it is not part of main's history)")


_DROPPED_SHOWN = 20


def _dropped_lines(scan: SquashScan, repair: str, code: Callable[[str], str]) -> list[str]:
    """What the repair keeps dev's version of, though main changed it: named, never dropped without a word."""
    if not scan.dropped:
        return [f"The repair drops nothing: every file main changed up to {_short(repair)} is on dev as main has it."] if not scan.dropped_cut else []
    what = {"deleted": "main deleted it", "emptied": "main emptied it", "changed": "main changed it"}
    lines = [f"The repair keeps dev's version of {len(scan.dropped)}{'+' if scan.dropped_cut else ''} file(s) main changed up to "
             f"{_short(repair)} (a fix main made there does not reach dev; bring over what dev wants first, e.g. "
             f"{code(f'git checkout {_short(repair)} -- PATH')} or {code('git rm PATH')} for a deletion):"]
    lines += [f"  - {code(change.path)}: {what[change.main]}, dev has it differently" for change in scan.dropped[:_DROPPED_SHOWN]]
    if len(scan.dropped) > _DROPPED_SHOWN:
        lines.append(f"  - and {len(scan.dropped) - _DROPPED_SHOWN} more (the plan JSON lists them)")
    return lines


def _dev_commits(finding: SquashedSync) -> tuple[str, str]:
    """(the dev commit or range, shown plain, and with how many) for the finding."""
    first, last = _short(finding.dev_commits[0]), _short(finding.dev_commits[-1])
    if len(finding.dev_commits) == 1:
        return first, ""
    return f"{first}..{last}", f" ({len(finding.dev_commits)} commits)"


def _day(seconds: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))


def headline(scan: SquashScan, base_sha: str) -> str:
    """One sentence for reconcile's headline; "" when nothing was found."""
    if not scan.findings:
        return ""
    return f" dev carries main's commits without main as a parent (a squash- or rebase-merged sync): the merge-base is stuck at {_short(base_sha)}, see below."


_SHOWN = 20  # findings listed in the summary; the plan JSON has them all


def markdown_section(scan: SquashScan, base_sha: str) -> list[str]:
    if scan.error:
        return ["### Syncs that landed on dev without main as a parent", "", f"Not looked for: {markdown.text(scan.error)}"]
    if not scan.findings:
        return []
    lines = ["### Syncs that landed on dev without main as a parent", "",
             "These dev commits write exactly what main's commits wrote, yet main is not their parent (git does not know main was merged); "
             "likely, not certain: dev could have written the same content itself, so check the evidence before the repair:", ""]
    for finding in scan.findings[-_SHOWN:]:
        commits, count = _dev_commits(finding)
        lines.append(f"- {markdown.code(commits)}{count} ({markdown.text(finding.subject)}, {_day(finding.time)}): {_what(finding)}")
    if len(scan.findings) > _SHOWN:
        lines.append(f"- and {len(scan.findings) - _SHOWN} older ones (the plan JSON lists them)")
    newest = scan.findings[-1]
    lines += [
        "",
        f"So the merge-base is still {_short(base_sha)}: every sync merges main's changes since then again, and the files they touched "
        "conflict again where the squash resolved a conflict or main changed them since. Dev's first-parent history shows main's "
        "values in those commits as dev's own changes: ownership read from them compares with main's value at the time, not with a merged parent.",
        "",
        f"Repair: merge sync PRs with a merge commit, never squash or rebase (merging this sync PR with a merge commit moves the next "
        f"merge-base up to main). To record main as merged once, on dev: {markdown.code(repair_command(newest))} "
        f"(dev's files stay as they are; {_short(newest.newest_main)} becomes a parent and the next merge-base), then sync again.",
    ]
    if scan.left_out:
        lines.append(f"That also counts the {scan.left_out} commit(s) of main up to {_short(newest.newest_main)} the copy left out as merged "
                     "(listed in the plan JSON): bring over any dev wants first.")
    lines += ["", *(line.replace("  - ", "- ", 1) for line in _dropped_lines(scan, newest.newest_main, markdown.code))]
    lines += _cut_lines(scan)
    return lines


def _cut_lines(scan: SquashScan) -> list[str]:
    """What the bounded read left out, said."""
    lines = []
    if scan.truncated:
        lines.append(f"(Read the newest {scan.read[0]} of main's and {scan.read[1]} of dev's commits since the merge-base; older ones were not looked at.)")
    if scan.files_cut:
        lines.append(f"({scan.files_cut} commit(s) wrote more files than were read of them; the rest was not looked at.)")
    if scan.dropped_cut:
        lines.append("(The comparison of what the repair drops reached its bound: the list is incomplete.)")
    return lines


def next_step(scan: SquashScan, merging: bool) -> str | None:
    if not scan.findings:
        return None
    command = markdown.code(repair_command(scan.findings[-1]))
    return ("Merge this PR with a merge commit (never squash or rebase): that records main as merged from here on. To spare this sync "
            f"the repeated conflicts of the squashed one in dev's history (see above) instead: "
            f"{'`git merge --abort`, ' if merging else ''}{command} on dev, and sync again.")


def warning_lines(scan: SquashScan, base_sha: str) -> list[str]:
    """guard's warning (stderr): not this merge's fault, so no violation; plain text, one finding a line."""
    if scan.error:
        return [f"depsync guard: warning: squash-merged syncs in dev's history not looked for: {markdown.clean(scan.error)}"]
    if not scan.findings:
        return []
    lines = [f"depsync guard: warning: dev carries main's commits without main as a parent, so the merge-base is stuck at {_short(base_sha)}:"]
    for finding in scan.findings:
        commits, count = _dev_commits(finding)
        lines.append(f"  {commits}{count} \"{markdown.clean(finding.subject)[:120]}\": {_what(finding)}")
    newest = scan.findings[-1]
    lines.append(f"  each sync merges main's changes since {_short(base_sha)} again (the same conflicts) and dev's history reads main's values as dev's own;")
    left = f"; it counts the {scan.left_out} commit(s) of main the copy left out as merged too" if scan.left_out else ""
    lines.append(f"  repair: merge sync PRs with a merge commit; to record main as merged once, on dev: {repair_command(newest)} (dev's files unchanged{left})")
    lines += [f"  {markdown.clean(line.strip())}" for line in _dropped_lines(scan, newest.newest_main, lambda text: text)]
    lines += [f"  {line}" for line in _cut_lines(scan)]
    return lines


def to_json(scan: SquashScan, base_sha: str) -> dict[str, Any]:
    return {
        "merge_base": base_sha,
        "truncated": scan.truncated,
        "commits_read": {"main": scan.read[0], "dev": scan.read[1]},
        "error": scan.error or None,
        "files_cut": scan.files_cut,
        "dropped_by_repair": [{"path": change.path, "main": change.main} for change in scan.dropped],
        "dropped_cut": scan.dropped_cut,
        "findings": [
            {
                "kind": f.kind,
                "dev_commits": list(f.dev_commits),
                "subject": f.subject,
                "time": f.time,
                "carried": list(f.carried),
                "left_out": list(f.left_out),
                "eligible": f.eligible,
                "newest_main": f.newest_main,
                "paths": f.paths,
                "repair": repair_command(f, full=True),
            }
            for f in scan.findings
        ],
    }
