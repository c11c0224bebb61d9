"""Exceptions and exit codes.

The library raises `ContextTraceError` subclasses; it never prints or exits. Each error carries the
`path` (and, where one exists, the 1-based `line`) it is about, as attributes and in its message.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes of the command-line interface."""

    OK = 0  # every trace was read and reported
    TRACE_ERROR = 1  # at least one trace could not be read; the others were still reported
    USAGE = 2  # bad option or argument (the code Typer/Click use for usage errors)
    THRESHOLD = 3  # every trace was read, and one breached a --fail-on threshold (all still printed)


class ContextTraceError(Exception):
    """Base class of every error the library raises on purpose."""

    def __init__(self, path: str, reason: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")


class TraceReadError(ContextTraceError):
    """The file is missing, unreadable, a directory where a file was expected, or binary."""


class TraceFormatError(ContextTraceError):
    """The file holds no record of either trace format (stream-json or session transcript)."""


class EmptyTraceError(ContextTraceError):
    """The file is readable but holds no JSON record at all."""


class EngineError(ContextTraceError):
    """An engine that cannot run: its packages missing, its scheduler unreachable, an option it does not
    take. `path` names the option (``--engine dask``, ``--scheduler ADDRESS``)."""
