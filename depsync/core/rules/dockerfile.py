"""Dockerfile vs pyproject and lock: extras, groups, --locked/--frozen, --no-install-package.

What uv itself does decides each finding (checked against uv 0.13.9 and 0.7.2): `--extra`
takes comma-separated names; `--extra`, `--no-extra`, `--group`, `--only-group`,
`--no-group` and UV_NO_GROUP must name what pyproject defines; UV_LOCKED/UV_FROZEN take
clap's boolish values; `uv run --no-sync` (or UV_NO_SYNC) installs nothing and checks no
flag; there is no `-E` short option (uv fails with "unexpected argument '-E'").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from depsync.core import limits
from depsync.core.findings import Finding, Severity, listed
from depsync.core.model.uv_commands import VALUE_OPTIONS, Arg, UvCommand
from depsync.core.names import canonicalize_name as _canonical
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.missing_members import FIX as MISSING_FIX
from depsync.core.rules.missing_members import missing_hint, missing_member_dirs
from depsync.core.rules.registry import RULES
from depsync.records import record, replace

_LOCK_READERS = {"sync", "export", "run"}
_PIP_INSTALLS = {"pip install", "pip sync"}
# clap's BoolishValueParser, which uv uses for its boolean variables
_TRUE = {"1", "true", "yes", "y", "on", "t"}
_FALSE = {"0", "false", "no", "n", "off", "f"}


def _names(command: UvCommand, flags: tuple[str, ...], *, commas: bool = False) -> list[Arg]:
    """Resolved values of flags; `--extra a,b` is two names (uv splits extras on commas)."""
    out = []
    for arg in command.flag_values(*flags):
        if arg.unresolved:
            continue
        parts = arg.value.split(",") if commas else [arg.value]
        out += [replace(arg, value=part) for part in parts]
    return out


def _pip_group(command: UvCommand, arg: Arg) -> Arg | None:
    """`uv pip install --group [path:]name`: the name, when it is this project's pyproject.toml."""
    path, sep, name = arg.value.rpartition(":")
    if not sep:
        return arg
    if path.lstrip("./") not in ("pyproject.toml", "pylock.toml"):
        return None  # another project's groups: not ours to check
    return replace(arg, value=name)


def _boolish(value: str) -> bool | None:
    lowered = value.lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else None


def _locking(command: UvCommand) -> tuple[bool, str | None]:
    """(installs from the lock as it is, the UV_* variable with no single value that decides it)."""
    if command.has_flag("--locked", "--frozen"):
        return True, None
    for name in ("UV_LOCKED", "UV_FROZEN"):
        present, value = command.env_value(name)
        if not present:
            continue
        if value is None:
            return False, name
        if _boolish(value):
            return True, None
    return False, None


def _installs_nothing(command: UvCommand) -> bool:
    """`uv run --no-sync` (or UV_NO_SYNC) runs without syncing: uv checks none of the sync flags."""
    if command.subcommand != "run":
        return False
    if command.has_flag("--no-sync"):
        return True
    present, value = command.env_value("UV_NO_SYNC")
    return present and value is not None and bool(_boolish(value))


_CHECKED = ("--extra", "--no-extra", "--group", "--only-group", "--no-group", "--no-install-package")


def _reported_unresolved(command: UvCommand) -> list[Arg]:
    """Unresolved words that matter: values of the flags depsync checks, and unquoted words
    that may stand for flags (`uv sync ${FLAGS}`); not an index URL or a requirement."""
    checked = {id(a) for a in command.flag_values(*_CHECKED)}
    out, words = [], command.words
    for index, arg in enumerate(words):
        if not arg.unresolved:
            continue
        before = words[index - 1].value if index else ""
        value_of_other = (before in VALUE_OPTIONS and before not in _CHECKED) or (
            arg.value.startswith("-") and "=" in arg.value and not arg.value.startswith(tuple(f + "=" for f in _CHECKED))
        )
        if id(arg) in checked or arg.value.startswith(tuple(f + "=" for f in _CHECKED)) or (arg.may_split and not value_of_other):
            out.append(arg)
    return out


