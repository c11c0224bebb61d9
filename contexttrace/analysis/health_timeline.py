"""Health over the course of a session: the grade at each 5 % of it (spec 000's health bar).

Each of the 21 points grades the rows read up to that point exactly as `health.health_grade` grades a whole
session (`health_scores.score_of` on the same measures: spec 000's no-data values and fixed weights at every
point); `tests/analysis/test_health_timeline.py` checks every point against `health_grade` of the rows cut
there. Pure: nothing here reads files, prints or formats.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import operator
from collections.abc import Sequence

from contexttrace.analysis.health_scores import MIN_CALLS, PRODUCTIVE_TOOLS, score_of_counts
from contexttrace.analysis.metrics import measured
from contexttrace.analysis.result_types import TimelinePoint
from contexttrace.analysis.session import AXIS_TIME, SessionRows
from contexttrace.reading.contract import READ_TOOLS

#: The timeline: the score at each 5 % of the session, 0 % … 100 % (21 points).
TIMELINE_STEPS = 20


def health_timeline(
    rows: SessionRows,
    window: int,
    index: ToolIndex | None = None,
    whole: tuple[int | None, str | None] | None = None,
) -> list[TimelinePoint]:
    """Grade the session at each 5 % of it, from the rows up to that moment (21 points).

    Parameters
    ----------
    rows
        From `session.session_rows`.
    window
        Effective window in tokens (> 0).
    index
        The rows' `ToolIndex` on this axis, when the caller has built it (`health.health_of`); else built here.
    whole
        (score, grade) of `health.health_grade` over all the rows with this `window`, when the caller has it
        (`health.health_of`): where the rows' keys are in row order (the prefix path), a point that counts
        every row takes it instead of being graded again; elsewhere it is not read.

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
    # Each point counts the rows whose key is at most a threshold, and thresholds only grow: on the time
    # axis the key is a row's moment (`cut_at_time`), on the calls axis its seq (`cut`: seq < the next
    # call's seq, i.e. ≤ that seq − 1; the last point takes every row).
    thresholds: list[float]
    positions: Sequence[int]  # each point's `ts_ms` (time axis) or `calls` (calls axis)
    if times:
        moment_values = times.values()
        start, end = min(moment_values), max(moment_values)
        thresholds = [start + (end - start) * k / TIMELINE_STEPS for k in range(TIMELINE_STEPS)] + [end]
        positions = [round(moment) for moment in thresholds]
    else:
        which, positions, distinct = _calls_points(n)
        calls = rows.calls
        # each distinct point graded once (under 21 calls, points share their last call)
        limits = [calls[last + 1].seq - 1 if 0 <= last < n - 1 else _INF for last in distinct]
        counted = list(map(_timeline_scores(rows, window, times, limits, index, whole).__getitem__, which))
        return [
            {"percent": percent, "score": score, "grade": letter, "compactions": count, "calls": at}
            for percent, (score, letter, count), at in zip(_PERCENTS, counted, positions, strict=True)
        ]
    scored = zip(_PERCENTS, _timeline_scores(rows, window, times, thresholds, index, whole), positions, strict=True)
    # dict displays in `TimelinePoint`'s key order (a TypedDict called with keywords is the same dict, slower)
    if times:
        return [
            {"percent": percent, "score": score, "grade": letter, "compactions": count, "ts_ms": at}
            for percent, (score, letter, count), at in scored
        ]
    return [
        {"percent": percent, "score": score, "grade": letter, "compactions": count, "calls": at}
        for percent, (score, letter, count), at in scored
    ]


