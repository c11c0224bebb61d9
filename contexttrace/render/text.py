"""Text helpers every renderer shares: each number, duration, ratio, cost and percent format, and the tables.

A figure is written one way wherever it appears (the terminal tables, the notes, the HTML page): a count
with thousands separators, a fraction as a percentage rounded half up once, a duration on one scale
(``85ms``, ``1.4s``, ``45s``, ``2m 21s``, ``5h 1m``), a ratio with two decimals. Spec 001's exact/≈
discipline holds here: a format takes `estimate` and writes ``≈`` before an estimated figure, never
before an exact one; ``≥`` marks a lower bound.

Nothing here reads a report or prints: these functions take numbers and return `str`. Output does not
depend on the terminal or the locale.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import orjson

from contexttrace.analysis.metrics import round_half_up

#: tabulate's GitHub-style pipe table: `| a | b |` over `|---|---|`, as spec 004 shows it.
TABLE_FORMAT = "github"

#: Spec 000's five colours, one per grade (A green → F red): the `--explain` bars and the report page.
GRADE_COLORS = {"A": "#a6e3a1", "B": "#94e2d5", "C": "#f9e2af", "D": "#fab387", "F": "#f38ba8"}

#: The cell of a figure that is not known, in the terminal's tables (the report page writes ``–``).
MISSING = "-"

#: The mark before an estimated figure (spec 001).
ESTIMATE_MARK = "≈"
#: The mark of a lower bound, written against its figure as `ESTIMATE_MARK` is (``≥$0.4474``).
LOWER_BOUND_MARK = "≥"


# -- text that can always be written -------------------------------------------------------------------


def safe_text(text: str) -> str:
    """`text` with lone surrogates replaced (``?``), so it can always be written as UTF-8.

    A trace can hold a lone surrogate (an escaped ``\\ud800`` in its JSON); writing it as UTF-8 would
    raise, so each renderer passes its output through here rather than crash.

    >>> safe_text("a\\ud800b")
    'a?b'
    """
    return text.encode("utf-8", "replace").decode("utf-8")


def safe_value(value: Any) -> Any:
    """`value` with every string in it (keys too) passed through `safe_text`; other values as they are.

    >>> safe_value({"k": ["a\\ud800", 1]})
    {'k': ['a?', 1]}
    """
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(str(k)): safe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_value(v) for v in value]
    return value


def json_text(value: Any, sort_keys: bool = True) -> str:
    """`value` as indented JSON (two spaces), keys sorted unless `sort_keys` is False; always valid UTF-8.

    Strings holding a lone surrogate are written through `safe_value` (orjson refuses them).

    >>> json_text({"b": 1, "a": "x"})
    '{\\n  "a": "x",\\n  "b": 1\\n}'
    """
    return json_bytes(value, sort_keys).decode()


def json_bytes(value: Any, sort_keys: bool = True, newline: bool = False) -> bytes:
    """`json_text` as UTF-8 bytes (what a command writes to a UTF-8 stream without decoding it first);
    `newline`: ending in a line end.

    >>> json_bytes({"b": 1, "a": "\\u00e9"}, sort_keys=False)
    b'{\\n  "b": 1,\\n  "a": "\\xc3\\xa9"\\n}'
    """
    option = orjson.OPT_INDENT_2 | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    option |= orjson.OPT_APPEND_NEWLINE if newline else 0
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        return orjson.dumps(safe_value(value), option=option)


def pipe_table(rows: list[list[str]], headers: list[str], left: int = 1) -> str:
    """A pipe table (`TABLE_FORMAT`): the first `left` columns left-aligned, the rest right-aligned.

    Cells are written as given (no number parsing); the table ends without a newline.

    >>> print(pipe_table([["a", "1"]], ["name", "n"]))
    | name   |   n |
    |--------|-----|
    | a      |   1 |
    """
    # tabulate (and wcwidth under it) is imported here, not with the module: 35 ms of start-up that a
    # `--json` run never needs
    from tabulate import tabulate

    align = ["left"] * left + ["right"] * (len(headers) - left)
    return tabulate(rows, headers=headers, tablefmt=TABLE_FORMAT, disable_numparse=True, colalign=align)


# -- numbers -------------------------------------------------------------------------------------------


def fmt_int(value: int | None) -> str:
    """A count with thousands separators (``21390`` → ``"21,390"``); None → ``"-"``.

    >>> fmt_int(21390), fmt_int(None)
    ('21,390', '-')
    """
    return MISSING if value is None else f"{value:,}"


def fmt_window(tokens: int) -> str:
    """A context window short, as `--window` takes it: whole thousands as ``200k``, whole millions as ``1M``,
    else the exact count (``258,400``), so the short form never rounds.

    >>> fmt_window(200_000), fmt_window(1_000_000), fmt_window(272_000), fmt_window(1_048_576)
    ('200k', '1M', '272k', '1,048,576')
    """
    if tokens % 1_000_000 == 0:
        return f"{tokens // 1_000_000:,}M"
    if tokens % 1_000 == 0:
        return f"{tokens // 1_000:,}k"
    return fmt_int(tokens)


def fmt_tokens(tokens: int, estimated: bool) -> str:
    """A token count, ``≈`` before it when it is estimated (never before 0: nothing is exact).

    >>> fmt_tokens(26447, True), fmt_tokens(912, False), fmt_tokens(0, True)
    ('≈26,447', '912', '0')
    """
    return (ESTIMATE_MARK if estimated and tokens else "") + fmt_int(tokens)


def fmt_value(value: float | None, unit: str, signed: bool = False) -> str:
    """A median, bound or difference in its unit: thousands separators, one decimal only when there is
    one (the median of an even number of runs), USD as `fmt_usd` without the ≈; None → ``–``.

    >>> fmt_value(26009, "tokens"), fmt_value(4.5, "calls"), fmt_value(3000, "tokens", signed=True)
    ('26,009', '4.5', '+3,000')
    >>> fmt_value(-0.05, "usd", signed=True), fmt_value(0, "count", signed=True)
    ('-$0.0500', '0')
    """
    if value is None:
        return "–"
    if unit == "usd":
        text = fmt_usd(value, estimate=False)
        return ("+" + text) if signed and value > 0 and text != "$0.00" else text
    text = f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
    return ("+" + text) if signed and value > 0 else text


#: Units whose figures are whole numbers of something: a median of an even count of runs, a bootstrap
#: bound (interpolated between resamples) print rounded to a whole one (JSON keeps the raw number).
WHOLE_UNITS = frozenset({"tokens", "chars"})


def fmt_figure(value: float | None, unit: str, signed: bool = False) -> str:
    """A median, bound or difference as the table and sentences print it: `text.fmt_value`, with tokens
    and characters rounded half away from 0 to a whole number (no ``1,248.9`` tokens); None → ``–``.

    >>> fmt_figure(-1248.9, "tokens", signed=True), fmt_figure(62422.5, "tokens", True), fmt_figure(15.5, "calls")
    ('-1,249', '+62,423', '15.5')
    """
    if value is not None and unit in WHOLE_UNITS:
        value = math.copysign(math.floor(abs(value) + 0.5), value) if value else 0
        value = int(value)
    return fmt_value(value, unit, signed)


def fmt_decimal(value: float | None, places: int, estimate: bool = False, missing: str = MISSING) -> str:
    """A number with `places` decimals (a score, a severity, a turn count that is a quotient), ``≈`` when
    it is an estimate; None → `missing`.

    >>> fmt_decimal(0.824, 2), fmt_decimal(3.25, 1, estimate=True), fmt_decimal(None, 2)
    ('0.82', '≈3.2', '-')
    """
    if value is None:
        return missing
    return (ESTIMATE_MARK if estimate else "") + f"{value:.{places}f}"


def fmt_ratio(value: float | None, estimate: bool = False, missing: str = MISSING) -> str:
    """A ratio of two figures (returned ÷ output tokens, characters per token, latency ÷ baseline) with two
    decimals, ``≈`` when either side is an estimate; None → `missing`. The caller writes its unit
    (``× baseline``, ``chars/token``).

    >>> fmt_ratio(0.5234, estimate=True), fmt_ratio(3.5), fmt_ratio(None), fmt_ratio(None, missing="–")
    ('≈0.52', '3.50', '-', '–')
    """
    return fmt_decimal(value, 2, estimate, missing)


def fmt_p(p: float | None) -> str:
    """A p-value: two decimals, three below 0.01, ``<0.001`` below that; None → ``–``.

    >>> fmt_p(0.6123), fmt_p(0.0021645), fmt_p(0.0001), fmt_p(None)
    ('0.61', '0.002', '<0.001', '–')
    """
    if p is None:
        return "–"
    if p < 0.001:
        return "<0.001"
    return f"{p:.3f}" if p < 0.01 else f"{p:.2f}"


# -- percentages ---------------------------------------------------------------------------------------


def fmt_percent(fraction: float | Fraction | None) -> str:
    """A 0–1 fraction as a whole percentage, rounded half up once (``0.1084`` → ``"11%"``); None → ``"-"``.

    A `Fraction` is rounded from its exact value; a float from the decimal it prints as (its shortest
    repr: 0.02505 is 2.505 %, not the binary 2.50499…), so 2.505 % shows as 3 %, as every view of the
    fill shows it (`metrics.round_half_up`). Python's `:.0%` would round the binary value half to even.

    >>> fmt_percent(0.1084), fmt_percent(0.02505), fmt_percent(Fraction(4999, 200_000)), fmt_percent(0.125)
    ('11%', '3%', '2%', '13%')
    """
    if fraction is None:
        return MISSING
    exact = fraction if isinstance(fraction, Fraction) else Fraction(Decimal(repr(float(fraction))))
    return f"{round_half_up(exact * 100):.0f}%"


def fmt_error_percent(fraction: float | None) -> str:
    """An estimator's relative error (a 0–1 fraction) as a percentage with one decimal; None → ``"-"``.

    Rounded as Python formats the float (its binary value), not half up as `fmt_percent`: the errors are
    stored to four decimals, so 0.0595 prints as 5.9 %.

    >>> fmt_error_percent(0.1446), fmt_error_percent(0.275), fmt_error_percent(None)
    ('14.5%', '27.5%', '-')
    """
    return MISSING if fraction is None else f"{fraction * 100:.1f}%"


def fmt_percent_change(percent: float, places: int = 1) -> str:
    """A change already in percent, signed, with `places` decimals (``11.46`` → ``"+11.5%"``).

    >>> fmt_percent_change(11.46), fmt_percent_change(-3.0, 0)
    ('+11.5%', '-3%')
    """
    return f"{percent:+.{places}f}%"


# -- money ---------------------------------------------------------------------------------------------


def fmt_usd(value: float | None, lower_bound: bool = False, estimate: bool = True) -> str:
    """USD: two decimals from $1 up, four below; ``≈`` marks an estimate (our list-price cost), ``≥`` a
    lower bound (`usage.LOWER_BOUND_REASONS`), bare an exact or as-written figure; either mark written
    against the ``$`` (one cost format everywhere: ``≈$2.18``, ``≥$0.4474``); None → ``"-"``.

    Examples
    --------
    >>> fmt_usd(10.1136955), fmt_usd(0.003732), fmt_usd(2.5, lower_bound=True), fmt_usd(-0.2566, estimate=False)
    ('≈$10.11', '≈$0.0037', '≥$2.50', '-$0.2566')
    """
    if value is None:
        return MISSING
    text = f"{abs(value):,.2f}" if abs(value) >= 1 else f"{abs(value):.4f}"
    if not text.strip("0."):  # rounds to nothing: float noise (-4e-16) is neither negative nor $0.0000
        text, value = "0.00", 0.0
    mark = LOWER_BOUND_MARK if lower_bound else ESTIMATE_MARK if estimate else ""
    return mark + ("-" if value < 0 else "") + "$" + text


# -- durations -----------------------------------------------------------------------------------------


def fmt_duration(ms: float | None, estimate: bool = False, missing: str = MISSING) -> str:
    """A duration in milliseconds on one scale, as a clock shows elapsed time: cut (never rounded up) to the
    last unit shown.

    Milliseconds below 1 s (``85ms``), seconds with one decimal below 10 s (``1.4s``), whole seconds
    below a minute (``45s``), minutes and seconds below an hour (``2m 21s``), then hours and minutes
    (``5h 1m``). ``≈`` before it when it is an estimate (a tool's time from tool_use to tool_result,
    permission waits included); None → `missing` (not measured).

    >>> fmt_duration(85), fmt_duration(1428), fmt_duration(45_500), fmt_duration(141_874)
    ('85ms', '1.4s', '45s', '2m 21s')
    >>> fmt_duration(18_068_922), fmt_duration(1428, estimate=True), fmt_duration(None), fmt_duration(None, missing="–")
    ('5h 1m', '≈1.4s', '-', '–')
    """
    if ms is None:
        return missing
    mark = ESTIMATE_MARK if estimate else ""
    sign = "-" if ms < 0 else ""
    whole = int(abs(ms))
    if whole < 1000:
        text = f"{whole}ms"
    elif whole < 10_000:
        text = f"{whole // 1000}.{whole % 1000 // 100}s"
    elif whole < 60_000:
        text = f"{whole // 1000}s"
    elif whole < 3_600_000:
        text = f"{whole // 60_000}m {whole % 60_000 // 1000}s"
    else:
        text = f"{whole // 3_600_000}h {whole % 3_600_000 // 60_000}m"
    return mark + sign + text


# -- metrics as thresholds and history name them -------------------------------------------------------


def fmt_metric(kind: str, value: Any) -> str:
    """A metric's value as a threshold message shows it: counts and tokens with separators, fractions with
    four significant digits, USD as `fmt_usd`, grades and levels as they are; None → ``"-"``.

    >>> fmt_metric("tokens", 164831), fmt_metric("fraction", 0.824155), fmt_metric("usd", 2.5), fmt_metric("grade", "C")
    ('164,831', '0.8242', '≈$2.50', 'C')
    """
    if value is None:
        return MISSING
    if kind in ("count", "tokens"):
        return fmt_int(value)
    if kind == "fraction":
        return f"{value:.4g}"
    if kind == "usd":
        return fmt_usd(value)
    return str(value)


def fmt_change(kind: str, change: float) -> str:
    """A metric's change with its sign, in the metric's format (`fmt_metric`, USD without the ≈): ``+2,000``,
    ``-0.05``, ``+$1.50``, ``±0``.

    >>> fmt_change("tokens", 2000), fmt_change("fraction", -0.05), fmt_change("usd", 1.5), fmt_change("count", 0)
    ('+2,000', '-0.05', '+$1.50', '±0')
    """
    if change == 0:
        return "±0"
    sign = "+" if change > 0 else "-"
    if kind == "usd":
        return sign + fmt_usd(abs(change), estimate=False)
    if kind == "fraction":
        return f"{sign}{abs(change):.4g}"
    return sign + (fmt_int(abs(round(change))) if float(change).is_integer() else f"{abs(change):,.4g}")
