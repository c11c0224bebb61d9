"""Context Health (spec 000): a session's five signals measured, scored, and graded A–F, with its timeline.

This module measures the signals on a session's rows (`session.SessionRows`) and assembles the `health`
object of a trace's JSON (`result_types.HealthReport`); the scoring tables and the composite are in
`health_scores`, the grade over the course of the session in `health_timeline`. Pure: nothing here reads
files, prints or formats. The grade and score are spec 000's, fixed weights and no-data values included;
the decisions the spec leaves open (docs/health-weather.md):

* the fill signal and `fill_percent` use the same effective window (`window.window_choice`), not the
  hard-coded 200,000 of the spec's `computeFillScore`, and the latest *measured* call's prompt (a call
  whose usage could not be read reads 0 tokens, `metrics.measured`; with none measured, Context Fill
  takes the spec's no-data 100);
* a signal where the spec's no-data value applied says so: `has_data` false and a `why` naming the value;
* the fill is rounded once, half up, from the exact fraction (`metrics.round_half_up`), as every view,
  and so are the ratios;
* a trace without a model call is not graded at all;
* JSON keys are snake_case (`fill_percent`, not the spec's `fillPercent`).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from contexttrace.analysis.health_scores import (
    MIN_CALLS,
    MIN_TOOL_CALLS,
    NO_FILL_SCORE,
    NO_FIRST_HALF_WRITES_SCORE,
    NO_READS_SCORE,
    PRODUCTIVE_TOOLS,
    RATIO_DECIMALS,
    SIGNALS,
    SPEC_PRODUCTIVE_TOOLS,
    TOO_FEW_CALLS_SCORE,
    HealthMeasures,
    SignalRule,
    composite,
    grade,
    sub_scores_of_counts,
)
from contexttrace.analysis.health_timeline import ToolIndex, health_timeline
from contexttrace.analysis.metrics import measured
from contexttrace.analysis.result_types import CompactionMark, HealthGrade, HealthReport, HealthSignal, TimelinePoint
from contexttrace.analysis.session import AXIS_TIME, MainCall, SessionRows, ToolCall, session_rows
from contexttrace.analysis.window import WindowChoice, window_choice
from contexttrace.reading.contract import READ_TOOLS

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: `reason` of a trace without a main-thread model call (health and weather are then null).
NO_CALL_REASON = "no model call: nothing to grade"

#: `fill_percent` is rounded to this many decimals (the other measures: `health_scores.RATIO_DECIMALS`).
PERCENT_DECIMALS = 2


def half_rates(tools: Sequence[ToolCall], hit: Callable[[ToolCall], bool]) -> tuple[Fraction, Fraction] | None:
    """Split tool calls at `floor(n / 2)` and return the share of `hit` in each half (spec 000's halves).

    Returns
    -------
    tuple of Fraction, or None
        (first half `calls[:mid]`, second half `calls[mid:]`), each 0–1, exact; None with fewer than
        `MIN_TOOL_CALLS` tool calls (the spec's "too few calls to judge").

    Examples
    --------
    >>> t = [ToolCall(i, "Edit" if i < 2 else "Read", None, False, False, None, 0) for i in range(5)]
    >>> half_rates(t, lambda c: c.name == "Edit"), half_rates(t[:3], lambda c: c.name == "Edit")
    ((Fraction(1, 1), Fraction(0, 1)), None)
    """
    return _halves([hit(t) for t in tools])


def _halves(flags: Sequence[bool]) -> tuple[Fraction, Fraction] | None:
    """`half_rates` of flags already taken, one per tool call."""
    if len(flags) < MIN_TOOL_CALLS:
        return None
    mid = len(flags) // 2
    return Fraction(sum(flags[:mid]), mid), Fraction(sum(flags[mid:]), len(flags) - mid)


def read_counts(tools: Sequence[ToolCall]) -> tuple[int, int]:
    """Count file reads and re-reads among tool calls.

    Returns
    -------
    (int, int)
        Read calls (`contract.READ_TOOLS`: Claude Code's Read, Gemini CLI's read_file) with a `file_path`,
        and those whose path was read before. Exact.

    A re-read is spec 000's: the same path again, even for another range of lines. It differs from the
    table's `repeat` (a call identical to an earlier one, input and all).

    Examples
    --------
    >>> read_counts([ToolCall(i, "Read", p, False, False, None, 0) for i, p in enumerate("aba")])
    (3, 1)
    """
    paths = [t.file_path for t in tools if t.name in READ_TOOLS and t.file_path is not None]
    return len(paths), len(paths) - len(set(paths))


def reread_ratio(tools: Sequence[ToolCall]) -> Fraction | None:
    """Return the re-read ratio of tool calls, as Re-reads scores it.

    Returns
    -------
    Fraction or None
        Re-reads ÷ file reads (`read_counts`), 0–1, exact; None without a file read.

    >>> reread_ratio([ToolCall(i, "Read", "ab"[i % 2], False, False, None, 0) for i in range(10)])
    Fraction(4, 5)
    """
    reads, rereads = read_counts(tools)
    return Fraction(rereads, reads) if reads else None


def health_measures(rows: SessionRows, window: int) -> tuple[HealthMeasures, int | None]:
    """Measure the five signals on a session's rows.

    Parameters
    ----------
    rows
        From `session.session_rows` (or a `cut` of them).
    window
        The effective context window in tokens, > 0.

    Returns
    -------
    (HealthMeasures, int or None)
        The measures (`health_scores.HealthMeasures`: the latest measured prompt, the compactions, file
        reads and re-reads, `half_rates` of errors and of productive calls) and the 0-based index of the
        call whose prompt is `latest` (None when no call's prompt was measured). Exact.
    """
    calls, tools = rows.calls, rows.tools
    # the latest call whose prompt was measured (a prompt of 0 is usage the reader could not read)
    at = next((k for k in range(len(calls) - 1, -1, -1) if measured(calls[k].prompt_tokens)), None)
    reads, rereads = read_counts(rows.tools)
    measures = HealthMeasures(
        calls=len(calls),
        latest=calls[at].prompt_tokens if at is not None else None,
        window=window,
        compactions=len(rows.compactions),
        reads=reads,
        rereads=rereads,
        error_rates=_halves([t.is_error for t in tools]),
        write_shares=_halves([t.name in PRODUCTIVE_TOOLS for t in tools]),
    )
    return measures, at


def health_grade(rows: SessionRows, window: int, index: ToolIndex | None = None) -> HealthGrade:
    """Grade the health of a session from its rows (spec 000's `computeHealthGrade`).

    Parameters
    ----------
    rows
        From `session.session_rows` (or a `cut` of them).
    window
        The effective context window in tokens (`window.window_choice`), > 0.
    index
        The rows' `health_timeline.ToolIndex` when the caller has built it (`health_of`); else built here.

    Returns
    -------
    HealthGrade
        `grade` (A–F from the composite, or None), `score` (the composite with spec 000's fixed weights
        rounded half up, 0–100, or None), `reason` (None when graded; why not, e.g. `NO_CALL_REASON`),
        the measures `fill_percent` (latest measured prompt ÷ window × 100, rounded half up to 2 decimals
        from the exact fraction; None when no call's prompt was measured), `compaction_count`,
        `reread_ratio` (re-reads ÷ file reads), `error_acceleration` (second-half ÷ first-half error
        rate) and `tool_efficiency` (second-half ÷ first-half productive share), ratios rounded half up to
        4 decimals from the exact value, each None when its signal has no data or the ratio is undefined
        (a first-half rate of 0); and `signals`, one per signal in spec order
        (`result_types.HealthSignal`). All exact: the composite is computed in integers
        (`health_scores.composite`).

    Examples
    --------
    >>> from contexttrace.analysis.session import AXIS_CALLS, MainCall
    >>> rows = SessionRows([MainCall(1, 120_000, 0, None, None, None)], [], [], {}, AXIS_CALLS)
    >>> h = health_grade(rows, 200_000)
    >>> h["grade"], h["score"], h["fill_percent"], [s["has_data"] for s in h["signals"]]
    ('A', 92, 60.0, [True, True, False, False, False])
    >>> health_grade(SessionRows([], [], [], {}, AXIS_CALLS), 200_000)["grade"] is None
    True
    """
    if len(rows.calls) < MIN_CALLS:
        return _ungraded(NO_CALL_REASON, "no model call")
    # the measures of `health_measures`, kept as integer counts: each rate n / d is scored and rounded from
    # its numerator and denominator (`health_scores.sub_scores_of_counts`, `_rounded`), as exact as the Fractions
    calls, tools = rows.calls, rows.tools
    at = _latest_measured(calls)
    latest = calls[at].prompt_tokens if at is not None else None
    if index is None:
        index = ToolIndex(rows, rows.times if rows.axis == AXIS_TIME else {})
    reads, rereads = len(index.reads), len(index.reads) - len(index.fresh)
    compactions = len(rows.compactions)
    errors = _half_counts_at(index.failed, len(tools))
    writes = _half_counts_at(index.productive, len(tools))
    values = sub_scores_of_counts(latest, window, compactions, reads, rereads, errors, writes)
    data = [latest is not None, True, reads > 0, errors is not None, writes is not None and writes[0] > 0]
    score, letter = composite(values)
    measures = [
        None if latest is None else _rounded(latest, window, RATIO_DECIMALS),
        compactions,
        _rounded(rereads, reads, RATIO_DECIMALS) if reads else None,
        _rounded(errors[2] * errors[1], errors[3] * errors[0], RATIO_DECIMALS) if errors and errors[0] else None,
        _rounded(writes[2] * writes[1], writes[3] * writes[0], RATIO_DECIMALS) if writes and writes[0] else None,
    ]
    whys = [
        _fill_why(latest, window, at, len(calls)),
        f"{compactions} compaction{'' if compactions == 1 else 's'}",
        _reread_why(reads, rereads),
        _errors_why(tools, errors),
        _writes_why(tools, writes, index.productive),
    ]
    signals = [
        _signal(rule, value, measured_, measure, why)
        for rule, value, measured_, measure, why in zip(SIGNALS, values, data, measures, whys, strict=True)
    ]
    # a dict display in `HealthGrade`'s key order (the TypedDict called with keywords is the same dict, slower)
    return {"grade": letter, "score": score, "reason": None,
            "fill_percent": _rounded(latest * 100, window, PERCENT_DECIMALS) if latest is not None else None,
            "compaction_count": compactions, "reread_ratio": measures[2], "error_acceleration": measures[3],
            "tool_efficiency": measures[4], "signals": signals}  # fmt: skip


def _latest_measured(calls: Sequence[MainCall]) -> int | None:
    """The index of the latest call whose prompt was measured (`metrics.measured`), or None."""
    for k in range(len(calls) - 1, -1, -1):
        prompt = calls[k].prompt_tokens
        if prompt is not None and prompt > 0:  # `metrics.measured`, written out
            return k
    return None


def _half_counts_at(hits: list[int], n: int) -> tuple[int, int, int, int] | None:
    """`_halves` of `n` flags (given by the sorted positions of those set) as (first half's hits, its calls,
    second half's hits, its calls), unreduced; None with fewer than `MIN_TOOL_CALLS`."""
    if n < MIN_TOOL_CALLS:
        return None
    mid = n // 2
    first = bisect.bisect_left(hits, mid)
    return first, mid, len(hits) - first, n - mid


def _rounded(num: int, den: int, decimals: int) -> float:
    """`metrics.round_half_up(Fraction(num, den), decimals)` for counts num >= 0, den > 0, without making the
    Fraction (the same integer formula: it needs no reduced fraction)."""
    scale = 10**decimals
    return (num * scale * 2 + den) // (2 * den) / scale


def _signal(rule: SignalRule, value: int | None, with_data: bool, measure: float | None, why: str) -> HealthSignal:
    """One entry of `health_grade`'s `signals`: a dict display in `HealthSignal`'s key order (calling the
    TypedDict with keywords builds the same dict, slower); a whole sub-score's letter read off a table."""
    letter = None if value is None else _LETTERS[value] if type(value) is int and 0 <= value <= 100 else grade(value)
    return {"name": rule.name, "value": value, "weight": _SHARES[rule.weight], "has_data": with_data, "grade": letter,
            "measure": measure, "why": why}  # fmt: skip


#: Each signal's weight (whole percent) as the fraction `weight` shows.
_SHARES = {rule.weight: rule.weight / 100 for rule in SIGNALS}


#: `health_scores.grade` of each whole score 0–100.
_LETTERS = tuple(grade(value) for value in range(101))


def _ungraded(reason: str, why: str) -> HealthGrade:
    """`health_grade`'s shape when nothing is graded: every value None, no signal with data."""
    return HealthGrade(
        grade=None,
        score=None,
        reason=reason,
        fill_percent=None,
        compaction_count=None,
        reread_ratio=None,
        error_acceleration=None,
        tool_efficiency=None,
        signals=[_signal(rule, None, False, None, why) for rule in SIGNALS],
    )


def _spec(value: int) -> str:
    return f"spec's {value}"


def _fill_why(latest: int | None, window: int, at: int | None, calls: int) -> str:
    """Context Fill's `why`: the prompt it scored, or that no call's usage could be read (the spec's 100)."""
    if latest is None or at is None:
        return f"no call's prompt size could be read (usage read as 0 on all {calls}): {_spec(NO_FILL_SCORE)}"
    whose = "last call's" if at == calls - 1 else f"call #{at + 1}'s (the last with readable usage)"
    return f"{whose} prompt {latest:,} of a {window:,}-token window"


def _reread_why(reads: int, rereads: int) -> str:
    if not reads:
        return f"no Read call with a file_path: {_spec(NO_READS_SCORE)}"
    return f"{rereads} of {reads} file read{'' if reads == 1 else 's'} re-read a file already read"


def _too_few(n: int) -> str:
    if not n:
        return f"no tool call: {_spec(TOO_FEW_CALLS_SCORE)}"
    return f"{n} tool call{'' if n == 1 else 's'}, fewer than {MIN_TOOL_CALLS}: {_spec(TOO_FEW_CALLS_SCORE)}"


def _errors_why(tools: Sequence[ToolCall], rates: tuple[int, int, int, int] | None) -> str:
    """Error Rate's `why`, from the halves' (count, calls) as `health_grade` keeps them."""
    if rates is None:
        return _too_few(len(tools))
    n1, d1, n2, d2 = rates
    first, second = f"{n1 / d1:.0%} of {d1} calls", f"{n2 / d2:.0%} of {d2}"
    text = f"tool error rate {first} in the first half, {second} in the second"
    denied = sum(map(_DENIED, tools))
    return text + (f" ({denied} denied, not counted as errors)" if denied else "")


_DENIED = operator.attrgetter("denied")


def _productive_names(tools: Sequence[ToolCall], productive: list[int]) -> str:
    """The productive tools a session's share counts, as the `why` names them: spec 000's Write/Edit/MultiEdit,
    or, when the session used another agent's edit tools, those it used (``apply_patch``); without one, in
    words."""
    used = dict.fromkeys([tools[j].name for j in productive])
    if not used:
        return "a file write or edit"
    if all(name in SPEC_PRODUCTIVE_TOOLS for name in used):
        return "/".join(SPEC_PRODUCTIVE_TOOLS)
    return "/".join(used)


def _writes_why(tools: Sequence[ToolCall], shares: tuple[int, int, int, int] | None, productive: list[int]) -> str:
    """Tool Efficiency's `why`, from the halves' (count, calls) as `health_grade` keeps them."""
    if shares is None:
        return _too_few(len(tools))
    names = _productive_names(tools, productive)
    n1, d1, n2, d2 = shares
    if n1 == 0:
        second = f" ({len(productive)} in the second)" if productive else ", nor in the second"
        spec = _spec(NO_FIRST_HALF_WRITES_SCORE)
        return f"no productive call ({names}) in the first half{second}: {spec}"
    return f"share of {names} {n1 / d1:.0%} in the first half, {n2 / d2:.0%} in the second"


def health_report(trace: Trace, window: int | None = None) -> HealthReport:
    """Compute the `health` object of a trace's JSON (spec 000 with the decisions in this module's docstring).

    Parameters
    ----------
    trace
        A trace from `reading.read_trace`.
    window
        `--window` in tokens, or None (then `window.window_choice` decides).

    Returns
    -------
    HealthReport
        `health_grade`'s keys, plus `window` (tokens) and `window_source` (``"option"``,
        ``"modelUsage"``, ``"default"``, ``"peak"``, ...), `timeline` (`health_timeline.health_timeline`;
        empty when nothing is graded), `timeline_axis` (``"time"`` or ``"calls"``) and `compactions`: for
        each compaction, its `trigger`, `pre_tokens`, `next_call` (number, from 1, of the first main-thread
        call after it; None when none follows) and the first timeline `percent` that counts it. A trace
        without a main-thread model call has `grade`, `score` and every measure None and a `reason`.
        Exact (see `health_grade`).

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


def health_of(rows: SessionRows, choice: WindowChoice) -> HealthReport:
    """Compute `health_report` from a trace's session rows and its window choice (both shared with weather).

    Parameters
    ----------
    rows
        From `session.session_rows` or `session.session_rows_of`.
    choice
        The trace's window (`window.window_choice`).

    Returns
    -------
    HealthReport
        The same as `health_report`.
    """
    if len(rows.calls) < MIN_CALLS:
        out = health_grade(rows, choice.tokens)
        timeline: list[TimelinePoint] = []
    else:
        index = ToolIndex(rows, rows.times if rows.axis == AXIS_TIME else {})  # shared by the grade and the timeline
        out = health_grade(rows, choice.tokens, index)
        timeline = health_timeline(rows, choice.tokens, index, (out["score"], out["grade"]))
    graded = out["grade"] is not None
    call_seqs = [c.seq for c in rows.calls] if rows.compactions else []
    n = len(call_seqs)
    marks: list[CompactionMark] = []
    if graded:
        for i, c in enumerate(rows.compactions):
            after = bisect.bisect_left(call_seqs, c.seq)
            marks.append(
                CompactionMark(
                    trigger=c.trigger,
                    pre_tokens=c.pre_tokens,
                    next_call=after + 1 if after < n else None,
                    percent=_first_percent(timeline, i + 1),
                )
            )
    # `out` (made here) grows into the report: `HealthReport`'s keys follow `HealthGrade`'s, in its order
    report: HealthReport = out  # type: ignore[assignment]
    report["window"] = choice.tokens
    report["window_source"] = choice.source
    report["timeline"] = timeline
    report["timeline_axis"] = rows.axis
    report["compactions"] = marks
    return report


def _first_percent(timeline: list[TimelinePoint], count: int) -> int:
    return next((p["percent"] for p in timeline if p["compactions"] >= count), 100)