@functools.lru_cache(maxsize=256)
def _calls_points(n: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """On the calls axis with `n` calls: for each point, the position among the distinct last calls of its last
    call counted (`floor(percent × (n − 1))`, −1 without a call) and its `calls` position; and the distinct
    last calls in order (remembered for recent `n`)."""
    lasts = tuple([k * (n - 1) // TIMELINE_STEPS if n else -1 for k in range(TIMELINE_STEPS + 1)])
    distinct = tuple(dict.fromkeys(lasts))
    return tuple([distinct.index(last) for last in lasts]), tuple([last + 1 for last in lasts]), distinct


#: Each point's `percent`.
_PERCENTS = [k * 100 // TIMELINE_STEPS for k in range(TIMELINE_STEPS + 1)]
_INF = float("inf")


def _keys(seqs: Sequence[int | None], times: dict[int, float]) -> list[float]:
    """Each row's key: its moment on the time axis (`times`; a row without one, or no row, comes never: inf),
    else its seq (None: inf)."""
    if times:
        return list(map(times.get, seqs, itertools.repeat(_INF)))  # type: ignore[arg-type]  # None is no key
    return [_INF if seq is None else seq for seq in seqs]


def _timeline_scores(
    rows: SessionRows,
    window: int,
    times: dict[int, float],
    thresholds: list[float],
    index: ToolIndex | None = None,
    whole: tuple[int | None, str | None] | None = None,
) -> list[tuple[int | None, str | None, int]]:
    """(score, grade, compactions) of `health_grade` over the rows whose key is at most each threshold.

    A tool call counts its error only when its result's key is also within the threshold. When the keys
    are in row order (the usual case) the rows counted are a prefix and sorted positions answer each point
    in O(log n); otherwise each point is a pass over the rows. Points that count the same rows (a short
    trace's, or a quiet stretch of a long one) are graded once. Scored in integers (`score_of_counts`).
    """
    calls = rows.calls
    call_keys: list[float] = _keys(list(map(_SEQ, calls)), times) if times else list(map(_SEQ, calls))
    prompts = list(map(_PROMPT, calls))
    calls_sorted = sorted(call_keys) == call_keys
    bound_keys = sorted(_keys(list(map(_SEQ, rows.compactions)), times)) if rows.compactions else []
    tools = index if index is not None else ToolIndex(rows, times)
    right = bisect.bisect_right
    if calls_sorted and tools.sorted:  # a threshold repeated counts the same prefixes: one key, graded once
        return _prefix_scores(thresholds, call_keys, bound_keys, tools, prompts, window, whole)
    # each pass below is over all the rows: a threshold repeated (a trace of one moment) is counted once
    by_threshold: dict[float, tuple[int | None, str | None, int]] = {}
    graded_by: dict[tuple[int | None, ...], tuple[int | None, str | None, int]] = {}
    for limit in dict.fromkeys(thresholds):
        upto: Sequence[int] = range(right(call_keys, limit)) if calls_sorted else _within(call_keys, limit)
        n_calls = len(upto)
        latest = next((p for j in reversed(upto) if measured(p := prompts[j])), None)
        count = right(bound_keys, limit)
        counts = tools.upto(limit)
        key = (n_calls, latest, count, *counts)
        point = graded_by.get(key)
        if point is None:
            if n_calls < MIN_CALLS:
                graded: tuple[int | None, str | None] = (None, None)
            else:
                m, reads, rereads, e1, e2, p1, p2 = counts
                graded = score_of_counts(latest, window, count, reads, rereads, m, (e1, e2), (p1, p2))
            point = graded_by[key] = (*graded, count)
        by_threshold[limit] = point
    return [by_threshold[limit] for limit in thresholds]


def _prefix_scores(
    thresholds: list[float],
    call_keys: list[float],
    bound_keys: list[float],
    tools: ToolIndex,
    prompts: list[int],
    window: int,
    whole: tuple[int | None, str | None] | None = None,
) -> list[tuple[int | None, str | None, int]]:
    """`_timeline_scores` when the keys of calls and of tool calls are in row order: each point is named by
    what it counts, a prefix of each kind of row (calls, compactions, tool calls, and errors by
    `ToolIndex.error_keys`), and each distinct point is graded once. `prompts` are the calls' prompt
    sizes; a point's fill is the latest measured one among the calls it counts. `whole` (see
    `health_timeline`) is the point that counts every row."""
    right, left = bisect.bisect_right, bisect.bisect_left
    keys, error_keys, error_order = tools.keys, tools.error_keys, tools.error_order
    productive, reads_at, fresh = tools.productive, tools.reads, tools.fresh
    points: dict[tuple[int, int, int, int], tuple[int | None, str | None, int]] = {}
    if whole is not None:  # every call, compaction, tool call and failure counted: the whole session's grade
        points[(len(call_keys), len(bound_keys), len(keys), len(error_keys))] = (*whole, len(bound_keys))
    out = []
    latest, scanned = None, 0  # the latest measured prompt among the first `scanned` calls
    for limit in thresholds:
        key = (
            right(call_keys, limit),
            right(bound_keys, limit) if bound_keys else 0,
            right(keys, limit) if keys else 0,
            right(error_keys, limit) if error_keys else 0,
        )
        point = points.get(key)
        if point is None:
            n_calls, count, m, e = key
            if n_calls < MIN_CALLS:
                point = (None, None, count)
            else:
                # the point's last call, else the calls past those scanned, from the last back (thresholds
                # grow, so does `n_calls`); a prompt of 0 is no measure (`metrics.measured`, written out)
                if (p := prompts[n_calls - 1]) is not None and p > 0:
                    latest = p
                else:
                    start = scanned  # (never past `n_calls`: thresholds grow)
                    for k in range(n_calls - 2, start - 1, -1):
                        if (p := prompts[k]) is not None and p > 0:
                            latest = p
                            break
                    else:
                        if start == 0:
                            latest = None
                scanned = n_calls
                # the tool calls counted: the first m, the first e failed ones of `error_order`, halves at m // 2
                mid = m // 2
                p1 = left(productive, mid)
                reads = left(reads_at, m)
                e1 = sum([j < mid for j in error_order[:e]]) if e else 0
                rereads = reads - left(fresh, m)
                point = (
                    *score_of_counts(
                        latest, window, count, reads, rereads, m, (e1, e - e1), (p1, left(productive, m) - p1)
                    ),
                    count,
                )
            points[key] = point
        out.append(point)
    return out


_SEQ, _PROMPT = operator.attrgetter("seq"), operator.attrgetter("prompt_tokens")


def _within(keys: list[float], limit: float) -> list[int]:
    """Indexes of the keys at most `limit`, in order."""
    return [j for j, k in enumerate(keys) if k <= limit]


class ToolIndex:
    """A session's tool calls by position and key: what `health.health_grade` counts over all of them and
    what `_timeline_scores` counts up to a threshold (built once per trace by `health.health_of`, shared).

    Attributes: `keys` (each tool call's key: its moment on the time axis, else its seq), `productive`
    (positions of productive calls, `health_scores.PRODUCTIVE_TOOLS`), `paths` (position → file_path of
    the Read calls with a path), `reads` and `fresh` (positions of those reads, and of the reads of a path
    not read before), `failed` (positions of failed calls), `errors` ((position, key of the result) of
    each failed call), `sorted` (whether `keys` are in row order) and `error_keys` / `error_order` (the
    failed calls by the key from which they are counted, and their positions in that order).
    """

    def __init__(self, rows: SessionRows, times: dict[int, float]) -> None:
        tools = rows.tools
        # the tool calls' columns, transposed at once
        seqs, names, file_paths, failed, _, results, _ = zip(*tools, strict=True) if tools else ((),) * 7
        self.keys: list[float] = _keys(seqs, times) if times else list(seqs)
        # positions among the tools of productive calls, of Read calls with a path, and of those that read
        # a path for the first time
        self.productive = list(itertools.compress(itertools.count(), map(PRODUCTIVE_TOOLS.__contains__, names)))
        self.paths = {
            j: file_paths[j] for j in itertools.compress(itertools.count(), map(READ_TOOLS.__contains__, names))
        }
        if None in self.paths.values():
            self.paths = {j: path for j, path in self.paths.items() if path is not None}
        first: dict[str, int] = {}
        for j, path in self.paths.items():
            first.setdefault(path, j)  # type: ignore[arg-type]  # None paths are left out above
        self.reads, self.fresh = list(self.paths), list(first.values())
        # errors: (index among tools, key of the result); only a tool with a result can have is_error
        self.failed = list(itertools.compress(itertools.count(), failed))
        self.errors = (
            list(zip(self.failed, _keys([results[j] for j in self.failed], times), strict=True)) if self.failed else []
        )
        keys = self.keys
        self.sorted = all(map(operator.le, keys, keys[1:])) if len(keys) > 1 else True
        # when an error is counted: once both the call's key and its result's are within the threshold; with
        # the keys in row order, the errors counted up to any threshold are a prefix of `error_order`
        by_key = sorted([(max(keys[j], result), j) for j, result in self.errors]) if self.errors else []
        self.error_keys = [key for key, _ in by_key]
        self.error_order = [j for _, j in by_key]

    def upto(self, limit: float) -> tuple[int, int, int, int, int, int, int]:
        """(tool calls, file reads, re-reads, errors in the first half and in the second, productive calls
        in the first half and in the second) over the tool calls whose key is at most `limit` (the first
        half: the first `tool calls // 2` of them), an error counted when its result's key is too."""
        left = bisect.bisect_left
        if self.sorted:
            m = bisect.bisect_right(self.keys, limit)
            mid = m // 2
            p1 = left(self.productive, mid)
            reads = left(self.reads, m)
            rereads = reads - left(self.fresh, m)
            e1 = e2 = 0
            for j, result in self.errors:
                if j < m and result <= limit:
                    if j < mid:
                        e1 += 1
                    else:
                        e2 += 1
            return m, reads, rereads, e1, e2, p1, left(self.productive, m) - p1
        inc = _within(self.keys, limit)
        m = len(inc)
        mid = m // 2
        productive = set(self.productive)
        p1 = sum(1 for j in inc[:mid] if j in productive)
        read_paths = [self.paths[j] for j in inc if j in self.paths]
        failed = {j for j, result in self.errors if result <= limit}
        e1 = sum(1 for j in inc[:mid] if j in failed)
        e2 = sum(1 for j in inc[mid:] if j in failed)
        reads = len(read_paths)
        return m, reads, reads - len(set(read_paths)), e1, e2, p1, sum(1 for j in inc[mid:] if j in productive)
