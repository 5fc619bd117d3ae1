"""The depsync-check action's summary step: counts, a Markdown report, the lock diff.

Run by the action with the interpreter of the venv it installed depsync into. Everything
comes in through environment variables (the action maps its inputs with `env:`, never by
pasting them into a script), and depsync is called with argument lists, never a shell.

Writes the report to $DEPSYNC_OUT/summary.md and appends it to $GITHUB_STEP_SUMMARY;
writes `errors`, `warnings`, `info` and `summary-path` to $GITHUB_OUTPUT. Exits 0 when
the report was written (the check's own status is enforced by the action's last step),
2 when it could not be: a base ref that does not exist, a lock diff that fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


# depsync's own escapes, one per sink (this runs in the venv depsync is installed in):
# prose cells lose Markdown/HTML/mentions and control characters, code spans stay inert
from depsync.report.markdown import code as _code, text as _cell  # noqa: E402


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def check_report(depsync: str, project: str, owner_ref: str, strict: bool, status: str) -> tuple[str, dict[str, int]]:
    """Run `depsync check --format json` (the same check the annotations came from) and render it."""
    args = [depsync, "check", "--format", "json"] + (["--owner-ref", owner_ref] if owner_ref else []) + (["--strict"] if strict else []) + ["--", project]
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        return f"## depsync check could not run (exit {result.returncode})\n\n{_code(_first_line(result.stderr))}\n", {"errors": 0, "warnings": 0, "info": 0}
    counts = {key: int(document.get("summary", {}).get(key, 0)) for key in ("errors", "warnings", "info")}
    verdict = "passed" if status == "0" else f"failed (exit {status})"
    lines = [
        f"## depsync check {verdict}",
        "",
        f"{_code(project)}: {_plural(counts['errors'], 'error')}, {_plural(counts['warnings'], 'warning')}, {counts['info']} info",
    ]
    if document.get("findings"):
        lines += ["", "| severity | where | rule | finding | fix |", "|---|---|---|---|---|"]
        for f in document["findings"]:
            where = f["file"] + (f":{f['line']}" if f.get("line") else "")
            lines.append(f"| {_cell(f['severity'])} | {_code(where)} | {_code(f['rule'])} | {_cell(f['message'])} | {_cell(f['fix'])} |")
    return "\n".join(lines) + "\n", counts


class Failure(Exception):
    """The lock diff could not be made; the message says why and what to do."""


def _git(project: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", project, *args], capture_output=True, text=True, check=False)


def lock_diff(depsync: str, project: str, base: str, lock: str) -> str:
    """`depsync diff --format markdown` of the lock at base against the work tree's."""
    if base.startswith("-") or any(c in base for c in "\r\n\0"):
        raise Failure(f"base-ref {base!r} is not a ref")
    if _git(project, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{base}^{{commit}}").returncode != 0:
        raise Failure(f"base ref {base} not found: check out with `fetch-depth: 0` (or set `lock-diff: false`)")
    if _git(project, "cat-file", "-e", f"{base}:./{lock}").returncode != 0:
        return f"### uv.lock\n\n{_code(lock)} does not exist at {_code(base)}: nothing to compare.\n"
    result = subprocess.run([depsync, "diff", "-C", project, "--format", "markdown", "--", f"{base}:{lock}", lock], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise Failure(f"depsync diff failed (exit {result.returncode}): {_first_line(result.stderr)}")
    return result.stdout


def main() -> int:
    depsync, project = _env("DEPSYNC"), _env("PROJECT", ".") or "."
    out = Path(_env("DEPSYNC_OUT")) if _env("DEPSYNC_OUT") else Path(_env("RUNNER_TEMP", "/tmp")) / "depsync-check"
    out.mkdir(parents=True, exist_ok=True)
    report, counts = check_report(depsync, project, _env("OWNER_REF"), _env("STRICT") == "true", _env("CHECK_STATUS", "?"))

    base = _env("BASE_REF") or (f"origin/{_env('GITHUB_BASE_REF')}" if _env("GITHUB_BASE_REF") else "")
    failure = ""
    if _env("LOCK_DIFF", "true") != "true":
        report += "\n### uv.lock\n\nLock diff turned off (`lock-diff: false`).\n"
    elif not base:
        report += "\n### uv.lock\n\nNot a pull request and no `base-ref` given: no lock diff.\n"
    else:
        try:
            report += "\n" + lock_diff(depsync, project, base, _env("LOCK", "uv.lock") or "uv.lock")
        except Failure as exc:
            failure = str(exc)
            report += f"\n### uv.lock\n\n**Lock diff failed:** {_cell(failure)}\n"

    summary = out / "summary.md"
    summary.write_text(report)
    if _env("GITHUB_STEP_SUMMARY"):
        with open(_env("GITHUB_STEP_SUMMARY"), "a") as handle:
            handle.write(report)
    if _env("GITHUB_OUTPUT"):
        with open(_env("GITHUB_OUTPUT"), "a") as handle:
            handle.write(f"errors={counts['errors']}\nwarnings={counts['warnings']}\ninfo={counts['info']}\nsummary-path={summary}\n")
    print(f"depsync-check: {_plural(counts['errors'], 'error')}, {_plural(counts['warnings'], 'warning')}; summary in {summary}")
    if failure:
        escaped = failure.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        print(f"::error title=depsync-check lock diff::{escaped}")  # a workflow command: stdout
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
