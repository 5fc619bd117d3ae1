"""`depsync completion` on the command line: its options, and the request they make of the command."""

from __future__ import annotations

import argparse
from typing import Any

from depsync.cli.common import command, global_options

EPILOG = """\
install it where your shell looks for completions:
  depsync completion bash > ~/.local/share/bash-completion/completions/depsync
  depsync completion zsh > "${fpath[1]}/_depsync"
  depsync completion fish > ~/.config/fish/completions/depsync.fish

exit codes:
  0  printed
"""


def register(commands: Any) -> None:
    completion = command(commands, "completion", "print a completion script for bash, zsh or fish", "Print a completion script for the shell, generated from this command line.", EPILOG)
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), metavar="SHELL", help="bash, zsh or fish")
    global_options(completion, root=False)


def run(args: argparse.Namespace) -> int:
    from depsync.cli.parser import parser
    from depsync.commands import completion

    return completion.run(parser(), args.shell)
