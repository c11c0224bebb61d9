"""Context Health (spec 000): five weighted signals → a 0–100 score → a grade A–F, and its timeline.

This module owns the health grade and the per-trace "session rows" both health and weather read: the
main thread's calls, tool calls and compactions, each with its reading-order position (`seq`) and the
moment it happened. It is pure: frames in, plain values out; it never reads files, prints or formats.

Decisions of issues 3 and 10 (see docs/health-weather.md):

* a record's `inputTokens` is the call's whole prompt (`prompt_tokens`: input + cache write + cache read);
* records are the main thread's deduplicated calls; tool calls are main-thread tool uses, each with its
  result's `is_error`, except that a refusal (`denied`) is not an error; `filePath` is a Read's `file_path`;
* the fill signal and `fill_percent` use the same effective window (`metrics.window_choice`), not the
  spec's hard-coded 200,000, and the latest *measured* call's prompt (a call whose usage could not be
  read reads 0 tokens, `metrics.measured`; with none measured, Context Fill abstains);
* the fill is rounded once, half up, from the exact fraction (`metrics.round_half_up`), as every view;
* a signal without enough data abstains (`MIN_READS`, `MIN_HALF_TOOL_CALLS`, ...) and the composite is
  taken over the others, weights renormalised; a trace without a model call is not graded at all;
* the composite is computed exactly in integers, so a band edge is never missed by float noise;
* JSON keys are snake_case (`fill_percent`, not the spec's `fillPercent`).
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, NamedTuple

from contexttrace.analysis.metrics import (
    CALL_ROW,
    EVENT_ROW,
    RESULT_ROW,
    USE_ROW,
    FrameRows,
    WindowChoice,
    measured,
    round_half_up,
    window_choice,
)

if TYPE_CHECKING:
    from contexttrace.reading import Trace

# --- spec 000's thresholds, as data ------------------------------------------------------------------
# A band table is ((edge, sub-score), ...) read top to bottom with the comparison named beside it; the
# first edge the value passes gives the sub-score, else the table's floor.

#: Context Fill: fill fraction `< edge` → sub-score; else 20 (F).
FILL_BANDS: tuple[tuple[float, int], ...] = ((0.50, 100), (0.65, 80), (0.80, 60), (0.90, 40))
FILL_FLOOR = 20

#: Compactions: exact count → sub-score; 4 or more → 15 (F).
COMPACTION_SCORES: dict[int, int] = {0: 100, 1: 75, 2: 55, 3: 35}
COMPACTION_FLOOR = 15

#: Re-reads: ratio `<= edge` → sub-score; else 20 (F).
REREAD_BANDS: tuple[tuple[float, int], ...] = ((0.05, 100), (0.10, 80), (0.20, 60), (0.35, 40))
REREAD_FLOOR = 20

#: Error acceleration: second-half ÷ first-half error rate `<= edge` → sub-score; else 15 (F).
ERROR_ACCELERATION_BANDS: tuple[tuple[float, int], ...] = ((1.0, 100), (2.0, 75), (3.0, 55), (5.0, 35))
ERROR_ACCELERATION_FLOOR = 15
#: Sub-score when the first half had no error and the second half had some ("went from clean to errors").
ERRORS_FROM_CLEAN_SCORE = 40

#: Tool efficiency: second-half ÷ first-half productive ratio `>= edge` → sub-score; else 15 (F).
EFFICIENCY_BANDS: tuple[tuple[float, int], ...] = ((0.9, 100), (0.7, 75), (0.4, 55), (0.15, 35))
EFFICIENCY_FLOOR = 15
#: Tools that produce something (spec 000's `isProductive`).
PRODUCTIVE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})

# --- minimum data (issue 10) -------------------------------------------------------------------------
# A signal without enough data abstains, as spec 002's weather signals do: it gets no sub-score, and the
# composite is taken over the signals that have data, their weights renormalised to sum to 1. Spec 000
# instead scores missing data as healthy (100, or 80 for "no writes"), which graded a session that
# never wrote a file "Tool Efficiency 80 B" and one re-read out of two reads "Re-reads F". Why each
# minimum is what it is: docs/health-weather.md.

#: Context Fill and Compactions need one main-thread model call; with none, nothing is graded at all.
#: Context Fill also needs a call whose prompt was measured (`metrics.measured`: a prompt of 0 is usage
#: the reader could not read); without one it abstains and the others are graded.
MIN_CALLS = 1
#: Re-reads needs this many Read calls with a `file_path`: from 10 on, one re-read moves the ratio by at
#: most 0.10, one band; below it a single re-read jumps two bands or more (1 of 5 = 0.20, C).
MIN_READS = 10
#: Error Rate and Tool Efficiency compare the two halves of the tool calls; each half needs this many
#: (20 tool calls in all), so that one call is at most 10 points of its half's rate. Spec 002's
#: session-wide error signal asks for 10 calls that used a tool; each half here is such a sample.
MIN_HALF_TOOL_CALLS = 10
#: Tool Efficiency also abstains when the first half has no productive call: the change second ÷
#: first is then undefined (spec 000 gives 80, "could be research phase").

#: Composite score `>= edge` → grade; else F.
GRADE_BANDS: tuple[tuple[float, str], ...] = ((85, "A"), (70, "B"), (55, "C"), (40, "D"))
GRADE_FLOOR = "F"

#: The five signals in spec order: (name as the spec writes it, weight in whole percent).
SIGNALS: tuple[tuple[str, int], ...] = (
    ("Context Fill", 40),
    ("Compactions", 25),
    ("Re-reads", 15),
    ("Error Rate", 10),
    ("Tool Efficiency", 10),
)

#: `reason` of a trace without a main-thread model call (health and weather are then null).
NO_CALL_REASON = "no model call: nothing to grade"
#: `reason` when every signal abstains (cannot happen with a call, since Context Fill then has data;
#: kept so that the composite is never taken over nothing).
ALL_ABSTAIN_REASON = "every signal abstains: nothing to grade"

#: The timeline: the score at each 5 % of the session, 0 % … 100 % (21 points).
TIMELINE_STEPS = 20

#: Measures in JSON are rounded: percentages to 2 decimals, ratios and fractions to 4.
PERCENT_DECIMALS = 2
RATIO_DECIMALS = 4

AXIS_TIME = "time"
AXIS_CALLS = "calls"


def _band(value: float, bands: Sequence[tuple[float, Any]], floor: Any, passes: Callable[[float, float], bool]) -> Any:
    for edge, result in bands:
        if passes(value, edge):
            return result
    return floor


def _round(value: float | None, decimals: int) -> float | None:
    return None if value is None else round(value, decimals)


def fill_score(fill_frac: float | None) -> int | None:
    """Score the Context Fill signal (weight 40 %).

    Parameters
    ----------
    fill_frac
        The latest main-thread call's prompt tokens ÷ the effective window (0–1+), or None when the trace
        has no call.

    Returns
    -------
    int or None
        100 below 0.50, 80 below 0.65, 60 below 0.80, 40 below 0.90, else 20 (edges exclusive, as the
        spec's ``<``); None (abstains) without a call, where the spec says "no data = healthy". Exact.

    Examples
    --------
    >>> fill_score(0.4999), fill_score(0.5), fill_score(0.9), fill_score(None)
    (100, 80, 20, None)
    """
    if fill_frac is None:
        return None
    return int(_band(fill_frac, FILL_BANDS, FILL_FLOOR, operator.lt))


def compaction_score(count: int) -> int:
    """Score the Compactions signal (weight 25 %): 0 → 100, 1 → 75, 2 → 55, 3 → 35, 4+ → 15.

    Examples
    --------
    >>> [compaction_score(n) for n in range(6)]
    [100, 75, 55, 35, 15, 15]
    """
    return COMPACTION_SCORES.get(count, COMPACTION_FLOOR)


def reread_score(ratio: float | None) -> int | None:
    """Score the Re-reads signal (weight 15 %).

    Parameters
    ----------
    ratio
        Re-reads ÷ Read calls (0–1), or None when there were fewer than `MIN_READS` Read calls with a
        `file_path` (→ abstains).

    Returns
    -------
    int or None
        100 up to 0.05, 80 up to 0.10, 60 up to 0.20, 40 up to 0.35, else 20 (edges inclusive, ``<=``).

    Examples
    --------
    >>> reread_score(0.05), reread_score(0.0501), reread_score(0.35), reread_score(0.36), reread_score(None)
    (100, 80, 40, 20, None)
    """
    if ratio is None:
        return None
    return int(_band(ratio, REREAD_BANDS, REREAD_FLOOR, operator.le))


def error_acceleration_score(rates: tuple[float, float] | None) -> int | None:
    """Score the Error Rate (acceleration) signal (weight 10 %).

    Parameters
    ----------
    rates
        (first-half, second-half) tool error rates, each 0–1, from `half_rates`; None when a half has
        fewer than `MIN_HALF_TOOL_CALLS` tool calls (→ abstains).

    Returns
    -------
    int or None
        100 when both halves are clean; 40 when only the second half has errors; else by the ratio
        second ÷ first: 100 up to 1.0, 75 up to 2.0, 55 up to 3.0, 35 up to 5.0, else 15 (``<=``).

    Examples
    --------
    >>> error_acceleration_score((0.1, 0.2)), error_acceleration_score((0.0, 0.1)), error_acceleration_score(None)
    (75, 40, None)
    """
    if rates is None:
        return None
    first, second = rates
    if first == 0 and second == 0:
        return 100
    if first == 0:
        return ERRORS_FROM_CLEAN_SCORE
    return int(_band(second / first, ERROR_ACCELERATION_BANDS, ERROR_ACCELERATION_FLOOR, operator.le))


def tool_efficiency_score(ratios: tuple[float, float] | None) -> int | None:
    """Score the Tool Efficiency signal (weight 10 %).

    Parameters
    ----------
    ratios
        (first-half, second-half) shares of productive calls (Write, Edit, MultiEdit), each 0–1, from
        `half_rates`; None when a half has fewer than `MIN_HALF_TOOL_CALLS` tool calls.

    Returns
    -------
    int or None
        By the change second ÷ first: 100 from 0.9, 75 from 0.7, 55 from 0.4, 35 from 0.15, else 15
        (``>=``); None (abstains) without `ratios` or when the first half has no productive call (the
        change is undefined; the spec gives 80).

    Examples
    --------
    >>> tool_efficiency_score((0.5, 0.45)), tool_efficiency_score((0.0, 0.5)), tool_efficiency_score((0.5, 0.0))
    (100, None, 15)
    """
    if ratios is None or ratios[0] == 0:
        return None
    first, second = ratios
    return int(_band(second / first, EFFICIENCY_BANDS, EFFICIENCY_FLOOR, operator.ge))


def grade(score: float) -> str:
    """Return the letter of a 0–100 score: A from 85, B from 70, C from 55, D from 40, else F (``>=``).

    Examples
    --------
    >>> grade(85), grade(84.75), grade(40), grade(39.5)
    ('A', 'B', 'D', 'F')
    """
    return str(_band(score, GRADE_BANDS, GRADE_FLOOR, operator.ge))


def composite(values: Sequence[int | None]) -> tuple[int, str, list[float]] | None:
    """Compose the five sub-scores (spec order, None for a signal that abstains) into (score, grade, weights).

    The composite is Σ sub-score × weight over the signals with data, divided by the sum of their
    weights (spec 000's weights renormalised; with no abstention this is the spec's composite). It is
    computed exactly in integers: the grade compares Σ value × weight with edge × Σ weight, and the
    score is the composite rounded half up (JavaScript's `Math.round`).

    Returns
    -------
    tuple, or None
        (score 0–100, grade A–F, each signal's effective weight: its weight ÷ the sum of the weights with
        data, a fraction rounded to 4 decimals, 0.0 when it abstains); None when every signal abstains.

    Examples
    --------
    >>> composite([80, 75, 20, 40, 55])
    (63, 'C', [0.4, 0.25, 0.15, 0.1, 0.1])
    >>> composite([100, 100, None, 100, None])
    (100, 'A', [0.5333, 0.3333, 0.0, 0.1333, 0.0])
    >>> composite([None] * 5) is None
    True
    """
    graded = _score_and_grade(values)
    if graded is None:
        return None
    total = sum(w for v, (_, w) in zip(values, SIGNALS, strict=True) if v is not None)
    weights = [
        0.0 if v is None else round(w / total, RATIO_DECIMALS) for v, (_, w) in zip(values, SIGNALS, strict=True)
    ]
    return graded[0], graded[1], weights


def _score_and_grade(values: Sequence[int | None]) -> tuple[int, str] | None:
    """`composite` without the weights (the timeline's 21 points need only the score and the grade)."""
    total = weighted = 0
    for value, (_, weight) in zip(values, SIGNALS, strict=True):
        if value is not None:
            total += weight
            weighted += value * weight
    if not total:
        return None
    for edge, letter in GRADE_BANDS:
        if weighted >= edge * total:
            return (2 * weighted + total) // (2 * total), letter
    return (2 * weighted + total) // (2 * total), GRADE_FLOOR


# --- the trace as the spec's HealthInput ---------------------------------------------------------------


class ToolCall(NamedTuple):
    """One main-thread tool call as the health and weather signals see it."""

    seq: int  # reading-order position of the tool_use block
    name: str
    file_path: str | None  # Read calls: input.file_path
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
    whose lines carry no timestamp, and then `axis` is ``"calls"``.
    """

    calls: list[MainCall]
    tools: list[ToolCall]
    compactions: list[Compaction]
    times: dict[int, float]
    axis: str

    def cut(self, seq: int) -> SessionRows:
        """Return the rows read before position `seq` (calls, tools and compactions with a smaller seq).

        A tool call keeps its `is_error`/`denied` only if its result is also before `seq`.
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
        )

    def cut_at_time(self, moment: float) -> SessionRows:
        """Return the rows whose moment is at or before `moment` (Unix epoch ms); see `cut`."""

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
        )


def session_rows(trace: Trace) -> SessionRows:
    """Reduce a trace to its main thread's calls, tool calls and compactions, in reading order.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace` (frames per `schema.py`).

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
    """`session_rows` from the trace's frames already read into rows (`metrics.FrameRows`)."""
    # Rows are made with `tuple.__new__` and positional fields: a named tuple's keyword constructor is a
    # Python function call per row (the large benchmark session's 23,000 calls: 0.22 s -> 0.17 s, medians of 8).
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
            row = (seq, name, path if name == "Read" else None, False, False, None, max(ci, 0))
        else:
            failed, denied = bool(res[1]), bool(res[1] and res[2])
            row = (seq, name, path if name == "Read" else None, failed and not denied, denied, res[0], max(ci, 0))
        tools.append(new(ToolCall, row))
    compactions = [Compaction(seq, trigger, pre) for seq, _kind, trigger, pre, *_ in frames.bounds]
    times = _moments(frames) if trace.has.timestamps else {}
    return SessionRows(calls, tools, compactions, times, AXIS_TIME if times else AXIS_CALLS)


# Positions in `metrics.CALL_ROW` of the columns read here, by name, so that a column added there moves nothing.
_SEQ, _PROMPT, _CACHE_READ, _STOP, _MODEL, _END, _PREV, _OUTPUT = (
    CALL_ROW.index(c)
    for c in (
        "seq", "prompt_tokens", "cache_read_tokens", "stop_reason", "model", "end_ts_ms", "prev_ts_ms", "output_tokens"
    )
)  # fmt: skip


def _moments(frames: FrameRows) -> dict[int, float]:
    """Map each main-thread row's seq to a moment: its timestamp, else the last one before it, else the first.

    Each kind of row carries `ts_ms` at its own place (`metrics.CALL_ROW`, `USE_ROW`, `RESULT_ROW`,
    `EVENT_ROW`), read by name: an event's place is not its row's last (a microcompaction's count of
    cleared results was once read as its moment there).
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


# --- the grade ---------------------------------------------------------------------------------------


def half_rates(tools: Sequence[ToolCall], hit: Callable[[ToolCall], bool]) -> tuple[float, float] | None:
    """Split tool calls at `floor(n / 2)` and return the share of `hit` in each half (spec 000).

    Returns
    -------
    tuple of float, or None
        (first half, second half), each 0–1; None when the first (smaller) half has fewer than
        `MIN_HALF_TOOL_CALLS` calls (fewer than 20 tool calls): the signals built on it abstain.

    Examples
    --------
    >>> t = [ToolCall(i, "Edit" if i < 10 else "Read", None, False, False, None, 0) for i in range(21)]
    >>> half_rates(t, lambda c: c.name == "Edit"), half_rates(t[:19], lambda c: c.name == "Edit")
    ((1.0, 0.0), None)
    """
    mid = len(tools) // 2
    if mid < MIN_HALF_TOOL_CALLS:
        return None
    first, second = tools[:mid], tools[mid:]
    return sum(map(hit, first)) / len(first), sum(map(hit, second)) / len(second)


def read_counts(tools: Sequence[ToolCall]) -> tuple[int, int]:
    """Return (file reads, re-reads): Read calls with a `file_path`, and those whose path was read before.

    A re-read is spec 000's: the same path again, even for another range of lines. It differs from the
    table's `repeat` (a call identical to an earlier one, input and all).

    Examples
    --------
    >>> read_counts([ToolCall(i, "Read", p, False, False, None, 0) for i, p in enumerate("aba")])
    (3, 1)
    """
    seen: set[str] = set()
    reads = 0
    for t in tools:
        if t.name == "Read" and t.file_path is not None:
            reads += 1
            seen.add(t.file_path)
    return reads, reads - len(seen)


def reread_ratio(tools: Sequence[ToolCall]) -> float | None:
    """Return re-reads ÷ file reads (`read_counts`), or None with fewer than `MIN_READS` file reads."""
    reads, rereads = read_counts(tools)
    return rereads / reads if reads >= MIN_READS else None


def _is_error(t: ToolCall) -> bool:
    return t.is_error


def _is_productive(t: ToolCall) -> bool:
    return t.name in PRODUCTIVE_TOOLS


def health_grade(rows: SessionRows, window: int) -> dict[str, Any]:
    """Grade the health of a session from its rows (spec 000's `computeHealthGrade`, with abstention).

    Parameters
    ----------
    rows
        From `session_rows` (or a `cut` of them).
    window
        The effective context window in tokens (`metrics.window_choice`), > 0.

    Returns
    -------
    dict
        `grade` (A–F from the composite, or None), `score` (the composite rounded half up, 0–100, or
        None), `reason` (None when graded; why not, e.g. `NO_CALL_REASON`), the measures
        `fill_percent` (latest measured prompt ÷ window × 100, rounded half up to 2 decimals from the exact
        fraction; None when no call's prompt was measured, and Context Fill then abstains),
        `compaction_count`, `reread_ratio` (re-reads ÷ file reads), `error_acceleration` (second-half ÷
        first-half error rate) and
        `tool_efficiency` (second-half ÷ first-half productive share), ratios to 4 decimals, each None
        when its signal abstains or the ratio is undefined (a first-half rate of 0); and `signals`: one
        dict per signal in spec order, `name`, `value` (sub-score, None when it abstains), `weight`
        (the spec's, a fraction), `effective_weight` (renormalised over the signals with data; 0.0
        when it abstains), `abstained`, `grade`, `measure` (the figure scored) and `why` (a sentence).
        All exact: the composite is computed in integers (`composite`).

    Examples
    --------
    >>> rows = SessionRows([MainCall(1, 120_000, 0, None, None, None)], [], [], {}, AXIS_CALLS)
    >>> h = health_grade(rows, 200_000)
    >>> h["grade"], h["score"], h["fill_percent"], [s["abstained"] for s in h["signals"]]
    ('A', 88, 60.0, [False, False, True, True, True])
    >>> health_grade(SessionRows([], [], [], {}, AXIS_CALLS), 200_000)["grade"] is None
    True
    """
    if len(rows.calls) < MIN_CALLS:
        return _ungraded(NO_CALL_REASON, "no model call")
    tools = rows.tools
    # the latest call whose prompt was measured (a prompt of 0 is usage the reader could not read)
    at = next((k for k in range(len(rows.calls) - 1, -1, -1) if measured(rows.calls[k].prompt_tokens)), None)
    latest = rows.calls[at].prompt_tokens if at is not None else None
    fill = Fraction(latest, window) if latest is not None else None  # exact: rounded once, below
    count = len(rows.compactions)
    reads, rereads = read_counts(tools)
    ratio = rereads / reads if reads >= MIN_READS else None
    errors = half_rates(tools, _is_error)
    writes = half_rates(tools, _is_productive)
    accel = errors[1] / errors[0] if errors and errors[0] else None
    change = writes[1] / writes[0] if writes and writes[0] else None
    values = [
        fill_score(float(fill)) if fill is not None else None,  # float: the edges are the spec's float literals
        compaction_score(count),
        reread_score(ratio),
        error_acceleration_score(errors),
        tool_efficiency_score(writes),
    ]
    measures = [
        round_half_up(fill, RATIO_DECIMALS) if fill is not None else None,
        count,
        _round(ratio, RATIO_DECIMALS),
        _round(accel, RATIO_DECIMALS),
        _round(change, RATIO_DECIMALS),
    ]
    whys = [
        _fill_why(latest, window, at, len(rows.calls)),
        f"{count} compaction{'' if count == 1 else 's'}",
        _reread_why(reads, rereads),
        _errors_why(tools, errors),
        _writes_why(tools, writes),
    ]
    graded = composite(values)
    if graded is None:  # not reached with a call (Context Fill has data); kept for the all-abstain rule
        return _ungraded(ALL_ABSTAIN_REASON, "abstains")
    score, letter, weights = graded
    return {
        "grade": letter,
        "score": score,
        "reason": None,
        "fill_percent": round_half_up(fill * 100, PERCENT_DECIMALS) if fill is not None else None,
        "compaction_count": count,
        "reread_ratio": measures[2],
        "error_acceleration": measures[3],
        "tool_efficiency": measures[4],
        "signals": [
            {
                "name": name,
                "value": value,
                "weight": weight / 100,
                "effective_weight": effective,
                "abstained": value is None,
                "grade": None if value is None else grade(value),
                "measure": measure,
                "why": why,
            }
            for value, measure, why, effective, (name, weight) in zip(
                values, measures, whys, weights, SIGNALS, strict=True
            )
        ],
    }


def _ungraded(reason: str, why: str) -> dict[str, Any]:
    """`health_grade`'s shape when nothing is graded: every value None, every signal abstaining."""
    return {
        "grade": None,
        "score": None,
        "reason": reason,
        "fill_percent": None,
        "compaction_count": None,
        "reread_ratio": None,
        "error_acceleration": None,
        "tool_efficiency": None,
        "signals": [
            {
                "name": name,
                "value": None,
                "weight": weight / 100,
                "effective_weight": 0.0,
                "abstained": True,
                "grade": None,
                "measure": None,
                "why": why,
            }
            for name, weight in SIGNALS
        ],
    }


def _score_of(
    calls: int,
    latest: int | None,
    window: int,
    count: int,
    reads: int,
    rereads: int,
    errors: tuple[float, float] | None,
    writes: tuple[float, float] | None,
) -> tuple[int | None, str | None]:
    """(score, grade) of `health_grade` from its measures, without the texts; (None, None) ungraded.
    `calls` counts the calls so far, `latest` is the latest measured prompt (None: Context Fill abstains)."""
    if calls < MIN_CALLS:
        return None, None
    graded = _score_and_grade(
        (
            fill_score(latest / window) if latest is not None else None,
            compaction_score(count),
            reread_score(rereads / reads if reads >= MIN_READS else None),
            error_acceleration_score(errors),
            tool_efficiency_score(writes),
        )
    )
    return (None, None) if graded is None else graded


def _fill_why(latest: int | None, window: int, at: int | None, calls: int) -> str:
    """Context Fill's `why`: the prompt it scored, or why it abstains (no call's usage could be read)."""
    if latest is None or at is None:
        return f"no call's prompt size could be read (usage read as 0 on all {calls})"
    whose = "last call's" if at == calls - 1 else f"call #{at + 1}'s (the last with readable usage)"
    return f"{whose} prompt {latest:,} of a {window:,}-token window"


def _reread_why(reads: int, rereads: int) -> str:
    if not reads:
        return "no file read (a Read call with a file_path)"
    if reads < MIN_READS:
        again = f" ({rereads} re-read a file already read)" if rereads else ""
        return f"only {reads} file read{'' if reads == 1 else 's'}, fewer than {MIN_READS}{again}"
    return f"{rereads} of {reads} file reads re-read a file already read"


def _too_few(n: int) -> str:
    if not n:
        return "no tool call"
    return f"{n} tool call{'' if n == 1 else 's'}, fewer than {MIN_HALF_TOOL_CALLS} in each half"


def _errors_why(tools: Sequence[ToolCall], rates: tuple[float, float] | None) -> str:
    if rates is None:
        return _too_few(len(tools))
    mid = len(tools) // 2
    first, second = f"{rates[0]:.0%} of {mid} calls", f"{rates[1]:.0%} of {len(tools) - mid}"
    text = f"tool error rate {first} in the first half, {second} in the second"
    denied = sum(1 for t in tools if t.denied)
    return text + (f" ({denied} denied, not counted as errors)" if denied else "")


def _writes_why(tools: Sequence[ToolCall], shares: tuple[float, float] | None) -> str:
    productive = sum(map(_is_productive, tools))
    if tools and not productive:
        return "no edits/writes"
    if shares is None:
        return _too_few(len(tools))
    if shares[0] == 0:
        return f"no edits/writes in the first half ({productive} in the second): nothing to compare with"
    return f"share of Write/Edit/MultiEdit {shares[0]:.0%} in the first half, {shares[1]:.0%} in the second"


def health_timeline(rows: SessionRows, window: int) -> list[dict[str, Any]]:
    """Grade the session at each 5 % of it, from the rows up to that moment (21 points).

    Parameters
    ----------
    rows
        From `session_rows`.
    window
        Effective window in tokens.

    Returns
    -------
    list of dict
        21 dicts, `percent` 0, 5, … 100, with `score`, `grade` and the position: on the ``"time"`` axis
        `ts_ms` (the moment start + (end − start) × percent, Unix epoch ms, rows at or before it
        counted); on the ``"calls"`` axis (stream-json: no timestamps) `calls` (main calls counted:
        call `floor(percent × (n − 1))` and everything read before the next call); and `compactions`, the
        compactions counted so far. The last point always equals the whole-trace grade.
    """
    n = len(rows.calls)
    times = rows.times if rows.axis == AXIS_TIME else {}
    inf = float("inf")
    # Each point counts the rows whose key is at most a threshold, and thresholds only grow: on the time
    # axis the key is a row's moment (`cut_at_time`), on the calls axis its seq (`cut`: seq < the next
    # call's seq, i.e. ≤ that seq − 1; the last point takes every row).
    if times:
        moment_values = times.values()
        start, end = min(moment_values), max(moment_values)
        thresholds: list[float] = []
        wheres: list[dict[str, Any]] = []
        for k in range(TIMELINE_STEPS + 1):
            moment = end if k == TIMELINE_STEPS else start + (end - start) * k / TIMELINE_STEPS
            thresholds.append(moment)
            wheres.append({"ts_ms": round(moment)})

        def key(seq: int | None) -> float:
            return inf if seq is None else times.get(seq, inf)

    else:
        thresholds, wheres = [], []
        for k in range(TIMELINE_STEPS + 1):
            last = k * (n - 1) // TIMELINE_STEPS if n else -1
            thresholds.append(rows.calls[last + 1].seq - 1 if 0 <= last < n - 1 else inf)
            wheres.append({"calls": last + 1})

        def key(seq: int | None) -> float:
            return inf if seq is None else seq

    scores = _timeline_scores(rows, window, key, thresholds)
    return [
        {"percent": k * 100 // TIMELINE_STEPS, "score": score, "grade": letter, "compactions": count, **where}
        for k, ((score, letter, count), where) in enumerate(zip(scores, wheres, strict=True))
    ]


def _timeline_scores(
    rows: SessionRows, window: int, key: Callable[[int | None], float], thresholds: list[float]
) -> list[tuple[int | None, str | None, int]]:
    """(score, grade, compactions) of `health_grade` over the rows whose key is at most each threshold.

    A tool call counts its error only when its result's key is also within the threshold. When the keys
    are in row order (the usual case) the rows counted are a prefix and prefix sums answer each point in
    O(log n); otherwise each point is a pass over the tool calls.
    """
    call_keys = [key(c.seq) for c in rows.calls]
    # each call's prompt, an unmeasured one (0: usage unreadable) replaced by the latest measured before it
    prompts: list[int | None] = []
    for c in rows.calls:
        prompts.append(c.prompt_tokens if measured(c.prompt_tokens) else (prompts[-1] if prompts else None))
    bound_keys = sorted(key(c.seq) for c in rows.compactions)
    tools = rows.tools
    tool_keys = [key(t.seq) for t in tools]
    productive = [t.name in PRODUCTIVE_TOOLS for t in tools]
    paths = [t.file_path if t.name == "Read" else None for t in tools]
    # errors: (index among tools, key of the result); only a tool with a result can have is_error
    errors = [(j, key(t.result_seq)) for j, t in enumerate(tools) if t.is_error]
    calls_sorted = all(a <= b for a, b in itertools.pairwise(call_keys))
    tools_sorted = all(a <= b for a, b in itertools.pairwise(tool_keys))
    if tools_sorted:
        prod_upto = [0]  # productive calls among the first j tools
        reads_upto = [0]  # Read calls with a path among the first j
        fresh_upto = [0]  # ... that read a path for the first time
        seen: set[str] = set()
        for is_prod, path in zip(productive, paths, strict=True):
            prod_upto.append(prod_upto[-1] + is_prod)
            reads_upto.append(reads_upto[-1] + (path is not None))
            fresh_upto.append(fresh_upto[-1] + (path is not None and path not in seen))
            if path is not None:
                seen.add(path)
    out = []
    graded_by: dict[tuple[Any, ...], tuple[int | None, str | None]] = {}
    by_limit: dict[float, tuple[int | None, str | None, int]] = {}
    for limit in thresholds:
        point = by_limit.get(limit)  # a threshold again: the calls axis of a trace with fewer than 21 calls
        if point is not None:
            out.append(point)
            continue
        if calls_sorted:
            nc = bisect.bisect_right(call_keys, limit)
            latest = prompts[nc - 1] if nc else None
        else:
            upto = [j for j in range(len(call_keys)) if call_keys[j] <= limit]
            nc = len(upto)
            latest = next((p for j in reversed(upto) if measured(p := rows.calls[j].prompt_tokens)), None)
        count = bisect.bisect_right(bound_keys, limit)
        if tools_sorted:
            m = bisect.bisect_right(tool_keys, limit)
            mid = m // 2
            prod = (prod_upto[mid], prod_upto[m] - prod_upto[mid])
            reads = reads_upto[m]
            rereads = reads - fresh_upto[m]
            err_first = sum(1 for j, rk in errors if j < mid and rk <= limit)
            err_second = sum(1 for j, rk in errors if mid <= j < m and rk <= limit)
        else:
            inc = [j for j, k in enumerate(tool_keys) if k <= limit]
            m = len(inc)
            mid = m // 2
            prod = (sum(productive[j] for j in inc[:mid]), sum(productive[j] for j in inc[mid:]))
            read_paths = [paths[j] for j in inc if paths[j] is not None]
            reads = len(read_paths)
            rereads = reads - len(set(read_paths))
            failed = {j for j, rk in errors if rk <= limit}
            err_first = sum(1 for j in inc[:mid] if j in failed)
            err_second = sum(1 for j in inc[mid:] if j in failed)
        if mid < MIN_HALF_TOOL_CALLS:
            err_rates = write_rates = None
        else:
            err_rates = (err_first / mid, err_second / (m - mid))
            write_rates = (prod[0] / mid, prod[1] / (m - mid))
        args = (nc, latest, count, reads, rereads, err_rates, write_rates)
        graded = graded_by.get(args)  # consecutive points often measure the same rows (a short trace's points)
        if graded is None:
            graded = graded_by[args] = _score_of(nc, latest, window, count, reads, rereads, err_rates, write_rates)
        out.append(by_limit.setdefault(limit, (*graded, count)))
    return out


def health_report(trace: Trace, window: int | None = None) -> dict[str, Any]:
    """Compute the `health` object of a trace's JSON (spec 000 with the decisions of issues 3 and 10).

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    window
        `--window` in tokens, or None (then `metrics.window_choice` decides).

    Returns
    -------
    dict
        `health_grade`'s keys, plus `window` (tokens) and `window_source` (``"option"``,
        ``"modelUsage"``, ``"default"``, ``"peak"``, ...), `timeline` (`health_timeline`; empty when
        nothing is graded), `timeline_axis` (``"time"`` or ``"calls"``) and `compactions`: for each
        compaction, its `trigger`, `pre_tokens`, `next_call` (number, from 1, of the first main-thread
        call after it; None when none follows) and the first timeline `percent` that counts it. A trace
        without a main-thread model call has `grade`, `score` and every measure None and a `reason`.

    Examples
    --------
    >>> from contexttrace.reading import read_trace
    >>> import os, tempfile
    >>> line = b'{"type":"user","message":{"role":"user","content":"hi"},"timestamp":"2025-01-01T00:00:00Z"}'
    >>> with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(line + b"\\n")
    >>> h = health_report(read_trace(f.name)[0]); os.unlink(f.name)
    >>> h["grade"], h["score"], h["reason"]
    (None, None, 'no model call: nothing to grade')
    """
    return health_of(session_rows(trace), window_choice(trace, window))


def health_of(rows: SessionRows, choice: WindowChoice) -> dict[str, Any]:
    """`health_report` from a trace's session rows and its window choice (shared with `weather`)."""
    out = health_grade(rows, choice.tokens)
    graded = out["grade"] is not None
    timeline = health_timeline(rows, choice.tokens) if graded else []
    call_seqs = [c.seq for c in rows.calls]
    n = len(call_seqs)
    marks = []
    if graded:
        for i, c in enumerate(rows.compactions):
            after = bisect.bisect_left(call_seqs, c.seq)
            marks.append(
                {
                    "trigger": c.trigger,
                    "pre_tokens": c.pre_tokens,
                    "next_call": after + 1 if after < n else None,
                    "percent": _first_percent(timeline, i + 1),
                }
            )
    out.update(
        window=choice.tokens,
        window_source=choice.source,
        timeline=timeline,
        timeline_axis=rows.axis,
        compactions=marks,
    )
    return out


def _first_percent(timeline: list[dict[str, Any]], count: int) -> int:
    return next((p["percent"] for p in timeline if p["compactions"] >= count), 100)
