"""`context files` over the directory corpus, and its paired ratio to `context trace` (issue 13: at most
1.3, asserted under `--bench-enforce`)."""

from __future__ import annotations

import statistics
import time

import pytest
from conftest import FIGURES, PAIRED, cli_reports, run_cli

#: Issue 13: `context files` over the directory costs at most this many times `context trace`.
FILES_OVER_TRACE_LIMIT = 1.3


def test_command_files(timed, corpora):
    corpus = corpora["directory"]
    out = timed("e2e-files-directory", run_cli, ["context", "files", *corpus.paths, "--json", "--no-cache"])
    assert out.strip().startswith("[")


def test_files_over_trace(corpora, rounds, benchmark_enabled, pytestconfig):
    """`context files --json` against `context trace --json` over the directory, in paired rounds (each
    order in turn): the median ratio; every files object's rows add up (reads + writes + failed = touches)."""
    corpus = corpora["directory"]
    commands = {name: ["context", name, *corpus.paths, "--json", "--no-cache"] for name in ("trace", "files")}
    ratios = []
    for k in range(rounds if benchmark_enabled else 1):
        times = {}
        for name in ("trace", "files") if k % 2 == 0 else ("files", "trace"):
            start = time.perf_counter()
            reports = cli_reports(commands[name])
            times[name] = time.perf_counter() - start
            assert len(reports) == len(corpus.expected)
            if name == "files":
                rows = [f for r in reports for f in r["files"]]
                assert rows and all(f["reads"] + f["writes"] + f["failed"] == f["touches"] for f in rows)
        ratios.append(times["files"] / times["trace"])
    if not benchmark_enabled:
        pytest.skip("timed only in a timed run")
    PAIRED["files-over-trace"] = statistics.median(ratios)
    FIGURES["paired-files-over-trace"] = [round(r, 3) for r in ratios]
    if pytestconfig.getoption("--bench-enforce"):
        assert PAIRED["files-over-trace"] <= FILES_OVER_TRACE_LIMIT
