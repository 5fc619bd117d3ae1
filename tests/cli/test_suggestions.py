"""Mistyped options and commands name what was meant, as uv and ruff do: on every command and
the top-level parser, one line, exit 2 (argparse suggests only from Python 3.14)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from depsync.cli.common import closest_option
from depsync.cli.parser import main, parser

REQUIRED = {"completion": ["bash"]}  # positionals argparse asks for before it looks at the rest


def _commands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name: sub for name, sub in action.choices.items() if name != "merge-driver"}


def _long_options(command: argparse.ArgumentParser) -> list[str]:
    return [o for a in command._actions if a.help != argparse.SUPPRESS for o in a.option_strings if o.startswith("--")]


def _transposed(option: str) -> str:
    """`--strict` -> `--stirct`: two letters in the middle of the name swapped (a common typo)."""
    name = option[2:]
    middle = next(i for i in range(len(name) // 2, len(name) - 1) if name[i] != name[i + 1] and "-" not in name[i : i + 2])
    return "--" + name[:middle] + name[middle + 1] + name[middle] + name[middle + 2 :]


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_the_example_from_the_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    assert error_of(["check", "--stirct"], capsys) == "depsync: error: unrecognized argument '--stirct' (did you mean '--strict'?) (see depsync check --help)"


def test_every_option_of_every_command_mistyped_is_suggested_back(capsys: pytest.CaptureFixture[str]) -> None:
    tried = 0
    for name, command in _commands().items():
        for option in _long_options(command):
            if len(option) < 7:  # `--diff`: too short to mistype without becoming another option
                continue
            typo = _transposed(option)
            line = error_of([name, *REQUIRED.get(name, []), typo], capsys)
            assert f"unrecognized argument {typo!r} (did you mean {option!r}?)" in line, (name, option, line)
            assert f"(see depsync {name} --help)" in line
            tried += 1
    assert tried > 40  # every command's options, not a handful


def test_the_top_level_and_several_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unrecognized argument '--verison' (did you mean '--version'?)" in error_of(["--verison"], capsys)
    assert "'--stirct' (did you mean '--strict'?)" in error_of(["--stirct", "check"], capsys)  # before the command: its options too
    line = error_of(["check", "--deeep", "--no_cache", "path", "extra-path"], capsys)
    assert "unrecognized arguments '--deeep' (did you mean '--deep'?), '--no_cache' (did you mean '--no-cache'?), 'extra-path'" in line


def test_nothing_close_is_no_guess() -> None:
    options = ["--strict", "--deep", "--format"]
    assert closest_option("--xyzzy", options) is None
    assert closest_option("-s", options) is None  # a short option: too little to go on
    assert closest_option("value", options) is None  # a positional
    assert closest_option("--strikt=1", options) == "--strict"
    assert closest_option("-strict", options) == "--strict"


def test_a_mistyped_command_and_choice(capsys: pytest.CaptureFixture[str]) -> None:
    line = error_of(["chek"], capsys)
    assert line.startswith("depsync: error: unrecognized command 'chek' (did you mean 'check'?); commands: check, reconcile, ")
    assert "merge-driver" not in line  # internal, never offered
    assert "invalid choice: 'jsn' (did you mean 'json'?); choose from human, json," in error_of(["check", "--format", "jsn"], capsys)
    assert "invalid choice: 'bsh' (did you mean 'bash'?)" in error_of(["completion", "bsh"], capsys)


def test_the_installed_command_says_it_too() -> None:
    result = subprocess.run([sys.executable, "-m", "depsync", "lock", "--upgrade-pakage", "torch"], capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "depsync: error: unrecognized argument '--upgrade-pakage' (did you mean '--upgrade-package'?) (see depsync lock --help)\n"


def test_both_wordings_of_argparse_choices(capsys: pytest.CaptureFixture[str]) -> None:
    """Choices are quoted in argparse's message up to Python 3.13 and bare from 3.14: the same line from both."""
    from depsync.cli.common import Parser

    lines = []
    for choices in ("'check', 'lock', 'merge-driver'", "check, lock, merge-driver"):
        with pytest.raises(SystemExit):
            Parser(prog="depsync").error(f"argument COMMAND: invalid choice: 'lokc' (choose from {choices})")
        lines.append(capsys.readouterr().err)
    assert lines[0] == lines[1] == "depsync: error: unrecognized command 'lokc' (did you mean 'lock'?); commands: check, lock (see depsync --help)\n"
