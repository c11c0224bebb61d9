"""Read trace bytes into `Trace` objects: the names callers import, kept where they always were.

The reader lives in the `reading` package (one module per stage: docs/architecture.md); this module
re-exports its public names so that `from contexttrace.reader import read_trace` and the like keep
working. New code may import from `contexttrace.reading` directly.
"""

from __future__ import annotations

from .errors import EmptyTraceError, TraceFormatError, TraceReadError
from .reading import (
    DENIAL_PREFIXES,
    MAX_LINE_NOTES,
    MAX_TOKENS,
    OVERSIZED_LINE_BYTES,
    SPLIT_MIN_BYTES,
    TABLES,
    TAIL_BYTE_COST,
    ColumnView,
    LineNote,
    PendingTail,
    SourceFile,
    Table,
    TailPart,
    Trace,
    drop_inherited_calls,
    gc_paused,
    inherited_calls,
    read_tail,
    read_trace,
    result_size,
    split_point,
    stable_text_hash,
)
from .reading.builder import Builder as _Builder

__all__ = [
    "DENIAL_PREFIXES",
    "MAX_LINE_NOTES",
    "MAX_TOKENS",
    "OVERSIZED_LINE_BYTES",
    "SPLIT_MIN_BYTES",
    "TABLES",
    "TAIL_BYTE_COST",
    "ColumnView",
    "EmptyTraceError",
    "LineNote",
    "PendingTail",
    "SourceFile",
    "Table",
    "TailPart",
    "Trace",
    "TraceFormatError",
    "TraceReadError",
    "_Builder",
    "drop_inherited_calls",
    "gc_paused",
    "inherited_calls",
    "read_tail",
    "read_trace",
    "result_size",
    "split_point",
    "stable_text_hash",
]
