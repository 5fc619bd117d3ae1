"""Differential test: depsync's static lock-freshness verdict against real ``uv``.

Each :class:`Case` builds a small base project, locks it with the real ``uv lock
--offline``, then edits the root ``pyproject.toml`` (a few cases: the pyproject.toml of a
path dependency or workspace member), never ``uv.lock``, and asks
``uv lock --check --offline`` whether the lock is still fresh.

* ``test_uv_verdict_matches_expectation`` pins uv's verdict to the ``expected_fresh``
  written down for every case: it documents uv's behaviour (and catches uv changing it).
* ``test_depsync_agrees_with_uv`` asserts ``depsync.api.lock_freshness(project) == []``
  exactly when uv says the lock is fresh.

The uv work for a case is done once per session and shared by both tests
(:class:`Oracle`).  Everything is local: a flat wheel directory as the projects' default
index, a local git repository, path packages written next to the project, an in-tree
build backend for dynamic metadata and, for the ``url`` source cases, a 127.0.0.1 HTTP
server.  See ``tests/UV_LOCK_FORMATS.md`` for what uv writes and why cases behave so.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import os
import sys
import textwrap
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from depsync.api import lock_freshness

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # works with any pytest import mode
from uvprojects import (  # noqa: E402
    FAKE_BACKEND_TOML,
    FAKE_DISTS,
    FakeDist,
    LocalMaterial,
    UvResult,
    build_local_material,
    fake_backend_files,
    lock_project,
    serve_directory,
    static_pyproject,
    uv_check_reason,
    uv_check_result,
    wheel_bytes,
    write_project,
)

# --------------------------------------------------------------------------- base projects


@dataclass(frozen=True)
class Base:
    """A base project: pyproject text and extra files, rendered from the local material."""

    pyproject: str
    files: dict[str, str] = field(default_factory=dict)
    offline: bool = True  # False only for url sources (served on 127.0.0.1)


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def base_registry(m: LocalMaterial) -> Base:
    """Registry-only project: specifiers, markers, extras, groups, a comment."""
    return Base(
        _dedent(
            """
            [project]
            name = "demo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = [
                "alpha>=1.0,<2",
                "beta[fast]>=1.0",
                "Foo_Bar>=1.0",
                "gamma; python_version >= '3.12'",
                "epsilon; sys_platform != 'win32' and python_version >= '3.10'",
            ]

            [project.optional-dependencies]
            cli = ["delta[cli,docs]>=0.9"]
            extra-two = ["epsilon>=1.0"]

            [dependency-groups]
            dev = ["gamma>=1.0"]
            lint = ["epsilon"]
            docs = [{include-group = "lint"}, "delta"]

            # managed by uv
            [tool.uv]
            """
        )
        + m.index_toml()
    )


def base_git(m: LocalMaterial) -> Base:
    """Git sources: a tag, a subdirectory, and a PEP 508 direct git reference."""
    return Base(
        _dedent(
            f"""
            [project]
            name = "gitdemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = [
                "zeta",
                "eta",
                "alpha",
            ]

            [project.optional-dependencies]
            x = ["epsilon"]

            [tool.uv.sources]
            zeta = {{ git = "{m.git.url}", tag = "v1.0.0" }}
            eta = {{ git = "{m.git.url}", subdirectory = "sub/eta" }}
            """
        )
        + m.index_toml()
    )


def base_git_direct(m: LocalMaterial) -> Base:
    """A PEP 508 direct reference ``zeta @ git+file://...@v1.0.0``."""
    return Base(
        _dedent(
            f"""
            [project]
            name = "gitdirect"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["zeta @ git+{m.git.url}@v1.0.0"]
            """
        )
        + m.index_toml()
    )


def base_git_list(m: LocalMaterial) -> Base:
    """A list-shaped git source with markers (the lock forks on sys_platform)."""
    return Base(
        _dedent(
            f"""
            [project]
            name = "gitlist"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["zeta"]

            [tool.uv.sources]
            zeta = [
                {{ git = "{m.git.url}", tag = "v1.0.0", marker = "sys_platform == 'linux'" }},
                {{ git = "{m.git.url}", branch = "feature", marker = "sys_platform != 'linux'" }},
            ]
            """
        )
        + m.index_toml()
    )


def base_tool_uv(m: LocalMaterial) -> Base:
    """``[tool.uv]`` resolver inputs: overrides, constraints, dependency-metadata, conflicts."""
    return Base(
        _dedent(
            """
            [project]
            name = "tooldemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha", "gamma", "delta", "epsilon"]

            [project.optional-dependencies]
            old = ["beta<2"]
            new = ["beta>=2"]

            [tool.uv]
            override-dependencies = ["alpha<2"]
            constraint-dependencies = ["gamma<1.5", "foo-bar>=1"]
            conflicts = [[{ extra = "old" }, { extra = "new" }]]
            ENVIRONMENTS
            EXCLUDE_NEWER

            [[tool.uv.dependency-metadata]]
            name = "epsilon"
            version = "1.1"
            requires-dist = ["foo-bar>=1"]

            [[tool.uv.dependency-metadata]]
            name = "delta"
            version = "1.0"
            requires-dist = []
            """
        )
        .replace("ENVIRONMENTS", ENVIRONMENTS)
        .replace("EXCLUDE_NEWER", EXCLUDE_NEWER)
        + m.index_toml()
    )


ENVIRONMENTS = "environments = [\"sys_platform == 'linux'\", \"sys_platform == 'darwin'\"]"
EXCLUDE_NEWER = 'exclude-newer = "2030-01-01T00:00:00Z"'


def base_paths(m: LocalMaterial) -> Base:
    """Path sources: a directory, an editable directory, and a wheel file."""
    wheel = m.wheel("epsilon", "1.0").as_posix()
    return Base(
        _dedent(
            f"""
            [project]
            name = "pathdemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["theta", "iota", "epsilon"]

            [tool.uv.sources]
            theta = {{ path = "libs/theta" }}
            iota = {{ path = "libs/iota", editable = true }}
            epsilon = {{ path = "{wheel}" }}
            """
        )
        + m.index_toml(),
        files={
            "libs/theta/pyproject.toml": static_pyproject("theta", "0.3.0", ["alpha<2"]),
            "libs/iota/pyproject.toml": static_pyproject("iota", "0.4.0"),
        },
    )


def base_workspace(m: LocalMaterial) -> Base:
    """A workspace with one member used through ``{ workspace = true }``."""
    return Base(
        _dedent(
            """
            [project]
            name = "wsroot"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["kappa"]

            [tool.uv.sources]
            kappa = { workspace = true }

            [tool.uv.workspace]
            members = ["packages/*"]
            """
        )
        + m.index_toml(),
        files={
            "packages/kappa/pyproject.toml": static_pyproject("kappa", "0.2.0", ["alpha"]),
            "packages/lambda/pyproject.toml": static_pyproject("lambda-pkg", "0.1.0", ["epsilon"]),
        },
    )


def base_url(m: LocalMaterial) -> Base:
    """A ``url`` source (served by the session's 127.0.0.1 server)."""
    return Base(
        _dedent(
            f"""
            [project]
            name = "urldemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["epsilon", "alpha"]

            [tool.uv.sources]
            epsilon = {{ url = "{m.wheel_server}/epsilon-1.1-py3-none-any.whl" }}
            """
        )
        + m.index_toml(),
        offline=False,
    )


def base_dynamic(m: LocalMaterial) -> Base:
    """Dynamic dependencies and version, computed by the in-tree backend at lock time."""
    return Base(
        _dedent(
            """
            [project]
            name = "dyndemo"
            dynamic = ["version", "dependencies"]
            requires-python = ">=3.11"

            [tool.fakebackend]
            version = "0.1.0"
            dependencies = ["alpha<2", "gamma"]

            """
        )
        + FAKE_BACKEND_TOML
        + m.index_toml(),
        files=fake_backend_files(),
    )


def base_nested(m: LocalMaterial) -> Base:
    """Path packages that point at each other with paths relative to themselves, inside a
    workspace whose root has a source the path packages must not inherit."""
    return Base(
        _dedent(
            """
            [project]
            name = "nestdemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["a", "gamma"]

            [tool.uv.sources]
            a = { path = "3rdparty/a" }
            gamma = { index = "second" }

            [tool.uv.workspace]
            members = []
            """
        )
        + m.index_toml()
        + m.second_index_toml(),
        files={
            "3rdparty/a/pyproject.toml": static_pyproject("a", "0.1.0", ["b", "gamma"]) + '\n[tool.uv.sources]\nb = { path = "../b" }\n',
            "3rdparty/b/pyproject.toml": static_pyproject("b", "0.2.0", ["alpha<2"]),
        },
    )


