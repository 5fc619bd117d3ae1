"""Pure models of the triple (pyproject.toml, uv.lock, Dockerfiles), built from text."""
