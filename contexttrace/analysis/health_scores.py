"""Spec 000's scoring rules as data: five signals, each measure to a sub-score, the sub-scores to a grade.

Everything here is a pure function of numbers already measured (`HealthMeasures`); measuring them from a
session is `health.py`'s and `health_timeline.py`'s job. The tables, the no-data values and the fixed
weights are the spec's (docs/health-weather.md): a signal without data takes the value spec 000's code
returns for it (`NO_FILL_SCORE`, `NO_READS_SCORE`, `TOO_FEW_CALLS_SCORE`, `NO_FIRST_HALF_WRITES_SCORE`)
and every signal keeps its weight. Two choices of ours:

* every comparison is exact: the measures are `Fraction`s (or ints) and the composite is computed in
  integers, so a band edge is never missed by float noise (a rate ratio of exactly 5.0 is `<= 5.0`);
* a trace without a model call is not graded at all (`MIN_CALLS`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any, NamedTuple

from contexttrace.reading.contract import EDIT_TOOLS

# --- spec 000's thresholds, as data ------------------------------------------------------------------
# A band table is ((edge, sub-score), ...) read top to bottom with the comparison named beside it; the
# first edge the value passes gives the sub-score, else the table's floor. Edges are exact decimals.

#: Context Fill: fill fraction `< edge` → sub-score; else 20 (F).
FILL_BANDS: tuple[tuple[Fraction, int], ...] = (
    (Fraction("0.50"), 100),
    (Fraction("0.65"), 80),
    (Fraction("0.80"), 60),
    (Fraction("0.90"), 40),
)
FILL_FLOOR = 20

#: Compactions: exact count → sub-score; 4 or more → 15 (F).
COMPACTION_SCORES: dict[int, int] = {0: 100, 1: 75, 2: 55, 3: 35}
COMPACTION_FLOOR = 15

#: Re-reads: ratio `<= edge` → sub-score; else 20 (F).
REREAD_BANDS: tuple[tuple[Fraction, int], ...] = (
    (Fraction("0.05"), 100),
    (Fraction("0.10"), 80),
    (Fraction("0.20"), 60),
    (Fraction("0.35"), 40),
)
REREAD_FLOOR = 20

#: Error acceleration: second-half ÷ first-half error rate `<= edge` → sub-score; else 15 (F).
ERROR_ACCELERATION_BANDS: tuple[tuple[Fraction, int], ...] = (
    (Fraction(1), 100),
    (Fraction(2), 75),
    (Fraction(3), 55),
    (Fraction(5), 35),
)
ERROR_ACCELERATION_FLOOR = 15
#: Sub-score when the first half had no error and the second half had some ("went from clean to errors").
ERRORS_FROM_CLEAN_SCORE = 40

#: Tool efficiency: second-half ÷ first-half productive ratio `>= edge` → sub-score; else 15 (F).
EFFICIENCY_BANDS: tuple[tuple[Fraction, int], ...] = (
    (Fraction("0.9"), 100),
    (Fraction("0.7"), 75),
    (Fraction("0.4"), 55),
    (Fraction("0.15"), 35),
)
EFFICIENCY_FLOOR = 15
#: The tools spec 000's `isProductive` names (Claude Code's).
SPEC_PRODUCTIVE_TOOLS = ("Write", "Edit", "MultiEdit")
#: Tools that produce something: spec 000's and their counterparts in the other agents read here (Codex
#: CLI's apply_patch, Gemini CLI's write_file and replace: `contract.EDIT_TOOLS`).
PRODUCTIVE_TOOLS = EDIT_TOOLS

# --- without data: spec 000's values ---------------------------------------------------------------------
# A signal without data is not left out: it takes the value the spec's code returns for it, and its
# `has_data` is False so that a reader can tell it from a measurement.

#: Context Fill and Compactions need one main-thread model call; with none, nothing is graded at all.
MIN_CALLS = 1
#: Context Fill without a measured prompt (`metrics.measured`: no call's usage could be read): the
#: spec's `if (!latest) return 100; // no data = healthy`.
NO_FILL_SCORE = 100
#: Re-reads without a Read call with a file path: the spec's `if (reads.length === 0) return 100`.
NO_READS_SCORE = 100
#: Error Rate and Tool Efficiency compare the halves of at least this many tool calls; below it both
#: take `TOO_FEW_CALLS_SCORE` (the spec's `if (calls.length < 4) return 100; // too few calls to judge`).
MIN_TOOL_CALLS = 4
TOO_FEW_CALLS_SCORE = 100
#: Tool Efficiency when the first half has no productive call, so that the change second ÷ first is
#: undefined: the spec's `if (firstRatio === 0) return 80; // no writes at all — could be research phase`.
NO_FIRST_HALF_WRITES_SCORE = 80

#: Composite score `>= edge` → grade; else F.
GRADE_BANDS: tuple[tuple[float, str], ...] = ((85, "A"), (70, "B"), (55, "C"), (40, "D"))
GRADE_FLOOR = "F"

#: Measures in JSON are rounded to this many decimals (ratios and fractions).
RATIO_DECIMALS = 4


class SignalRule(NamedTuple):
    """One of spec 000's five signals: its name and fixed weight."""

    name: str  #: as the spec writes it
    weight: int  #: whole percent; the five sum to 100


