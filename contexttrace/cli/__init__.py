"""The command-line interface: the only package that imports Typer (`contexttrace` is its console script).

`app.py` holds the Typer apps and registers the commands; each command is a module of its own (`trace`,
`usage`, `tools`, `sources`, `files`, `history`, `compare`, `report`, `schema`, `cache`) over the options
of `options.py`, printed through `output.py`, reading traces through `analyze.py`. `main` first asks
`storage.replay` for the kept output of a reading command whose inputs did not change (Typer not imported).
"""

import atexit
import errno
import io
import os
import sys
import threading
from typing import NoReturn


def main() -> None:
    """Run the command-line interface (under `console`: the `contexttrace` console script, `python -m
    contexttrace`, `cli.py`): a reading command whose every input is as when it last ran prints its kept
    output (`storage.replay`); anything else runs the Typer app (`cli.app.main`), its output kept when it
    may be replayed.

    A standard output that cannot take what a command writes (closed with ``>&-``, a full disk, ``/dev/full``,
    a descriptor opened for reading), whether the command runs or its kept output is replayed, ends the run
    with one line on stderr naming it and exit code 1 (never kept for replay), not a traceback; a pipe whose
    reader went away (``| head``) is no error. Raises SystemExit.
    """
    if sys.stdout is None:
        sys.stdout = ClosedStream()
    from contexttrace.storage.replay import replay_or_run

    try:
        replay_or_run(_run_app)
    except OSError as exc:
        if exc.filename is not None or exc.errno == errno.EPIPE or sys.stderr is None:
            raise  # a file the command named, or a pipe's reader gone: not the output stream's doing
        sys.stderr.write(f"Error: cannot write to standard output: {exc.strerror or exc}\n")
        raise SystemExit(1) from None


class ClosedStream(io.TextIOBase):
    """What stands for a standard output the shell closed (``>&-``): Python leaves it None, so the first
    ``sys.stdout.write`` would fail with an AttributeError deep inside a command; every write here raises
    the OSError a closed descriptor gives (EBADF), which `main` reports in one line."""

    def isatty(self) -> bool:
        """Never a terminal."""
        return False

    def writable(self) -> bool:
        """Never written to."""
        return False

    def write(self, s: str) -> int:
        """Raise OSError(EBADF): there is nowhere to write."""
        raise OSError(errno.EBADF, "it is closed")


def console() -> NoReturn:
    """The console script's and `python -m contexttrace`'s entry: `main`, then the process ends at once.

    What a command made (the traces and reports of a run over a projects folder: millions of objects) is not
    freed one object at a time when the process exits: once `main` is done, the exit functions run
    (`atexit`), the standard streams are flushed and the process ends with `main`'s exit code (`os._exit`).
    After `context trace --json` over the 851 traces of the real-content corpus, freeing them took 11 ms
    (measured). It ends as Python does instead (`SystemExit`) while another thread runs, when a stream
    cannot be flushed (a pipe closed) or when the exit code is no number from 0 to 255: nothing changes but
    the time. Programs that call `main` themselves keep the usual exit.
    """
    from contexttrace.reading.collector import end_without_freeing

    end_without_freeing()  # what a run read is not freed after it (`collector.leave_for_exit`)
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code
    if not isinstance(code, int) or not 0 <= code <= 255 or threading.active_count() > 1:
        raise SystemExit(code)
    atexit._run_exitfuncs()  # what the interpreter runs at its exit (they are then unregistered)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None  # Python's own exit says what went wrong, as without this
    os._exit(int(code))  # (an `ExitCode` is an int)


def _run_app() -> None:
    from contexttrace.cli.app import main as app_main

    app_main()


__all__ = ["ClosedStream", "console", "main"]