def _shown(name: str) -> str:
    return name if name.startswith(("$", "`")) else "$" + name


def _why_unresolved(arg: Arg) -> str:
    if arg.capped:
        # depsync stops expanding there (an untrusted Dockerfile could grow without end); not guessed
        return (
            f"whose expansion goes past what depsync expands (a value over {limits.MAX_EXPANSION_BYTES // 1024} KiB, "
            f"over {limits.MAX_EXPANSION_TOTAL_BYTES // 2**20} MiB or {limits.MAX_EXPANSION_STEPS} substitutions in the file, "
            f"or over {limits.MAX_EXPANSION_DEPTH} nested levels)"
        )
    if any(n.startswith(("$(", "`")) for n in arg.unresolved):
        return "a command substitution whose output is only known when the image builds"
    return "which has no single value here"


_VERSION_LIKE = re.compile(r"[a-z]*\d+[a-z0-9]*")
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _version_like(segment: str) -> bool:
    return bool(_VERSION_LIKE.fullmatch(segment))


def _letters(segment: str) -> str:
    return segment[: len(segment) - len(segment.lstrip("abcdefghijklmnopqrstuvwxyz"))]


def is_counterpart(name: str, other: str) -> bool:
    """Do two canonical names differ only by a version-like segment: `-cu12` / `-cu13` (the same
    letters, other digits), or one name has a version-like segment the other lacks
    (`nvidia-cublas-cu12` / `nvidia-cublas`: CUDA 13 wheels dropped the suffix)?"""
    a, b = name.split("-"), other.split("-")
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 and _version_like(a[diff[0]]) and _version_like(b[diff[0]]) and _letters(a[diff[0]]) == _letters(b[diff[0]])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    if len(longer) != len(shorter) + 1 or not shorter:
        return False
    return any(longer[:i] + longer[i + 1 :] == shorter and _version_like(longer[i]) for i in range(1, len(longer)))


def asked_for(inputs: CheckInputs) -> set[str]:
    """Canonical names of what pyproject.toml itself asks for (dependencies, extras, groups)."""
    out = set()
    for text, _ in inputs.pyproject.all_requirement_strings():
        match = _REQUIREMENT_NAME.match(text) if isinstance(text, str) else None
        if match:
            out.add(_canonical(match.group(1)))
    return out


class Counterparts:
    """The names is_counterpart pairs with a name, looked up instead of tested one by one: a
    Dockerfile's stale flags against a lock's hundreds of names were thousands of tests."""

    def __init__(self, names: Iterable[str]) -> None:
        self._names: dict[tuple[str, ...], str] = {}  # the segments of each name -> the name
        # (position, letters, the other segments) of each version-like segment -> the names
        self._varied: dict[tuple[int, str, tuple[str, ...]], list[str]] = {}
        # the segments without one version-like segment (never the first) -> the names
        self._dropped: dict[tuple[str, ...], list[str]] = {}
        for name in names:
            parts = tuple(name.split("-"))
            self._names[parts] = name
            for index, part in enumerate(parts):
                if _version_like(part):
                    rest = parts[:index] + parts[index + 1 :]
                    self._varied.setdefault((index, _letters(part), rest), []).append(name)
                    if index:
                        self._dropped.setdefault(rest, []).append(name)

    def of(self, name: str) -> set[str]:
        """Every indexed name `is_counterpart(name, it)` holds for."""
        parts = tuple(name.split("-"))
        found = set(self._dropped.get(parts, ()))  # it lacks one version-like segment of name's
        for index, part in enumerate(parts):
            if _version_like(part):
                rest = parts[:index] + parts[index + 1 :]
                found.update(other for other in self._varied.get((index, _letters(part), rest), ()) if other != name)
                if index and rest in self._names:  # name has a version-like segment it lacks
                    found.add(self._names[rest])
        return found


