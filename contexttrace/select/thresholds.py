"""`--fail-on` thresholds: the metrics a CI job can gate on, parsing `metric<op>value`, and checking records.

Everything here works on the JSON records the commands print (`TraceReport.to_dict`, `UsageReport.to_dict`,
the `context usage --group-by` rows), so a threshold reads exactly the figure a user sees in `--json`, and
`history` reads stored records with the same getters. This module never prints and never exits: a bad
expression raises `ThresholdError` (the CLI turns it into a usage error, exit 2) and a breach is data
(`Breach`) for the renderer.

Grades compare with A best (``health<B`` is C, D or F); weather levels in spec 002's order, sunny <
fair < cloudy < rainy < stormy (``weather>=cloudy`` is cloudy, rainy or stormy). A trace with no grade or
no level (nothing measured: no main-thread model call) breaches nothing; `check` says it was not checked.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: Health grades, best first: `health_scores.GRADE_BANDS`' letters then `GRADE_FLOOR`. Written out, so that
#: parsing `--fail-on` imports no analysis (a run served from the result store computes no grade);
#: tests/select/test_thresholds.py holds them equal to the analysis' own.
GRADES: tuple[str, ...] = ("A", "B", "C", "D", "F")
#: Weather levels, best first (spec 002): `weather.WEATHER_LEVELS`' names then `STORMY`'s (written out
#: and tested as `GRADES`).
LEVELS: tuple[str, ...] = ("sunny", "fair", "cloudy", "rainy", "stormy")

Kind = Literal["count", "tokens", "fraction", "usd", "grade", "level"]
#: How one run's traces combine into one value (`history`): added, the largest, the smallest, the worst.
Aggregate = Literal["sum", "max", "min", "worst"]


class ThresholdError(ValueError):
    """A `--fail-on` expression that cannot be checked: malformed, an unknown metric, a bad value.

    The message names the expression and, for an unknown metric or a malformed expression, lists the
    valid metrics.
    """


@dataclass(frozen=True)
class Metric:
    """A figure a threshold, `--sort` or `history` can read from a JSON record.

    `get` returns the value (a number, a grade letter, a level name) or None when the record has none;
    `lower_bound` says when the value is only a lower bound (a cost printed ``≥``); `rank` gives the
    number a sort uses when it is not the value itself (health sorts by score, weather by score).
    """

    name: str
    kind: Kind
    help: str
    get: Callable[[Mapping[str, Any]], Any]
    aggregate: Aggregate = "sum"
    lower_bound: Callable[[Mapping[str, Any]], bool] | None = None
    rank: Callable[[Mapping[str, Any]], Any] | None = None


def _key(key: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: r.get(key)


def _nested(outer: str, key: str) -> Callable[[Mapping[str, Any]], Any]:
    return lambda r: (r.get(outer) or {}).get(key)


def _total(key: str) -> Callable[[Mapping[str, Any]], Any]:
    return _nested("total", key)


def _count(name: str, help_text: str, key: str | None = None, aggregate: Aggregate = "sum") -> Metric:
    return Metric(name, "count", help_text, _key(key or name), aggregate)


#: `context trace` metrics, by name (the JSON key unless said otherwise).
TRACE_METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        _count("calls", "main-thread model calls"),
        Metric("first", "tokens", "prompt tokens of the first main call", _key("first"), "max"),
        Metric("peak", "tokens", "the largest main-call prompt, tokens", _key("peak"), "max"),
        Metric("fill", "fraction", "peak / the window (--window, else the trace's), a fraction (0.8 or 80%)",
               _key("fill"), "max"),
        Metric("growth", "tokens", "peak - first, tokens", _key("growth"), "max"),
        _count("compact", "compactions"),
        _count("tools", "main-thread tool calls"),
        _count("failed", "failed tool results (refusals included)"),
        _count("denied", "refused tool calls"),
        _count("repeat", "identical repeated tool calls"),
        _count("result_chars", "characters of the main thread's tool results"),
        _count("subagent_calls", "subagent model calls"),
        Metric(
            "health", "grade", "health grade, A (best) to F", _nested("health", "grade"), "worst",
            rank=_nested("health", "score"),
        ),
        Metric("health_score", "count", "health score, 0-100", _nested("health", "score"), "min"),
        Metric(
            "weather", "level", "session weather: " + " < ".join(LEVELS), _nested("weather", "level"), "worst",
            rank=_nested("weather", "score"),
        ),
        Metric(
            "cost", "usd", "list-price cost in USD, all threads (as context usage)", _key("cost_usd"), "sum",
            lower_bound=lambda r: bool(r.get("cost_is_lower_bound")),
        ),
    )
}  # fmt: skip

#: `context usage` metrics (also each `--group-by` row), by name: every thread's totals (`total`).
USAGE_METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("calls", "count", "model calls, all threads", _total("calls")),
        Metric("turns", "count", "prompts the person wrote", _key("turns")),
        Metric("input", "tokens", "fresh input tokens", _total("input_tokens")),
        Metric("cache_write", "tokens", "cache-write tokens", _total("cache_write_tokens")),
        Metric("cache_read", "tokens", "cache-read tokens", _total("cache_read_tokens")),
        Metric(
            "output", "tokens", "output tokens", _total("output_tokens"),
            lower_bound=lambda r: bool((r.get("total") or {}).get("output_is_lower_bound")),
        ),
        Metric("hit", "fraction", "cache hit ratio, a fraction (0.9 or 90%)", _total("cache_hit_ratio"), "min"),
        Metric(
            "cost", "usd", "list-price cost in USD", _total("cost_usd"),
            lower_bound=lambda r: bool((r.get("total") or {}).get("cost_is_lower_bound")),
        ),
    )
}  # fmt: skip

#: The metrics of each record kind (the `schema_version` family names: `schemas.SCHEMA_NAMES`).
METRICS: dict[str, dict[str, Metric]] = {"trace": TRACE_METRICS, "usage": USAGE_METRICS, "usage-group": USAGE_METRICS}

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}
_EXPR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(>=|<=|==|!=|>|<|=)\s*(\S.*?)\s*")
_NUMBER = re.compile(r"\$?([0-9][0-9_]*(?:\.[0-9]+)?|\.[0-9]+)([kKmM%]?)")
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class Threshold:
    """One parsed `--fail-on` expression: a record breaches it when ``metric <op> value`` holds.

    `value` is a float for numeric metrics, the rank of the grade or level otherwise (`GRADES`,
    `LEVELS`: a higher rank is better for grades and worse for levels, as the words read).
    """

    text: str  # the expression as given, for messages
    metric: Metric
    op: str
    value: float
    shown: str  # the value as given (``B``, ``150000``, ``0.8``)

    def holds(self, raw: Any) -> bool:
        """Return True when a record's value `raw` (not None) breaches this threshold.

        A grade or level compares by its rank (`GRADES`, `LEVELS`), anything else as a float.
        """
        return _OPS[self.op](self._comparable(raw), self.value)

    def _comparable(self, raw: Any) -> float:
        if self.metric.kind == "grade":
            return float(len(GRADES) - GRADES.index(raw))  # A highest: health<B is C, D, F
        if self.metric.kind == "level":
            return float(LEVELS.index(raw))  # stormy highest: weather>=cloudy is cloudy, rainy, stormy
        return float(raw)


def describe(metrics: Mapping[str, Metric]) -> str:
    """Return one line naming every metric of a command with its help, for error messages and `--help`.

    Examples
    --------
    >>> describe({"peak": TRACE_METRICS["peak"], "health": TRACE_METRICS["health"]})
    'peak (the largest main-call prompt, tokens), health (health grade, A (best) to F)'
    """
    return ", ".join(f"{m.name} ({m.help})" for m in metrics.values())


def parse_threshold(text: str, metrics: Mapping[str, Metric]) -> Threshold:
    """Parse one `--fail-on` expression such as ``peak>150000``, ``fill>=0.8``, ``health<B``.

    Parameters
    ----------
    text
        ``<metric><op><value>``; op one of ``>  >=  <  <=  ==  !=`` (``=`` is ``==``). Numbers take a
        ``k``/``M`` suffix (``150k``) and, for fractions, ``%`` (``80%`` is 0.8); costs an optional ``$``.
        Grades are A–F, weather levels sunny … stormy (case ignored). Spaces around parts are ignored.
    metrics
        The command's metrics (`TRACE_METRICS`, `USAGE_METRICS`).

    Returns
    -------
    Threshold
        The metric, the operator (``=`` written ``==``), the value to compare with (`Threshold.value`) and
        the text as given.

    Raises
    ------
    ThresholdError
        Malformed, an unknown metric (the message lists the valid ones) or a value the metric cannot
        take (a grade that is not A–F, a level that is not one of `LEVELS`, text for a number).

    Examples
    --------
    >>> t = parse_threshold("peak>150k", TRACE_METRICS)
    >>> (t.metric.name, t.op, t.value), t.holds(160_000), t.holds(150_000)
    (('peak', '>', 150000.0), True, False)
    >>> [parse_threshold("health<B", TRACE_METRICS).holds(g) for g in GRADES]
    [False, False, True, True, True]
    >>> [parse_threshold("weather>=cloudy", TRACE_METRICS).holds(lv) for lv in LEVELS]
    [False, False, True, True, True]
    """
    match = _EXPR.fullmatch(text)
    if match is None:
        raise ThresholdError(
            f"{text!r} is not a threshold: write <metric><op><value> such as peak>150000, fill>=0.8, "
            f"health<B; op is one of > >= < <= == !=; metrics: {', '.join(metrics)}"
        )
    name, op, raw = match[1].lower().replace("-", "_"), match[2], match[3]
    metric = metrics.get(name)
    if metric is None:
        raise ThresholdError(f"{text!r}: unknown metric {match[1]!r}; valid metrics: {describe(metrics)}")
    return Threshold(text.strip(), metric, "==" if op == "=" else op, _value(text, metric, raw), raw)


def _value(text: str, metric: Metric, raw: str) -> float:
    """The number a threshold compares with: a rank for grades and levels, else the number written."""
    if metric.kind == "grade":
        if raw.upper() not in GRADES:
            raise ThresholdError(f"{text!r}: {metric.name} is a grade, one of {', '.join(GRADES)} (A best)")
        return float(len(GRADES) - GRADES.index(raw.upper()))
    if metric.kind == "level":
        if raw.lower() not in LEVELS:
            raise ThresholdError(f"{text!r}: {metric.name} is a level, one of {' < '.join(LEVELS)}")
        return float(LEVELS.index(raw.lower()))
    number = _NUMBER.fullmatch(raw)
    suffix = number[2].lower() if number else ""
    if (
        number is None
        or (suffix == "%" and metric.kind != "fraction")
        or (raw.startswith("$") and metric.kind != "usd")
    ):
        hint = "a fraction such as 0.8 or 80%" if metric.kind == "fraction" else "a number such as 150000 or 150k"
        raise ThresholdError(f"{text!r}: {raw!r} is not a value for {metric.name} ({hint})")
    value = float(number[1].replace("_", ""))
    return value / 100 if suffix == "%" else value * _SCALE[suffix]


@dataclass(frozen=True)
class Breach:
    """A record that breaches a threshold: which (`trace`, its full name; `label`, as the table names it),
    the metric's value, the threshold."""

    trace: str
    threshold: Threshold
    value: Any
    lower_bound: bool = False  # the value is a lower bound (a ≥ cost) that already breaches
    label: str = ""


