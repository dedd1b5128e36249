"""Renderers: turn result models into terminal tables, JSON, SARIF, Markdown."""
