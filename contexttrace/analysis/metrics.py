"""The figures of `context trace` that are not about tool calls: prompt sizes, compactions, threads, time.

Every function here takes a trace's tables (or rows already read, `frame_rows.FrameRows`) and returns a
frame, a dict or a scalar; none reads files, prints or formats numbers. The definitions are spec 004's:

* prompt tokens of a call = input + cache write + cache read (`message.usage`); exact.
* first / peak / growth over the main thread's measured calls (`measured`), in trace order;
  fill = peak / window (the window: `window.window_choice`).
* compact = `system/compact_boundary` lines on the main thread.

The tool-call figures (failures, repeats, result sizes) are in `tool_figures`, the window in `window`,
counts read from a `result` line in `counts`.
"""

from __future__ import annotations

import bisect
from collections import Counter
from fractions import Fraction
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeGuard

from contexttrace.analysis.frame_rows import EVENT_ROW, main_rows
from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import Trace

#: A call is a transient spike when its prompt is at least this many times both neighbours': the harness
#: sometimes reports about twice the real context for one call, and the next call is back to normal.
SPIKE_FACTOR = 1.8

#: A gap between two timestamped lines longer than this is idle time, not work.
IDLE_GAP_MS = 30 * 60 * 1000


def round_half_up(value: Fraction | int, decimals: int = 0) -> float:
    """Round an exact value half up (away from zero at a tie for values >= 0) to `decimals` places.

    Parameters
    ----------
    value
        An exact value: a `Fraction` (prompt ÷ window, × 100 for a percentage) or an int.
    decimals
        Places after the point, >= 0.

    Returns
    -------
    float
        The value rounded half up, computed exactly in integers; only the final division is a float.

    Every percentage and fraction of the context fill is rounded this way, once, from the exact
    fraction prompt ÷ window (`Fraction(prompt, window)`), so each view shows the same figure: 5,010 of
    200,000 tokens (exactly 2.505 %) is 3 % whole, 2.51 % to two decimals, 0.0251 as a fraction. A
    float's binary value (2.505 is stored as 2.50499...) and Python's `round` (half to even) would each
    round it down.

    Examples
    --------
    >>> round_half_up(Fraction(100 * 5010, 200_000)), round_half_up(Fraction(100 * 5010, 200_000), 2)
    (3.0, 2.51)
    >>> round_half_up(Fraction(4999, 200_000), 4), round_half_up(Fraction(100 * 4999, 200_000))
    (0.025, 2.0)
    """
    scale = 10**decimals
    exact = value if isinstance(value, (Fraction, int)) else Fraction(value)
    # floor(value × scale + 1/2) from the numerator and denominator as they are: the floor of
    # (2·n·scale + d) / (2·d) is the same for n/d and for any multiple k·n / k·d, so nothing is reduced
    num, den = exact.numerator, exact.denominator
    return (num * scale * 2 + den) // (2 * den) / scale


def measured(prompt: int | None) -> TypeGuard[int]:
    """Whether a call's prompt size was measured: its prompt tokens (int or None) are above 0.

    Returns True for a measured prompt (and narrows `prompt` to int for mypy). A real model call always
    sends some prompt (the system prompt alone is thousands of tokens). A call whose prompt reads 0 had
    usage counts the reader could not read (a float ``10.0``, a string, a negative number: read as 0 and
    warned), so its size is unknown, not 0: `context_figures`, the window's peak rule, health's Context
    Fill and weather's ctx_pressure leave it out.

    >>> measured(21_390), measured(0), measured(None)
    (True, False, False)
    """
    return prompt is not None and prompt > 0


def output_is_lower_bound(stop_reason: Any) -> bool:
    """Whether a call's `output_tokens` may be a streaming placeholder, not its final count.

    Many Claude Code versions write an assistant line with `stop_reason` null and the usage of the stream's
    first event (`output_tokens` of 1–10), and never write the final count; a call written with its
    `stop_reason` (`calls.stop_reason`) has final usage. The one rule `context usage`
    (`output_lower_bound_calls`) and `context sources` (its output rows) share. Exact; never raises.

    >>> output_is_lower_bound(None), output_is_lower_bound("tool_use")
    (True, False)
    """
    return stop_reason is None


