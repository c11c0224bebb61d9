"""Reading to frames: `reader.read_trace` on the single big transcript and on the many-run stream file."""

from __future__ import annotations

from contexttrace.analysis import metrics
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace


def _read_all(paths: list[str]):
    return [t for s in find_traces(paths) for t in read_trace(s.path, s.subagents)]


def _check_frames(traces, corpus) -> None:
    want = corpus.by_trace()
    assert sorted(t.name for t in traces) == sorted(want)
    for t in traces:
        e = want[t.name]
        counts = metrics.thread_call_counts(t.calls)
        assert counts["calls"] == e.calls
        assert counts["subagent_calls"] == e.subagent_calls
        assert counts["compaction_calls"] == e.compaction_calls
        assert metrics.prompt_series(t.calls)[:1] == ([e.first] if e.calls else [])
        assert t.truncated_last_line == e.truncated_last_line
        assert t.skipped_lines == e.skipped_lines


def test_read_single(timed, corpora):
    corpus = corpora["single"]
    traces = timed("read-single", _read_all, corpus.paths)
    _check_frames(traces, corpus)


def test_read_stream(timed, corpora):
    corpus = corpora["stream"]
    traces = timed("read-stream", _read_all, corpus.paths)
    _check_frames(traces, corpus)
