"""Rules on loaded models (pure): real Megatron-LM data plus small synthetic triples."""

from __future__ import annotations

import pytest
from conftest import BUNDLED, megatron
from support import LOCK, PYPROJECT, inputs

from depsync.core.config import load_config
from depsync.core.findings import Severity
from depsync.core.model.dockerfile import Dockerfile
from depsync.core.rules.inputs import CheckInputs, ProtectedFile
from depsync.core.rules.metadata import follow_rev, local_sha
from depsync.core.rules.registry import RULES
from depsync.core.rules.run import run_rules

DEV_DOCKERFILE = (BUNDLED / "megatron-dev" / "docker" / "Dockerfile.ci.dev").read_text()


def rules_of(findings) -> list[str]:
    return [f.rule for f in findings]


# -- the real data -----------------------------------------------------------------


def test_megatron_dev_errors_only_on_flags_the_cuda13_lock_renamed() -> None:
    findings = run_rules(inputs(megatron("dev", "pyproject.toml"), megatron("dev", "uv.lock"), (DEV_DOCKERFILE,)))
    errors = [f for f in findings if f.severity == Severity.ERROR]
    # the 12 nvidia-*-cu12 flags: the lock has their CUDA 13 builds, which the image now installs
    assert {f.rule for f in errors} == {"docker-no-install-renamed"} and len(errors) == 12
    # what does warn is real: branch/tag pins and --no-install-package names the cu13 lock lacks
    assert set(rules_of(findings)) <= {"source-pin-not-commit", "docker-stale-no-install", "docker-no-install-renamed", "docker-not-locked", "uv-lock-newer-than-pin"}
    # dev's lock is revision 3: written by a newer uv than the image's 0.7.2, which writes revision 2
    (newer,) = [f for f in findings if f.rule == "uv-lock-newer-than-pin"]
    assert newer.line == 11 and "revision 3" in newer.message and "uv 0.7.2 writes revision 2" in newer.message


@pytest.mark.parametrize("pyproject_side, lock_side", [("dev", "main"), ("main", "dev")])
def test_megatron_crossed_pairs_are_stale(pyproject_side: str, lock_side: str) -> None:
    findings = run_rules(inputs(megatron(pyproject_side, "pyproject.toml"), megatron(lock_side, "uv.lock")))
    stale = [f for f in findings if f.rule == "lock-stale"]
    assert stale, "a crossed pyproject/lock must be stale"
    text = "\n".join(f.message for f in stale)
    assert "requires-python" in text
    assert "extras changed" in text
    assert all(f.line > 0 for f in stale)
    if pyproject_side == "dev":
        # dev's TransformerEngine pin is not what main's lock records
        assert "transformer-engine" in text


def test_megatron_main_dockerfile_flags_against_dev_pyproject() -> None:
    main_style = DEV_DOCKERFILE.replace("--extra mlm \\", "--extra mlm \\\n        --extra ssm \\\n        --extra te \\")
    findings = run_rules(inputs(megatron("dev", "pyproject.toml"), megatron("dev", "uv.lock"), (main_style,)))
    unknown = [f for f in findings if f.rule == "docker-unknown-extra"]
    assert [(f.line, f.message.split("`")[1]) for f in unknown] == [
        (38, "uv sync --extra ssm"),
        (39, "uv sync --extra te"),
    ]
    assert all(f.file == "docker/Dockerfile.ci.dev" and f.severity == Severity.ERROR for f in unknown)


def test_megatron_lts_image_type_via_build_args() -> None:
    lts = Dockerfile.from_text(DEV_DOCKERFILE, "docker/Dockerfile.ci.lts", {"IMAGE_TYPE": "lts"})
    base = inputs(megatron("dev", "pyproject.toml"), megatron("dev", "uv.lock"))
    findings = run_rules(CheckInputs(base.config, base.pyproject, base.lock, (lts,)))
    assert "docker-unknown-extra" not in rules_of(findings)
    bogus = Dockerfile.from_text(DEV_DOCKERFILE, "docker/Dockerfile.ci.lts", {"IMAGE_TYPE": "nightly"})
    findings = run_rules(CheckInputs(base.config, base.pyproject, base.lock, (bogus,)))
    assert rules_of(findings).count("docker-unknown-extra") == 1


