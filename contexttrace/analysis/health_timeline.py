"""Health over the course of a session: the grade at each 5 % of it (spec 000's health bar).

Each of the 21 points grades the rows read up to that point exactly as `health.health_grade` grades a whole
session (`health_scores.score_of` on the same measures: spec 000's no-data values and fixed weights at every
point); `tests/analysis/test_health_timeline.py` checks every point against `health_grade` of the rows cut
there. Pure: nothing here reads files, prints or formats.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from fractions import Fraction

from contexttrace.analysis.health_scores import MIN_TOOL_CALLS, PRODUCTIVE_TOOLS, HealthMeasures, score_of
from contexttrace.analysis.metrics import measured
from contexttrace.analysis.result_types import TimelinePoint
from contexttrace.analysis.session import AXIS_TIME, SessionRows
from contexttrace.reading.contract import READ_TOOLS

#: The timeline: the score at each 5 % of the session, 0 % … 100 % (21 points).
TIMELINE_STEPS = 20


def health_timeline(rows: SessionRows, window: int) -> list[TimelinePoint]:
    """Grade the session at each 5 % of it, from the rows up to that moment (21 points).

    Parameters
    ----------
    rows
        From `session.session_rows`.
    window
        Effective window in tokens (> 0).

    Returns
    -------
    list of TimelinePoint
        21 points, `percent` 0, 5, … 100, with `score`, `grade` (None before the first model call) and
        the position: on the ``"time"`` axis `ts_ms` (the moment start + (end − start) × percent, Unix
        epoch ms, rows at or before it counted); on the ``"calls"`` axis (stream-json: no timestamps)
        `calls` (main calls counted: call `floor(percent × (n − 1))` and everything read before the next
        call); and `compactions`, the compactions counted so far. The last point always equals the
        whole-trace grade. Exact, as `health.health_grade`.
    """
    n = len(rows.calls)
    times = rows.times if rows.axis == AXIS_TIME else {}
    inf = float("inf")
    # Each point counts the rows whose key is at most a threshold, and thresholds only grow: on the time
    # axis the key is a row's moment (`cut_at_time`), on the calls axis its seq (`cut`: seq < the next
    # call's seq, i.e. ≤ that seq − 1; the last point takes every row).
    thresholds: list[float] = []
    positions: list[int] = []  # each point's `ts_ms` (time axis) or `calls` (calls axis)
    if times:
        moment_values = times.values()
        start, end = min(moment_values), max(moment_values)
        for k in range(TIMELINE_STEPS + 1):
            moment = end if k == TIMELINE_STEPS else start + (end - start) * k / TIMELINE_STEPS
            thresholds.append(moment)
            positions.append(round(moment))

        def key(seq: int | None) -> float:
            return inf if seq is None else times.get(seq, inf)

    else:
        for k in range(TIMELINE_STEPS + 1):
            last = k * (n - 1) // TIMELINE_STEPS if n else -1
            thresholds.append(rows.calls[last + 1].seq - 1 if 0 <= last < n - 1 else inf)
            positions.append(last + 1)

        def key(seq: int | None) -> float:
            return inf if seq is None else seq

    points: list[TimelinePoint] = []
    for k, ((score, letter, count), at) in enumerate(
        zip(_timeline_scores(rows, window, key, thresholds), positions, strict=True)
    ):
        point = TimelinePoint(percent=k * 100 // TIMELINE_STEPS, score=score, grade=letter, compactions=count)
        if times:
            point["ts_ms"] = at
        else:
            point["calls"] = at
        points.append(point)
    return points


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
    tools = _ToolKeys(rows, key)
    calls_sorted = all(a <= b for a, b in itertools.pairwise(call_keys))
    out = []
    graded_by: dict[HealthMeasures, tuple[int | None, str | None]] = {}
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
        m, mid, prod, reads, rereads, err_first, err_second = tools.upto(limit)
        if m < MIN_TOOL_CALLS:
            err_rates = write_rates = None
        else:
            err_rates = (Fraction(err_first, mid), Fraction(err_second, m - mid))
            write_rates = (Fraction(prod[0], mid), Fraction(prod[1], m - mid))
        measures = HealthMeasures(nc, latest, window, count, reads, rereads, err_rates, write_rates)
        graded = graded_by.get(measures)  # consecutive points often measure the same rows (a short trace's)
        if graded is None:
            graded = graded_by[measures] = score_of(measures)
        out.append(by_limit.setdefault(limit, (*graded, count)))
    return out


class _ToolKeys:
    """The tool calls of a session by key, answering what `_timeline_scores` counts up to a threshold."""

    def __init__(self, rows: SessionRows, key: Callable[[int | None], float]) -> None:
        tools = rows.tools
        self.keys = [key(t.seq) for t in tools]
        self.productive = [t.name in PRODUCTIVE_TOOLS for t in tools]
        self.paths = [t.file_path if t.name in READ_TOOLS else None for t in tools]
        # errors: (index among tools, key of the result); only a tool with a result can have is_error
        self.errors = [(j, key(t.result_seq)) for j, t in enumerate(tools) if t.is_error]
        self.sorted = all(a <= b for a, b in itertools.pairwise(self.keys))
        if self.sorted:
            self.prod_upto = [0]  # productive calls among the first j tools
            self.reads_upto = [0]  # Read calls with a path among the first j
            self.fresh_upto = [0]  # ... that read a path for the first time
            seen: set[str] = set()
            for is_prod, path in zip(self.productive, self.paths, strict=True):
                self.prod_upto.append(self.prod_upto[-1] + is_prod)
                self.reads_upto.append(self.reads_upto[-1] + (path is not None))
                self.fresh_upto.append(self.fresh_upto[-1] + (path is not None and path not in seen))
                if path is not None:
                    seen.add(path)

    def upto(self, limit: float) -> tuple[int, int, tuple[int, int], int, int, int, int]:
        """(tool calls, first half's size, productive calls per half, file reads, re-reads, errors per
        half) over the tool calls whose key is at most `limit`, an error counted when its result's is too."""
        errors = self.errors
        if self.sorted:
            m = bisect.bisect_right(self.keys, limit)
            mid = m // 2
            prod = (self.prod_upto[mid], self.prod_upto[m] - self.prod_upto[mid])
            reads = self.reads_upto[m]
            rereads = reads - self.fresh_upto[m]
            err_first = sum(1 for j, rk in errors if j < mid and rk <= limit)
            err_second = sum(1 for j, rk in errors if mid <= j < m and rk <= limit)
            return m, mid, prod, reads, rereads, err_first, err_second
        inc = [j for j, k in enumerate(self.keys) if k <= limit]
        m = len(inc)
        mid = m // 2
        productive = self.productive
        prod = (sum(productive[j] for j in inc[:mid]), sum(productive[j] for j in inc[mid:]))
        read_paths = [self.paths[j] for j in inc if self.paths[j] is not None]
        reads = len(read_paths)
        failed = {j for j, rk in errors if rk <= limit}
        err_first = sum(1 for j in inc[:mid] if j in failed)
        err_second = sum(1 for j in inc[mid:] if j in failed)
        return m, mid, prod, reads, reads - len(set(read_paths)), err_first, err_second