@dataclass(frozen=True)
class Unchecked:
    """A record a threshold could not decide: `reason` ``not_graded`` (no health grade or weather
    level: nothing was measured), ``no_value`` (the record has no such figure), or ``lower_bound`` (the
    value is a lower bound that does not breach; the true figure may)."""

    trace: str
    threshold: Threshold
    reason: Literal["not_graded", "no_value", "lower_bound"]
    value: Any = None
    label: str = ""


@dataclass(frozen=True)
class CheckResult:
    """Every breach, and every record a threshold could not decide, in record then threshold order."""

    breaches: list[Breach]
    unchecked: list[Unchecked]

    @property
    def ok(self) -> bool:
        """True when nothing breached."""
        return not self.breaches


def check(records: Sequence[Mapping[str, Any]], labels: Sequence[str], thresholds: Sequence[Threshold]) -> CheckResult:
    """Check every record against every threshold.

    Parameters
    ----------
    records
        JSON records (one per trace, or per `--group-by` row).
    labels
        How the table names each record (its label), same order; a breach names the record by its
        `trace` (full name), or by the label when it has none (a `--group-by` row).
    thresholds
        From `parse_threshold`.

    Returns
    -------
    CheckResult
        A breach when a value holds the threshold's comparison. A value that is None is not a breach:
        ``not_graded`` for a grade or level (an ungraded trace is not a breach of ``health<B``),
        ``no_value`` otherwise. A value that is a lower bound (a cost printed ``≥``) breaches a ``>`` or
        ``>=`` threshold for certain; any other outcome on a lower bound is reported ``lower_bound``.

    Examples
    --------
    >>> ts = [parse_threshold(t, TRACE_METRICS) for t in ("peak>100", "health<B")]
    >>> out = check([{"peak": 150, "health": {"grade": None}}], ["run.jsonl"], ts)
    >>> [(b.trace, b.threshold.text, b.value) for b in out.breaches], [u.reason for u in out.unchecked]
    ([('run.jsonl', 'peak>100', 150)], ['not_graded'])
    """
    breaches: list[Breach] = []
    unchecked: list[Unchecked] = []
    for record, label in zip(records, labels, strict=True):
        name = record.get("trace") or label
        for t in thresholds:
            value = t.metric.get(record)
            if value is None:
                reason: Literal["not_graded", "no_value"] = (
                    "not_graded" if t.metric.kind in ("grade", "level") else "no_value"
                )
                unchecked.append(Unchecked(name, t, reason, label=label))
                continue
            lower = t.metric.lower_bound is not None and t.metric.lower_bound(record)
            if t.holds(value):
                if lower and t.op not in (">", ">="):  # a lower bound is not known to be below anything
                    unchecked.append(Unchecked(name, t, "lower_bound", value, label=label))
                else:
                    breaches.append(Breach(name, t, value, lower, label=label))
            elif lower:
                unchecked.append(Unchecked(name, t, "lower_bound", value, label=label))
    return CheckResult(breaches, unchecked)


