"""`context sources` over the directory corpus, and its paired ratio to `context trace` (issue 12: at most
1.3, asserted under `--bench-enforce`)."""

from __future__ import annotations

import statistics
import time

import pytest
from conftest import FIGURES, PAIRED, cli_reports, run_cli

#: Issue 12: `context sources` over the directory costs at most this many times `context trace`.
SOURCES_OVER_TRACE_LIMIT = 1.3


def test_command_sources(timed, corpora):
    corpus = corpora["directory"]
    out = timed("e2e-sources-directory", run_cli, ["context", "sources", *corpus.paths, "--json", "--no-cache"])
    assert out.strip().startswith("[")


def test_sources_over_trace(corpora, rounds, benchmark_enabled, pytestconfig):
    """`context sources --json` against `context trace --json` over the directory, in paired rounds (each
    order in turn): the median ratio; every sources object's rows sum to its size."""
    corpus = corpora["directory"]
    commands = {name: ["context", name, *corpus.paths, "--json", "--no-cache"] for name in ("trace", "sources")}
    ratios = []
    for k in range(rounds if benchmark_enabled else 1):
        times = {}
        for name in ("trace", "sources") if k % 2 == 0 else ("sources", "trace"):
            start = time.perf_counter()
            reports = cli_reports(commands[name])
            times[name] = time.perf_counter() - start
            assert len(reports) == len(corpus.expected)
            if name == "sources":
                assert all(sum(s["tokens"] for s in r["sources"]) == (r["context_tokens"] or 0) for r in reports)
        ratios.append(times["sources"] / times["trace"])
    if not benchmark_enabled:
        pytest.skip("timed only in a timed run")
    PAIRED["sources-over-trace"] = statistics.median(ratios)
    FIGURES["paired-sources-over-trace"] = [round(r, 3) for r in ratios]
    if pytestconfig.getoption("--bench-enforce"):
        assert PAIRED["sources-over-trace"] <= SOURCES_OVER_TRACE_LIMIT