def test_megatron_main_metadata_names_old_flash_mla_sha() -> None:
    findings = run_rules(inputs(megatron("main", "pyproject.toml"), megatron("main", "uv.lock")))
    mismatch = [f for f in findings if f.rule == "metadata-rev-mismatch"]
    assert len(mismatch) == 1 and "flash-mla" in mismatch[0].message
    assert "1.0.0+b7643bd" in mismatch[0].fix


# -- synthetic ---------------------------------------------------------------------



def test_synthetic_consistent_triple_is_clean() -> None:
    assert run_rules(inputs(PYPROJECT, LOCK)) == []


def test_stale_specifier_names_pyproject_line() -> None:
    findings = run_rules(inputs(PYPROJECT.replace("alpha>=1", "alpha>=2"), LOCK))
    (finding,) = findings
    assert (finding.rule, finding.file, finding.line) == ("lock-stale", "pyproject.toml", 9)
    assert "alpha>=2" in finding.message and "alpha>=1" in finding.message
    assert "depsync lock" in finding.fix


def test_moved_git_rev_is_stale() -> None:
    moved = PYPROJECT.replace('rev = "0123456789abcdef0123456789abcdef01234567"', 'rev = "fedcba9876543210fedcba9876543210fedcba98"')
    assert rules_of(run_rules(inputs(moved, LOCK))) == ["lock-stale"]


def test_hand_edits_in_lock() -> None:
    edited = LOCK.replace('version = "1.2"', 'version = "1.3"', 1)
    assert rules_of(run_rules(inputs(PYPROJECT, edited))).count("lock-artifact-mismatch") == 2
    unresolved = LOCK.replace("#0123456789abcdef0123456789abcdef01234567", "")
    assert "lock-git-unresolved" in rules_of(run_rules(inputs(PYPROJECT, unresolved)))
    dangling = LOCK.replace('dependencies = [{ name = "alpha" }]', 'dependencies = [{ name = "alpha" }, { name = "ghost" }]')
    assert "lock-dangling-dependency" in rules_of(run_rules(inputs(PYPROJECT, dangling)))
    bad_hash = LOCK.replace("sha256:" + "a" * 64, "sha256:zz", 1)
    assert "lock-bad-hash" in rules_of(run_rules(inputs(PYPROJECT, bad_hash)))


def test_source_policy() -> None:
    tagged = PYPROJECT.replace('rev = "0123456789abcdef0123456789abcdef01234567"', 'tag = "v1"')
    findings = run_rules(inputs(tagged))
    assert rules_of(findings) == ["source-pin-not-commit"]
    assert findings[0].severity == Severity.WARNING and "tag 'v1'" in findings[0].message
    inert = PYPROJECT + 'gamma = { git = "https://example.com/gamma.git", rev = "' + "b" * 40 + '" }\n'
    assert rules_of(run_rules(inputs(inert))) == ["source-inert"]
    config = load_config({"allowed-hosts": ["github.com"]})
    assert rules_of(run_rules(inputs(PYPROJECT, config=config))) == ["source-host-not-allowed"]


def test_severity_override_and_off() -> None:
    tagged = PYPROJECT.replace('rev = "0123456789abcdef0123456789abcdef01234567"', 'tag = "v1"')
    config = load_config({"severity": {"source-pin-not-commit": "error"}})
    assert run_rules(inputs(tagged, config=config))[0].severity == Severity.ERROR
    config = load_config({"severity": {"source-pin-not-commit": "off"}})
    assert run_rules(inputs(tagged, config=config)) == []


