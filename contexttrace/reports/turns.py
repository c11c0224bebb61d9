"""Turns of one trace and what they say about the window: spec 001's per-session turn readings.

A turn is a prompt the person wrote (`events.kind == "prompt"` on the main thread) and everything up to the
next one; a stream-json run with no such line is one turn (the `-p` prompt is not written to the stream).
`turn_table` splits the main thread into turns, `turn_figures` reads the session from them: calls per turn,
context size and velocity, the autocompact threshold and the turns left until it, the fixed prefix. Each
comes twice: over a `Trace`'s frames, and over the main thread's rows already read (`main_events`,
`main_calls`: what `usage.build_usage` passes). Nothing here prints or formats numbers.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left
from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from contexttrace.analysis import metrics
from contexttrace.analysis.counts import result_count
from contexttrace.analysis.frame_rows import main_rows

if TYPE_CHECKING:
    from contexttrace.reading import Table, Trace

#: Claude Code keeps this many tokens of the window free for the model's output (spec 001).
OUTPUT_RESERVE_TOKENS = 20_000
#: Autocompact fires this many tokens below the effective window (spec 001).
AUTOCOMPACT_BUFFER_TOKENS = 13_000
#: Width of the "warn" band below the autocompact threshold (spec 001: Claude Code's "Context low").
WARN_BAND_TOKENS = 20_000
#: The window less this many tokens is "blocked" (spec 001).
BLOCKING_BUFFER_TOKENS = 3_000
#: Weight of the newest sample in the context-velocity moving average (spec 001: α = 1/5).
VELOCITY_ALPHA = 0.2


def turn_table(trace: Trace) -> list[dict[str, Any]]:
    """Split the main thread into turns: one per prompt the person wrote.

    A turn starts at a main-thread `prompt` event (a typed prompt: not a tool result, an `isMeta`
    injection, the compaction summary, an interrupt or slash-command text; the reader classifies each
    user line) and runs to the next one. A stream-json run with no prompt line is one turn. Main-thread calls
    before the first prompt belong to no turn (see `calls_before_first_turn` in `turn_figures`).

    Parameters
    ----------
    trace
        A trace from `read_trace` (its `events`, `calls` and `result` line).

    Returns
    -------
    list of dict
        One per turn, in order: `turn` (0-based), `line` (of the prompt; None for a stream-json run),
        `calls` (main-thread calls in it), `context_tokens` (prompt tokens of its last call, None if it
        made none or its last call's usage could not be read, `metrics.measured`), `compacted` (a
        main-thread compaction boundary lies between the previous turn's last
        call and this turn's last call), `duration_ms` and `duration_source` (``"turn_duration"``: the
        last `system/turn_duration` line in the turn, exact; ``"result"``: the stream-json `result` line's
        `duration_ms` when a count, exact; ``"timestamps"``: prompt timestamp to the last call's last line,
        ≈ as it omits the final tool work, when not negative; None when nothing says).
    """
    return turns_of_rows(trace, main_events(trace.events), main_calls(trace.calls))


#: Columns of `main_events` rows: `metrics.EVENT_ROW`, then `duration_ms`.
_EVENT_COLS = (*metrics.EVENT_ROW, "duration_ms")
#: Positions in `_EVENT_COLS` rows, by name: `metrics.EVENT_ROW` may gain columns.
_SEQ, _KIND, _TRIGGER, _PRE, _LINE, _TS, _DURATION = (
    _EVENT_COLS.index(c) for c in ("seq", "kind", "trigger", "pre_tokens", "line", "ts_ms", "duration_ms")
)


def main_events(events: Table) -> list[tuple[Any, ...]]:
    """Read the main thread's events as rows: one tuple per event, sorted by `seq`, its fields in the order
    of `metrics.EVENT_ROW` followed by `duration_ms` (ms, as written)."""
    return main_rows(events.get_column("thread_kind").to_list(), events, _EVENT_COLS)


def main_calls(calls: Table) -> list[tuple[Any, ...]]:
    """Read the main thread's calls as rows: one tuple per call, sorted by `seq`: (`seq`, `prompt_tokens`,
    `end_ts_ms`, `cache_read_tokens`, `cache_write_tokens`), tokens exact as written."""
    cols = ("seq", "prompt_tokens", "end_ts_ms", "cache_read_tokens", "cache_write_tokens")
    return main_rows(calls.get_column("thread_kind").to_list(), calls, cols)


def between(rows: list[tuple[Any, ...]]) -> Callable[[int, int | None], list[tuple[Any, ...]]]:
    """A function giving the rows whose first item (a `seq`) is at least `lo` and below `hi` (no bound when
    `hi` is None), in the order of `rows`: a binary search when the rows are in `seq` order (as the tables
    write them), else a scan of every row. Linear in the rows for each call without the search, which made a
    session of 1,000 turns quadratic."""
    seqs = [r[0] for r in rows]
    if any(b < a for a, b in pairwise(seqs)):
        return lambda lo, hi: [r for r in rows if r[0] >= lo and (hi is None or r[0] < hi)]
    return lambda lo, hi: rows[bisect_left(seqs, lo) : len(rows) if hi is None else bisect_left(seqs, hi)]


def turns_of_rows(trace: Trace, ev: list[tuple[Any, ...]], main: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Split the main thread into turns as `turn_table` does, from rows already read.

    Parameters
    ----------
    trace
        The trace (what it records, and its `result` line).
    ev, main
        The main thread's event rows (`main_events`) and call rows (`main_calls`).

    Returns
    -------
    list of dict
        As `turn_table`.
    """
    starts: list[tuple[int, int | None, int | None]] = [(e[_SEQ], e[_LINE], e[_TS]) for e in ev if e[_KIND] == "prompt"]
    if not starts and trace.has.prompt_outside_trace and main:
        starts = [(min(c[0] for c in main), None, None)]
    durations = [(e[_SEQ], e[_DURATION]) for e in ev if e[_KIND] == "turn_duration" and e[_DURATION] is not None]
    bounds = [e[_SEQ] for e in ev if e[_KIND] == "compact_boundary"]
    call_rows = [c[:3] for c in main]
    in_calls, in_durations = between(call_rows), between(durations)
    turns: list[dict[str, Any]] = []
    prev_last_seq: int | None = None
    for i, (seq, line, ts) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else None
        inside = in_calls(seq, end)
        dur_rows = [d for _, d in in_durations(seq, end)]
        duration: int | None = None
        source: str | None = None
        if dur_rows:
            duration, source = int(dur_rows[-1]), "turn_duration"
        elif line is None and (whole := result_count(trace.result, "duration_ms")[0]) is not None:
            duration, source = whole, "result"  # bounded as `reported_duration_ms` is: a count, else unknown
        elif inside and ts is not None and inside[-1][2] is not None and inside[-1][2] >= ts:
            # timestamps out of order (a clock step, damage) measure no duration, never a negative one
            duration, source = int(inside[-1][2] - ts), "timestamps"
        last_seq = inside[-1][0] if inside else None
        compacted = last_seq is not None and any(
            (prev_last_seq is None or b > prev_last_seq) and b < last_seq for b in bounds
        )
        turns.append(
            {
                "turn": i,
                "line": line,
                "calls": len(inside),
                # an unmeasured last call (prompt 0: usage unreadable) leaves the context unknown
                "context_tokens": int(inside[-1][1]) if inside and metrics.measured(inside[-1][1]) else None,
                "compacted": compacted,
                "duration_ms": duration,
                "duration_source": source,
            }
        )
        if last_seq is not None:
            prev_last_seq = last_seq
    return turns


