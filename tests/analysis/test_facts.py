"""The facts of a trace: the names a label and a project are read from."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from contexttrace import read_trace
from contexttrace.analysis import facts
from contexttrace.analysis.facts import trace_facts


@given(st.lists(st.sampled_from(["a", "app", "", "/", "\\", "C:", "é"]), max_size=6))
def test_the_last_part_of_a_cwd_is_its_last_named_folder(parts: list[str]) -> None:
    """A working directory written on any system: its last non-empty part, split at both separators."""
    cwd = "".join(parts)
    named = [p for p in re.split(r"[\\/]", cwd) if p]
    assert facts._last_part(cwd) == (named[-1] if named else None)


def test_the_labels_of_the_sample_traces(sample_reports) -> None:
    """What a person sees: a session transcript is labelled `<project>/<session id's first 8>`, a stream-json
    run by its file name and run; the same facts when read again."""
    labels = {name: r.facts["label"] for name, r in sample_reports.items()}
    assert labels["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"] == "spotter-dov/4d5611e5"
    assert labels["b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"] == "claude_p/29ccd257"
    assert labels["a-ralph-27runs-with-separators.jsonl#2"] == "a-ralph-27runs-with-separators.jsonl#2"
    assert labels["b-ccl-thinking-sonnet45.jsonl"] == "b-ccl-thinking-sonnet45.jsonl"
    report = sample_reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    [trace] = read_trace(report.path)
    assert trace_facts(trace) == report.facts
