"""The lines on stderr (`render/diagnostics.py`): skipped lines counted under their file, the one-line
error of a failed trace."""

from __future__ import annotations

import shutil

from contexttrace import analyze

from ..conftest import FUZZ


def test_skipped_lines_are_counted_under_the_file_they_are_in(tmp_path):
    """The "N more line(s) skipped" note names the subagent file whose lines were skipped, not the session."""
    from contexttrace.render.diagnostics import render_diagnostics

    folder = tmp_path / "proj"
    shutil.copytree(FUZZ / "13-flat-agent-file-sessionId-after-line-20", folder)
    lines = render_diagnostics(analyze([str(folder)]))
    assert lines[-1] == f"{folder / 'agent-x1.jsonl'}: 17 more line(s) skipped (20 in all)"
    assert not any(line.startswith(str(folder / "s1.jsonl")) for line in lines)


def test_failure_line_names_file_line_and_exception_type():
    """The one-line error of an unexpected failure: path, line where known, reason, exception type."""
    from contexttrace.render.diagnostics import render_diagnostics
    from contexttrace.reports.results import RunResult, TraceFailure

    run = RunResult(failures=[TraceFailure("a.jsonl", "could not read this trace: boom", line=7, error="KeyError")])
    assert render_diagnostics(run) == ["Error: a.jsonl:7: could not read this trace: boom (KeyError)"]
