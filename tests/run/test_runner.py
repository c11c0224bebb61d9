"""Running the reader over many traces (`run/runner.py`): one trace's failure is that trace's alone,
files without a model call are left out and counted, `analyze` takes a list of paths."""

from __future__ import annotations

import pytest

from contexttrace import analyze
from contexttrace.reports.trace import build_report

from ..conftest import BAD, CASES, GOOD, assistant, jsonl


def test_an_unexpected_exception_fails_one_trace_only(monkeypatch):
    """Any exception while reporting one trace becomes that trace's failure (its type named); the others
    are reported in full, and `analyze` returns."""
    import contexttrace.run.runner as runner

    def build(trace, window):
        if "thinking" in trace.name:
            raise ZeroDivisionError("boom")
        return build_report(trace, window)

    bad = str(CASES / "B01.jsonl")
    run = runner.analyze([GOOD, bad], build=build)
    assert [r.trace for r in run.reports] == [bad]
    [failure] = run.failures
    assert (failure.path, failure.error) == (GOOD, "ZeroDivisionError")
    assert "boom" in failure.message and failure.message.endswith("(ZeroDivisionError)")


def test_analyze_refuses_one_string():
    """`analyze("run.jsonl")` would read each character as a path (and "/" the whole file system)."""
    with pytest.raises(TypeError, match="list of paths"):
        analyze(GOOD)  # type: ignore[arg-type]


def test_reader_summary_only_left_out_of_directory_scan(tmp_path):
    """In a directory scan a file with no model call is left out and counted."""
    (tmp_path / "a.jsonl").write_bytes((BAD / "summary_only.jsonl").read_bytes())
    (tmp_path / "b.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    run = analyze([str(tmp_path)])
    assert [r.trace for r in run.reports] == [str(tmp_path / "b.jsonl")]
    assert run.left_out == 1


def test_directory_scan_reports_unreadable_files_and_skips_empty_ones(tmp_path):
    """A binary .jsonl found by a directory scan is a failure (exit 1); an empty one is only left out."""
    (tmp_path / "good.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    (tmp_path / "bin.jsonl").write_bytes((BAD / "binary.jsonl").read_bytes())
    (tmp_path / "empty.jsonl").write_bytes(b"")
    run = analyze([str(tmp_path)])
    assert [r.trace for r in run.reports] == [str(tmp_path / "good.jsonl")]
    assert [(f.path, f.reason) for f in run.failures] == [
        (str(tmp_path / "bin.jsonl"), "binary file (NUL bytes), not a JSONL trace")
    ]
    assert run.left_out == 1
