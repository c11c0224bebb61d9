"""Read trace bytes into normalised frames: the one place that knows both trace formats.

This module turns the lines of a stream-json capture (`claude -p ... --output-format stream-json
--verbose`) or of a session transcript (`~/.claude/projects/<project>/<session>.jsonl` plus its subagent
files) into a `Trace`: four Polars frames whose columns `schema.py` fixes, plus the few facts that are not
rows (the `system/init` surface, the stream-json `result` totals, skipped-line diagnostics).

Rules it owns (see ../shared/FORMATS.md and the CASES it cites):

* Lines are split on ``b"\\n"`` only, read in binary and streamed (CASES B18, B20); each line is decoded
  with orjson at most once, and a line that no figure needs (progress, file-history snapshots, queue
  operations, ...) is recognised by its bytes and never decoded. A line that is not a JSON object is
  skipped and counted; it never drops the trace.
* A model call is an `assistant` line whose `message.usage` is an object and whose model is not
  `<synthetic>` nor flagged `isApiErrorMessage` (B07, B27). Lines with the same `message.id` and the same
  input-side usage are one call (B01, B03); the same id with different input-side usage is several calls
  and raises the "message ids not unique" warning (B04). The kept line is the one with the highest
  `output_tokens`, the last on a tie; tool uses are collected from every line and deduplicated by
  `tool_use.id`. A call written both on the main thread and in a sidechain is a main-thread call (B05).
* Threads: stream-json lines with a `parent_tool_use_id` and transcript lines with `isSidechain` belong to
  a subagent; lines of a subagent file belong to that subagent, of an `agent-acompact-*` file to the
  compaction summariser.
* stream-json files are split into runs at each `system/init`; non-JSON lines written after a run's
  `result` (a loop script's separator, say) are counted in the run that follows them.
* Rows are built while reading (split lines merged into their call, tool blocks deduplicated), and a
  `Trace` keeps its four tables as columns: each Polars frame is built the first time it is asked for
  (`Trace.frame`), and reports read the same columns through `Trace.view` without building one.

It never prints and never exits: problems are raised as `errors.ContextTraceError` or reported in the
returned `Trace`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import itertools
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import IO, TYPE_CHECKING, Any, TypeAlias

import orjson

from .errors import EmptyTraceError, TraceFormatError, TraceReadError
from .schema import (
    CALL_SCHEMA,
    EVENT_SCHEMA,
    FORMAT_STREAM_JSON,
    FORMAT_TRANSCRIPT,
    THREAD_COMPACTION,
    THREAD_MAIN,
    THREAD_SUBAGENT,
    TOOL_RESULT_SCHEMA,
    TOOL_USE_SCHEMA,
    polars_schema,
)

if TYPE_CHECKING:
    import polars as pl

#: How many bad lines per file are named one by one before the rest are only counted.
MAX_LINE_NOTES = 3

#: Above this size a line is decoded only if its bytes show it can hold a figure (CASES B20).
OVERSIZED_LINE_BYTES = 8 * 1024 * 1024

#: Top-level line types that hold no figure: skipped undecoded, by their bytes (`_needed`).
_SKIP_TYPES = frozenset(
    {b"progress", b"file-history-snapshot", b"queue-operation", b"attachment", b"last-prompt", b"stream_event"}
)
_TYPE_KEY = b'"type":"'
_OVERSIZED_NEEDED = (b'"usage"', b'"tool_use"', b'"tool_result"', b'"subtype"')

#: Texts of a tool result that mean a person or a rule refused the call (CASES B22).
DENIAL_PREFIXES = (
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action",
    "User rejected",
    "Permission to use ",
    "Claude requested permissions to ",
)
# Permission refusals written by the harness in `-p` mode: "This command requires approval", "This Bash
# command contains multiple operations. The following part requires approval: ...", "ls in '~/.claude' was
# blocked. For security, ..." (seen in the print-mode sample), and hook denials.
_DENIAL_RE = re.compile(
    r"denied this tool|Permission .{0,80} denied|requires approval|was blocked\. For security", re.IGNORECASE
)
_PERSISTED_SIZE_RE = re.compile(r"Output too large \(([\d.]+)\s*(B|KB|MB|GB)\)")
_SIZE_UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}
_COMMAND_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
)
_INTERRUPT_PREFIX = "[Request interrupted"
_THREAD_RANK = {THREAD_MAIN: 0, THREAD_SUBAGENT: 1, THREAD_COMPACTION: 2}


@dataclass(frozen=True)
class LineNote:
    """A skipped line: where it is and why it was skipped."""

    path: str
    line: int
    reason: str


@dataclass(frozen=True)
class SourceFile:
    """One file of a trace: the main file or one of its subagent files.

    `thread_kind` is the kind of thread its sidechain lines belong to; `agent_id` names the subagent
    (from the file name `agent-<id>.jsonl`); the `agent-<id>.meta.json` beside it is read with the file
    (`_agent_meta`), in the process that reads it.
    """

    path: str
    thread_kind: str = THREAD_MAIN
    agent_id: str | None = None


#: The four tables of a trace and their schemas.
TABLES: dict[str, dict[str, str]] = {
    "calls": CALL_SCHEMA,
    "tool_uses": TOOL_USE_SCHEMA,
    "tool_results": TOOL_RESULT_SCHEMA,
    "events": EVENT_SCHEMA,
}


class _ListColumn:
    """One column held as a Python list, with the one method of `polars.Series` the metrics use."""

    __slots__ = ("_values",)

    def __init__(self, values: list[Any]) -> None:
        self._values = values

    def to_list(self) -> list[Any]:
        """The values themselves (not a copy): read them, never change them."""
        return self._values


class ColumnView:
    """A table as Python lists, read through the same calls as a frame: `get_column(name).to_list()`,
    `height`, `columns`. Metrics read tables this way so that a report of a small trace never pays
    for building Polars frames it would turn straight back into lists."""

    __slots__ = ("_cols",)

    def __init__(self, cols: dict[str, list[Any]]) -> None:
        self._cols = cols

    def get_column(self, name: str) -> _ListColumn:
        """The column `name` (its values through `to_list()`); KeyError when the table has no such column."""
        return _ListColumn(self._cols[name])

    @property
    def height(self) -> int:
        """Rows in the table."""
        return len(next(iter(self._cols.values()), []))

    @property
    def columns(self) -> list[str]:
        """Column names, in schema order."""
        return list(self._cols)


#: A table as the metrics read it: a Polars frame, or the same columns as lists.
Table: TypeAlias = "pl.DataFrame | ColumnView"


@dataclass
class Trace:
    """One trace, read: its four tables and the facts that are not rows.

    `calls`, `tool_uses`, `tool_results` and `events` are Polars frames with the schemas of
    `schema.CALL_SCHEMA`, `TOOL_USE_SCHEMA`, `TOOL_RESULT_SCHEMA` and `EVENT_SCHEMA` (`TABLES`), built
    from the reader's columns the first time they are asked for; `view(table)` gives the same columns
    without building a frame. `result` is the last stream-json `result` line (a dict with `subtype`,
    `is_error`, `total_cost_usd`, `usage`, `modelUsage`, `duration_ms`, `duration_api_ms`,
    `num_turns`) or None; `surface` comes from `system/init` (None for transcripts, which record no init).
    """

    name: str
    path: str
    format: str
    session_id: str | None
    #: table name -> its frame, or its columns (dict of equal-length lists) until a frame is asked for
    tables: dict[str, Any] = field(default_factory=dict, repr=False)
    skipped_lines: int = 0
    oversized_lines: int = 0
    truncated_last_line: bool = False
    line_notes: list[LineNote] = field(default_factory=list)
    #: file -> lines skipped in it (the session file and each subagent file apart; a truncated last line
    #: not included: `truncated_last_line`)
    skipped_by_file: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    surface: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    result_count: int = 0
    cli_version: str | None = None
    cwd: str | None = None
    files: list[str] = field(default_factory=list)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    synthetic_errors: int = 0
    inherited_calls: int = 0
    #: Unix epoch ms of every timestamped user/assistant/system line (all threads), sorted, no nulls.
    timestamps_ms: list[int] = field(default_factory=list)
    #: True when `tables` hold only the call identity columns (`slimmed`): read the trace again for the rest.
    slim: bool = False

    def slimmed(self) -> Trace:
        """This trace with its tables cut to what `inherited_calls` reads (`calls`: message id, input-side
        usage, last timestamp): what a worker sends back with a report already built from the whole."""
        calls = self.view("calls")
        keep = {c: calls.get_column(c).to_list() for c in (*_KEY_COLUMNS, "end_ts_ms")}
        return Trace(**{**self.__dict__, "tables": {"calls": keep}, "timestamps_ms": [], "slim": True})

    def frame(self, table: str) -> pl.DataFrame:
        """The Polars frame of one of `TABLES`, built once from the reader's columns.

        Raises ValueError for a slim trace (`slimmed`), which holds only its call identity columns.
        """
        if self.slim:
            raise ValueError(f"{self.name}: a slim trace (call keys only) has no frames; read it again")
        value = self.tables[table]
        if isinstance(value, dict):
            import polars as pl  # only here: reading and reports never import Polars

            value = pl.DataFrame(value, schema=polars_schema(TABLES[table]))
            self.tables[table] = value
        return value  # type: ignore[no-any-return]

    def view(self, table: str) -> Table:
        """The table as it is held: the frame once built, else a `ColumnView` of its lists."""
        value = self.tables[table]
        return ColumnView(value) if isinstance(value, dict) else value

    @property
    def calls(self) -> pl.DataFrame:
        """One row per model call (`schema.CALL_SCHEMA`)."""
        return self.frame("calls")

    @property
    def tool_uses(self) -> pl.DataFrame:
        """One row per tool_use block (`schema.TOOL_USE_SCHEMA`)."""
        return self.frame("tool_uses")

    @property
    def tool_results(self) -> pl.DataFrame:
        """One row per tool_result block (`schema.TOOL_RESULT_SCHEMA`)."""
        return self.frame("tool_results")

    @property
    def events(self) -> pl.DataFrame:
        """One row per other event: compactions, prompts, errors, durations (`schema.EVENT_SCHEMA`)."""
        return self.frame("events")


#: Usage counts at or above this are not token counts (JSON numbers past 2**53 lose precision anyway).
MAX_TOKENS = 2**53


_NOT_JSON = object()


def _loads_lenient(line: bytes) -> Any:
    """Decode a line orjson refused, or return `_NOT_JSON`.

    The stdlib accepts escaped lone surrogates (CASES B19), which Claude Code writes for non-UTF-8 bytes
    and for emoji cut in half; each lone surrogate is replaced by U+FFFD (one code point for one, so every
    length stays exact), in keys and values at any depth, so no string that reaches a frame or the JSON
    output can fail to encode (fuzz 06, 08). A raw byte that is not UTF-8 is read as U+FFFD too, so the
    line still counts. Nesting too deep to decode is not JSON to us.
    """
    try:
        value = json.loads(line.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return _NOT_JSON
    return _scrubbed(value) if _SURROGATE_ESCAPE.search(line) else value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _scrubbed(value: Any) -> Any:
    """`value` (decoded JSON) with every lone surrogate in its strings and keys replaced by U+FFFD; walked
    without recursion (a line may nest hundreds of levels deep). Containers are changed in place."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                item = node[key]
                if isinstance(item, str):
                    item = _SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
                if _SURROGATE.search(key):
                    del node[key]
                    key = _SURROGATE.sub("\ufffd", key)
                node[key] = item
        elif isinstance(node, list):
            for i, item in enumerate(node):
                if isinstance(item, str):
                    node[i] = _SURROGATE.sub("\ufffd", item)
                elif isinstance(item, (dict, list)):
                    stack.append(item)
    return value


