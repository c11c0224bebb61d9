"""Spec 000's scoring rules as data: five signals, each measure to a sub-score, the sub-scores to a grade.

Everything here is a pure function of numbers already measured (`HealthMeasures`); measuring them from a
session is `health.py`'s and `health_timeline.py`'s job. The tables are the spec's; where we depart from
it (docs/health-weather.md says why):

* a signal without enough data takes its `SignalRule.without_data` sub-score; None (every signal, today)
  means it abstains: it is left out and the composite is taken over the others, their weights
  renormalised. A trace without a model call is not graded at all;
* the composite is computed exactly in integers, so a band edge is never missed by float noise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

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

# --- minimum data --------------------------------------------------------------------------------------
# Below its minimum a signal has no data and takes its `without_data` sub-score (None: it abstains, as
# spec 002's weather signals do). Why each minimum is what it is: docs/health-weather.md.

#: Context Fill and Compactions need one main-thread model call; with none, nothing is graded at all.
#: Context Fill also needs a call whose prompt was measured (`metrics.measured`: a prompt of 0 is usage
#: the reader could not read); without one it has no data and the others are graded.
MIN_CALLS = 1
#: Re-reads needs this many Read calls with a `file_path`: from 10 on, one re-read moves the ratio by at
#: most 0.10, one band; below it a single re-read jumps two bands or more (1 of 5 = 0.20, C).
MIN_READS = 10
#: Error Rate and Tool Efficiency compare the two halves of the tool calls; each half needs this many
#: (20 tool calls in all), so that one call is at most 10 points of its half's rate. Spec 002's
#: session-wide error signal asks for 10 calls that used a tool; each half here is such a sample.
MIN_HALF_TOOL_CALLS = 10
#: Tool Efficiency also has no data when the first half has no productive call: the change second ÷
#: first is then undefined (spec 000 gives 80, "could be research phase").

#: Composite score `>= edge` → grade; else F.
GRADE_BANDS: tuple[tuple[float, str], ...] = ((85, "A"), (70, "B"), (55, "C"), (40, "D"))
GRADE_FLOOR = "F"

#: Measures and effective weights in JSON are rounded to this many decimals (ratios and fractions).
RATIO_DECIMALS = 4


class SignalRule(NamedTuple):
    """One of spec 000's five signals: its name, weight, and sub-score when it has no data."""

    name: str  #: as the spec writes it
    weight: int  #: whole percent; the five sum to 100
    without_data: int | None = None  #: sub-score without enough data; None: the signal abstains


#: The five signals in spec order.
SIGNALS: tuple[SignalRule, ...] = (
    SignalRule("Context Fill", 40),
    SignalRule("Compactions", 25),
    SignalRule("Re-reads", 15),
    SignalRule("Error Rate", 10),
    SignalRule("Tool Efficiency", 10),
)


class HealthMeasures(NamedTuple):
    """What the five signals score, measured over a session's rows or a prefix of them.

    `calls` counts the main-thread model calls; `latest` is the latest measured call's prompt in tokens
    (None when no call's prompt was measured); `window` the effective window in tokens (> 0);
    `compactions` a count; `reads` the Read calls with a `file_path` and `rereads` those of a path read
    before; `error_rates` and `write_shares` the (first-half, second-half) shares of failed and of
    productive tool calls, each 0–1, None when a half has fewer than `MIN_HALF_TOOL_CALLS` calls.
    """

    calls: int
    latest: int | None
    window: int
    compactions: int
    reads: int
    rereads: int
    error_rates: tuple[float, float] | None
    write_shares: tuple[float, float] | None


def _band(value: float, bands: Sequence[tuple[float, Any]], floor: Any, passes: Callable[[float, float], bool]) -> Any:
    for edge, result in bands:
        if passes(value, edge):
            return result
    return floor


def fill_score(fill_frac: float | None) -> int | None:
    """Score the Context Fill signal (weight 40 %).

    Parameters
    ----------
    fill_frac
        The latest measured main-thread call's prompt tokens ÷ the effective window (0–1+), or None when
        no call's prompt was measured.

    Returns
    -------
    int or None
        100 below 0.50, 80 below 0.65, 60 below 0.80, 40 below 0.90, else 20 (edges exclusive, as the
        spec's ``<``); None without a fill (no data). Exact.

    Examples
    --------
    >>> fill_score(0.4999), fill_score(0.5), fill_score(0.9), fill_score(None)
    (100, 80, 20, None)
    """
    if fill_frac is None:
        return None
    return int(_band(fill_frac, FILL_BANDS, FILL_FLOOR, operator.lt))


