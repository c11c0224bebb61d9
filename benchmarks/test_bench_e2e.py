"""End to end: `contexttrace context trace --json` in this process over each corpus, and the baseline.

The baseline (`orjson.loads` on every line of the same files, one process) runs in the same session, so
the ratios in the summary compare like with like. `half` is the directory corpus's `-work-A` project,
about half its bytes: time(directory) / time(half) is the scaling figure.
"""

from __future__ import annotations

import pytest
from conftest import FIGURES, check_reports, cli_reports, orjson_baseline

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
    reports = timed(f"e2e-{name}", cli_reports, ["context", "trace", *corpus.paths, "--json"])
    check_reports(reports, corpus.expected)