def context_velocity(turns: list[dict[str, Any]]) -> float | None:
    """Return the exponential moving average (α = 1/5) of the change in context size per turn.

    Parameters
    ----------
    turns
        From `turn_table`.

    Returns
    -------
    float or None
        Tokens per turn (exact arithmetic on exact sizes). Samples are the context size at the end of a
        turn that made a call minus that of the previous such turn; a turn that compacted gives no
        sample. None until a second turn has made a call (no sample is not zero growth). The first sample
        seeds the average.

    Examples
    --------
    >>> t = [{"context_tokens": 100, "compacted": False}, {"context_tokens": 200, "compacted": False},
    ...      {"context_tokens": 50, "compacted": True}, {"context_tokens": 350, "compacted": False}]
    >>> context_velocity(t)
    140.0
    """
    ema: float | None = None
    prev: int | None = None
    for t in turns:
        size = t["context_tokens"]
        if size is None:
            continue
        if prev is not None and not t["compacted"]:
            delta = size - prev
            ema = float(delta) if ema is None else ema + VELOCITY_ALPHA * (delta - ema)
        prev = size
    return ema


def context_band(context_tokens: int, threshold_tokens: int, window_tokens: int) -> str:
    """Classify a context size as spec 001's band: ``"ok"``, ``"warn"`` or ``"blocked"``.

    ok below threshold − 20,000; warn from there up to the threshold; blocked at the threshold or at
    window − 3,000. Exact given the threshold.

    Examples
    --------
    >>> [context_band(n, 167_000, 200_000) for n in (146_999, 147_000, 167_000)]
    ['ok', 'warn', 'blocked']
    """
    if context_tokens >= threshold_tokens or context_tokens >= window_tokens - BLOCKING_BUFFER_TOKENS:
        return "blocked"
    if context_tokens >= threshold_tokens - WARN_BAND_TOKENS:
        return "warn"
    return "ok"


