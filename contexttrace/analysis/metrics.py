"""Pure metric functions over the normalised frames of `schema.py`.

Every function here takes frames (or a `reader.Trace`) and returns a frame or a scalar; none reads files,
prints or formats numbers. The definitions are spec 004's, with the open points decided in issue 2:

* prompt tokens of a call = input + cache write + cache read (`message.usage`); exact.
* first / peak / growth over the main thread's calls, in trace order; fill = peak / window.
* compact = `system/compact_boundary` lines on the main thread.
* repeat = a main-thread tool call identical in name and canonical input to an earlier one whose result
  did not fail, with no Bash/Edit/MultiEdit/NotebookEdit/Write call and no compaction boundary in between
  (a boundary ends what the agent "already had": its content left the window).
* result chars = characters of the main thread's tool results (images apart).
"""

from __future__ import annotations

import bisect
from collections import Counter
from fractions import Fraction
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import Table, Trace

#: Tools whose call can change what a repeated read would return; a call after one is not a repeat.
WRITER_TOOLS = frozenset({"Bash", "Edit", "MultiEdit", "NotebookEdit", "Write"})

#: A call is a spike when its prompt is at least this many times both neighbours' (CASES B11).
SPIKE_FACTOR = 1.8

#: How many tools the "largest tool results" line names.
LARGEST_TOOLS_SHOWN = 5

#: A count at or above this is not a count: past 2**53 a float, and so Claude Code's JavaScript, cannot hold
#: it exactly. The reader bounds usage and other counts the same way (fuzz 04, 09); `count_of` bounds what
#: the figures take from a stream-json `result` line, which the reader keeps as written.
MAX_COUNT = 2**53

#: The largest context window, in tokens, taken from `--window` (the CLI refuses more) or from a trace
#: (`window_choice` leaves a larger `contextWindow` out): ten times the largest window a Claude model
#: offers (1M tokens), so a typo or damage (an extra zero or two) is never a fill of 0 %.
MAX_WINDOW_TOKENS = 10_000_000


def count_of(value: Any) -> tuple[int | None, bool]:
    """Read a count (tokens, ms, turns) as the trace wrote it, bounded as the reader bounds usage counts.

    Returns
    -------
    (int or None, bool)
        ``(n, True)`` for an int with 0 <= n < `MAX_COUNT` (a bool is not an int here); ``(None, True)``
        when absent or null; ``(None, False)`` when written but not a count: a string, a float (``10.0``,
        NaN, ``1e999``), a list, a bool, a negative number, or an integer of 2**53 or more (the lenient
        JSON fallback reads any number of digits).

    Examples
    --------
    >>> count_of(5), count_of(None), count_of(-1), count_of(10.0), count_of(10**400), count_of(True)
    ((5, True), (None, True), (None, False), (None, False), (None, False), (None, False))
    """
    if value is None:
        return None, True
    if type(value) is int and 0 <= value < MAX_COUNT:
        return value, True
    return None, False


def _shown(value: Any) -> str:
    """A value as a warning quotes it: its repr, cut at 40 characters (a 400-digit integer stays short); a
    container by its type and size (a 990-deep object has no repr: RecursionError), an integer past
    Python's digit limit by its size. Raises nothing."""
    if type(value) is int and value.bit_length() > 14_000:  # past str()'s 4,300 digits: ValueError
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep to show
        return f"a {'JSON object' if isinstance(value, dict) else type(value).__name__} nested too deep to show"
    return text if len(text) <= 40 else text[:39] + "…"


def result_count(result: dict[str, Any] | None, key: str, where: str = "") -> tuple[int | None, str | None]:
    """Read one count of a stream-json `result` line (`duration_ms`, `num_turns`, a `usage` count).

    Parameters
    ----------
    result
        The `result` line (`Trace.result`) or a dict inside it (its `usage`), or None.
    key
        The field's name as written.
    where
        How the warning names the dict inside the line (``"usage."``), empty for the line itself.

    Returns
    -------
    (int or None, str or None)
        The count (`count_of`), None when absent or not a count; and a warning when a value was written
        that is not a count (it is then unknown, never a figure), else None.

    Examples
    --------
    >>> result_count({"duration_ms": -123456789}, "duration_ms")
    (None, 'result line: duration_ms is not a count (-123456789); not used')
    """
    value = (result or {}).get(key)
    count, ok = count_of(value)
    return count, None if ok else f"result line: {where}{key} is not a count ({_shown(value)}); not used"


