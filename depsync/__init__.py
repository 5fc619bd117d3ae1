"""depsync: keep pyproject.toml, uv.lock and the CI Dockerfile consistent."""

__version__ = "0.2.0"
HOMEPAGE = "https://github.com/depsync/depsync"  # [project.urls] Homepage (tests/test_sarif.py holds them equal)
RULES_URL = HOMEPAGE + "#rules"  # the README's rule table; `depsync rule ID` prints a rule's page
