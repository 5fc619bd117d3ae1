"""`depsync check --fix`: the mechanical fixes, as text edits (pure: texts and findings in, texts out).

Four rules have a fix that needs no judgement:

- docker-no-install-renamed: a stale `--no-install-package NAME` whose package the lock has as
  exactly one other build (`-cu12` -> `-cu13`) is renamed to it; with several, it is left alone
  and said (which one the image must keep out is the user's call).
- docker-stale-no-install: a stale `--no-install-package NAME` with no other build in the lock
  is removed from the exact line the finding names (the summary says so, name by name); the rest of the line stays, a line left empty goes, and a `\\`
  continuation that would now run into the next command is closed. The result is parsed
  again and must run the same uv commands minus those flags, or the fix is not offered.
- source-pin-not-commit: `rev` becomes the full commit the lock resolved (tag/branch/short commit
  replaced); a direct `git+...@ref` requirement is left alone and said (a requirement string).
- metadata-rev-mismatch: the version's hex local segment follows the pin.

The last two edit pyproject.toml with tomlkit (only those values change); uv.lock then needs
`depsync lock`, which depsync never does behind the user's back. Only findings that were
reported are fixed, so `severity = { rule = "off" }` turns a fix off too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from depsync.core.findings import FIXABLE, Finding
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.pyproject import Pyproject
from depsync.core.names import canonicalize_name
from depsync.core.rules.inputs import CheckInputs
from depsync.core.trust import is_full_commit
from depsync.errors import DepsyncError
from depsync.records import field, record

_STALE, _RENAMED, _PIN, _METADATA = "docker-stale-no-install", "docker-no-install-renamed", "source-pin-not-commit", "metadata-rev-mismatch"


@record
class Fix:
    """One edit of one file, and the findings it removes."""

    file: str
    rule: str
    description: str
    covers: tuple[Finding, ...]
    relock: bool = False  # pyproject.toml changed: uv.lock must be regenerated (`depsync lock`)


@record
class Unfixed:
    finding: Finding
    reason: str


@record(frozen=False)
class FixPlan:
    before: dict[str, str] = field(default_factory=dict)  # path -> text now
    after: dict[str, str] = field(default_factory=dict)  # path -> text with the fixes
    fixes: list[Fix] = field(default_factory=list)
    unfixed: list[Unfixed] = field(default_factory=list)

    @property
    def changed(self) -> list[str]:
        return sorted(path for path, text in self.after.items() if text != self.before.get(path))

    @property
    def fixed(self) -> list[Finding]:
        return [f for fix in self.fixes for f in fix.covers]

    def diff(self) -> str:
        """A unified diff (`git apply -p0` applies it), files in path order."""
        import difflib

        out: list[str] = []
        for path in self.changed:
            before, after = self.before[path].splitlines(keepends=True), self.after[path].splitlines(keepends=True)
            for line in difflib.unified_diff(before, after, f"a/{path}", f"b/{path}"):
                out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out)


def plan(inputs: CheckInputs, findings: Sequence[Finding], read: Callable[[str], str]) -> FixPlan:
    """The fixes for the fixable findings; read(path) gives a project file's text."""
    result = FixPlan()
    fixable = [f for f in findings if f.rule in FIXABLE]
    flags = (_STALE, _RENAMED)
    for path in sorted({f.file for f in fixable if f.rule in flags}):
        _plan_dockerfile(result, inputs, path, [f for f in fixable if f.file == path and f.rule in flags], read(path))
    # the root's pyproject and each workspace member's (whose own sources get the pin policy too)
    projects = {inputs.pyproject.path: inputs.pyproject, **{p.path: p for p in inputs.local_projects.values()}}
    by_file: dict[str, list[Finding]] = {}
    for finding in fixable:
        if finding.rule in (_PIN, _METADATA):
            by_file.setdefault(finding.file if finding.file in projects else inputs.pyproject.path, []).append(finding)
    for path, found in sorted(by_file.items()):
        _plan_pyproject(result, inputs, found, read(path), projects[path])
    return result


# -- Dockerfile: stale --no-install-package -----------------------------------------------------

_FLAG = "--no-install-package"