def context_windows(result: dict[str, Any] | None) -> tuple[dict[str, int], list[str]]:
    """Read the `contextWindow` of each model a stream-json `result` line's `modelUsage` lists.

    Returns
    -------
    (dict, list of str)
        Model key (as written) → window in tokens, only for a count from 1 to `MAX_WINDOW_TOKENS`, in the
        order written; and a warning per `contextWindow` written that is not such a window (not a count,
        0, or above `MAX_WINDOW_TOKENS`: no model has that window, so `window_choice` goes on to its next
        rule rather than measure every fill against it). Never raises.

    Examples
    --------
    >>> context_windows({"modelUsage": {"a": {"contextWindow": 200000}, "b": {"contextWindow": 10**400}}})[0]
    {'a': 200000}
    """
    usage = (result or {}).get("modelUsage")
    if not isinstance(usage, dict):
        return {}, []
    sizes: dict[str, int] = {}
    warnings = []
    for model, entry in usage.items():
        if not isinstance(entry, dict) or entry.get("contextWindow") is None:
            continue
        value = entry["contextWindow"]
        size, _ = count_of(value)
        if size is not None and 0 < size <= MAX_WINDOW_TOKENS:
            sizes[model] = size
        else:
            warnings.append(
                f"result line: modelUsage[{model!r}] contextWindow is not a window of 1 to "
                f"{MAX_WINDOW_TOKENS:,} tokens ({_shown(value)}); not used"
            )
    return sizes, warnings


