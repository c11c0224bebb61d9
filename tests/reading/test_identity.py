"""`identity.inherited_calls` (set operations over tuple keys) against its rule written out call by call.

The reference below is the rule as `identity` states it, one call key at a time: each key's owner is the
transcript trace holding it with the least (last timestamp, index); every other trace holding it loses it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.discover.local import find_traces
from contexttrace.reading import Trace
from contexttrace.reading.contract import FORMAT_TRANSCRIPT
from contexttrace.reading.identity import call_key_text, inherited_calls
from contexttrace.reading.model import KEY_COLUMNS
from contexttrace.run.work import read_source

from ..conftest import CASES, FUZZ, SAMPLES


def reference(traces: list[Trace]) -> dict[int, set[str]]:
    """`inherited_calls`' rule as its docstring states it, one call key (as text) at a time: each key belongs to
    the trace holding it with the least (last timestamp, index); every other trace holding it loses it."""
    keyed = [
        (i, t)
        for i, t in enumerate(traces)
        if t.format == FORMAT_TRANSCRIPT and t.view("calls").height and len(traces) > 1
    ]
    if len(keyed) < 2:
        return {}
    owner: dict[str, tuple[int, int]] = {}
    held = []
    for i, t in keyed:
        view = t.view("calls")
        cols = [view.get_column(c).to_list() for c in KEY_COLUMNS]
        ends = [v for v in view.get_column("end_ts_ms").to_list() if v is not None]
        last = max(ends) if ends else 2**62
        keys = {f"{m}|{a}|{b}|{c}" for m, a, b, c in zip(*cols, strict=True) if m is not None}
        held.append((i, keys))
        for key in keys:
            if key not in owner or (last, i) < owner[key]:
                owner[key] = (last, i)
    lost = {i: {k for k in keys if owner[k][1] != i} for i, keys in held}
    return {i: keys for i, keys in lost.items() if keys}


def _traces_of(folder: Path) -> list[Trace]:
    """Every trace a scan of `folder` finds (session folders with their subagent files), unreadable ones left out."""
    reads = [read_source(s) for s in find_traces([str(folder)]) if not s.orphan]
    return [t for r in reads if isinstance(r, list) for t in r]


def _shifted(trace: Trace, by: int) -> Trace:
    """`trace` with every call's last timestamp moved by `by` ms (a copy that is older or newer)."""
    assert isinstance(trace.tables["calls"], dict)  # (a trace as read: else the copies would not be shifted)
    calls = dict(trace.tables["calls"])
    calls["end_ts_ms"] = [None if v is None else v + by for v in calls["end_ts_ms"]]
    return dataclasses.replace(trace, tables={**trace.tables, "calls": calls})


@pytest.mark.parametrize("folder", [SAMPLES, CASES, FUZZ], ids=lambda p: p.name)
def test_inherited_calls_as_the_rule_on_every_sample_case_and_fuzz_file(folder):
    """Every readable file of the folder as one run, alone and with copies of its traces that are older and
    newer (so every call of theirs is copied somewhere): the same calls lost as the rule gives, and some."""
    traces = _traces_of(folder)
    assert traces
    copies = [_shifted(t, -1) for t in traces] + [_shifted(t, +1) for t in traces]
    mixed = [x for pair in zip(traces, copies, strict=False) for x in pair] + copies[len(traces) :]
    for run in (traces, traces + copies, mixed, [*traces, *traces]):
        assert inherited_calls(run) == reference(run)
    if any(t.format == FORMAT_TRANSCRIPT and t.view("calls").height for t in traces):
        assert inherited_calls(traces + copies)  # copies of transcripts lose calls


def _trace(format_: str, rows: list[tuple[str | None, int | None, int | None, int | None, int | None]]) -> Trace:
    mids, inp, cw, cr, ends = (list(c) for c in zip(*rows, strict=True)) if rows else ([], [], [], [], [])
    calls = dict(zip(KEY_COLUMNS, (mids, inp, cw, cr), strict=True))
    return Trace("t", "t.jsonl", format_, None, tables={"calls": {**calls, "end_ts_ms": ends}})


_ROW = st.tuples(
    st.sampled_from(["m1", "m2", "m3", "m|1", None]),
    st.sampled_from([0, 1, 2, None]),
    st.sampled_from([0, 5, None]),
    st.sampled_from([0, 7]),
    st.one_of(st.none(), st.integers(0, 3)),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([FORMAT_TRANSCRIPT, FORMAT_TRANSCRIPT, "stream-json"]), st.lists(_ROW, max_size=6)),
        max_size=6,
    )
)
def test_inherited_calls_as_the_rule_on_random_runs(spec):
    """Random runs over a few ids, counts and timestamps (ties, unknown ends, ids without calls): as the rule."""
    traces = [_trace(f, rows) for f, rows in spec]
    assert inherited_calls(traces) == reference(traces)


def test_a_copied_call_goes_to_the_earliest_trace():
    """Known answer: the trace that ends first keeps a call both hold; a tie goes to the first argument."""
    older = _trace(FORMAT_TRANSCRIPT, [("m1", 1, 0, 0, 5), ("m2", 1, 0, 0, 6)])
    newer = _trace(FORMAT_TRANSCRIPT, [("m1", 1, 0, 0, 9), ("m3", 2, 0, 0, 10)])
    assert inherited_calls([newer, older]) == {0: {call_key_text("m1", 1, 0, 0)}} == {0: {"m1|1|0|0"}}
    assert inherited_calls([older, older]) == {1: {"m1|1|0|0", "m2|1|0|0"}}
