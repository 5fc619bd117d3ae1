"""Renderers: Findings -> text for people (rich), JSON for tools, GitHub annotations."""
