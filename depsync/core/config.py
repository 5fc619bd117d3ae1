"""[tool.depsync] -> a validated, frozen Config. Defaults fit any repository: the CI Dockerfiles are
discovered when none are configured, and Megatron-LM's branch and path names apply only where they exist."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from depsync.core.findings import Severity
from depsync.core.trust import (
    git_ref_allowed,
    image_reference_allowed,
    project_relative,
)
from depsync.errors import DepsyncError
from depsync.records import field, record, replace


@record
class DockerfileSpec:
    path: str
    build_args: dict[str, str] = field(default_factory=dict)


@record
class Config:
    pyproject: str = "pyproject.toml"
    lock: str = "uv.lock"
    dockerfiles: tuple[DockerfileSpec, ...] = ()
    dockerfiles_configured: bool = False  # False: discovered (depsync/shell/ci_dockerfiles.py)
    owner_ref: str = "origin/dev"
    upstream_ref: str = "origin/main"
    protected_paths: tuple[str, ...] = (".github/CODEOWNERS",)
    take_from_main: tuple[str, ...] = ()  # paths or globs reconcile takes wholesale from main (guard: equal to main's)
    allowed_hosts: tuple[str, ...] = ()  # empty: any host
    severity: dict[str, Severity | None] = field(default_factory=dict)  # None: rule off
    conflict_policy: str = "dev"  # who wins a [tool.uv.sources] conflict in reconcile
    default_side: str = "dev"  # who owns the dependency surface in reconcile: "dev" (on evidence) or "main" (a branch following main)
    owned_by_dev: tuple[str, ...] = ()  # packages whose source dev always keeps
    prefer: dict[str, str] = field(default_factory=dict)  # per package: "dev" or "main"
    image: str | None = None  # CI image for `depsync lock` (default: derived from the Dockerfile)
    image_version_policy: str = "release"  # check --image: how close a kept-out package's image version must be to the locked one

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


_KEYS = {
    "pyproject": "path of pyproject.toml, relative to the project root",
    "lock": "path of uv.lock",
    "dockerfiles": 'the CI Dockerfiles every command uses: paths, or tables { path = "...", build-args = { IMAGE_TYPE = "lts" } } (default: discovered, the Dockerfiles that run uv on the project)',
    "owner-ref": "git ref that owns the triple and the protected paths (default origin/dev)",
    "upstream-ref": "git ref synced into the owner (default origin/main)",
    "protected-paths": "paths that must be identical to the owner ref (check adds the owner ref's own list: a change cannot unprotect a path)",
    "take-from-main": "reconcile: paths or globs taken wholesale from main (guard checks them against main)",
    "allowed-hosts": "hosts git/url sources may point to (empty: any)",
    "severity": 'per-rule severity: { rule-id = "error" | "warning" | "info" | "off" }',
    "conflict-policy": 'reconcile: who wins when both sides changed a source, "dev" (default) or "main"',
    "default-side": 'reconcile: who owns the dependency surface, "dev" (default: main\'s changes taken on evidence, else flagged) or "main" (a branch that follows main)',
    "owned-by-dev": "reconcile: packages whose source dev always keeps, whatever main does",
    "prefer": 'reconcile: per-package side, { nemo-run = "main" }',
    "image": "lock: the CI image uv runs in (default: the Dockerfile's FROM, see docs/lock.md); check --image: the image held against the triple",
    "image-version-policy": 'check --image: how a kept-out package\'s image version must match the locked one: "release" (default: same release numbers, pre-release and local segments ignored), "exact", "public" (local segment ignored), "minor", "major" or "off"',
}


def valid_keys() -> dict[str, str]:
    return dict(_KEYS)


def _str_list(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DepsyncError(f"[tool.depsync] {key} must be a list of strings")
    return tuple(value)


def _str(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise DepsyncError(f"[tool.depsync] {key} must be a non-empty string")
    return value


def _path(value: Any, key: str) -> str:
    """A path depsync reads or writes: relative, inside the project (config is repository content)."""
    return project_relative(_str(value, key), f"[tool.depsync] {key}")


def _ref(value: Any, key: str) -> str:
    ref = _str(value, key)
    if not git_ref_allowed(ref):
        raise DepsyncError(f"[tool.depsync] {key} {ref!r} is not a git ref depsync passes to git (starts with '-' or has control characters)")
    return ref


def _image(value: Any, key: str) -> str:
    image = _str(value, key)
    if not image_reference_allowed(image):
        raise DepsyncError(f"[tool.depsync] {key} {image!r} is not an image reference ([registry/]name[:tag][@digest])")
    return image


def _side(value: Any, key: str) -> str:
    if value not in ("dev", "main"):
        raise DepsyncError(f'[tool.depsync] {key} must be "dev" or "main", not {value!r}')
    return str(value)


def _dockerfiles(value: Any) -> tuple[DockerfileSpec, ...]:
    if not isinstance(value, list):
        raise DepsyncError("[tool.depsync] dockerfiles must be a list")
    specs = []
    for item in value:
        if isinstance(item, str):
            specs.append(DockerfileSpec(_path(item, "dockerfiles")))
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            unknown = [key for key in item if key not in ("path", "build-args")]
            if unknown:
                raise DepsyncError(f"[tool.depsync] dockerfiles entry: {unknown_names('key', unknown, ('path', 'build-args'))}; valid: path, build-args")
            args = item.get("build-args", {})
            if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
                raise DepsyncError("[tool.depsync] dockerfiles build-args must be a table of strings")
            specs.append(DockerfileSpec(_path(item["path"], "dockerfiles"), dict(args)))
        else:
            raise DepsyncError("[tool.depsync] each dockerfiles entry must be a path or a table with `path`")
    return tuple(specs)


_POLICIES = ("release", "exact", "public", "minor", "major", "off")  # depsync/core/rules/image.py within_policy


_LEVELS = ("error", "warning", "info", "off")
# what other tools call a level (SARIF's note, GitHub's notice): never accepted, always pointed at depsync's name
_LEVELS_ELSEWHERE = {"note": "info", "notes": "info", "notice": "info", "infos": "info", "information": "info"}


def closest(name: str, known: Any) -> str | None:
    """The valid name a near miss (`owner_ref`, `ownr-ref`, `protected`) meant, else None."""
    from depsync.core.findings import did_you_mean

    pool = set(known)
    spelled = name.replace("_", "-").lower()
    prefixed = sorted(k for k in pool if k.startswith(spelled)) if len(spelled) >= 3 else []
    return spelled if spelled in pool and spelled != name else (prefixed[0] if len(prefixed) == 1 else did_you_mean(spelled, pool))


def suggestion(name: str, known: Any) -> str:
    """` (did you mean 'owner-ref'?)` for a near miss, else ""."""
    guess = closest(name, known)
    return f" (did you mean {guess!r}?)" if guess else ""


def unknown_names(what: str, names: list[str], known: Any, line_of: Callable[[str], int] | None = None) -> str:
    """`unknown key 'owner_ref' (did you mean 'owner-ref'?)`; several, each with its own
    suggestion and line (core.findings.each_with_suggestion). what: the singular noun
    ("[tool.depsync] key", "rule id"), names in the file's order."""
    from depsync.core.findings import each_with_suggestion

    return f"unknown {what}{'s' if len(names) > 1 else ''} {each_with_suggestion(names, lambda name: closest(name, known), line_of)}"


