"""uv's own wheel lines, read without the TOML parser (core/model/lock_wheels.py): the data is
the TOML parser's, on every real lock here, on generated locks and on hostile texts."""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
import rtoml
from conftest import BUNDLED, REPO, SHARED, megatron
from hypothesis import given, settings
from hypothesis import strategies as st

from depsync.core.model.lock import Lock
from depsync.core.model.lock_wheels import CanonicalWheels, parse_lock_text
from depsync.errors import DepsyncError

HASH = "sha256:" + "0123456789abcdef" * 4
LINE = '    {{ url = "https://files.invalid/p/{name}-{version}-py3-none-any.whl", hash = "{hash}", size = 10, upload-time = "2026-01-28T10:17:04.19Z" }},\n'


def plain(value: Any) -> Any:
    """value with every CanonicalWheels made the list the TOML parser gives."""
    if isinstance(value, CanonicalWheels):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def canonical_count(data: dict[str, Any]) -> int:
    return sum(isinstance(p.get("wheels"), CanonicalWheels) for p in data.get("package", []))


def real_locks() -> list[Path]:
    found = {p.resolve() for root in (SHARED, BUNDLED, REPO / "tests") if root.exists() for p in root.rglob("uv.lock")}
    return sorted(found)


def test_there_are_real_locks() -> None:
    assert len(real_locks()) >= 40


@pytest.mark.parametrize("path", real_locks(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_every_real_lock_reads_as_the_toml_parser_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        expected = rtoml.loads(text)
    except Exception:
        with pytest.raises(Exception):
            parse_lock_text(text, rtoml.loads)
        return
    data = parse_lock_text(text, rtoml.loads)
    assert plain(data) == expected
    assert data == expected  # CanonicalWheels compares equal to the list it stands for


def test_the_megatron_lock_is_all_uvs_own_lines() -> None:
    text = megatron("dev", "uv.lock")
    data = parse_lock_text(text, rtoml.loads)
    with_wheels = [p for p in rtoml.loads(text)["package"] if "wheels" in p]
    assert canonical_count(data) == len(with_wheels) > 300


def lock(*packages: str, tail: str = "") -> str:
    return 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n\n' + "\n".join(packages) + tail


def package(name: str, body: str) -> str:
    return f'[[package]]\nname = "{name}"\nversion = "1.0"\nsource = {{ registry = "https://pypi.org/simple" }}\n{body}'


def wheels(name: str, count: int = 2) -> str:
    return "wheels = [\n" + "".join(LINE.format(name=name, version=f"1.{i}", hash=HASH) for i in range(count)) + "]\n"


def same_as_parser(text: str) -> dict[str, Any] | None:
    """parse_lock_text's answer, held to the TOML parser's: the same data or an error both."""
    try:
        expected = rtoml.loads(text)
    except Exception:
        with pytest.raises(Exception):
            parse_lock_text(text, rtoml.loads)
        return None
    data = parse_lock_text(text, rtoml.loads)
    assert plain(data) == expected
    return data


def test_uvs_blocks_are_kept_as_text() -> None:
    data = same_as_parser(lock(package("a", wheels("a")), package("b", wheels("b", 3))))
    assert data is not None and canonical_count(data) == 2
    assert len(data["package"][1]["wheels"]) == 3
    assert data["package"][1]["wheels"].plain_file_names() == [f"b-1.{i}-py3-none-any.whl" for i in range(3)]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # a multi-line string anywhere: the whole file goes to the parser
        (lock(package("a", wheels("a") + 'description = """\nwheels = [\n"""\n')), 0),
        (lock(package("a", wheels("a") + "note = '''x'''\n")), 0),
        # the block of a subtable, not of the package
        (lock(package("a", "[package.metadata]\n" + wheels("a"))), 0),
        # of another array of tables
        (lock(package("a", "")) + "\n[[other]]\n" + wheels("a"), 0),
        # inside a multi-line inline table (TOML 1.1, which the parser reads), beside a real empty array
        (lock(package("a", "wheels = []\nx = {\n" + wheels("a") + "}\n")), 0),
        (lock(package("a", wheels("a") + "x = {\n" + wheels("b") + "}\n")), 0),
        # two wheels keys: the parser's duplicate-key error stands
        (lock(package("a", wheels("a") + wheels("a"))), 0),
        # the parser's error elsewhere stands
        (lock(package("a", wheels("a")), tail="broken = \n"), 0),
        (lock(package("a", wheels("a")), tail="[[package]]\nname = 'x'\nwheels = [\n    { url = 1 },\n"), 0),
        # a closing bracket with more on its line, a trailing comment: left to the parser
        (lock(package("a", wheels("a")[:-1] + " # done\n")), 0),
        (lock(package("a", wheels("a")[:-2] + "], x = 1\n")), 0),
        # lines uv does not write are left to the parser, the rest of the file is not
        (lock(package("a", wheels("a").replace("sha256:0", "SHA256:0", 1)), package("b", wheels("b"))), 1),
        (lock(package("a", wheels("a").replace("size = 10", "size = 1_0", 1))), 0),
        (lock(package("a", wheels("a").replace("size = 10", "size = 99999999999999999999", 1))), 0),
        (lock(package("a", wheels("a").replace("size = 10", "size = 010", 1))), 0),
        (lock(package("a", wheels("a").replace("https:", "ht\\u0074ps:", 1))), 0),
        (lock(package("a", wheels("a").replace("https:", "ht\ttps:", 1))), 0),
        (lock(package("a", wheels("a").replace('.whl"', '.whl\\"', 1))), 0),
        (lock(package("a", wheels("a").replace("{ url", "{url", 1))), 0),
        (lock(package("a", wheels("a").replace(" },\n", " }\n", 1))), 0),
        (lock(package("a", wheels("a").replace("\n", "\r\n"))), 0),
        # the forms uv writes without a size or an upload time
        (lock(package("a", wheels("a").replace(', upload-time = "2026-01-28T10:17:04.19Z"', ""))), 1),
        (lock(package("a", wheels("a").replace(", size = 10", ""))), 1),
        # non-ASCII in a url is a plain string
        (lock(package("a", wheels("a").replace("files.invalid", "fïles.invalid"))), 1),
        # a text that spells a sentinel of its own is only a string
        (lock(package("a", 'wheels = ["0123456789abcdef01234567:0"]\n'), package("b", wheels("b"))), 1),
    ],
)
def test_what_is_not_uvs_form_is_the_parsers(text: str, canonical: int) -> None:
    data = same_as_parser(text)
    assert (canonical_count(data) if data is not None else 0) == canonical


