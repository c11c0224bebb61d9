"""Read the traces a command names: on the engine asked for, with a progress bar, diagnostics on stderr.

`analyze_paths` is the one call from a command to `runner.analyze`; `StderrProgress` is its progress bar.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import typer

from contexttrace.cli.output import Notes, color_enabled
from contexttrace.errors import ExitCode
from contexttrace.reading import Trace
from contexttrace.reading.collector import leave_for_exit
from contexttrace.render.diagnostics import render_diagnostics
from contexttrace.reports.results import RunResult
from contexttrace.run.engine import EngineError, EngineName, open_engine
from contexttrace.run.runner import analyze
from contexttrace.storage.replay import note_paths


class StderrProgress:
    """A progress bar on stderr for long runs; silent when stderr is not a terminal.

    Called as `runner.analyze`'s `progress` with (traces done, traces in all); `close` stops the bar.
    Fewer than 8 traces show no bar.
    """

    def __init__(self, color: bool | None = None) -> None:
        self._color = color  # --color/--no-color, or None: `color_enabled` decides for stderr, as for stdout
        self._bar: Any = None  # a rich Progress, made on first use (rich is imported only then)
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if total < 8 or not sys.stderr.isatty():
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import Progress

            # the CLI's one colour rule (`color_enabled`: the flag, else NO_COLOR, TERM=dumb, a terminal);
            # rich's own `no_color=False` would override NO_COLOR
            console = Console(stderr=True, no_color=not color_enabled(self._color, sys.stderr))
            self._bar = Progress(console=console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task("reading traces", total=total)
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        """Stop the bar (it leaves no line behind); nothing when none was shown."""
        if self._bar is not None:
            self._bar.stop()


def analyze_paths(
    paths: list[str],
    window: int | None,
    color: bool | None,
    cache: bool = True,
    engine: EngineName = EngineName.LOCAL,
    scheduler: str | None = None,
    build: Callable[[Trace, int | None], Any] | None = None,
    notes: Notes | None = None,
) -> RunResult:
    """Read and report the traces `paths` name (`runner.analyze`), and print its diagnostics on stderr.

    Parameters
    ----------
    paths
        The command's PATHs (empty: the default session roots).
    window
        `--window` in tokens, or None.
    color
        `--color`/`--no-color` for the progress bar, or None (`color_enabled` decides).
    cache
        Use the result store (False: `--no-cache`).
    engine, scheduler
        `--engine` and `--scheduler` (`engine.open_engine`).
    build
        What turns each trace into its report; None: `runner.analyze`'s default (a `context trace` report).
    notes
        Where the diagnostics go (`output.Notes`: ``-q``, ``-v``, held for the table on a terminal); None:
        printed on stderr at once.

    Returns
    -------
    RunResult
        The reports in argument order and the failures.

    Raises
    ------
    typer.Exit
        The engine cannot run (exit 2; its message on stderr).
    """
    note_paths(paths)  # what a replay of this command line must find unchanged
    progress = StderrProgress(color)
    try:
        with open_engine(engine, scheduler, paths=paths) as reader:
            if build is None:  # the runner's own default: a `context trace` report
                run = analyze(paths, window=window, progress=progress, cache=cache, engine=reader)
            else:
                run = analyze(paths, window=window, progress=progress, cache=cache, engine=reader, build=build)
            leave_for_exit(run)  # (its reports: 4.5 ms to free after a run over 851 traces)
            notices = list(getattr(reader, "notices", ()))  # the scheduler lost mid-run (docs/dask.md)
    except EngineError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(ExitCode.USAGE) from None
    finally:
        progress.close()
    (notes or Notes(terminal=False)).add([*notices, *render_diagnostics(run)])
    return run