def test_dockerfile_rules() -> None:
    dockerfile = (
        "ARG UV_VERSION=0.7.2\nFROM base\n"
        "RUN uv sync --extra gpu --extra nope --group test --only-group ghost --no-install-package alpha --no-install-package zeta\n"
    )
    findings = run_rules(inputs(PYPROJECT, LOCK, (dockerfile,)))
    assert sorted(rules_of(findings)) == ["docker-not-locked", "docker-stale-no-install", "docker-unknown-extra", "docker-unknown-group"]
    assert all(f.line == 3 for f in findings)


def test_uv_version_rules() -> None:
    pyproject = PYPROJECT.replace("[tool.uv.sources]", '[tool.uv]\nrequired-version = ">=0.8"\n\n[tool.uv.sources]')
    findings = run_rules(inputs(pyproject, LOCK, ("ARG UV_VERSION=0.7.2\nFROM base\n",)))
    assert rules_of(findings) == ["uv-version-mismatch"]
    two = inputs(PYPROJECT, LOCK, ("ARG UV_VERSION=0.7.2\nFROM base\n", "ARG UV_VERSION=0.8.0\nFROM base\n"))
    assert rules_of(run_rules(two)).count("uv-version-inconsistent") == 2
    old = inputs(PYPROJECT, LOCK, ("ARG UV_VERSION=0.2.9\nFROM base\n",))
    assert rules_of(run_rules(old)) == ["uv-lock-format"]


@pytest.mark.parametrize(
    ("revision", "pin", "expected"),
    [
        (3, "0.7.2", True),  # Megatron-LM dev: revision 3, the image pins 0.7.2 (writes 2, measured)
        (2, "0.7.2", False),
        (3, "0.8.5", False),  # between 0.8.0 (2) and 0.9.0 (3): held to 0.9.0's revision, so no finding
        (3, "0.9.0", False),
        (5, "0.11.0", True),
        (5, "0.13.9", False),
        (9, "0.14.0", False),  # past the last measured release: no known bound, no finding
    ],
)
def test_lock_written_by_a_newer_uv_than_the_pin(revision: int, pin: str, expected: bool) -> None:
    lock = LOCK.replace("revision = 2", f"revision = {revision}", 1)
    findings = run_rules(inputs(PYPROJECT, lock, (f"ARG UV_VERSION={pin}\nFROM base\n",)))
    assert ("uv-lock-newer-than-pin" in rules_of(findings)) is expected


def test_metadata_follows_rev() -> None:
    pyproject = PYPROJECT + '\n[[tool.uv.dependency-metadata]]\nname = "beta"\nversion = "0.3+deadbeef"\n'
    findings = [f for f in run_rules(inputs(pyproject)) if f.rule == "metadata-rev-mismatch"]
    assert len(findings) == 1 and pyproject.splitlines()[findings[0].line - 1] == 'name = "beta"'
    assert 'version = "0.3+01234567"' in findings[0].fix
    assert local_sha("2.14.0+f031cf87") == "f031cf87" and local_sha("1.0.4.post1") is None
    assert follow_rev("2.14.0+f031cf87", "ABCDEF0123456789") == "2.14.0+abcdef01"


def test_protected_paths() -> None:
    base = inputs(PYPROJECT, LOCK, protected=(ProtectedFile(".github/CODEOWNERS", "differs"),), owner_ref="origin/dev")
    (finding,) = run_rules(base)
    assert finding.rule == "protected-path-changed"
    assert finding.fix == "git checkout origin/dev -- .github/CODEOWNERS"


def test_every_rule_has_summary() -> None:
    assert all(rule.summary and rule.id == key for key, rule in RULES.items())


@pytest.mark.parametrize(("required", "exact"), [
    ("==0.7.2", "0.7.2"), ("0.7.2", "0.7.2"), (" == 0.13.9 ", "0.13.9"),
    (">=0.7", None), ("==0.7.*", None), ("==0.7.2,<1", None), ("latest", None), ("", None), (None, None), (7, None),
])
def test_exact_required_version(required: object, exact: str | None) -> None:
    """The one release a `required-version` names: what `depsync lock` and the check action install."""
    from depsync.core.rules.uv_version import exact_required_version

    assert exact_required_version(required) == exact
