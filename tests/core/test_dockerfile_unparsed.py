"""A discovered Dockerfile that does not parse (pure part): which breaks BuildKit's parser
rejects, what the raw text of such a file shows (dockerfile_discovery.scan_text), and the
docker-unparsed finding. Real inputs: the bundled Megatron dev CI Dockerfile and the public
Dockerfiles of tests/corpus_dockerfiles, broken the way people break them."""

from __future__ import annotations

from pathlib import Path

import dockerfile as buildkit
import pytest
from conftest import BUNDLED
from hypothesis import given, settings
from hypothesis import strategies as st
from support import LOCK, PYPROJECT, inputs

from depsync.core import limits
from depsync.core.config import load_config
from depsync.core.dockerfile_discovery import (
    NotParsed,
    decide,
    not_parsed,
    runs_uv_on_project,
    scan_text,
)
from depsync.core.findings import Severity
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.rules.run import run_rules
from depsync.errors import DepsyncError
from depsync.records import replace

DEV = (BUNDLED / "megatron-dev" / "docker" / "Dockerfile.ci.dev").read_text()
CORPUS = sorted((Path(__file__).parents[1] / "corpus_dockerfiles").glob("*.Dockerfile"))
UV_SYNC_LINE = 33  # `uv sync --only-group build`, in the heredoc of the RUN at line 28
UV_RUN_LINE = 28


def _last_eof_dropped(text: str) -> str:
    head, _, tail = text.rpartition("\nEOF\n")
    return head + "\n" + tail


BREAKS = {
    # the closing line of the `uv sync` heredoc forgotten, or indented with the body
    "heredoc never closed": (_last_eof_dropped(DEV), "unterminated heredoc"),
    "heredoc terminator indented": (DEV.replace("\nEOF\n\nENV PYTHONPATH", "\n    EOF\n\nENV PYTHONPATH"), "unterminated heredoc"),
    "ENV without a value": (DEV.replace("ENV UV_LINK_MODE=copy", "ENV UV_LINK_MODE"), "ENV must have two arguments"),
    # BuildKit's parser takes these (docker build fails later, or not at all): depsync checks the file
    "misspelled instruction": (DEV.replace("COPY README.md", "COPPY README.md"), None),
    "stray continuation at EOF": (DEV + "RUN echo done \\\n", None),
    "conflict markers": (DEV.replace("ARG IMAGE_TYPE=dev", "<<<<<<< HEAD\nARG IMAGE_TYPE=dev\n=======\nARG IMAGE_TYPE=lts\n>>>>>>> main"), None),
}


@pytest.mark.parametrize("name", BREAKS)
def test_which_breaks_buildkits_parser_rejects(name: str) -> None:
    text, error = BREAKS[name]
    if error is None:
        buildkit.parse_string(text)
        return
    with pytest.raises(buildkit.GoParseError, match=error):
        buildkit.parse_string(text)


# -- the raw text ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [*CORPUS, BUNDLED / "megatron-dev" / "docker" / "Dockerfile.ci.dev"], ids=lambda p: p.name)
def test_the_text_scan_agrees_with_the_parsed_model_on_real_files(path: Path) -> None:
    text = path.read_text()
    model = Dockerfile.from_text(text, path.name)
    scan = scan_text(text)
    assert bool(scan.uv) == runs_uv_on_project(model) and scan.open_heredoc == 0
    project_lines = {c.line for c in model.uv_commands if c.subcommand in ("sync", "lock", "export", "run")}
    assert project_lines <= {line for line, _ in scan.uv}


