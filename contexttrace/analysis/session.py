"""A trace's main thread reduced to what health and weather read: its calls, tool calls and compactions.

Each row keeps its reading-order position (`seq`) and, where the trace has timestamps, the moment it
happened. Health (spec 000) and weather (spec 002) take their "session" from here, so both read the same
calls the same way:

* a record's `inputTokens` is the call's whole prompt (`prompt_tokens`: input + cache write + cache read);
* records are the main thread's deduplicated calls; tool calls are main-thread tool uses, each with its
  result's `is_error`, except that a refusal (`denied`) is not an error; `filePath` is the `file_path` of a
  call that reads one file (`contract.READ_TOOLS`: Claude Code's Read, Gemini CLI's read_file).

Pure: tables in, plain values out; nothing here reads files, prints or formats.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from contexttrace.analysis.frame_rows import CALL_ROW, EVENT_ROW, RESULT_ROW, USE_ROW, FrameRows
from contexttrace.reading.contract import READ_TOOLS

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: `SessionRows.axis` of a trace whose lines carry timestamps: positions are moments.
AXIS_TIME = "time"
#: `SessionRows.axis` of a trace without timestamps (stream-json): positions are call counts.
AXIS_CALLS = "calls"


class ToolCall(NamedTuple):
    """One main-thread tool call as the health and weather signals see it (spec 000's tool call record)."""

    seq: int  # reading-order position of the tool_use block
    name: str
    file_path: str | None  # calls that read one file (`contract.READ_TOOLS`): input.file_path
    is_error: bool  # its result has is_error true and is not a refusal
    denied: bool  # its result is a refusal (a person's or a rule's)
    result_seq: int | None  # position of its result (None: no result in the trace)
    call_index: int  # 0-based index of the main call that asked for it (output numbers calls from 1)


class MainCall(NamedTuple):
    """One main-thread model call as the health and weather signals see it."""

    seq: int
    prompt_tokens: int
    cache_read_tokens: int
    stop_reason: str | None
    model: str | None
    latency_ms: int | None  # from the line before the call to its last line (transcripts only)
    output_tokens: int | None = None  # usage.output_tokens; final only when `stop_reason` is recorded


class Compaction(NamedTuple):
    """One main-thread compaction boundary."""

    seq: int
    trigger: str | None
    pre_tokens: int | None


@dataclass(frozen=True)
class SessionRows:
    """The main thread of one trace, reduced to what health and weather read.

    `times` maps every `seq` of these rows to its moment in Unix epoch ms (timestamps forward-filled in
    reading order, so a line without one takes the last one before it); it is empty for stream-json,
    whose lines carry no timestamp, and then `axis` is ``"calls"``. `provider` is the API whose usage the
    calls carry (`Trace.has.provider`: ``"anthropic"``, ``"openai"``, ``"google"``; None when not stated).
    """

    calls: list[MainCall]
    tools: list[ToolCall]
    compactions: list[Compaction]
    times: dict[int, float]
    axis: str
    provider: str | None = None

    def cut(self, seq: int) -> SessionRows:
        """Return the rows read before position `seq`.

        Returns
        -------
        SessionRows
            The calls, tool calls and compactions with a smaller seq; a tool call keeps its
            `is_error`/`denied` only if its result is also before `seq`. `times` and `axis` unchanged.
        """
        tools = [
            t if t.result_seq is not None and t.result_seq < seq else t._replace(is_error=False, denied=False)
            for t in self.tools
            if t.seq < seq
        ]
        return SessionRows(
            calls=[c for c in self.calls if c.seq < seq],
            tools=tools,
            compactions=[c for c in self.compactions if c.seq < seq],
            times=self.times,
            axis=self.axis,
            provider=self.provider,
        )

    def cut_at_time(self, moment: float) -> SessionRows:
        """Return the rows whose moment is at or before `moment` (Unix epoch ms).

        Returns
        -------
        SessionRows
            As `cut`, by moment: a row without a moment in `times` is left out, and a tool call keeps its
            `is_error`/`denied` only if its result's moment is also at or before `moment`.
        """

        def seen(seq: int | None) -> bool:
            return seq is not None and self.times.get(seq, float("inf")) <= moment

        return SessionRows(
            calls=[c for c in self.calls if seen(c.seq)],
            tools=[
                t if seen(t.result_seq) else t._replace(is_error=False, denied=False) for t in self.tools if seen(t.seq)
            ],
            compactions=[c for c in self.compactions if seen(c.seq)],
            times=self.times,
            axis=self.axis,
            provider=self.provider,
        )


def session_rows(trace: Trace) -> SessionRows:
    """Reduce a trace to its main thread's calls, tool calls and compactions, in reading order.

    Parameters
    ----------
    trace
        A trace from `reading.read_trace`.

    Returns
    -------
    SessionRows
        `calls`: one per main-thread call (`prompt_tokens` = input + cache write + cache read, exact;
        `latency_ms` = `end_ts_ms − prev_ts_ms`, None in stream-json or without a line before it).
        `tools`: one per main-thread tool use, by `seq`, with its result's `is_error` (false when the
        result is a refusal, `denied`) and the index of the call before it. `compactions`: the main
        thread's `system/compact_boundary` lines. All exact.
    """
    return session_rows_of(trace, FrameRows(trace))


def session_rows_of(trace: Trace, frames: FrameRows) -> SessionRows:
    """Reduce a trace as `session_rows` does, from its tables already read into rows.

    Parameters
    ----------
    trace
        The trace (only `trace.has` is read: its timestamps and provider).
    frames
        Its rows (`frame_rows.FrameRows`), read once and shared with the other figures of a report.

    Returns
    -------
    SessionRows
        The same as `session_rows(trace)`.
    """
    # Rows are made with `tuple.__new__` and positional fields: a named tuple's keyword constructor is a
    # Python function call per row, about a fifth of this function's time on a session of many calls.
    new = tuple.__new__
    calls = [
        new(
            MainCall,
            (
                row[_SEQ],
                row[_PROMPT],
                row[_CACHE_READ],
                row[_STOP],
                row[_MODEL],
                row[_END] - row[_PREV] if row[_END] is not None and row[_PREV] is not None else None,
                row[_OUTPUT],
            ),
        )
        for row in frames.main_calls
    ]
    # tool_use_id -> (seq, is_error, denied) of its result (a later row wins)
    by_id = {r[1]: (r[0], r[2], r[3]) for r in frames.main_results if r[1] is not None}
    call_seqs = [c[0] for c in calls]
    n_calls = len(call_seqs)
    tools = []
    ci = -1
    for seq, tid, name, _input, path, _ts in frames.main_uses:
        while ci + 1 < n_calls and call_seqs[ci + 1] <= seq:
            ci += 1
        res = by_id.get(tid)
        if res is None:
            row = (seq, name, path if name in READ_TOOLS else None, False, False, None, max(ci, 0))
        else:
            failed, denied = bool(res[1]), bool(res[1] and res[2])
            row = (seq, name, path if name in READ_TOOLS else None, failed and not denied, denied, res[0], max(ci, 0))
        tools.append(new(ToolCall, row))
    compactions = [Compaction(seq, trigger, pre) for seq, _kind, trigger, pre, *_ in frames.bounds]
    times = _moments(frames) if trace.has.timestamps else {}
    return SessionRows(calls, tools, compactions, times, AXIS_TIME if times else AXIS_CALLS, trace.has.provider)


# Positions in `frame_rows.CALL_ROW` of the columns read here, by name, so that a column added there moves nothing.
_SEQ, _PROMPT, _CACHE_READ, _STOP, _MODEL, _END, _PREV, _OUTPUT = (
    CALL_ROW.index(c)
    for c in (
        "seq", "prompt_tokens", "cache_read_tokens", "stop_reason", "model", "end_ts_ms", "prev_ts_ms", "output_tokens"
    )
)  # fmt: skip


def _moments(frames: FrameRows) -> dict[int, float]:
    """Map each main-thread row's seq to a moment: its timestamp, else the last one before it, else the first.

    Each kind of row carries `ts_ms` at its own place (`frame_rows.CALL_ROW`, `USE_ROW`, `RESULT_ROW`,
    `EVENT_ROW`), read by name: in an event row it is not the last column.
    """
    rows = [
        (r[0], r[at])
        for part, names in (
            (frames.main_calls, CALL_ROW),
            (frames.main_uses, USE_ROW),
            (frames.main_results, RESULT_ROW),
            (frames.main_events, EVENT_ROW),
        )
        for at in (names.index("ts_ms"),)
        for r in part
    ]
    rows.sort(key=operator.itemgetter(0))  # stable, as Polars' sort of the concatenated rows
    last = next((ts for _, ts in rows if ts is not None), None)
    if last is None:
        return {}
    out: dict[int, float] = {}
    for seq, ts in rows:  # forward fill; the rows before the first timestamp take that first one
        if ts is not None:
            last = ts
        out[int(seq)] = float(last)
    return out
