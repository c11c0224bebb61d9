"""The command-line interface: the only package that imports Typer (`contexttrace` is its console script).

`app.py` holds the Typer apps and registers the commands; each command is a module of its own (`trace`,
`usage`, `tools`, `sources`, `files`, `history`, `compare`, `report`, `schema`, `cache`) over the options
of `options.py`, printed through `output.py`, reading traces through `analyze.py`. `main` first asks
`storage.replay` for the kept output of a reading command whose inputs did not change (Typer not imported).
"""


def main() -> None:
    """Run the command-line interface (the `contexttrace` console script, `python -m contexttrace`, `cli.py`):
    a reading command whose every input is as when it last ran prints its kept output (`storage.replay`);
    anything else runs the Typer app (`cli.app.main`), its output kept when it may be replayed."""
    from contexttrace.storage.replay import replay_or_run

    replay_or_run(_run_app)


def _run_app() -> None:
    from contexttrace.cli.app import main as app_main

    app_main()


__all__ = ["main"]