LINE_PARTS = st.lists(
    st.sampled_from(["", "x", '"', "\\", "\t", "\n", "]", "[", "{", "}", ",", " ", "#", "%", "é", "'''", '"""', "=", "0", "wheels = [\n"]),
    max_size=3,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 400), LINE_PARTS), max_size=4), st.integers(1, 4))
def test_generated_locks_read_as_the_parser_reads_them(edits: list[tuple[int, int, str]], packages: int) -> None:
    text = lock(*[package(name, wheels(name, 3)) for name in string.ascii_lowercase[:packages]])
    for _, position, insert in edits:  # an insertion anywhere: a line, a quote, a bracket
        at = position * len(text) // 400
        text = text[:at] + insert + text[at:]
    same_as_parser(text)


def test_lock_errors_are_the_ones_of_the_whole_text() -> None:
    text = lock(package("a", wheels("a")), tail="broken = \n")
    with pytest.raises(DepsyncError) as cut:
        Lock.from_text(text, "uv.lock")
    # the line and column of the error in the file as written (its last line), not in the cut text
    assert cut.value.where == f"uv.lock:{text.count(chr(10))}:10"
    assert cut.value.message == "not valid TOML: Invalid value"


def test_the_lock_model_reads_the_kept_blocks() -> None:
    text = "\ufeff" + lock(package("a", wheels("a")), package("b", wheels("b")))
    parsed = Lock.from_text(text)
    assert [type(p.raw["wheels"]).__name__ for p in parsed.packages] == ["CanonicalWheels"] * 2
    assert parsed.packages[0].raw["wheels"][1]["url"].endswith("a-1.1-py3-none-any.whl")
    assert parsed.packages[0].raw["wheels"] == rtoml.loads(text[1:])["package"][0]["wheels"]


