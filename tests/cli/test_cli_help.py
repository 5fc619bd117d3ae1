"""The command line's conventions (uv's and ruff's): help with examples and exit codes, one
positional project path, hidden internals, -q/-v, --color with NO_COLOR/FORCE_COLOR, shell
completion tested in the real shells, and errors that suggest what was meant."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, write_files
from support import LOCK, PYPROJECT

from depsync.cli.parser import parser
from depsync.commands.completion import commands, script

VISIBLE = ["check", "reconcile", "lock", "diff", "install", "guard", "rule", "completion"]
PROJECT_COMMANDS = ["check", "reconcile", "lock", "install", "guard"]
ANSI = "\x1b["


def depsync(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment["COLUMNS"] = "100"
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "depsync", *args], capture_output=True, text=True, cwd=cwd, env=environment)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


# -- help ------------------------------------------------------------------------------------------


def test_bare_depsync_prints_help_on_stderr_and_exits_2() -> None:
    result = depsync()
    assert result.returncode == 2  # like uv: no command is a usage error
    assert result.stdout == ""
    assert result.stderr.startswith("usage: depsync ") and "commands:" in result.stderr


def test_top_level_help_lists_the_commands_but_not_the_internal_one() -> None:
    result = depsync("--help")
    assert result.returncode == 0
    listed = [line.split()[0] for line in result.stdout.split("commands:\n", 1)[1].split("\n\n")[0].splitlines()[1:]]
    assert listed == VISIBLE
    assert "merge-driver" not in result.stdout
    assert "exit codes" in result.stdout


@pytest.mark.parametrize("command", VISIBLE)
def test_every_command_has_examples_exit_codes_and_defaults(command: str) -> None:
    result = depsync(command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: depsync {command} ")
    assert "\nexit codes:\n  0  " in result.stdout
    assert "examples:\n" in result.stdout or "install it where your shell looks" in result.stdout
    for global_option in ("-q, --quiet", "-v, --verbose", "--color WHEN", "--debug"):
        assert global_option in result.stdout


def test_placeholders_and_help_texts_are_consistent() -> None:
    """Every option that takes a value shows an UPPER-CASE placeholder; every option says
    what it does; choice options name their default."""
    for name, sub in _subparsers().items():
        if name == "merge-driver":
            continue
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
                continue
            assert action.help, (name, action.dest)
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._CountAction):
                assert action.metavar and str(action.metavar) == str(action.metavar).upper(), (name, action.option_strings)
            if action.choices and action.option_strings:
                assert "default" in action.help, (name, action.option_strings)


@pytest.mark.parametrize("command", PROJECT_COMMANDS)
def test_the_project_path_is_positional(command: str) -> None:
    sub = _subparsers()[command]
    (path,) = [a for a in sub._actions if a.dest == "path"]
    assert not path.option_strings and path.nargs == "?" and path.metavar == "PATH"


def test_diff_keeps_dash_c_and_the_internal_driver_still_works() -> None:
    diff = _subparsers()["diff"]
    assert ["-C", "--project"] == next(a for a in diff._actions if a.dest == "path").option_strings
    driver = depsync("merge-driver", "--help")
    assert driver.returncode == 0 and "%O" in driver.stdout


def test_version() -> None:
    from depsync import __version__

    assert depsync("--version").stdout.strip() == depsync("-V").stdout.strip() == f"depsync {__version__}"


def test_near_miss_command_and_choice_suggest_the_right_one() -> None:
    result = depsync("chek")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "unrecognized command 'chek'" in line and "did you mean 'check'?" in line and "merge-driver" not in line
    fmt = depsync("check", "--format", "josn")
    assert fmt.returncode == 2 and "did you mean 'json'?" in fmt.stderr and len(fmt.stderr.strip().splitlines()) == 1


def test_output_format_is_an_alias_of_format(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    assert depsync("check", str(tmp_path), "--output-format", "json").stdout == depsync("check", str(tmp_path), "--format", "json").stdout


def test_global_options_before_or_after_the_command(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "sub/x": ""})
    before = depsync("-q", "check", cwd=tmp_path / "sub")
    after = depsync("check", "-q", cwd=tmp_path / "sub")
    assert before.returncode == after.returncode == 0
    assert before.stderr == after.stderr == ""  # -q: not even the project-root note
    loud = depsync("check", "-v", "--no-cache", str(tmp_path))
    assert f"project root: {tmp_path}" in loud.stderr and "checked: pyproject.toml, uv.lock" in loud.stderr


# -- colour ----------------------------------------------------------------------------------------


@pytest.fixture
def stale(tmp_path: Path) -> Path:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT.replace("alpha>=1", "alpha>=2"), "uv.lock": LOCK})
    return tmp_path


def test_color_flag_and_environment(stale: Path) -> None:
    plain = depsync("check", str(stale))  # a pipe: no colour
    assert ANSI not in plain.stdout and "lock-stale" in plain.stdout
    assert ANSI in depsync("check", str(stale), "--color", "always").stdout
    assert ANSI in depsync("check", str(stale), env={"FORCE_COLOR": "1"}).stdout
    # NO_COLOR wins over FORCE_COLOR; --color wins over both
    assert ANSI not in depsync("check", str(stale), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    assert ANSI not in depsync("--color", "never", "check", str(stale), env={"FORCE_COLOR": "1"}).stdout
    assert ANSI in depsync("--color", "always", "check", str(stale), env={"NO_COLOR": "1"}).stdout
    # machine formats never get colour
    assert ANSI not in depsync("check", str(stale), "--format", "json", "--color", "always").stdout


def test_color_in_the_diff_table(tmp_path: Path) -> None:
    write_files(tmp_path, {"old.lock": LOCK, "new.lock": LOCK.replace('version = "1.2"', 'version = "1.3"')})
    assert ANSI not in depsync("diff", "old.lock", "new.lock", cwd=tmp_path).stdout
    assert ANSI in depsync("diff", "old.lock", "new.lock", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout
    assert ANSI not in depsync("diff", "old.lock", "new.lock", "--color", "never", cwd=tmp_path, env={"FORCE_COLOR": "1"}).stdout


# -- a local runner without uv ---------------------------------------------------------------------


def test_local_runner_without_uv_says_what_to_do(tmp_path: Path) -> None:
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK})
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git"))  # git, but no uv on PATH
    result = depsync("lock", str(tmp_path), "--runner", "local", env={"PATH": str(bare)})
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("depsync: error: uv not found") and "--deep" not in result.stderr and "--runner docker" in line


# -- completion ------------------------------------------------------------------------------------


def test_completion_covers_every_visible_command_and_option() -> None:
    _, cmds = commands(parser())
    assert [c.name for c in cmds] == VISIBLE
    check = next(c for c in cmds if c.name == "check")
    flags = {f for o in check.options for f in o.flags}
    assert {"--fix", "--diff", "--format", "--output-format", "--strict", "--color", "-q"} <= flags
    for shell in ("bash", "zsh", "fish"):
        text = depsync("completion", shell).stdout
        assert text == script(parser(), shell)
        assert "merge-driver" not in text and "--fix" in text


def _bash_complete(script_path: Path, words: list[str], cwd: Path) -> list[str]:
    """What bash's programmable completion offers for the words (the last one is being typed)."""
    quoted = " ".join(shlex.quote(w) for w in words)
    program = (
        f"source {script_path}\n"
        f"COMP_WORDS=({quoted})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        "_depsync\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return sorted(line for line in result.stdout.splitlines() if line)


def test_bash_completion_in_bash(tmp_path: Path) -> None:
    path = tmp_path / "depsync.bash"
    path.write_text(depsync("completion", "bash").stdout)
    assert subprocess.run(["bash", "-n", str(path)]).returncode == 0
    (tmp_path / "proj").mkdir()
    assert _bash_complete(path, ["depsync", "ch"], tmp_path) == ["check"]
    assert _bash_complete(path, ["depsync", ""], tmp_path)[:3] == ["--color", "--debug", "--help"]
    assert _bash_complete(path, ["depsync", "check", "--format", ""], tmp_path) == ["github", "gitlab", "human", "json", "sarif"]
    assert _bash_complete(path, ["depsync", "-q", "check", "--fi"], tmp_path) == ["--fix"]
    assert _bash_complete(path, ["depsync", "rule", "docker-stale"], tmp_path) == ["docker-stale-no-install"]
    assert _bash_complete(path, ["depsync", "check", "pr"], tmp_path) == ["proj"]  # the project PATH: directories
    assert _bash_complete(path, ["depsync", "completion", ""], tmp_path) == ["bash", "fish", "zsh"]


ZSH_CAPTURE = r"""
# Drives an interactive zsh in a pseudo-terminal: types the words and TAB, and prints what
# the completion system offered (every compadd call is echoed). Input is sent only once the
# line editor shows its prompt, so no keystroke reaches the terminal before zle reads it.
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z "compadd() { builtin compadd -O __hits \"\$@\"; (( \${#__hits} )) && print -l -- '<hit>'\${^__hits}; builtin compadd \"\$@\" }"
zpty -w z "bindkey '^I' complete-word; PROMPT='<pro''mpt>'"
zpty -r z out '*<prompt>*'
zpty -n -w z "$2"$'\t'
zpty -w z $'\C-u'"print -- \"<do\"\"ne>\""
zpty -r z out '*<done>*'
print -r -- "$out" | tr -d '\r' | grep -o '<hit>[^ ]*' | sed 's/<hit>//' | sort -u
zpty -d z
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_completion_in_zsh(tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    functions.mkdir()
    (functions / "_depsync").write_text(depsync("completion", "zsh").stdout)
    assert subprocess.run(["zsh", "-n", str(functions / "_depsync")]).returncode == 0
    capture = tmp_path / "capture.zsh"
    capture.write_text(ZSH_CAPTURE)

    def offered(line: str) -> list[str]:
        result = subprocess.run(["zsh", "-f", str(capture), str(functions), line], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        return result.stdout.split()

    assert offered("depsync ") == sorted(VISIBLE)
    assert offered("depsync check --format ") == ["github", "gitlab", "human", "json", "sarif"]
    assert offered("depsync lock --run") == ["--runner"]
    assert offered("depsync rule docker-stale") == ["docker-stale-no-install"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (apt-get install fish)")
def test_fish_completion_in_fish(tmp_path: Path) -> None:
    path = tmp_path / "depsync.fish"
    path.write_text(depsync("completion", "fish").stdout)
    assert subprocess.run(["fish", "--no-config", "-n", str(path)]).returncode == 0

    def offered(line: str) -> list[str]:
        program = f"source {path}; complete -C {line!r}"
        result = subprocess.run(["fish", "--no-config", "-c", program], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        return sorted(entry.split("\t")[0] for entry in result.stdout.splitlines())

    assert offered("depsync ch") == ["check"]
    assert offered("depsync check --format ") == ["github", "gitlab", "human", "json", "sarif"]
    assert "--fix" in offered("depsync check --")
    assert offered("depsync rule docker-stale") == ["docker-stale-no-install"]
    assert "merge-driver" not in offered("depsync ")


def test_readme_quick_start_exists_in_the_repository() -> None:
    assert (REPO / "fixtures" / "megatron-dev" / "pyproject.toml").is_file()


# -- findings that teach ------------------------------------------------------------------------------


def test_one_fix_one_group_and_the_path_once(megatron_dev_project: Path) -> None:
    result = depsync("check", str(megatron_dev_project), "--no-cache")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert "docker/Dockerfile.ci.dev:42-44 warning docker-stale-no-install (2 findings, one fix)" in lines
    assert "docker/Dockerfile.ci.dev:45-56 error docker-no-install-renamed (12 findings, one fix)" in lines
    assert sum(1 for line in lines if "remove the flag" in line) == 1  # the fix once, not per flag
    assert sum(1 for line in lines if "docker/Dockerfile.ci.dev" in line) == 4  # lines 11 (the revision-3 lock), 33 and the two groups
    assert (
        "  line 49: --no-install-package nvidia-cudnn-cu12 keeps nothing out: the lock has 'nvidia-cudnn-cu13' instead, "
        "so the image installs it over what the base image ships; write `--no-install-package nvidia-cudnn-cu13`"
    ) in lines
    # the fix of a branch pin names the commit the lock resolved
    assert '  fix (`depsync check --fix`): pin rev = "b309e2f01cda75dc96a6dc1a2355a7b3b64b5e16"' in result.stdout
    assert lines[-1] == "depsync check: 12 error(s), 6 warning(s), 0 info; 16 fixable with `depsync check --fix`; checked 1 Dockerfile"  # no git: no note


def test_near_miss_extras_and_groups_are_named(megatron_dev_project: Path) -> None:
    dockerfile = megatron_dev_project / "docker" / "Dockerfile.ci.dev"
    text = dockerfile.read_text().replace("--extra mlm \\", "--extra mlmm \\").replace("--group no_pypi_wheels", "--group no-pypi-wheel")
    dockerfile.write_text(text)
    result = depsync("check", str(megatron_dev_project), "--format", "json")
    findings = {f["rule"]: f["message"] for f in json.loads(result.stdout)["findings"] if f["rule"].startswith("docker-unknown")}
    assert findings["docker-unknown-extra"].endswith("; did you mean 'mlm'?")
    assert findings["docker-unknown-group"].endswith("; did you mean 'no-pypi-wheels'?")