def result_size(content: Any) -> tuple[int, int, int, int]:
    """Measure a tool_result's content: (text chars, image blocks, image bytes, unknown blocks).

    Parameters
    ----------
    content
        `tool_result.content`: a string, a list of blocks (`text`, `image`, others), or missing.

    Returns
    -------
    tuple of int
        Characters of text (a string's length, or the sum of its `text` blocks' lengths; Python code
        points, exact), the number of image blocks, their decoded size in bytes (from the base64 length,
        exact to the byte), and the number of blocks of any other type (skipped).

    Examples
    --------
    >>> result_size([{"type": "text", "text": "Screenshot"}, {"type": "image", "source": {"data": "QUJD"}}])
    (10, 1, 3, 0)
    """
    if content is None:
        return 0, 0, 0, 0
    if isinstance(content, str):
        return len(content), 0, 0, 0
    if not isinstance(content, list):
        return 0, 0, 0, 1
    chars = images = image_bytes = unknown = 0
    for block in content:
        if not isinstance(block, dict):
            unknown += 1
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                chars += len(text)
        elif kind == "image":
            images += 1
            source = block.get("source")
            data = source.get("data") if isinstance(source, dict) else None
            if isinstance(data, str):
                padding = 2 if data.endswith("==") else 1 if data.endswith("=") else 0
                image_bytes += max(0, len(data) * 3 // 4 - padding)  # "==" alone: 0 bytes, never -1 (fuzz 12)
        else:
            unknown += 1
    return chars, images, image_bytes, unknown


def _first_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                return str(block["text"])
    return ""


def _persisted_bytes(text: str) -> int | None:
    """≈ bytes of a persisted output as its preview states them ("Output too large (1.2MB)"); None when
    the preview states no size, or one that is not a number or out of range (fuzz 02, 02b)."""
    match = _PERSISTED_SIZE_RE.search(text[:400])
    if match is None:
        return None
    try:
        size = int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])
    except (ValueError, OverflowError):
        return None
    return size if 0 <= size < MAX_TOKENS else None


def _is_task_notification(rec: dict[str, Any], text: str) -> bool:
    """A user line the harness writes when a background command or agent finishes (CASES B31): its
    `origin.kind` is `task-notification`, or (older lines) its text starts with `<task-notification>`."""
    origin = rec.get("origin")
    if type(origin) is dict and origin.get("kind") == "task-notification":
        return True
    return text.lstrip().startswith("<task-notification>")


def _is_denial(text: str) -> bool:
    head = text[:300]
    return head.startswith(DENIAL_PREFIXES) or _DENIAL_RE.search(head) is not None


#: Positions of columns in a call row (rows are lists in `CALL_SCHEMA` order).
_CALL_POS = {name: i for i, name in enumerate(CALL_SCHEMA)}
_C_THREAD, _C_KIND, _C_OUT, _C_END_TS, _C_PREV_TS, _C_LINES = (
    _CALL_POS[n] for n in ("thread", "thread_kind", "output_tokens", "end_ts_ms", "prev_ts_ms", "n_lines")
)
_C_SEQ, _C_MID, _C_INPUT, _C_CACHE_WRITE, _C_CACHE_READ = (
    _CALL_POS[n] for n in ("seq", "message_id", "input_tokens", "cache_write_tokens", "cache_read_tokens")
)


def _call_key(row: list[Any]) -> Any:
    """A call row's identity key, as `_Builder._assistant` made it: message id and input-side usage, or
    the seq of a line without a message id."""
    mid = row[_C_MID]
    return (mid, row[_C_INPUT], row[_C_CACHE_WRITE], row[_C_CACHE_READ]) if mid is not None else row[_C_SEQ]


_TS_COLUMNS = ("ts_ms", "end_ts_ms", "prev_ts_ms")


def _columns(rows: list[Any], names: Iterable[str]) -> dict[str, list[Any]]:
    """Rows (sequences in `names` order) as a dict of column lists."""
    names = tuple(names)
    if not rows:
        return {n: [] for n in names}
    return dict(zip(names, map(list, zip(*rows, strict=True)), strict=True))