def test_the_text_scan_of_a_broken_real_file() -> None:
    scan = scan_text(_last_eof_dropped(DEV))
    assert scan.uv == ((UV_SYNC_LINE, "uv sync"), (35, "uv sync")) and scan.open_heredoc == UV_RUN_LINE


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("RUN pip install uv && \\\n  # a comment line BuildKit drops\n  uv -q --directory src \\\n   sync --locked\n", [(3, "uv sync")]),
        ('RUN ["uv", "pip", "install", "-e", "."]\n', [(1, "uv pip install")]),
        ("RUN /root/.local/bin/uv export -o requirements.txt\n", [(1, "uv export")]),
        ("ONBUILD RUN uv lock --check\n", [(1, "uv lock")]),
        ("RUN uv pip install -r pyproject.toml --group dev\n", [(1, "uv pip install")]),
        ("RUN <<-EOF\n\tset -e\n\t# uv sync in a comment\n\tuv run pytest\n\tEOF\nRUN uv sync\n", [(4, "uv run"), (6, "uv sync")]),
        ("# escape=`\nFROM x\nRUN uv `\n    sync\n", [(3, "uv sync")]),
        # not the project, not run by the build, or not uv
        ("RUN uv pip install --system ruff\n", []),
        ("RUN uv tool run ruff check\n", []),
        ("RUN uv --version && uv venv\n", []),
        ("CMD uv run app\n# RUN uv sync\n", []),
        ("COPY <<EOF /app/setup.sh\nuv sync --locked\nEOF\n", []),
        ("RUN cat <<< 'uv' > /x\nENV A=sync\n", []),
        ("RUN pip install uv==0.7.2 uvicorn\n", []),
    ],
)
def test_what_the_text_of_a_run_shows(text: str, expected: list[tuple[int, str]]) -> None:
    assert list(scan_text(text).uv) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["RUN ", "uv ", "sync", " \\", "\n", "<<EOF", "EOF", "<<-X", "\tX", "# c", '"', "[", ",", "pip install .", "COPY "]), max_size=40))
def test_the_text_scan_takes_any_text(parts: list[str]) -> None:
    text = "".join(parts)
    scan = scan_text(text)
    lines = len(text.splitlines())
    assert all(1 <= line <= lines for line, _ in scan.uv) and 0 <= scan.open_heredoc <= lines


# -- the errors, and the decision --------------------------------------------------------------------


def _refused(text: str) -> DepsyncError:
    with pytest.raises(DepsyncError) as raised:
        Dockerfile.from_text(text, "docker/Dockerfile.ci")
    return raised.value