def base_ws_index(m: LocalMaterial) -> Base:
    """A workspace member whose sources name an index only the root declares, and a member
    that declares [tool.uv] conflicts of its own."""
    member = static_pyproject("kappa", "0.2.0", ["gamma"]) + _dedent(
        """
        [project.optional-dependencies]
        old = ["beta<2"]
        new = ["beta>=2"]

        [tool.uv]
        conflicts = [[{ extra = "old" }, { extra = "new" }]]

        [tool.uv.sources]
        gamma = { index = "second" }
        """
    )
    return Base(
        _dedent(
            """
            [project]
            name = "wsindex"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["kappa"]

            [tool.uv.sources]
            kappa = { workspace = true }

            [tool.uv.workspace]
            members = ["packages/*"]
            """
        )
        + m.index_toml()
        + m.second_index_toml(),
        files={"packages/kappa/pyproject.toml": member},
    )


def base_specifiers(m: LocalMaterial) -> Base:
    """Specifiers whose spelling carries meaning for uv (~= and .* keep their segments)."""
    return Base(
        _dedent(
            """
            [project]
            name = "specdemo"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha~=1.0", "gamma==1.*", "epsilon>=1.0.0"]
            """
        )
        + m.index_toml()
    )


# -- the shapes of real ML repositories: each base is locked by real uv, then edited


def base_marker_index(m: LocalMaterial) -> Base:
    """uv's PyTorch-index recipe: an index source scoped by a marker (uv records one more,
    source-less requirement for the environments no marker covers), in the dependencies and
    in an extra whose source is also limited to that extra."""
    return Base(
        _dedent(
            """
            [project]
            name = "markeridx"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha>=1.0"]

            [project.optional-dependencies]
            gpu = ["gamma>=1.0; platform_machine == 'x86_64'"]

            [tool.uv.sources]
            alpha = [{ index = "second", marker = "sys_platform == 'linux'" }]
            gamma = [{ index = "second", marker = "sys_platform == 'linux' or sys_platform == 'win32'", extra = "gpu" }]
            """
        )
        + m.index_toml()
        + m.second_index_toml(),
    )


def base_conflicting_extras(m: LocalMaterial) -> Base:
    """uv's PyTorch recipe for CPU and CUDA builds: two conflicting extras, each taking the same
    package from its own index through a source scoped to that extra (uv forks the resolution
    per extra and records one requirement per source)."""
    return Base(
        _dedent(
            """
            [project]
            name = "conflictidx"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha"]

            [project.optional-dependencies]
            cpu = ["gamma>=1.0"]
            cu = ["gamma>=1.0"]

            [tool.uv]
            conflicts = [[{ extra = "cpu" }, { extra = "cu" }]]

            [tool.uv.sources]
            gamma = [{ index = "local", extra = "cpu" }, { index = "second", extra = "cu" }]
            """
        )
        + m.index_toml()
        + m.second_index_toml(),
    )


def base_conflicting_extras_by_platform(m: LocalMaterial) -> Base:
    """The same, with three builds and platform markers on the sources (a CPU build, a CUDA
    build for Linux, and macOS taking the default index in every extra)."""
    return Base(
        _dedent(
            """
            [project]
            name = "conflictplat"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha"]

            [project.optional-dependencies]
            cpu = ["gamma>=1.0"]
            cu = ["gamma>=1.0; sys_platform != 'darwin'"]
            mlx = ["gamma>=1.0; sys_platform == 'darwin'"]

            [tool.uv]
            conflicts = [[{ extra = "cpu" }, { extra = "cu" }, { extra = "mlx" }]]

            [tool.uv.sources]
            gamma = [
                { index = "local", extra = "cpu" },
                { index = "second", extra = "cu", marker = "sys_platform == 'linux'" },
                { index = "local", extra = "mlx", marker = "sys_platform == 'darwin'" },
            ]
            """
        )
        + m.index_toml()
        + m.second_index_toml(),
    )


def base_override_duplicates(m: LocalMaterial) -> Base:
    """The same override twice and one package overridden per Python range (uv records each
    requirement once: it compares them as sets)."""
    return Base(
        _dedent(
            """
            [project]
            name = "overdup"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha", "gamma"]

            [tool.uv]
            override-dependencies = [
                "alpha<2",
                "gamma<1.5; python_version < '3.13'",
                "alpha<2",
                "gamma>=1.0; python_version >= '3.13'",
                "gamma<1.5; python_version < '3.13'",
            ]
            """
        )
        + m.index_toml()
    )


_SELF_EXTRAS = """
[project.optional-dependencies]
fast = ["epsilon>=1.0"]
cli = ["delta>=0.9", "NAME[fast]"]
all = ["NAME[cli]; sys_platform == 'linux'", "foo-bar"]
"""


def base_self_extra(m: LocalMaterial) -> Base:
    """Extras that include the project's own extras, chained (all -> cli -> fast)."""
    return Base(
        _dedent(
            """
            [project]
            name = "selfx"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha"]
            """
        )
        + _dedent(_SELF_EXTRAS).replace("NAME", "selfx")
        + m.index_toml()
    )


def base_self_extra_dynamic(m: LocalMaterial) -> Base:
    """The same with a dynamic version: uv also accepts the extras recorded expanded (as a
    build backend reports them) for a package the lock records without a version."""
    return Base(
        _dedent(
            """
            [project]
            name = "selfdyn"
            dynamic = ["version"]
            requires-python = ">=3.10"
            dependencies = ["alpha"]

            [tool.fakebackend]
            version = "0.1.0"
            """
        )
        + _dedent(_SELF_EXTRAS).replace("NAME", "selfdyn")
        + FAKE_BACKEND_TOML
        + m.index_toml(),
        files=fake_backend_files(),
    )


def base_exclude_relative(m: LocalMaterial) -> Base:
    """A relative exclude-newer (uv >= 0.9.17 records `exclude-newer-span`)."""
    return Base(
        _dedent(
            """
            [project]
            name = "relx"
            version = "0.1.0"
            requires-python = ">=3.10"
            dependencies = ["alpha"]

            [tool.uv]
            exclude-newer = "7 days"
            """
        )
        + m.index_toml()
    )


def base_environments_python(m: LocalMaterial) -> Base:
    """`environments` with a python_version clause requires-python implies (uv records them
    simplified against requires-python: `supported-markers` without that clause)."""
    return Base(
        _dedent(
            """
            [project]
            name = "envpy"
            version = "0.1.0"
            requires-python = ">=3.11.0, <3.12"
            dependencies = ["alpha"]

            [tool.uv]
            environments = [
                "python_version == '3.11' and sys_platform == 'linux' and platform_machine == 'x86_64'",
                "python_version == '3.11' and sys_platform == 'darwin'",
            ]
            """
        )
        + m.index_toml()
    )


def base_virtual_workspace(m: LocalMaterial) -> Base:
    """A workspace root without [project] (dependency groups only) and two members."""
    return Base(
        _dedent(
            """
            [tool.uv.workspace]
            members = ["packages/*"]

            [dependency-groups]
            dev = ["epsilon"]

            [tool.uv]
            override-dependencies = ["alpha<2"]
            """
        )
        + m.index_toml(),
        files={
            "packages/kappa/pyproject.toml": static_pyproject("kappa", "0.2.0", ["alpha"]),
            "packages/lambda/pyproject.toml": static_pyproject("lambda-pkg", "0.1.0", ["epsilon"]),
        },
    )


BASES: dict[str, Callable[[LocalMaterial], Base]] = {
    "registry": base_registry,
    "git": base_git,
    "git-direct": base_git_direct,
    "git-list": base_git_list,
    "tool-uv": base_tool_uv,
    "paths": base_paths,
    "workspace": base_workspace,
    "url": base_url,
    "dynamic": base_dynamic,
    "nested": base_nested,
    "ws-index": base_ws_index,
    "specifiers": base_specifiers,
    "marker-index": base_marker_index,
    "conflict-extras": base_conflicting_extras,
    "conflict-platforms": base_conflicting_extras_by_platform,
    "override-dup": base_override_duplicates,
    "self-extra": base_self_extra,
    "self-extra-dyn": base_self_extra_dynamic,
    "exclude-relative": base_exclude_relative,
    "env-python": base_environments_python,
    "virtual-ws": base_virtual_workspace,
}