def unmeasured_warning(unmeasured: int, calls: int) -> str | None:
    """Word the warning of a trace with main-thread calls whose prompt size is unknown (`measured`).

    Parameters
    ----------
    unmeasured
        Main-thread calls whose usage could not be read (prompt 0).
    calls
        Main-thread calls in all.

    Returns
    -------
    str or None
        The warning, the same words in `context trace` and `context usage`; None when `unmeasured` is 0.

    >>> unmeasured_warning(2, 5).split(":")[0]
    '2 of 5 main-thread call(s) have unreadable usage (read as 0)'
    """
    if not unmeasured:
        return None
    if unmeasured == calls:
        return (
            f"none of the {calls} main-thread call(s) has readable usage (read as 0): no prompt size was measured, "
            "so first, peak, growth and fill are unknown (0 in JSON, - in the table) and Context Fill has no data "
            "(spec 000's 100)"
        )
    return (
        f"{unmeasured} of {calls} main-thread call(s) have unreadable usage (read as 0): their prompt sizes are "
        "unknown, left out of first, peak, growth, fill and the context readings"
    )


def main_calls(calls: pl.DataFrame) -> pl.DataFrame:
    """Select the main thread's calls, in trace order.

    Parameters
    ----------
    calls
        Call frame (`schema.CALL_SCHEMA`).

    Returns
    -------
    polars.DataFrame
        The rows whose `thread_kind` is ``"main"``, sorted by `seq`, same columns.

    Examples
    --------
    >>> import polars as pl
    >>> main_calls(pl.DataFrame({"seq": [2, 1], "thread_kind": ["main", "subagent"]})).height
    1
    """
    import polars as pl  # the frame API imports Polars; reports (plain rows) never do

    return calls.filter(pl.col("thread_kind") == THREAD_MAIN).sort("seq")


def prompt_series(calls: pl.DataFrame) -> list[int]:
    """Return the prompt tokens of each main-thread call, in trace order.

    Returns
    -------
    list of int
        Tokens (exact: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` of each
        deduplicated `assistant` call); empty when the trace has no main-thread call.
    """
    rows = main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens"))
    return [int(v) for _, v in rows]


def context_figures(series: list[int], window: int | None) -> dict[str, Any]:
    """Compute first, peak, growth and fill from a prompt-token series, over its measured calls.

    Parameters
    ----------
    series
        Prompt tokens per main-thread call, in order (`prompt_series`). A 0 is a call whose usage could
        not be read (`measured`): it is left out of every figure here, never taken as a 0-token prompt.
    window
        Context window in tokens, or None when not known (then `fill` is None).

    Returns
    -------
    dict
        Over the measured calls: `first` (the first one's prompt), `peak`, `growth` (peak − first; tokens,
        exact; all 0 when no call was measured), `fill` (peak / window, a fraction 0–1+; None without a
        window or a call, 0.0 when no call was measured, like the others), `spikes` (0-based indexes into
        `series` of the calls flagged as transient spikes: at least 1.8× both measured neighbours, or
        above the window; the JSON writes them as call numbers from 1), `peak_without_spikes` (tokens)
        and `unmeasured` (how many calls of `series` were left out).

    Examples
    --------
    >>> f = context_figures([21390, 21673], 200000)
    >>> f["first"], f["peak"], f["growth"], round(f["fill"], 4)
    (21390, 21673, 283, 0.1084)
    >>> f = context_figures([0, 100, 0, 300, 100], None)
    >>> f["first"], f["peak"], f["spikes"], f["unmeasured"]
    (100, 300, [3], 2)
    """
    at = [i for i, v in enumerate(series) if measured(v)]
    values = [series[i] for i in at]
    if not values:  # no call, or none measured: 0s (the JSON's integers; the table shows `-` for the latter)
        fill = 0.0 if series and window else None
        return {"first": 0, "peak": 0, "growth": 0, "fill": fill, "spikes": [], "peak_without_spikes": 0,
                "unmeasured": len(series)}  # fmt: skip
    first = values[0]
    peak = max(values)
    flagged = spike_indexes(values)
    if window is not None and peak > window:  # a call above the window is flagged too
        spikes = set(flagged)
        flagged = [k for k, v in enumerate(values) if v > window or k in spikes]
    left_out = set(flagged)
    return {
        "first": first,
        "peak": peak,
        "growth": peak - first,
        "fill": peak / window if window else None,
        "spikes": [at[k] for k in flagged],
        "peak_without_spikes": max((v for k, v in enumerate(values) if k not in left_out), default=0),
        "unmeasured": len(series) - len(values),
    }


