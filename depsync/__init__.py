"""depsync: keep pyproject.toml, uv.lock and the CI Dockerfile consistent."""

__version__ = "0.1.0"
