"""`--fail-on` thresholds (`select/thresholds.py`): parsing, units and comparison orders."""

from __future__ import annotations

import pytest

from contexttrace.select.thresholds import GRADES, LEVELS, TRACE_METRICS, USAGE_METRICS, ThresholdError, parse_threshold


def test_grades_and_levels_are_the_analysis_own():
    """`GRADES` and `LEVELS` are written out (parsing `--fail-on` imports no analysis); they are the grade
    letters and weather levels the analysis gives, best first."""
    from contexttrace.analysis.health_scores import GRADE_BANDS, GRADE_FLOOR
    from contexttrace.analysis.weather import STORMY, WEATHER_LEVELS

    assert (*(letter for _, letter in GRADE_BANDS), GRADE_FLOOR) == GRADES
    assert (*(level for _, level, _ in WEATHER_LEVELS), STORMY[0]) == LEVELS


def test_threshold_parsing_units_and_orders():
    """Values take k/M, % for fractions and $ for costs; grades order A best, levels sunny best."""
    assert parse_threshold("peak>1.5M", TRACE_METRICS).value == 1_500_000
    assert parse_threshold("fill>=80%", TRACE_METRICS).value == pytest.approx(0.8)
    assert parse_threshold("cost>$2.5", USAGE_METRICS).value == 2.5
    assert parse_threshold("PEAK>1", TRACE_METRICS).metric.name == "peak"
    assert parse_threshold("result-chars>1", TRACE_METRICS).metric.name == "result_chars"
    worse_than_b = parse_threshold("health<B", TRACE_METRICS)
    assert [g for g in GRADES if worse_than_b.holds(g)] == ["C", "D", "F"]
    cloudy_or_worse = parse_threshold("weather>=cloudy", TRACE_METRICS)
    assert [lv for lv in LEVELS if cloudy_or_worse.holds(lv)] == ["cloudy", "rainy", "stormy"]
    with pytest.raises(ThresholdError, match="is not a value for cost"):
        parse_threshold("cost>2.5%", USAGE_METRICS)