def _stale_names(dockerfile: Dockerfile, inputs: CheckInputs) -> dict[int, list[tuple[str, str | None]]]:
    """line -> the stale --no-install-package values on it, as uv gets them, each with what it
    becomes: the lock's one other build of the package (rules/dockerfile.renamed_counterparts),
    None (removed) when the lock has none, the value itself (left alone) when it has several."""
    from depsync.core.rules.dockerfile import asked_for, renamed_counterparts

    lock_names = {canonicalize_name(n) for n in inputs.lock.names()} if inputs.lock else set()
    asked = asked_for(inputs)
    out: dict[int, list[tuple[str, str | None]]] = {}
    for command in dockerfile.uv_commands:
        for arg in command.flag_values(_FLAG):
            if not arg.unresolved and canonicalize_name(arg.value) not in lock_names:
                found = renamed_counterparts(arg.value, lock_names, asked)
                becomes = found[0] if len(found) == 1 else None if not found else arg.value
                out.setdefault(arg.line, []).append((arg.value, becomes))
    return out


def _flag_pattern(name: str) -> re.Pattern[str]:
    return re.compile(r"(?<![^\s])" + re.escape(_FLAG) + r"(?:[ \t]+|=)(['\"]?)" + re.escape(name) + r"\1(?=[\s;&|)]|\\?$)")


def _rename_flag(line: str, name: str, new: str) -> str | None:
    """line with `--no-install-package NAME` naming NEW instead (as written: quotes, `=`)."""
    match = _flag_pattern(name).search(line)
    if match is None:
        return None
    written = match.group(0)
    return line[: match.start()] + written[: len(written) - len(name) - len(match.group(1))] + new + match.group(1) + line[match.end() :]


def _remove_flag(line: str, name: str) -> str | None:
    """line without `--no-install-package NAME` (or `=NAME`, quoted or not); None when the
    flag is not written literally on this line (a variable, a value on the next line)."""
    match = _flag_pattern(name).search(line)
    if match is None:
        return None
    start, end = match.span()
    rest = line[end:]
    if rest.strip() == "":  # at the end of the line: the blanks before it go too
        return line[:start].rstrip(" \t") + rest[len(rest.rstrip("\r\n")) :]
    if rest[:1] in " \t":  # before another word: the blanks after it go
        return line[:start] + rest.lstrip(" \t")
    return line[:start].rstrip(" \t") + rest  # before `;`, `&&`, `)`


def _blank_or_comment(line: str) -> bool:
    """BuildKit skips these inside a continuation (and the shell ignores them)."""
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _continues(line: str) -> bool:
    return line.rstrip("\r\n").rstrip(" \t").endswith("\\")


def _edit_dockerfile(text: str, removals: dict[int, list[tuple[str, str | None]]]) -> tuple[str, list[tuple[int, str]]]:
    """text with the flags removed (None) or renamed; also the (line, name) pairs that could not be edited."""
    lines = text.splitlines(keepends=True)
    failed: list[tuple[int, str]] = []
    dropped: set[int] = set()
    for number in sorted(removals):  # ascending: a closed continuation is always above
        names = removals[number]
        index = number - 1
        if not 0 <= index < len(lines):
            failed += [(number, n) for n in names]
            continue
        line = lines[index]
        edited: str | None = line
        for name, becomes in names:
            edited = _remove_flag(line, name) if becomes is None else _rename_flag(line, name, becomes)
            if edited is None:
                break
            line = edited
        if edited is None:  # one of them is not written literally: the line stays as it is
            failed += [(number, n) for n, _ in names]
            continue
        body = line.rstrip("\r\n").strip(" \t")
        if body in ("", "\\") and lines[index].strip():
            dropped.add(index)
            if not _continues(lines[index]):
                # it ended the command: the last kept line before it must end it now
                previous = next((i for i in range(index - 1, -1, -1) if i not in dropped and not _blank_or_comment(lines[i])), None)
                if previous is not None and _continues(lines[previous]):
                    kept = lines[previous]
                    ending = kept[len(kept.rstrip("\r\n")) :]
                    lines[previous] = kept.rstrip("\r\n").rstrip(" \t")[:-1].rstrip(" \t") + ending
        else:
            lines[index] = line
    return "".join(line for i, line in enumerate(lines) if i not in dropped), failed


