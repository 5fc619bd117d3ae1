"""The triple against what the CI base image really ships (`depsync check --image`), pure.

A CI Dockerfile keeps packages out of `uv sync` (`--no-install-package torch ...`) because the
base image already has them, while uv.lock is still resolved as if uv installed its own. These
rules hold the lock, the Dockerfile's `uv sync` flags and requires-python against the image's
facts (depsync.core.model.image_env), each finding with the image's evidence: where the
distribution is in the image and at which version.

What a sync installs is the lock's graph walked for the image's environment
(depsync.core.rules.image_install). uv.lock records version specifiers only for the project's
own requirements and `[[tool.uv.dependency-metadata]]`; for other packages the locked version
stands for what the rest of the lock was resolved against.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from depsync.core.findings import Finding
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.image_env import ImageDist, ImageEnv
from depsync.core.model.lock import Lock, LockPackage
from depsync.core.model.requirements import parse_requirement
from depsync.core.names import canonicalize_name
from depsync.core.rules.image_install import (
    SyncSelection,
    cuda_major_of,
    installed,
    marker_holds,
    not_kept,
    selection_of,
)
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES
from depsync.errors import DepsyncError


def _version(text: str | None) -> Version | None:
    try:
        return Version(text) if text else None
    except InvalidVersion:
        return None


def within_policy(locked: str, shipped: str, policy: str) -> bool:
    """Is the image's version the lock's, as far as the policy looks? `release` (the default)
    compares the release numbers only: 2.8.0a0+nv25.06 is 2.8.0, not 2.9.1."""
    if policy == "off":
        return True
    a, b = _version(locked), _version(shipped)
    if a is None or b is None:
        return locked.strip().lower() == shipped.strip().lower()
    if policy == "exact":
        return a == b
    if policy == "public":
        return a.public == b.public
    length = {"release": None, "minor": 2, "major": 1}[policy]

    def release(v: Version) -> tuple[int, ...]:
        numbers = list(v.release[:length] if length else v.release)
        while len(numbers) > 1 and numbers[-1] == 0:
            numbers.pop()
        return tuple(numbers)

    return release(a) == release(b)


def satisfies(version: str, specifier: str) -> bool | None:
    """Does the image's version satisfy the specifier (pre-releases count: the image ships
    what it ships)? None when either does not parse."""
    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    parsed = _version(version)
    return None if parsed is None else spec.contains(parsed, prereleases=True)


def _evidence(dist: ImageDist) -> str:
    return f"{dist.name} {dist.version or '(no version)'} at {dist.path}"


def _where(lock: Lock, package: LockPackage) -> str:
    return f"{lock.path}:{package.line}" if package.line else lock.path


def _syncs(dockerfile: Dockerfile | None) -> list:  # type: ignore[type-arg]
    if dockerfile is None:
        return []
    return [c for c in dockerfile.uv_commands if c.subcommand == "sync" and not c.onbuild]


def _default_groups(inputs: CheckInputs) -> list[str] | str:
    value = inputs.pyproject.uv.get("default-groups", ["dev"])
    return value if value == "all" or isinstance(value, list) else ["dev"]


def _requirements_on(
    lock: Lock, name: str, root: LockPackage | None, env: dict[str, str], extras: frozenset[str], installs: set[str]
) -> list[tuple[str, str, str]]:
    """(who, specifier, where) of every requirement on `name` the lock records with a version
    specifier: the project's own (metadata.requires-dist) and the dependency-metadata entries
    of packages this sync installs."""
    out: list[tuple[str, str, str]] = []
    if root is not None:
        metadata = root.raw.get("metadata", {})
        for entry in metadata.get("requires-dist", []):
            if canonicalize_name(str(entry.get("name", ""))) != name or not isinstance(entry.get("specifier"), str):
                continue
            marker = entry.get("marker") if isinstance(entry.get("marker"), str) else None
            if marker_holds(marker, env, extras):
                out.append((f"project {root.name}", entry["specifier"], _where(lock, root)))
    for entry in lock.manifest.get("dependency-metadata", []):
        if canonicalize_name(str(entry.get("name", ""))) not in installs:
            continue
        for text in entry.get("requires-dist", []):
            try:
                parsed = parse_requirement(text, lock.path)
            except DepsyncError:  # an unreadable entry is the freshness rules' business
                continue
            if canonicalize_name(parsed.name) == name and str(parsed.specifier):
                out.append((f"{entry['name']} (dependency-metadata)", str(parsed.specifier), f"{lock.path}:{lock.line_of_table('manifest')}"))
    return out


def check(inputs: CheckInputs) -> Iterator[Finding]:
    image, lock = inputs.image, inputs.lock
    if image is None:
        return
    yield from _python(inputs, image)
    if lock is None or not image.python:
        return
    dockerfile = next((d for d in inputs.dockerfiles if d.path == inputs.image_dockerfile), None)
    shipped = image.by_name()
    lock_names = lock.names()
    project = inputs.pyproject.name or ""
    root = lock.root(project)
    policy = inputs.config.image_version_policy
    reported: set[tuple[str, str]] = set()  # (rule, package): once, at the first sync that installs it
    for command in _syncs(dockerfile):
        assert dockerfile is not None
        selection = selection_of(command, inputs.pyproject.group_names(), _default_groups(inputs))
        reached = installed(lock, project, selection, image.marker_env)
        plain_extras = frozenset(selection.extras)
        for name, line in selection.kept_out:
            if name not in lock_names:
                continue  # docker-stale-no-install / docker-no-install-renamed say so
            dists = shipped.get(name)
            locked = [p for p in reached.values() if p.name == name]
            if not dists and is_cuda_library(name) and image_cuda(image)[0]:
                # NGC images ship CUDA as system libraries, not as nvidia-* wheels: the image's CUDA
                # provides a kept-out library of its major (or of a major the name does not say)
                yield from _kept_out_cuda(image, lock, dockerfile, name, line, reported)
                continue
            if not dists:
                if ("image-kept-out-missing", name) in reported:
                    continue
                reported.add(("image-kept-out-missing", name))
                versions = ", ".join(sorted({p.version or "?" for p in locked or lock.find(name)}))
                yield RULES["image-kept-out-missing"].finding(
                    dockerfile.path,
                    line,
                    f"`--no-install-package {name}` keeps the lock's {name} {versions} out because the base image should ship it, "
                    f"but {image.describe()} has no {name}: the image ends up without it",
                    f"remove `--no-install-package {name}` so uv installs the lock's {name}, or build FROM an image that ships it",
                )
                continue
            first = dists[0]
            installs = {p.name for p in not_kept(reached, selection).values()}
            for who, specifier, where in _requirements_on(lock, name, root, image.marker_env, plain_extras, installs):
                if satisfies(first.version, specifier) is False and ("image-version-mismatch", f"{name}{specifier}{who}") not in reported:
                    reported.add(("image-version-mismatch", f"{name}{specifier}{who}"))
                    yield RULES["image-version-mismatch"].finding(
                        dockerfile.path,
                        line,
                        f"`--no-install-package {name}` relies on the image's {name}, but {who} requires {name}{specifier} ({where}) "
                        f"and {image.reference} ships {_evidence(first)}",
                        f"relax the requirement to what the image ships and relock, or build FROM an image whose {name} satisfies {specifier}",
                    )
            for package in locked:
                if within_policy(package.version or "", first.version, policy) or ("image-version-mismatch", name) in reported:
                    continue
                reported.add(("image-version-mismatch", name))
                yield RULES["image-version-mismatch"].finding(
                    dockerfile.path,
                    line,
                    f"`--no-install-package {name}` keeps the lock's {name} {package.version} ({_where(lock, package)}) out, and the rest "
                    f"of the lock was resolved against it, but {image.reference} ships {_evidence(first)} "
                    f"(another {'release' if policy == 'release' else 'version'} under image-version-policy = {policy!r})",
                    f"constrain {name} in pyproject.toml to the image's release (e.g. `{name}=={_release_pin(first.version)}`) and relock, "
                    "or build FROM an image that ships the locked version",
                )
        for package in not_kept(reached, selection).values():
            if package.source.kind in ("editable", "virtual", "directory") or package.is_project_root():
                continue
            dists = shipped.get(package.name)
            if dists and ("image-shadowed", package.name) not in reported and not _same_version(package.version, dists[0].version):
                reported.add(("image-shadowed", package.name))
                yield RULES["image-shadowed"].finding(
                    dockerfile.path,
                    command.line,
                    f"`uv sync` installs {package.name} {package.version} ({_where(lock, package)}) over the one the base image ships "
                    f"({_evidence(dists[0])}); `--no-install-package {package.name}` would keep the image's",
                    "add `--no-install-package NAME` to keep the image's build (its version is then checked against the lock), "
                    "or let uv replace it on purpose",
                )
        yield from _cuda(inputs, image, lock, dockerfile, command.line, not_kept(reached, selection), reported)


def _release_pin(version: str) -> str:
    parsed = _version(version)
    return ".".join(str(n) for n in parsed.release) + ".*" if parsed else version


def _same_version(locked: str | None, shipped: str) -> bool:
    a, b = _version(locked), _version(shipped)
    return a == b if a is not None and b is not None else (locked or "") == shipped


# CUDA toolkit components published as wheels; an image with CUDA installed has them as system libraries
_CUDA_LIBRARIES = ("nvidia-cublas", "nvidia-cuda-", "nvidia-cudnn", "nvidia-cufft", "nvidia-cufile", "nvidia-curand", "nvidia-cusolver",
                   "nvidia-cusparse", "nvidia-nccl", "nvidia-nvjitlink", "nvidia-nvtx", "nvidia-nvshmem", "nvidia-npp", "nvidia-nvjpeg")  # fmt: skip


def is_cuda_library(name: str) -> bool:
    return name.startswith(_CUDA_LIBRARIES) and name != "nvidia-cudnn-frontend"


def _kept_out_cuda(image: ImageEnv, lock: Lock, dockerfile: Dockerfile, name: str, line: int, reported: set[tuple[str, str]]) -> Iterator[Finding]:
    major, evidence = image_cuda(image)
    packages = lock.find(name)
    built_for = next((m for p in packages if (m := cuda_major_of(p.name, p.version))), "")
    if not built_for or built_for == major or ("image-cuda-mismatch", name) in reported:
        return
    reported.add(("image-cuda-mismatch", name))
    yield RULES["image-cuda-mismatch"].finding(
        dockerfile.path,
        line,
        f"`--no-install-package {name}` keeps out the lock's CUDA {built_for} library ({name} {packages[0].version}, "
        f"{_where(lock, packages[0])}) for the image's own, but {image.reference} has CUDA {major} ({evidence}): what the lock "
        f"resolved for CUDA {built_for} runs against CUDA {major} libraries",
        "relock for the image's CUDA (its index, its `-cuNN` packages), or build FROM an image with the CUDA the lock is for",
    )


def image_cuda(image: ImageEnv) -> tuple[str, str]:
    """(CUDA major the image has, the evidence); ("", "") when it does not say."""
    if image.cuda_env:
        return image.cuda_env.split(".", 1)[0], f"CUDA_VERSION={image.cuda_env} in the image config"
    for dist in image.distributions:
        if dist.name.startswith(("nvidia-cuda-runtime", "nvidia-cuda-nvrtc", "nvidia-cublas")):
            major = cuda_major_of(dist.name, dist.version)
            if major:
                return major, _evidence(dist)
    return "", ""


def image_summary(image: ImageEnv) -> dict[str, object]:
    """The `image` object of `check --format json` (depsync/schemas/check-2.schema.json)."""
    env = image.marker_env
    return {
        "reference": image.reference,
        "id": image.image_id,
        "python": image.python or None,
        "platform": f"{env.get('sys_platform', '')} {env.get('platform_machine', '')}".strip(),
        "cuda": image_cuda(image)[0] or None,
        "distributions": len(image.distributions),
        "notes": list(image.notes),
    }


def _cuda(
    inputs: CheckInputs, image: ImageEnv, lock: Lock, dockerfile: Dockerfile, line: int, installs: dict, reported: set[tuple[str, str]]  # type: ignore[type-arg]
) -> Iterator[Finding]:
    major, evidence = image_cuda(image)
    if not major:
        return
    for package in sorted(installs.values(), key=lambda p: p.line):
        built_for = cuda_major_of(package.name, package.version)
        if not built_for or built_for == major or ("image-cuda-mismatch", package.name) in reported:
            continue
        reported.add(("image-cuda-mismatch", package.name))
        yield RULES["image-cuda-mismatch"].finding(
            lock.path,
            package.line,
            f"{package.name} {package.version} is a CUDA {built_for} build, and `uv sync` ({dockerfile.path}:{line}) installs it into "
            f"{image.reference}, which has CUDA {major} ({evidence})",
            "relock for the image's CUDA (its index, its `-cuNN` packages), or keep the package out with `--no-install-package NAME` "
            "when the image ships its own build",
        )


def _python(inputs: CheckInputs, image: ImageEnv) -> Iterator[Finding]:
    """The image's python against requires-python (pyproject, lock) and the lock's resolution markers."""
    if not image.python:
        return
    pyproject, lock = inputs.pyproject, inputs.lock
    declared = pyproject.project.get("requires-python")
    reported = False
    if isinstance(declared, str) and satisfies(image.python, declared) is False:
        reported = True
        yield RULES["image-python-mismatch"].finding(
            pyproject.path,
            pyproject.lines.key("project", "requires-python"),
            f"{image.reference} runs Python {image.python} ({image.executable or 'python3'}), outside requires-python {declared!r}: "
            "uv sync refuses that interpreter",
            "build FROM an image with a Python requires-python allows, or widen requires-python and relock",
        )
    if lock is None:
        return
    locked = lock.requires_python
    if not reported and isinstance(locked, str) and satisfies(image.python, locked) is False:
        reported = True
        yield RULES["image-python-mismatch"].finding(
            lock.path,
            lock.line_of_key("requires-python"),
            f"{image.reference} runs Python {image.python}, outside the lock's requires-python {locked!r}",
            "relock (`depsync lock`) for the Python the image runs, or build FROM another image",
        )
    if reported or not image.marker_env:
        return
    for key in ("supported-markers", "resolution-markers"):
        markers = lock.data.get(key)
        if not isinstance(markers, list) or not markers:
            continue
        active = _active(inputs, lock)
        if not any(marker_holds(m, image.marker_env, active) for m in markers if isinstance(m, str)):
            env = image.marker_env
            yield RULES["image-python-mismatch"].finding(
                lock.path,
                lock.line_of_key(key),
                f"none of the lock's {len(markers)} {key} holds in {image.reference} (Python {image.python}, "
                f"{env.get('sys_platform', '?')} {env.get('platform_machine', '?')}): the lock has no resolution for this image",
                "relock with the image's environment in `[tool.uv] environments` (or without environments), then check again",
            )
            return


def _active(inputs: CheckInputs, lock: Lock) -> frozenset[str]:
    """uv's marker names of the extras and groups the CI Dockerfile's last `uv sync` selects."""
    from depsync.core.rules.image_install import _encoded

    dockerfile = next((d for d in inputs.dockerfiles if d.path == inputs.image_dockerfile), None)
    syncs = _syncs(dockerfile)
    project = inputs.pyproject.name or ""
    root = lock.root(project)
    if not syncs or root is None:
        return frozenset()
    selection: SyncSelection = selection_of(syncs[-1], inputs.pyproject.group_names(), _default_groups(inputs))
    return frozenset({_encoded(root.name, "extra", e) for e in selection.extras} | {_encoded(root.name, "group", g) for g in selection.groups})
