"""`read_trace` on files that are no trace, or only partly one: what it returns, what it raises, never
anything else."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace import read_trace
from contexttrace.errors import ContextTraceError, EmptyTraceError, TraceFormatError, TraceReadError
from contexttrace.reports.trace import build_report

from ..conftest import BAD, CASES


def test_reader_non_object_lines_are_skipped_and_named():
    """Arrays, numbers and strings are JSON but not records: 3 skipped, named with their line numbers."""
    [t] = read_trace(str(BAD / "non_object_lines.jsonl"))
    assert t.calls.height == 2
    assert t.skipped_lines == 3
    assert [(n.line, n.reason) for n in t.line_notes] == [
        (2, "not a JSON object (list)"),
        (3, "not a JSON object (int)"),
        (4, "not a JSON object (str)"),
    ]


def test_reader_not_json_lines_skipped_and_at_most_three_named():
    """Four noise lines: all counted, the first three named."""
    [t] = read_trace(str(BAD / "not_json_lines.jsonl"))
    assert t.calls.height == 2
    assert t.skipped_lines == 4
    assert [n.line for n in t.line_notes] == [1, 3, 4]


@pytest.mark.parametrize(
    ("name", "error"),
    [
        pytest.param("empty.jsonl", EmptyTraceError, id="empty"),
        pytest.param("blank_lines.jsonl", EmptyTraceError, id="blank-lines"),
        pytest.param("binary.jsonl", TraceReadError, id="binary"),
        pytest.param("no_known_records.jsonl", TraceFormatError, id="no-known-records"),
        pytest.param("does-not-exist.jsonl", TraceReadError, id="missing"),
    ],
)
def test_reader_unreadable_files_raise_with_path(name, error):
    """Files that are no trace raise a ContextTraceError naming the file."""
    with pytest.raises(error) as info:
        read_trace(str(BAD / name))
    assert info.value.path.endswith(name)
    assert name in str(info.value)


def test_reader_summary_only_file_is_a_zero_trace_when_named():
    """A transcript with only a summary line reads as a trace with no call."""
    [t] = read_trace(str(BAD / "summary_only.jsonl"))
    assert t.format == "transcript"
    assert t.calls.height == 0
    rep = build_report(t)
    assert (rep.calls, rep.first, rep.peak, rep.growth) == (0, 0, 0, 0)


@given(st.lists(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)), max_size=8))
def test_reader_never_fails_otherwise(lines):
    """On arbitrary lines the reader returns traces or raises a ContextTraceError, never anything else."""
    data = b"\n".join(line.replace(b"\n", b" ") for line in lines)
    try:
        traces = read_trace("mem.jsonl", fh=io.BytesIO(data))
    except ContextTraceError:
        return
    for t in traces:
        rep = build_report(t)
        assert rep.peak >= rep.first >= 0
        assert rep.growth == rep.peak - rep.first


def test_read_trace_takes_a_path_object():
    """A notebook user passes a `pathlib.Path`: same trace as the string, frames build."""
    [trace] = read_trace(CASES / "B01.jsonl")
    assert (trace.name, trace.calls.height) == (str(CASES / "B01.jsonl"), 1)