def round_half_up(value: Fraction | int, decimals: int = 0) -> float:
    """Round an exact value half up (away from zero at a tie for values >= 0) to `decimals` places.

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
    """Whether a call's prompt size was measured: its prompt tokens are above 0.

    A real model call always sends some prompt (the system prompt alone is thousands of tokens). A call
    whose prompt reads 0 had usage counts the reader could not read (a float ``10.0``, a string, a
    negative number: read as 0 and warned), so its size is unknown, not 0: `context_figures`, the
    window's peak rule, health's Context Fill and weather's ctx_pressure leave it out.
    """
    return prompt is not None and prompt > 0


def output_is_lower_bound(stop_reason: Any) -> bool:
    """Whether a call's `output_tokens` may be a streaming placeholder, not its final count (FORMATS G2):
    the call was written with no `stop_reason` (`calls.stop_reason` null). The one rule `context usage`
    (`output_lower_bound_calls`) and `context sources` (its output rows) share.

    >>> output_is_lower_bound(None), output_is_lower_bound("tool_use")
    (True, False)
    """
    return stop_reason is None


def unmeasured_warning(unmeasured: int, calls: int) -> str | None:
    """The warning of a trace with main-thread calls whose prompt size is unknown (`measured`), else None;
    the same words in `context trace` and `context usage`.

    >>> unmeasured_warning(2, 5).split(":")[0]
    '2 of 5 main-thread call(s) have unreadable usage (read as 0)'
    """
    if not unmeasured:
        return None
    if unmeasured == calls:
        return (
            f"none of the {calls} main-thread call(s) has readable usage (read as 0): no prompt size was measured, "
            "so first, peak, growth and fill are unknown (0 in JSON, - in the table) and Context Fill abstains"
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


_by_seq = itemgetter(0)

#: Columns of `FrameRows.main_calls`, `main_uses`, `main_results` and `main_events`, in tuple order.
#: `ts_ms` stays last in a call, use and result row: `health._moments` reads a row's moment as its last column.
CALL_ROW = ("seq", "prompt_tokens", "cache_read_tokens", "stop_reason", "model", "end_ts_ms", "prev_ts_ms",
            "output_tokens", "ts_ms")  # fmt: skip
USE_ROW = ("seq", "tool_use_id", "name", "input_json", "file_path", "ts_ms")
RESULT_ROW = ("seq", "tool_use_id", "is_error", "denied", "result_chars", "result_images", "result_image_bytes",
              "persisted", "persisted_bytes", "ts_ms")  # fmt: skip
EVENT_ROW = ("seq", "kind", "trigger", "pre_tokens", "post_tokens", "line", "ts_ms", "tokens_saved", "cleared_results")


def _main_rows(kinds: list[Any], frame: Table, cols: tuple[str, ...], sort: bool = True) -> list[tuple[Any, ...]]:
    """Rows (tuples of `cols`) whose thread kind is main; sorted by the first column (`seq`, stable, as
    Polars' sort) unless `sort` is false (then in frame order)."""
    lists = [frame.get_column(c).to_list() for c in cols]
    if kinds.count(THREAD_MAIN) == len(kinds):  # every row is the main thread's: no subagent, no compaction
        rows = list(zip(*lists, strict=True))
        if sort and lists[0] != sorted(lists[0]):  # a stable sort of rows already in order moves none
            rows.sort(key=_by_seq)
        return rows
    rows = [r for k, r in zip(kinds, zip(*lists, strict=True), strict=True) if k == THREAD_MAIN]
    if sort:
        rows.sort(key=_by_seq)
    return rows


class FrameRows:
    """One trace's frames as plain Python rows, read once and shared by every figure of a report.

    On frames of tens to hundreds of rows a Polars operation costs more in overhead (≈ 20–100 µs) than
    in work, so `report.build_report` reads the columns its figures need once into lists and computes
    from those; the public functions below read their frames the same way. `main_*` rows are the main
    thread's (tuples in the order of `CALL_ROW`, `USE_ROW`, `RESULT_ROW`, `EVENT_ROW`), sorted by `seq`
    except `main_results` (frame order).
    """

    def __init__(self, trace: Trace) -> None:
        # Views, not frames: a report never needs the Polars frames it would turn straight into lists.
        calls, uses, results, events = (trace.view(t) for t in ("calls", "tool_uses", "tool_results", "events"))
        self.call_kinds: list[str | None] = calls.get_column("thread_kind").to_list()
        self.main_calls = _main_rows(self.call_kinds, calls, CALL_ROW)
        #: every call's (seq, model), all threads
        self.call_models: list[tuple[int, str | None]] = list(
            zip(calls.get_column("seq").to_list(), calls.get_column("model").to_list(), strict=True)
        )
        use_kinds = uses.get_column("thread_kind").to_list()
        self.main_uses = _main_rows(use_kinds, uses, USE_ROW)
        #: every tool use's (tool_use_id, name), all threads, frame order
        self.use_names: list[tuple[str | None, str | None]] = list(
            zip(uses.get_column("tool_use_id").to_list(), uses.get_column("name").to_list(), strict=True)
        )
        result_kinds = results.get_column("thread_kind").to_list()
        self.main_results = _main_rows(result_kinds, results, RESULT_ROW, sort=False)
        result_ids = results.get_column("tool_use_id").to_list()
        self.failed_ids: set[str] = {
            i for i, e in zip(result_ids, results.get_column("is_error").to_list(), strict=True) if e and i is not None
        }
        self.hashes: dict[str, int] = _hashes(results, result_ids)
        self.main_events = _main_rows(events.get_column("thread_kind").to_list(), events, EVENT_ROW)
        self.bounds = [e for e in self.main_events if e[1] == "compact_boundary"]
        self.microcompactions = [e for e in self.main_events if e[1] == "microcompact_boundary"]
        #: (seq of the microcompaction, tool_use_id) of each tool result a microcompaction cleared (B34)
        self.cleared: list[tuple[int, str]] = _cleared(results, result_ids)


def _cleared(results: Table, ids: list[str | None]) -> list[tuple[int, str]]:
    """(cleared_seq, tool_use_id) of the results a microcompaction cleared, by seq; [] without the column."""
    if "cleared_seq" not in results.columns:
        return []
    return sorted(
        (s, i) for s, i in zip(results.get_column("cleared_seq").to_list(), ids, strict=True) if s is not None and i
    )


def _hashes(results: Table, ids: list[str | None] | None = None) -> dict[str, int]:
    """tool_use_id → content_hash of the results that have both (a later row wins); {} without the column."""
    if "content_hash" not in results.columns:
        return {}
    if ids is None:
        ids = results.get_column("tool_use_id").to_list()
    return {
        i: h
        for i, h in zip(ids, results.get_column("content_hash").to_list(), strict=True)
        if i is not None and h is not None
    }


def prompt_series(calls: pl.DataFrame) -> list[int]:
    """Return the prompt tokens of each main-thread call, in trace order.

    Returns
    -------
    list of int
        Tokens (exact: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` of each
        deduplicated `assistant` call); empty when the trace has no main-thread call.
    """
    rows = _main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens"))
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
    flagged = _spike_indexes(values)
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


def _spike_between(series: list[int], i: int) -> bool:
    """Whether prompt `i` of `series` (tokens) is a transient spike: not first nor last, and at least
    `SPIKE_FACTOR` times both neighbours (CASES B11)."""
    return 0 < i < len(series) - 1 and series[i] >= SPIKE_FACTOR * max(series[i - 1], series[i + 1])


def _spike_indexes(series: list[int]) -> list[int]:
    """The indexes `i` of `series` for which `_spike_between(series, i)` holds, in order, in one pass."""
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
        metadata only, CASES B11), `call` (1-based number among main calls, as `--calls` numbers them,
        of the first call after the boundary; None if none followed), `line`, and `context_before` / `context_after` /
        `effect_tokens` (prompt tokens of the last call before and first call after, and after minus
        before; usage-derived, exact, may be positive).
    """
    bounds = [
        e
        for e in _main_rows(events.get_column("thread_kind").to_list(), events, EVENT_ROW)
        if e[1] == "compact_boundary"
    ]
    if not bounds:
        return []
    main = _main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens"))
    return _compaction_events(bounds, [s for s, _ in main], [p for _, p in main])


def _compaction_events(bounds: list[tuple[Any, ...]], seqs: list[int], prompts: list[int]) -> list[dict[str, Any]]:
    """`compaction_events` from main-thread boundary rows (`EVENT_ROW`) and the main calls' seqs and prompts."""
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
    """List the main thread's microcompactions (CASES B34): old tool results cleared, no full compaction.

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


def repeat_flags(tool_uses: pl.DataFrame, tool_results: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Flag main-thread tool calls that fetch again what the agent already had.

    Parameters
    ----------
    tool_uses, tool_results, events
        Frames of one trace (`schema.TOOL_USE_SCHEMA`, `TOOL_RESULT_SCHEMA`, `EVENT_SCHEMA`).

    Returns
    -------
    polars.DataFrame
        One row per main-thread tool use, in trace order: `seq` (i64), `tool_use_id` (str), `name`
        (str), `is_repeat` (bool), `same_result` (bool: a repeat whose result text is identical to the
        earlier call's, so it fetched exactly what the agent already had; polling that returns new
        output each time is a repeat but not `same_result`, CASES B24). A call is a repeat when an
        earlier main-thread call had the same name and canonical input (sorted keys), its result did
        not fail (`is_error` not true; a call with no result yet counts as not failed), and no
        `WRITER_TOOLS` call nor compaction boundary lies strictly between the two, nor a microcompaction
        that cleared the earlier call's result (`tool_results.cleared_seq`, CASES B34: the agent no
        longer had it). Exact.

    Examples
    --------
    >>> import polars as pl
    >>> uses = pl.DataFrame({"seq": [1, 2, 3], "tool_use_id": ["a", "b", "c"], "thread_kind": ["main"] * 3,
    ...     "name": ["Read", "Read", "Read"], "input_json": ['{"f":1}', '{"f":1}', '{"f":2}']})
    >>> res = pl.DataFrame({"tool_use_id": ["a"], "is_error": [False]})
    >>> ev = pl.DataFrame(schema={"seq": pl.Int64, "kind": pl.String, "thread_kind": pl.String})
    >>> repeat_flags(uses, res, ev)["is_repeat"].to_list()
    [False, True, False]
    """
    uses = _main_rows(
        tool_uses.get_column("thread_kind").to_list(), tool_uses, ("seq", "tool_use_id", "name", "input_json")
    )
    ids = tool_results.get_column("tool_use_id").to_list()
    failed = {i for i, e in zip(ids, tool_results.get_column("is_error").to_list(), strict=True) if e and i is not None}
    bounds = [
        s
        for s, k, t in zip(
            events.get_column("seq").to_list(),
            events.get_column("kind").to_list(),
            events.get_column("thread_kind").to_list(),
            strict=True,
        )
        if k == "compact_boundary" and t == THREAD_MAIN
    ]
    cleared = _cleared(tool_results, ids)
    flags, same = _repeats(uses, failed, _hashes(tool_results, ids), bounds, cleared)
    import polars as pl

    return pl.DataFrame(
        {
            "seq": [u[0] for u in uses],
            "tool_use_id": [u[1] for u in uses],
            "name": [u[2] for u in uses],
            "is_repeat": flags,
            "same_result": same,
        },
        schema={"seq": tool_uses.schema["seq"], "tool_use_id": tool_uses.schema["tool_use_id"],
                "name": tool_uses.schema["name"], "is_repeat": pl.Boolean, "same_result": pl.Boolean},
    )  # fmt: skip