def turn_figures(trace: Trace, turns: list[dict[str, Any]], window_tokens: int) -> dict[str, Any]:
    """Compute the per-session turn readings of spec 001.

    Parameters
    ----------
    trace
        The trace (`calls`, `events`).
    turns
        From `turn_table`.
    window_tokens
        The effective context window (`metrics.window_choice`).

    Returns
    -------
    dict
        `turns` (count, exact), `calls_before_first_turn`, `median_calls_per_turn` (over turns with ≥ 1
        call; None if none), `context_tokens` (prompt of the last main call; None without one or when its
        usage could not be read), `context_velocity_tokens`
        (`context_velocity`), `autocompact_threshold_tokens` and `autocompact_threshold_source`
        (``"observed"``: `pre_tokens` of the last auto compaction boundary; else ``"window"``: effective
        window − 20,000 output reserve − 13,000, ≈), `turns_until_autocompact` ((threshold − context) /
        velocity, ≈; None without a positive velocity or a context), `context_band` (`context_band`; None
        without a context), and `fixed_prefix_tokens` (cache read + cache write of the first main call
        whose usage was read, lowered to the context right after any compaction that lands below it; ≈:
        it also holds the opening message).
    """
    return turn_figures_of_rows(turns, window_tokens, main_events(trace.events), main_calls(trace.calls))


def turn_figures_of_rows(
    turns: list[dict[str, Any]], window_tokens: int, ev: list[tuple[Any, ...]], main: list[tuple[Any, ...]]
) -> dict[str, Any]:
    """Compute the per-session turn readings as `turn_figures` does, from rows already read.

    Parameters
    ----------
    turns, window_tokens
        As `turn_figures`.
    ev, main
        The main thread's event rows (`main_events`) and call rows (`main_calls`).

    Returns
    -------
    dict
        As `turn_figures`.
    """
    prompt_seqs = [e[_SEQ] for e in ev if e[_KIND] == "prompt"]
    first_turn_seq = min(prompt_seqs) if prompt_seqs else None
    before = sum(1 for c in main if c[0] < first_turn_seq) if first_turn_seq is not None and turns else 0
    per_turn = [t["calls"] for t in turns if t["calls"] > 0]
    # the last call's prompt; unknown (None) when its usage could not be read (`metrics.measured`)
    context = int(main[-1][1]) if main and metrics.measured(main[-1][1]) else None
    velocity = context_velocity(turns)
    autos = [e for e in ev if e[_KIND] == "compact_boundary" and e[_TRIGGER] == "auto" and e[_PRE] is not None]
    if autos:
        threshold, source = int(autos[-1][_PRE]), "observed"
    else:
        threshold, source = window_tokens - OUTPUT_RESERVE_TOKENS - AUTOCOMPACT_BUFFER_TOKENS, "window"
    prefix = None
    first = next((c for c in main if metrics.measured(c[1])), None)  # the first call whose usage was read
    if first is not None:
        prefix = int(first[3] + first[4])
        bounds = [e[: len(metrics.EVENT_ROW)] for e in ev if e[_KIND] == "compact_boundary"]
        for event in metrics.compaction_events_of(bounds, [c[0] for c in main], [c[1] for c in main]):
            after = event["context_after"]
            if after is not None and after < prefix:
                prefix = after
    return {
        "turns": len(turns),
        "calls_before_first_turn": before,
        "median_calls_per_turn": float(statistics.median(per_turn)) if per_turn else None,
        "context_tokens": context,
        "context_velocity_tokens": velocity,
        "autocompact_threshold_tokens": threshold,
        "autocompact_threshold_source": source,
        "turns_until_autocompact": (threshold - context) / velocity
        if context is not None and velocity and velocity > 0
        else None,
        "context_band": context_band(context, threshold, window_tokens) if context is not None else None,
        "fixed_prefix_tokens": prefix,
    }