def renamed_counterparts(name: str, lock_names: set[str], asked: set[str], index: Counterparts | None = None) -> list[str]:
    """The lock's names for what a stale `--no-install-package name` meant (another build of
    the same package), sorted. A name pyproject asks for itself is not one: keeping it out of
    the image would drop a dependency the project declares (`transformer-engine` for a stale
    `transformer-engine-cu12`). index: Counterparts(lock_names), when made once for many names."""
    found = (index or Counterparts(lock_names)).of(_canonical(name))
    return sorted(c for c in found if c not in asked)


def _meant(name: str, known: set[str] | frozenset[str]) -> str:
    """`; did you mean 'nvidia-cudnn-cu13'?` for a near miss (another CUDA build, a typo)."""
    from depsync.core.findings import did_you_mean

    guess = did_you_mean(_canonical(name), known)
    return f"; did you mean {guess!r}?" if guess else ""


def _declared(name: str, declared: set[str]) -> str:
    """Why a close name the project declares itself is not offered in the flag's place."""
    from depsync.core.findings import did_you_mean

    guess = did_you_mean(_canonical(name), declared)
    if guess is None:
        return ""
    return f" ({guess!r} in the lock is a dependency pyproject.toml declares: naming it here would keep it out of the image)"


def _literal_hint(command: UvCommand, value: str) -> str:
    return " (the exec form `RUN [...]` does not expand variables)" if command.exec_form and "$" in value else ""


def used_tables(dockerfile: Any) -> Iterator[tuple[str, str, int]]:
    """("extra" | "group", canonical name, line) of every extra and group a uv install of the
    Dockerfile asks for (resolved values only): what the pyproject must keep defining."""
    for command in dockerfile.uv_commands:
        if command.subcommand not in _LOCK_READERS | _PIP_INSTALLS or _installs_nothing(command):
            continue
        for arg in _names(command, ("--extra",), commas=True):
            yield "extra", _canonical(arg.value), arg.line
        for arg in _names(command, ("--group", "--only-group")):
            target = _pip_group(command, arg) if command.subcommand in _PIP_INSTALLS else arg
            if target is not None:
                yield "group", _canonical(target.value), arg.line


@record
class _Target:
    """The project(s) whose extras and groups a uv command may name, and what is unknown."""

    path: str
    extras: set[str]
    groups: set[str]
    unknown: str = ""  # a member directory is missing: the names it defines cannot be known


def _tables(project: Any) -> tuple[set[str], set[str]]:
    return {_canonical(e) for e in project.extra_names}, {_canonical(g) for g in project.group_names()}


def _target(command: UvCommand, inputs: CheckInputs, missing: dict[str, str]) -> _Target:
    """`--package NAME` reads that member's extras and groups, `--all-packages` every member's
    (as uv does); otherwise the project's own."""
    root = inputs.pyproject
    members = [p for p in inputs.local_projects.values() if inputs.workspace_members and p.name in inputs.workspace_members and p.name != root.name]
    extras, groups = _tables(root)
    if any(w.value == "--all-packages" for w in command.words) and command.subcommand in _LOCK_READERS:
        for member in members:
            more_extras, more_groups = _tables(member)
            extras, groups = extras | more_extras, groups | more_groups
        return _Target(f"{root.path} or a workspace member", extras, groups, missing_hint(missing))
    packages = [a for a in command.flag_values("--package") if not a.unresolved] if command.subcommand in _LOCK_READERS else []
    if len(packages) == 1:
        name = _canonical(packages[0].value)
        member = next((m for m in members if m.name == name), None)
        if member is not None:
            return _Target(member.path, *_tables(member))
        if name in missing:
            return _Target(missing[name], set(), set(), missing_hint({name: missing[name]}))
    return _Target(root.path, extras, groups)


