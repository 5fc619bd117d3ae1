"""The one place that names every rule `depsync check` enforces: id, default severity, summary (the docs' rule table is this list; depsync/core/rules/docs.py explains each)."""

from __future__ import annotations

from depsync.core.findings import FIXABLE, Finding, Severity
from depsync.records import record


@record
class Rule:
    id: str
    severity: Severity
    summary: str  # one line, Markdown: the README's rule table and `depsync rule --all` show it

    @property
    def fixable(self) -> bool:
        """`depsync check --fix` applies this rule's fix (depsync/autofix.py)."""
        return self.id in FIXABLE

    def finding(self, file: str, line: int, message: str, fix: str, items: tuple[str, ...] = ()) -> Finding:
        return Finding(file, line, self.id, self.severity, message, fix, items)


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO


# In the README's order: tests/test_readme.py checks that its table is rule_table() verbatim.
RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("docker-unknown-extra", _E, "a `--extra` in the Dockerfile's uv command is not defined in pyproject"),
        Rule("docker-unknown-group", _E, "a `--group`/`--only-group`/`--no-group` names no dependency group"),
        Rule("docker-not-locked", _E, "`uv sync` without `--locked`/`--frozen` (warning when another `uv sync` in the same file is locked)"),
        Rule("docker-stale-no-install", _W, "a `--no-install-package` names a package the lock does not contain"),
        Rule("docker-no-install-renamed", _E, "a `--no-install-package` names a package the lock now has as another build (`-cu12` -> `-cu13`), which the image installs"),
        Rule("docker-unresolved", _W, "a uv flag value uses a variable depsync cannot resolve (reported, not guessed)"),
        Rule("docker-unparsed", _E, "a Dockerfile found in the project runs uv but does not parse, or is past depsync's bounds, so it was not checked"),
        Rule("members-not-checked-out", _E, "workspace members the lock records are in git submodules that are not checked out, so they were not checked"),
        Rule("lock-stale", _E, "uv.lock does not record what pyproject.toml asks for (`uv lock --check` would fail)"),
        Rule("workspace-member-outside", _E, "a workspace member resolves outside the project (a symlink out, `../`): uv reads it, depsync cannot check the lock against it"),
        Rule("static-model-disagrees", _W, "depsync's static model called uv.lock stale, but a real `uv lock --check --offline` accepts it"),
        Rule("metadata-rev-mismatch", _E, "a dependency-metadata version (`2.14.0+f031cf87`) names another sha than its git source"),
        Rule("uv-version-mismatch", _E, "the uv the Dockerfile pins is outside `[tool.uv] required-version`"),
        Rule("uv-version-inconsistent", _W, "Dockerfiles pin different uv versions"),
        Rule("uv-lock-format", _E, "the lock's format version is not one the pinned uv reads"),
        Rule("uv-lock-newer-than-pin", _W, "uv.lock was written by a newer uv than the image pins (its `revision` is higher): relocking in the image downgrades it"),
        Rule("conflict-markers", _E, "uv.lock or pyproject.toml contains git conflict markers"),
        Rule("lock-artifact-mismatch", _E, "a wheel or sdist file name disagrees with its package's name or version"),
        Rule("lock-git-unresolved", _E, "a git source in the lock has no full commit after `#`"),
        Rule("lock-dangling-dependency", _E, "a package depends on a name/version the lock does not contain"),
        Rule("lock-duplicate-package", _E, "the same name, version and source appear twice"),
        Rule("lock-bad-hash", _E, "an artifact hash is malformed"),
        Rule("protected-path-changed", _E, "a protected path differs from the owner branch"),
        Rule("protected-unchecked", _I, "the owner ref is missing, so protected paths were not compared"),
        Rule("source-pin-not-commit", _W, "a git source or direct git URL is pinned to a branch, tag or short commit, not a full commit"),
        Rule("source-host-not-allowed", _E, "a git/url source points to a host outside `allowed-hosts`"),
        Rule("source-inert", _W, "a `[tool.uv.sources]` entry names a package nothing depends on"),
        Rule("uv-lock-check", _E, "`--deep`: real `uv lock --check --offline` says the lock is not fresh"),
        Rule("merge-inconsistent", _E, "reconcile: the merged pyproject contradicts itself (a source's index removed, a wheel URL outside its `==` pin, a default or included group gone)"),
        Rule("image-kept-out-missing", _E, "`--image`: a `--no-install-package` keeps a package out that the base image does not ship"),
        Rule("image-version-mismatch", _E, "`--image`: a kept-out package's image version does not satisfy the lock's requirement on it, or is another release than the locked one"),
        Rule("image-shadowed", _W, "`--image`: `uv sync` installs a locked package over another version the base image ships"),
        Rule("image-python-mismatch", _E, "`--image`: the image's Python is outside requires-python or every resolution of the lock"),
        Rule("image-cuda-mismatch", _E, "`--image`: `uv sync` installs a build for another CUDA major than the image has (`-cu13` packages, `+cu128` versions)"),
        Rule("unused-suppression", _W, "a `# depsync: ignore[rule-id]` comment suppresses nothing (no such finding there, an unknown id, or a place Docker does not read as a comment)"),
    )
}


def rule_table() -> str:
    """The README's rule table (Markdown), generated from RULES so the two cannot drift."""
    rows = ["| rule | default | finds |", "|---|---|---|"]
    rows += [f"| `{r.id}` | {r.severity} | {r.summary} |" for r in RULES.values()]
    return "\n".join(rows) + "\n"