def _repeats(
    uses: list[tuple[Any, ...]],
    failed: set[str],
    hashes: dict[str, int],
    bound_seqs: list[int],
    cleared: list[tuple[int, str]] = (),  # type: ignore[assignment]
) -> tuple[list[bool], list[bool]]:
    """`repeat_flags`' two columns from main-thread uses (seq, tool_use_id, name, input_json, ...) in
    order, the ids of failed results, result hashes, the main thread's compaction boundary seqs and the
    results microcompactions cleared ((seq, tool_use_id), by seq)."""
    bounds = sorted(bound_seqs)
    flags: list[bool] = []
    same: list[bool] = []
    # signature -> (writers seen, inclusive, when the latest non-failed identical call was made; its id)
    had: dict[tuple[str, str], tuple[int, str]] = {}
    sig_of: dict[str, tuple[str, str]] = {}  # tool_use_id -> its signature, for a microcompaction's clearing
    writers = 0
    b = c = 0
    for seq, tid, name, payload, *_ in uses:
        while b < len(bounds) and bounds[b] < seq:
            had.clear()
            b += 1
        while c < len(cleared) and cleared[c][0] < seq:
            gone = cleared[c][1]
            sig = sig_of.pop(gone, None)
            if sig is not None and had.get(sig, (0, None))[1] == gone:
                del had[sig]  # its result left the window: fetching it again is not a repeat (B34)
            c += 1
        sig = (name, payload)
        earlier = had.get(sig)
        repeat = earlier is not None and earlier[0] == writers
        flags.append(repeat)
        same.append(
            repeat and earlier is not None and hashes.get(tid) is not None and hashes.get(tid) == hashes.get(earlier[1])
        )
        if name in WRITER_TOOLS:
            writers += 1
        if tid not in failed:
            had[sig] = (writers, tid)
            if tid is not None:
                sig_of[tid] = sig
    return flags, same


