"""Number formats of every table (`render/text.py`): percentages rounded half up once, one duration format."""

from __future__ import annotations

from fractions import Fraction

import pytest

from contexttrace.render.text import fmt_duration, fmt_percent
from contexttrace.render.trace import (
    render_table,
)
from contexttrace.reports.results import RunResult
from contexttrace.reports.trace import build_report

from ..conftest import (
    assistant,
    memory_trace,
)


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "0ms"),
        (999, "999ms"),
        (1_000, "1.0s"),
        (9_999, "9.9s"),
        (10_000, "10s"),
        (59_999, "59s"),
        (60_000, "1m 0s"),
        (3_599_999, "59m 59s"),
        (3_600_000, "1h 0m"),
        (240_060_000, "66h 41m"),
    ],
)
def test_one_duration_format_on_every_scale(ms: int, text: str) -> None:
    """Every duration (tool p50/p95, an agent's time, a file's age, a session on the report page) is written
    by `fmt_duration`: cut to the last unit shown, as a clock shows elapsed time; ≈ only on an estimate."""
    assert fmt_duration(ms) == text
    assert fmt_duration(ms, estimate=True) == "≈" + text
    assert fmt_duration(None) == "-" and fmt_duration(None, missing="–") == "–"


def test_fmt_percent_rounds_half_up_from_the_value_it_prints_as():
    """The table's fill and cache hit: 12.5 % is 13 %, 2.505 % is 3 % (Python's `:.0%` gave 12 % and, from
    a rounded 0.025, 2 %); an exact fraction is rounded from its exact value."""
    assert [fmt_percent(x) for x in (0.125, 0.02505, 0.025, 0.1084, 0.0, 1.5)] == [
        "13%",
        "3%",
        "3%",
        "11%",
        "0%",
        "150%",
    ]
    assert fmt_percent(Fraction(4_999, 200_000)) == "2%" and fmt_percent(None) == "-"
    r = build_report(memory_trace(assistant("m1", 5_010, 0, 0)), window=200_000)
    assert render_table(RunResult([r], [])).splitlines()[2].split("|")[5].strip() == "3%"
