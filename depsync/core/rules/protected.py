"""Protected paths (default .github/CODEOWNERS) must be identical to the owner branch."""

from __future__ import annotations

from collections.abc import Iterator

from depsync.core.findings import Finding
from depsync.core.rules.inputs import CheckInputs
from depsync.core.rules.registry import RULES


def check(inputs: CheckInputs) -> Iterator[Finding]:
    ref = inputs.owner_ref
    if inputs.protected_unchecked and inputs.config.protected_paths:
        yield RULES["protected-unchecked"].finding(
            inputs.config.protected_paths[0], 0, inputs.protected_unchecked, "run inside a clone that has the owner ref (git fetch origin)"
        )
    for item in inputs.protected:
        if item.status == "same":
            continue
        message = {
            "differs": f"{item.path} differs from {ref}",
            "missing-here": f"{item.path} exists on {ref} but is missing here",
            "missing-owner": f"{item.path} does not exist on {ref} but exists here",
        }[item.status]
        fix = (
            f"git rm {item.path}"
            if item.status == "missing-owner"
            else f"git checkout {ref} -- {item.path}"
        )
        yield RULES["protected-path-changed"].finding(item.path, 0, message, fix)
