"""The composite action `.github/actions/depsync-check`, validated and run for real.

1. action.yml and the example workflows against GitHub's own JSON schemas, as
   check-jsonschema ships them; zizmor's audit (pedantic, offline); no `${{ }}` inside any
   `run:`, no `|| true`, actions pinned to commits.
2. The action's shell steps run with bash the way the runner runs them, in a temp git
   repository with a PR branch and a local bare `origin`; the example check workflow too.
3. `depsync ... | head` under `bash -eo pipefail` (the runner's shell) keeps the run's status.

What is stubbed, because it cannot exist here, and how:
- the GitHub runner itself: `Runner` below does its part with real files: GITHUB_OUTPUT,
  GITHUB_ENV, GITHUB_PATH and GITHUB_STEP_SUMMARY are temp files read back after each step,
  RUNNER_TEMP is a temp dir, `${{ }}` in `env:`, `with:`, `if:` and outputs are evaluated for
  the contexts the files use (an expression outside that small grammar fails the test), and
  each `run:` goes to `bash --noprofile --norc -eo pipefail`, the runner's `shell: bash`;
- `uses: actions/setup-python` (a JavaScript action that downloads CPython 3.12): the base
  interpreter of the test's Python stands in for it, given as its `python-path` output;
- the action's checkout: GitHub downloads the depsync repository at the pinned ref; here
  the work tree is copied to a temp dir (the action installs from that copy, with real pip).
Everything else is real: git, pip (packages from the configured index: depsync's
dependencies, and the uv the action installs), depsync, uv, bash.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO, env_for, git, uv_lock, warnings_only, write_files
from support import copy_of_depsync
from uvprojects import LocalMaterial

from depsync import __version__
from depsync.api import pinned_uv_version

ACTION = REPO / ".github" / "actions" / "depsync-check" / "action.yml"
INSTALL_UV = ACTION.parent / "install_uv.py"
WORKFLOW = REPO / "examples" / "sync-workflow.yml"
SYNC_WORKFLOW = REPO / ".github" / "workflows" / "depsync-sync.yml"  # the reusable workflow WORKFLOW calls
CHECK_WORKFLOW = REPO / "examples" / "check-workflow.yml"
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
DEPSYNC_ACTION = "depsync/depsync/.github/actions/depsync-check"  # this repository, as the examples name it
DEPSYNC_SYNC = "depsync/depsync/.github/workflows/depsync-sync.yml"
EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


# -- a stand-in for the GitHub runner: expressions ----------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+)|(?P<op>\|\||&&|==|!=|!|\(|\)|,)|(?P<name>[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*))")


class Expression:
    """GitHub's expression language, the part these files use: context paths (`inputs.x`,
    `steps.a.outputs.b`, `needs.j.outputs.o`, `env.X`, `vars.X`, `secrets.X`, `github.x`),
    'strings', ==, != (case-insensitive, as GitHub compares strings), !, &&, || (returning an
    operand, as GitHub does), parentheses and success()/always()/failure()/cancelled()."""

    def __init__(self, text: str, contexts: Mapping[str, Any], failed: bool = False) -> None:
        self.tokens: list[tuple[str, str]] = []
        position, text = 0, text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if not match or match.end() == position:
                raise ValueError(f"expression outside the supported grammar: {text!r}")
            kind = match.lastgroup
            assert kind is not None
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.contexts, self.failed, self.index = contexts, failed, 0

    def value(self) -> Any:
        result = self._or()
        if self.index != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.index]}")
        return result

    def _peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def _take(self) -> tuple[str, str]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            left = left if truthy(left) else right
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == "&&":
            self._take()
            right = self._compare()
            left = right if truthy(left) else left
        return left

    def _compare(self) -> Any:
        left = self._unary()
        if self._peek() in ("==", "!="):
            op = self._take()[1]
            right = self._unary()
            same = str(text_of(left)).lower() == str(text_of(right)).lower()
            return same if op == "==" else not same
        return left

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, token = self._take()
        if token == "(":
            inner = self._or()
            assert self._take()[1] == ")"
            return inner
        if kind == "str":
            return token[1:-1].replace("''", "'")
        if kind == "num":
            return token
        if kind == "name" and self._peek() == "(":
            self._take()
            assert self._take()[1] == ")", "functions with arguments are not used"
            return {"success": not self.failed, "always": True, "failure": self.failed, "cancelled": False}[token]
        if token in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[token]
        value: Any = self.contexts
        for part in token.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return value


def truthy(value: Any) -> bool:
    return value not in (None, "", False, 0, "0")


def text_of(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def expand(value: Any, contexts: Mapping[str, Any]) -> str:
    """A YAML value with `${{ }}` parts replaced by their values (as text)."""
    return EXPRESSION.sub(lambda m: text_of(Expression(m.group(1), contexts).value()), text_of(value))


def condition(text: Any, contexts: Mapping[str, Any], failed: bool) -> bool:
    """A step's `if:`; without a status function it means `success() && (...)`."""
    if text is None:
        return not failed
    inner = str(text).strip()
    match = re.fullmatch(r"\$\{\{(.*)\}\}", inner, re.S)
    inner = match.group(1) if match else inner
    if not re.search(r"\b(always|failure|cancelled|success)\(\)", inner):
        inner = f"success() && ({inner})"
    return truthy(Expression(inner, contexts, failed).value())