def fill_of(series: list[int], window: int) -> float | None:
    """The fill: the peak measured prompt (tokens) as a fraction of `window` (tokens), above 1 when the peak
    exceeds it; 0.0 when no call was measured, None without a call. Exact (one float division).

    >>> fill_of([0, 100, 300], 400), fill_of([0], 400), fill_of([], 400)
    (0.75, 0.0, None)
    """
    if not series:
        return None
    return max((v for v in series if measured(v)), default=0) / window


def is_spike(series: list[int], i: int) -> bool:
    """Whether prompt `i` of `series` (tokens) is a transient spike; False for an index at either end.

    A spike is neither the first nor the last prompt and is at least `SPIKE_FACTOR` times both
    neighbours: a call's usage can read about twice the real context for one call, the next call back to
    normal. Exact.

    >>> is_spike([100, 400, 110], 1), is_spike([100, 150, 110], 1), is_spike([100, 400], 1)
    (True, False, False)
    """
    return 0 < i < len(series) - 1 and series[i] >= SPIKE_FACTOR * max(series[i - 1], series[i + 1])


def spike_indexes(series: list[int]) -> list[int]:
    """Return the indexes `i` of `series` (prompt tokens) for which `is_spike(series, i)` holds.

    Returns
    -------
    list of int
        0-based indexes, ascending, found in one pass. Exact.

    >>> spike_indexes([100, 400, 110, 500, 120])
    [1, 3]
    """
    return [i for i in range(1, len(series) - 1) if series[i] >= SPIKE_FACTOR * max(series[i - 1], series[i + 1])]


def compaction_events(events: pl.DataFrame, calls: pl.DataFrame) -> list[dict[str, Any]]:
    """List the main thread's compaction boundaries with what the trace says about each.

    Parameters
    ----------
    events
        Event frame (`schema.EVENT_SCHEMA`).
    calls
        Call frame (`schema.CALL_SCHEMA`).

    Returns
    -------
    list of dict
        One per `system/compact_boundary` line on the main thread, in order, with `trigger` ("auto" /
        "manual" / None), `pre_tokens` and `post_tokens` (as the harness wrote them, None where absent;
        metadata only: they can differ from the usage-derived context several times over), `call`
        (1-based number among main calls, as `--calls` numbers them, of the first call after the
        boundary; None if none followed), `line`, and `context_before` / `context_after` /
        `effect_tokens` (prompt tokens of the last call before and first call after, and after minus
        before; usage-derived, exact, may be positive).
    """
    bounds = [
        e
        for e in main_rows(events.get_column("thread_kind").to_list(), events, EVENT_ROW)
        if e[1] == "compact_boundary"
    ]
    if not bounds:
        return []
    main = main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens"))
    return compaction_events_of(bounds, [s for s, _ in main], [p for _, p in main])


