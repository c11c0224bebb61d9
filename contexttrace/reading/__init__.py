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

from typing import TYPE_CHECKING

from contexttrace.lazy import lazy_getattr

if TYPE_CHECKING:
    from contexttrace.reading.api import FORMATS, format_of, read_trace, split_point
    from contexttrace.reading.claude.builder import Builder
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
    from contexttrace.reading.identity import drop_inherited_calls, inherited_calls
    from contexttrace.reading.model import TABLES, ColumnView, LineNote, SourceFile, Table, Trace

#: Where each public name lives, imported on first use (PEP 562): importing `reading.contract` or
#: `reading.model` (the tables' columns, the `Trace`) does not load the readers themselves.
_LAZY = {
    "FORMATS": "contexttrace.reading.api",
    "format_of": "contexttrace.reading.api",
    "read_trace": "contexttrace.reading.api",
    "split_point": "contexttrace.reading.api",
    "Builder": "contexttrace.reading.claude.builder",
    "drop_inherited_calls": "contexttrace.reading.identity",
    "inherited_calls": "contexttrace.reading.identity",
    "DENIAL_PREFIXES": "contexttrace.reading.claude.content",
    "MAX_TOKENS": "contexttrace.reading.claude.content",
    "result_size": "contexttrace.reading.claude.content",
    "OVERSIZED_LINE_BYTES": "contexttrace.reading.claude.lines",
    "SPLIT_MIN_BYTES": "contexttrace.reading.claude.split",
    "TAIL_BYTE_COST": "contexttrace.reading.claude.split",
    "PendingTail": "contexttrace.reading.claude.split",
    "TailPart": "contexttrace.reading.claude.split",
    "read_tail": "contexttrace.reading.claude.split",
    "stable_text_hash": "contexttrace.reading.claude.split",
    "MAX_LINE_NOTES": "contexttrace.reading.claude.state",
    "gc_paused": "contexttrace.reading.collector",
    "TABLES": "contexttrace.reading.model",
    "ColumnView": "contexttrace.reading.model",
    "LineNote": "contexttrace.reading.model",
    "SourceFile": "contexttrace.reading.model",
    "Table": "contexttrace.reading.model",
    "Trace": "contexttrace.reading.model",
}


#: A public name of `_LAZY`, imported from its module on first use.
__getattr__ = lazy_getattr("contexttrace.reading", _LAZY, globals())


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
