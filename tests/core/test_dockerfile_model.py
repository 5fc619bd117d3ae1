"""Dockerfile model: BuildKit parsing, ARG/ENV scoping, uv commands with lines (pure)."""

import pytest

from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.shell import expand, split_commands
from depsync.errors import DepsyncError

HEREDOC = '''\
ARG UV_VERSION=0.7.2
FROM base AS main
ARG IMAGE_TYPE=dev
RUN --mount=type=cache,target=/root/.cache/uv bash -ex <<"EOF"
  uv sync --only-group build
  uv sync --extra ${IMAGE_TYPE} --extra mlm \\
     --locked --no-install-package torch
EOF
'''


def test_heredoc_commands_with_lines() -> None:
    dockerfile = Dockerfile.from_text(HEREDOC)
    first, second = dockerfile.uv_commands
    assert (first.subcommand, first.line, first.stage) == ("sync", 5, "main")
    assert [a.value for a in first.flag_values("--only-group")] == ["build"]
    assert [(a.value, a.line) for a in second.flag_values("--extra")] == [("dev", 6), ("mlm", 6)]
    assert [(a.value, a.line) for a in second.flag_values("--no-install-package")] == [("torch", 7)]
    assert second.has_flag("--locked")
    assert [(p.version, p.line) for p in dockerfile.uv_pins] == [("0.7.2", 1)]


def test_build_args_override_defaults() -> None:
    dockerfile = Dockerfile.from_text(HEREDOC, build_args={"IMAGE_TYPE": "lts"})
    assert [a.value for a in dockerfile.uv_commands[1].flag_values("--extra")] == ["lts", "mlm"]


def test_global_arg_needs_redeclaring_in_stage() -> None:
    text = "ARG KIND=dev\nFROM base\nRUN uv sync --locked --extra ${KIND}\nARG KIND\nRUN uv sync --locked --extra ${KIND}\n"
    first, second = Dockerfile.from_text(text).uv_commands
    assert first.flag_values("--extra")[0].unresolved == ("KIND",)
    assert second.flag_values("--extra")[0].value == "dev"


def test_plain_run_with_continuations_and_equals_form() -> None:
    text = "FROM base\nENV UV_FROZEN=1\nRUN apt-get update && \\\n    uv sync --extra=te \\\n      --group=ci\n"
    (command,) = Dockerfile.from_text(text).uv_commands
    assert [(a.value, a.line) for a in command.flag_values("--extra")] == [("te", 4)]
    assert [(a.value, a.line) for a in command.flag_values("--group")] == [("ci", 5)]


def test_script_variable_assigned_twice_is_unresolved() -> None:
    text = (
        'FROM base\nARG IMAGE_TYPE=dev\nRUN <<"EOF"\n'
        'if [[ $IMAGE_TYPE == lts ]]; then G=""; else G="--group no_pypi_wheels"; fi\n'
        "uv sync --locked --extra ${IMAGE_TYPE} ${G}\nEOF\n"
    )
    (command,) = Dockerfile.from_text(text).uv_commands
    assert [a.value for a in command.unresolved()] == ["${G}"]


def test_script_variable_assigned_once_expands_to_words() -> None:
    text = 'FROM base\nRUN <<"EOF"\nG="--group docs"\nuv sync --locked ${G}\nEOF\n'
    (command,) = Dockerfile.from_text(text).uv_commands
    assert [a.value for a in command.flag_values("--group")] == ["docs"]


def test_uv_pip_install_and_python_m_uv() -> None:
    text = "FROM base\nRUN python -m uv pip install -r pyproject.toml --extra dev\nRUN pip install uv==0.6.1\n"
    dockerfile = Dockerfile.from_text(text)
    assert [c.subcommand for c in dockerfile.uv_commands] == ["pip install"]
    assert [p.version for p in dockerfile.uv_pins] == ["0.6.1"]


def test_uv_image_pin() -> None:
    text = "FROM python:3.12\nCOPY --from=ghcr.io/astral-sh/uv:0.5.4 /uv /bin/uv\n"
    assert [p.version for p in Dockerfile.from_text(text).uv_pins] == ["0.5.4"]


def test_syntax_error_is_depsync_error() -> None:
    with pytest.raises(DepsyncError, match="does not parse"):
        Dockerfile.from_text("FROM base\nRUN <<EOF\nuv sync\n", "docker/Dockerfile")


def test_shell_split_and_expand() -> None:
    commands = split_commands("a 'b c' && d # comment\ne \"$X\"", 3)
    assert [[w.text for w in c] for c in commands] == [["a", "b c"], ["d"], ["e", "$X"]]
    assert commands[2][0].line == 4
    assert expand("${A:-x}${B}", {"B": "y"}) == ("xy", [])
    assert expand("$C", {"C": None}) == ("$C", ["C"])


def test_escape_directive_backtick_continuations() -> None:
    text = "# escape=`\nFROM base\nRUN uv sync `\n    --locked `\n    --extra dev\n"
    (command,) = Dockerfile.from_text(text).uv_commands
    assert [(a.value, a.line) for a in command.flag_values("--extra")] == [("dev", 5)]


def test_env_with_several_pairs_and_quotes() -> None:
    text = 'FROM base\nENV EXTRA=gpu GROUP="test"\nENV LEGACY value\nRUN uv sync --locked --extra $EXTRA --group ${GROUP} --extra $LEGACY\n'
    (command,) = Dockerfile.from_text(text).uv_commands
    assert [a.value for a in command.flag_values("--extra", "--group")] == ["gpu", "test", "value"]