def metric_rank(metric: Metric, record: Mapping[str, Any]) -> Any:
    """Return the value `--sort` orders a record by.

    Returns
    -------
    float, int, str or None
        `Metric.rank` of the record when the metric has one (health and weather sort by their score), else
        the metric's value; None when the record has none (`filters.sort_order` puts those last).
    """
    return (metric.rank or metric.get)(record)


def aggregate(metric: Metric, values: Sequence[Any]) -> Any:
    """Combine one run's values of a metric into one (`history`).

    Parameters
    ----------
    metric
        Its `Metric.aggregate` says how: ``sum``, ``max``, ``min``, or ``worst`` (the worst grade or level:
        `GRADES` and `LEVELS` are best first).
    values
        The metric's value in each record of the run; None values are left out.

    Returns
    -------
    Any
        The combined value, in the metric's unit; None when no value is left.

    Examples
    --------
    >>> aggregate(TRACE_METRICS["peak"], [10, None, 30]), aggregate(TRACE_METRICS["health"], ["A", "C", None])
    (30, 'C')
    """
    known = [v for v in values if v is not None]
    if not known:
        return None
    if metric.aggregate == "worst":
        order = GRADES if metric.kind == "grade" else LEVELS  # both best first: the worst is the last
        return max(known, key=order.index)
    if metric.aggregate == "max":
        return max(known)
    if metric.aggregate == "min":
        return min(known)
    return sum(known)
