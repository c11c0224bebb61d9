"""Reading trace bytes into `Trace` objects: the one package that knows both trace formats.

A stream-json capture (`claude -p ... --output-format stream-json --verbose`) or a session transcript
(`~/.claude/projects/<project>/<session>.jsonl` plus its subagent files) becomes a `Trace`: four column
tables whose columns `schema.py` fixes, plus the few facts that are not rows. The stages, each a module
(docs/architecture.md draws the data flow):

* `lines`: bytes → lines (encodings, NUL damage, blank lines, lines skipped by their type);
* `records`: a line → a typed record (`msgspec` Structs, the lenient path for the rest);
* `formats`: what tells stream-json from transcripts (evidence, threads, key spellings, runs);
* `calls`: which lines are one model call, and calls copied across sessions;
* `content`: what a content block measures;
* `builder`: records → rows, in state classes that merge themselves;
* `feed`, `api`, `split`: a file read into builders, a trace read (whole or in two parts);
* `model`: the `Trace` and its tables.

It never prints and never exits: problems are raised as `errors.ContextTraceError` or reported in the
returned `Trace`.
"""

from __future__ import annotations

from contexttrace.reading.claude.api import read_trace
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
    split_point,
    stable_text_hash,
)
from contexttrace.reading.claude.state import MAX_LINE_NOTES
from contexttrace.reading.collector import gc_paused
from contexttrace.reading.model import TABLES, ColumnView, LineNote, SourceFile, Table, Trace

__all__ = [
    "DENIAL_PREFIXES",
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
    "gc_paused",
    "inherited_calls",
    "read_tail",
    "read_trace",
    "result_size",
    "split_point",
    "stable_text_hash",
]
