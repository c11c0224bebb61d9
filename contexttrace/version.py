"""The package's version: one place, read by the package metadata (pyproject.toml) and every output that names it."""

__version__ = "0.1.0"
