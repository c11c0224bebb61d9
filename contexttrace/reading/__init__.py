"""Reading trace bytes into `Trace` objects: the one package that knows trace formats.

A trace file of any agent's format becomes one `Trace` per run (`model.py`): four column tables whose
columns `contract.py` fixes, the facts that are not rows, and what the trace records (`Trace.has`,
`contract.Capabilities`). The package's parts:

* `api`: `read_trace` and `split_point`, which pick a file's reader by its first bytes (`FORMATS`);
* `formats`: the seam, the `TraceFormat` protocol every reader implements;
* `files`, `urls`: opening a file (standard input, fsspec URLs, UTF-16 captures);
* `contract`, `model`: the tables' columns and the `Trace`;
* `claude/`: Claude Code's reader (stream-json captures and session transcripts with subagent files).

It never prints and never exits: problems are raised as `errors.ContextTraceError` or reported in the
returned `Trace`.
"""

from __future__ import annotations

from contexttrace.reading.api import FORMATS, format_of, read_trace, split_point
from contexttrace.reading.claude.builder import Builder
from contexttrace.reading.claude.calls import drop_inherited_calls, inherited_calls
from contexttrace.reading.claude.content import DENIAL_PREFIXES, MAX_TOKENS, result_size
from contexttrace.reading.claude.lines import OVERSIZED_LINE_BYTES
from contexttrace.reading.claude.split import (
    SPLIT_MIN_BYTES,
    TAIL_BYTE_COST,
    PendingTail,
    TailPart,
    read_tail,
    stable_text_hash,
)
from contexttrace.reading.claude.state import MAX_LINE_NOTES
from contexttrace.reading.collector import gc_paused
from contexttrace.reading.model import TABLES, ColumnView, LineNote, SourceFile, Table, Trace

__all__ = [
    "DENIAL_PREFIXES",
    "FORMATS",
    "MAX_LINE_NOTES",
    "MAX_TOKENS",
    "OVERSIZED_LINE_BYTES",
    "SPLIT_MIN_BYTES",
    "TABLES",
    "TAIL_BYTE_COST",
    "Builder",
    "ColumnView",
    "LineNote",
    "PendingTail",
    "SourceFile",
    "Table",
    "TailPart",
    "Trace",
    "drop_inherited_calls",
    "format_of",
    "gc_paused",
    "inherited_calls",
    "read_tail",
    "read_trace",
    "result_size",
    "split_point",
    "stable_text_hash",
]