class _Builder:
    """Accumulates one trace's rows (one Python list or tuple per row, in schema column order), then
    turns them into the trace's column tables once."""

    def __init__(self, name: str, path: str) -> None:
        self.name = name
        self.path = path
        self.call_rows: list[list[Any]] = []  # `CALL_SCHEMA` order; merged lines update them in place
        self.call_at: dict[Any, int] = {}  # call identity key -> its row in `call_rows`
        self.key_of_id: dict[str, Any] = {}  # message.id -> the first identity key seen with it
        self.clashing_ids: set[str] = set()  # message ids seen with different input-side usage
        self.use_rows: list[tuple[Any, ...]] = []  # `_USE_ROW` order: the call's row, not its thread
        self.use_ids: set[str] = set()
        self.result_ids: set[str] = set()
        self.result_rows: list[tuple[Any, ...]] = []  # `TOOL_RESULT_SCHEMA` order
        self.event_rows: list[tuple[Any, ...]] = []  # `EVENT_SCHEMA` order
        self.skipped = 0
        self.oversized = 0
        self.truncated_last = False
        self.notes: list[LineNote] = []
        self.notes_per_file: dict[str, int] = {}
        self.records = 0
        self.seen_stream = False
        self.seen_transcript = False
        # The format is decided on the weight of evidence (fuzz 07): lines with stream-json keys
        # (`session_id`, `parent_tool_use_id`, init/result lines) against lines with transcript keys
        # (`sessionId`, transcript-only line types).
        self.stream_lines = 0
        self.transcript_lines = 0
        self.claude_lines = 0  # assistant / user / system lines: Claude Code's own record types
        self.foreign: dict[str, int] = {}  # another agent's line types seen (its name -> lines)
        self.uuids: set[str] = set()  # record uuids seen: a repeated uuid is one record (CASES B29)
        self.repeated_records = 0
        self.nul_lines = 0  # lines that were only NUL padding (CASES B30)
        self.nul_seen = False  # any NUL byte (no record decoded and NULs seen: a binary file)
        self.bad_numbers = 0  # counts out of range or of the wrong type (fuzz 04, 09), read as unknown
        self.cleared: dict[str, int] = {}  # tool_use_id -> seq of the microcompaction that cleared it (B34)
        self.session_id: str | None = None
        self.surface: dict[str, Any] | None = None
        self.has_init = False
        self.result: dict[str, Any] | None = None
        self.result_count = 0
        self.denied_ids: set[str] = set()
        self.cli_version: str | None = None
        self.cwd: str | None = None
        self.files: list[str] = []
        self.agents: dict[str, dict[str, Any]] = {}
        self.synthetic = 0
        self.seq = 0
        self.warnings: list[str] = []
        self.chains: dict[str, str] = {}  # inline sidechain line uuid -> its thread (CLI 1.0.x)
        self.bad_usage = 0  # usage counts that were not plausible token counts, read as 0
        self.stamps: list[str] = []  # timestamps of every user/assistant/system line, any thread
        # For `_merge_tail` (a file read in two parts): inline sidechain threads started here from a parent
        # line this builder did not see (thread -> that parent's uuid), and usage fields found bad while
        # taking a call's kept line (call row -> [(output_tokens of the line, bad fields)]).
        self.chain_roots: dict[str, str] = {}
        self.kept_bad: dict[int, list[tuple[int, int]]] = {}
        self.chains_ambiguous = False
        self.subagents_read = False  # the session's subagent files are read in (by the tail's reader)
        self.stamp_ms: dict[str | None, int | None] = {}  # timestamps parsed already (by the tail's reader)
        #: how `content_hash` is computed: Python's `hash` (seeded per process), or `stable_text_hash` when
        #: a file's two parts are read by processes that do not share the seed (`read_tail`)
        self.text_hash: Callable[[str], int] = hash

    # -- transfer (a tail read by a worker process) --------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        """What a pickle carries: the call rows as columns (a third of the time to load), without the
        indexes that `__setstate__` rebuilds from the rows."""
        state = dict(self.__dict__)
        for derived in ("call_at", "key_of_id", "use_ids", "result_ids"):
            del state[derived]
        state["call_rows"] = [list(column) for column in zip(*self.call_rows, strict=True)]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        columns = state.pop("call_rows")
        self.__dict__.update(state)
        self.call_rows = [list(row) for row in zip(*columns, strict=True)]
        self.call_at = {_call_key(row): at for at, row in enumerate(self.call_rows)}
        self.key_of_id = {}
        for row in self.call_rows:
            if row[_C_MID] is not None:
                self.key_of_id.setdefault(row[_C_MID], _call_key(row))  # the first key seen with the id
        self.use_ids = {row[2] for row in self.use_rows if row[2] is not None}
        self.result_ids = {row[2] for row in self.result_rows if row[2] is not None}

    # -- diagnostics -------------------------------------------------------------------------------
    def skip(self, path: str, line: int, reason: str) -> None:
        self.skipped += 1
        shown = self.notes_per_file.get(path, 0)
        self.notes_per_file[path] = shown + 1
        if shown < MAX_LINE_NOTES:
            self.notes.append(LineNote(path, line, reason))

    # -- records -----------------------------------------------------------------------------------
    def add(self, rec: dict[str, Any], kind: Any, line: int, src: SourceFile, prev_ts: str | None) -> None:
        """Route one decoded record (its top-level `type` is `kind`) to its rows."""
        self.records += 1
        self.seq += 1
        if "sessionId" in rec:
            self.seen_transcript = True
            self.transcript_lines += 1
            if self.session_id is None and src.thread_kind == THREAD_MAIN and isinstance(rec.get("sessionId"), str):
                self.session_id = rec["sessionId"]
        if "session_id" in rec or "parent_tool_use_id" in rec:  # (a line may carry both: fuzz 07)
            self.seen_stream = True
            self.stream_lines += 1
            if self.session_id is None and isinstance(rec.get("session_id"), str):
                self.session_id = rec["session_id"]
        if kind in _CLAUDE_TYPES:
            self.claude_lines += 1
        elif kind in _FOREIGN_TYPES:
            agent = _FOREIGN_TYPES[kind]
            self.foreign[agent] = self.foreign.get(agent, 0) + 1
        if kind == "assistant":
            self._assistant(rec, line, src, prev_ts)
        elif kind == "user":
            self._user(rec, line, src)
        elif kind == "system":
            self._system(rec, line, src)
        elif kind == "result":
            self.seen_stream = True
            self.stream_lines += 1
            self._result(rec)
        elif kind in _TRANSCRIPT_ONLY_TYPES:
            self.seen_transcript = True
            self.transcript_lines += 1
        if self.cli_version is None and src.thread_kind == THREAD_MAIN:
            version = rec.get("version")
            if isinstance(version, str):
                self.cli_version = version
        if self.cwd is None and isinstance(rec.get("cwd"), str):
            self.cwd = rec["cwd"]

    def _thread(self, rec: dict[str, Any], src: SourceFile) -> tuple[str, str]:
        if src.thread_kind != THREAD_MAIN:
            return src.agent_id or src.thread_kind, src.thread_kind
        parent = rec.get("parent_tool_use_id")
        if isinstance(parent, str) and parent:
            return parent, THREAD_SUBAGENT
        if rec.get("isSidechain") is True:
            agent = rec.get("agentId")
            if isinstance(agent, str) and agent:
                return agent, THREAD_SUBAGENT
            # CLI 1.0.x writes subagents inline without agentId: each Task's chain starts at a sidechain line
            # with no known parent, and that first line's uuid names the thread.
            uuid, parent_uuid = rec.get("uuid"), rec.get("parentUuid")
            thread = self.chains.get(parent_uuid) if isinstance(parent_uuid, str) else None
            if thread is None:
                thread = f"sidechain-{uuid}" if isinstance(uuid, str) else "sidechain"
                roots = self.chain_roots
                if isinstance(parent_uuid, str) and (
                    not isinstance(uuid, str) or roots.setdefault(thread, parent_uuid) != parent_uuid
                ):
                    self.chains_ambiguous = True  # a thread name with two roots: a merge could not rename it
            if isinstance(uuid, str):
                self.chains[uuid] = thread
            return thread, THREAD_SUBAGENT
        return THREAD_MAIN, THREAD_MAIN

    def _count(self, usage: dict[str, Any], key: str) -> int:
        """A usage count (tokens): the field's int value when plausible, else 0 and counted as bad (B27)."""
        raw = usage.get(key)
        if type(raw) is int and 0 <= raw < MAX_TOKENS:
            return raw
        if raw is not None:
            self.bad_usage += 1
        return 0

    def _number(self, raw: Any) -> int | None:
        """A count other than usage (tokens a boundary states, a duration in ms): the int when it fits
        0 <= n < 2**53, else None (unknown), counted in `bad_numbers` when a value was written (fuzz 04, 09)."""
        if type(raw) is int and 0 <= raw < MAX_TOKENS:
            return raw
        if raw is not None:
            self.bad_numbers += 1
        return None

    def _assistant(self, rec: dict[str, Any], line: int, src: SourceFile, prev_ts: str | None) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        if (
            src.thread_kind == THREAD_MAIN
            and rec.get("parent_tool_use_id") is None
            and rec.get("isSidechain") is not True
        ):
            thread = thread_kind = THREAD_MAIN  # the common case, without `_thread`'s call
        else:
            thread, thread_kind = self._thread(rec, src)
        model = msg.get("model")
        ts = rec.get("timestamp")
        if type(ts) is not str:
            ts = None
        if model == "<synthetic>" or rec.get("isApiErrorMessage") is True:
            self.synthetic += 1
            self._event(line, thread, thread_kind, "synthetic", ts=ts)
            return
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            return
        mid = msg.get("id")
        if not (type(mid) is str and mid):
            mid = None
        # The four counts inline (the common case: plausible ints); anything else goes through `_count`.
        inp = usage.get("input_tokens")
        cw = usage.get("cache_creation_input_tokens")
        cr = usage.get("cache_read_input_tokens")
        out = usage.get("output_tokens")
        if not (
            type(inp) is int
            and type(cw) is int
            and type(cr) is int
            and type(out) is int
            and 0 <= inp < MAX_TOKENS
            and 0 <= cw < MAX_TOKENS
            and 0 <= cr < MAX_TOKENS
            and 0 <= out < MAX_TOKENS
        ):
            count = self._count
            inp = count(usage, "input_tokens")
            cw = count(usage, "cache_creation_input_tokens")
            cr = count(usage, "cache_read_input_tokens")
            out = count(usage, "output_tokens")
        # A call's identity: its message id and input-side usage (a line without an id is a call of its own).
        key: Any = (mid, inp, cw, cr) if mid is not None else self.seq
        rows = self.call_rows
        at = self.call_at.get(key)
        if at is None:
            # A new call: one row, in the order of its first line.
            if mid is not None:
                first_key = self.key_of_id.setdefault(mid, key)
                if first_key != key:
                    self.clashing_ids.add(mid)  # the same id with other input-side usage (CASES B04)
            bad = self.bad_usage
            req, model, out, c5, c1, known, web, stop, speed = self._kept_line(rec, msg, usage, model, out)
            at = self.call_at[key] = len(rows)
            if self.bad_usage != bad:
                self.kept_bad.setdefault(at, []).append((out, self.bad_usage - bad))
            # fmt: off
            rows.append([
                self.seq, line, src.path, mid, req, thread, thread_kind, model, inp, cw, cr, out,
                inp + cw + cr, c5, c1, known, web, stop, speed, ts, ts, prev_ts, 1,
            ])
            # fmt: on
        else:
            # Another line of the same call: the main thread wins over a sidechain copy (B05); the line
            # with the highest output_tokens is kept, the last one on a tie (B01, G1).
            row = rows[at]
            row[_C_LINES] += 1
            if ts is not None:
                row[_C_END_TS] = ts
            if _THREAD_RANK[thread_kind] < _THREAD_RANK[row[_C_KIND]]:
                row[_C_THREAD] = thread
                row[_C_KIND] = thread_kind
            if out >= row[_C_OUT]:
                bad = self.bad_usage
                for col, value in zip(_C_KEPT, self._kept_line(rec, msg, usage, model, out), strict=True):
                    row[col] = value
                if self.bad_usage != bad:
                    self.kept_bad.setdefault(at, []).append((out, self.bad_usage - bad))
        content = msg.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is dict and block.get("type") == "tool_use":
                    self._tool_use(block, line, at, mid, ts)

    def _kept_line(
        self, rec: dict[str, Any], msg: dict[str, Any], usage: dict[str, Any], model: Any, out: int
    ) -> tuple[Any, ...]:
        """The values of `_KEPT_LINE_COLUMNS` that a call takes from the line kept for it."""
        split = usage.get("cache_creation")
        if isinstance(split, dict):
            c5 = split.get("ephemeral_5m_input_tokens")
            c1 = split.get("ephemeral_1h_input_tokens")
            if not (type(c5) is int and type(c1) is int and 0 <= c5 < MAX_TOKENS and 0 <= c1 < MAX_TOKENS):
                c5 = self._count(split, "ephemeral_5m_input_tokens")
                c1 = self._count(split, "ephemeral_1h_input_tokens")
            known = True
        else:
            c5, c1, known = 0, 0, False  # no split written: `usage` counts the write as 5-minute, marked assumed
        server = usage.get("server_tool_use")
        web = self._count(server, "web_search_requests") if isinstance(server, dict) else 0
        req = rec.get("requestId")
        speed = usage.get("speed")
        stop = msg.get("stop_reason")
        return (
            req if type(req) is str and req else None,
            model if type(model) is str else None,
            out,
            c5,
            c1,
            known,
            web,
            stop if type(stop) is str else None,
            speed if type(speed) is str else None,
        )

    def _tool_use(self, block: dict[str, Any], line: int, at: int, mid: str | None, ts: str | None) -> None:
        tid = block.get("id")
        if not (type(tid) is str and tid):
            tid = None
        else:
            if tid in self.use_ids:
                return  # the same tool use on another line of the call, or a replayed copy
            self.use_ids.add(tid)
        name = block.get("name")
        inp = block.get("input")
        path = agent_type = description = prompt = None
        if type(inp) is dict:
            path = inp.get("file_path")
            if type(name) is str and name in _AGENT_TOOLS:
                agent_type, description, prompt = inp.get("subagent_type"), inp.get("description"), inp.get("prompt")
        self.use_rows.append(
            (
                self.seq,
                line,
                tid,
                mid,
                at,
                name if type(name) is str else "?",
                _canonical(inp),
                path if type(path) is str and path else None,
                ts,
                agent_type if type(agent_type) is str else None,
                description if type(description) is str else None,
                len(prompt) if type(prompt) is str else None,
            )
        )

    def _user(self, rec: dict[str, Any], line: int, src: SourceFile) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        if (
            src.thread_kind == THREAD_MAIN
            and rec.get("parent_tool_use_id") is None
            and rec.get("isSidechain") is not True
        ):
            thread = thread_kind = THREAD_MAIN
        else:
            thread, thread_kind = self._thread(rec, src)
        content = msg.get("content")
        ts = rec.get("timestamp")
        if type(ts) is not str:
            ts = None
        has_result = False
        if type(content) is list:
            denial_kind = rec.get("toolDenialKind")
            structured = rec.get("toolUseResult", rec.get("tool_use_result"))
            agent_id = agent_ms = None
            if type(structured) is dict:
                agent_id = structured.get("agentId")
                if type(agent_id) is not str:
                    agent_id = None
                agent_ms = self._number(structured.get("totalDurationMs"))
            for block in content:
                if not (type(block) is dict and block.get("type") == "tool_result"):
                    continue
                has_result = True
                tid = block.get("tool_use_id")
                if not (type(tid) is str and tid):
                    tid = None
                else:
                    if tid in self.result_ids:
                        continue  # a replayed copy of a result already counted
                    self.result_ids.add(tid)
                inner = block.get("content")
                if type(inner) is str:  # the common case: one text
                    chars, images, image_bytes, unknown = len(inner), 0, 0, 0
                    text = inner
                    content_hash = self.text_hash(inner) if inner else 0  # no text: 0, whatever the hash
                else:
                    chars, images, image_bytes, unknown = result_size(inner)
                    text = _first_text(inner)
                    content_hash = self.text_hash(text) if chars else 0
                is_error = block.get("is_error") is True
                persisted = text.startswith("<persisted-output>")
                # fmt: off
                self.result_rows.append((
                    self.seq, line, tid, thread, thread_kind, is_error,
                    bool(denial_kind) or (is_error and _is_denial(text)),
                    chars, images, image_bytes, unknown, persisted,
                    _persisted_bytes(text) if persisted else None,
                    content_hash, agent_id, agent_ms, ts,
                ))
                # fmt: on
        if has_result:
            return
        text = _first_text(content)
        if rec.get("isCompactSummary") is True:
            kind = "compact_summary"
        elif rec.get("isMeta") is True:
            kind = "meta"
        elif thread_kind != THREAD_MAIN:
            kind = "subagent_prompt"
        elif text.startswith(_INTERRUPT_PREFIX):
            kind = "interrupt"
        elif text.lstrip().startswith(_COMMAND_PREFIXES):
            kind = "command"
        elif _is_task_notification(rec, text):
            kind = "task_notification"
        else:
            kind = "prompt"
        chars = len(content) if isinstance(content, str) else result_size(content)[0]
        self._event(line, thread, thread_kind, kind, ts=ts, text_chars=chars)

    def _system(self, rec: dict[str, Any], line: int, src: SourceFile) -> None:
        subtype = rec.get("subtype")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        thread, thread_kind = self._thread(rec, src)
        if subtype == "compact_boundary":
            meta = rec.get("compact_metadata")
            if not isinstance(meta, dict):
                meta = rec.get("compactMetadata")
            meta = meta if isinstance(meta, dict) else {}
            trigger = meta.get("trigger")
            pre = meta.get("pre_tokens", meta.get("preTokens"))
            post = meta.get("post_tokens", meta.get("postTokens"))
            duration = meta.get("duration_ms", meta.get("durationMs"))
            self._event(
                line,
                thread,
                thread_kind,
                "compact_boundary",
                ts=ts,
                trigger=trigger if isinstance(trigger, str) else None,
                pre_tokens=self._number(pre),
                post_tokens=self._number(post),
                duration_ms=self._number(duration),
            )
        elif subtype == "microcompact_boundary":
            meta = rec.get("microcompactMetadata")
            if not isinstance(meta, dict):
                meta = rec.get("microcompact_metadata")
            meta = meta if isinstance(meta, dict) else {}
            trigger = meta.get("trigger")
            ids = meta.get("compactedToolIds", meta.get("compacted_tool_ids"))
            ids = [i for i in ids if type(i) is str and i] if isinstance(ids, list) else []
            for tid in ids:
                self.cleared.setdefault(tid, self.seq)
            self._event(
                line,
                thread,
                thread_kind,
                "microcompact_boundary",
                ts=ts,
                trigger=trigger if isinstance(trigger, str) else None,
                pre_tokens=self._number(meta.get("preTokens", meta.get("pre_tokens"))),
                tokens_saved=self._number(meta.get("tokensSaved", meta.get("tokens_saved"))),
                cleared_results=len(ids),
            )
        elif subtype == "init":
            self.seen_stream = True
            self.stream_lines += 1
            self.has_init = True
            if src.thread_kind == THREAD_MAIN and self.surface is None:
                self.surface = _surface(rec)
                version = rec.get("claude_code_version")
                if isinstance(version, str):
                    self.cli_version = version
        elif subtype == "turn_duration":
            duration = rec.get("durationMs")
            self._event(
                line,
                thread,
                thread_kind,
                "turn_duration",
                ts=ts,
                duration_ms=self._number(duration),
            )
        elif subtype == "api_error":
            self._event(line, thread, thread_kind, "api_error", ts=ts)

    def _result(self, rec: dict[str, Any]) -> None:
        self.result_count += 1
        self.result = {
            k: rec.get(k)
            for k in (
                "subtype",
                "is_error",
                "total_cost_usd",
                "usage",
                "modelUsage",
                "duration_ms",
                "duration_api_ms",
                "num_turns",
            )
        }
        denials = rec.get("permission_denials")
        if isinstance(denials, list):
            for d in denials:
                if isinstance(d, dict) and isinstance(d.get("tool_use_id"), str):
                    self.denied_ids.add(d["tool_use_id"])

    def _event(
        self,
        line: int,
        thread: str,
        thread_kind: str,
        kind: str,
        *,
        ts: str | None = None,
        trigger: str | None = None,
        pre_tokens: int | None = None,
        post_tokens: int | None = None,
        duration_ms: int | None = None,
        text_chars: int | None = None,
        tokens_saved: int | None = None,
        cleared_results: int | None = None,
    ) -> None:
        self.event_rows.append(
            (self.seq, line, thread, thread_kind, kind, trigger, pre_tokens, post_tokens, duration_ms, text_chars,
             ts, tokens_saved, cleared_results)
        )  # fmt: skip

    # -- tables ------------------------------------------------------------------------------------
    def build(self, fmt: str) -> Trace:
        warnings = list(self.warnings)
        if self.clashing_ids:
            warnings.append(
                f"message ids not unique: {len(self.clashing_ids)} message id(s) carry different input-side "
                "usage; counted as separate calls"
            )
        if self.bad_usage:
            warnings.append(
                f"{self.bad_usage} usage field(s) not a count of tokens (negative, huge or not a number), read as 0"
            )
        if self.bad_numbers:
            warnings.append(
                f"{self.bad_numbers} count(s) of tokens or ms out of range or not a number (negative, huge, a "
                "string), read as unknown"
            )
        if self.repeated_records:
            warnings.append(
                f"{self.repeated_records} repeated record(s) dropped: the same uuid written again in the file "
                "(a re-appended stretch of the session, CASES B29)"
            )
        if self.stream_lines and self.transcript_lines:
            few, many = sorted((("stream-json", self.stream_lines), ("session transcript", self.transcript_lines)),
                               key=lambda x: x[1])  # fmt: skip
            warnings.append(
                f"{few[1]} line(s) carry {few[0]} keys in a file read as a {many[0]} ({many[1]} line(s)): "
                "stray lines, read as the file's format"
            )
        calls = self.call_rows
        c = _columns(calls, CALL_SCHEMA)
        r = _columns(self.result_rows, _RESULT_ROW)
        e = _columns(self.event_rows, EVENT_SCHEMA)
        u = _columns(self.use_rows, _USE_ROW)
        # The thread of a tool use is the thread of its (merged) call: a main call replayed in a sidechain
        # keeps its tool uses on the main thread (CASES B05).
        at = u.pop("call_row")
        u["thread"] = [calls[i][_C_THREAD] for i in at]
        u["thread_kind"] = [calls[i][_C_KIND] for i in at]
        # Every distinct timestamp of the trace is parsed once.
        # (every timestamp of a row is a user/assistant/system line's, so it is in `stamps`)
        ms = _epoch_ms(dict.fromkeys(self.stamps), self.stamp_ms)
        for column in (c["ts_ms"], c["end_ts_ms"], c["prev_ts_ms"], u["ts_ms"], r["ts_ms"], e["ts_ms"]):
            column[:] = [ms[ts] for ts in column]
        r["cleared_seq"] = (
            [self.cleared.get(tid) for tid in r["tool_use_id"]] if self.cleared else [None] * len(r["tool_use_id"])
        )
        if self.denied_ids:
            r["denied"] = [
                d or (err and tid in self.denied_ids)
                for d, err, tid in zip(r["denied"], r["is_error"], r["tool_use_id"], strict=True)
            ]
        tables = {
            "calls": c,
            "tool_uses": {k: u[k] for k in TOOL_USE_SCHEMA},
            "tool_results": r,
            "events": e,
        }
        times = sorted(v for v in (ms[ts] for ts in self.stamps) if v is not None)
        return Trace(
            name=self.name,
            path=self.path,
            format=fmt,
            session_id=self.session_id,
            tables=tables,
            skipped_lines=self.skipped,
            oversized_lines=self.oversized,
            truncated_last_line=self.truncated_last,
            line_notes=self.notes,
            skipped_by_file=dict(self.notes_per_file),
            warnings=warnings,
            surface=self.surface,
            result=self.result,
            result_count=self.result_count,
            cli_version=self.cli_version,
            cwd=self.cwd,
            files=self.files,
            agents=self.agents,
            synthetic_errors=self.synthetic,
            timestamps_ms=times,
        )