def check(inputs: CheckInputs) -> Iterator[Finding]:
    missing = missing_member_dirs(inputs)
    lock_names = {_canonical(n) for n in inputs.lock.names()} if inputs.lock else None
    asked: set[str] | None = None  # computed on the first stale flag only
    counterparts: Counterparts | None = None  # likewise
    for dockerfile in inputs.dockerfiles:
        path = dockerfile.path
        any_locked = any(c.subcommand == "sync" and _locking(c)[0] for c in dockerfile.uv_commands)
        for command in dockerfile.uv_commands:
            if command.subcommand not in _LOCK_READERS | _PIP_INSTALLS or _installs_nothing(command):
                continue
            where = f"`uv {command.subcommand}`" + (" (ONBUILD)" if command.onbuild else "")
            for arg in _reported_unresolved(command):
                names = ", ".join(_shown(n) for n in arg.unresolved)
                if all(command.reads_secret(n) for n in arg.unresolved):
                    # a BuildKit secret is known only to the build, by design: never ask for it as a build arg
                    if any(v.line == arg.line and v.unresolved == arg.unresolved for v in command.flag_values(*_CHECKED)):
                        yield RULES["docker-unresolved"].finding(
                            path,
                            arg.line,
                            f"{where} argument {arg.value!r} is read from a BuildKit secret ({names}), so depsync cannot check it",
                            "name the extra, group or package in the Dockerfile itself; keep secrets for credentials",
                        ).with_severity(Severity.INFO)
                    continue
                yield RULES["docker-unresolved"].finding(
                    path,
                    arg.line,
                    f"{where} argument {arg.value!r} uses {names}, {_why_unresolved(arg)}",
                    "give it an ARG/ENV default, or pass it with [tool.depsync] dockerfiles build-args",
                )
            for index, arg in enumerate(command.words):
                if arg.value == "-E" or (arg.value.startswith("-E") and not arg.value.startswith("--")):
                    following = command.words[index + 1].value if index + 1 < len(command.words) else "..."
                    given = arg.value[2:] or following
                    yield RULES["docker-unknown-extra"].finding(
                        path,
                        arg.line,
                        f"{where} has `{arg.value}`, but uv has no -E option: the build fails with \"unexpected argument '-E' found\"",
                        f"write `--extra {given}`",
                    )
            target = _target(command, inputs, missing)
            extras, groups = target.extras, target.groups
            if target.unknown:
                # a member directory is missing: what it defines is unknown, so no name is judged
                for rule, flags in (("docker-unknown-extra", ("--extra", "--no-extra")), ("docker-unknown-group", ("--group", "--only-group", "--no-group"))):
                    for arg in _names(command, flags, commas="extra" in rule):
                        if _canonical(arg.value) not in (extras if "extra" in rule else groups):
                            yield RULES[rule].finding(
                                path, arg.line, f"{where} names {arg.value!r}, which cannot be checked: {target.unknown}", MISSING_FIX
                            ).with_severity(Severity.INFO)
            for arg in _names(command, ("--extra", "--no-extra"), commas=True) if not target.unknown else ():
                if _canonical(arg.value) not in extras:
                    yield RULES["docker-unknown-extra"].finding(
                        path,
                        arg.line,
                        f"`uv {command.subcommand} --extra {arg.value}`{' (ONBUILD)' if command.onbuild else ''}: {target.path} defines no extra {arg.value!r} (it has: {_has(extras)})"
                        + _literal_hint(command, arg.value)
                        + _meant(arg.value, extras),
                        f"remove `--extra {arg.value}` or add it to [project.optional-dependencies]",
                        _all(extras),
                    )
            for arg in _names(command, ("--group", "--only-group", "--no-group")) if not target.unknown else ():
                group = _pip_group(command, arg) if command.subcommand in _PIP_INSTALLS else arg
                if group is not None and _canonical(group.value) not in groups:
                    yield RULES["docker-unknown-group"].finding(
                        path,
                        arg.line,
                        f"{where} names group {group.value!r}, which {target.path} does not define (it has: {_has(groups)})"
                        + _literal_hint(command, group.value)
                        + _meant(group.value, groups),
                        f"remove the flag or add {group.value!r} to [dependency-groups]",
                        _all(groups),
                    )
            present, no_group = command.env_value("UV_NO_GROUP")
            if present and no_group and command.subcommand in _LOCK_READERS:
                for name in no_group.split():
                    if _canonical(name) not in groups:
                        yield RULES["docker-unknown-group"].finding(
                            path,
                            command.line,
                            f"{where} runs with UV_NO_GROUP={no_group!r}; {target.path} defines no group {name!r} (it has: {_has(groups)})",
                            f"remove {name!r} from UV_NO_GROUP or add it to [dependency-groups]",
                            _all(groups),
                        )
            if command.subcommand == "sync":
                locked, undecided = _locking(command)
                if undecided is not None:
                    yield RULES["docker-unresolved"].finding(
                        path,
                        command.line,
                        f"{where} is locked only if ${undecided} is true, and ${undecided} has no single value here",
                        f"give {undecided} an ENV/ARG value, or add --locked to the command",
                    )
                elif not locked:
                    finding = RULES["docker-not-locked"].finding(
                        path,
                        command.line,
                        f"{where} without --locked or --frozen (nor UV_LOCKED/UV_FROZEN set) re-resolves a stale lock at build "
                        "time (and rewrites it, so a later `uv sync --locked` passes too) instead of failing",
                        "add --locked (fails when the lock is stale) or --frozen, or set ENV UV_LOCKED=1",
                    )
                    if any_locked:
                        # another sync in this image is locked: a hazard, not a certain miss
                        finding = finding.with_severity(Severity.WARNING)
                    yield finding
            for arg in _names(command, ("--no-install-package",)) if lock_names is not None else ():
                if _canonical(arg.value) in lock_names:  # type: ignore[operator]
                    continue
                assert lock_names is not None
                if asked is None or counterparts is None:
                    asked, counterparts = asked_for(inputs), Counterparts(lock_names)
                found = renamed_counterparts(arg.value, lock_names, asked, counterparts)
                if len(found) == 1:
                    yield RULES["docker-no-install-renamed"].finding(
                        path,
                        arg.line,
                        f"--no-install-package {arg.value} keeps nothing out: the lock has {found[0]!r} instead, "
                        f"so the image installs it over what the base image ships; write `--no-install-package {found[0]}`",
                        "name the lock's build of the package in the flag (never delete it: that installs the lock's build)",
                    )
                elif found:
                    yield RULES["docker-no-install-renamed"].finding(
                        path,
                        arg.line,
                        f"--no-install-package {arg.value} keeps nothing out: the lock has {len(found)} builds of it instead "
                        f"({', '.join(found)}), which the image installs",
                        "write the one the image must not install (`--no-install-package NAME`); depsync cannot tell which",
                    )
                else:
                    yield RULES["docker-stale-no-install"].finding(
                        path,
                        arg.line,
                        f"--no-install-package {arg.value} does nothing: the lock has no package {arg.value!r} and no other build of it"
                        + _meant(arg.value, lock_names - asked)
                        + _declared(arg.value, lock_names & asked),
                        "remove the flag (if the package was renamed, write its new name instead)",
                    )


_SHOWN_NAMES = 8  # names of the extras or groups a project has that a message shows (did-you-mean points at the right one)


def _has(names: set[str]) -> str:
    """`a, b, c`, `a, ..., h and 92 more` (a workspace's `--all-packages` has every member's), or `none`."""
    return listed(sorted(names), _SHOWN_NAMES) or "none"


def _all(names: set[str]) -> tuple[str, ...]:
    """The whole list, for the JSON output, when the message cut it."""
    return tuple(sorted(names)) if len(names) > _SHOWN_NAMES + 1 else ()