# --------------------------------------------------------------------------- mutations

Edit = Callable[[str, LocalMaterial], str]


def sub(old: str, new: str) -> Edit:
    """Replace the single occurrence of ``old`` (which must exist) by ``new``."""

    def edit(text: str, m: LocalMaterial) -> str:
        count = text.count(old)
        assert count == 1, f"mutation anchor {old!r} found {count} times in:\n{text}"
        return text.replace(old, new)

    return edit


def append(extra: str) -> Edit:
    """Append TOML text at the end of pyproject.toml."""

    def edit(text: str, m: LocalMaterial) -> str:
        return text + "\n" + _dedent(extra)

    return edit


def after(anchor: str, extra: str) -> Edit:
    """Insert ``extra`` right after the line ``anchor`` (e.g. ``[tool.uv]``)."""
    return sub(anchor + "\n", anchor + "\n" + extra.rstrip("\n") + "\n")


def with_material(make: Callable[[LocalMaterial], Edit]) -> Edit:
    """An edit whose text depends on the material (git URL, commit shas, ...)."""

    def edit(text: str, m: LocalMaterial) -> str:
        return make(m)(text, m)

    return edit


@dataclass(frozen=True)
class Case:
    """One mutation: base project, edits to one of its files, uv's verdict after them."""

    id: str
    base: str
    edits: tuple[Edit, ...]
    expected_fresh: bool
    why: str = ""
    depsync_xfail: str | None = None  # reason uv and a static check cannot agree (confirmed)
    target: str = "pyproject.toml"  # file the edits apply to, relative to the project root


def case(
    id: str,
    base: str,
    *edits: Edit,
    fresh: bool,
    why: str = "",
    depsync_xfail: str | None = None,
    target: str = "pyproject.toml",
) -> Case:
    return Case(id, base, edits, fresh, why, depsync_xfail, target)


