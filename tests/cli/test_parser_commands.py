"""Only the command a run names is registered with argparse (depsync/cli/parser.py)."""

from __future__ import annotations

import pytest

from depsync.cli.parser import COMMANDS, _named_command, parser


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["check"], "check"),
        (["-q", "--color", "never", "check", "."], "check"),
        (["--color=always", "merge-driver", "a"], "merge_driver"),
        (["chekc", "lock"], None),  # a typo: every command is there, so argparse lists them all
        (["--help"], None),
        ([], None),
        (["--color", "lock"], None),
    ],
)
def test_the_named_command_is_the_first_word_that_is_no_global_option(argv: list[str], named: str | None) -> None:
    assert _named_command(argv) == named


def test_a_run_that_names_a_command_builds_only_it_and_one_that_does_not_builds_all() -> None:
    def commands(argv: list[str] | None) -> set[str]:
        sub = next(a for a in parser(argv)._actions if a.dest == "command")
        return set(sub.choices)  # type: ignore[arg-type]

    assert commands(["check", "."]) == {"check"}
    every = {c.replace("_", "-") for c in COMMANDS} | set(COMMANDS)
    assert commands(None) <= every and len(commands(None)) >= len(COMMANDS)
    assert commands(["completion", "bash"]) == commands(None)


def test_a_typo_still_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from depsync.cli.parser import main

    with pytest.raises(SystemExit) as exited:
        main(["chekc", "lock"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized command 'chekc'" in err and "reconcile" in err and "check" in err
