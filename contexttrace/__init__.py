"""contexttrace: what an AI coding agent held in its context window, from recorded traces.

The public API: `analyze` (paths → a `RunResult` of `TraceReport`s and failures), `read_trace` (one file →
`Trace` objects with Polars frames), `build_report`, and the errors. The layers, top to bottom: `cli`,
`render`, `run`, `storage`, `select`, `reports`, `analysis`, `discover`, `reading`, `errors`
(docs/architecture.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contexttrace.errors import ContextTraceError, EmptyTraceError, ExitCode, TraceFormatError, TraceReadError
from contexttrace.lazy import lazy_getattr
from contexttrace.version import __version__

if TYPE_CHECKING:
    from contexttrace.reading import Trace, read_trace
    from contexttrace.reports.results import RunResult, TraceReport
    from contexttrace.reports.trace import build_report
    from contexttrace.run.runner import analyze

#: The public names imported when first used (`import contexttrace.cli` loads neither the reader nor the
#: reports until a command needs them): name -> its module.
_LAZY = {
    "Trace": "contexttrace.reading",
    "read_trace": "contexttrace.reading",
    "RunResult": "contexttrace.reports.results",
    "TraceReport": "contexttrace.reports.results",
    "build_report": "contexttrace.reports.trace",
    "analyze": "contexttrace.run.runner",
}


#: `contexttrace.analyze` and the other public names of `_LAZY`, imported on first use (PEP 562).
__getattr__ = lazy_getattr("contexttrace", _LAZY, globals())


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