#: The five signals in spec order.
SIGNALS: tuple[SignalRule, ...] = (
    SignalRule("Context Fill", 40),
    SignalRule("Compactions", 25),
    SignalRule("Re-reads", 15),
    SignalRule("Error Rate", 10),
    SignalRule("Tool Efficiency", 10),
)
#: The sum of the weights (whole percent).
TOTAL_WEIGHT = sum(rule.weight for rule in SIGNALS)
_WEIGHTS = tuple(rule.weight for rule in SIGNALS)


class HealthMeasures(NamedTuple):
    """What the five signals score, measured over a session's rows or a prefix of them.

    `calls` counts the main-thread model calls; `latest` is the latest measured call's prompt in tokens
    (None when no call's prompt was measured); `window` the effective window in tokens (> 0);
    `compactions` a count; `reads` the Read calls (`contract.READ_TOOLS`) with a `file_path` and `rereads`
    those of a path read before; `error_rates` and `write_shares` the exact (first-half, second-half) shares
    of failed and of productive tool calls, each 0–1, None with fewer than `MIN_TOOL_CALLS` tool calls.
    """

    calls: int
    latest: int | None
    window: int
    compactions: int
    reads: int
    rereads: int
    error_rates: tuple[Fraction, Fraction] | None
    write_shares: tuple[Fraction, Fraction] | None


def _band(
    value: Fraction | float, bands: Sequence[tuple[Any, Any]], floor: Any, passes: Callable[[Any, Any], bool]
) -> Any:
    for edge, result in bands:
        if passes(value, edge):
            return result
    return floor


def fill_score(fill_frac: Fraction | float | None) -> int:
    """Score the Context Fill signal (weight 40 %).

    Parameters
    ----------
    fill_frac
        The latest measured main-thread call's prompt tokens ÷ the effective window (0–1+), exact as a
        `Fraction` (a float is compared at its exact binary value), or None when no call's prompt was
        measured.

    Returns
    -------
    int
        100 below 0.50, 80 below 0.65, 60 below 0.80, 40 below 0.90, else 20 (edges exclusive, as the
        spec's ``<``); without a fill `NO_FILL_SCORE` (100). Exact.

    Examples
    --------
    >>> fill_score(Fraction(4999, 10_000)), fill_score(Fraction(1, 2)), fill_score(Fraction(9, 10)), fill_score(None)
    (100, 80, 20, 100)
    """
    if fill_frac is None:
        return NO_FILL_SCORE
    fill = Fraction(fill_frac)
    return _ratio_band(fill.numerator, fill.denominator, _FILL_INT, FILL_FLOOR, operator.lt)


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