CASES: list[Case] = [
    # -------- registry project: dependencies, markers, extras, groups, requires-python, [tool.uv] settings
    case("reg/unchanged", "registry", fresh=True),
    case(
        "reg/comment-only",
        "registry",
        sub("# managed by uv\n", "# managed by uv (edited)\n# another\n"),
        fresh=True,
    ),
    case(
        "reg/whitespace-in-requirement",
        "registry",
        sub('"alpha>=1.0,<2"', '"alpha >= 1.0 , < 2"'),
        fresh=True,
    ),
    case("reg/reorder-specifiers", "registry", sub('"alpha>=1.0,<2"', '"alpha<2,>=1.0"'), fresh=True),
    case(
        "reg/specifier-1.0-vs-1",
        "registry",
        sub('"alpha>=1.0,<2"', '"alpha>=1,<2.0"'),
        fresh=True,
        why="PEP 440 versions compare equal (1.0 == 1); uv compares parsed specifiers",
    ),
    case(
        "reg/reorder-dependencies",
        "registry",
        sub('    "alpha>=1.0,<2",\n    "beta[fast]>=1.0",\n', '    "beta[fast]>=1.0",\n    "alpha>=1.0,<2",\n'),
        fresh=True,
    ),
    case("reg/name-normalization", "registry", sub('"Foo_Bar>=1.0"', '"foo.BAR>=1.0"'), fresh=True),
    case(
        "reg/python_version-to-python_full_version",
        "registry",
        sub("gamma; python_version >= '3.12'", "gamma; python_full_version >= '3.12'"),
        fresh=True,
    ),
    case(
        "reg/python_full_version-with-patch",
        "registry",
        sub("gamma; python_version >= '3.12'", "gamma; python_full_version >= '3.12.0'"),
        fresh=True,
    ),
    case(
        "reg/python_version-gt-equivalent",
        "registry",
        sub("gamma; python_version >= '3.12'", "gamma; python_version > '3.11'"),
        fresh=True,
        why="uv normalizes python_version > '3.11' to python_full_version >= '3.12'",
    ),
    case(
        "reg/marker-double-quotes",
        "registry",
        sub("sys_platform != 'win32'", 'sys_platform != \\"win32\\"'),
        fresh=True,
    ),
    case(
        "reg/marker-and-operands-swapped",
        "registry",
        sub(
            "epsilon; sys_platform != 'win32' and python_version >= '3.10'",
            "epsilon; python_version >= '3.10' and sys_platform != 'win32'",
        ),
        fresh=True,
    ),
    case(
        "reg/marker-platform_system-alias",
        "registry",
        sub("sys_platform != 'win32'", "platform_system != 'Windows'"),
        fresh=True,
        why="uv's marker algebra treats platform_system == 'Windows' as sys_platform == 'win32'",
    ),
    case(
        "reg/reorder-extras-in-requirement",
        "registry",
        sub("delta[cli,docs]", "delta[docs,cli]"),
        fresh=True,
    ),
    case(
        "reg/extras-in-requirement-spacing-case",
        "registry",
        sub("delta[cli,docs]", "delta[ Docs , CLI ]"),
        fresh=True,
    ),
    case("reg/rename-extra-normalization", "registry", sub("extra-two = [", "Extra_Two = ["), fresh=True),
    case("reg/rename-group-normalization", "registry", sub("dev = [", "Dev = ["), fresh=True),
    case(
        "reg/include-group-inlined",
        "registry",
        sub('docs = [{include-group = "lint"}, "delta"]', 'docs = ["epsilon", "delta"]'),
        fresh=True,
        why="requires-dev records include-group already flattened",
    ),
    case(
        "reg/group-moved-to-legacy-dev-dependencies",
        "registry",
        sub('dev = ["gamma>=1.0"]\n', ""),
        after("[tool.uv]", 'dev-dependencies = ["gamma>=1.0"]'),
        fresh=True,
        why="legacy [tool.uv] dev-dependencies are recorded as group 'dev'",
    ),
    case(
        "reg/requires-python-spacing",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = ">= 3.10"'),
        fresh=True,
    ),
    case(
        "reg/requires-python-trailing-zero",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = ">=3.10.0"'),
        fresh=True,
    ),
    case(
        "reg/description-added",
        "registry",
        sub('version = "0.1.0"\n', 'version = "0.1.0"\ndescription = "demo"\n'),
        fresh=True,
    ),
    case("reg/project-name-case", "registry", sub('name = "demo"', 'name = "Demo"'), fresh=True),
    case(
        "reg/resolution-highest-explicit",
        "registry",
        after("[tool.uv]", 'resolution = "highest"'),
        fresh=True,
    ),
    case(
        "reg/prerelease-default-explicit",
        "registry",
        after("[tool.uv]", 'prerelease = "if-necessary-or-explicit"'),
        fresh=True,
    ),
    case(
        "reg/reorder-extras-table",
        "registry",
        sub('cli = ["delta[cli,docs]>=0.9"]\nextra-two = ["epsilon>=1.0"]\n', 'extra-two = ["epsilon>=1.0"]\ncli = ["delta[cli,docs]>=0.9"]\n'),
        fresh=True,
        why="provides-extras is written in pyproject order but compared as a set",
    ),
    case(
        "reg/marker-implied-by-requires-python-added",
        "registry",
        sub('"alpha>=1.0,<2"', "\"alpha>=1.0,<2; python_version >= '3.10'\""),
        fresh=True,
        why="markers are compared modulo requires-python (>=3.10): python_version >= '3.10' is always true",
    ),
    case(
        "reg/default-groups-dev-explicit",
        "registry",
        after("[tool.uv]", 'default-groups = ["dev"]'),
        fresh=True,
    ),
    case("reg/package-false-on-virtual-root", "registry", after("[tool.uv]", "package = false"), fresh=True),
    case(
        "reg/index-strategy-not-recorded",
        "registry",
        after("[tool.uv]", 'index-strategy = "unsafe-best-match"'),
        fresh=True,
    ),
    case(
        "reg/install-settings-not-recorded",
        "registry",
        after("[tool.uv]", "compile-bytecode = true\nno-build = true"),
        fresh=True,
    ),
    case(
        "reg/required-version-not-recorded",
        "registry",
        after("[tool.uv]", 'required-version = ">=0.5"'),
        fresh=True,
    ),
    case(
        "reg/group-marker-implied-by-requires-python",
        "registry",
        sub('lint = ["epsilon"]', "lint = [\"epsilon; python_version >= '3.0'\"]"),
        fresh=True,
        why="markers are compared modulo requires-python, in groups too",
    ),
    case("reg/scripts-added", "registry", append('[project.scripts]\ndemo = "demo:main"\n'), fresh=True),
    case(
        "reg/requires-python-equivalent-exclusion",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = ">=3.9,!=3.9.*"'),
        fresh=True,
    ),
    case(
        "reg/marker-redundant-conjunct",
        "registry",
        sub("gamma; python_version >= '3.12'", "gamma; python_version >= '3.12' and python_version >= '3.11'"),
        fresh=True,
    ),
    case(
        "reg/marker-tautology",
        "registry",
        sub('"alpha>=1.0,<2"', "\"alpha>=1.0,<2; sys_platform == 'linux' or sys_platform != 'linux'\""),
        fresh=True,
    ),
    case(
        "reg/marker-conjunct-implied-by-requires-python-dropped",
        "registry",
        sub("epsilon; sys_platform != 'win32' and python_version >= '3.10'", "epsilon; sys_platform != 'win32'"),
        fresh=True,
    ),
    case(
        "reg/extra-marker-implied-by-requires-python",
        "registry",
        sub('extra-two = ["epsilon>=1.0"]', "extra-two = [\"epsilon>=1.0; python_version >= '3.10'\"]"),
        fresh=True,
    ),
    case(
        "reg/add-dependency",
        "registry",
        sub('    "alpha>=1.0,<2",\n', '    "alpha>=1.0,<2",\n    "delta",\n'),
        fresh=False,
    ),
    case("reg/remove-dependency", "registry", sub('    "Foo_Bar>=1.0",\n', ""), fresh=False),
    case(
        "reg/tighten-specifier-still-satisfied",
        "registry",
        sub('"alpha>=1.0,<2"', '"alpha>=1.1,<2"'),
        fresh=False,
        why="the locked alpha 1.1 still satisfies it, but requires-dist changed",
    ),
    case(
        "reg/change-marker",
        "registry",
        sub("sys_platform != 'win32'", "sys_platform != 'darwin'"),
        fresh=False,
    ),
    case("reg/remove-marker", "registry", sub("gamma; python_version >= '3.12'", "gamma"), fresh=False),
    case("reg/drop-extra-from-requirement", "registry", sub('"beta[fast]>=1.0"', '"beta>=1.0"'), fresh=False),
    case(
        "reg/add-optional-dependency-extra",
        "registry",
        after("[project.optional-dependencies]", 'new = ["alpha"]'),
        fresh=False,
    ),
    case("reg/remove-extra", "registry", sub('extra-two = ["epsilon>=1.0"]\n', ""), fresh=False),
    case("reg/add-group", "registry", after("[dependency-groups]", 'test = ["alpha"]'), fresh=False),
    case("reg/remove-group", "registry", sub('dev = ["gamma>=1.0"]\n', ""), fresh=False),
    case(
        "reg/rename-group",
        "registry",
        sub('lint = ["epsilon"]', 'style = ["epsilon"]'),
        sub('{include-group = "lint"}', '{include-group = "style"}'),
        fresh=False,
    ),
    case(
        "reg/change-group-requirement",
        "registry",
        sub('dev = ["gamma>=1.0"]', 'dev = ["gamma>=1.0,<2"]'),
        fresh=False,
    ),
    case(
        "reg/requires-python-lowered",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = ">=3.9"'),
        fresh=False,
    ),
    case(
        "reg/requires-python-upper-bound",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = ">=3.10,<4"'),
        fresh=False,
    ),
    case("reg/resolution-lowest", "registry", after("[tool.uv]", 'resolution = "lowest"'), fresh=False),
    case("reg/prerelease-allow", "registry", after("[tool.uv]", 'prerelease = "allow"'), fresh=False),
    case(
        "reg/exclude-newer",
        "registry",
        after("[tool.uv]", 'exclude-newer = "2030-01-01T00:00:00Z"'),
        fresh=False,
    ),
    case(
        "reg/add-override",
        "registry",
        after("[tool.uv]", 'override-dependencies = ["alpha<2"]'),
        fresh=False,
    ),
    case(
        "reg/add-constraint",
        "registry",
        after("[tool.uv]", 'constraint-dependencies = ["alpha<2"]'),
        fresh=False,
    ),
    case(
        "reg/add-build-constraint",
        "registry",
        after("[tool.uv]", 'build-constraint-dependencies = ["setuptools>=68"]'),
        fresh=False,
    ),
    case(
        "reg/add-environments",
        "registry",
        after("[tool.uv]", "environments = [\"sys_platform == 'linux'\"]"),
        fresh=False,
    ),
    case(
        "reg/add-required-environments",
        "registry",
        after("[tool.uv]", "required-environments = [\"sys_platform == 'linux'\"]"),
        fresh=False,
    ),
    case("reg/add-default-groups", "registry", after("[tool.uv]", 'default-groups = ["lint"]'), fresh=False),
    case(
        "reg/add-conflicts",
        "registry",
        after("[tool.uv]", 'conflicts = [[{ extra = "cli" }, { extra = "extra-two" }]]'),
        fresh=False,
    ),
    case("reg/project-version-bump", "registry", sub('version = "0.1.0"', 'version = "0.2.0"'), fresh=False),
    case(
        "reg/add-build-system",
        "registry",
        append('[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'),
        fresh=False,
        why="root source changes from virtual to editable",
    ),
    case(
        "reg/add-dependency-metadata",
        "registry",
        append('[[tool.uv.dependency-metadata]]\nname = "gamma"\nversion = "1.0"\nrequires-dist = ["alpha"]\n'),
        fresh=False,
    ),
    case(
        "reg/add-index-source",
        "registry",
        with_material(lambda m: append(m.second_index_toml())),
        append('[tool.uv.sources]\nalpha = { index = "second" }\n'),
        fresh=False,
    ),
    case(
        "reg/add-git-source",
        "registry",
        sub('    "alpha>=1.0,<2",\n', '    "alpha>=1.0,<2",\n    "zeta",\n'),
        with_material(lambda m: append(f'[tool.uv.sources]\nzeta = {{ git = "{m.git.url}", tag = "v1.1.0" }}\n')),
        fresh=False,
    ),
    case(
        "reg/add-unresolvable-dependency",
        "registry",
        sub('    "alpha>=1.0,<2",\n', '    "alpha>=1.0,<2",\n    "nosuchpkg",\n'),
        fresh=False,
        why="uv re-resolves and fails (exit 1, 'No solution found')",
    ),
    case(
        "reg/package-true-without-build-system",
        "registry",
        after("[tool.uv]", "package = true"),
        fresh=False,
    ),
    case(
        "reg/add-empty-extra",
        "registry",
        after("[project.optional-dependencies]", "empty = []"),
        fresh=False,
    ),
    case("reg/add-empty-group", "registry", after("[dependency-groups]", "empty = []"), fresh=False),
    case(
        "reg/exclude-newer-date-only",
        "registry",
        after("[tool.uv]", 'exclude-newer = "2030-01-01"'),
        fresh=False,
    ),
    case("reg/project-renamed", "registry", sub('name = "demo"', 'name = "demo2"'), fresh=False),
    case(
        "reg/requires-python-tilde",
        "registry",
        sub('requires-python = ">=3.10"', 'requires-python = "~=3.10"'),
        fresh=False,
    ),
    case(
        "reg/extra-marker-on-main-dependency",
        "registry",
        sub('"Foo_Bar>=1.0"', "\"Foo_Bar>=1.0; extra == 'cli'\""),
        fresh=False,
    ),
    case(
        "reg/add-group-conflicts",
        "registry",
        after("[tool.uv]", 'conflicts = [[{ group = "dev" }, { group = "lint" }]]'),
        fresh=False,
    ),
    case(
        "reg/add-dependency-with-marker-false-under-requires-python",
        "registry",
        sub('    "alpha>=1.0,<2",\n', "    \"alpha>=1.0,<2\",\n    \"nosuchpkg; python_version < '3.0'\",\n"),
        fresh=False,
        why="a requirement whose marker is never true under requires-python still counts",
    ),
    # -------- indexes
    case("index/renamed", "registry", sub('name = "local"', 'name = "wheels"'), fresh=True),
    case("index/not-default-anymore", "registry", sub("default = true\n", ""), fresh=True),
    case(
        "index/extra-unused-index",
        "registry",
        with_material(lambda m: append(m.second_index_toml(explicit=False))),
        fresh=True,
    ),
    case(
        "index/higher-priority-index-added",
        "registry",
        with_material(lambda m: sub("[[tool.uv.index]]", m.second_index_toml(explicit=False).strip() + "\n\n[[tool.uv.index]]")),
        fresh=True,
    ),
    case(
        "index/group-limited-index-source",
        "registry",
        with_material(lambda m: append(m.second_index_toml())),
        append('[tool.uv.sources]\ngamma = { index = "second", group = "dev" }\n'),
        fresh=False,
    ),
    case(
        "index/index-source-added-other-name",
        "registry",
        with_material(lambda m: append(m.second_index_toml(name="other"))),
        append('[tool.uv.sources]\nalpha = { index = "other" }\n'),
        fresh=False,
    ),
    # -------- git sources
    case("git/unchanged", "git", fresh=True),
    case(
        "git/source-table-spacing",
        "git",
        with_material(lambda m: sub(f'zeta = {{ git = "{m.git.url}", tag = "v1.0.0" }}', f'zeta = {{git="{m.git.url}",tag="v1.0.0"}}')),
        fresh=True,
    ),
    case(
        "git/specifier-on-git-dependency",
        "git",
        sub('    "zeta",\n', '    "zeta>=1.0",\n'),
        fresh=True,
        why="the version specifier is dropped when a git source applies",
    ),
    case(
        "git/source-for-non-dependency",
        "registry",
        with_material(lambda m: append(f'[tool.uv.sources]\nzeta = {{ git = "{m.git.url}" }}\n')),
        fresh=True,
    ),
    case("git/change-tag", "git", sub('tag = "v1.0.0"', 'tag = "v1.1.0"'), fresh=False),
    case(
        "git/tag-to-rev-same-commit",
        "git",
        with_material(lambda m: sub('tag = "v1.0.0"', f'rev = "{m.git.commits["c1"]}"')),
        fresh=False,
        why="same commit, but the recorded source URL changes (?tag= -> ?rev=)",
    ),
    case("git/tag-to-branch", "git", sub('tag = "v1.0.0"', 'branch = "feature"'), fresh=False),
    case(
        "git/add-branch-to-subdirectory-source",
        "git",
        sub('subdirectory = "sub/eta" }', 'subdirectory = "sub/eta", branch = "main" }'),
        fresh=False,
    ),
    case(
        "git/remove-source",
        "git",
        with_material(lambda m: sub(f'zeta = {{ git = "{m.git.url}", tag = "v1.0.0" }}\n', "")),
        fresh=False,
        why="zeta would come from the index, where it does not exist",
    ),
    case(
        "git/source-limited-to-extra",
        "git",
        sub('x = ["epsilon"]', 'x = ["epsilon", "zeta"]'),
        sub('tag = "v1.0.0" }', 'tag = "v1.0.0", extra = "x" }'),
        fresh=False,
    ),
    case(
        "git/to-list-source-with-markers",
        "git",
        with_material(
            lambda m: sub(
                f'zeta = {{ git = "{m.git.url}", tag = "v1.0.0" }}',
                f'zeta = [\n  {{ git = "{m.git.url}", tag = "v1.0.0", marker = "sys_platform == \'linux\'" }},\n'
                f'  {{ git = "{m.git.url}", tag = "v1.1.0", marker = "sys_platform != \'linux\'" }},\n]',
            )
        ),
        fresh=False,
    ),
    case(
        "git/url-trailing-slash",
        "git",
        with_material(lambda m: sub(f'zeta = {{ git = "{m.git.url}"', f'zeta = {{ git = "{m.git.url}/"')),
        fresh=False,
    ),
    case(
        "git/url-dot-git-suffix",
        "git",
        with_material(lambda m: sub(f'zeta = {{ git = "{m.git.url}"', f'zeta = {{ git = "{m.git.url}.git"')),
        fresh=False,
    ),
    case(
        "git/tag-to-short-rev-same-commit",
        "git",
        with_material(lambda m: sub('tag = "v1.0.0"', f'rev = "{m.git.commits["c1"][:10]}"')),
        fresh=False,
    ),
    # -------- PEP 508 direct git reference
    case("git-direct/unchanged", "git-direct", fresh=True),
    case(
        "git-direct/to-source-rev",
        "git-direct",
        with_material(lambda m: sub(f'"zeta @ git+{m.git.url}@v1.0.0"', '"zeta"')),
        with_material(lambda m: append(f'[tool.uv.sources]\nzeta = {{ git = "{m.git.url}", rev = "v1.0.0" }}\n')),
        fresh=True,
        why="both are recorded as git = '<url>?rev=v1.0.0'",
    ),
    case(
        "git-direct/to-source-tag",
        "git-direct",
        with_material(lambda m: sub(f'"zeta @ git+{m.git.url}@v1.0.0"', '"zeta"')),
        with_material(lambda m: append(f'[tool.uv.sources]\nzeta = {{ git = "{m.git.url}", tag = "v1.0.0" }}\n')),
        fresh=False,
        why="a tag source is recorded as ?tag=, the direct reference as ?rev=",
    ),
    case("git-direct/change-ref", "git-direct", sub("@v1.0.0", "@v1.1.0"), fresh=False),
    # -------- list-shaped git sources with markers
    case("git-list/unchanged", "git-list", fresh=True),
    case(
        "git-list/reorder-list",
        "git-list",
        with_material(
            lambda m: sub(
                f'    {{ git = "{m.git.url}", tag = "v1.0.0", marker = "sys_platform == \'linux\'" }},\n'
                f'    {{ git = "{m.git.url}", branch = "feature", marker = "sys_platform != \'linux\'" }},\n',
                f'    {{ git = "{m.git.url}", branch = "feature", marker = "sys_platform != \'linux\'" }},\n'
                f'    {{ git = "{m.git.url}", tag = "v1.0.0", marker = "sys_platform == \'linux\'" }},\n',
            )
        ),
        fresh=True,
    ),
    case(
        "git-list/change-one-marker",
        "git-list",
        sub("\"sys_platform != 'linux'\"", "\"sys_platform == 'darwin'\""),
        fresh=False,
    ),
    # -------- [tool.uv] resolver inputs: overrides, constraints, dependency-metadata, conflicts, environments
    case("tool/unchanged", "tool-uv", fresh=True),
    case(
        "tool/override-reformatted",
        "tool-uv",
        sub('override-dependencies = ["alpha<2"]', 'override-dependencies = [ "alpha < 2.0" ]'),
        fresh=True,
    ),
    case(
        "tool/override-marker-equivalent",
        "tool-uv",
        sub('"alpha<2"', "\"alpha<2; python_version >= '3.10'\""),
        fresh=True,
        why="override markers ARE simplified against requires-python (>=3.10): recorded as plain alpha<2",
    ),
    case(
        "tool/constraints-reordered",
        "tool-uv",
        sub('["gamma<1.5", "foo-bar>=1"]', '["Foo_Bar >= 1", "gamma<1.5"]'),
        fresh=True,
    ),
    case(
        "tool/dependency-metadata-empty-requires-dist-omitted",
        "tool-uv",
        sub('version = "1.0"\nrequires-dist = []\n', 'version = "1.0"\n'),
        fresh=True,
        why="requires-dist = [] is not written to the lock, same as absent",
    ),
    case(
        "tool/conflicts-reordered",
        "tool-uv",
        sub('conflicts = [[{ extra = "old" }, { extra = "new" }]]', 'conflicts = [[{ extra = "new" }, { extra = "old" }]]'),
        fresh=True,
    ),
    case(
        "tool/constraint-marker-implied-by-requires-python",
        "tool-uv",
        sub('"gamma<1.5"', "\"gamma<1.5; python_version >= '3.8'\""),
        fresh=True,
    ),
    case(
        "tool/dependency-metadata-name-case",
        "tool-uv",
        sub('name = "epsilon"', 'name = "Epsilon"'),
        fresh=True,
    ),
    case("tool/override-changed", "tool-uv", sub('"alpha<2"', '"alpha<1.1"'), fresh=False),
    case("tool/override-removed", "tool-uv", sub('override-dependencies = ["alpha<2"]\n', ""), fresh=False),
    case("tool/constraint-changed", "tool-uv", sub('"gamma<1.5"', '"gamma<1.4"'), fresh=False),
    case(
        "tool/dependency-metadata-version",
        "tool-uv",
        sub('version = "1.1"', 'version = "1.0"'),
        fresh=False,
    ),
    case(
        "tool/dependency-metadata-requires-dist",
        "tool-uv",
        sub('requires-dist = ["foo-bar>=1"]', 'requires-dist = ["foo-bar>=2"]'),
        fresh=False,
    ),
    case(
        "tool/dependency-metadata-requires-python",
        "tool-uv",
        sub('requires-dist = ["foo-bar>=1"]', 'requires-dist = ["foo-bar>=1"]\nrequires-python = ">=3.8"'),
        fresh=False,
    ),
    case(
        "tool/conflicts-removed",
        "tool-uv",
        sub('conflicts = [[{ extra = "old" }, { extra = "new" }]]\n', ""),
        fresh=False,
        why="uv cannot even resolve without it (beta<2 vs beta>=2)",
    ),
    case(
        "tool/environments-reordered",
        "tool-uv",
        sub(ENVIRONMENTS, "environments = [\"sys_platform == 'darwin'\", \"sys_platform == 'linux'\"]"),
        fresh=False,
        why="supported-markers are compared as an ordered list",
    ),
    case("tool/environments-removed", "tool-uv", sub(ENVIRONMENTS + "\n", ""), fresh=False),
    case(
        "tool/environments-one-added",
        "tool-uv",
        sub(ENVIRONMENTS, "environments = [\"sys_platform == 'linux'\", \"sys_platform == 'darwin'\", \"sys_platform == 'win32'\"]"),
        fresh=False,
    ),
    case(
        "tool/environments-marker-reformatted",
        "tool-uv",
        sub(ENVIRONMENTS, "environments = ['sys_platform == \"linux\"', \"sys_platform=='darwin'\"]"),
        fresh=True,
    ),
    case(
        "tool/exclude-newer-later",
        "tool-uv",
        sub(EXCLUDE_NEWER, 'exclude-newer = "2031-06-01T00:00:00Z"'),
        fresh=True,
        why="uv only re-resolves when the exclude-newer cutoff moves earlier (or is added/removed)",
    ),
    case(
        "tool/exclude-newer-same-day-as-date",
        "tool-uv",
        sub(EXCLUDE_NEWER, 'exclude-newer = "2030-01-01"'),
        fresh=True,
        why="a date means the end of that day (2030-01-02T00:00:00Z): later than the recorded cutoff",
    ),
    case(
        "tool/exclude-newer-earlier",
        "tool-uv",
        sub(EXCLUDE_NEWER, 'exclude-newer = "2029-12-31T23:59:59Z"'),
        fresh=False,
    ),
    case("tool/exclude-newer-removed", "tool-uv", sub(EXCLUDE_NEWER + "\n", ""), fresh=False),
    case(
        "tool/override-added-before-existing",
        "tool-uv",
        sub('override-dependencies = ["alpha<2"]', 'override-dependencies = ["epsilon>=1", "alpha<2"]'),
        fresh=False,
    ),
    # -------- path sources
    case("paths/unchanged", "paths", fresh=True),
    case("paths/dot-slash-prefix", "paths", sub('path = "libs/theta"', 'path = "./libs/theta"'), fresh=True),
    case(
        "paths/make-editable",
        "paths",
        sub('theta = { path = "libs/theta" }', 'theta = { path = "libs/theta", editable = true }'),
        fresh=False,
    ),
    case(
        "paths/make-non-editable",
        "paths",
        sub('path = "libs/iota", editable = true', 'path = "libs/iota", editable = false'),
        fresh=False,
    ),
    case(
        "paths/other-wheel",
        "paths",
        sub("epsilon-1.0-py3-none-any.whl", "epsilon-1.1-py3-none-any.whl"),
        fresh=False,
    ),
    case(
        "paths/drop-path-source",
        "paths",
        sub('iota = { path = "libs/iota", editable = true }\n', ""),
        fresh=False,
    ),
    # -------- workspace members
    case("workspace/unchanged", "workspace", fresh=True),
    case(
        "workspace/members-explicit",
        "workspace",
        sub('members = ["packages/*"]', 'members = ["packages/kappa", "packages/lambda"]'),
        fresh=True,
    ),
    case(
        "workspace/exclude-member",
        "workspace",
        sub('members = ["packages/*"]', 'members = ["packages/*"]\nexclude = ["packages/lambda"]'),
        fresh=False,
    ),
    case(
        "workspace/add-member-dependency",
        "workspace",
        sub('dependencies = ["kappa"]', 'dependencies = ["kappa", "lambda-pkg"]'),
        sub("kappa = { workspace = true }", "kappa = { workspace = true }\nlambda-pkg = { workspace = true }"),
        fresh=False,
    ),
    # -------- metadata of path packages and workspace members (their own pyproject.toml)
    case(
        "member/path-package-comment",
        "paths",
        append("# a comment\n"),
        fresh=True,
        target="libs/theta/pyproject.toml",
    ),
    case(
        "member/path-package-requirement-changed",
        "paths",
        sub('"alpha<2"', '"alpha<1.5"'),
        fresh=False,
        why="directory/editable packages get their own [package.metadata] requires-dist in the lock",
        target="libs/theta/pyproject.toml",
    ),
    case(
        "member/path-package-version-bump",
        "paths",
        sub('version = "0.3.0"', 'version = "0.3.1"'),
        fresh=False,
        target="libs/theta/pyproject.toml",
    ),
    case(
        "member/workspace-member-requirement-changed",
        "workspace",
        sub('"epsilon"', '"epsilon>=1.1"'),
        fresh=False,
        target="packages/lambda/pyproject.toml",
    ),
    case(
        "member/workspace-member-reordered-keys",
        "workspace",
        sub('name = "lambda-pkg"\nversion = "0.1.0"\n', 'version = "0.1.0"\nname = "lambda-pkg"\n'),
        fresh=True,
        target="packages/lambda/pyproject.toml",
    ),
    # -------- dynamic metadata (in-tree build backend; uv builds the root's metadata to check)
    case("dynamic/unchanged", "dynamic", fresh=True),
    case(
        "dynamic/version-bumped",
        "dynamic",
        sub('version = "0.1.0"', 'version = "0.2.0"'),
        fresh=True,
        why="a dynamic version is not recorded (the root package has no version key)",
    ),
    case(
        "dynamic/backend-config-reformatted",
        "dynamic",
        sub('dependencies = ["alpha<2", "gamma"]', 'dependencies = [ "gamma", "alpha < 2" ]'),
        fresh=True,
        why="uv rebuilds the metadata and compares the resulting requirements",
    ),
    case(
        "dynamic/backend-dependencies-changed",
        "dynamic",
        sub('"alpha<2"', '"alpha<1.1"'),
        fresh=False,
        why="uv rebuilds the metadata: requires-dist changed",
        depsync_xfail=(
            "dynamic dependencies are only known by running the build backend; a static check "
            "cannot see that [tool.fakebackend] feeds them (confirmed: uv reports "
            "'mismatched requirements' after building the metadata)"
        ),
    ),
    case(
        "dynamic/requires-python-changed",
        "dynamic",
        sub('requires-python = ">=3.11"', 'requires-python = ">=3.10"'),
        fresh=False,
    ),
    # -------- uv-accepted states that crashed or raised false alarms, and lock-side rules
    case(
        "issue11/url-marker-without-space",
        "git-direct",
        sub('@v1.0.0"]', "@v1.0.0; python_version >= '3.10'\"]"),
        fresh=True,
        why="uv ends the URL at '; ' (packaging rejects the string: depsync exited 2)",
    ),
    case(
        "issue11/requirement-over-two-lines",
        "registry",
        sub('"alpha>=1.0,<2"', "\"\"\"alpha>=1.0,<2\n  ; python_version >= '3.10'\"\"\""),
        fresh=True,
        why="a newline is whitespace to uv; the marker is implied by requires-python",
    ),
    case(
        "issue11/utf8-bom",
        "registry",
        lambda text, m: "\ufeff" + text,
        fresh=True,
        why="uv reads a pyproject.toml that starts with a byte order mark (tomllib does not)",
    ),
    case("issue11/specifier-trailing-zero", "specifiers", sub('"epsilon>=1.0.0"', '"epsilon>=1.0"'), fresh=True),
    case("issue11/compatible-release-segments", "specifiers", sub('"alpha~=1.0"', '"alpha~=1.0.0"'), fresh=False),
    case("issue11/compatible-release-spacing", "specifiers", sub('"alpha~=1.0"', '"alpha ~= 1.0"'), fresh=True),
    case(
        "issue11/wildcard-segments",
        "specifiers",
        sub('"gamma==1.*"', '"gamma==1.0.*"'),
        fresh=True,
        why="uv's quick check says 'mismatched requirements', re-resolves and writes an equal lock: `==1.*` equals `==1.0.*` for uv",
    ),
    case(
        "issue11/metadata-requires-by-value",
        "tool-uv",
        sub('requires-dist = ["foo-bar>=1"]', 'requires-dist = ["foo-bar >= 1.0"]'),
        fresh=True,
        why="dependency-metadata requires-dist is compared as parsed requirements, not text",
    ),
    case("issue11/nested-unchanged", "nested", fresh=True, why="b is recorded as 3rdparty/b: a's `../b` joined to a's directory"),
    case(
        "issue11/nested-path-trailing-slash",
        "nested",
        sub('b = { path = "../b" }', 'b = { path = "../b/" }'),
        fresh=True,
        target="3rdparty/a/pyproject.toml",
    ),
    case(
        "issue11/nested-inner-requirement-changed",
        "nested",
        sub('dependencies = ["alpha<2"]', 'dependencies = ["alpha<1.5"]'),
        fresh=False,
        target="3rdparty/b/pyproject.toml",
    ),
    case(
        "issue11/nested-inner-path-moved",
        "nested",
        sub('b = { path = "../b" }', 'b = { path = "../../3rdparty/b" }'),
        fresh=True,
        why="a different spelling of the same directory",
        target="3rdparty/a/pyproject.toml",
    ),
    case("issue11/member-index-from-root", "ws-index", fresh=True, why="a member's index names resolve in the root's [[tool.uv.index]]"),
    case(
        "issue11/member-index-requirement-changed",
        "ws-index",
        sub('dependencies = ["gamma"]', 'dependencies = ["gamma>=1.0"]'),
        fresh=False,
        target="packages/kappa/pyproject.toml",
    ),
    case(
        "issue11/member-conflicts-removed",
        "ws-index",
        sub('conflicts = [[{ extra = "old" }, { extra = "new" }]]\n', ""),
        fresh=False,
        why="a member's [tool.uv] conflicts are recorded in the lock's conflicts",
        target="packages/kappa/pyproject.toml",
    ),
    case(
        "issue11/lock-revision-0-without-provides-extras",
        "registry",
        sub("revision = 5\n", ""),
        sub('provides-extras = ["cli", "extra-two"]\n', ""),
        fresh=True,
        why="uv skips the extras comparison for locks without a revision (written before provides-extras existed)",
        target="uv.lock",
    ),
    case(
        "issue11/lock-revision-1-without-provides-extras",
        "registry",
        sub("revision = 5\n", "revision = 1\n"),
        sub('provides-extras = ["cli", "extra-two"]\n', ""),
        fresh=False,
        target="uv.lock",
    ),
    case(
        "issue11/lock-dynamic-version-recorded",
        "dynamic",
        sub('name = "dyndemo"\nsource', 'name = "dyndemo"\nversion = "0.1.0"\nsource'),
        fresh=False,
        why="uv 0.13.9 locks a dynamic version without one and re-resolves a lock that has one",
        target="uv.lock",
    ),
    # -------- the shapes of real ML repositories
    case("ml/marker-index/unchanged", "marker-index", fresh=True, why="the source-less rest (`sys_platform != 'linux'`) is recorded"),
    case(
        "ml/marker-index/marker-changed",
        "marker-index",
        sub("alpha = [{ index = \"second\", marker = \"sys_platform == 'linux'\" }]", "alpha = [{ index = \"second\", marker = \"sys_platform == 'darwin'\" }]"),
        fresh=False,
    ),
    case("ml/marker-index/specifier-changed", "marker-index", sub('dependencies = ["alpha>=1.0"]', 'dependencies = ["alpha>=1.1"]'), fresh=False),
    case(
        "ml/marker-index/rest-covered",
        "marker-index",
        sub("marker = \"sys_platform == 'linux'\" }]", "marker = \"sys_platform == 'linux'\" }, { index = \"local\", marker = \"sys_platform != 'linux'\" }]"),
        fresh=False,
        why="the rest now has a source of its own: a different requirement",
    ),
    case(
        "ml/marker-index/source-unscoped",
        "marker-index",
        sub("alpha = [{ index = \"second\", marker = \"sys_platform == 'linux'\" }]", 'alpha = [{ index = "second" }]'),
        fresh=False,
    ),
    case("ml/conflict-extras/unchanged", "conflict-extras", fresh=True, why="one requirement per extra-scoped source, as uv records them"),
    case(
        "ml/conflict-extras/sources-swapped",
        "conflict-extras",
        sub('gamma = [{ index = "local", extra = "cpu" }, { index = "second", extra = "cu" }]', 'gamma = [{ index = "second", extra = "cu" }, { index = "local", extra = "cpu" }]'),
        fresh=True,
        why="the sources of one package are a set per extra: their order is not an input",
    ),
    case(
        "ml/conflict-extras/index-moved",
        "conflict-extras",
        sub('{ index = "second", extra = "cu" }', '{ index = "local", extra = "cu" }'),
        fresh=False,
    ),
    case(
        "ml/conflict-extras/source-dropped",
        "conflict-extras",
        sub('gamma = [{ index = "local", extra = "cpu" }, { index = "second", extra = "cu" }]', 'gamma = [{ index = "local", extra = "cpu" }]'),
        fresh=False,
    ),
    case("ml/conflict-extras/extra-specifier", "conflict-extras", sub('cu = ["gamma>=1.0"]', 'cu = ["gamma>=1.0,<2"]'), fresh=False),
    case("ml/conflict-platforms/unchanged", "conflict-platforms", fresh=True),
    case(
        "ml/conflict-platforms/marker-changed",
        "conflict-platforms",
        sub("extra = \"cu\", marker = \"sys_platform == 'linux'\"", "extra = \"cu\", marker = \"sys_platform == 'win32'\""),
        fresh=False,
    ),
    case("ml/conflict-platforms/conflict-narrowed", "conflict-platforms", sub('{ extra = "cu" }, { extra = "mlx" }]]', '{ extra = "cu" }]]'), fresh=False),
    case("ml/override-dup/unchanged", "override-dup", fresh=True),
    case("ml/override-dup/one-duplicate-dropped", "override-dup", sub('    "alpha<2",\n    "gamma<1.5', '    "gamma<1.5'), fresh=True, why="a set: the same requirement once"),
    case(
        "ml/override-dup/one-duplicate-changed",
        "override-dup",
        sub('    "alpha<2",\n    "gamma>=1.0', '    "alpha<1.5",\n    "gamma>=1.0'),
        fresh=False,
    ),
    case("ml/self-extra/unchanged", "self-extra", fresh=True),
    case("ml/self-extra/chained-extra-changed", "self-extra", sub('fast = ["epsilon>=1.0"]', 'fast = ["epsilon>=1.1"]'), fresh=False),
    case("ml/self-extra/self-marker-changed", "self-extra", sub("selfx[cli]; sys_platform == 'linux'", "selfx[cli]; sys_platform == 'darwin'"), fresh=False),
    case(
        "ml/self-extra/lock-expanded",
        "self-extra",
        sub('{ name = "selfx", extras = ["fast"], marker = "extra == \'cli\'" }', '{ name = "epsilon", marker = "extra == \'cli\'", specifier = ">=1.0" }'),
        fresh=False,
        why="a static version: uv compares the extras as written",
        target="uv.lock",
    ),
    case("ml/self-extra-dyn/unchanged", "self-extra-dyn", fresh=True),
    case(
        "ml/self-extra-dyn/lock-expanded",
        "self-extra-dyn",
        sub(
            '{ name = "selfdyn", extras = ["fast"], marker = "extra == \'cli\'" }',
            '{ name = "epsilon", marker = "extra == \'cli\'", specifier = ">=1.0" },\n'
            '    { name = "epsilon", marker = "sys_platform == \'linux\' and extra == \'all\'", specifier = ">=1.0" },\n'
            '    { name = "delta", marker = "sys_platform == \'linux\' and extra == \'all\'", specifier = ">=0.9" }',
        ),
        sub('    { name = "selfdyn", extras = ["cli"], marker = "sys_platform == \'linux\' and extra == \'all\'" },\n', ""),
        fresh=True,
        why="a dynamic version: uv accepts the flattened form (FlatRequiresDist) too",
        target="uv.lock",
    ),
    case("ml/exclude-relative/unchanged", "exclude-relative", fresh=True),
    case("ml/exclude-relative/iso-spelling", "exclude-relative", sub('"7 days"', '"P7D"'), fresh=True, why="the same span, field by field"),
    case("ml/exclude-relative/weeks", "exclude-relative", sub('"7 days"', '"1 week"'), fresh=False, why="P1W is not P7D field by field"),
    case("ml/exclude-relative/hours", "exclude-relative", sub('"7 days"', '"168 hours"'), fresh=False),
    case("ml/exclude-relative/absolute", "exclude-relative", sub('"7 days"', '"2030-01-01T00:00:00Z"'), fresh=False, why="removal of the span"),
    case("ml/exclude-relative/removed", "exclude-relative", sub('exclude-newer = "7 days"\n', ""), fresh=False),
    case(
        "ml/exclude-relative/lock-without-span",
        "exclude-relative",
        sub('exclude-newer-span = "P7D"\n', ""),
        fresh=False,
        why="a lock made with an absolute cutoff (or by uv < 0.9.17): addition of the span",
        target="uv.lock",
    ),
    case(
        "ml/exclude-relative/added-to-plain",
        "registry",
        after("[tool.uv]", 'exclude-newer = "3 days"'),
        fresh=False,
        why="addition of global exclude newer",
    ),
    case("ml/env-python/unchanged", "env-python", fresh=True, why="supported-markers are written without the python clause"),
    case(
        "ml/env-python/clause-dropped",
        "env-python",
        sub("\"python_version == '3.11' and sys_platform == 'darwin'\"", "\"sys_platform == 'darwin'\""),
        fresh=True,
        why="the same environment inside requires-python",
    ),
    case(
        "ml/env-python/platform-changed",
        "env-python",
        sub("\"python_version == '3.11' and sys_platform == 'darwin'\"", "\"python_version == '3.11' and sys_platform == 'win32'\""),
        fresh=False,
    ),
    case("ml/virtual-ws/unchanged", "virtual-ws", fresh=True),
    case(
        "ml/virtual-ws/member-version-bump",
        "virtual-ws",
        sub('version = "0.2.0"', 'version = "0.3.0"'),
        fresh=False,
        target="packages/kappa/pyproject.toml",
    ),
    case("ml/virtual-ws/member-list-changed", "virtual-ws", sub('members = ["packages/*"]', 'members = ["packages/kappa"]'), fresh=False),
    case("ml/virtual-ws/exclude-newer-added", "virtual-ws", after("[tool.uv]", 'exclude-newer = "3 days"'), fresh=False),
    case("ml/virtual-ws/override-changed", "virtual-ws", sub('override-dependencies = ["alpha<2"]', 'override-dependencies = ["alpha<1.5"]'), fresh=False),
    case("ml/virtual-ws/group-changed", "virtual-ws", sub('dev = ["epsilon"]', 'dev = ["epsilon>=1.1"]'), fresh=False),
    # -------- url sources (127.0.0.1 server)
    case("url/unchanged", "url", fresh=True),
    case(
        "url/other-wheel",
        "url",
        sub("epsilon-1.1-py3-none-any.whl", "epsilon-1.0-py3-none-any.whl"),
        fresh=False,
        why="offline: not in cache -> 'Failed to download'",
    ),
]