def compaction_events_of(bounds: list[tuple[Any, ...]], seqs: list[int], prompts: list[int]) -> list[dict[str, Any]]:
    """List compactions as `compaction_events` does, from rows already read.

    Parameters
    ----------
    bounds
        The main thread's `compact_boundary` event rows (`frame_rows.EVENT_ROW` order; extra columns after
        those are ignored), by seq.
    seqs, prompts
        The main calls' seqs and prompt tokens, in trace order.

    Returns
    -------
    list of dict
        The same as `compaction_events`.
    """
    out = []
    for seq, _kind, trigger, pre, post, line, *_ in bounds:
        at = bisect.bisect_right(seqs, seq)  # first main call after the boundary
        after = at if at < len(seqs) else None
        before = (after - 1 if after is not None else len(seqs) - 1) if seqs else -1
        # an unmeasured call (prompt 0: usage unreadable) has no known context size
        ctx_before = prompts[before] if before >= 0 and measured(prompts[before]) else None
        ctx_after = prompts[after] if after is not None and measured(prompts[after]) else None
        out.append(
            {
                "trigger": trigger,
                "pre_tokens": pre,
                "post_tokens": post,
                "call": after + 1 if after is not None else None,
                "line": line,
                "context_before": ctx_before,
                "context_after": ctx_after,
                "effect_tokens": ctx_after - ctx_before if ctx_after is not None and ctx_before is not None else None,
            }
        )
    return out


def microcompaction_events(micro: list[tuple[Any, ...]], seqs: list[int]) -> list[dict[str, Any]]:
    """List the main thread's microcompactions: old tool results cleared, the rest of the window kept.

    Parameters
    ----------
    micro
        Main-thread `microcompact_boundary` event rows (`EVENT_ROW` order), by seq.
    seqs
        Seqs of the main-thread calls, in order.

    Returns
    -------
    list of dict
        One per boundary: `call` (1-based number of the first main call after it, None if none),
        `line`, `trigger`, `pre_tokens` and `tokens_saved` (as the harness states them in
        `microcompactMetadata`, metadata like a compaction's `preTokens`), `cleared_results` (how many
        tool results its `compactedToolIds` names). Exact as written.

    >>> microcompaction_events([(5, "microcompact_boundary", "auto", 29023, None, 5, None, 8000, 1)], [2, 4, 7])
    [{'call': 3, 'line': 5, 'trigger': 'auto', 'pre_tokens': 29023, 'tokens_saved': 8000, 'cleared_results': 1}]
    """
    out = []
    for seq, _kind, trigger, pre, _post, line, _ts, saved, cleared in micro:
        at = bisect.bisect_right(seqs, seq)
        out.append(
            {
                "call": at + 1 if at < len(seqs) else None,
                "line": line,
                "trigger": trigger,
                "pre_tokens": pre,
                "tokens_saved": saved,
                "cleared_results": cleared,
            }
        )
    return out


def thread_call_counts(calls: pl.DataFrame) -> dict[str, int]:
    """Count calls per thread kind.

    Returns
    -------
    dict
        `calls` (main thread), `subagent_calls` (every subagent and sidechain, warmups included),
        `compaction_calls` (the compaction summariser's own calls); exact.
    """
    return thread_call_counts_of(calls.get_column("thread_kind").to_list())


def thread_call_counts_of(kinds: list[str | None]) -> dict[str, int]:
    """Count calls per thread kind as `thread_call_counts` does, from the calls' `thread_kind` column.

    Returns
    -------
    dict
        The same as `thread_call_counts`.

    >>> thread_call_counts_of(["main", "subagent", "main", None])
    {'calls': 2, 'subagent_calls': 1, 'compaction_calls': 0}
    """
    counts = Counter(kinds)
    return {
        "calls": int(counts.get(THREAD_MAIN, 0)),
        "subagent_calls": int(counts.get(THREAD_SUBAGENT, 0)),
        "compaction_calls": int(counts.get(THREAD_COMPACTION, 0)),
    }


def missing_subagents(trace: Trace) -> list[str]:
    """List the subagents a Task/Agent result names whose calls the trace does not hold.

    A 2.x transcript's Task/Agent result names its agent (`toolUseResult.agentId`: the `tool_results`
    column `agent_id`); the agent's calls are in `<session>/subagents/agent-<id>.jsonl` or a flat
    `agent-<id>.jsonl`. A session piped on stdin or copied without them has the name and not the calls,
    so `subagent_calls` and every usage total miss them. An agent counts as found when a call's thread
    carries its id, when a thread is named by the Task call's id (stream-json), or when its file was read
    (`trace.agents`, or a file named `agent-<id>.jsonl`: an agent with no call). Both reports warn with
    `missing_subagents_warning`.

    Returns
    -------
    list of str
        The agent ids, each once, in the order of the results that name them. Exact.
    """
    results = trace.view("tool_results")
    agent_ids = results.get_column("agent_id").to_list()
    if agent_ids.count(None) == len(agent_ids):  # no result names an agent: nothing to look for
        return []
    return missing_subagents_of(
        agent_ids,
        results.get_column("tool_use_id").to_list(),
        set(trace.view("calls").get_column("thread").to_list()),
        set(getattr(trace, "agents", None) or ()) | {f.replace("\\", "/").rsplit("/", 1)[-1] for f in trace.files},
    )