def compaction_score(count: int) -> int:
    """Score the Compactions signal (weight 25 %) from a count of compactions (>= 0).

    Returns
    -------
    int
        0 → 100, 1 → 75, 2 → 55, 3 → 35, 4 or more → 15. Exact.

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
        `file_path` (no data).

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
        (first-half, second-half) tool error rates, each 0–1, from `health.half_rates`; None when a half
        has fewer than `MIN_HALF_TOOL_CALLS` tool calls (no data).

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
        `health.half_rates`; None when a half has fewer than `MIN_HALF_TOOL_CALLS` tool calls.

    Returns
    -------
    int or None
        By the change second ÷ first: 100 from 0.9, 75 from 0.7, 55 from 0.4, 35 from 0.15, else 15
        (``>=``); None (no data) without `ratios` or when the first half has no productive call (the
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


def sub_scores(m: HealthMeasures) -> list[int | None]:
    """Score each of the five signals from its measure, in spec order.

    Parameters
    ----------
    m
        The measures of a session with at least `MIN_CALLS` calls.

    Returns
    -------
    list of int or None
        One sub-score 0–100 per signal of `SIGNALS`: its score function's, or, for a signal without
        enough data, its `without_data` (None: it abstains). Exact.

    Examples
    --------
    >>> sub_scores(HealthMeasures(3, 120_000, 200_000, 1, 4, 1, None, None))
    [80, 75, None, None, None]
    """
    scores = (
        fill_score(m.latest / m.window) if m.latest is not None else None,  # the edges are the spec's floats
        compaction_score(m.compactions),
        reread_score(m.rereads / m.reads if m.reads >= MIN_READS else None),
        error_acceleration_score(m.error_rates),
        tool_efficiency_score(m.write_shares),
    )
    return [rule.without_data if score is None else score for score, rule in zip(scores, SIGNALS, strict=True)]


def grade(score: float) -> str:
    """Return the letter of a 0–100 score.

    Returns
    -------
    str
        A from 85, B from 70, C from 55, D from 40, else F (edges inclusive, ``>=``).

    Examples
    --------
    >>> grade(85), grade(84.75), grade(40), grade(39.5)
    ('A', 'B', 'D', 'F')
    """
    return str(_band(score, GRADE_BANDS, GRADE_FLOOR, operator.ge))


def composite(values: Sequence[int | None]) -> tuple[int, str, list[float]] | None:
    """Compose the five sub-scores (spec order, None for a signal that abstains) into (score, grade, weights).

    The composite is Σ sub-score × weight over the signals with a sub-score, divided by the sum of their
    weights (spec 000's weights renormalised; with no abstention this is the spec's composite). It is
    computed exactly in integers: the grade compares Σ value × weight with edge × Σ weight, and the
    score is the composite rounded half up (JavaScript's `Math.round`).

    Returns
    -------
    tuple, or None
        (score 0–100, grade A–F, each signal's effective weight: its weight ÷ the sum of the weights with
        a sub-score, a fraction rounded to 4 decimals, 0.0 when it abstains); None when every signal
        abstains.

    Examples
    --------
    >>> composite([80, 75, 20, 40, 55])
    (63, 'C', [0.4, 0.25, 0.15, 0.1, 0.1])
    >>> composite([100, 100, None, 100, None])
    (100, 'A', [0.5333, 0.3333, 0.0, 0.1333, 0.0])
    >>> composite([None] * 5) is None
    True
    """
    graded = score_and_grade(values)
    if graded is None:
        return None
    total = sum(rule.weight for v, rule in zip(values, SIGNALS, strict=True) if v is not None)
    weights = [
        0.0 if v is None else round(rule.weight / total, RATIO_DECIMALS)
        for v, rule in zip(values, SIGNALS, strict=True)
    ]
    return graded[0], graded[1], weights


def score_and_grade(values: Sequence[int | None]) -> tuple[int, str] | None:
    """Compose sub-scores as `composite` does, without the effective weights (the timeline needs none).

    Returns
    -------
    (int, str) or None
        (score 0–100, grade A–F); None when every signal abstains. Exact.

    >>> score_and_grade([80, 75, 20, 40, 55])
    (63, 'C')
    """
    total = weighted = 0
    for value, rule in zip(values, SIGNALS, strict=True):
        if value is not None:
            total += rule.weight
            weighted += value * rule.weight
    if not total:
        return None
    for edge, letter in GRADE_BANDS:
        if weighted >= edge * total:
            return (2 * weighted + total) // (2 * total), letter
    return (2 * weighted + total) // (2 * total), GRADE_FLOOR


def score_of(m: HealthMeasures) -> tuple[int | None, str | None]:
    """Return (score, grade) of a session from its measures, as `health.health_grade` grades it.

    Returns
    -------
    (int or None, str or None)
        The composite score 0–100 and its letter; (None, None) when the session has fewer than
        `MIN_CALLS` calls or every signal abstains. Exact.

    >>> score_of(HealthMeasures(3, 120_000, 200_000, 0, 0, 0, None, None))
    (88, 'A')
    """
    if m.calls < MIN_CALLS:
        return None, None
    graded = score_and_grade(sub_scores(m))
    return (None, None) if graded is None else graded