# --------------------------------------------------------------------------- oracle


@dataclass
class Outcome:
    """uv's verdict on one mutated project."""

    project: Path
    check: UvResult

    @property
    def fresh(self) -> bool:
        return self.check.returncode == 0


class Oracle:
    """Builds, locks, mutates and checks each case once per session."""

    def __init__(self, material: LocalMaterial, root: Path) -> None:
        self.material = material
        self.root = root
        self._outcomes: dict[str, Outcome] = {}

    def project_for(self, name: str, base: Base) -> Path:
        project = write_project(self.root / name, base.pyproject, base.files)
        env = dict(self.material.env)
        lock_project(project, env, offline=base.offline)
        check = uv_check_result(project, env)
        assert check.returncode == 0, f"freshly locked base is not fresh:\n{check.describe()}"
        return project

    def outcome(self, c: Case) -> Outcome:
        if c.id not in self._outcomes:
            base = BASES[c.base](self.material)
            project = self.project_for(c.id.replace("/", "__"), base)
            target = project / c.target
            text = target.read_text()
            for edit in c.edits:
                text = edit(text, self.material)
            target.write_text(text)
            # uv keys cached build metadata (dynamic projects) on mtimes: make the edit visible
            # even on file systems with coarse timestamps.
            stat = target.stat()
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
            self._outcomes[c.id] = Outcome(project, uv_check_result(project, self.material.env))
        return self._outcomes[c.id]

    def explain(self, c: Case) -> str:
        """Failure context: the case's note, uv's output and uv's own reason (from ``-v``)."""
        outcome = self.outcome(c)
        reason = uv_check_reason(outcome.project, self.material.env)
        return f"{c.id}: {c.why}\nuv reason: {reason}\n{outcome.check.describe()}"