def _level_suggestion(level: str) -> str:
    elsewhere = _LEVELS_ELSEWHERE.get(level.lower())
    return f" (did you mean {elsewhere!r}?)" if elsewhere else suggestion(level, _LEVELS)


def _severity(value: Any, where: Where) -> dict[str, Severity | None]:
    from depsync.core.rules.registry import RULES

    if not isinstance(value, dict):
        raise DepsyncError("[tool.depsync] severity must be a table of rule-id = level", where("severity"))
    # a misspelt id would silently leave the rule at its default: an error, as uv does for unknown fields
    unknown = [rule for rule in value if rule not in RULES]
    if unknown:
        raise DepsyncError(
            f"[tool.depsync] severity: {unknown_names('rule id', unknown, RULES, lambda rule: where.line('severity', rule))} (`depsync rule --all` lists them)",
            where("severity", unknown[0]),
        )
    out: dict[str, Severity | None] = {}
    for rule, level in value.items():
        if level == "off":
            out[rule] = None
            continue
        try:
            out[rule] = Severity.parse(str(level))
        except KeyError:
            raise DepsyncError(
                f"[tool.depsync] severity.{rule}: {level!r} is not error, warning, info or off{_level_suggestion(str(level))}",
                where("severity", rule),
            ) from None
    return out


