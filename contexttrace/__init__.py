"""contexttrace: what an AI coding agent held in its context window, from recorded Claude Code traces.

Reading (`reader`) → normalised Polars frames (`schema`) → pure metrics (`metrics`) → reports
(`report`) → rendering (`render`) → a thin Typer CLI (`cli`).
"""

from __future__ import annotations

__version__ = "0.1.0"

from contexttrace.errors import ContextTraceError, EmptyTraceError, ExitCode, TraceFormatError, TraceReadError
from contexttrace.reading import Trace, read_trace
from contexttrace.reports.trace import RunResult, TraceReport, build_report
from contexttrace.run.runner import analyze

__all__ = [
    "ContextTraceError",
    "EmptyTraceError",
    "ExitCode",
    "RunResult",
    "Trace",
    "TraceFormatError",
    "TraceReadError",
    "TraceReport",
    "__version__",
    "analyze",
    "build_report",
    "read_trace",
]
