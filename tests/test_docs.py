"""docs/, SECURITY.md and CONTRIBUTING.md stay true: the generated blocks are what the code
generates now (`python -m depsync.cli.docs`), the CLI reference agrees with `--help` itself, every
config key and every flagging reconcile row is documented, every config example loads, every
relative link resolves, and the sync PR shown is what reconcile writes on the real Megatron merge
(examples/megatron-sync/make-example.sh builds it from the bundled files)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import REPO

from depsync.cli import docs
from depsync.core.config import load_config, valid_keys
from depsync.core.rules.registry import RULES, rule_table
from depsync.core.sync import sources

PAGES = [REPO / "README.md", REPO / "SECURITY.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
COMMANDS = ["check", "reconcile", "lock", "diff", "install", "guard", "rule", "completion"]
READERS = {"check", "reconcile", "lock", "diff", "install", "guard", "merge driver"}


def text(path: str) -> str:
    return (REPO / path).read_text()


def help_text(*args: str) -> str:
    """`depsync [COMMAND] --help` as a user sees it at 100 columns (a real process)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["COLUMNS"] = "100"
    result = subprocess.run([sys.executable, "-m", "depsync", *args, "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.rstrip("\n")


def section(markdown: str, heading: str) -> str:
    """The part of `markdown` from `heading` to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    body = markdown.split(f"\n{heading}\n", 1)[1]
    return re.split(rf"\n#{{1,{len(level)}}} ", body, maxsplit=1)[0]


# -- generated blocks -----------------------------------------------------------------------------


def test_generated_blocks_are_current() -> None:
    stale = docs.regenerate(REPO, check=True)
    assert not stale, f"out of date: {', '.join(stale)}; run `{docs.REGENERATE}` and commit the result"


def test_the_generator_command_works(tmp_path: Path) -> None:
    """The command CONTRIBUTING.md names: --check is 0 on this tree, 1 on a stale copy, and a run fixes it."""
    assert subprocess.run([sys.executable, "-m", "depsync.cli.docs", "--check"], capture_output=True, cwd=tmp_path).returncode == 0
    for path in {file for file, _ in docs.BLOCKS.values()}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(docs.fill(text(path), next(n for n, (f, _) in docs.BLOCKS.items() if f == path), "stale"))
    run = [sys.executable, "-m", "depsync.cli.docs", "--repo", str(tmp_path)]
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 1
    assert subprocess.run(run, capture_output=True).returncode == 0
    assert subprocess.run([*run, "--check"], capture_output=True).returncode == 0
    assert "\npython -m depsync.cli.docs " in text("CONTRIBUTING.md")  # the command, as CONTRIBUTING.md gives it


def test_a_missing_block_is_an_error() -> None:
    with pytest.raises(ValueError, match="no block 'rules'"):
        docs.fill("# no markers here\n", "rules", "x")


# -- the CLI reference against --help itself -----------------------------------------------------


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_cli_reference_is_the_help(command: str | None) -> None:
    """Usage, every option and the examples/exit codes of `--help` are in the command's section."""
    reference = text("docs/cli.md")
    part = section(reference, f"### `depsync {command}`" if command else "### `depsync`")
    shown = help_text(*([command] if command else []))
    paragraphs = shown.split("\n\n")
    assert f"```\n{paragraphs[0]}\n```" in part, f"usage of depsync {command or ''} differs:\n{paragraphs[0]}"
    groups = [i for i, p in enumerate(paragraphs) if p.startswith(("global options:", "commands:"))]
    for epilog in paragraphs[max(groups) + 1 :]:
        assert epilog in part, f"depsync {command or ''} --help says, and docs/cli.md does not:\n{epilog}"
    spellings = re.findall(r"^  (-\S.*?)(?:  |$)", "\n".join(paragraphs[1 : max(groups) + 1]), re.MULTILINE)  # "  --format FORMAT, --output-format FORMAT"
    options = {o for spelling in spellings for o in re.findall(r"(?<![\w-])--?[a-zA-Z][\w-]*", spelling)} - {"-h", "--help"}
    assert options or command in ("completion",), shown
    documented = reference if command is None else part + section(reference, "### `depsync`")  # global options are listed once
    for option in options:
        assert f"`{option}" in documented, f"{option} of depsync {command or ''} is not in docs/cli.md"


def test_every_listed_command_has_a_section() -> None:
    reference = text("docs/cli.md")
    for command in COMMANDS:
        assert f"\n### `depsync {command}`\n" in reference, command
    assert "### `depsync merge-driver`" not in reference  # internal: hidden from --help, too


# -- configuration -------------------------------------------------------------------------------


def test_every_config_key_has_a_type_and_readers() -> None:
    missing = set(valid_keys()) - set(docs.KEYS)
    assert not missing, f"describe {sorted(missing)} in KEYS in depsync/cli/docs.py, then run `{docs.REGENERATE}`"
    assert not set(docs.KEYS) - set(valid_keys()), "KEYS in depsync/cli/docs.py names keys config.py no longer has"
    for key, doc in docs.KEYS.items():
        assert doc.type and doc.read_by and set(doc.read_by) <= READERS, key


def test_every_config_key_is_in_the_configuration_page() -> None:
    page = text("docs/configuration.md")
    for key in valid_keys():
        assert f"| `{key}` |" in page, key
        assert f"\n{key} = " in page, f"{key} is not in the example that sets every key"


def _toml_blocks(markdown: str) -> list[str]:
    return [b for b in re.findall(r"```toml\n(.*?)```", markdown, re.DOTALL) if "[tool.depsync]" in b]


@pytest.mark.parametrize("path", ["README.md", "docs/configuration.md"])
def test_config_examples_load(path: str) -> None:
    blocks = _toml_blocks(text(path))
    assert blocks, path
    for block in blocks:
        load_config(tomllib.loads(block)["tool"]["depsync"])  # an unknown key or a bad value raises


# -- check and reconcile pages -------------------------------------------------------------------


def test_check_page_has_every_rule_and_the_registry_table() -> None:
    page = text("docs/check.md")
    assert rule_table() in page
    for rule in RULES.values():
        assert f"\n### {rule.id} ({rule.severity})\n" in page, rule.id


def test_every_flagging_decision_has_reviewer_advice() -> None:
    advice = section(text("docs/reconcile.md"), "## What a reviewer does with each flag")
    for rule in sources.RULES:
        if rule.review:
            assert f"| `{rule.id}` |" in advice, f"docs/reconcile.md: say what a reviewer does with {rule.id}"


def test_the_decision_table_is_the_rules() -> None:
    assert sources.rules_markdown() in text("docs/reconcile.md")


# -- all pages -----------------------------------------------------------------------------------

TRACKER_TEXT = re.compile(r"this issue|closing note|Other edits|No flag is added|\bissues? #?\d+|\bissues \d+-\d+", re.IGNORECASE)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_tracker_text(page: Path) -> None:
    found = [f"{page.name}:{n}: {line.strip()}" for n, line in enumerate(page.read_text().splitlines(), 1) if TRACKER_TEXT.search(line)]
    assert not found, "\n".join(found)


def _anchors(markdown: str) -> set[str]:
    """The heading anchors GitHub makes: lower case, punctuation dropped, spaces to hyphens."""
    out, fenced = set(), False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_resolve(page: Path) -> None:
    markdown = re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", markdown):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


# A merge of main that is not `--no-commit --no-ff`: a fast-forward leaves no MERGE_HEAD (reconcile
# would not know main) and a committed merge leaves nothing for reconcile to conclude.
_PLAIN_MERGE = re.compile(r"git merge (?!--no-commit --no-ff |-s ours |--abort)[^`\n;&|]*\bmain\b")
RECIPES = [*PAGES, *sorted((REPO / "examples").rglob("*.yml")), *sorted((REPO / "examples").rglob("*.sh")), REPO / ".github" / "workflows" / "depsync-sync.yml"]


@pytest.mark.parametrize("page", RECIPES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_merge_of_main_is_no_commit_no_ff(page: Path) -> None:
    found = [f"{page.name}:{n}: {line.strip()}" for n, line in enumerate(page.read_text().splitlines(), 1) if _PLAIN_MERGE.search(line)]
    assert not found, "merge main with `git merge --no-commit --no-ff`:\n" + "\n".join(found)


# -- README --------------------------------------------------------------------------------------


def test_readme_is_short() -> None:
    lines = text("README.md").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_readme_shows_the_three_jobs_with_an_example_each() -> None:
    readme = text("README.md")
    for job in ("check", "reconcile", "lock"):
        part = section(readme, f"### `depsync {job}`" + next(t for t in (": the PR gate", ": the sync", ": relock like CI") if f"### `depsync {job}`{t}" in readme))
        assert re.search(rf"```(?:bash|console)\n(?:.*\n)*?.*depsync {job}\b", part), job


def test_readme_ci_snippets_are_the_examples() -> None:
    """The action and pre-commit snippets pin what examples/ and .pre-commit-hooks.yaml hold."""
    readme = text("README.md")
    workflow = text("examples/check-workflow.yml")
    for line in re.findall(r"^\s*- uses: (\S+)", readme, re.MULTILINE):
        assert line in workflow, line
    hooks = re.findall(r"^- id: (\S+)", text(".pre-commit-hooks.yaml"), re.MULTILINE)
    assert hooks and all(f"- id: {hook}" in readme for hook in hooks)


# -- the sync PR shown is the one reconcile writes -------------------------------------------------

_LOCAL = re.compile(r"\b[0-9a-f]{10}\b|\b\d{4}-\d{2}-\d{2}\b")  # the test repository's commit ids and dates


EXAMPLE = REPO / "examples" / "megatron-sync" / "make-example.sh"


@pytest.fixture(scope="module")
def megatron_example(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """What a newcomer's `bash examples/megatron-sync/make-example.sh` prints and the PR body it
    leaves: the real Megatron-LM merge built from the bundled files, merged and reconciled."""
    target = tmp_path_factory.mktemp("example") / "megatron"
    env = dict(os.environ, DEPSYNC=str(Path(sys.executable).parent / "depsync"))
    result = subprocess.run(["bash", str(EXAMPLE), str(target)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout, (target / "sync" / "pr-body.md").read_text()


@pytest.fixture(scope="module")
def megatron_pr_body(megatron_example: tuple[str, str]) -> str:
    return megatron_example[1]


def test_the_example_merges_and_reconciles(megatron_example: tuple[str, str]) -> None:
    """The merge conflicts in both files, as in the real project, and reconcile exits 1 (needs review)."""
    printed, body = megatron_example
    assert "$ git merge --no-commit --no-ff origin/main\n" in printed
    assert "CONFLICT (content): Merge conflict in pyproject.toml" in printed and "CONFLICT (content): Merge conflict in uv.lock" in printed
    assert "depsync reconcile exited 1: done, a reviewer must look at the flagged entries." in printed
    assert body.startswith("## depsync reconcile: `origin/main` into `origin/dev`\n")


def test_the_example_is_the_same_everywhere(megatron_example: tuple[str, str], tmp_path: Path) -> None:
    """Fixed authors and dates, no user git config: a second run (here with a ~/.gitconfig that
    signs commits and another merge conflict style, and DEPSYNC_OWNER_REF set) makes the same
    commits and the same body, so the ids docs/reconcile.md shows are the reader's."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[commit]\n\tgpgsign = true\n[merge]\n\tconflictStyle = zdiff3\n")
    env = dict(os.environ, HOME=str(home), DEPSYNC=str(Path(sys.executable).parent / "depsync"), DEPSYNC_OWNER_REF="main")
    env.pop("GIT_CONFIG_GLOBAL", None)
    result = subprocess.run(["bash", str(EXAMPLE), str(tmp_path / "again")], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "again" / "sync" / "pr-body.md").read_text() == megatron_example[1]


def test_the_example_refuses_a_directory_in_use(tmp_path: Path) -> None:
    (tmp_path / "kept").write_text("")
    result = subprocess.run(["bash", str(EXAMPLE), str(tmp_path)], capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (2, f"make-example.sh: {tmp_path} is not empty\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]


def test_the_worked_merge_is_what_the_example_runs(megatron_example: tuple[str, str]) -> None:
    """docs/reconcile.md's steps 1 and 2 show the commands make-example.sh runs, and what git printed."""
    printed = megatron_example[0].splitlines()
    merge, reconcile = re.findall(r"```console\n(.*?)```", section(text("docs/reconcile.md"), "## A worked sync PR, from the merge to merged"), re.DOTALL)[:2]
    foreign = [line for line in merge.splitlines() if line not in printed]
    assert not foreign, "docs/reconcile.md's merge step has lines make-example.sh does not print:\n" + "\n".join(foreign)
    assert reconcile.splitlines()[0] in printed, reconcile.splitlines()[0]


def test_the_worked_sync_pr_is_what_reconcile_writes(megatron_pr_body: str) -> None:
    """DEPSYNC_UPDATE_EXAMPLES=1 writes this run's body into docs/reconcile.md instead (CONTRIBUTING.md)."""
    page = REPO / "docs" / "reconcile.md"
    (shown,) = re.findall(r"```markdown\n(.*?)```", page.read_text(), re.DOTALL)
    if os.environ.get("DEPSYNC_UPDATE_EXAMPLES") == "1":
        page.write_text(page.read_text().replace(f"```markdown\n{shown}```", f"```markdown\n{megatron_pr_body}```"))
        return
    assert _LOCAL.sub("<local>", shown) == _LOCAL.sub("<local>", megatron_pr_body), (
        "docs/reconcile.md's worked sync PR is not what reconcile writes now; "
        "update it with `DEPSYNC_UPDATE_EXAMPLES=1 python -m pytest -q tests/test_docs.py -k sync_pr`"
    )


def test_the_readme_excerpt_is_from_that_pr(megatron_pr_body: str) -> None:
    quoted = [line[2:] if line.startswith("> ") else line[1:] for line in text("README.md").splitlines() if line.startswith(">")]
    assert len(quoted) > 20
    written = set(_LOCAL.sub("<local>", megatron_pr_body).splitlines())
    foreign = [line for line in quoted if line and _LOCAL.sub("<local>", line) not in written]
    assert not foreign, "README's excerpt has lines reconcile does not write (edit them to lines of docs/reconcile.md's example):\n" + "\n".join(foreign)


def test_the_readme_check_output_is_what_check_prints() -> None:
    """The README's `depsync check` example, shortened with `...`, is real output on the bundled example."""
    (block,) = [b for b in re.findall(r"```console\n(.*?)```", text("README.md"), re.DOTALL) if b.startswith("$ depsync check ")]
    command, *shown = block.rstrip("\n").splitlines()
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR",)} | {"NO_COLOR": "1", "COLUMNS": "200"}
    result = subprocess.run([sys.executable, "-m", "depsync", *command.split()[2:]], cwd=REPO, capture_output=True, text=True, env=env)
    assert result.returncode == 1, result.stderr  # the renamed --no-install-package flags are errors
    printed = set(result.stdout.splitlines())
    foreign = [line for line in shown if line.strip() != "..." and line not in printed]
    assert not foreign, "README's check example has lines check does not print:\n" + "\n".join(foreign) + "\n\nit prints:\n" + result.stdout