class Where:
    """`pyproject.toml:LINE` of a [tool.depsync] key (or of a key of one of its tables), for
    errors that point where uv's do; the file alone when the line is not known."""

    def __init__(self, text: str | None = None, path: str = "pyproject.toml") -> None:
        from depsync.core.model.tomltext import TomlLines

        self.path = path
        self.lines = TomlLines(text) if text is not None else None

    def __call__(self, key: str | None = None, subkey: str | None = None) -> str:
        line = self.line(key, subkey)
        return f"{self.path}:{line}" if line else self.path

    def line(self, key: str | None = None, subkey: str | None = None) -> int:
        """The key's line, else the table's; 0 when not known."""
        if self.lines is None:
            return 0
        line = 0
        if key is not None and subkey is not None:
            line = self.lines.key(f"tool.depsync.{key}", subkey) or self.lines.value("tool.depsync", key, subkey)
        if not line and key is not None:
            line = self.lines.key("tool.depsync", key)
        return line or self.lines.table("tool.depsync")


def load_config(table: dict[str, Any], text: str | None = None, path: str = "pyproject.toml") -> Config:
    """Validate a [tool.depsync] table; unknown keys are an error naming the closest valid one.
    With the pyproject's text, an error names the line of the key (`pyproject.toml:42`)."""
    where = Where(text, path)
    unknown = [key for key in table if key not in _KEYS]  # in the file's order, each with its own suggestion
    if unknown:
        raise DepsyncError(
            f"{unknown_names('[tool.depsync] key', unknown, _KEYS, where.line)}; valid keys: {', '.join(sorted(_KEYS))}",
            where(unknown[0]),
        )
    try:
        return _load(table, where)
    except DepsyncError as exc:
        if exc.where is None:
            key = next((k for k in table if f"] {k}" in exc.message or f"] {k} " in exc.message), None)
            raise DepsyncError(exc.message, where(key)) from None
        raise


def _load(table: dict[str, Any], where: Where) -> Config:
    config = Config()
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("pyproject", "lock"):
            changes[key] = _path(value, key)
        elif key in ("owner-ref", "upstream-ref"):
            changes[key.replace("-", "_")] = _ref(value, key)
        elif key == "image":
            changes["image"] = _image(value, key)
        elif key == "image-version-policy":
            if value not in _POLICIES:
                raise DepsyncError(f"[tool.depsync] image-version-policy must be one of {', '.join(_POLICIES)}, not {value!r}{suggestion(str(value), _POLICIES)}")
            changes["image_version_policy"] = str(value)
        elif key == "protected-paths":
            changes["protected_paths"] = tuple(_path(v, key) for v in _str_list(value, key))
        elif key == "take-from-main":
            changes["take_from_main"] = tuple(_path(v, key) for v in _str_list(value, key))
        elif key == "allowed-hosts":
            changes["allowed_hosts"] = _str_list(value, key)
        elif key == "dockerfiles":
            changes["dockerfiles"] = _dockerfiles(value)
            changes["dockerfiles_configured"] = True
        elif key == "severity":
            changes["severity"] = _severity(value, where)
        elif key == "conflict-policy":
            changes["conflict_policy"] = _side(value, key)
        elif key == "default-side":
            changes["default_side"] = _side(value, key)
        elif key == "owned-by-dev":
            changes["owned_by_dev"] = _str_list(value, key)
        elif key == "prefer":
            if not isinstance(value, dict):
                raise DepsyncError("[tool.depsync] prefer must be a table of package = \"dev\" | \"main\"")
            changes["prefer"] = {str(k): _side(v, f"prefer.{k}") for k, v in value.items()}
    return replace(config, **changes)


_ABSENT = object()


def changed_by_main(base: dict[str, Any], dev: dict[str, Any], main: dict[str, Any]) -> tuple[str, ...]:
    """The [tool.depsync] keys main changed since the merge-base to something dev does not have.

    The bot never uses main's values (they come from whoever landed a PR on main); a key that
    differs only because dev changed it is dev's own business and not reported."""
    keys = set(base) | set(dev) | set(main)
    return tuple(sorted(k for k in keys if main.get(k, _ABSENT) != dev.get(k, _ABSENT) and main.get(k, _ABSENT) != base.get(k, _ABSENT)))
