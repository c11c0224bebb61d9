"""`schema`: the JSON Schema of one object of a JSON output."""

from __future__ import annotations

import typer

from contexttrace.cli.options import SchemaNameArg


def schema_command(name: SchemaNameArg = None) -> None:
    """Print the JSON Schema (draft 2020-12) of one object of a JSON output: trace (context trace --json), usage,
    usage-group (context usage --group-by --json), history (context history --json), compare (context compare
    --json). Each object carries its schema_version. Without NAME, lists the names."""
    from contexttrace.render.schemas import render_schema_names
    from contexttrace.reports.schemas import SCHEMA_NAMES, schema_text

    if name is None:
        typer.echo(render_schema_names())
        return
    if name not in SCHEMA_NAMES:
        raise typer.BadParameter(f"{name!r}: one of {', '.join(SCHEMA_NAMES)}", param_hint="NAME")
    typer.echo(schema_text(name).rstrip("\n"))
