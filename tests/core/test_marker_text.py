"""normalize_marker prints what packaging prints, and rejects what packaging rejects."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import InvalidMarker as PackagingInvalidMarker
from packaging.markers import Marker

from depsync.core.model import marker_text
from depsync.core.model.marker_text import InvalidMarker, normalize_marker

REPO = Path(__file__).resolve().parents[2]

VARIABLES = [
    "python_version", "python_full_version", "os_name", "os.name", "sys_platform", "sys.platform", "platform_release",
    "platform_system", "platform_version", "platform.version", "platform_machine", "platform.machine",
    "platform_python_implementation", "platform.python_implementation", "python_implementation", "implementation_name",
    "implementation_version", "extra", "extras", "dependency_groups",
]
OPERATORS = ["==", "!=", "<", "<=", ">", ">=", "~=", "===", "in", "not in", "not  in", "not\tin"]
VALUES = st.text(alphabet=st.sampled_from(list("abcXYZ09._- +*'\"\t")), max_size=8)  # escapes: the examples below
SPACE = st.sampled_from(["", " ", "  ", "\t"])


def _packaging(text: str) -> str | None:
    try:
        return str(Marker(text))
    except PackagingInvalidMarker:
        return None


def _ours(text: str) -> str | None:
    try:
        return normalize_marker(text)
    except InvalidMarker:
        return None


@st.composite
def quoted(draw: st.DrawFn) -> str:
    value = draw(VALUES)
    quote = draw(st.sampled_from(["'", '"']))
    return f"{quote}{value}{quote}"


@st.composite
def atom(draw: st.DrawFn) -> str:
    variable = draw(st.sampled_from(VARIABLES))
    sides = [variable, draw(quoted())]
    if draw(st.booleans()):
        sides.reverse()
    return f"{draw(SPACE)}{sides[0]}{draw(SPACE)}{draw(st.sampled_from(OPERATORS))}{draw(SPACE)}{sides[1]}{draw(SPACE)}"


def markers(depth: int = 3) -> st.SearchStrategy[str]:
    return st.recursive(
        atom(),
        lambda inner: st.one_of(
            st.tuples(inner, st.sampled_from([" and ", " or ", "and", " or", "or ", "\tand\t"]), inner).map("".join),
            inner.map(lambda m: f"({m})"),
            inner.map(lambda m: f" ( {m} ) "),
        ),
        max_leaves=6,
    )


@settings(max_examples=600, deadline=None)
@given(markers())
def test_generated_markers_read_as_packaging_reads_them(text: str) -> None:
    assert _ours(text) == _packaging(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("()'\" =<>!~andortsypfxe_.\t")), max_size=30))
def test_garbage_is_rejected_or_read_as_packaging_does(text: str) -> None:
    assert _ours(text) == _packaging(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("python_version<'3.8'", 'python_version < "3.8"'),
        ("os.name=='nt'and(sys_platform=='linux' or extra=='Foo_Bar')", 'os_name == "nt" and (sys_platform == "linux" or extra == "foo-bar")'),
        ("((sys_platform == 'linux'))", 'sys_platform == "linux"'),
        ("'Dev_Tools' in dependency_groups", '"dev-tools" in dependency_groups'),
        ("python_implementation == 'CPython'", 'platform_python_implementation == "CPython"'),
        ("sys_platform == 'it''s'", None),
        ("extra == 'a\\u0041'", None),  # an escape: packaging reads it (the text is packaging's)
    ],
)
def test_examples(text: str, expected: str | None) -> None:
    assert _ours(text) == _packaging(text)
    if expected is not None:
        assert _ours(text) == expected


def test_an_invalid_marker_raises_depsyncs_error_with_packagings_message() -> None:
    with pytest.raises(InvalidMarker, match="Expected"):
        normalize_marker("sys_platform = 'linux'")


def _corpus_markers() -> set[str]:
    found: set[str] = set()
    roots = [REPO / "tests" / "corpus", REPO / "fixtures", REPO.parent / "shared" / "corpus-ml"]
    quoted_marker = re.compile(r"""marker = "((?:[^"\\]|\\.)*)\"""")
    requirement_marker = re.compile(r""";\s*([^"\n]+)\"""")
    for root in roots:
        for path in [*root.rglob("uv.lock"), *root.rglob("pyproject.toml")]:
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            found.update(m.replace('\\"', '"') for m in quoted_marker.findall(text))
            found.update(requirement_marker.findall(text))
    return found


def test_every_marker_of_the_corpora_reads_as_packaging_reads_it() -> None:
    corpus = _corpus_markers()
    assert len(corpus) > 500
    differ = [m for m in corpus if _ours(m) != _packaging(m)]
    assert not differ, differ[:5]


def test_the_plain_reader_reads_them_without_packaging(monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpora's markers never need packaging's reader (what keeps it out of a cold check)."""

    def refuse(text: str) -> str:
        raise AssertionError(f"packaging needed for {text!r}")

    monkeypatch.setattr(marker_text, "_packaging_text", refuse)
    readable = [m for m in _corpus_markers() if _packaging(m) is not None]
    for marker in readable:
        normalize_marker(marker)