@pytest.fixture(scope="session")
def material(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalMaterial]:
    m = build_local_material(tmp_path_factory.mktemp("uv-material"))
    with serve_directory(m.wheels) as url:
        yield dataclasses.replace(m, wheel_server=url)


@pytest.fixture(scope="session")
def oracle(material: LocalMaterial, tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    return Oracle(material, tmp_path_factory.mktemp("uv-projects"))


def _params(with_xfail: bool) -> list:
    params = []
    for c in CASES:
        marks = []
        if with_xfail and c.depsync_xfail:
            marks.append(pytest.mark.xfail(strict=True, reason=c.depsync_xfail))
        params.append(pytest.param(c, id=c.id, marks=marks))
    return params


# --------------------------------------------------------------------------- tests


def test_case_ids_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 40


def test_fake_wheels_are_valid(material: LocalMaterial) -> None:
    """The wheel builder writes archives whose RECORD matches their content."""
    for wheel in sorted(material.wheels.glob("*.whl")):
        data = wheel.read_bytes()
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
            rows = [line.split(",") for line in archive.read(record_name).decode().splitlines() if line]
            assert {row[0] for row in rows} == set(names)
            for path, digest, size in rows:
                if path == record_name:
                    continue
                content = archive.read(path)
                expected = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
                assert digest == f"sha256={expected}" and int(size) == len(content), path
            metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            assert metadata.startswith("Metadata-Version: 2.1\nName: ")
        assert data == wheel_bytes(_dist_of(wheel)), "wheels must be reproducible"


def _dist_of(wheel: Path) -> FakeDist:
    return next(d for d in FAKE_DISTS if d.wheel_filename == wheel.name)


@pytest.mark.parametrize("base_name", sorted(BASES))
def test_base_project_locks_fresh(oracle: Oracle, base_name: str) -> None:
    """Every base project locks offline and is immediately fresh (sanity of the material)."""
    oracle.project_for(f"base__{base_name}", BASES[base_name](oracle.material))


@pytest.mark.parametrize("c", _params(with_xfail=False))
def test_uv_verdict_matches_expectation(oracle: Oracle, c: Case) -> None:
    """uv's verdict is the one recorded in the case (documents uv's behaviour)."""
    outcome = oracle.outcome(c)
    assert outcome.check.returncode in (0, 1), oracle.explain(c)
    assert outcome.fresh == c.expected_fresh, oracle.explain(c)


@pytest.mark.parametrize("c", _params(with_xfail=True))
def test_depsync_agrees_with_uv(oracle: Oracle, c: Case) -> None:
    """depsync predicts exactly what ``uv lock --check --offline`` says."""
    outcome = oracle.outcome(c)
    findings = lock_freshness(outcome.project)
    assert (findings == []) == outcome.fresh, (
        f"uv says {'fresh' if outcome.fresh else 'stale'}; depsync findings: {findings!r}\n{oracle.explain(c)}"
    )
