"""contexttrace: what an AI coding agent held in its context window, from recorded traces.

The public API: `analyze` (paths → a `RunResult` of `TraceReport`s and failures), `read_trace` (one file →
`Trace` objects with Polars frames), `build_report`, and the errors. The layers, top to bottom: `cli`,
`render`, `run`, `storage`, `select`, `reports`, `analysis`, `discover`, `reading`, `errors`
(docs/architecture.md).
"""

from __future__ import annotations

from contexttrace.errors import ContextTraceError, EmptyTraceError, ExitCode, TraceFormatError, TraceReadError
from contexttrace.reading import Trace, read_trace
from contexttrace.reports.trace import RunResult, TraceReport, build_report
from contexttrace.run.runner import analyze
from contexttrace.version import __version__

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
