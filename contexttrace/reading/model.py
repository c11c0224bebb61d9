"""The `Trace` model: one trace's four tables and the facts beside them, and how the tables are read.

A `Trace` holds its tables as the reader built them, a dict of equal-length column lists per table
(`TABLES` names their columns, `contract.py` their dtypes and units); a Polars frame is built the first time
one is asked for (`Trace.frame`), and reports read the same columns through `Trace.view` without building
one. Nothing here reads files or imports Polars at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from contexttrace.reading.contract import (
    CALL_SCHEMA,
    CAPABILITIES_BY_FORMAT,
    EVENT_SCHEMA,
    THREAD_MAIN,
    TOOL_RESULT_SCHEMA,
    TOOL_USE_SCHEMA,
    Capabilities,
    polars_schema,
)

if TYPE_CHECKING:
    import polars as pl

#: The columns of a call that identify it across sessions (`identity.inherited_calls`): a resumed or forked session's
#: file copies earlier calls with these four unchanged.
KEY_COLUMNS = ("message_id", "input_tokens", "cache_write_tokens", "cache_read_tokens")


@dataclass(frozen=True)
class LineNote:
    """A skipped line: where it is and why it was skipped.

    `path` is the file it is in (the session file or one of its subagent files), `line` its 1-based line
    number in that file, `reason` a short phrase ("not JSON", "NUL padding (left by a crash while writing)").
    """

    path: str
    line: int
    reason: str


@dataclass(frozen=True)
class SourceFile:
    """One file of a trace: the main file or one of its subagent files.

    `thread_kind` is the kind of thread its sidechain lines belong to; `agent_id` names the subagent
    (from the file name `agent-<id>.jsonl`); the `agent-<id>.meta.json` beside it is read with the file
    (`api.agent_meta`), in the process that reads it.
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


_INT64 = range(-(2**63), 2**63)


def _fits(value: Any, dtype: str) -> bool:
    """Whether a frame column of `dtype` (a name of `contract`'s tables) can hold `value` (None always)."""
    if value is None:
        return True
    if dtype == "Int64":
        return type(value) is int and value in _INT64
    if dtype == "Boolean":
        return type(value) is bool
    if dtype == "String":
        return type(value) is str and (value.isascii() or _encodes(value))
    return True


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


def fitted_columns(columns: dict[str, list[Any]], dtypes: dict[str, str]) -> tuple[dict[str, list[Any]], int]:
    """A table's columns with every value its column's dtype cannot hold (an int past 64 bits, a string
    with a lone surrogate, a value of another type) as None, and how many there were: what `Trace.frame`
    builds when the reader's columns break the contract, so a bad value costs its cell, never the frame.

    >>> fitted_columns({"n": [1, 2**64], "s": ["a", "\\ud800"]}, {"n": "Int64", "s": "String"})
    ({'n': [1, None], 's': ['a', None]}, 2)
    """
    out: dict[str, list[Any]] = {}
    unfit = 0
    for name, values in columns.items():
        dtype = dtypes.get(name, "")
        kept = [v if _fits(v, dtype) else None for v in values]
        unfit += sum(1 for v, k in zip(values, kept, strict=True) if k is None and v is not None)
        out[name] = kept
    return out, unfit


