"""The command-line interface: the only package that imports Typer (`contexttrace` is its console script).

`app.py` holds the Typer apps and registers the commands; each command is a module of its own (`trace`,
`usage`, `tools`, `sources`, `files`, `history`, `compare`, `report`, `schema`, `cache`) over the options
of `options.py`, printed through `output.py`, reading traces through `analyze.py`.
"""

from contexttrace.cli.app import main

__all__ = ["main"]