def tool_figures(trace: Trace) -> dict[str, Any]:
    """Count the main thread's tool calls, failures, denials, repeats and result sizes.

    Returns
    -------
    dict
        `tools` (tool_use blocks on the main thread, deduplicated by id), `failed` (their results with
        `is_error` true, denials included), `denied` (refusals by a person or a rule, a subset of
        failed), `repeat` (see `repeat_flags`), `result_chars` (chars of text in main-thread tool
        results), `result_images` / `result_image_bytes` (image blocks, decoded bytes), `orphan_results`
        (results whose tool_use_id matches no tool use), `persisted_results` (results written as a
        `<persisted-output>` preview) and `persisted_bytes` (≈ the full sizes those previews state).
        All exact except `persisted_bytes`.
    """
    return _tool_figures(FrameRows(trace))


def _tool_figures(rows: FrameRows) -> dict[str, Any]:
    """`tool_figures` from a trace's `FrameRows`."""
    known = {i for i, _ in rows.use_names if i is not None}
    flags, same = _repeats(rows.main_uses, rows.failed_ids, rows.hashes, [b[0] for b in rows.bounds], rows.cleared)
    failed = denied = chars = images = image_bytes = orphans = persisted = persisted_bytes = 0
    for _seq, tid, err, den, rc, ri, rib, pers, pb, _ts in rows.main_results:
        # Polars' sums skip nulls; `is_error & denied` is null (not counted) when either is null
        failed += err is True
        denied += err is True and den is True
        chars += rc or 0
        images += ri or 0
        image_bytes += rib or 0
        orphans += tid is not None and tid not in known
        persisted += pers is True
        persisted_bytes += pb or 0
    return {
        "tools": len(rows.main_uses),
        "failed": failed,
        "denied": denied,
        "repeat": sum(flags),
        "repeat_same_result": sum(same),
        "result_chars": chars,
        "result_images": images,
        "result_image_bytes": image_bytes,
        "orphan_results": orphans,
        "persisted_results": persisted,
        "persisted_bytes": persisted_bytes,
    }