_TRANSCRIPT_ONLY_TYPES = frozenset(
    {"summary", "file-history-snapshot", "progress", "queue-operation", "attachment", "last-prompt", "permission-mode"}
)
#: Columns of a call taken from the line kept for it (the one with the highest output_tokens).
_KEPT_LINE_COLUMNS = (
    "request_id", "model", "output_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_split_known",
    "web_search_requests", "stop_reason", "speed",
)  # fmt: skip
_C_KEPT = tuple(_CALL_POS[n] for n in _KEPT_LINE_COLUMNS)
#: A tool-result row as the builder holds it: `TOOL_RESULT_SCHEMA` but `cleared_seq` (set by `build`).
_RESULT_ROW = tuple(c for c in TOOL_RESULT_SCHEMA if c != "cleared_seq")
#: Claude Code's own record types (a file with none of them and another agent's types is that agent's).
_CLAUDE_TYPES = frozenset({"assistant", "user", "system"})
#: Top-level line types of other agents' traces: the agent they name.
_FOREIGN_TYPES = {
    "session_meta": "Codex CLI rollout",
    "response_item": "Codex CLI rollout",
    "event_msg": "Codex CLI rollout",
    "turn_context": "Codex CLI rollout",
    "init": "Gemini CLI stream-json",
    "message": "Gemini CLI stream-json",
    "tool_use": "Gemini CLI stream-json",
    "tool_result": "Gemini CLI stream-json",
}
#: A tool-use row as the builder holds it: the row of its call in place of its thread.
_USE_ROW = (
    "seq", "line", "tool_use_id", "message_id", "call_row", "name", "input_json", "file_path", "ts_ms",
    "agent_type", "agent_description", "agent_prompt_chars",
)  # fmt: skip
#: Tools that start a subagent: their inputs' subagent_type, description and prompt are kept.
_AGENT_TOOLS = frozenset({"Task", "Agent"})

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def _epoch_ms(
    stamps: Iterable[str | None], known: dict[str | None, int | None] | None = None
) -> dict[str | None, int | None]:
    """Unix epoch ms (floored) of every ISO-8601 timestamp in `stamps` (and of None: None); None for a value
    that is not a date with a time. A timestamp without an offset is read as UTC. `known`: values
    already parsed, not parsed again.

    >>> _epoch_ms(["2026-01-24T04:08:00.123Z", "2026-01-24T06:08:00.5+02:00", "soon"])
    {None: None, '2026-01-24T04:08:00.123Z': 1769227680123, '2026-01-24T06:08:00.5+02:00': 1769227680500, 'soon': None}
    """
    out: dict[str | None, int | None] = {None: None}
    if known:
        out.update(known)
    for value in stamps:
        if value in out:
            continue
        try:
            if value is None or len(value) <= 10:  # a date without a time
                raise ValueError
            moment = datetime.fromisoformat(value)
        except ValueError:
            out[value] = None
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        out[value] = (moment - _EPOCH) // _MS
    return out


