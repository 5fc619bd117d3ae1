"""Every form in which a Docker build runs uv, and the environment uv reads its flags from.

Each test is a Dockerfile shaped like ones in public repositories (tests/corpus_dockerfiles/
keeps a few verbatim, README.md there says where each comes from). What uv does with a
flag was checked against uv 0.13.9 and 0.7.2: no `-E` option, `--extra a,b` is two
extras, UV_LOCKED/UV_FROZEN take clap's boolish values, `uv run --no-sync` checks no flag.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import LOCK, PYPROJECT, inputs

from depsync.core.findings import Finding, Severity
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.uv_commands import UvCommand
from depsync.core.rules import dockerfile as docker_rules

CORPUS = Path(__file__).parents[1] / "corpus_dockerfiles"


def commands(text: str, build_args: dict[str, str] | None = None) -> list[UvCommand]:
    return list(Dockerfile.from_text(text, "Dockerfile", build_args).uv_commands)


def findings(text: str, pyproject: str = PYPROJECT) -> list[Finding]:
    return sorted(docker_rules.check(inputs(pyproject, LOCK, (text,))), key=lambda f: (f.line, f.rule))


def summary(text: str, pyproject: str = PYPROJECT) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in findings(text, pyproject)]


def flags(command: UvCommand) -> list[str]:
    return [a.value for a in command.words]


# -- global options before the subcommand ------------------------------------------------------


def test_global_options_before_the_subcommand() -> None:
    text = (
        "FROM python:3.12-slim\n"
        "COPY --from=ghcr.io/astral-sh/uv:0.13.9 /uv /uvx /bin/\n"
        "WORKDIR /app\n"
        "RUN uv -q sync --locked --extra gpu\n"  # 4
        "RUN uv --directory /app --no-progress sync --locked --extra nope\n"  # 5
        "RUN uv --project=. --color never sync --frozen --group nope\n"  # 6
        "RUN uv --no-config --offline -qq sync --extra gpu\n"  # 7
        "RUN uv --cache-dir /tmp/uv -n pip install -r pyproject.toml --extra nope\n"  # 8
        "RUN uv --version && uv -V\n"  # 9: prints, installs nothing
    )
    found = commands(text)
    assert [(c.line, c.subcommand) for c in found] == [(4, "sync"), (5, "sync"), (6, "sync"), (7, "sync"), (8, "pip install")]
    assert flags(found[1]) == ["--locked", "--extra", "nope"]
    assert summary(text) == [(5, "docker-unknown-extra"), (6, "docker-unknown-group"), (7, "docker-not-locked"), (8, "docker-unknown-extra")]


# -- shell wrappers ------------------------------------------------------------------------------


def test_shell_c_scripts_are_read() -> None:
    text = (
        "FROM python:3.12\n"
        "ARG EXTRA=gpu\n"
        "RUN sh -c 'uv sync --locked --extra $EXTRA && uv sync --locked --extra nope'\n"  # 3
        'RUN bash -lc "uv sync --frozen --group nope"\n'  # 4
        'RUN /bin/bash -euo pipefail -c "echo hi; uv sync --locked --extra gpu"\n'  # 5
        "RUN busybox sh -c 'uv sync --extra gpu'\n"  # 6
        "RUN bash ./install.sh && sh -c \"uv sync --locked \\\n    --extra nope\"\n"  # 7-8
    )
    found = commands(text)
    assert [(c.line, c.subcommand) for c in found] == [(3, "sync"), (3, "sync"), (4, "sync"), (5, "sync"), (6, "sync"), (7, "sync")]
    assert flags(found[0]) == ["--locked", "--extra", "gpu"]  # the inner shell expands $EXTRA
    assert summary(text) == [
        (3, "docker-unknown-extra"),
        (4, "docker-unknown-group"),
        (6, "docker-not-locked"),
        (8, "docker-unknown-extra"),
    ]


def test_wrapper_programs_are_looked_through() -> None:
    text = (
        "FROM python:3.12\n"
        "RUN env UV_LOCKED=1 uv sync --extra gpu\n"  # 2: locked by the variable env sets
        "RUN nice -n 10 uv sync --locked --extra nope\n"  # 3
        "RUN nohup uv sync --locked --extra nope\n"  # 4
        "RUN time -p uv sync --locked --extra nope\n"  # 5
        "RUN exec uv sync --locked --extra nope\n"  # 6
        "RUN timeout -s KILL 600 uv sync --locked --extra nope\n"  # 7
        "RUN cat extras.txt | xargs -r uv pip install -r pyproject.toml --extra nope\n"  # 8
        "RUN command -v uv && command uv sync --locked --extra nope\n"  # 9
        "RUN sudo -u app uv sync --locked --extra nope\n"  # 10
        "RUN su app -c 'uv sync --frozen --extra nope'\n"  # 11
        "RUN stdbuf -oL ionice -c 3 uv sync --locked --extra nope\n"  # 12
    )
    found = commands(text)
    assert [c.line for c in found] == [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert summary(text) == [(line, "docker-unknown-extra") for line in range(3, 13)]


def test_sudo_resets_the_environment_unless_told_to_keep_it() -> None:
    text = (
        "FROM python:3.12\n"
        "ENV UV_LOCKED=1\n"
        "RUN sudo -u app uv sync\n"  # 3: sudo's env_reset drops UV_LOCKED
        "RUN sudo -E -u app uv sync\n"  # 4
        "RUN sudo UV_FROZEN=1 uv sync\n"  # 5
        "RUN env -i PATH=/usr/bin uv sync\n"  # 6: env -i clears it too
    )
    assert summary(text) == [(3, "docker-not-locked"), (6, "docker-not-locked")]


# -- exec form, ONBUILD, -E ----------------------------------------------------------------------


def test_exec_form() -> None:
    text = (
        "FROM ghcr.io/astral-sh/uv:python3.13-bookworm\n"
        "ARG EXTRA=gpu\n"
        'RUN ["uv", "sync", "--locked", "--extra", "gpu"]\n'  # 3
        'RUN ["/bin/sh", "-c", "uv sync --frozen --extra $EXTRA --group nope"]\n'  # 4: the shell expands
        'RUN ["uv", "sync", "--locked", "--extra", "$EXTRA"]\n'  # 5: no shell, so no expansion
        'RUN ["python3", "-m", "uv", "sync"]\n'  # 6
    )
    found = commands(text)
    assert [(c.line, c.exec_form) for c in found] == [(3, True), (4, False), (5, True), (6, True)]
    assert flags(found[1]) == ["--frozen", "--extra", "gpu", "--group", "nope"]
    result = findings(text)
    assert [(f.line, f.rule) for f in result] == [(4, "docker-unknown-group"), (5, "docker-unknown-extra"), (6, "docker-not-locked")]
    assert "exec form" in result[1].message and "'$EXTRA'" in result[1].message


def test_onbuild_run_sees_env_but_not_arg() -> None:
    text = (
        "FROM python:3.12 AS base\n"
        "ARG UV_LOCKED=1\n"
        "ONBUILD RUN uv sync --extra gpu\n"  # 3: the child build gets no ARG: not locked
        "ENV UV_FROZEN=1\n"
        "ONBUILD RUN uv sync --extra nope\n"  # 5
        'ONBUILD RUN ["uv", "sync", "--locked", "--group", "nope"]\n'  # 6
    )
    found = commands(text)
    assert [(c.line, c.onbuild) for c in found] == [(3, True), (5, True), (6, True)]
    result = findings(text)
    assert [(f.line, f.rule) for f in result] == [(3, "docker-not-locked"), (5, "docker-unknown-extra"), (6, "docker-unknown-group")]
    assert "(ONBUILD)" in result[0].message


def test_short_E_is_not_a_uv_option() -> None:
    # uv 0.13.9 and 0.7.2 both fail with "unexpected argument '-E' found"
    text = "FROM python:3.12\nRUN uv sync --locked -E gpu\nRUN uv sync --locked -Egpu\n"
    result = findings(text)
    assert [(f.line, f.rule, f.severity) for f in result] == [(2, "docker-unknown-extra", Severity.ERROR), (3, "docker-unknown-extra", Severity.ERROR)]
    assert "no -E option" in result[0].message and result[0].fix == "write `--extra gpu`"


def test_extras_are_comma_separated_and_no_extra_is_checked() -> None:
    text = "FROM python:3.12\nRUN uv sync --locked --extra gpu,nope --all-extras --no-extra other\n"
    assert [f.message.split(":")[0] for f in findings(text)] == ["`uv sync --extra nope`", "`uv sync --extra other`"]


# -- comment lines inside a continuation --------------------------------------------------------


def test_comment_lines_inside_a_continuation_are_dropped() -> None:
    # shaped like a public gradio app's Dockerfile: comments between the --mount flags
    text = (
        "FROM ghcr.io/astral-sh/uv AS uv\n"
        "FROM docker.io/python:3.13-bookworm AS python\n"
        "WORKDIR /app\n"
        "COPY . .\n"
        "RUN  \\\n"
        "\t# we use a cache --mount to reuse the uv cache across builds\n"
        "\t--mount=type=cache,target=/root/.cache/uv \\\n"
        "\t# we use a bind --mount to use the uv binary from the uv stage\n"
        "\t--mount=type=bind,from=uv,source=/uv,target=/uv \\\n"
        "\t/uv sync --no-dev --locked\n"  # 10
        "RUN uv sync \\\n"  # 11
        "    # the CI extras\n"
        "    --extra nope \\\n"  # 13
        "\n"
        "    --locked\n"
    )
    found = commands(text)
    assert [(c.line, flags(c)) for c in found] == [(10, ["--no-dev", "--locked"]), (11, ["--extra", "nope", "--locked"])]
    assert summary(text) == [(13, "docker-unknown-extra")]


def test_mount_flags_on_continuation_lines() -> None:
    # the layout of uv's own Docker guide: before, the whole command was missed
    text = (CORPUS / "uv-docker-example-multistage.Dockerfile").read_text()
    found = commands(text)
    assert [(c.line, c.stage, flags(c)) for c in found] == [
        (18, "builder", ["--frozen", "--no-install-project", "--no-dev"]),
        (21, "builder", ["--frozen", "--no-dev"]),
    ]


# -- heredocs --------------------------------------------------------------------------------------


def test_heredoc_forms() -> None:
    text = (
        "FROM python:3.12\n"
        "RUN --mount=type=cache,target=/root/.cache/uv \\\n"
        '    bash -ex <<"EOF"\n'
        "    uv sync --locked \\\n"  # 4: the body starts after the continued head line
        "        --extra nope\n"  # 5
        "EOF\n"
        "RUN <<EOF\n"
        "uv sync --locked --group nope\n"  # 8: a lone heredoc is the script
        "EOF\n"
        "RUN cat <<EOF > /etc/uv.toml && uv sync --locked --extra nope\n"  # 10: the head runs, the body is data
        "uv sync --extra data-only\n"
        "EOF\n"
        "RUN <<EOF\n"
        "#!/usr/bin/env python3\n"
        "print('uv sync --extra not-shell')\n"
        "EOF\n"
        "RUN <<EOF\n"
        "#!/bin/bash\n"
        "cat > /tmp/notes <<'EOT'\n"
        "uv sync --extra nested-data\n"
        "EOT\n"
        "uv sync --locked --extra gpu\n"  # 22
        "EOF\n"
    )
    found = commands(text)
    assert [(c.line, flags(c)) for c in found] == [
        (4, ["--locked", "--extra", "nope"]),
        (8, ["--locked", "--group", "nope"]),
        (10, ["--locked", "--extra", "nope"]),
        (22, ["--locked", "--extra", "gpu"]),
    ]
    assert summary(text) == [(5, "docker-unknown-extra"), (8, "docker-unknown-group"), (10, "docker-unknown-extra")]


# -- the environment variables uv reads --------------------------------------------------------


@pytest.mark.parametrize(
    "dockerfile, not_locked",
    [
        ("FROM python:3.12\nENV UV_FROZEN=1\nRUN uv sync --no-dev\n", False),
        ("FROM python:3.12\nENV UV_LOCKED=true UV_LINK_MODE=copy\nRUN uv sync\n", False),
        ("FROM python:3.12\nARG UV_LOCKED=1\nRUN uv sync\n", False),  # ARG values are in RUN's environment
        ("FROM python:3.12\nRUN UV_LOCKED=1 uv sync\n", False),
        ("FROM python:3.12\nRUN export UV_FROZEN=yes && uv sync\n", False),
        ("FROM python:3.12\nRUN <<EOF\nexport UV_LOCKED=on\nuv sync\nEOF\n", False),
        ("FROM python:3.12 AS base\nENV UV_FROZEN=1\nFROM base AS build\nRUN uv sync\n", False),  # ENV is inherited
        ("FROM python:3.12 AS base\nENV UV_FROZEN=1\nFROM python:3.12 AS other\nRUN uv sync\n", True),
        ("FROM python:3.12\nENV UV_LOCKED=0\nRUN uv sync\n", True),
        ("FROM python:3.12\nENV UV_LOCKED=false\nRUN uv sync\n", True),
        ("FROM python:3.12\nRUN UV_LOCKED=1 echo && uv sync\n", True),  # the assignment was echo's only
        ("FROM python:3.12\nRUN UV_LOCKED=1; uv sync\n", True),  # a shell variable, not exported
    ],
)
def test_uv_locked_and_frozen_from_the_environment(dockerfile: str, not_locked: bool) -> None:
    assert ("docker-not-locked" in [f.rule for f in findings(dockerfile)]) == not_locked


def test_real_uv_frozen_dockerfile_is_not_reported() -> None:
    text = (CORPUS / "tools-sync-action.Dockerfile").read_text()
    assert [(c.line, c.env_value("UV_FROZEN")) for c in commands(text)] == [(13, (True, "1")), (18, (True, "1"))]
    assert findings(text) == []


def test_undecided_lock_variable_is_unresolved_not_guessed() -> None:
    text = "FROM python:3.12\nARG UV_LOCKED\nRUN uv sync --extra gpu\n"
    (finding,) = findings(text)
    assert (finding.rule, finding.line, finding.severity) == ("docker-unresolved", 3, Severity.WARNING)
    assert "$UV_LOCKED" in finding.message
    assert findings(text.replace("ARG UV_LOCKED\n", "ARG UV_LOCKED\nENV UV_LOCKED=1\n")) == []
    assert Dockerfile.from_text(text, build_args={"UV_LOCKED": "1"}).uv_commands[0].env_value("UV_LOCKED") == (True, "1")


def test_other_variables_uv_reads() -> None:
    text = (
        "FROM python:3.12\n"
        "ENV UV_LOCKED=1 UV_NO_GROUP='test nope'\n"
        "RUN uv sync\n"  # 3: UV_NO_GROUP names a group pyproject lacks
        "ENV UV_NO_SYNC=1\n"
        "RUN uv run --extra nope pytest\n"  # 5: no sync, so uv checks no flag
        "RUN uv run --no-sync --group nope pytest\n"  # 6
    )
    assert summary(text) == [(3, "docker-unknown-group")]


def test_uv_run_options_end_at_its_command() -> None:
    text = "FROM python:3.12\nRUN uv run --locked --extra gpu -p 3.12 pytest --extra nope -E x\n"
    (command,) = commands(text)
    assert flags(command) == ["--locked", "--extra", "gpu", "-p", "3.12"]
    assert findings(text) == []


# -- what cannot be known is unresolved, never an unknown name ------------------------------------


def test_command_substitution_is_unresolved() -> None:
    text = (
        "FROM python:3.12\n"
        'RUN uv sync --locked --extra "$(cat /extras.txt)"\n'
        "RUN uv sync --locked --group `cat /group.txt`\n"
        'RUN uv sync --locked --extra "${EXTRAS%,*}"\n'
        "RUN uv sync --locked --extra '$(literal)'\n"  # single quotes: uv gets the text itself
    )
    result = findings(text)
    assert [(f.line, f.rule) for f in result] == [
        (2, "docker-unresolved"),
        (3, "docker-unresolved"),
        (4, "docker-unresolved"),
        (5, "docker-unknown-extra"),
    ]
    assert "$(cat /extras.txt)" in result[0].message and "command substitution" in result[0].message
    assert "`cat /group.txt`" in result[1].message
    assert "$EXTRAS" in result[2].message


def test_unresolved_values_of_options_depsync_does_not_check_are_not_reported() -> None:
    text = (CORPUS / "vllm-excerpt.Dockerfile").read_text()
    found = commands(text)
    assert [(c.line, c.subcommand) for c in found] == [(63, "pip install"), (66, "pip install"), (74, "pip install"), (92, "pip install")]
    index_url = found[0].flag_values("--index-url")[0]
    assert index_url.unresolved == ("$(echo $CUDA_VERSION | cut -d. -f1,2 | tr -d '.')",)
    assert findings(text) == []


# -- the real Dockerfiles kept in tests/corpus_dockerfiles ---------------------------------------


def test_corpus_exec_form_and_trailing_continuation() -> None:
    leafmine = commands((CORPUS / "leafmine-signature.Dockerfile").read_text())
    assert [(c.line, c.exec_form, flags(c)) for c in leafmine] == [(11, True, ["--locked"])]
    template = commands((CORPUS / "fastapi-project-template.Dockerfile").read_text())
    assert [(c.line, flags(c)) for c in template] == [(14, ["--frozen", "--no-install-project"]), (19, ["--frozen"])]


def test_corpus_pip_install_group_from_pyproject() -> None:
    text = (CORPUS / "base-python-project.Dockerfile").read_text()
    pyproject = PYPROJECT.replace("[dependency-groups]\ntest", "[dependency-groups]\ndev = []\ntest")
    assert findings(text, pyproject) == []
    assert summary(text) == [(12, "docker-unknown-group")]
    other_project = text.replace("--group dev", "--group services/api/pyproject.toml:dev")
    assert findings(other_project) == []  # another project's groups are not ours to check
    assert summary(text.replace("--group dev", "--group pyproject.toml:nope")) == [(12, "docker-unknown-group")]


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.Dockerfile")))
def test_corpus_parses_without_false_alarms(name: str) -> None:
    text = (CORPUS / name).read_text()
    pyproject = PYPROJECT.replace("[dependency-groups]\ntest", "[dependency-groups]\ndev = []\ntest")
    assert commands(text)
    assert [f for f in findings(text, pyproject) if f.severity == Severity.ERROR] == []


def test_hostile_wrapper_nesting_stays_bounded() -> None:
    # each of these would be quadratic, or recursive without end, if followed blindly
    env_split = "FROM b\nRUN env -S '" + "-S " * 20000 + "uv sync --locked'\n"
    assert len(env_split) < 70_000 and len(commands(env_split)) <= 1  # split once: the inner -S are options
    nested = "FROM b\nRUN " + "sh -c '" * 50 + "uv sync --locked" + "'" * 50 + "\n"
    assert commands(nested) == []  # deeper than MAX_WRAPPER_DEPTH: not followed
    shallow = "FROM b\nRUN sh -c \"bash -c 'uv sync --locked --extra gpu'\"\n"
    assert [flags(c) for c in commands(shallow)] == [["--locked", "--extra", "gpu"]]
    wrappers = "FROM b\nRUN " + "nice " * 10000 + "uv sync --locked\n"  # BuildKit reads lines up to 64 KiB
    assert [c.subcommand for c in commands(wrappers)] == ["sync"]
