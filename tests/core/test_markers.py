"""Semantic marker and specifier equality (pure)."""

import pytest

from depsync.core.model.markers import (
    conjoin,
    markers_equivalent,
    parse_marker,
    specifiers_equivalent,
)


@pytest.mark.parametrize(
    "left, right",
    [
        ("python_version >= '3.12'", "python_full_version >= '3.12'"),
        ("python_version > '3.11'", "python_full_version >= '3.12'"),
        ("python_version == '3.12'", "python_full_version == '3.12.*'"),
        ("python_version ~= '3.12'", "python_full_version >= '3.12' and python_full_version < '4'"),
        ("python_full_version >= '3.12.0'", "python_full_version >= '3.12'"),
        ("sys_platform != 'darwin' or os_name == 'posix'", "os_name == 'posix' or sys_platform != 'darwin'"),
        ("os_name == 'nt' or platform_system == 'Windows'", "os_name == 'nt' or sys_platform == 'win32'"),
        ("sys_platform != 'darwin' and extra == 'dev'", "extra == 'dev' and sys_platform != 'darwin'"),
    ],
)
def test_equivalent_markers(left: str, right: str) -> None:
    assert markers_equivalent(parse_marker(left), parse_marker(right))


@pytest.mark.parametrize(
    "left, right",
    [
        ("python_version >= '3.12'", "python_full_version >= '3.12.1'"),
        ("sys_platform == 'linux'", "sys_platform == 'darwin'"),
        ("extra == 'dev'", "extra == 'lts'"),
        ("python_version >= '3.12' and extra == 'dev'", "extra == 'dev'"),
    ],
)
def test_different_markers(left: str, right: str) -> None:
    assert not markers_equivalent(parse_marker(left), parse_marker(right))


def test_absent_marker_is_always() -> None:
    assert markers_equivalent(None, None)
    assert not markers_equivalent(None, parse_marker("sys_platform == 'linux'"))
    assert parse_marker("  ") is None


def test_conjoin_appends_extra() -> None:
    joined = conjoin(parse_marker("sys_platform != 'darwin' or os_name == 'posix'"), parse_marker("extra == 'x'"))
    assert markers_equivalent(joined, parse_marker("(os_name == 'posix' or sys_platform != 'darwin') and extra == 'x'"))
    assert conjoin(None, None) is None


@pytest.mark.parametrize(
    "left, right, same",
    [
        ("~=3.11", ">=3.11, <4", True),
        (">=3.10,!=3.10.*", ">=3.11", True),
        ("<4,>=3.11", ">=3.11, <4", True),
        (">=3.10", ">=3.11", False),
        ("==3.11.*", ">=3.11,<3.12", True),
    ],
)
def test_requires_python_equivalence(left: str, right: str, same: bool) -> None:
    assert specifiers_equivalent(left, right) is same


def test_other_platforms_exist() -> None:
    # found by tests/test_no_false_alarms.py: "not windows" is not "linux or mac"
    assert not markers_equivalent(parse_marker("sys_platform != 'win32'"), parse_marker("platform_system == 'Linux' or sys_platform == 'darwin'"))


def test_a_comparison_uv_ignores_is_left_out() -> None:
    # uv accepts `~=` on a platform string and ignores the term (packaging raises evaluating it)
    assert markers_equivalent("sys_platform ~= 'linux'", "sys_platform ~= 'linux'", ">=3.10")
    assert not markers_equivalent("sys_platform ~= 'linux'", "sys_platform == 'linux'", ">=3.10")
    assert markers_equivalent("sys_platform ~= 'linux'", None, ">=3.10")


@pytest.mark.parametrize(
    "pyproject, lock",
    [
        # three real false errors: each marker within an extra, as uv records it
        (
            "((sys_platform == 'linux' and (platform_machine == 'x86_64' or platform_machine == 'aarch64')) or (sys_platform == 'darwin' and platform_machine == 'arm64')) and extra == 'ml'",
            "(platform_machine == 'aarch64' and sys_platform == 'linux' and extra == 'ml') or (platform_machine == 'arm64' and sys_platform == 'darwin' and extra == 'ml') or (platform_machine == 'x86_64' and sys_platform == 'linux' and extra == 'ml')",
        ),
        ("(platform_machine == 'AMD64' or platform_machine == 'x86_64') and extra == 'cu128'", "(platform_machine == 'AMD64' and extra == 'cu128') or (platform_machine == 'x86_64' and extra == 'cu128')"),
        # uv writes platform_system as sys_platform
        ("platform_system == 'Linux' and python_version >= '3.11' and extra == 'dev'", "python_full_version >= '3.11' and sys_platform == 'linux' and extra == 'dev'"),
    ],
)
def test_real_false_errors_are_equivalent(pyproject: str, lock: str) -> None:
    assert markers_equivalent(pyproject, lock, ">=3.10")