def largest_results(
    tool_uses: pl.DataFrame, tool_results: pl.DataFrame, limit: int = LARGEST_TOOLS_SHOWN
) -> list[dict[str, Any]]:
    """Rank tools by the characters their main-thread results put into the context.

    Returns
    -------
    list of dict
        Up to `limit` entries `{"tool": name, "chars": total}`, largest first (ties by name); tools
        whose results total 0 chars are left out. A result whose call is unknown counts under ``"?"``.
    """
    names = list(
        zip(tool_uses.get_column("tool_use_id").to_list(), tool_uses.get_column("name").to_list(), strict=True)
    )
    results = _main_rows(
        tool_results.get_column("thread_kind").to_list(), tool_results, ("tool_use_id", "result_chars"), sort=False
    )
    return _largest_results(names, results, limit)


def _largest_results(
    names: list[tuple[str | None, str | None]], results: list[tuple[Any, Any]], limit: int = LARGEST_TOOLS_SHOWN
) -> list[dict[str, Any]]:
    """`largest_results` from every use's (tool_use_id, name) and main results' (tool_use_id, result_chars)."""
    totals: dict[str, int] = {}
    name_of = dict(names)
    if len(name_of) == len(names):  # no id twice (nor two null ids): a result's call is one row, or none
        for tid, chars in results:
            name = name_of.get(tid) if tid is not None else None  # a left join never matches null keys
            key = name if name is not None else "?"
            totals[key] = totals.get(key, 0) + (chars or 0)
    else:
        by_id: dict[str, list[str]] = {}
        for tid, name in names:
            if tid is not None:  # a repeated id matches each of its rows
                by_id.setdefault(tid, []).append(name if name is not None else "?")
        for tid, chars in results:
            for key in by_id.get(tid, ["?"]) if tid is not None else ["?"]:
                totals[key] = totals.get(key, 0) + (chars or 0)
    ranked = sorted(((c, n) for n, c in totals.items() if c > 0), key=lambda cn: (-cn[0], cn[1]))[:limit]
    return [{"tool": n, "chars": int(c)} for c, n in ranked]


def thread_call_counts(calls: pl.DataFrame) -> dict[str, int]:
    """Count calls per thread kind.

    Returns
    -------
    dict
        `calls` (main thread), `subagent_calls` (every subagent and sidechain, warmups included),
        `compaction_calls` (the compaction summariser's own calls); exact.
    """
    return _thread_call_counts(calls.get_column("thread_kind").to_list())


def _thread_call_counts(kinds: list[str | None]) -> dict[str, int]:
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
    return _missing_subagents(
        agent_ids,
        results.get_column("tool_use_id").to_list(),
        set(trace.view("calls").get_column("thread").to_list()),
        set(getattr(trace, "agents", None) or ()) | {f.replace("\\", "/").rsplit("/", 1)[-1] for f in trace.files},
    )


def _missing_subagents(
    agent_ids: list[str | None], tool_use_ids: list[str | None], threads: set[Any], read: set[str]
) -> list[str]:
    """`missing_subagents` from the results' (agent_id, tool_use_id), the calls' threads, and the agent ids
    and file names read.

    >>> _missing_subagents(["a", "b", None, "a"], ["t1", "t2", "t3", "t4"], {"main", "b"}, set())
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
    """The one warning both reports give for `missing_subagents` (None when there are none).

    >>> missing_subagents_warning(["ea02459f"])
    '1 subagent(s) referenced but not found; totals exclude them (ea02459f)'
    """
    if not missing:
        return None
    ids = ", ".join(missing)
    return f"{len(missing)} subagent(s) referenced but not found; totals exclude them ({ids})"  # issue 10's words


def models_used(calls: pl.DataFrame) -> list[str]:
    """Return the distinct model ids of the trace's calls, in order of first use (synthetic never included)."""
    return _models_used(list(zip(calls.get_column("seq").to_list(), calls.get_column("model").to_list(), strict=True)))


def _models_used(call_models: list[tuple[int, str | None]]) -> list[str]:
    """`models_used` from every call's (seq, model)."""
    ordered = sorted(call_models, key=_by_seq)
    return list(dict.fromkeys(m for _, m in ordered if m is not None))


