"""The command-line interface: the only package that imports Typer (`contexttrace` is its console script)."""

from contexttrace.cli.app import main

__all__ = ["main"]