@pytest.mark.parametrize(
    ("version", "names"),
    [
        ("1.0", ["a-1.0-py3-none-any.whl", "a-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"]),
        ("1.0", ["a-1.0-py3-none-any.whl", "b-1.0-py3-none-any.whl"]),  # another package's wheel
        ("1.0", ["a-2.0-py3-none-any.whl"]),  # another version's
        ("1.0", ["a-1.0-py3-none.whl"]),  # too few tags
        ("1.0+cu12", ["a-1.0%2Bcu12-py3-none-any.whl", "a-1.0+cu12-py3-none-any.whl"]),  # an escape to undo
        ("1.0", ["a-1.0-py3-none-any.whl?x=1", "a-1.0-py3-none-any.whl#sha256=00"]),
        ("1.0", ["A-1.0-py3-none-any.whl"]),  # the per-wheel test normalizes the name
        ("1.0-1", ["a-1.0-1-py3-none-any.whl"]),  # no prefix: a dash in the version
    ],
)
def test_integrity_reads_kept_blocks_as_it_reads_tables(version: str, names: list[str]) -> None:
    """The artifact findings on uv's own lines are the ones on the same wheels written so that
    the TOML parser reads them (one space less)."""
    from depsync.core.config import Config
    from depsync.core.model.pyproject import Pyproject
    from depsync.core.rules import integrity
    from depsync.core.rules.inputs import CheckInputs

    lines = "".join(f'    {{ url = "https://files.invalid/p/{n}", hash = "{HASH}", size = 10 }},\n' for n in names)
    body = f'[[package]]\nname = "a"\nversion = "{version}"\nsource = {{ registry = "https://pypi.org/simple" }}\nwheels = [\n{lines}]\n'
    kept, parsed = (Lock.from_text(lock(text)) for text in (body, body.replace("{ url", "{url")))
    assert isinstance(kept.packages[0].raw["wheels"], CanonicalWheels)
    assert not isinstance(parsed.packages[0].raw["wheels"], CanonicalWheels)
    pyproject = Pyproject.from_text('[project]\nname = "x"\nversion = "0"\n')

    def findings(of: Lock) -> list[tuple[str, str]]:
        return [(f.rule, f.message) for f in integrity.check(CheckInputs(Config(), pyproject, of)) if f.rule.startswith("lock-")]

    assert findings(kept) == findings(parsed)


def test_kept_blocks_copy_and_compare_as_lists() -> None:
    import copy
    import pickle

    data = parse_lock_text(lock(package("a", wheels("a", 3))), rtoml.loads)
    kept = data["package"][0]["wheels"]
    assert copy.deepcopy(data) == data and pickle.loads(pickle.dumps(data)) == data
    assert kept == list(kept) and list(kept) == kept and kept != list(kept)[:2] and len(kept) == 3
    assert kept[-1] == list(kept)[-1] and kept[:1] == list(kept)[:1]
    with pytest.raises(TypeError):
        hash(kept)


@pytest.mark.parametrize(
    "urls",
    [
        ["a-1.0-py3-none-any.whl"],  # no `/`: the name is not read from the text
        ["https://x.invalid/a-1.0-py3-none-any.whl", "b.whl"],
        ["https://x.invalid/p/a-1.0-py3-none-any.whl", "https://x.invalid/a-1.0-cp311-cp311-linux_x86_64.whl"],
    ],
)
def test_file_names_are_the_last_parts_of_the_urls(urls: list[str]) -> None:
    # an upload time that holds a `/` and a name of the package cannot lend it to a url without one
    lines = "".join(f'    {{ url = "{u}", hash = "{HASH}", size = 1, upload-time = "x/a-1.0-py3-none-any.whl" }},\n' for u in urls)
    data = parse_lock_text(lock(package("a", f"wheels = [\n{lines}]\n")), rtoml.loads)
    kept = data["package"][0]["wheels"]
    assert isinstance(kept, CanonicalWheels)
    names = kept.plain_file_names()
    if all("/" in u for u in urls):
        assert names == [u.rpartition("/")[2] for u in urls]
    else:
        assert names is None