#: Claude Code's default context window; a larger one is an opt-in that transcripts do not record.
DEFAULT_WINDOW_TOKENS = 200_000

#: The window assumed when a main-thread prompt exceeds the default (spec 000's "auto-detected from
#: session peak"; CASES B26: a context above 200,000 implies the 1M window).
LARGE_WINDOW_TOKENS = 1_000_000


class WindowChoice(NamedTuple):
    """The context window a trace is measured against, and where it came from.

    `source` is one of ``"option"`` (``--window``), ``"modelUsage"`` (the stream-json `result` line's
    `modelUsage[model].contextWindow`), ``"model [1m]"`` (1,000,000: a model id ends in ``[1m]``),
    ``"default"`` (200,000) or ``"peak"`` (1,000,000 because the main-thread peak exceeds 200,000).
    """

    tokens: int
    source: str


def window_choice(trace: Trace, window: int | None = None) -> WindowChoice:
    """Decide the effective context window of a trace (issue 3), with its source.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    window
        `--window` in tokens, or None. When given it wins, even below the trace's peak.

    Returns
    -------
    WindowChoice
        In order of preference: `window`; the `contextWindow` of the main thread's last model in the
        stream-json `result` line's `modelUsage` (or, if that model is not listed, the largest
        `contextWindow` listed; only counts from 1 to `MAX_WINDOW_TOKENS`, `context_windows`); else
        1,000,000 when a model id (the init line's or a call's) ends in ``[1m]``; else 200,000, raised
        to 1,000,000 when the main thread's peak measured prompt exceeds 200,000 (transient spikes, at
        least 1.8× both neighbours, and unmeasured calls, `measured`, left out: CASES B11).
        Exact as far as the trace states it; the default is an assumption (a model-name
        table is never consulted: Opus 4.6 appears at 1M in some tables, yet the b-spotter-compaction
        sample auto-compacted at 170,251 tokens, which only a 200,000 window explains).

    Examples
    --------
    >>> import polars as pl
    >>> from types import SimpleNamespace
    >>> calls = pl.DataFrame({"seq": [1], "thread_kind": ["main"], "prompt_tokens": [310_000], "model": ["m"]})
    >>> window_choice(SimpleNamespace(calls=calls, result=None))
    WindowChoice(tokens=1000000, source='peak')
    >>> window_choice(SimpleNamespace(calls=calls, result=None), 400_000)
    WindowChoice(tokens=400000, source='option')
    """
    if window is not None:
        return WindowChoice(window, "option")
    calls = trace.view("calls") if hasattr(trace, "view") else trace.calls
    main = _main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens", "model"))
    return _window_choice(trace, [m for _, _, m in main], [p for _, p, _ in main], window)


def _window_choice(
    trace: Trace, models_all: list[str | None], prompts: list[int | None], window: int | None
) -> WindowChoice:
    """`window_choice` from the main calls' models and prompt tokens, in order."""
    if window is not None:
        return WindowChoice(window, "option")
    main_models = [m for m in models_all if m is not None]
    # Each `contextWindow` bounded (`context_windows`): a 400-digit integer read by the lenient JSON
    # fallback, or a window no model has, is left out (and warned by the reports), never the window.
    sizes, _ = context_windows(getattr(trace, "result", None))
    if main_models and main_models[-1] in sizes:
        return WindowChoice(sizes[main_models[-1]], "modelUsage")
    if sizes:
        return WindowChoice(max(sizes.values()), "modelUsage")
    # Claude Code selects the 1M window with a `[1m]` model suffix, which a stream-json init line (or a
    # gateway's model id) can carry even where `message.model` does not (CASES B26).
    surface = getattr(trace, "surface", None) or {}
    named = [surface.get("model"), *main_models]
    if any(isinstance(m, str) and m.lower().endswith("[1m]") for m in named):
        return WindowChoice(LARGE_WINDOW_TOKENS, "model [1m]")
    # A transient spike (at least 1.8x both neighbours, CASES B11) is not evidence of a larger window; an
    # unmeasured call (prompt 0) is no prompt at all, so it is neither a neighbour nor a peak.
    series = [p for p in prompts if measured(p)]
    if max(series, default=0) > DEFAULT_WINDOW_TOKENS:  # else no steady prompt is above it either
        spikes = set(_spike_indexes(series))
        if max((v for i, v in enumerate(series) if i not in spikes), default=0) > DEFAULT_WINDOW_TOKENS:
            return WindowChoice(LARGE_WINDOW_TOKENS, "peak")
    return WindowChoice(DEFAULT_WINDOW_TOKENS, "default")


