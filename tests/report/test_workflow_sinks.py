"""The text the sync workflow's steps write where main's path names reach: the merge commit's
message (report/commit_message.py) and the job log (markdown.log_line, log_text). Pure."""

from __future__ import annotations

import io
import os
import subprocess

from hypothesis import given
from hypothesis import strategies as st

from depsync.core.redact import RedactingStream
from depsync.report.commit_message import LISTED_AT_MOST, quoted, sync_message
from depsync.report.markdown import log_line, log_text, without_legacy_commands

SKIP_MARKERS = ("[skip ci]", "[ci skip]", "[no ci]", "[skip actions]", "[actions skip]", "***no_ci***", "[skip azp]", "[skip travis]")


def is_command(line: str) -> bool:
    """What GitHub's runner reads as a workflow command: `::` first after leading whitespace, or `##[` anywhere."""
    return line.lstrip().startswith("::") or "##[" in line


def test_the_message_counts_and_quotes_the_names() -> None:
    message = sync_message("main", "dev", ["app.py", "ci [skip ci]/a.py", "x\nCo-authored-by: M <m@example.invalid>", os.fsdecode(b"caf\xe9.py")])
    assert message == (
        "Sync main into dev\n\nCommitted with conflict markers, for the resolver (4):\n"
        '\t"app.py"\n\t"ci \\[skip ci\\]/a.py"\n\t"x\\nCo-authored-by: M <m@example.invalid>"\n\t"caf\\xe9.py"\n'
    )
    assert sync_message("main", "dev", []) == "Sync main into dev\n"


def test_a_long_list_is_cut_with_the_count_kept() -> None:
    message = sync_message("main", "dev", [f"f{i}.py" for i in range(LISTED_AT_MOST + 7)])
    assert f"resolver ({LISTED_AT_MOST + 7}):" in message and "\tand 7 more" in message
    assert message.count('\t"') == LISTED_AT_MOST


@given(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6))
def test_no_name_makes_a_marker_a_line_or_a_trailer(names: list[str]) -> None:
    message = sync_message("main", "dev", names)
    lowered = message.lower()
    assert not any(marker in lowered for marker in SKIP_MARKERS) and "***" not in message
    body = message.splitlines()[3:]
    assert len(body) == len(names) and all(line.startswith('\t"') and line.endswith('"') for line in body)
    assert all(line[1:].isprintable() for line in body)  # the tab first, nothing invisible after it
    message.encode("utf-8")  # surrogates from undecodable bytes are escapes, not errors


def test_git_reads_no_trailer_from_a_hostile_name() -> None:
    message = sync_message("main", "dev", ["a\n\nCo-authored-by: Mallory <m@example.invalid>", "Signed-off-by: x <x@example.invalid>", "skip-checks: true"])
    parsed = subprocess.run(["git", "interpret-trailers", "--parse"], input=message, capture_output=True, text=True, check=True)
    assert parsed.stdout == ""


def test_quoting_is_reversible_enough_to_read() -> None:
    assert quoted('a"b\\c') == '"a\\"b\\\\c"' and quoted("r\u202eev") == '"r\\u202eev"' and quoted("***NO_CI***") == '"\\*\\*\\*NO_CI\\*\\*\\*"'


def test_a_log_line_is_never_a_workflow_command() -> None:
    assert log_line("::error::pwned") == ": :error::pwned"
    assert log_line("  \t::stop-commands::tok") == "  \t: :stop-commands::tok"  # the runner trims leading whitespace first
    assert log_line("CONFLICT (add/add): Merge conflict in a ##[error]x.py") == "CONFLICT (add/add): Merge conflict in a ## [error]x.py"
    assert log_line("\x1b[31mred\x1b[0m ok") == "[31mred[0m ok"
    assert log_text("fine\n\r::warning::x\n::notice::y\u2028::error::z\n") == "fine\n\n: :warning::x\n: :notice::y\n: :error::z\n"


@given(st.text(max_size=60))
def test_no_text_becomes_a_command_in_the_log(text: str) -> None:
    assert not any(is_command(line) for line in log_text(text).split("\n"))
    assert not is_command(log_line(text))


def test_the_cli_streams_break_the_older_form_across_writes() -> None:
    sink = io.StringIO()
    stream = RedactingStream(sink, inert=without_legacy_commands)  # type: ignore[arg-type]
    stream.write("name #")
    stream.write("#[stop-commands]tok\n")
    stream.write("tail ##[error]")
    stream.flush()
    assert sink.getvalue() == "name ## [stop-commands]tok\ntail ## [error]"
