"""Inline suppressions (depsync/core/suppression.py): where a comment counts, in pyproject.toml
and in Dockerfiles (placed by the real Dockerfile model, BuildKit's parser), and what is unused."""

from __future__ import annotations

from depsync.core.findings import Finding, Severity
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.rules.registry import RULES
from depsync.core.suppression import RULE, apply, toml_suppressions


def finding(file: str, line: int, rule: str) -> Finding:
    return Finding(file, line, rule, Severity.WARNING, "m", "f")


def covered(suppressions, file: str, line: int, rule: str) -> bool:  # type: ignore[no-untyped-def]
    return any(not s.misplaced and s.covers(finding(file, line, rule)) for s in suppressions)


PYPROJECT = '''[project]
name = "p"
dependencies = [
    "torch>=2.6",  # depsync: ignore[lock-stale]
    # depsync: ignore[source-inert, lock-stale]
    "numpy",
    "url # depsync: ignore[lock-stale]",
]
description = """
# depsync: ignore[lock-stale]
"""
x = 1 # depsync:ignore[ source-inert ]
# depsync: ignore[lock-stale]

y = 2
'''


def test_pyproject_trailing_and_whole_line_comments() -> None:
    found = toml_suppressions(PYPROJECT, "pyproject.toml")
    assert covered(found, "pyproject.toml", 4, "lock-stale") and not covered(found, "pyproject.toml", 4, "source-inert")
    assert covered(found, "pyproject.toml", 6, "source-inert") and covered(found, "pyproject.toml", 6, "lock-stale")
    assert not covered(found, "pyproject.toml", 7, "lock-stale")  # inside a string: not a comment
    assert not covered(found, "pyproject.toml", 10, "lock-stale") and not covered(found, "pyproject.toml", 11, "lock-stale")  # multi-line string
    assert covered(found, "pyproject.toml", 12, "source-inert")
    (blank,) = [s for s in found if s.line == 13]
    assert blank.misplaced and not covered(found, "pyproject.toml", 15, "lock-stale")  # a blank line breaks "directly above"
    assert not covered(found, "other.toml", 4, "lock-stale")


DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG UV_VERSION=0.7.2  # depsync: ignore[uv-lock-newer-than-pin]
FROM python:3.12
# depsync: ignore[docker-stale-no-install]
RUN --mount=type=cache,target=/root/.cache/uv \\
    bash -ex <<"EOF"
    uv sync --only-group build  # depsync: ignore[docker-not-locked]
    uv sync \\
        --locked \\
        # depsync: ignore[docker-unknown-extra]
        --extra nope \\
        --no-install-package gone
EOF
RUN uv sync \\
    # depsync: ignore[docker-unknown-group]
    --group nope \\
    --extra nope  # depsync: ignore[docker-unknown-extra]
RUN ["uv", "sync", "--extra", "nope"]
"""


def test_dockerfile_places() -> None:
    found = Dockerfile.from_text(DOCKERFILE, "Dockerfile").suppressions
    at = {s.line: s for s in found}
    assert at[2].misplaced  # after ARG Docker reads no comment: the text is part of the instruction
    # alone above the RUN: every line of the instruction, heredoc included
    assert all(covered(found, "Dockerfile", line, "docker-stale-no-install") for line in range(5, 14))
    assert not covered(found, "Dockerfile", 14, "docker-stale-no-install")
    assert covered(found, "Dockerfile", 7, "docker-not-locked")  # trailing a heredoc script line
    assert at[10].misplaced and "continuation" in at[10].misplaced  # bash would end the command there
    assert covered(found, "Dockerfile", 16, "docker-unknown-group")  # BuildKit drops comment lines in a continuation
    assert covered(found, "Dockerfile", 17, "docker-unknown-extra")  # trailing the last line of a shell-form RUN
    assert not covered(found, "Dockerfile", 18, "docker-unknown-extra")


def test_unused_unknown_and_misplaced_are_reported() -> None:
    found = Dockerfile.from_text(DOCKERFILE, "Dockerfile").suppressions
    findings = [finding("Dockerfile", 7, "docker-not-locked"), finding("Dockerfile", 2, "uv-lock-newer-than-pin"), finding("Dockerfile", 16, "docker-unknown-group")]
    kept, suppressed, unused = apply(findings, found, RULES)
    assert [(s.finding.line, s.comment_line) for s in suppressed] == [(7, 7), (16, 15)]
    assert kept == [findings[1]]  # the misplaced comment on line 2 silences nothing
    by_line = {f.line: f for f in unused}
    assert all(f.rule == RULE and f.severity == Severity.WARNING for f in unused)
    assert "Docker reads no trailing comment" in by_line[2].message and "line above" in by_line[2].fix
    assert "no docker-stale-no-install finding on lines 5-13" in by_line[4].message and by_line[4].fix == "remove the comment"
    assert "no docker-unknown-extra finding on line 17" in by_line[17].message


def test_hostile_ids_are_quoted_and_short() -> None:
    text = '[project]\nname = "p"  # depsync: ignore[\x1b[2J\x07' + "x" * 300 + ', lock-stal, $(touch pwned)]\n'
    _, _, unused = apply([], toml_suppressions(text, "pyproject.toml"), RULES)
    assert len(unused) == 3
    assert all("\x1b" not in f.message and "\x07" not in f.message and len(f.message) < 200 for f in unused)
    assert "'\\x1b[2J\\x07xxx" in unused[0].message  # escaped (repr) and cut
    assert "did you mean 'lock-stale'?" in unused[1].message and "'$(touch pwned)'" in unused[2].message
