"""Small hostile inputs must not hang `depsync check`: expansion, marker and size caps.

The CLI tests use a generous subprocess timeout as the hang detector (before the caps,
both inputs ran for minutes); they assert what is reported, never how fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_files
from support import LOCK, PYPROJECT, inputs

from depsync.core import limits
from depsync.core.model import markers
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.model.markers import is_never, markers_equivalent
from depsync.core.model.shell import ExpansionBudget, expand, expand_bounded
from depsync.core.rules.run import run_rules
from depsync.errors import DepsyncError

HANG = 60  # seconds: far beyond any bounded run, far below the minutes the unbounded code took


def check_json(project: Path, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-m", "depsync", "check", str(project), "--format", "json", *args],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


def doubling(instruction: str, count: int = 23) -> str:
    """`ARG A0=xx`, `ARG A1=${A0}${A0}`, ...: the last value would be 2**count bytes."""
    lines = [f"{instruction} A0=xx"] + [f"{instruction} A{i}=${{A{i - 1}}}${{A{i - 1}}}" for i in range(1, count)]
    return "\n".join(lines) + "\n"


# -- the two hostile inputs, end to end -------------------------------------------------------


def test_doubling_args_dockerfile_is_reported_unresolved(tmp_path: Path) -> None:
    dockerfile = "FROM python:3.12\n" + doubling("ARG") + "RUN uv sync --locked --extra ${A22}\n"
    assert len(dockerfile.encode()) < 600
    write_files(tmp_path, {"pyproject.toml": PYPROJECT, "uv.lock": LOCK, "docker/Dockerfile.ci.dev": dockerfile})
    document = check_json(tmp_path)
    (finding,) = [f for f in document["findings"] if f["rule"] == "docker-unresolved"]
    assert finding["line"] == 25 and "$A22" in finding["message"] and "64 KiB" in finding["message"]
    assert len(finding["message"]) < 500  # the value as written, not megabytes of it
    assert not [f for f in document["findings"] if f["rule"] == "docker-unknown-extra"]  # never guessed


def _or_chain(i: int, size: int, reverse: bool) -> str:
    terms = [f"python_full_version == '3.{k}.{i % 7}'" for k in range(8)]
    terms += [f"platform_machine == 'm{i}x{k}'" for k in range(size)] + [f"os_name == 'o{i}x{k}'" for k in range(size)]
    return " or ".join(reversed(terms) if reverse else terms)


def marker_bomb(count: int, size: int) -> tuple[str, str]:
    """count requirements of one name with long `or` chains; the lock has each chain reversed
    (equivalent: every comparison is decided by meaning; enumerating environments took minutes)."""
    deps = ",\n    ".join(f'"alpha>=1; {_or_chain(i, size, False)}"' for i in range(count))
    pyproject = PYPROJECT.replace('dependencies = ["alpha>=1"]', f"dependencies = [\n    {deps},\n]")
    recorded = "\n".join(f'    {{ name = "alpha", specifier = ">=1", marker = "{_or_chain(i, size, True)}" }},' for i in range(count))
    return pyproject, LOCK.replace('    { name = "alpha", specifier = ">=1" },', recorded)


def test_marker_bomb_pyproject_is_compared_by_meaning(tmp_path: Path) -> None:
    pyproject, lock = marker_bomb(count=200, size=12)
    write_files(tmp_path, {"pyproject.toml": pyproject, "uv.lock": lock})
    document = check_json(tmp_path, "--static")
    assert not [f for f in document["findings"] if f["rule"] == "lock-stale"]  # equivalent, so fresh


def test_marker_past_a_cap_is_one_line_and_exit_2(tmp_path: Path) -> None:
    huge = " or ".join(f"platform_machine == 'm{i}'" for i in range(limits.MAX_MARKER_TERMS + 1))
    write_files(tmp_path, {"pyproject.toml": PYPROJECT.replace('"alpha>=1"', f'"alpha>=1; {huge}"'), "uv.lock": LOCK})
    result = subprocess.run([sys.executable, "-m", "depsync", "check", str(tmp_path), "--static"], capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"depsync reads at most {limits.MAX_MARKER_TERMS}" in result.stderr and len(result.stderr.strip().splitlines()) == 1


# -- expansion caps (model) --------------------------------------------------------------------


@pytest.mark.parametrize("instruction", ["ARG", "ENV"])
def test_doubling_values_are_capped_in_either_instruction(instruction: str) -> None:
    text = "FROM base\n" + doubling(instruction) + "RUN uv sync --locked --extra ${A22} --extra $A5\n"
    (command,) = Dockerfile.from_text(text).uv_commands
    capped, small = command.flag_values("--extra")
    assert (capped.value, capped.unresolved, capped.capped) == ("${A22}", ("A22",), True)
    assert small.value == "xx" * 32 and not small.unresolved  # below the cap: expanded as before


def test_expansion_size_cap_is_exact() -> None:
    at_cap = {"A": "x" * limits.MAX_EXPANSION_BYTES}
    assert expand_bounded("$A", at_cap).text == at_cap["A"]
    over = expand_bounded("$A.${A:-y}", at_cap)
    assert (over.text, over.unresolved, over.capped) == ("$A.${A:-y}", ("A",), True)


def test_total_bytes_and_steps_are_shared_by_a_whole_file(monkeypatch: pytest.MonkeyPatch) -> None:
    budget = ExpansionBudget(steps=3)
    assert [expand_bounded("$A", {"A": "a"}, budget).capped for _ in range(5)] == [False, False, False, True, True]
    monkeypatch.setattr(limits, "MAX_EXPANSION_TOTAL_BYTES", 10_000)  # the same rule, at a size quick to test
    text = f"FROM base\nARG A={'x' * 3000}\nRUN uv sync --locked " + "$A " * 20 + "\n"
    (command,) = Dockerfile.from_text(text).uv_commands
    # literal text costs nothing (it is bounded by the file); three substitutions of 3000 fit in 10000
    assert [len(w.value) for w in command.words if not w.unresolved] == [len("--locked"), 3000, 3000, 3000]
    assert len(command.words) == 21 and all(w.capped and w.unresolved == ("A",) for w in command.words[4:])


def test_operator_forms_and_nesting() -> None:
    variables: dict[str, str | None] = {"A": "a", "E": "", "N": None}
    assert expand("${U:-${U2:-${A}b}}c", variables) == ("abc", [])
    assert expand("${A:+alt}|${E:+alt}|${U:+alt}|${E+alt}", variables) == ("alt|||alt", [])
    assert expand("${E:-d}|${E-d}|${U=d}|${A:?m}", variables) == ("d||d|a", [])
    assert expand("${N:-d}", variables) == ("${N:-d}", ["N"])  # no single value: never the default
    assert expand("${U:?m}", variables) == ("${U:?m}", ["U"])
    assert expand("${A%x}$1${U", variables) == ("${A%x}$1${U", [])  # other forms stay as written


def test_nesting_is_capped_and_deep_input_is_refused_cheaply() -> None:
    def nested(depth: int) -> str:
        return "${U:-" * depth + "x" + "}" * depth

    assert expand_bounded(nested(limits.MAX_EXPANSION_DEPTH), {}).text == "x"
    too_deep = expand_bounded(nested(limits.MAX_EXPANSION_DEPTH + 1), {})
    assert too_deep.capped and too_deep.unresolved == ("U",)
    assert expand_bounded(nested(200_000), {}).capped  # no RecursionError, no scan per level


def test_capped_value_is_unresolved_downstream() -> None:
    # A16 is the first value over 64 KiB; what is built from it is unresolved too, not `${A16}` text
    df = Dockerfile.from_text("FROM base\n" + doubling("ARG", 18) + 'RUN X="$A17" && uv sync --locked --extra "$X"\n')
    (arg,) = df.uv_commands[0].flag_values("--extra")
    assert arg.unresolved == ("X",) and arg.capped
    assert "A17" not in df.args and df.args["A14"] == "x" * 2**15


def test_run_flags_and_many_args_stay_linear() -> None:
    # each of these was quadratic: flags cut one at a time, ARG scopes copied per instruction
    text = "FROM b\nRUN " + "--mount=x " * 5000 + "uv sync --locked\n" + "".join(f"ARG X{i}=${{X{i - 1}}}v\n" for i in range(1, 3000))
    (command,) = Dockerfile.from_text(text).uv_commands
    assert command.subcommand == "sync"


def test_oversized_dockerfile_is_refused() -> None:
    with pytest.raises(DepsyncError, match="depsync reads at most") as info:
        Dockerfile.from_text("FROM b\n" + "# padding\n" * (limits.MAX_DOCKERFILE_BYTES // 10 + 1), "docker/Dockerfile.ci.dev")
    assert info.value.where == "docker/Dockerfile.ci.dev"


# -- check_size --------------------------------------------------------------------------------


def test_check_size() -> None:
    limits.check_size(0, "uv.lock")
    limits.check_size(limits.MAX_INPUT_BYTES, "uv.lock")
    with pytest.raises(DepsyncError) as info:
        limits.check_size(limits.MAX_INPUT_BYTES + 1, "uv.lock")
    assert info.value.where == "uv.lock"
    assert str(info.value) == f"uv.lock: the file is {limits.MAX_INPUT_BYTES + 1} bytes; depsync reads at most {limits.MAX_INPUT_BYTES} bytes per file"


# -- marker caps: on the input, never on the meaning -------------------------------------------

REORDERED = ("os_name == 'nt' or sys_platform == 'linux'", "sys_platform == 'linux' or os_name == 'nt'")


def test_long_or_chains_are_compared_exactly() -> None:
    left, right = _or_chain(1, 40, False), _or_chain(1, 40, True)
    assert markers_equivalent(left, right)  # 88 terms: enumeration refused these, the diagram is small
    assert not markers_equivalent(left, right.replace("'m1x39'", "'m1x40'"))
    assert markers_equivalent(*REORDERED)


def test_marker_text_caps() -> None:
    with pytest.raises(limits.LimitExceeded, match="characters long"):
        markers_equivalent("sys_platform == '" + "x" * limits.MAX_MARKER_CHARS + "'", "sys_platform == 'linux'")
    with pytest.raises(limits.LimitExceeded, match="nests parentheses"):
        deep = "(" * (limits.MAX_MARKER_NESTING + 1) + "sys_platform == 'linux'" + ")" * (limits.MAX_MARKER_NESTING + 1)
        markers_equivalent(deep, "sys_platform == 'linux'")
    nested = "(" * limits.MAX_MARKER_NESTING + "sys_platform == 'linux'" + ")" * limits.MAX_MARKER_NESTING
    assert markers_equivalent(nested, "sys_platform == 'linux'")


def test_an_exponential_diagram_is_refused_not_approximated() -> None:
    # (a1 and b1) or (a2 and b2) or ...: with every a before every b, 2**n nodes (uv builds the same)
    bomb = " or ".join(f"(extra == 'a{i:02}' and extra == 'b{i:02}')" for i in range(40))
    with pytest.raises(markers.marker_tree.MarkerTooLarge, match="decision diagram passes"):
        is_never(bomb)
    assert not is_never(" or ".join(f"(extra == 'a{i:02}' and extra == 'b{i:02}')" for i in range(8)))  # 2**8: fine


def test_marker_caps_cover_real_data() -> None:
    """The bundled Megatron-LM triple stays far from the node cap (limits.py states its real sizes)."""
    from conftest import BUNDLED

    project = BUNDLED / "megatron-dev"
    markers._STORE = markers.marker_tree.Store()  # count this check's nodes alone
    findings = run_rules(inputs((project / "pyproject.toml").read_text(), (project / "uv.lock").read_text()))
    assert not [f for f in findings if f.rule == "lock-stale"]
    assert 0 < len(markers._STORE.var) < limits.MAX_MARKER_NODES // 20


def test_many_markers_under_the_marker_cap_are_refused_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each marker is under MAX_MARKER_NODES; their sum passes one check's cap (here set low to
    be quick: the same rule at any size)."""
    monkeypatch.setattr(limits, "MAX_MARKER_CHECK_NODES", 2_000)
    chains = [" or ".join(f"(extra == 'a{i}{k:02}' and extra == 'b{i}{k:02}')" for k in range(6)) for i in range(40)]
    pyproject = PYPROJECT.replace('"alpha>=1"', ", ".join(f'"alpha>=1; {c}"' for c in chains))
    with pytest.raises(markers.marker_tree.MarkerTooLarge, match="the markers of one check"):
        run_rules(inputs(pyproject, LOCK))
    assert markers._store().check_allowance == float("inf")  # the bound ends with the check
    assert not is_never(chains[0])  # outside a check only the per-marker cap applies