def reread_score(ratio: Fraction | float | None) -> int:
    """Score the Re-reads signal (weight 15 %).

    Parameters
    ----------
    ratio
        Re-reads ÷ Read calls with a `file_path` (0–1), exact; None when there was no such Read call.

    Returns
    -------
    int
        100 up to 0.05, 80 up to 0.10, 60 up to 0.20, 40 up to 0.35, else 20 (edges inclusive, ``<=``);
        without a Read call `NO_READS_SCORE` (100). Exact.

    Examples
    --------
    >>> reread_score(Fraction(1, 20)), reread_score(Fraction(1, 19)), reread_score(Fraction(1, 2)), reread_score(None)
    (100, 80, 20, 100)
    """
    if ratio is None:
        return NO_READS_SCORE
    share = Fraction(ratio)
    return _ratio_band(share.numerator, share.denominator, _REREAD_INT, REREAD_FLOOR, operator.le)


def error_acceleration_score(rates: tuple[Fraction, Fraction] | None) -> int:
    """Score the Error Rate (acceleration) signal (weight 10 %).

    Parameters
    ----------
    rates
        (first-half, second-half) tool error rates, each 0–1, exact, from `health.half_rates`; None with
        fewer than `MIN_TOOL_CALLS` tool calls.

    Returns
    -------
    int
        `TOO_FEW_CALLS_SCORE` (100) without `rates`; 100 when both halves are clean; 40 when only the
        second half has errors; else by the ratio second ÷ first: 100 up to 1.0, 75 up to 2.0, 55 up to
        3.0, 35 up to 5.0, else 15 (``<=``). Exact.

    Examples
    --------
    >>> f = Fraction
    >>> error_acceleration_score((f(1, 10), f(2, 10))), error_acceleration_score((f(0), f(1, 10)))
    (75, 40)
    >>> error_acceleration_score((f(1, 6), f(5, 6))), error_acceleration_score(None)
    (35, 100)
    """
    return _error_score(_terms(rates))


def tool_efficiency_score(ratios: tuple[Fraction, Fraction] | None) -> int:
    """Score the Tool Efficiency signal (weight 10 %).

    Parameters
    ----------
    ratios
        (first-half, second-half) shares of productive calls (`PRODUCTIVE_TOOLS`), each 0–1, exact,
        from `health.half_rates`; None with fewer than `MIN_TOOL_CALLS` tool calls.

    Returns
    -------
    int
        `TOO_FEW_CALLS_SCORE` (100) without `ratios`; `NO_FIRST_HALF_WRITES_SCORE` (80) when the first half
        has no productive call; else by the change second ÷ first: 100 from 0.9, 75 from 0.7, 55 from 0.4,
        35 from 0.15, else 15 (``>=``). Exact.

    Examples
    --------
    >>> f = Fraction
    >>> tool_efficiency_score((f(1, 2), f(9, 20))), tool_efficiency_score((f(0), f(1, 2))), tool_efficiency_score(None)
    (100, 80, 100)
    """
    return _efficiency_score(_terms(ratios))


def fill_fraction(m: HealthMeasures) -> Fraction | None:
    """The exact fill Context Fill scores: `latest` ÷ `window`, or None without a measured prompt.

    >>> fill_fraction(HealthMeasures(1, 120_000, 200_000, 0, 0, 0, None, None))
    Fraction(3, 5)
    """
    return None if m.latest is None else Fraction(m.latest, m.window)


def sub_scores(m: HealthMeasures) -> list[int]:
    """Score each of the five signals from its measure, in spec order.

    Parameters
    ----------
    m
        The measures of a session with at least `MIN_CALLS` calls.

    Returns
    -------
    list of int
        One sub-score 0–100 per signal of `SIGNALS`; a signal without data has the spec's value for it
        (`has_data` tells which). Exact.

    Examples
    --------
    >>> sub_scores(HealthMeasures(3, 120_000, 200_000, 1, 4, 1, None, None))  # 1 re-read of 4 reads: 0.25
    [80, 75, 40, 100, 100]
    """
    return sub_scores_of_counts(
        m.latest, m.window, m.compactions, m.reads, m.rereads, _terms(m.error_rates), _terms(m.write_shares)
    )


def _terms(rates: tuple[Fraction, Fraction] | None) -> tuple[int, int, int, int] | None:
    """(first half's numerator, denominator, second half's numerator, denominator) of exact half rates."""
    if rates is None:
        return None
    first, second = map(Fraction, rates)
    return first.numerator, first.denominator, second.numerator, second.denominator