def missing_subagents_of(
    agent_ids: list[str | None], tool_use_ids: list[str | None], threads: set[Any], read: set[str]
) -> list[str]:
    """List missing subagents as `missing_subagents` does, from values already read.

    Parameters
    ----------
    agent_ids, tool_use_ids
        The tool results' `agent_id` and `tool_use_id` columns, as lists of the same length.
    threads
        Every call's `thread`.
    read
        The agent ids whose file was read, and the names of the files read.

    Returns
    -------
    list of str
        The same as `missing_subagents`.

    >>> missing_subagents_of(["a", "b", None, "a"], ["t1", "t2", "t3", "t4"], {"main", "b"}, set())
    ['a']
    """
    missing = [
        agent
        for agent, tid in zip(agent_ids, tool_use_ids, strict=True)
        if agent is not None
        and agent not in threads
        and tid not in threads
        and agent not in read
        and f"agent-{agent}.jsonl" not in read
    ]
    return list(dict.fromkeys(missing))


def missing_subagents_warning(missing: list[str]) -> str | None:
    """Word the one warning both reports give for `missing_subagents`.

    Returns
    -------
    str or None
        The count and the ids, comma-separated, in the order given; None when `missing` is empty.

    >>> missing_subagents_warning(["ea02459f"])
    '1 subagent(s) referenced but not found; totals exclude them (ea02459f)'
    """
    if not missing:
        return None
    ids = ", ".join(missing)
    return f"{len(missing)} subagent(s) referenced but not found; totals exclude them ({ids})"


def models_used(calls: pl.DataFrame) -> list[str]:
    """List the distinct model ids of the trace's calls, every thread, in order of first use.

    Returns
    -------
    list of str
        `calls.model` values, each once, ordered by the `seq` of the first call that used it; a call
        without a model is left out; a ``<synthetic>`` line (an API error) is no call, so never listed.
        Exact.
    """
    return models_used_of(
        list(zip(calls.get_column("seq").to_list(), calls.get_column("model").to_list(), strict=True))
    )


def models_used_of(call_models: list[tuple[int, str | None]]) -> list[str]:
    """List the models as `models_used` does, from every call's (seq, model) in any order.

    Returns
    -------
    list of str
        The same as `models_used`.

    >>> models_used_of([(3, "b"), (1, "a"), (2, None), (4, "a")])
    ['a', 'b']
    """
    ordered = sorted(call_models, key=itemgetter(0))
    return list(dict.fromkeys(m for _, m in ordered if m is not None))


def durations(trace: Trace) -> dict[str, int | None]:
    """Measure how long a trace ran, from its lines' timestamps.

    Returns
    -------
    dict
        `duration_ms` (wall: last timestamp − first, over every timestamped user, assistant and system
        line of every thread; progress and bookkeeping lines are not read) and `active_duration_ms` (the
        same with every gap longer than `IDLE_GAP_MS` left out); both None when the trace has no
        timestamps (stream-json). Exact differences of the lines' ISO-8601 `timestamp` fields, whatever
        order the lines are in (max − min: lines can be written out of order).
    """
    stamps = trace.timestamps_ms
    if not stamps:
        return {"duration_ms": None, "active_duration_ms": None}
    active = 0
    prev = stamps[0]
    for ts in stamps:  # timestamps_ms is sorted and has no null
        if ts - prev <= IDLE_GAP_MS:
            active += ts - prev
        prev = ts
    return {"duration_ms": int(stamps[-1] - stamps[0]), "active_duration_ms": int(active)}