def test_a_syntax_error_and_depsyncs_bounds_are_told_apart() -> None:
    syntax = not_parsed(_last_eof_dropped(DEV), _refused(_last_eof_dropped(DEV)))
    assert (syntax.bound, syntax.line, syntax.reason) == (False, 0, "not read: Dockerfile does not parse: unterminated heredoc")
    oversized = DEV + "".join(f'LABEL org.example.l{i}="{"x" * 100}"\n' for i in range(limits.MAX_DOCKERFILE_BYTES // 100))
    size = not_parsed(oversized, _refused(oversized))
    assert size.bound and size.line == 0 and f"at most {limits.MAX_DOCKERFILE_BYTES} bytes" in size.reason
    nested = "FROM python\nARG A=1\n\nRUN uv sync --locked --extra " + "${A:-" * 20 + "x" + "}" * 20 + "\n"
    nesting = not_parsed(nested, _refused(nested))
    assert nesting.bound and nesting.line == 4
    no_image = "FROM\nRUN uv sync --locked\n"
    builder = not_parsed(no_image, _refused(no_image))
    assert (builder.bound, builder.line) == (False, 1)


def test_decide_reports_only_a_broken_file_that_runs_uv_on_the_project() -> None:
    broken = not_parsed(_last_eof_dropped(DEV), _refused(_last_eof_dropped(DEV)))
    docs_text = "FROM python:3.12\nRUN <<EOF\npip install mkdocs\n"
    docs = not_parsed(docs_text, _refused(docs_text))
    lint_text = "FROM python:3.12\nRUN <<EOF\nuv pip install --system ruff\n"
    lint = not_parsed(lint_text, _refused(lint_text))
    found = decide(("docker/Dockerfile.ci.dev", "docker/Dockerfile.docs", "docker/Dockerfile.lint"), (),
                   {"docker/Dockerfile.ci.dev": broken, "docker/Dockerfile.docs": docs, "docker/Dockerfile.lint": lint})
    assert found.checked == ()
    # every one stays listed (`check -v`), with the reason as before
    assert dict(found.skipped) == {p: "not read: Dockerfile does not parse: unterminated heredoc" for p in
                                   ("docker/Dockerfile.ci.dev", "docker/Dockerfile.docs", "docker/Dockerfile.lint")}
    (item,) = found.unparsed
    assert (item.path, item.line, item.line_is, item.uv_command, item.uv_line, item.bound) == (
        "docker/Dockerfile.ci.dev", UV_RUN_LINE, "heredoc", "uv sync", UV_SYNC_LINE, False)


def _findings(item: NotParsed, path: str = "docker/Dockerfile.ci.dev", severity: str = ""):  # type: ignore[no-untyped-def]
    loaded = inputs(PYPROJECT, LOCK, config=load_config({"severity": {"docker-unparsed": severity}}) if severity else None)
    found = decide((path,), (), {path: item})
    return [f for f in run_rules(replace(loaded, dockerfiles_unparsed=found.unparsed)) if f.rule == "docker-unparsed"]


def test_the_finding_names_file_line_error_and_fix() -> None:
    text = _last_eof_dropped(DEV)
    (finding,) = _findings(not_parsed(text, _refused(text)))
    assert (finding.file, finding.line, finding.severity) == ("docker/Dockerfile.ci.dev", UV_RUN_LINE, Severity.ERROR)
    assert finding.message == (
        f"runs `uv sync` (line {UV_SYNC_LINE}) but does not parse (unterminated heredoc; line {UV_RUN_LINE} opens a heredoc "
        "that never ends), so nothing in it was checked"
    )
    assert finding.fix == "fix the syntax (docker build fails on it too), or list the Dockerfiles to check in [tool.depsync] dockerfiles"
    env = DEV.replace("ENV UV_LINK_MODE=copy", "ENV UV_LINK_MODE")
    (no_line,) = _findings(not_parsed(env, _refused(env)))
    assert no_line.line == UV_SYNC_LINE and "(ENV must have two arguments; the error names no line)" in no_line.message


def test_past_a_bound_the_finding_says_so_and_raises_nothing() -> None:
    nested = "FROM python\nARG A=1\n\nRUN uv sync --locked --extra " + "${A:-" * 20 + "x" + "}" * 20 + "\n"
    (finding,) = _findings(not_parsed(nested, _refused(nested)))
    assert finding.line == 4 and "is past depsync's bounds (the Dockerfile nests `${...}` more than 16 deep" in finding.message
    assert finding.fix.startswith("simplify or split the Dockerfile (depsync's bounds are fixed)")


def test_its_severity_is_configurable() -> None:
    text = _last_eof_dropped(DEV)
    assert [f.severity for f in _findings(not_parsed(text, _refused(text)), severity="warning")] == [Severity.WARNING]
    assert _findings(not_parsed(text, _refused(text)), severity="off") == []


def test_a_long_parser_error_is_clipped_in_the_finding() -> None:
    text = "FROM python\nENV a=b " + "x" * 5000 + "\nRUN uv sync --locked\n"
    item = not_parsed(text, _refused(text))
    assert len(item.reason) > 5000  # `check -v` keeps it whole
    (finding,) = _findings(item)
    assert len(finding.message) < 500 and "characters; `check -v` shows all" in finding.message


def test_past_the_scan_cap_the_rest_of_a_huge_file_is_not_read() -> None:
    """The stated fallback of limits.MAX_TEXT_SCAN_CHARS: a uv command only past it is no finding;
    the file is still listed (`check -v`) with the size bound."""
    padding = "".join(f'LABEL org.example.l{i}="{"x" * 100}"\n' for i in range(limits.MAX_TEXT_SCAN_CHARS // 100))
    late = "FROM python\n" + padding + "RUN uv sync --locked\n"
    item = not_parsed(late, _refused(late))
    assert item.bound and item.scan.uv == ()
    found = decide(("Dockerfile",), (), {"Dockerfile": item})
    assert found.unparsed == () and found.skipped[0][1].startswith("not read: the Dockerfile is ")
    early = "FROM python\nRUN uv sync --locked\n" + padding
    assert [f.line for f in _findings(not_parsed(early, _refused(early)), path="Dockerfile")] == [2]
