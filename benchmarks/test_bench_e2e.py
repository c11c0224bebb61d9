"""End to end: `contexttrace context trace --json` in this process over each corpus, and the baseline.

The baseline (`orjson.loads` on every line of the same files, one process) runs in the same session, so
the ratios in the summary compare like with like. `half` is the directory corpus's `-work-A` project,
about half its bytes: time(directory) / time(half) is the scaling figure.
"""

from __future__ import annotations

import statistics
import time

import pytest
from conftest import FIGURES, PAIRED, check_reports, cli_reports, orjson_baseline

CORPORA = ["directory", "half", "stream", "single"]


@pytest.mark.parametrize("name", CORPORA)
def test_baseline(timed, corpora, name):
    corpus = corpora[name]
    FIGURES[f"bytes-{name}"] = corpus.bytes
    lines = timed(f"baseline-{name}", orjson_baseline, corpus.files)
    assert lines > 0


@pytest.mark.parametrize("name", CORPORA)
def test_context_trace(timed, corpora, name):
    corpus = corpora[name]
    reports = timed(f"e2e-{name}", cli_reports, ["context", "trace", *corpus.paths, "--json", "--no-cache"])
    check_reports(reports, corpus.expected)


@pytest.mark.parametrize("name", ["directory", "single"])
def test_paired(corpora, rounds, benchmark_enabled, name):
    """The targets' ratios measured pair by pair: each round times the baseline and `context trace --json`
    back to back (in alternating order), so both see the same machine; the figure is the median of the
    per-round ratios. On this shared VM the baseline alone moved by 40 % between runs, which
    medians taken minutes apart turn into ratio noise."""
    corpus = corpora[name]
    args = ["context", "trace", *corpus.paths, "--json", "--no-cache"]
    ratios = []
    for k in range(rounds if benchmark_enabled else 1):
        times = {}
        for which in ("base", "ours") if k % 2 == 0 else ("ours", "base"):
            start = time.perf_counter()
            if which == "base":
                orjson_baseline(corpus.files)
            else:
                reports = cli_reports(args)
            times[which] = time.perf_counter() - start
        ratios.append(times["ours"] / times["base"])
    check_reports(reports, corpus.expected)
    if benchmark_enabled:
        PAIRED[name] = statistics.median(ratios)
        FIGURES[f"paired-ratios-{name}"] = [round(r, 3) for r in ratios]