@dataclass
class Trace:
    """One trace, read: its four tables and the facts that are not rows.

    `calls`, `tool_uses`, `tool_results` and `events` are Polars frames with the schemas of
    `contract.CALL_SCHEMA`, `TOOL_USE_SCHEMA`, `TOOL_RESULT_SCHEMA` and `EVENT_SCHEMA` (`TABLES`), built
    from the reader's columns the first time they are asked for; `view(table)` gives the same columns
    without building a frame. Values are as the lines wrote them (exact), but where `contract` marks a
    column ≈ (`tool_results.persisted_bytes`).

    Attributes
    ----------
    name
        What the trace is called in output: its path, or ``path#N`` for the N-th run (1-based) of a
        stream-json file holding several.
    path
        The file the trace was read from (``"-"``: standard input).
    format
        ``"stream-json"`` or ``"transcript"`` (`contract.FORMAT_*`); code above `reading/` asks `has`.
    session_id
        The `sessionId` (transcripts) or `session_id` (stream-json) of its first line that names one.
    skipped_lines
        Lines that were not records, a truncated last line and NUL padding included (`line_notes` names
        the first `MAX_LINE_NOTES` of each file; `skipped_by_file` counts them per file).
    oversized_lines
        Lines above `lines.OVERSIZED_LINE_BYTES` that could hold no figure, skipped unread.
    truncated_last_line
        The last line ended without a newline and did not decode (a file still being written).
    warnings
        Sentences about doubtful values and unreadable companion files, in the order they were met.
    surface
        What start-up offered, from stream-json's `system/init` (`dialects.surface`); None for transcripts.
    result
        The last stream-json `result` line (`subtype`, `is_error`, `total_cost_usd`, `usage`,
        `modelUsage`, `duration_ms`, `duration_api_ms`, `num_turns`, as written) or None;
        `result_count` is how many result lines the run held.
    cli_version, cwd
        The Claude Code version and working directory of the first line that states them, or None.
    files
        Every file read into the trace: the main file first, then its subagent files.
    agents
        Subagent id -> its file, thread kind and the fields of its `agent-<id>.meta.json`.
    synthetic_errors
        `<synthetic>` / `isApiErrorMessage` assistant lines: API errors, not calls.
    inherited_calls
        Calls dropped because another session's file of the same run wrote them first
        (`identity.drop_inherited_calls`).
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
    #: The context window the trace states, in tokens, and where it says so (a Codex rollout's
    #: `model_context_window`); None when it states none (Claude Code states its window in `result`).
    window_tokens: int | None = None
    window_source: str | None = None
    #: Figures this trace cannot give, and why: ``"tokens"`` (no per-call usage: calls, prompt sizes, tokens
    #: and cost), ``"compactions"``. Shown as `–` with the reason, never as 0.
    unrecorded: dict[str, str] = field(default_factory=dict)

    @property
    def has(self) -> Capabilities:
        """What this trace records: its format's `Capabilities` (`contract.CAPABILITIES_BY_FORMAT`)."""
        return CAPABILITIES_BY_FORMAT[self.format]

    def slimmed(self) -> Trace:
        """This trace with its tables cut to what `inherited_calls` reads (`calls`: message id, input-side
        usage, last timestamp): what a worker sends back with a report already built from the whole."""
        calls = self.view("calls")
        keep = {c: calls.get_column(c).to_list() for c in (*KEY_COLUMNS, "end_ts_ms")}
        return Trace(**{**self.__dict__, "tables": {"calls": keep}, "timestamps_ms": [], "slim": True})

    def frame(self, table: str) -> pl.DataFrame:
        """The Polars frame of one of `TABLES`, built once from the reader's columns.

        A value its column's dtype cannot hold (the reader bounds every one: this is the last guard) is null,
        counted in a warning (`fitted_columns`). Raises ValueError for a slim trace (`slimmed`), which holds
        only its call identity columns.
        """
        if self.slim:
            raise ValueError(f"{self.name}: a slim trace (call keys only) has no frames; read it again")
        value = self.tables[table]
        if isinstance(value, dict):
            import polars as pl  # only here: reading and reports never import Polars

            schema = polars_schema(TABLES[table])
            try:
                value = pl.DataFrame(value, schema=schema)
            except (pl.exceptions.PolarsError, OverflowError, TypeError, ValueError):
                fitted, unfit = fitted_columns(value, TABLES[table])  # a value the reader should have bounded
                value = pl.DataFrame(fitted, schema=schema)
                unknown = f"{unfit} value(s) of the {table} table its column's type cannot hold, read as unknown"
                self.warnings.append(unknown)
            self.tables[table] = value
        return value  # type: ignore[no-any-return]

    def view(self, table: str) -> Table:
        """The table as it is held: the frame once built, else a `ColumnView` of its lists."""
        value = self.tables[table]
        return ColumnView(value) if isinstance(value, dict) else value

    @property
    def calls(self) -> pl.DataFrame:
        """One row per model call (`contract.CALL_SCHEMA`)."""
        return self.frame("calls")

    @property
    def tool_uses(self) -> pl.DataFrame:
        """One row per tool_use block (`contract.TOOL_USE_SCHEMA`)."""
        return self.frame("tool_uses")

    @property
    def tool_results(self) -> pl.DataFrame:
        """One row per tool_result block (`contract.TOOL_RESULT_SCHEMA`)."""
        return self.frame("tool_results")

    @property
    def events(self) -> pl.DataFrame:
        """One row per other event: compactions, prompts, errors, durations (`contract.EVENT_SCHEMA`)."""
        return self.frame("events")
