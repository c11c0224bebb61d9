"""Health (spec 000) and weather (spec 002) over the real samples, on traces read and reduced beforehand.

What `context trace` adds for the two reports once a trace's rows are read: `health.health_of` (the grade
and its 21-point timeline) and `weather.weather_of` (the severities after every call, the worst weather).
The samples are real sessions: many short stream-json runs, where a report's fixed cost per trace counts,
and long transcripts, where its cost per call does. Known answers: the grades, levels and scores the
samples have (`tests/analysis/test_health_spec.py` holds the grades to an independent port of spec 000).
"""

from __future__ import annotations

import collections

import pytest
from realcorpus import SAMPLES

from contexttrace.analysis.frame_rows import FrameRows
from contexttrace.analysis.health import health_of
from contexttrace.analysis.session import session_rows_of
from contexttrace.analysis.weather import weather_of
from contexttrace.analysis.window import window_choice
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace

#: (health grade, weather level) → traces among the samples' 44 (None, None: the trace without a model call).
KNOWN_GRADES = {
    ("A", "sunny"): 36,
    ("A", "fair"): 1,
    ("A", "rainy"): 1,
    ("A", "stormy"): 2,
    ("B", "sunny"): 1,
    ("C", "fair"): 2,
    (None, None): 1,
}
#: Sums over the samples: health scores, weather scores, worst-weather call numbers, timeline scores.
KNOWN_SUMS = (4148, 5.612361, 484, 86624)


@pytest.fixture(scope="module")
def sessions():
    traces = [t for s in find_traces([str(SAMPLES)]) for t in read_trace(s.path, s.subagents)]
    return [(session_rows_of(t, FrameRows(t)), window_choice(t)) for t in traces]


def _health_and_weather(sessions):
    return [(health_of(rows, choice), weather_of(rows, choice.tokens)) for rows, choice in sessions]


def test_health_weather_samples(timed, sessions):
    out = timed("health-weather-samples", _health_and_weather, sessions)
    assert collections.Counter((h["grade"], w["level"]) for h, w in out) == KNOWN_GRADES
    sums = (
        sum(h["score"] or 0 for h, _ in out),
        round(sum(w["score"] or 0 for _, w in out), 6),
        sum((w["worst"] or {}).get("call") or 0 for _, w in out),
        sum(p["score"] or 0 for h, _ in out for p in h["timeline"]),
    )
    assert sums == KNOWN_SUMS