def sub_scores_of_counts(
    latest: int | None,
    window: int,
    compactions: int,
    reads: int,
    rereads: int,
    errors: tuple[int, int, int, int] | None,
    productive: tuple[int, int, int, int] | None,
) -> list[int]:
    """Score the five signals from counts, in integers, in spec order (`sub_scores` of the same measures).

    Parameters
    ----------
    latest, window, compactions, reads, rereads
        As `HealthMeasures` (`window` > 0).
    errors, productive
        The half rates of failed and of productive tool calls as (n1, d1, n2, d2), n1 / d1 in the first
        half and n2 / d2 in the second (denominators > 0, the fractions need not be reduced); None with
        fewer than `MIN_TOOL_CALLS` tool calls.

    Returns
    -------
    list of int
        The sub-scores `fill_score`, `compaction_score`, `reread_score`, `error_acceleration_score` and
        `tool_efficiency_score` give (they share the band tests below). A band edge p / q is passed by
        cross-multiplying (the change of the halves, second ÷ first, is n2·d1 ÷ d2·n1), so nothing is
        divided. Exact.

    >>> sub_scores_of_counts(120_000, 200_000, 1, 4, 1, None, None)
    [80, 75, 40, 100, 100]
    """
    fill = NO_FILL_SCORE if latest is None else _ratio_band(latest, window, _FILL_INT, FILL_FLOOR, operator.lt)
    reread = NO_READS_SCORE if not reads else _ratio_band(rereads, reads, _REREAD_INT, REREAD_FLOOR, operator.le)
    compaction = COMPACTION_SCORES.get(compactions, COMPACTION_FLOOR)
    return [fill, compaction, reread, _error_score(errors), _efficiency_score(productive)]


def _error_score(errors: tuple[int, int, int, int] | None) -> int:
    """`error_acceleration_score` of the half rates as (n1, d1, n2, d2) (`sub_scores_of_counts`)."""
    if errors is None:
        return TOO_FEW_CALLS_SCORE
    n1, d1, n2, d2 = errors
    if not n1:
        return 100 if not n2 else ERRORS_FROM_CLEAN_SCORE
    return _ratio_band(n2 * d1, d2 * n1, _ERROR_INT, ERROR_ACCELERATION_FLOOR, operator.le)


def _efficiency_score(productive: tuple[int, int, int, int] | None) -> int:
    """`tool_efficiency_score` of the half shares as (n1, d1, n2, d2) (`sub_scores_of_counts`)."""
    if productive is None:
        return TOO_FEW_CALLS_SCORE
    n1, d1, n2, d2 = productive
    if not n1:
        return NO_FIRST_HALF_WRITES_SCORE
    return _ratio_band(n2 * d1, d2 * n1, _EFFICIENCY_INT, EFFICIENCY_FLOOR, operator.ge)


def has_data(m: HealthMeasures) -> list[bool]:
    """Whether each of the five signals was measured, in spec order; False where the spec's no-data value applied.

    Returns
    -------
    list of bool
        Context Fill: a call's prompt was measured; Compactions: always (a count of 0 is a measurement);
        Re-reads: a Read call with a `file_path`; Error Rate: at least `MIN_TOOL_CALLS` tool calls; Tool
        Efficiency: as Error Rate, and a productive call in the first half.

    >>> has_data(HealthMeasures(3, 120_000, 200_000, 1, 4, 1, None, None))
    [True, True, True, False, False]
    """
    writes = m.write_shares
    return [m.latest is not None, True, m.reads > 0, m.error_rates is not None, writes is not None and writes[0] > 0]


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
    return str(_band(score, GRADE_BANDS, GRADE_FLOOR, operator.ge))  # int and float compare exactly


