"""Metrics: `report.build_report` on frames already read (every `context trace` figure)."""

from __future__ import annotations

import pytest
from conftest import check_reports

from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace
from contexttrace.reports.trace import build_report


@pytest.fixture(scope="module")
def traces(corpora):
    out = {}
    for name in ("single", "stream"):
        out[name] = [t for s in find_traces(corpora[name].paths) for t in read_trace(s.path, s.subagents)]
    return out


@pytest.mark.parametrize("name", ["single", "stream"])
def test_metrics(timed, corpora, traces, name):
    reports = timed(f"metrics-{name}", lambda: [build_report(t, None) for t in traces[name]])
    check_reports(reports, corpora[name].expected)