def _surface(rec: dict[str, Any]) -> dict[str, Any]:
    """What start-up offered, from a stream-json `system/init` line."""

    def count(key: str) -> int | None:
        value = rec.get(key)
        return len(value) if isinstance(value, list) else None

    def names(key: str) -> list[str] | None:
        value = rec.get(key)
        if not isinstance(value, list):
            return None
        out = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                out.append(item["name"])
            elif isinstance(item, str):
                out.append(item)
        return out

    return {
        "tools": count("tools"),
        "skills": count("skills"),
        "agents": count("agents"),
        "slash_commands": count("slash_commands"),
        "mcp_servers": names("mcp_servers"),
        "plugins": names("plugins"),
        "model": rec.get("model") if isinstance(rec.get("model"), str) else None,
        "permission_mode": rec.get("permissionMode") if isinstance(rec.get("permissionMode"), str) else None,
        "api_key_source": rec.get("apiKeySource") if isinstance(rec.get("apiKeySource"), str) else None,
    }


# -- lines -----------------------------------------------------------------------------------------


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return _utf8(sys.stdin.buffer)
    if os.path.isdir(path):
        raise TraceReadError(path, "is a directory where a file was expected")
    try:
        return _utf8(open(path, "rb", buffering=1024 * 1024))
    except FileNotFoundError:
        raise TraceReadError(path, "no such file") from None
    except OSError as exc:
        raise TraceReadError(path, f"cannot read: {exc.strerror or exc}") from None


#: Byte-order marks of UTF-16 (Windows PowerShell's `>` and `Out-File` write UTF-16LE with one, CASES B36).
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _is_utf16(start: bytes) -> bool:
    """Whether a file starting with these bytes is UTF-16: a UTF-16 byte-order mark, or `{` as a UTF-16 unit."""
    return start.startswith(_UTF16_BOMS) or start.startswith((b"{\x00", b"\x00{"))


def _utf8(fh: IO[bytes]) -> IO[bytes]:
    """`fh` itself, or for a UTF-16 file its whole text decoded and given back as UTF-8 bytes (a UTF-16
    capture is a Windows run's stdout: small). An undecodable unit becomes U+FFFD. Raises OSError."""
    peek = getattr(fh, "peek", None)
    if peek is None or not _is_utf16(peek(4)[:4]):
        return fh
    data = fh.read()
    if fh is not sys.stdin.buffer:
        fh.close()
    codec = "utf-16" if data.startswith(_UTF16_BOMS) else ("utf-16-le" if data.startswith(b"{") else "utf-16-be")
    return io.BytesIO(data.decode(codec, errors="replace").encode("utf-8", errors="replace"))


def _format_of(builder: _Builder, path: str) -> str:
    """The format of a file (or run) read into `builder`, on the weight of evidence: a session transcript
    when its lines with transcript keys (`sessionId`, transcript-only types) outnumber those with
    stream-json keys, stream-json when those do or an init / result line was seen (fuzz 07: one stray
    `parent_tool_use_id` must not make a transcript stream-json and lose its subagent files).

    Raises
    ------
    TraceReadError
        Nothing decoded and the file held NUL bytes (binary).
    TraceFormatError
        Another agent's trace (Codex CLI, Gemini CLI), or no record of either format.
    EmptyTraceError
        No JSON record at all.
    """
    if builder.foreign and not builder.claude_lines:
        agent = max(builder.foreign, key=lambda name: builder.foreign[name])
        raise TraceFormatError(path, f"a {agent} trace, not Claude Code's: not supported yet")
    if builder.seen_stream and builder.stream_lines >= builder.transcript_lines:
        return FORMAT_STREAM_JSON
    if builder.seen_transcript or builder.call_rows or builder.event_rows or builder.result_rows:
        return FORMAT_TRANSCRIPT
    if builder.seen_stream:
        return FORMAT_STREAM_JSON
    if builder.records == 0 and builder.nul_seen:
        raise TraceReadError(path, "binary file (NUL bytes), not a JSONL trace")
    if builder.records == 0 and builder.skipped == 0:
        raise EmptyTraceError(path, "empty file: no JSON record")
    raise TraceFormatError(path, "no record of either format (stream-json or session transcript)")