def composite(values: Sequence[int]) -> tuple[int, str]:
    """Compose the five sub-scores (spec order) into (score, grade) with spec 000's fixed weights.

    The composite is Σ sub-score × weight (40/25/15/10/10 %), computed exactly in integers: the grade
    compares Σ value × weight (in whole percent) with edge × 100, and the score is the composite rounded
    half up (JavaScript's `Math.round`).

    Returns
    -------
    (int, str)
        (score 0–100, grade A–F). Exact.

    Examples
    --------
    >>> composite([80, 75, 20, 40, 55]), composite([100, 100, 80, 100, 15])
    ((63, 'C'), (89, 'A'))
    """
    if len(values) != len(_WEIGHTS):
        raise ValueError(f"{len(values)} sub-scores for {len(_WEIGHTS)} signals")
    weighted = sum(map(operator.mul, values, _WEIGHTS))
    score = (2 * weighted + TOTAL_WEIGHT) // (2 * TOTAL_WEIGHT)
    for edge, letter in GRADE_BANDS:
        if weighted >= edge * TOTAL_WEIGHT:
            return score, letter
    return score, GRADE_FLOOR


@functools.cache
def _composite_of(*values: int) -> tuple[int, str]:
    """`composite(values)`, remembered: the five sub-scores take a few values each."""
    return composite(values)


def _in_integers(bands: Sequence[tuple[Fraction, int]]) -> tuple[tuple[int, int, int], ...]:
    """A band table with each edge as (numerator, denominator): what `score_of_counts` compares."""
    return tuple((edge.numerator, edge.denominator, result) for edge, result in bands)


_FILL_INT = _in_integers(FILL_BANDS)
_REREAD_INT = _in_integers(REREAD_BANDS)
_ERROR_INT = _in_integers(ERROR_ACCELERATION_BANDS)
_EFFICIENCY_INT = _in_integers(EFFICIENCY_BANDS)


def _ratio_band(num: int, den: int, bands: tuple[tuple[int, int, int], ...], floor: int, passes: Any) -> int:
    """`_band(Fraction(num, den), ...)` in integers (den > 0): num / den passes p / q iff num·q passes p·den."""
    for p, q, result in bands:
        if passes(num * q, p * den):
            return result
    return floor


def score_of_counts(
    latest: int | None,
    window: int,
    compactions: int,
    reads: int,
    rereads: int,
    tools: int,
    errors: tuple[int, int],
    productive: tuple[int, int],
) -> tuple[int, str]:
    """Return `score_of` of a session with at least `MIN_CALLS` calls from its counts, in integers.

    Parameters
    ----------
    latest, window, compactions, reads, rereads
        As `HealthMeasures` (`window` > 0).
    tools
        Tool calls; the first half is the first `tools // 2` (`health.half_rates`).
    errors, productive
        Failed and productive tool calls in (first half, second half).

    Returns
    -------
    (int, str)
        The composite score 0–100 and its letter, equal to `score_of` of the same measures with the
        rates as `Fraction`s (tests/analysis/test_health.py compares them): every band edge p / q is
        compared by cross-multiplying, so nothing is divided. Exact.

    >>> score_of_counts(120_000, 200_000, 1, 4, 1, 6, (0, 2), (1, 1))
    (71, 'B')
    >>> score_of(HealthMeasures(3, 120_000, 200_000, 1, 4, 1, (Fraction(0), Fraction(2, 3)), (Fraction(1, 3),) * 2))
    (71, 'B')
    """
    if tools < MIN_TOOL_CALLS:
        error_terms = productive_terms = None
    else:
        first, second = tools // 2, tools - tools // 2
        error_terms, productive_terms = (
            (errors[0], first, errors[1], second),
            (productive[0], first, productive[1], second),
        )
    # `composite`, remembered by the five sub-scores (a few hundred tuples at most)
    return _composite_of(
        *sub_scores_of_counts(latest, window, compactions, reads, rereads, error_terms, productive_terms)
    )


def score_of(m: HealthMeasures) -> tuple[int | None, str | None]:
    """Return (score, grade) of a session from its measures, as `health.health_grade` grades it.

    Returns
    -------
    (int or None, str or None)
        The composite score 0–100 and its letter; (None, None) when the session has fewer than
        `MIN_CALLS` calls. Exact.

    >>> score_of(HealthMeasures(3, 120_000, 200_000, 0, 0, 0, None, None))
    (92, 'A')
    """
    if m.calls < MIN_CALLS:
        return None, None
    return composite(sub_scores(m))