def effective_window(trace: Trace, window: int | None = None) -> int:
    """Return the effective context window of a trace in tokens (see `window_choice` for the rule).

    Returns
    -------
    int
        Tokens, 1 to `MAX_WINDOW_TOKENS` from a trace: `--window`, else `modelUsage[*].contextWindow`, else
        200,000 (1,000,000 when the main-thread peak exceeds 200,000).
    """
    return window_choice(trace, window).tokens


def mcp_server_of(tool: str, servers: list[str] | None) -> tuple[str | None, bool]:
    """Return the MCP server a tool name belongs to, and whether that is a guess (CASES B23).

    Claude Code names MCP tools `mcp__<server>__<tool>`, and both parts may contain `__`. With the
    server names the init line lists, the longest one that prefixes the name wins (exact); without them,
    the name is split at the first `__` after `mcp__` (a guess). Names without the `mcp__` prefix
    (including single-underscore `mcp_x_y`) belong to no server.

    Examples
    --------
    >>> mcp_server_of("mcp__a__b__fetch", ["a", "a__b"]), mcp_server_of("mcp__github__get_issue", None)
    (('a__b', False), ('github', True))
    >>> mcp_server_of("Read", None)
    (None, False)
    """
    if not tool.startswith("mcp__"):
        return None, False
    rest = tool[len("mcp__") :]
    known = [s for s in servers or [] if rest.startswith(s + "__")]
    if known:
        return max(known, key=len), False
    server, sep, _ = rest.partition("__")
    return (server, True) if sep and server else (None, False)


def tool_counts(tool_uses: pl.DataFrame, servers: list[str] | None = None) -> dict[str, Any]:
    """Count the main thread's tool calls per tool and per MCP server.

    Parameters
    ----------
    tool_uses
        Tool-use frame (`schema.TOOL_USE_SCHEMA`).
    servers
        MCP server names from the stream-json init line (`surface["mcp_servers"]`), or None.

    Returns
    -------
    dict
        `by_tool` (full tool name → calls, most used first, ties by name), `by_mcp_server` (server →
        calls, same order) and `mcp_server_guessed` (True when some server was split from a name without
        a list of known servers to match). Exact counts of `tool_use` blocks.
    """
    kinds = tool_uses.get_column("thread_kind").to_list()
    names = [n for k, n in zip(kinds, tool_uses.get_column("name").to_list(), strict=True) if k == THREAD_MAIN]
    return _tool_counts(names, servers)


def _tool_counts(names: list[str | None], servers: list[str] | None) -> dict[str, Any]:
    """`tool_counts` from the main thread's tool names."""
    # most used first, ties by name (a null name first, as Polars sorts nulls first)
    counts = sorted(Counter(names).items(), key=lambda nc: (-nc[1], nc[0] is not None, nc[0] or ""))
    by_tool = {str(n): int(c) for n, c in counts}
    by_server: dict[str, int] = {}
    guessed = False
    for name, count in by_tool.items():
        server, guess = mcp_server_of(name, servers)
        if server is not None:
            by_server[server] = by_server.get(server, 0) + count
            guessed = guessed or guess
    ordered = dict(sorted(by_server.items(), key=lambda kv: (-kv[1], kv[0])))
    return {"by_tool": by_tool, "by_mcp_server": ordered, "mcp_server_guessed": guessed}


#: A gap between two timestamped lines longer than this is idle time, not work (CASES B25).
IDLE_GAP_MS = 30 * 60 * 1000


def durations(trace: Trace) -> dict[str, int | None]:
    """Measure how long a trace ran, from its lines' timestamps.

    Returns
    -------
    dict
        `duration_ms` (wall: last timestamp − first, over every timestamped user, assistant and system
        line of every thread; progress and bookkeeping lines are not read) and `active_duration_ms` (the
        same with every gap longer than `IDLE_GAP_MS` left out); both None when the trace has no
        timestamps (stream-json). Exact differences of the lines' ISO-8601 `timestamp` fields, whatever
        order the lines are in (max − min, CASES B25).
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