def _feed(builders: list[_Builder], src: SourceFile, fh: IO[bytes], split_runs: bool, head: int = 0) -> int:
    """Decode one file into the last builder of `builders`, starting a new one at each run when asked.

    Lines are the file object's own: split on b"\\n" only, never on U+2028 or other Unicode breaks
    (CASES B18), read in binary and streamed. orjson takes a line with its b"\\n" or b"\\r\\n" end as it is
    (JSON allows trailing whitespace), so no line is copied. A UTF-8 byte-order mark at the start of the
    file is dropped; a NUL byte in its first 4 KiB makes it binary (`TraceReadError`).

    Lines that hold no figure are skipped undecoded: the first `"type":"` of a line is a key of the
    outermost object when exactly one `{` comes before it (JSON escapes every quote inside a string, so
    `"type":"` is never text, and a nested object would open a second `{`), and a line whose top-level
    type is in `_SKIP_TYPES` (progress, snapshots, queue operations, ...: half the lines of a 2.1.x
    transcript, whose embedded subagent usage must not be counted anyway) is not decoded. When the test
    cannot tell (a `{` inside an earlier string, say), the line is decoded: the test only saves work.

    With `split_runs` (the file a trace is named by), a `system/init` line after a run's init or calls
    starts a new run; non-JSON lines after a `result` line are counted in the run that follows them.
    `head` is how many bytes of the file's start come before `fh` (4096 or more: no start-of-file check).
    Returns the number of lines read.
    """
    cur = builders[-1]
    cur.files.append(src.path)
    path = src.path
    after_result = False
    pending_bad: list[tuple[int, str]] = []
    prev_ts: str | None = None
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    skip_types = _SKIP_TYPES
    type_key = _TYPE_KEY
    key_len = len(_TYPE_KEY)
    number = 0  # `head`: bytes of the file's start checked for NUL bytes so far
    skipped_types: list[bytes] = []  # top-level types of the lines skipped since `cur` last counted them
    try:
        for raw in fh:
            number += 1
            if head < 4096:
                raw = _check_head(raw, head)
                head += len(raw) + 1
            if b"\x00" in raw:
                # JSON text never holds a raw NUL: NULs are damage (a crash while appending), never content
                # (CASES B30). A line of NULs only is padding; a record followed by NULs is the record.
                raw = raw.replace(b"\x00", b"")
                cur.nul_seen = True
                if not raw.strip():
                    cur.nul_lines += 1
                    cur.skip(path, number, "NUL padding (left by a crash while writing)")
                    continue
            at = raw.find(type_key)
            if at > 0 and raw.count(b"{", 0, at) == 1:
                start = at + key_len
                top = raw[start : raw.find(b'"', start)]
                if top in skip_types:
                    skipped_types.append(top)  # counted into `cur` when it changes, or at the end
                    continue
                if (
                    top == b"user"
                    and len(raw) <= OVERSIZED_LINE_BYTES
                    and cur.session_id is not None
                    and cur.cli_version is not None
                    and cur.cwd is not None
                    and (rec := _result_head(raw, start)) is not None
                ):
                    pass  # a tool-result line decoded without its `toolUseResult` copy
                else:
                    rec = None
            elif at < 0 and raw.isspace():
                continue  # a blank line
            else:
                rec = None
            if rec is not None:
                pass
            elif len(raw) > OVERSIZED_LINE_BYTES and not any(m in raw for m in _OVERSIZED_NEEDED):
                cur.oversized += 1
                continue
            else:
                try:
                    rec = loads(raw)
                except decode_error:
                    rec = _loads_lenient(raw)
            if rec is _NOT_JSON:
                if not raw.endswith(b"\n"):
                    cur.truncated_last = True
                    cur.skipped += 1
                elif after_result:
                    pending_bad.append((number, "not JSON"))
                else:
                    cur.skip(path, number, "not JSON")
                continue
            if type(rec) is not dict:
                cur.skip(path, number, f"not a JSON object ({type(rec).__name__})")
                continue
            uid = rec.get("uuid")
            if type(uid) is str and uid:
                if uid in cur.uuids:  # a record written again (CASES B29): one record, counted once
                    cur.repeated_records += 1
                    continue
                cur.uuids.add(uid)
            kind = rec.get("type")
            if type(kind) is not str:
                kind = None  # a `type` that is not a string (a list, say: fuzz 01) is an unknown line type
            if split_runs and kind == "system" and rec.get("subtype") == "init" and (cur.has_init or cur.call_rows):
                _count_skipped(cur, skipped_types)
                cur = _Builder(path, path)
                cur.files.append(path)
                builders.append(cur)
                prev_ts = None
            if pending_bad:
                for n, reason in pending_bad:
                    cur.skip(path, n, reason)
                pending_bad.clear()
            after_result = kind == "result"
            try:
                cur.add(rec, kind, number, src, prev_ts)
            except Exception as exc:  # the line firewall: a value no rule expected costs this line only
                cur.skip(path, number, f"not read ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
                continue
            if kind in _TIMED_TYPES:
                ts = rec.get("timestamp")
                if type(ts) is str:
                    prev_ts = ts
                    cur.stamps.append(ts)
    except OSError as exc:
        raise TraceReadError(path, f"read failed at line {number + 1}: {exc.strerror or exc}") from None
    for n, reason in pending_bad:
        cur.skip(path, n, reason)
    _count_skipped(cur, skipped_types)
    return number


def _count_skipped(builder: _Builder, types: list[bytes]) -> None:
    """Count lines skipped undecoded (their top-level types, `_SKIP_TYPES`) as records of `builder`."""
    if types:
        builder.records += len(types)
        streamed = types.count(b"stream_event")
        if streamed:
            builder.seen_stream = True
            builder.stream_lines += streamed
        if len(types) > streamed:
            builder.seen_transcript = True
            builder.transcript_lines += len(types) - streamed
        types.clear()


_TIMED_TYPES = frozenset({"user", "assistant", "system"})

#: The key of the copy a session transcript writes of each tool result, after the result itself.
_RESULT_COPY_KEY = b',"toolUseResult":'
#: Keys whose presence after `_RESULT_COPY_KEY` means the whole line must be decoded: the copy's own fields
#: that a figure reads (a subagent's `agentId`, `totalDurationMs`) and top-level keys the reader needs.
_AFTER_COPY_NEEDED = re.compile(
    rb'"(?:agentId|totalDurationMs|toolDenialKind|isMeta|isCompactSummary|message|timestamp|isSidechain'
    rb'|parent_tool_use_id|session_id)"[ \t\r\n]*:'  # a key: its closing quote, JSON whitespace, a colon
)


def _result_head(raw: bytes, start: int) -> dict[str, Any] | None:
    """A transcript's tool-result line decoded up to its `toolUseResult` copy, or None to decode it whole.

    The copy repeats the result's text (a Read's file, a Bash's output, an Edit's whole original file):
    about half of such a line's bytes, which no figure reads. The line is cut before the key
    `,"toolUseResult":` (which is structural: a quote inside a JSON string is always escaped) and closed
    with `}`; the cut is taken only when the head decodes as a JSON object (so the key was top-level),
    holds `message`, `timestamp` and `isSidechain` (and, on a sidechain line, `uuid` and `parentUuid`), the
    line ends with `}` and a newline (complete), and nothing after the cut names a key the reader reads
    (`_AFTER_COPY_NEEDED`; a nested key of that name only costs the cut). The caller also requires
    the session id, version and cwd to be known already, as they may follow the copy. Anything else is
    decoded whole, so the result never depends on the cut.
    """
    cut = raw.find(_RESULT_COPY_KEY, start)
    if cut < 0 or not (raw.endswith(b"}\n") or raw.endswith(b"}\r\n")) or _AFTER_COPY_NEEDED.search(raw, cut):
        return None
    try:
        rec = orjson.loads(b"".join((memoryview(raw)[:cut], b"}")))  # one copy of the head
    except orjson.JSONDecodeError:
        return None
    if type(rec) is not dict or "message" not in rec or "timestamp" not in rec or "isSidechain" not in rec:
        return None
    if rec["isSidechain"] is True and ("uuid" not in rec or "parentUuid" not in rec):
        return None  # an inline sidechain's thread is found from these (CLI 1.0.x)
    rec["toolUseResult"] = None  # present, and without an agentId (`_user` must not fall back to another key)
    return rec


def _agent_meta(path: str) -> dict[str, Any] | None:
    """The `agent-<id>.meta.json` beside a subagent file (`agentType`, `description`, ...), if any."""
    meta_path = path[: -len(".jsonl")] + ".meta.json" if path.endswith(".jsonl") else None
    if meta_path is None or not os.path.isfile(meta_path):
        return None
    try:
        with open(meta_path, "rb") as fh:
            loaded = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _canonical(value: Any) -> str:
    """A tool input as canonical JSON (sorted keys, no spaces): two inputs are identical when these are.

    orjson stops at 255 levels of nesting; the stdlib takes deeper inputs, and an input too deep even
    for it gets a text of its own that equals no other (it cannot be compared, so it is never a repeat).
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except orjson.JSONEncodeError:
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except (ValueError, RecursionError):
            return f"<input nested too deep #{id(value)}>"


_KEY_COLUMNS = ("message_id", "input_tokens", "cache_write_tokens", "cache_read_tokens")


def _check_head(raw: bytes, head: int) -> bytes:
    """A line in the first 4 KiB of a file, without the UTF-8 byte-order mark at the very start (B36)."""
    if head == 0 and raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:]
    return raw


#: `gc_paused` bookkeeping: pauses in progress in this process, and the collector's state before the first.
_GC_LOCK = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a trace is read.

    Decoded records and the builder's rows hold no reference cycles, so the collector would find nothing;
    but every full pass walks all the rows held so far: 0.35 s of the 4.2 s of CPU that reading the
    458 MB benchmark transcript took (measured with `gc.callbacks`). Reference counting still frees
    every record.

    Safe from several threads at once (a notebook running two reads): the collector's state is one per
    process, so the first pause to begin remembers it and the last to end restores it; a pause begun
    while the collector is already off leaves it off.
    """
    global _gc_pauses, _gc_was_enabled
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_was_enabled:
                gc.enable()


def read_trace(
    main: str | os.PathLike[str],
    subagents: Iterable[SourceFile] = (),
    fh: IO[bytes] | None = None,
    tail: TailPart | PendingTail | None = None,
) -> list[Trace]:
    """Read one trace file (either format) and, for a session transcript, its subagent files.

    A stream-json file gives one trace per run: a run goes from one `system/init` line to the next, and
    a file with more than one run names its traces `path#1`, `path#2`, ... in file order. A session
    transcript gives one trace: main-thread rows from the session file's non-sidechain lines, subagent
    rows from its inline sidechain lines and from `subagents`, read after the main file.

    Parameters
    ----------
    main
        Path of the file, or ``"-"`` for standard input.
    subagents
        The session's subagent files (`<session>/subagents/agent-*.jsonl`, flat `agent-*.jsonl` with
        its `sessionId`, `agent-acompact-*` summariser files), as `sources.find_traces` finds them.
        Ignored when `main` turns out to be stream-json.
    fh
        An already open binary file to read instead of opening `main`.
    tail
        The end of `main` read by `read_tail`, or being read (`PendingTail`, awaited once the bytes before
        it are read): only those bytes are read here and the tail is merged after them, with the same
        result as reading the whole file. Ignored with `fh`, and when the file turns out not to be a
        session transcript.

    Returns
    -------
    list of Trace
        One per run, in file order; never empty.

    Raises
    ------
    TraceReadError
        The file is missing, a directory, unreadable or binary.
    EmptyTraceError
        The file holds no JSON record at all.
    TraceFormatError
        No line is a record of either format.
    """
    main = os.fspath(main)
    with gc_paused():
        if tail is not None and fh is None:
            head = _read_head(main, tail)
            if head is not None:
                return _finish(main, [head], () if head.subagents_read else subagents)
        handle = _open(main) if fh is None else fh
        builders = [_Builder(main, main)]
        try:
            _feed(builders, SourceFile(main), handle, split_runs=True)
        finally:
            if fh is None and handle is not sys.stdin.buffer:
                handle.close()
        return _finish(main, builders, subagents)


def _finish(main: str, builders: list[_Builder], subagents: Iterable[SourceFile]) -> list[Trace]:
    """The traces of a main file read into `builders`: runs named, a transcript's subagent files read."""
    runs = [b for b in builders if b.records or b.skipped] or builders[:1]
    formats = [_format_of(b, main) for b in runs]
    if len(runs) > 1:
        for i, b in enumerate(runs, 1):
            b.name = f"{main}#{i}"
    elif formats[0] == FORMAT_TRANSCRIPT:
        _read_subagents(runs[0], subagents)
    return [b.build(f) for b, f in zip(runs, formats, strict=True)]


def _read_subagents(builder: _Builder, subagents: Iterable[SourceFile]) -> None:
    """Read a session's subagent files into its builder, after its main file; an unreadable one is a warning."""
    for sub in subagents:
        try:
            with _open(sub.path) as sub_fh:
                _feed([builder], sub, sub_fh, split_runs=False)
        except TraceReadError as exc:
            builder.warnings.append(f"{sub.path}: {exc.reason}")
            continue
        if sub.agent_id is not None:
            meta = _agent_meta(sub.path)
            builder.agents[sub.agent_id] = {"file": sub.path, "kind": sub.thread_kind, **(meta or {})}


# -- a large transcript read in two parts -----------------------------------------------------------

#: A file at least this large is read in two parts at once when a second core is free (`runner`).
SPLIT_MIN_BYTES = 64 * 1024 * 1024


@dataclass
class TailPart:
    """The end of a large file, from byte `start` (a line start), read alone by `read_tail`.

    `builder` holds its rows numbered from its own first line and record; `lines` is how many lines it
    has. It is picklable, so a worker process can read it while this one reads the bytes before it.
    """

    start: int
    builder: _Builder
    lines: int
    #: rows of each table (calls, tool uses, results, events) that come from the main file; the rest,
    #: if any, from the subagent files read after it
    main_rows: tuple[int, int, int, int] = (0, 0, 0, 0)
    #: whether the session's subagent files were read into it too
    with_subagents: bool = False
    #: whether its main-file part showed a transcript record (`sessionId`, a transcript-only line type)
    main_transcript: bool = False


@dataclass
class PendingTail:
    """A `TailPart` being read elsewhere: where it starts, a function that waits for it (None: it could
    not be read, so the whole file is read here), and whether it is read with `stable_text_hash`."""

    start: int
    result: Callable[[], TailPart | None]
    stable_hash: bool = False


def stable_text_hash(text: str) -> int:
    """A hash of a tool result's text that is the same in every process: the first 8 bytes of the
    BLAKE2b digest of its UTF-8 bytes (lone surrogates kept, CASES B19), as a signed 64-bit int (the
    `content_hash` column is Int64). For a file whose two parts are read by processes that do not share
    Python's hash seed; about three times the cost of `hash`, so it is used only then. Raises nothing."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


#: A byte of the tail costs this much more than a byte of the head: the tail's rows (and its subagent
#: files' rows) are pickled, sent and unpickled before the merge. Set so that on the 458 MB benchmark
#: session the head and the tail arrive within about 0.1 s of each other.
TAIL_BYTE_COST = 1.5


def split_point(path: str, after_bytes: int = 0) -> int | None:
    """Where to cut `path` so that reading its head takes as long as reading its tail (each byte weighted
    `TAIL_BYTE_COST`) and then `after_bytes` (the subagent files the tail's reader also reads, as bytes
    of the same cost): the offset of the first line that starts after that point, in bytes from the
    file's start (at least 4096). None when the file is smaller than `SPLIT_MIN_BYTES`, cannot be read,
    or no line starts there; raises nothing.
    """
    try:
        size = os.path.getsize(path)
        if size < SPLIT_MIN_BYTES or after_bytes >= size:
            return None
        with open(path, "rb") as fh:
            if _is_utf16(fh.read(4)):
                return None  # read whole, decoded (`_utf8`)
            fh.seek(int((TAIL_BYTE_COST * size + after_bytes) / (1 + TAIL_BYTE_COST)))
            fh.readline()  # the rest of the line the middle falls in
            start = fh.tell()
    except OSError:
        return None
    return start if 4096 <= start < size else None  # (the first 4 KiB are checked for NUL bytes by the head)


def read_tail(
    path: str, start: int, subagents: Iterable[SourceFile] = (), stable_hash: bool = False
) -> TailPart | None:
    """Read `path` from byte `start` (a line start) to its end, then the session's `subagents` files, for
    `read_trace(..., tail=...)`. With `stable_hash`, tool results are hashed with `stable_text_hash` (a
    process that does not share this one's hash seed reads the head: a worker started afresh), and the
    head must be read with a `PendingTail(..., stable_hash=True)`.

    Returns None when the part cannot be read or shows a stream-json record (`session_id`, a
    `system/init` or `result` line): only session transcripts are read in two parts; the caller then
    reads the whole file at once. Raises nothing.
    """
    try:
        return _read_tail(path, start, subagents, stable_hash)
    except Exception:  # anything unexpected: the whole file is read by the caller (where it is reported)
        return None


def _read_tail(path: str, start: int, subagents: Iterable[SourceFile], stable_hash: bool) -> TailPart | None:
    builder = _Builder(path, path)
    if stable_hash:
        builder.text_hash = stable_text_hash
    with gc_paused():
        try:
            with _open(path) as fh:
                fh.seek(start)
                lines = _feed([builder], SourceFile(path), fh, split_runs=False, head=4096)
        except (TraceReadError, OSError):
            return None
        if builder.seen_stream or builder.has_init or builder.result_count:
            return None
        b = builder
        main_rows = (len(b.call_rows), len(b.use_rows), len(b.result_rows), len(b.event_rows))
        main_transcript = b.seen_transcript
        subagents = list(subagents)
        _read_subagents(builder, subagents)
        builder.stamp_ms = _epoch_ms(dict.fromkeys(builder.stamps))  # parsed here, not by the merging process
    return TailPart(start, builder, lines, main_rows, bool(subagents), main_transcript)


class _Head(io.RawIOBase):
    """The first `size` bytes of a raw binary file, as a raw stream (`io.BufferedReader` splits its lines)."""

    def __init__(self, raw: IO[bytes], size: int) -> None:
        self._raw = raw
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        with memoryview(buffer) as view:
            got = self._raw.readinto(view[: self._left])  # type: ignore[attr-defined]
        self._left -= got
        return int(got)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _read_head(main: str, tail: TailPart | PendingTail) -> _Builder | None:
    """Read `main` up to `tail.start` and merge the tail into it; None when the file is not a session
    transcript after all (stream-json: its runs are read from the whole file) or the tail is missing."""
    builder = _Builder(main, main)
    # tool results hashed as the tail's reader hashes them
    if isinstance(tail, PendingTail):
        builder.text_hash = stable_text_hash if tail.stable_hash else hash
    else:
        builder.text_hash = tail.builder.text_hash
    try:
        raw = open(main, "rb", buffering=0)  # noqa: SIM115 (closed by the BufferedReader below)
    except OSError:
        return None  # the whole-file read that follows says why
    with io.BufferedReader(_Head(raw, tail.start), buffer_size=1024 * 1024) as fh:
        builders = [builder]
        lines = _feed(builders, SourceFile(main), fh, split_runs=True)
    if len(builders) > 1 or builder.seen_stream or builder.has_init or builder.result_count:
        return None  # stream-json: not waiting for the tail (its answer is dropped when it comes)
    part = tail if isinstance(tail, TailPart) else tail.result()
    if part is None or part.builder.chains_ambiguous or not builder.uuids.isdisjoint(part.builder.uuids):
        return None  # (records repeated across the cut, CASES B29: the whole read drops them in order)
    b = builder
    if not (
        b.seen_transcript or b.call_rows or b.event_rows or b.result_rows or part.main_transcript or any(part.main_rows)
    ):
        return None  # the main file alone is no transcript: the whole read says what it is (`_format_of`)
    _merge_tail(builder, part, lines)
    return builder


def _merge_tail(head: _Builder, part: TailPart, head_lines: int) -> None:
    """Add a transcript's tail rows to its head's, as if one builder had read both parts in order.

    What reading in order would have carried across the cut is applied here: record positions and line
    numbers continue the head's; a call whose lines straddle the cut is one call (its lines counted,
    the kept line the later one on a tie of output_tokens, the main thread winning, and the usage
    fields found bad while taking a kept line that the whole read would not have taken are not
    counted); tool uses and results already seen are not added again; message ids compared across the
    cut (CASES B04); an inline sidechain whose chain began in the head keeps the head's thread name;
    the first calls of the tail take the head's last timestamp as the one before them. Rows from
    subagent files read after the tail keep their own line numbers; their files, agents and warnings
    join the head's.
    """
    tail = part.builder
    n_calls, n_uses, n_results, n_events = part.main_rows if part.with_subagents else (1 << 62,) * 4
    seq0, line0 = head.seq, head_lines
    uncounted = 0  # bad usage fields the tail counted on lines the whole read would not have kept
    prev_ts = head.stamps[-1] if head.stamps else None
    rename = {t: head.chains[p] for t, p in tail.chain_roots.items() if p in head.chains}
    # chains started in the tail keep going in the head's name when their root was in the head
    for uuid, thread in tail.chains.items():
        head.chains[uuid] = rename.get(thread, thread)
    for thread, parent in tail.chain_roots.items():
        if thread not in rename:
            head.chain_roots.setdefault(thread, parent)
    rows = head.call_rows
    moved: list[int] = []  # tail call row -> head call row
    for at, row in enumerate(tail.call_rows):
        key = _call_key(row)
        key = key if type(key) is tuple else key + seq0  # a call without a message id is keyed by its seq
        thread = rename.get(row[_C_THREAD], row[_C_THREAD])
        mine = head.call_at.get(key)
        if mine is None:
            mid = row[_CALL_POS["message_id"]]
            if mid is not None and head.key_of_id.setdefault(mid, key) != key:
                head.clashing_ids.add(mid)
            new = list(row)
            new[0] += seq0
            new[_C_THREAD] = thread
            if at < n_calls:  # from the main file
                new[1] += line0
                if new[_C_PREV_TS] is None:  # no timestamped line before it in the tail: the head's last
                    new[_C_PREV_TS] = prev_ts
            mine = head.call_at[key] = len(rows)
            rows.append(new)
            if at in tail.kept_bad:
                head.kept_bad[mine] = tail.kept_bad[at]
        else:
            old = rows[mine]
            old_out = old[_C_OUT]
            old[_C_LINES] += row[_C_LINES]
            if row[_C_END_TS] is not None:
                old[_C_END_TS] = row[_C_END_TS]
            if _THREAD_RANK[row[_C_KIND]] < _THREAD_RANK[old[_C_KIND]]:
                old[_C_THREAD] = thread
                old[_C_KIND] = row[_C_KIND]
            if row[_C_OUT] >= old_out:
                for col in _C_KEPT:
                    old[col] = row[col]
            # The tail took a kept line whenever output_tokens reached its own highest so far; reading in
            # order would also have needed the head's highest.
            for out, bad in tail.kept_bad.get(at, ()):
                if out < old_out:
                    uncounted += bad
                else:
                    head.kept_bad.setdefault(mine, []).append((out, bad))
        moved.append(mine)
    head.clashing_ids |= tail.clashing_ids
    for k, use in enumerate(tail.use_rows):
        tid = use[2]
        if tid is not None and tid in head.use_ids:
            continue
        line = use[1] + line0 if k < n_uses else use[1]
        head.use_rows.append((use[0] + seq0, line, tid, use[3], moved[use[4]], *use[5:]))
    head.use_ids |= tail.use_ids
    for k, res in enumerate(tail.result_rows):
        tid = res[2]
        if tid is not None and tid in head.result_ids:
            continue
        line = res[1] + line0 if k < n_results else res[1]
        head.result_rows.append((res[0] + seq0, line, tid, rename.get(res[3], res[3]), *res[4:]))
    head.result_ids |= tail.result_ids
    for k, ev in enumerate(tail.event_rows):
        line = ev[1] + line0 if k < n_events else ev[1]
        head.event_rows.append((ev[0] + seq0, line, rename.get(ev[2], ev[2]), *ev[3:]))
    for tid, seq in tail.cleared.items():
        head.cleared.setdefault(tid, seq + seq0)
    head.uuids |= tail.uuids
    head.nul_seen = head.nul_seen or tail.nul_seen
    for name in ("repeated_records", "nul_lines", "bad_numbers", "stream_lines", "transcript_lines", "claude_lines"):
        setattr(head, name, getattr(head, name) + getattr(tail, name))
    for agent, n in tail.foreign.items():
        head.foreign[agent] = head.foreign.get(agent, 0) + n
    head.seq += tail.seq
    head.records += tail.records
    head.skipped += tail.skipped
    head.oversized += tail.oversized
    head.truncated_last = head.truncated_last or tail.truncated_last  # (the head's: a file cut short since)
    for path, count in tail.notes_per_file.items():  # the first MAX_LINE_NOTES of the whole file are named
        shown = head.notes_per_file.get(path, 0)
        shift = line0 if path == head.path else 0  # the main file's lines continue the head's
        named = [LineNote(n.path, n.line + shift, n.reason) for n in tail.notes if n.path == path]
        head.notes.extend(named[: max(0, MAX_LINE_NOTES - shown)])
        head.notes_per_file[path] = shown + count
    head.seen_transcript = head.seen_transcript or tail.seen_transcript
    head.session_id = head.session_id if head.session_id is not None else tail.session_id
    head.cli_version = head.cli_version if head.cli_version is not None else tail.cli_version
    head.cwd = head.cwd if head.cwd is not None else tail.cwd
    head.synthetic += tail.synthetic
    head.bad_usage += tail.bad_usage - uncounted
    head.stamps.extend(tail.stamps)
    head.subagents_read = part.with_subagents
    head.stamp_ms.update(tail.stamp_ms)
    head.files.extend(tail.files[1:])  # the subagent files it read
    head.agents.update(tail.agents)
    head.warnings.extend(tail.warnings)


def inherited_calls(traces: list[Trace]) -> dict[int, set[str]]:
    """The calls each trace holds that another trace of the run owns (`drop_inherited_calls`' rule):
    trace index -> call keys (`message.id|input|cache write|cache read`); traces that lose none are absent.

    Reads only the call columns `message_id`, `input_tokens`, `cache_write_tokens`, `cache_read_tokens` and
    `end_ts_ms` (Unix ms, from each call's last line), so it works on the slim traces workers send back
    (`Trace.slim`). Only session transcripts take part; a run of one trace loses nothing. Raises nothing.
    """
    keyed = [
        (i, t)
        for i, t in enumerate(traces)
        if t.format == FORMAT_TRANSCRIPT and t.view("calls").height and len(traces) > 1
    ]
    if len(keyed) < 2:
        return {}
    # Plain Python over the call columns: one pass per trace, no frame is built for traces that keep all.
    owner: dict[str, tuple[int, int]] = {}  # call key -> (last timestamp, trace index) of its owner
    held: list[tuple[int, set[str]]] = []
    for i, t in keyed:
        view = t.view("calls")
        cols = [view.get_column(c).to_list() for c in _KEY_COLUMNS]
        ends = [v for v in view.get_column("end_ts_ms").to_list() if v is not None]
        last = max(ends) if ends else 2**62
        keys = {f"{m}|{a}|{b}|{c}" for m, a, b, c in zip(*cols, strict=True) if m is not None}
        held.append((i, keys))
        for key in keys:
            if key not in owner or (last, i) < owner[key]:
                owner[key] = (last, i)
    lost_by_trace = {i: {k for k in keys if owner[k][1] != i} for i, keys in held}
    return {i: keys for i, keys in lost_by_trace.items() if keys}


def drop_inherited_calls(traces: list[Trace], lost: dict[int, set[str]] | None = None) -> list[Trace]:
    """Give each call copied into several session files to one session only (CASES B06).

    `--resume`, `--continue` and forks start a new file whose first lines are copies of earlier calls
    (same `message.id` and usage). A call found in more than one transcript trace of a run belongs to
    the trace whose last timestamp is earliest (the session it was first written in; argument order
    breaks ties); the other traces drop it, with its tool uses and their results and the events written
    up to the last copied main-thread call, count it in `inherited_calls` and say so in a warning.

    Parameters
    ----------
    traces
        Traces of one run, in argument order.
    lost
        `inherited_calls(traces)`, when already known.

    Returns
    -------
    list of Trace
        The same traces (new objects where something was dropped), in the same order.
    """
    lost_by_trace = inherited_calls(traces) if lost is None else lost
    if not lost_by_trace:
        return traces
    # Plain Python over the tables' columns (frames or lists): importing Polars for this alone would cost
    # a run over a projects folder 0.3 s and 130 MB, and resumed sessions are common there.
    out = list(traces)
    for idx, drop in lost_by_trace.items():
        t = traces[idx]
        if t.slim:
            continue  # only its call keys are here (a worker read it, and it could not be read again)
        tables = {name: _table_columns(t.view(name)) for name in TABLES}
        calls = tables["calls"]
        keys = zip(*(calls[c] for c in _KEY_COLUMNS), strict=True)
        keep_calls = [m is None or f"{m}|{a}|{b}|{c}" not in drop for m, a, b, c in keys]
        dropped_ids = {m for m, keep in zip(calls["message_id"], keep_calls, strict=True) if not keep}
        # The copies are the new file's first lines: events among them (a copied compaction boundary, the
        # copied prompts) belong to the original session too.
        copied_main = [
            seq
            for seq, kind, keep in zip(calls["seq"], calls["thread_kind"], keep_calls, strict=True)
            if not keep and kind == THREAD_MAIN
        ]
        last_copied = max(copied_main) if copied_main else None
        uses = tables["tool_uses"]
        keep_uses = [m is None or m not in dropped_ids for m in uses["message_id"]]
        uses_drop = {
            tid for tid, keep in zip(uses["tool_use_id"], keep_uses, strict=True) if not keep and tid is not None
        }
        keep_results = [tid is None or tid not in uses_drop for tid in tables["tool_results"]["tool_use_id"]]
        keep_events = [last_copied is None or seq > last_copied for seq in tables["events"]["seq"]]
        out[idx] = Trace(
            **{
                **t.__dict__,
                "tables": {
                    name: {c: list(itertools.compress(values, keep)) for c, values in tables[name].items()}
                    for name, keep in (
                        ("calls", keep_calls),
                        ("tool_uses", keep_uses),
                        ("tool_results", keep_results),
                        ("events", keep_events),
                    )
                },
                "inherited_calls": len(drop),
                "warnings": [
                    *t.warnings,
                    f"{len(drop)} call(s) copied from another session's file (resume, continue or fork): counted there",
                ],
            }
        )
    return out


def _table_columns(table: Table) -> dict[str, list[Any]]:
    """A table's columns as lists, in its column order (a frame's values are copied out of it)."""
    return {name: table.get_column(name).to_list() for name in table.columns}