def _without_flags(dockerfile: Dockerfile, edits: dict[int, list[tuple[str, str | None]]]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Each uv command as (stage, subcommand, words) with the edited flags removed or renamed."""
    out = []
    for command in dockerfile.uv_commands:
        words = [w.value for w in command.words]
        kept: list[str] = []
        skip = False
        for index, word in enumerate(command.words):
            if skip:
                skip = False
                continue
            changes = dict(edits.get(word.line, []))
            if word.value == _FLAG and index + 1 < len(words) and words[index + 1] in changes:
                skip = True
                becomes = changes[words[index + 1]]
                if becomes is not None:
                    kept += [_FLAG, becomes]
                continue
            if word.value.startswith(_FLAG + "=") and word.value[len(_FLAG) + 1 :] in changes:
                becomes = changes[word.value[len(_FLAG) + 1 :]]
                if becomes is not None:
                    kept.append(f"{_FLAG}={becomes}")
                continue
            kept.append(word.value)
        out.append((command.stage, command.subcommand, tuple(kept)))
    return out


def _plan_dockerfile(result: FixPlan, inputs: CheckInputs, path: str, findings: list[Finding], text: str) -> None:
    dockerfile = next((d for d in inputs.dockerfiles if d.path == path), None)
    if dockerfile is None:
        result.unfixed += [Unfixed(f, "the Dockerfile was not loaded") for f in findings]
        return
    stale = _stale_names(dockerfile, inputs)
    wanted = {f.line for f in findings}
    # several other builds in the lock: which one the image must keep out is the user's call
    ambiguous = {line for line, names in stale.items() if any(n == becomes for n, becomes in names)}
    for finding in findings:
        if finding.line in ambiguous:
            result.unfixed.append(Unfixed(finding, "the lock has several other builds of the package: write the one the image must not install"))
    removals = {line: names for line, names in stale.items() if line in wanted and line not in ambiguous}
    new_text, failed = _edit_dockerfile(text, removals)
    for line in {line for line, _ in failed}:
        del removals[line]
    covered = [f for f in findings if f.line in removals]
    for finding in findings:
        if finding not in covered and finding.line not in ambiguous:
            result.unfixed.append(Unfixed(finding, "the flag is not written literally on that line (a variable, or the value on the next line)"))
    if not covered or new_text == text:
        return
    # the edit must leave every uv command as it was, minus the removed flags and with the renamed ones
    try:
        edited = Dockerfile.from_text(new_text, path, dict(dockerfile.args))
    except DepsyncError as exc:
        result.unfixed += [Unfixed(f, f"the edited Dockerfile would not parse: {exc}") for f in covered]
        return
    expected = _without_flags(dockerfile, removals)
    actual = [(c.stage, c.subcommand, tuple(w.value for w in c.words)) for c in edited.uv_commands]
    if expected != actual:
        result.unfixed += [Unfixed(f, "editing the flags would change other words of the uv command") for f in covered]
        return
    result.before[path], result.after[path] = text, new_text
    edits = [(name, becomes) for line in sorted(removals) for name, becomes in removals[line]]
    renamed = [f"{name} -> {becomes}" for name, becomes in edits if becomes is not None]
    removed = [name for name, becomes in edits if becomes is None]
    if renamed:
        flags = "a `--no-install-package` flag" if len(renamed) == 1 else f"{len(renamed)} `--no-install-package` flags"
        rules = {_RENAMED}
        result.fixes.append(Fix(path, _RENAMED, f"renamed {flags} to the lock's other build: {', '.join(renamed)}",
                                tuple(f for f in covered if f.rule in rules)))
    if removed:
        flags = "a stale `--no-install-package` flag" if len(removed) == 1 else f"{len(removed)} stale `--no-install-package` flags"
        result.fixes.append(Fix(path, _STALE, f"removed {flags} (the lock has no such package, nor another build of it): {', '.join(removed)}",
                                tuple(f for f in covered if f.rule == _STALE)))


# -- pyproject.toml: git pins and dependency-metadata versions ------------------------------------


def _plan_pyproject(result: FixPlan, inputs: CheckInputs, findings: list[Finding], text: str, pyproject: Pyproject) -> None:
    """The fixes in one pyproject.toml: the root's, or a workspace member's (its own sources)."""
    import tomlkit

    from depsync.core.rules.metadata import follow_rev, local_sha
    from depsync.core.rules.sources import locked_commit

    path = pyproject.path
    doc = tomlkit.parse(text)
    uv = doc.get("tool", {}).get("uv", {})
    sources = uv.get("sources", {})
    new_commits: dict[str, str] = {}  # name -> the commit its git source is pinned to after the fixes

    source_lines = {pyproject.line_of_source(canonicalize_name(str(key))) for key in sources.keys()}
    for finding in [f for f in findings if f.rule == _PIN]:
        if finding.file != path or finding.line not in source_lines:
            # `name @ git+...@ref` in a dependency list: a requirement string, which --fix never
            # rewrites (its URL is the user's text, and the same ref may stand in several lists)
            result.unfixed.append(Unfixed(finding, "a direct git URL requirement is not rewritten by --fix: put the commit the finding names after `@` by hand"))
            continue
        done = []
        for key in list(sources.keys()):
            name = canonicalize_name(str(key))
            if pyproject.line_of_source(name) != finding.line:
                continue
            value = sources[key]
            tables = list(value) if isinstance(value, list) else [value]
            for table in tables:
                plain = table.unwrap() if hasattr(table, "unwrap") else dict(table)
                if "git" not in plain or _is_commit(plain.get("rev")):
                    continue
                commit = locked_commit(inputs.lock, name, plain)
                if commit is None:
                    continue
                was = next((f"{k} {plain[k]!r}" for k in ("rev", "tag", "branch") if k in plain), "the default branch")
                _pin(table, commit)
                new_commits[name] = commit
                done.append(f"{key}: {was} -> rev {commit[:12]}")
        if done:
            result.fixes.append(Fix(path, _PIN, "pinned " + "; ".join(done), (finding,), relock=True))
        else:
            result.unfixed.append(Unfixed(finding, "the lock records no single commit for this source (relock first with `depsync lock`)"))

    plain_sources = pyproject.sources()
    for finding in [f for f in findings if f.rule == _METADATA]:
        entries = uv.get("dependency-metadata", [])
        entry = next((e for e in entries if pyproject.line_of_metadata(str(e.get("name", ""))) == finding.line), None)
        if entry is None:
            result.unfixed.append(Unfixed(finding, "no dependency-metadata entry at that line"))
            continue
        name = canonicalize_name(str(entry["name"]))
        git_tables = [t for t in plain_sources.get(name, []) if "git" in t]
        if not git_tables:  # the root has no source for it: a member's own (core/rules/metadata.py reads it so)
            from depsync.core.rules.metadata import member_git_tables

            git_tables = [t for _, t in member_git_tables(inputs, name)][:1]
        commit = new_commits.get(name)
        if commit is None and len(git_tables) == 1:
            rev = str(git_tables[0].get("rev", "")).lower()
            commit = rev if _is_commit(rev) else locked_commit(inputs.lock, name, git_tables[0])
        version = str(entry.get("version", ""))
        if commit is None or local_sha(version) is None:
            result.unfixed.append(Unfixed(finding, "the commit the source is pinned to is not known (relock first with `depsync lock`)"))
            continue
        new_version = follow_rev(version, commit)
        if new_version == version:
            continue
        entry["version"] = new_version
        result.fixes.append(Fix(path, _METADATA, f"{entry['name']}: version {version} -> {new_version}", (finding,), relock=True))

    new_text = tomlkit.dumps(doc)
    if new_text != text:
        result.before[path], result.after[path] = text, new_text




def _is_commit(value: object) -> bool:
    return isinstance(value, str) and is_full_commit(value.lower())


def _pin(table, commit: str) -> None:  # type: ignore[no-untyped-def]
    """rev = commit in a tomlkit table, where the rev/tag/branch it replaces stood.

    tomlkit's public API deletes and appends, which moves the key and leaves stray blanks in
    an inline table; its container's _replace and depsync.core.tomledit keep the layout (with a fallback)."""
    if "rev" in table:
        table["rev"] = commit
        for key in ("tag", "branch"):
            if key in table:
                del table[key]
        return
    key = next((k for k in ("tag", "branch") if k in table), None)
    try:
        if key is not None:
            table.value._replace(key, "rev", commit)
        elif len(table) > 1:
            from depsync.core.tomledit import (
                insert_after,  # tomlkit is imported lazily here
            )

            insert_after(table.value, "rev", commit, after="git")
        else:
            table["rev"] = commit
    except (AttributeError, KeyError, TypeError):  # another tomlkit: same data, plainer layout
        if key is not None:
            del table[key]
        table["rev"] = commit
