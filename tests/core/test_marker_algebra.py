"""The marker algebra (model/marker_tree.py, marker_parse.py): canonical forms, and properties
against packaging's evaluation. What uv does with markers is asserted against real uv in
tests/core/test_marker_uv.py; here the algebra itself (pure)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.markers import Marker

from depsync.core.model import marker_tree, markers
from depsync.core.model.marker_parse import release_of
from depsync.core.model.markers import (
    InvalidMarker,
    canonical,
    implies,
    is_always,
    is_never,
    markers_equivalent,
    negate,
)


def node(text: str | None) -> int:
    return markers._node(markers._store(), text)


# -- canonical forms ---------------------------------------------------------------------------

# real markers that were false errors: pyproject's text against what uv wrote in uv.lock
REAL = [
    (
        "(sys_platform == 'linux' and (platform_machine == 'x86_64' or platform_machine == 'aarch64')) or (sys_platform == 'darwin' and platform_machine == 'arm64')",
        "(platform_machine == 'aarch64' and sys_platform == 'linux') or (platform_machine == 'arm64' and sys_platform == 'darwin') or (platform_machine == 'x86_64' and sys_platform == 'linux')",
    ),
    ("(platform_machine == 'AMD64' or platform_machine == 'x86_64') and extra == 'cu'", "(platform_machine == 'x86_64' or platform_machine == 'AMD64') and extra == 'cu'"),
    ("platform_system == 'Linux'", "sys_platform == 'linux'"),
    ("platform_system == 'Windows' and python_version >= '3.11'", "python_full_version >= '3.11' and sys_platform == 'win32'"),
    ("platform_system != 'Darwin'", "sys_platform != 'darwin'"),
    ("python_version < '3.12'", "python_full_version < '3.12'"),
]


@pytest.mark.parametrize("written, recorded", REAL)
def test_real_rewrites_are_one_node(written: str, recorded: str) -> None:
    assert node(written) == node(recorded)
    assert canonical(written) == canonical(recorded)


@pytest.mark.parametrize(
    "left, right",
    [
        ("python_version == '3.12'", "python_full_version >= '3.12' and python_full_version < '3.13'"),
        ("python_version != '3.12'", "python_full_version != '3.12.*'"),
        ("python_version > '3.11'", "python_full_version >= '3.12'"),
        ("python_version <= '3.11'", "python_full_version < '3.12'"),
        ("python_version >= '3.11.4'", "python_full_version >= '3.12'"),  # python_version has 2 segments
        ("python_version == '3'", "python_full_version == '3.0.*'"),
        ("python_version == '3.*'", "python_full_version >= '3' and python_full_version < '4'"),
        ("python_version ~= '3.10'", "python_full_version >= '3.10' and python_full_version < '4'"),
        ("python_version ~= '3.10.0'", "python_full_version == '3.10.*'"),
        ("python_version in '3.11 3.12'", "python_full_version >= '3.11' and python_full_version < '3.13'"),
        ("python_version not in '3.11 3.12'", "python_full_version < '3.11' or python_full_version >= '3.13'"),
        ("python_full_version ~= '3.12.1'", "python_full_version >= '3.12.1' and python_full_version < '3.13'"),
        ("python_full_version != '3.12.*'", "python_full_version < '3.12' or python_full_version >= '3.13'"),
        ("python_full_version == '3.12.0.*'", "python_full_version >= '3.12' and python_full_version < '3.12.1'"),
        ("python_full_version >= '3.12.0'", "python_full_version >= '3.12'"),
        ("python_full_version >= '3.13.0rc1'", "python_full_version >= '3.13'"),  # release-only, as uv
        ("python_full_version in '3.11.2 3.12'", "python_full_version == '3.11.2' or python_full_version == '3.12.0'"),
        ("'3.8' < python_version", "python_full_version >= '3.9'"),
        ("python_full_version === '3.12'", "python_full_version == '3.12'"),  # uv refuses ===; read as ==
        ("sys_platform <= 'linux'", "sys_platform == 'linux'"),  # uv: inclusive string order is ==
        ("sys_platform < 'linux' or sys_platform == 'win32'", "sys_platform == 'win32'"),  # ... strict is false
        ("'linux' == sys_platform", "sys_platform == 'linux'"),
        ("sys.platform == 'linux'", "sys_platform == 'linux'"),
        ("extra == 'Foo_Bar'", "extra == 'foo-bar'"),
        ("sys_platform ~= 'linux' and os_name == 'posix'", "os_name == 'posix'"),  # uv ignores the term
        ("python_version >= 'foo' or os_name == 'posix'", "os_name == 'posix'"),
        ("platform_release < '5.0'", "(sys_platform == 'darwin' and platform_release < '5') or (sys_platform != 'darwin' and platform_release < '5.0')"),
    ],
)
def test_equal_meaning_is_one_node(left: str, right: str) -> None:
    assert node(left) == node(right)


@pytest.mark.parametrize(
    "left, right",
    [
        ("python_version >= '3.12'", "python_full_version >= '3.12.1'"),
        ("python_full_version > '3.12'", "python_full_version >= '3.12.1'"),  # 3.12.0.1 lies between
        ("platform_release >= '5.0'", "platform_release >= '5'"),  # a string off macOS
        ("platform_release < 'abc'", "platform_release <= 'abc'"),  # not a version: lexicographic
        ("platform_version < '5.0'", "platform_version < '5'"),
        ("sys_platform in 'linux'", "sys_platform == 'linux'"),  # uv does not relate `in` to ==
        ("'linux' in sys_platform", "sys_platform in 'linux'"),
        ("sys_platform == 'linux'", "sys_platform == 'linux' and os_name == 'posix'"),
        ("extra == 'a'", "'a' in extras"),
    ],
)
def test_different_meaning_is_another_node(left: str, right: str) -> None:
    assert node(left) != node(right)
    assert not markers_equivalent(left, right)


def test_double_negation_and_de_morgan() -> None:
    a, b = "sys_platform == 'linux' and python_version >= '3.11'", "platform_machine == 'x86_64' or extra == 'gpu'"
    assert node(negate(negate(a))) == node(a)
    assert node(negate(f"({a}) and ({b})")) == node(f"({negate(a)}) or ({negate(b)})")
    assert node(negate(f"({a}) or ({b})")) == node(f"({negate(a)}) and ({negate(b)})")
    assert negate(None) is not None and is_never(negate(None))
    assert negate("sys_platform == 'linux' and sys_platform == 'win32'") is None  # never -> always


def test_truth_constants_and_implication() -> None:
    assert is_always("python_version >= '3.10' or python_version < '3.10'")
    assert is_always(None) and is_always("os_name ~= 'x'")  # only ignored terms: true, as uv
    assert is_never("sys_platform == 'linux' and sys_platform == 'win32'")
    assert is_never("python_version == '3.9.1'") and is_never("extra == '!!'")  # uv: never true
    assert is_never(marker_tree.NEVER_TEXT) and Marker(marker_tree.NEVER_TEXT).evaluate({"sys_platform": "linux"}) is False
    assert implies("sys_platform == 'linux' and extra == 'x'", "sys_platform == 'linux'")
    assert not implies("sys_platform == 'linux'", "sys_platform == 'linux' and extra == 'x'")


def test_impossible_platforms_are_uvs_exclusions() -> None:
    # measured with uv 0.13.9 (test_marker_uv.py): uv takes these pairs for one marker
    assert markers_equivalent("sys_platform == 'linux' and os_name != 'nt'", "sys_platform == 'linux'")
    assert markers_equivalent("platform_system == 'FreeBSD' and sys_platform != 'linux'", "platform_system == 'FreeBSD'")
    assert is_never("os_name == 'nt' and sys_platform == 'linux'") and is_always("os_name != 'nt' or sys_platform != 'linux'")
    # ... and not these
    assert not markers_equivalent("sys_platform == 'cygwin' and os_name != 'nt'", "sys_platform == 'cygwin'")
    assert not markers_equivalent("os_name == 'nt'", "os_name == 'nt' and sys_platform == 'win32'")


def test_uv_reads_some_markers_its_own_way() -> None:
    """Where uv's reading differs from packaging's evaluation, depsync follows uv (it predicts uv)."""
    assert is_never("python_version != '3.12.1.*'")  # packaging: always (python_version has 2 segments)
    assert node("python_full_version in '3.12'") == node("python_full_version == '3.12'")  # packaging: substring
    assert not is_never("platform_release < 'abc'")  # packaging 26.4: never (uv: lexicographic)
    assert node("platform_release >= '22' and sys_platform == 'darwin'") == node("platform_release >= '22.0.0' and sys_platform == 'darwin'")


def test_requires_python_bounds_not_gaps() -> None:
    assert markers_equivalent("python_version >= '3.10'", None, ">=3.10")
    assert markers_equivalent("python_full_version < '0' or sys_platform == 'linux'", "sys_platform == 'linux'", ">=3.10")
    # uv simplifies to requires-python's lowest and highest version, not to its gaps
    assert not markers_equivalent("python_version != '3.11'", None, ">=3.10,!=3.11.*")


def test_syntax_errors_are_invalid_markers() -> None:
    for text in ("sys_platform ==", "(sys_platform == 'linux'", "sys_platform = 'linux'", "nope == 'x'", "extras in 'x'"):
        with pytest.raises(InvalidMarker):
            node(text)
    with pytest.raises(ValueError, match="invalid marker"):
        markers_equivalent("sys_platform ==", "os_name == 'nt'")


# -- properties ------------------------------------------------------------------------------

# platforms as they exist (uv rewrites platform_system to sys_platform for the known ones)
PLATFORMS = [("linux", "Linux", "posix"), ("darwin", "Darwin", "posix"), ("win32", "Windows", "nt"), ("freebsd14", "FreeBSD", "posix"), ("cygwin", "CYGWIN_NT", "posix"), ("zos", "OS/390", "java")]
PYTHONS = ["3.8.10", "3.9.0", "3.10.4", "3.11.0", "3.11.7", "3.12.0", "3.12.3", "3.13.1", "3.14.0", "4.0.0"]
MACHINES = ["x86_64", "aarch64", "AMD64", "arm64", "s390x"]
RELEASES = {"darwin": ["22.1.0", "23.6.0", "5.0", "24"], "other": ["abc", "generic", "xyz", ""]}
IMPLEMENTATIONS = ["cpython", "pypy"]
EXTRAS = ["gpu", "cu-12", "dev"]

versions = st.sampled_from(["3.8", "3.9", "3.10", "3.11", "3.11.4", "3.12", "3.12.0", "3.12.1", "3.13", "4"])
version_ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "~="])


@st.composite
def version_term(draw: st.DrawFn) -> str:
    key = draw(st.sampled_from(["python_version", "python_full_version", "implementation_version"]))
    op, version = draw(version_ops), draw(versions)
    if op == "~=" and "." not in version:
        version += ".0"
    if op in ("==", "!=") and draw(st.booleans()):
        if key == "python_version" and op == "!=" and version.count(".") == 2:
            op = "=="  # uv reads `python_version != '3.12.1.*'` as never (test_uv_reads_some_markers_its_own_way)
        return f"{key} {op} '{version}.*'"
    return f"{key} {op} '{version}'"


@st.composite
def string_term(draw: st.DrawFn) -> str:
    key, values = draw(
        st.sampled_from(
            [
                ("sys_platform", [p[0] for p in PLATFORMS]),
                ("platform_system", [p[1] for p in PLATFORMS]),
                ("os_name", ["posix", "nt", "java"]),
                ("platform_machine", MACHINES),
                ("implementation_name", IMPLEMENTATIONS),
                ("platform_release", RELEASES["other"]),
            ]
        )
    )
    value = draw(st.sampled_from(values))
    op = draw(st.sampled_from(["==", "!=", "in", "not in", "contains", "<", "<=", ">", ">="]))
    if key == "platform_release" and op in ("<", "<=", ">", ">="):
        # uv orders platform_release lexicographically (a version on macOS); packaging 26.4 as
        # other strings (strict: false, inclusive: ==): test_uv_reads_some_markers_its_own_way
        op = "=="
    if op == "contains":
        return f"'{value[:3]}' in {key}"
    if op in ("in", "not in"):
        return f"{key} {op} '{value} {draw(st.sampled_from(values))}'"
    return f"{key} {op} '{value}'"


terms = st.one_of(version_term(), string_term(), st.sampled_from(EXTRAS).map(lambda e: f"extra == '{e}'"), st.sampled_from(EXTRAS).map(lambda e: f"extra != '{e}'"))
marker_texts = st.recursive(terms, lambda inner: st.tuples(inner, st.sampled_from(["and", "or"]), inner).map(lambda t: f"({t[0]}) {t[1]} ({t[2]})"), max_leaves=8)


@st.composite
def environments(draw: st.DrawFn) -> dict[str, str]:
    sys_platform, system, os_name = draw(st.sampled_from(PLATFORMS))
    python = draw(st.sampled_from(PYTHONS))
    release = draw(st.sampled_from(RELEASES["darwin" if sys_platform == "darwin" else "other"]))
    return {
        "sys_platform": sys_platform,
        "platform_system": system,
        "os_name": os_name,
        "python_full_version": python,
        "python_version": ".".join(python.split(".")[:2]),
        "implementation_version": draw(st.sampled_from(PYTHONS)),
        "platform_machine": draw(st.sampled_from(MACHINES)),
        "implementation_name": draw(st.sampled_from(IMPLEMENTATIONS)),
        "platform_python_implementation": "CPython",
        "platform_release": release,
        "platform_version": "",
        "extra": draw(st.sampled_from(EXTRAS)),
    }


def ours(text: str, env: dict[str, str]) -> bool:
    store = markers._store()
    return store.evaluate(markers._node(store, text), marker_tree.environment_reader(env, release_of))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker_texts, st.lists(environments(), min_size=1, max_size=12))
def test_truth_table_agrees_with_packaging(text: str, envs: list[dict[str, str]]) -> None:
    marker = Marker(text)
    for env in envs:
        assert ours(text, env) == marker.evaluate(env), (text, env)


def _shuffled(text: str, data: st.DataObject) -> str:
    """text with the operands of every `and`/`or` in random order (the same marker)."""
    parsed = Marker(text)._markers  # packaging's parse tree: [left, "and"/"or", right, ...]

    def shuffle(items: list) -> str:
        if isinstance(items, tuple):
            left, op, right = items
            lhs = left.value if type(left).__name__ == "Variable" else repr(left.value)
            rhs = right.value if type(right).__name__ == "Variable" else repr(right.value)
            return f"{lhs} {op.value} {rhs}"
        if isinstance(items, list):
            groups, current = [], [items[0]]
            for op, item in zip(items[1::2], items[2::2]):
                if op == "or":
                    groups.append(current)
                    current = [item]
                else:
                    current.append(item)
            groups.append(current)
            ands = [" and ".join(f"({shuffle(i)})" for i in data.draw(st.permutations(g))) for g in groups]
            return " or ".join(f"({a})" for a in data.draw(st.permutations(ands)))
        return str(items)

    return shuffle(parsed)


@settings(max_examples=300, deadline=None)
@given(marker_texts, st.data())
def test_equivalent_rewrites_are_one_node(text: str, data: st.DataObject) -> None:
    shuffled = _shuffled(text, data)
    assert node(shuffled) == node(text), shuffled
    assert node(negate(negate(text))) == node(text)
    assert node(canonical(text)) == node(text)  # re-rendered, read again: the same node


@settings(max_examples=200, deadline=None)
@given(marker_texts, marker_texts)
def test_operations_agree_with_their_meaning(a: str, b: str) -> None:
    store = markers._store()
    x, y = node(a), node(b)
    assert node(f"({a}) and ({b})") == store.conjoin(x, y)
    assert node(f"({a}) or ({b})") == store.disjoin(x, y)
    assert store.conjoin(x, store.negate(x)) == marker_tree.FALSE
    assert implies(f"({a}) and ({b})", a)
