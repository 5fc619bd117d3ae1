"""Helpers that build real, fully offline uv projects for the freshness oracle tests.

Everything here produces *real* material that the real ``uv`` binary consumes:

* :func:`build_wheel` writes a minimal but valid ``.whl`` (METADATA, WHEEL, RECORD).
* :func:`build_find_links` fills a flat "find-links" directory with a set of fake
  distributions (:data:`FAKE_DISTS`), which projects reference through
  ``[[tool.uv.index]] format = "flat"`` (see :func:`write_project`).
* :func:`build_git_repo` creates a local git repository holding a small package whose
  ``pyproject.toml`` has fully static metadata, with several commits, a tag and a branch,
  usable as a ``file://`` git source.  uv reads static ``[project]`` metadata without
  running the build backend, so no build backend needs to be installed.
* :func:`write_project` / :func:`lock_project` write a project and lock it with
  ``uv lock --offline``; :func:`uv_check` runs ``uv lock --check --offline``.

All uv invocations go through :func:`run_uv`, which isolates uv from user/system
configuration (``UV_NO_CONFIG``), uses an explicit cache directory and forces offline
mode, so the tests never touch the network.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import io
import os
import re
import shutil
import subprocess
import textwrap
import threading
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FAKE_BACKEND_SOURCE",
    "FAKE_BACKEND_TOML",
    "FAKE_DISTS",
    "SECOND_INDEX_DISTS",
    "FakeDist",
    "GitRepo",
    "LocalMaterial",
    "UvResult",
    "build_find_links",
    "build_git_repo",
    "build_local_material",
    "build_wheel",
    "fake_backend_files",
    "lock_project",
    "normalize_name",
    "run_uv",
    "serve_directory",
    "static_pyproject",
    "uv_check",
    "uv_check_reason",
    "uv_check_result",
    "uv_env",
    "wheel_bytes",
    "write_project",
]

UV = shutil.which("uv") or "uv"

# Timeout (seconds) for one uv invocation; locking these tiny projects takes well under 1 s.
UV_TIMEOUT = 60


def normalize_name(name: str) -> str:
    """PEP 503 normalization of a distribution name (``Foo_Bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --------------------------------------------------------------------------- wheels


@dataclass(frozen=True)
class FakeDist:
    """One fake distribution release to publish as a wheel.

    ``requires_dist`` entries are PEP 508 strings written verbatim to METADATA.
    ``provides_extra`` lists the extras named in METADATA.
    """

    name: str
    version: str
    requires_dist: tuple[str, ...] = ()
    provides_extra: tuple[str, ...] = ()
    requires_python: str | None = None

    @property
    def wheel_filename(self) -> str:
        """The wheel's file name (name normalized with underscores, as in PEP 427)."""
        stem = normalize_name(self.name).replace("-", "_")
        return f"{stem}-{self.version}-py3-none-any.whl"


def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def wheel_bytes(dist: FakeDist) -> bytes:
    """Return the bytes of a minimal valid pure-Python wheel for ``dist``.

    The wheel contains one importable module (``<name>/__init__.py``), a METADATA file
    (Metadata-Version 2.1 with Name, Version, Requires-Python, Provides-Extra and
    Requires-Dist), a WHEEL file and a RECORD with sha256 hashes.  The archive is
    deterministic (fixed timestamps), so the same dist always yields the same hash.
    """
    module = normalize_name(dist.name).replace("-", "_")
    dist_info = f"{module}-{dist.version}.dist-info"
    meta_lines = ["Metadata-Version: 2.1", f"Name: {dist.name}", f"Version: {dist.version}"]
    if dist.requires_python:
        meta_lines.append(f"Requires-Python: {dist.requires_python}")
    meta_lines += [f"Provides-Extra: {extra}" for extra in dist.provides_extra]
    meta_lines += [f"Requires-Dist: {req}" for req in dist.requires_dist]
    files: dict[str, bytes] = {
        f"{module}/__init__.py": f'__version__ = "{dist.version}"\n'.encode(),
        f"{dist_info}/METADATA": ("\n".join(meta_lines) + "\n\n").encode(),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: depsync-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n\n"
        ).encode(),
    }
    record = [f"{path},{_record_hash(data)},{len(data)}" for path, data in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def build_wheel(dist: FakeDist, directory: Path) -> Path:
    """Write the wheel for ``dist`` into ``directory`` and return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / dist.wheel_filename
    path.write_bytes(wheel_bytes(dist))
    return path


# A handful of fake packages with several versions each.  Package relationships:
#   alpha       1.0, 1.1, 2.0, 2.1rc1 (pre-release)      no dependencies
#   beta        1.0, 2.0   extra "fast" -> gamma; beta 2.0 requires alpha>=1.1
#   gamma       1.0, 1.5   requires alpha (gamma 1.5: alpha>=2)
#   delta       0.9, 1.0   requires-python >=3.8, 1.0 has extras "cli" and "docs"
#   epsilon     1.0, 1.1   no dependencies
#   foo-bar     1.0, 2.0   a name with separators, for normalization tests
FAKE_DISTS: tuple[FakeDist, ...] = (
    FakeDist("alpha", "1.0"),
    FakeDist("alpha", "1.1"),
    FakeDist("alpha", "2.0"),
    FakeDist("alpha", "2.1rc1"),
    FakeDist("beta", "1.0", ("gamma; extra == 'fast'",), ("fast",)),
    FakeDist("beta", "2.0", ("alpha>=1.1", "gamma; extra == 'fast'"), ("fast",)),
    FakeDist("gamma", "1.0", ("alpha",)),
    FakeDist("gamma", "1.5", ("alpha>=2",)),
    FakeDist("delta", "0.9", requires_python=">=3.8"),
    FakeDist(
        "delta",
        "1.0",
        ("alpha; extra == 'cli'", "beta; extra == 'docs'"),
        ("cli", "docs"),
        requires_python=">=3.8",
    ),
    FakeDist("epsilon", "1.0"),
    FakeDist("epsilon", "1.1"),
    FakeDist("foo-bar", "1.0"),
    FakeDist("foo-bar", "2.0"),
)


def build_find_links(directory: Path, dists: Sequence[FakeDist] = FAKE_DISTS) -> Path:
    """Write one wheel per entry of ``dists`` into the flat directory ``directory``."""
    for dist in dists:
        build_wheel(dist, directory)
    return directory


# --------------------------------------------------------------------------- git


GIT_IDENTITY = (
    "-c", "user.name=depsync tests",
    "-c", "user.email=tests@depsync.invalid",
    "-c", "commit.gpgsign=false",
    "-c", "tag.gpgsign=false",
    "-c", "init.defaultBranch=main",
)


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def static_pyproject(
    name: str,
    version: str,
    dependencies: Sequence[str] = (),
    *,
    requires_python: str | None = None,
    build_system: bool = True,
) -> str:
    """A ``pyproject.toml`` with fully static ``[project]`` metadata.

    uv reads such metadata directly (no build backend runs), so the ``[build-system]`` may
    name a backend that is not installed (hatchling), which is the realistic setup.
    """
    deps = ", ".join(f'"{dep}"' for dep in dependencies)
    lines = ["[project]", f'name = "{name}"', f'version = "{version}"']
    if requires_python:
        lines.append(f'requires-python = "{requires_python}"')
    lines.append(f"dependencies = [{deps}]")
    if build_system:
        lines += ["", "[build-system]", 'requires = ["hatchling"]', 'build-backend = "hatchling.build"']
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class GitRepo:
    """A local git repository usable as ``git = "file://..."`` source.

    Layout and history (all metadata static):

    * ``c1`` (tag ``v1.0.0``, on ``main``): package ``zeta`` 1.0.0 at the root, requires
      ``alpha``; package ``eta`` 0.5.0 in subdirectory ``sub/eta`` (no dependencies).
    * ``c2`` (tag ``v1.1.0``, head of ``main``): ``zeta`` 1.1.0, requires ``alpha>=1.1``.
    * ``c3`` (head of branch ``feature``, child of ``c2``): ``zeta`` 1.2.0, requires
      ``alpha`` and ``epsilon``; ``eta`` 0.6.0.
    """

    path: Path
    commits: Mapping[str, str]

    @property
    def url(self) -> str:
        """The ``file://`` URL of the repository."""
        return self.path.as_uri()


def build_git_repo(directory: Path) -> GitRepo:
    """Create the repository described in :class:`GitRepo` in ``directory``."""
    directory.mkdir(parents=True)
    _git(directory, "init", "-q")
    (directory / "src" / "zeta").mkdir(parents=True)
    (directory / "src" / "zeta" / "__init__.py").write_text('"""zeta"""\n')
    (directory / "sub" / "eta" / "src" / "eta").mkdir(parents=True)
    (directory / "sub" / "eta" / "src" / "eta" / "__init__.py").write_text('"""eta"""\n')

    def commit(label: str, zeta: str, zeta_deps: Sequence[str], eta: str) -> str:
        (directory / "pyproject.toml").write_text(static_pyproject("zeta", zeta, zeta_deps))
        (directory / "sub" / "eta" / "pyproject.toml").write_text(static_pyproject("eta", eta))
        _git(directory, "add", "-A")
        _git(directory, "commit", "-q", "-m", label)
        return _git(directory, "rev-parse", "HEAD")

    commits = {"c1": commit("c1", "1.0.0", ["alpha"], "0.5.0")}
    _git(directory, "tag", "v1.0.0")
    commits["c2"] = commit("c2", "1.1.0", ["alpha>=1.1"], "0.5.0")
    _git(directory, "tag", "v1.1.0")
    _git(directory, "checkout", "-q", "-b", "feature")
    commits["c3"] = commit("c3", "1.2.0", ["alpha", "epsilon"], "0.6.0")
    _git(directory, "checkout", "-q", "main")
    return GitRepo(path=directory, commits=commits)


# --------------------------------------------------------------------------- in-tree backend

# A PEP 517 build backend with no requirements, for projects with *dynamic* metadata.
# It reads pyproject.toml and takes ``dependencies`` / ``version`` from
# ``[tool.fakebackend]`` when they are listed in ``project.dynamic``.  Use it with
#   [build-system] requires = []  build-backend = "fakebackend"  backend-path = ["_backend"]
# uv runs it offline in an empty build environment (it needs nothing from an index), so
# projects whose metadata only a build can reveal are lockable offline too.
FAKE_BACKEND_SOURCE = r'''"""Minimal in-tree PEP 517 backend used by depsync's tests (no build requirements)."""

import base64
import hashlib
import os
import tomllib
import zipfile


def _metadata():
    with open("pyproject.toml", "rb") as handle:
        data = tomllib.load(handle)
    project = data["project"]
    config = data.get("tool", {}).get("fakebackend", {})
    dynamic = project.get("dynamic", [])
    version = config["version"] if "version" in dynamic else project["version"]
    deps = config.get("dependencies", []) if "dependencies" in dynamic else project.get("dependencies", [])
    lines = ["Metadata-Version: 2.1", "Name: " + project["name"], "Version: " + version]
    if "requires-python" in project:
        lines.append("Requires-Python: " + project["requires-python"])
    lines += ["Requires-Dist: " + dep for dep in deps]
    for extra, extra_deps in project.get("optional-dependencies", {}).items():
        lines.append("Provides-Extra: " + extra)
        for dep in extra_deps:
            requirement, _, marker = dep.partition(";")
            clause = "extra == '" + extra + "'"
            lines.append("Requires-Dist: " + requirement.strip() + "; " + ("(" + marker.strip() + ") and " + clause if marker.strip() else clause))
    stem = project["name"].replace("-", "_")
    return stem + "-" + version, "\n".join(lines) + "\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_editable = get_requires_for_build_sdist = get_requires_for_build_wheel


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    stem, metadata = _metadata()
    dist_info = stem + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, dist_info), exist_ok=True)
    with open(os.path.join(metadata_directory, dist_info, "METADATA"), "w") as handle:
        handle.write(metadata)
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    stem, metadata = _metadata()
    dist_info = stem + ".dist-info"
    files = {
        dist_info + "/METADATA": metadata.encode(),
        dist_info + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: fakebackend\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(path + ",sha256=" + digest + "," + str(len(data)))
    record.append(dist_info + "/RECORD,,")
    files[dist_info + "/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = stem + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return filename


build_editable = build_wheel
'''

FAKE_BACKEND_TOML = """\
[build-system]
requires = []
build-backend = "fakebackend"
backend-path = ["_backend"]
"""


def fake_backend_files() -> dict[str, str]:
    """Extra files for :func:`write_project` that install the in-tree backend."""
    return {"_backend/fakebackend.py": FAKE_BACKEND_SOURCE}


# --------------------------------------------------------------------------- uv


@dataclass(frozen=True)
class UvResult:
    """Outcome of one uv invocation."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        """Human readable summary for assertion messages."""
        return f"uv {' '.join(self.args)} -> rc={self.returncode}\n{self.stderr}{self.stdout}"


def uv_env(cache_dir: Path, config_home: Path) -> dict[str, str]:
    """Environment for running uv hermetically.

    * every ``UV_*`` variable of the caller is dropped (no index URLs, no offline flags...);
    * ``UV_CACHE_DIR`` is ``cache_dir`` (share it within a test session to stay fast);
    * user/system ``uv.toml`` are hidden by pointing ``XDG_CONFIG_HOME``/``XDG_CONFIG_DIRS``
      at the empty ``config_home``.  ``UV_NO_CONFIG`` must *not* be used: it also makes uv
      ignore the project's own ``[tool.uv]`` table;
    * the interpreter is pinned to the one running the tests (``UV_PYTHON``) and Python
      downloads are disabled.  uv refuses to lock when that interpreter does not satisfy
      the project's ``requires-python`` (exit code 2), so test projects must admit it.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("UV_")}
    config_home.mkdir(parents=True, exist_ok=True)
    env.update(
        UV_CACHE_DIR=str(cache_dir),
        XDG_CONFIG_HOME=str(config_home),
        XDG_CONFIG_DIRS=str(config_home),
        UV_PYTHON=_python_executable(),
        UV_PYTHON_DOWNLOADS="never",
        UV_NO_PROGRESS="1",
        NO_COLOR="1",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
    )
    return env


@functools.cache
def _python_executable() -> str:
    import sys

    return os.path.realpath(sys.executable)


def run_uv(args: Sequence[str], cwd: Path, env: Mapping[str, str]) -> UvResult:
    """Run ``uv *args`` in ``cwd`` with ``env`` and capture the outcome (never raises on rc)."""
    done = subprocess.run(
        [UV, *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=UV_TIMEOUT,
        check=False,
    )
    return UvResult(tuple(args), done.returncode, done.stdout, done.stderr)


# --------------------------------------------------------------------------- material


@dataclass(frozen=True)
class LocalMaterial:
    """Everything a test project can depend on, created once per test session.

    * ``wheels``: flat directory with one wheel per :data:`FAKE_DISTS` entry; projects use
      it as their *default* index (see :meth:`index_toml`), so uv never asks PyPI.
    * ``second_index``: another flat directory with a subset (alpha 1.0, gamma 1.0), for
      ``index = "..."`` sources.
    * ``git``: the repository of :func:`build_git_repo`.
    * ``env``: the environment for uv (shared cache).
    * ``wheel_server``: base URL serving :attr:`wheels` over HTTP while a
      :func:`serve_directory` block runs (``None`` otherwise), for ``url`` sources.
    """

    root: Path
    wheels: Path
    second_index: Path
    git: GitRepo
    env: Mapping[str, str]
    wheel_server: str | None = None

    def index_toml(self, *, name: str = "local") -> str:
        """TOML declaring :attr:`wheels` as the project's default (flat) index."""
        return textwrap.dedent(
            f"""
            [[tool.uv.index]]
            name = "{name}"
            url = "{self.wheels.as_posix()}"
            format = "flat"
            default = true
            """
        )

    def second_index_toml(self, *, name: str = "second", explicit: bool = True) -> str:
        """TOML declaring :attr:`second_index` as an extra flat index (explicit by default)."""
        text = f'\n[[tool.uv.index]]\nname = "{name}"\nurl = "{self.second_index.as_posix()}"\nformat = "flat"\n'
        return text + ("explicit = true\n" if explicit else "")

    def wheel(self, name: str, version: str) -> Path:
        """Path of the wheel of one :data:`FAKE_DISTS` entry."""
        matches = [d for d in FAKE_DISTS if normalize_name(d.name) == normalize_name(name) and d.version == version]
        if not matches:
            raise KeyError(f"no fake dist {name}=={version}")
        return self.wheels / matches[0].wheel_filename


SECOND_INDEX_DISTS = tuple(d for d in FAKE_DISTS if (d.name, d.version) in {("alpha", "1.0"), ("gamma", "1.0")})


def build_local_material(root: Path) -> LocalMaterial:
    """Create wheels, the second index, the git repository and a uv cache under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    wheels = build_find_links(root / "wheels")
    second = build_find_links(root / "second-index", SECOND_INDEX_DISTS)
    git = build_git_repo(root / "git" / "zeta")
    env = uv_env(root / "uv-cache", root / "config-home")
    return LocalMaterial(root=root, wheels=wheels, second_index=second, git=git, env=env)


# --------------------------------------------------------------------------- projects


def write_project(project_dir: Path, pyproject: str, files: Mapping[str, str] | None = None) -> Path:
    """Write ``pyproject.toml`` (and extra ``files``, relative path -> text) into ``project_dir``.

    The root project's metadata must be static (uv never builds the root project to lock
    it: with a ``[build-system]`` it is recorded as ``editable = "."``, without one as
    ``virtual = "."``).  Returns ``project_dir``.
    """
    project_dir.mkdir(parents=True, exist_ok=True)
    (project_dir / "pyproject.toml").write_text(pyproject)
    for relative, text in (files or {}).items():
        target = project_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return project_dir


def lock_project(project_dir: Path, env: Mapping[str, str], *, offline: bool = True) -> UvResult:
    """Run ``uv lock`` (``--offline`` unless told otherwise); raise if it fails."""
    args = ["lock", "--offline"] if offline else ["lock"]
    result = run_uv(args, project_dir, env)
    if result.returncode != 0:
        raise RuntimeError(f"locking {project_dir} failed:\n{result.describe()}")
    return result


def uv_check_result(project_dir: Path, env: Mapping[str, str]) -> UvResult:
    """Run ``uv lock --check --offline`` in ``project_dir`` and return the full outcome."""
    return run_uv(["lock", "--check", "--offline"], project_dir, env)


_REASON_MARKERS = (
    "Existing `uv.lock` satisfies",
    "Resolving despite existing lockfile due to",
    "Ignoring existing lockfile due to",
)


def uv_check_reason(project_dir: Path, env: Mapping[str, str]) -> str | None:
    """uv's own explanation of its verdict, taken from ``uv lock --check --offline -v``.

    E.g. ``"Resolving despite existing lockfile due to mismatched requirements for:
    `demo==0.1.0`"`` or ``"Existing `uv.lock` satisfies workspace requirements"``.  This is
    uv debug output (not a stable interface): use it for diagnostics only.
    """
    result = run_uv(["lock", "--check", "--offline", "-v"], project_dir, env)
    for line in result.stderr.splitlines():
        text = line.removeprefix("DEBUG ").strip()
        if text.startswith(_REASON_MARKERS):
            return text
    return None


def uv_check(project_dir: Path, env: Mapping[str, str]) -> bool:
    """True iff ``uv lock --check --offline`` accepts the project's ``uv.lock``.

    Exit code 0 is fresh; 1 is stale *or* "stale and the re-resolution failed"; 2 is a
    configuration error (also reported as not fresh: the lock cannot be used as is).
    """
    return uv_check_result(project_dir, env).returncode == 0


# --------------------------------------------------------------------------- url sources


@contextmanager
def serve_directory(directory: Path) -> Iterator[str]:
    """Serve ``directory`` over HTTP on 127.0.0.1 (random port) and yield its base URL.

    uv rejects ``url = "file://..."`` sources, so ``url`` sources are tested against this
    loopback server.  The server only lives inside the ``with`` block.
    """
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        pass
