"""The unit of work (`run/work.py`): which builds read the calls' path words, and that reading without
them changes no report of those builds."""

from __future__ import annotations

import importlib

import orjson

from contexttrace import read_trace
from contexttrace.reading.contract import FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT
from contexttrace.reports.files import build_files
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage
from contexttrace.run.work import WORDLESS_BUILDS, reads_words
from contexttrace.select.views import build_report_with_cost

from ..conftest import SAMPLES


def test_each_wordless_build_is_named_by_its_real_path():
    """A build renamed or moved would silently read path words again: every name resolves to a function."""
    for name in WORDLESS_BUILDS:
        module, _, attr = name.rpartition(".")
        assert callable(getattr(importlib.import_module(module), attr))
    assert not reads_words(build_report) and not reads_words(build_usage)
    assert not reads_words(build_report_with_cost)
    assert reads_words(build_files) and reads_words(None) and reads_words(lambda t, w: None)


def test_trace_and_usage_reports_are_the_same_read_without_path_words():
    """Every sample's `context trace` and `context usage` reports (JSON, with calls) are the same whether
        the calls' path words were read or not; without them the column is null, and a sample's calls name
        files in their text (so the column was filled the other way). Claude Code's reader only: the others
    always read them."""
    named = 0
    for path in sorted(SAMPLES.glob("*.jsonl")):
        full, bare = read_trace(str(path)), read_trace(str(path), words=False)
        assert len(full) == len(bare)
        for a, b in zip(full, bare, strict=True):
            if a.format in (FORMAT_TRANSCRIPT, FORMAT_STREAM_JSON):  # (Codex's and Gemini's readers keep them)
                named += sum(w is not None for w in a.tables["calls"]["path_words"])
                assert set(b.tables["calls"]["path_words"]) <= {None}
            assert orjson.dumps(build_report(a).to_dict(True)) == orjson.dumps(build_report(b).to_dict(True))
            assert orjson.dumps(build_usage(a).to_dict()) == orjson.dumps(build_usage(b).to_dict())
    assert named > 100
