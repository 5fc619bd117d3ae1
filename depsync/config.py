"""[tool.depsync] -> a validated, frozen Config. Defaults fit Megatron-LM."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from depsync.errors import DepsyncError
from depsync.findings import Severity
from depsync.untrusted import git_ref_allowed, image_reference_allowed, project_relative


@dataclass(frozen=True)
class DockerfileSpec:
    path: str
    build_args: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Config:
    pyproject: str = "pyproject.toml"
    lock: str = "uv.lock"
    dockerfiles: tuple[DockerfileSpec, ...] = (DockerfileSpec("docker/Dockerfile.ci.dev"),)
    dockerfiles_configured: bool = False  # False: the default path, skipped when absent
    owner_ref: str = "origin/dev"
    upstream_ref: str = "origin/main"
    protected_paths: tuple[str, ...] = (".github/CODEOWNERS",)
    allowed_hosts: tuple[str, ...] = ()  # empty: any host
    severity: dict[str, Severity | None] = field(default_factory=dict)  # None: rule off
    conflict_policy: str = "dev"  # who wins a [tool.uv.sources] conflict in reconcile
    owned_by_dev: tuple[str, ...] = ()  # packages whose source dev always keeps
    prefer: dict[str, str] = field(default_factory=dict)  # per package: "dev" or "main"
    image: str | None = None  # CI image for `depsync lock` (default: derived from the Dockerfile)

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


_KEYS = {
    "pyproject": "path of pyproject.toml, relative to the project root",
    "lock": "path of uv.lock",
    "dockerfiles": 'Dockerfiles to check: paths, or tables { path = "...", build-args = { IMAGE_TYPE = "lts" } }',
    "owner-ref": "git ref that owns the triple and the protected paths (default origin/dev)",
    "upstream-ref": "git ref synced into the owner (default origin/main)",
    "protected-paths": "paths that must be identical to the owner ref",
    "allowed-hosts": "hosts git/url sources may point to (empty: any)",
    "severity": 'per-rule severity: { rule-id = "error" | "warning" | "info" | "off" }',
    "conflict-policy": 'reconcile: who wins when both sides changed a source, "dev" (default) or "main"',
    "owned-by-dev": "reconcile: packages whose source dev always keeps, whatever main does",
    "prefer": 'reconcile: per-package side, { nemo-run = "main" }',
    "image": "lock: the CI image uv runs in (default: the Dockerfile's FROM, see README)",
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
            unknown = set(item) - {"path", "build-args"}
            if unknown:
                raise DepsyncError(f"[tool.depsync] dockerfiles entry has unknown keys {sorted(unknown)}; valid: path, build-args")
            args = item.get("build-args", {})
            if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
                raise DepsyncError("[tool.depsync] dockerfiles build-args must be a table of strings")
            specs.append(DockerfileSpec(_path(item["path"], "dockerfiles"), dict(args)))
        else:
            raise DepsyncError("[tool.depsync] each dockerfiles entry must be a path or a table with `path`")
    return tuple(specs)


def _severity(value: Any) -> dict[str, Severity | None]:
    if not isinstance(value, dict):
        raise DepsyncError("[tool.depsync] severity must be a table of rule-id = level")
    out: dict[str, Severity | None] = {}
    for rule, level in value.items():
        if level == "off":
            out[rule] = None
            continue
        try:
            out[rule] = Severity.parse(str(level))
        except KeyError:
            raise DepsyncError(f"[tool.depsync] severity.{rule}: {level!r} is not error, warning, info or off") from None
    return out


def load_config(table: dict[str, Any]) -> Config:
    """Validate a [tool.depsync] table; unknown keys are an error listing the valid ones."""
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise DepsyncError(f"unknown [tool.depsync] key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(_KEYS))}")
    config = Config()
    changes: dict[str, Any] = {}
    for key, value in table.items():
        if key in ("pyproject", "lock"):
            changes[key] = _path(value, key)
        elif key in ("owner-ref", "upstream-ref"):
            changes[key.replace("-", "_")] = _ref(value, key)
        elif key == "image":
            changes["image"] = _image(value, key)
        elif key == "protected-paths":
            changes["protected_paths"] = tuple(_path(v, key) for v in _str_list(value, key))
        elif key == "allowed-hosts":
            changes["allowed_hosts"] = _str_list(value, key)
        elif key == "dockerfiles":
            changes["dockerfiles"] = _dockerfiles(value)
            changes["dockerfiles_configured"] = True
        elif key == "severity":
            changes["severity"] = _severity(value)
        elif key == "conflict-policy":
            changes["conflict_policy"] = _side(value, key)
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