# -- a stand-in for the GitHub runner: steps -----------------------------------------------------

def parse_output_file(text: str) -> dict[str, str]:
    """`name=value` lines and `name<<DELIMITER ... DELIMITER` blocks (GITHUB_OUTPUT, GITHUB_ENV)."""
    values: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            block = []
            i += 1
            while lines[i] != delimiter:
                block.append(lines[i])
                i += 1
            values[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


@dataclass
class StepResult:
    name: str
    ran: bool
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    outputs: dict[str, str] = field(default_factory=dict)


# a `uses:` step done by the test: (runner, with:, env) -> (outputs, exit status)
Stub = Callable[["Runner", Mapping[str, str], dict[str, str]], tuple[dict[str, str], int]]


@dataclass
class Runner:
    """Runs the `run:` steps of a composite action or of a workflow job the way the GitHub
    runner does, with the `uses:` steps replaced by stubs (action name -> function)."""

    workspace: Path
    temp: Path
    env: dict[str, str]
    stubs: dict[str, Stub]
    contexts: dict[str, Any] = field(default_factory=dict)
    log: list[StepResult] = field(default_factory=list)
    path_entries: list[str] = field(default_factory=list)

    def run_steps(self, steps: list[dict[str, Any]], *, env: Mapping[str, Any] | None = None, action_path: Path | None = None,
                  default_shell: str | None = None) -> bool:
        """Every step in order, with `if:`; True when none failed."""
        failed = False
        step_contexts: dict[str, Any] = {}
        self.contexts["steps"] = step_contexts
        for number, step in enumerate(steps):
            name = step.get("name") or step.get("uses") or f"step {number}"
            if not condition(step.get("if"), self.contexts, failed):
                self.log.append(StepResult(name, ran=False))
                if "id" in step:
                    step_contexts[step["id"]] = {"outputs": {}, "outcome": "skipped"}
                continue
            # job/workflow env first (they may refer to each other), then the step's own
            scope = dict(self.contexts.get("env", {}))
            for key, value in (env or {}).items():
                scope[key] = expand(value, {**self.contexts, "env": scope})
            self.contexts["env"] = scope
            step_env = {key: expand(value, self.contexts) for key, value in (step.get("env") or {}).items()}
            if "uses" in step:
                action = step["uses"].split("@")[0]
                inputs = {key: expand(value, self.contexts) for key, value in (step.get("with") or {}).items()}
                outputs, returncode = self.stubs[action](self, inputs, {**scope, **step_env})
                result = StepResult(name, ran=True, returncode=returncode, outputs=outputs)
            else:
                shell = step.get("shell") or default_shell
                assert shell == "bash", f"{name}: every run step says `shell: bash` (or the workflow's default)"
                result = self._run(name, step["run"], {**scope, **step_env}, action_path, step.get("working-directory"))
            self.log.append(result)
            if "id" in step:
                step_contexts[step["id"]] = {"outputs": result.outputs, "outcome": "failure" if result.returncode else "success"}
            failed = failed or result.returncode != 0
        return not failed

    def _run(self, name: str, script: str, step_env: Mapping[str, str], action_path: Path | None, directory: str | None) -> StepResult:
        files = {key: self.temp / f"{key.lower()}-{len(self.log)}" for key in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH")}
        for file in files.values():
            file.write_text("")
        script_file = self.temp / f"step-{len(self.log)}.sh"
        script_file.write_text(script)
        env = {**self.env, **step_env, **{k: str(v) for k, v in files.items()}}
        env["PATH"] = os.pathsep.join([*reversed(self.path_entries), env["PATH"]])
        env.update(
            CI="true", GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(self.workspace), RUNNER_TEMP=str(self.temp),
            GITHUB_STEP_SUMMARY=str(self.temp / "step-summary.md"),
        )
        if action_path is not None:
            env["GITHUB_ACTION_PATH"] = str(action_path)
        cwd = self.workspace / directory if directory else self.workspace
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script_file)], cwd=cwd, env=env, capture_output=True, text=True)
        outputs = parse_output_file(files["GITHUB_OUTPUT"].read_text())
        self.env.update(parse_output_file(files["GITHUB_ENV"].read_text()))
        self.path_entries += [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
        return StepResult(name, True, done.returncode, done.stdout, done.stderr, outputs)

    def step(self, name: str) -> StepResult:
        return next(r for r in self.log if r.name == name)

    def describe(self) -> str:
        return "\n".join(f"--- {r.name}: ran={r.ran} rc={r.returncode}\n{r.stdout}{r.stderr}" for r in self.log)


def run_action(runner: Runner, action_dir: Path, with_: Mapping[str, str]) -> tuple[bool, dict[str, str]]:
    """The composite action: inputs from `with:` and defaults, then its steps, then its outputs."""
    action = yaml.safe_load((action_dir / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in action.get("inputs", {}).items()}
    unknown = set(with_) - set(inputs)
    assert not unknown, f"the action has no inputs {unknown}"
    runner.contexts["inputs"] = {**inputs, **with_}
    ok = runner.run_steps(action["runs"]["steps"], action_path=action_dir)
    outputs = {name: expand(spec["value"], runner.contexts) for name, spec in action.get("outputs", {}).items()}
    return ok, outputs


def triggers(workflow: Mapping[Any, Any]) -> dict[str, Any]:
    """The `on:` table (YAML 1.1 reads the bare key `on` as true)."""
    return dict(workflow.get("on") or workflow.get(True) or {})


def run_job(runner: Runner, workflow_path: Path, job: str, *, env: Mapping[str, str] | None = None, needs: Mapping[str, Any] | None = None,
            variables: Mapping[str, str] | None = None, inputs: Mapping[str, Any] | None = None,
            secrets: Mapping[str, str] | None = None) -> tuple[bool | None, dict[str, str]]:
    """One job of a workflow: (None when its `if:` skips it | whether it passed, its outputs).
    env: values that replace the workflow's own `env:` (placeholders a team fills in);
    inputs: a reusable workflow's `with:` (its declared defaults fill the rest)."""
    workflow = yaml.safe_load(workflow_path.read_text())
    spec = workflow["jobs"][job]
    declared = (triggers(workflow).get("workflow_call") or {}).get("inputs") or {}
    unknown = set(inputs or {}) - set(declared)
    assert not unknown, f"the workflow has no inputs {unknown}"
    given = {name: value.get("default", "") for name, value in declared.items()} | dict(inputs or {})
    missing = [name for name, value in declared.items() if value.get("required") and name not in (inputs or {})]
    assert not missing, f"required inputs not given: {missing}"
    github = {"token": "fake-github-token", "run_id": runner.env.get("GITHUB_RUN_ID", "1"), "run_attempt": runner.env.get("GITHUB_RUN_ATTEMPT", "1"),
              "repository": runner.env.get("GITHUB_REPOSITORY", "example/project")}
    runner.contexts.update(needs=dict(needs or {}), vars=dict(variables or {}), secrets=dict(secrets or {}), github=github, env={},
                           inputs=given, runner={"temp": str(runner.temp)})
    if not condition(spec.get("if"), runner.contexts, False):
        return None, {}
    scope = {**workflow.get("env", {}), **(env or {}), **spec.get("env", {})}
    shell = workflow.get("defaults", {}).get("run", {}).get("shell")
    ok = runner.run_steps(spec["steps"], env=scope, default_shell=shell)
    outputs = {name: expand(value, runner.contexts) for name, value in spec.get("outputs", {}).items()}
    return ok, outputs


def checkout_stub(remote: Path, default_ref: str) -> Stub:
    def checkout(runner: Runner, inputs: Mapping[str, str], env: Mapping[str, str]) -> tuple[dict[str, str], int]:
        """actions/checkout: a real `git clone` of the local bare remote as the workspace, then
        `ref` (default_ref when none is given: GitHub would take the PR's merge commit)."""
        assert inputs.get("fetch-depth") == "0", "the merge-base and both branches are needed"
        subprocess.run(["git", "clone", "-q", str(remote), str(runner.workspace)], check=True)
        ref = inputs.get("ref") or default_ref
        subprocess.run(["git", "-C", str(runner.workspace), "checkout", "-q", "-B", ref, f"origin/{ref}"], check=True)
        return {}, 0
    return checkout


def action_step(action_dir: Path) -> Stub:
    """`uses:` of the depsync action: not a stub, the real composite action from action_dir."""
    def run(runner: Runner, inputs: Mapping[str, str], env: Mapping[str, str]) -> tuple[dict[str, str], int]:
        inner = Runner(runner.workspace, runner.temp, runner.env, runner.stubs, path_entries=runner.path_entries)
        ok, outputs = run_action(inner, action_dir, dict(inputs))
        runner.log += inner.log
        return outputs, 0 if ok else 1
    return run


def base_python() -> str:
    """The interpreter the test venv was made from: what setup-python would provide (no depsync in it)."""
    for candidate in (Path(sys.base_prefix) / "bin" / "python3", Path(sys.base_prefix) / "bin" / "python"):
        if candidate.exists():
            return str(candidate)
    raise AssertionError("no base interpreter")


def setup_python_stub(runner: Runner, inputs: Mapping[str, str], env: Mapping[str, str]) -> tuple[dict[str, str], int]:
    """actions/setup-python: `python` on PATH (unless update-environment is false) and python-path."""
    assert re.fullmatch(r"3\.\d+", inputs.get("python-version", "")), "the Python version is pinned"
    if inputs.get("update-environment", "true") != "false":
        bin_dir = runner.temp / "setup-python-bin"
        bin_dir.mkdir(exist_ok=True)
        for name in ("python", "python3"):
            if not (bin_dir / name).exists():
                (bin_dir / name).symlink_to(base_python())
        runner.path_entries.append(str(bin_dir))
    return {"python-path": base_python(), "python-version": f"{sys.version_info[0]}.{sys.version_info[1]}"}, 0


def runner_env(base: Mapping[str, str]) -> dict[str, str]:
    """The job's environment: no virtualenv and no depsync on PATH (the steps must install it)."""
    env = {k: v for k, v in base.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "depsync").exists())
    assert shutil.which("depsync", path=env["PATH"]) is None
    return env


# -- 1. the files themselves ---------------------------------------------------------------------

def run_steps_of(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    if "runs" in document:
        return [("action", s) for s in document["runs"]["steps"]]
    return [(job, s) for job, spec in document["jobs"].items() for s in spec.get("steps", [])]


@pytest.mark.parametrize(("path", "schema"), [(ACTION, "vendor.github-actions"), (WORKFLOW, "vendor.github-workflows"), (SYNC_WORKFLOW, "vendor.github-workflows"),
                                             (CHECK_WORKFLOW, "vendor.github-workflows")])
def test_files_validate_against_github_schemas(path: Path, schema: str) -> None:
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", [ACTION, WORKFLOW, SYNC_WORKFLOW, CHECK_WORKFLOW])
def test_no_expression_reaches_a_script(path: Path) -> None:
    """Template injection: `${{ inputs.x }}` inside `run:` pastes the value into the script
    before bash reads it. Values go through `env:` only; and nothing installs from PyPI or
    hides a failure."""
    document = yaml.safe_load(path.read_text())
    steps = run_steps_of(document)
    scripts = [(where, s["run"]) for where, s in steps if "run" in s]
    assert scripts or all("uses" in job for job in document["jobs"].values())
    for where, script in scripts:
        assert "${{" not in script, f"{where}: an expression inside run:\n{script}"
        assert not re.search(r"\|\|\s*true\b", script), f"{where}: `|| true` hides a failure"
        assert not re.search(r"pip install[^\n]*\bdepsync\b(?!\s*@)", script.replace('"$DEPSYNC_REQUIREMENT"', "")), f"{where}: depsync from an index"
    for where, step in steps:
        if "uses" in step:
            pinned = PINNED.match(step["uses"]) or step["uses"] == f"{DEPSYNC_ACTION}@<full commit sha>"
            assert pinned, f"{where}: {step['uses']} is not pinned to a commit"
    for job, spec in document.get("jobs", {}).items():  # a call of a reusable workflow
        if "uses" in spec:
            assert PINNED.match(spec["uses"]) or spec["uses"] == f"{DEPSYNC_SYNC}@<full commit sha>", f"{job}: {spec['uses']} is not pinned"
    # every expression the files hold is one the stand-in runner evaluates the way GitHub does
    for expression in EXPRESSION.findall(path.read_text()):
        Expression(expression, {}).value()


def test_zizmor_finds_nothing(tmp_path: Path) -> None:
    """zizmor (the GitHub Actions auditor the issue quotes: 6 high findings before) with its
    pedantic persona, offline. The examples' placeholder for this repository's action is
    replaced by a commit-pinned name, as a team copying them does."""
    copy = tmp_path / "check-workflow.yml"
    copy.write_text(CHECK_WORKFLOW.read_text().replace(f"{DEPSYNC_ACTION}@<full commit sha>", f"example/depsync/.github/actions/depsync-check@{'0' * 40}"))
    caller = tmp_path / "sync-workflow.yml"
    caller.write_text(WORKFLOW.read_text().replace(f"{DEPSYNC_SYNC}@<full commit sha>", f"example/depsync/.github/workflows/depsync-sync.yml@{'0' * 40}"))
    zizmor = shutil.which("zizmor", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert zizmor, "zizmor is a test dependency"
    result = subprocess.run([zizmor, "--offline", "--persona", "pedantic", "--format", "json", str(ACTION), str(caller), str(SYNC_WORKFLOW), str(copy)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_expressions_evaluate_like_github() -> None:
    contexts = {"vars": {}, "steps": {"m": {"outputs": {"merged": "true", "relock": "False"}}}, "github": {"token": "t"}, "secrets": {}}
    assert Expression("vars.X || 'docker'", contexts).value() == "docker"
    assert Expression("secrets.T || github.token", contexts).value() == "t"
    assert condition("steps.m.outputs.merged == 'true' && steps.m.outputs.relock == 'false'", contexts, False)  # case-insensitive
    assert not condition("steps.m.outputs.merged == 'true'", contexts, True)  # an earlier failure skips it
    assert condition("${{ always() }}", contexts, True)
    with pytest.raises(ValueError):
        Expression("fromJSON(vars.X)[0]", contexts).value()


# -- 2. the action, run ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def action_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_of_depsync(tmp_path_factory.mktemp("action-checkout") / "depsync") / ".github" / "actions" / "depsync-check"


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One RUNNER_TEMP for the module: the action's venv is made once and reused, as on one runner."""
    return tmp_path_factory.mktemp("runner-temp")


@pytest.fixture
def pr_repo(small_repo: Path, material: LocalMaterial, tmp_path: Path) -> Path:
    """A clone with origin/dev (the PR base) and a checked-out PR branch that moves zeta's pin."""
    remote = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(small_repo, "remote", "add", "origin", str(remote))
    git(small_repo, "push", "-q", "origin", "dev", "main")
    git(small_repo, "fetch", "-q", "origin")
    git(small_repo, "checkout", "-q", "-b", "pr", "origin/dev")
    text = (small_repo / "pyproject.toml").read_text()
    c = material.git.commits
    write_files(small_repo, {"pyproject.toml": text.replace(f'zeta = {{ git = "{material.git.url}", rev = "{c["c1"]}" }}', f'zeta = {{ git = "{material.git.url}", rev = "{c["c2"]}" }}')})
    uv_lock(small_repo, material)
    git(small_repo, "commit", "-qam", "pr: zeta from c2")
    return small_repo


def action_runner(repo: Path, temp: Path, material: LocalMaterial, **env: str) -> Runner:
    base = runner_env(env_for(material))
    base.update({"GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "dev", "GITHUB_HEAD_REF": "pr", **env})
    (temp / "step-summary.md").write_text("")
    return Runner(repo, temp, base, {"actions/setup-python": setup_python_stub})


def test_the_action_passes_a_clean_pr_and_writes_its_summary(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path) -> None:
    runner = action_runner(pr_repo, runner_temp, material)
    ok, outputs = run_action(runner, action_dir, {"owner-ref": "origin/dev"})
    assert ok, runner.describe()
    assert outputs["exit-code"] == "0" and outputs["errors"] == "0"
    assert outputs["warnings"].isdigit()
    install = runner.step("install depsync from the action's checkout")
    assert install.outputs["depsync"].startswith(str(runner_temp)), "depsync runs from the action's own venv"
    assert f"depsync {__version__}" in install.stdout
    uv = runner.step("install uv into depsync's venv")
    assert "uv 0.13.9" in uv.stdout and "(no pin in the project: the default)" in uv.stdout
    assert outputs["uv-version"] == "0.13.9" and Path(install.outputs["bin"], "uv").is_file()  # in the action's venv
    summary = Path(outputs["summary-path"]).read_text()
    assert summary.startswith("## depsync check passed")
    assert "### uv.lock: `origin/dev:uv.lock` -> `uv.lock`" in summary and "zeta" in summary  # the lock diff against the PR base
    assert (runner_temp / "step-summary.md").read_text() == summary
    assert runner.step("depsync result").stdout.strip() == "depsync check passed"


def test_the_action_fails_on_findings_after_writing_them(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path) -> None:
    text = (pr_repo / "pyproject.toml").read_text()
    (pr_repo / "pyproject.toml").write_text(text.replace('dependencies = ["alpha"', 'dependencies = ["alpha>=1.0"'))  # not relocked
    git(pr_repo, "commit", "-qam", "pr: alpha>=1.0 without a relock")
    runner = action_runner(pr_repo, runner_temp, material)
    ok, outputs = run_action(runner, action_dir, {"owner-ref": "origin/dev"})
    assert not ok
    assert outputs["exit-code"] == "1" and outputs["errors"] == "1", runner.describe()
    check = runner.step("depsync check")
    assert check.returncode == 0 and "::error file=pyproject.toml,line=5" in check.stdout and "title=depsync lock-stale" in check.stdout  # annotations
    summary = Path(outputs["summary-path"]).read_text()
    assert summary.startswith("## depsync check failed (exit 1)") and "`lock-stale`" in summary
    result = runner.step("depsync result")
    assert result.returncode == 1 and "found problems" in result.stdout


def test_the_action_installs_uv_so_a_lock_uv_accepts_passes(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path) -> None:
    """`[tool.uv] no-sources = true` changes what uv accepts as a lock and depsync does not model it:
    depsync's static model calls the lock stale, uv accepts it. The job has no uv
    (runner_env drops the test venv's bin): only the uv the action installs can say so."""
    # registry requirements only (no-sources would send zeta, a git source here, to the index)
    (pr_repo / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = ["alpha"]\n\n[tool.uv]\nno-sources = true\n' + material.index_toml()
    )
    (pr_repo / "uv.lock").unlink()  # locked afresh with the setting
    uv_lock(pr_repo, material)
    git(pr_repo, "commit", "-qam", "pr: no-sources")
    static = subprocess.run([sys.executable, "-m", "depsync", "check", "--static", "--format", "json", "--owner-ref", "origin/dev"], cwd=pr_repo, capture_output=True, text=True)
    assert static.returncode == 1 and {f["rule"] for f in json.loads(static.stdout)["findings"]} == {"lock-stale"}, static.stdout  # the static verdict alone fails it
    runner = action_runner(pr_repo, runner_temp, material)
    assert shutil.which("uv", path=runner.env["PATH"]) is None, "the job itself has no uv"
    ok, outputs = run_action(runner, action_dir, {"owner-ref": "origin/dev"})
    assert ok, runner.describe()
    check = runner.step("depsync check")
    assert outputs["exit-code"] == "0" and "lock-stale" not in check.stdout, check.stdout  # was: "no uv that runs offline to confirm it"
    assert "title=depsync static-model-disagrees" in check.stdout and "uv 0.13.9 `uv lock --check --offline` accepts it" in check.stdout


def test_a_uv_version_input_that_is_no_release_installs_nothing(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    runner = action_runner(pr_repo, runner_temp, material)
    ok, _ = run_action(runner, action_dir, {"owner-ref": "origin/dev", "uv-version": f"0.13.9 --target {marker}"})
    uv = runner.step("install uv into depsync's venv")
    assert not ok and uv.returncode == 2 and "uv-version must be a uv release" in uv.stdout
    assert not marker.exists() and not runner.step("depsync check").ran


@pytest.mark.parametrize(("pyproject", "dockerfile", "expected"), [
    ('[tool.uv]\nrequired-version = "==0.7.2"\n', "ARG UV_VERSION=0.8.0\n", "0.7.2"),  # uv refuses to run at another version
    ('[tool.uv]\nrequired-version = "0.7.2"\n', "", "0.7.2"),
    ('[tool.uv]\nrequired-version = ">=0.7"\n', "ARG UV_VERSION=0.8.0\n", "0.8.0"),  # a range: the CI Dockerfile's pin
    ("", "ARG UV_VERSION=0.8.0\n", "0.8.0"),
    ("", "ARG UV_VERSION=latest\n", None),  # not a release: never a version to install
    ('[tool.uv]\nrequired-version = ">=0.7"\n', "", None),
])
def test_the_uv_the_action_installs_is_the_project_s_pin(tmp_path: Path, pyproject: str, dockerfile: str, expected: str | None) -> None:
    project = tmp_path / "p"
    text = '[project]\nname = "p"\nversion = "0.1.0"\nrequires-python = ">=3.10"\ndependencies = []\n\n' + pyproject
    files = {"pyproject.toml": text, "uv.lock": 'version = 1\nrevision = 3\nrequires-python = ">=3.10"\n'}
    if dockerfile:
        files["docker/Dockerfile.ci.dev"] = f"FROM python:3.12\n{dockerfile}RUN pip install uv==${{UV_VERSION}}\nRUN uv sync --locked\n"
    write_files(project, files)
    assert pinned_uv_version(project) == expected
    assert pinned_uv_version(project / "docker") == expected if dockerfile else True  # from a subdirectory, as `depsync check PATH`


def test_one_default_uv_everywhere() -> None:
    """The action's default uv, the pre-commit hook's uv and the uv the tests run are one version."""
    import tomllib

    test_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    (tested,) = [r.removeprefix("uv==") for r in test_extra if r.startswith("uv==")]
    from depsync.api import DEFAULT_UV

    assert DEFAULT_UV == tested and "install_uv_step" in INSTALL_UV.read_text()
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert hooks["depsync-check"]["additional_dependencies"] == [f"uv=={tested}"]
    assert f"else {tested}" in yaml.safe_load(ACTION.read_text())["inputs"]["uv-version"]["description"]
    ci = (REPO / "docs" / "ci.md").read_text()
    assert f"`uv=={tested}`" in ci and f"else `{tested}`" in ci  # what the docs say the recipes install


def test_the_action_without_a_base_ref_still_checks(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path) -> None:
    runner = action_runner(pr_repo, runner_temp, material, GITHUB_EVENT_NAME="push", GITHUB_BASE_REF="")
    ok, outputs = run_action(runner, action_dir, {"owner-ref": "origin/dev", "strict": "true"})
    summary = Path(outputs["summary-path"]).read_text()
    assert "Not a pull request and no `base-ref` given: no lock diff." in summary
    direct = subprocess.run([sys.executable, "-m", "depsync", "check", "--strict", "--owner-ref", "origin/dev"], cwd=pr_repo, capture_output=True, text=True)
    assert outputs["exit-code"] == str(direct.returncode)  # the action's status is depsync's
    assert ok == (direct.returncode == 0)
    assert "## depsync check " + ("passed" if ok else "failed (exit 1)") in summary


def test_hostile_inputs_stay_data(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path, tmp_path: Path) -> None:
    """Inputs a workflow may fill from PR titles or branch names: with env: they stay strings."""
    marker = tmp_path / "PWNED"
    runner = action_runner(pr_repo, runner_temp, material)
    ok, outputs = run_action(runner, action_dir, {"path": f"$(touch {marker})", "owner-ref": f'"; touch {marker}; "', "strict": "true", "base-ref": f"--output={marker}"})
    assert not ok
    assert not marker.exists()
    assert outputs["exit-code"] == "2"  # no such project directory: an input error, said as such
    assert "depsync check could not run (exit 2)" in Path(outputs["summary-path"]).read_text()


# -- 3. the runner's shell is bash -eo pipefail: `depsync ... | head` must keep its status -------

def _depsync_with_closed_stdout(*args: str, stderr_too: bool = False) -> subprocess.CompletedProcess[str]:
    """depsync writing into a pipe whose reader has already gone: the first write is EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "depsync", *args], stdout=write, stderr=write if stderr_too else subprocess.PIPE, text=True)
    finally:
        os.close(write)


def test_check_into_head_under_pipefail_exits_0(megatron_dev_project: Path) -> None:
    warnings_only(megatron_dev_project)
    script = '"$PYTHON" -m depsync check "$PROJECT" | head -1'
    env = {**os.environ, "PYTHON": sys.executable, "PROJECT": str(megatron_dev_project)}
    result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr  # was 1: a closed pipe was mapped to exit 1
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == ""


@pytest.mark.parametrize(("args", "status"), [((), 0), (("--strict",), 1), (("--format", "json"), 0)])
def test_a_closed_pipe_keeps_the_status_the_run_would_have_had(megatron_dev_project: Path, args: tuple[str, ...], status: int, tmp_path: Path) -> None:
    warnings_only(megatron_dev_project)
    with open(tmp_path / "out", "w") as handle:  # the same run into a file: the reference status
        reference = subprocess.run([sys.executable, "-m", "depsync", "check", str(megatron_dev_project), *args], stdout=handle, stderr=subprocess.PIPE)
    assert reference.returncode == status
    result = _depsync_with_closed_stdout("check", str(megatron_dev_project), *args)
    assert result.returncode == status
    assert result.stderr == ""  # no "Exception ignored ... BrokenPipeError" from the final flush
    both = _depsync_with_closed_stdout("check", str(megatron_dev_project), *args, stderr_too=True)
    assert both.returncode == status


@pytest.mark.parametrize("args", [("--help",), ("check", "--help"), ("--version",)])
def test_help_into_a_closed_pipe_is_exit_0(args: tuple[str, ...]) -> None:
    result = _depsync_with_closed_stdout(*args)
    assert (result.returncode, result.stderr) == (0, "")


def test_an_input_error_into_a_closed_pipe_is_still_exit_2(tmp_path: Path) -> None:
    result = _depsync_with_closed_stdout("check", str(tmp_path / "missing"))
    assert result.returncode == 2 and "depsync: error:" in result.stderr


def test_the_example_check_workflow_runs(pr_repo: Path, material: LocalMaterial, action_dir: Path, runner_temp: Path, tmp_path: Path) -> None:
    """examples/check-workflow.yml as a team copies it: checkout (stubbed: a clone of the local
    origin), then the real action from its copy, then a step reading the action's outputs."""
    git(pr_repo, "push", "-q", "origin", "pr")
    runner = action_runner(tmp_path / "workspace", runner_temp, material)
    runner.stubs.update({"actions/checkout": checkout_stub(tmp_path / "origin.git", "pr"), DEPSYNC_ACTION: action_step(action_dir)})
    ok, _ = run_job(runner, CHECK_WORKFLOW, "check")
    assert ok, runner.describe()
    assert "depsync check exited 0 with 0 error(s)" in runner.step("use the results").stdout
    assert "## depsync check passed" in (runner_temp / "step-summary.md").read_text()
