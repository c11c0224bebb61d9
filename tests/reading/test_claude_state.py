"""The builder's state (`reading/claude/state.py`): every field of every state class is merged or named as
not merged, so a file read in two parts cannot forget one (reading/test_claude_split.py checks the
results); timestamps read into epoch milliseconds; rows kept in file order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contexttrace import analyze, read_trace
from contexttrace.reading.claude.builder import Builder
from contexttrace.reading.claude.calls import Calls
from contexttrace.reading.claude.dialects import Evidence, Threads
from contexttrace.reading.claude.state import (
    RESULT_ROW,
    USE_ROW,
    Diagnostics,
    Events,
    Facts,
    Seen,
    Stamps,
    ToolResults,
    ToolUses,
    epoch_ms,
)
from contexttrace.reading.contract import CALL_SCHEMA, EVENT_SCHEMA
from contexttrace.reading.model import LineNote

from ..conftest import FUZZ, assistant, report_of, trace_and_report

_CALL_ROW = [1, 1, "f", "m1", None, "main", "main", "x", 1, 2, 3, 4, 6, 0, 0, False, 0, None, None, None, None, None, 1,
             False, 0, 0, "a/b.py", 0, 0, 0, 0, 0, 0]  # fmt: skip


def _filled(cls: type) -> Any:
    """An instance of a state class whose every field holds something (not its default)."""
    obj = cls()
    for name in cls.__slots__:
        value = getattr(obj, name)
        if isinstance(value, bool):
            setattr(obj, name, not value)
        elif isinstance(value, int):
            setattr(obj, name, value + 5)
        elif value is None:
            setattr(obj, name, {"surface": {"tools": 1}, "result": {"subtype": "success"}}.get(name, "x"))
    special = {
        Seen: {"uuids": {"u"}},
        Diagnostics: {
            "notes": [LineNote("f", 1, "r")],
            "notes_per_file": {"f": 1},
            "warnings": ["w"],
            "odd_stamps": {"0001-01-01T00:00:00+14:00": ("f", 1)},
        },
        Facts: {"denied_ids": {"t"}, "files": ["f", "g"], "agents": {"a": {}}},
        Evidence: {"foreign": {"Codex CLI rollout": 1}},
        Threads: {"chains": {"u": "sidechain-u"}, "chain_roots": {"sidechain-u": "p"}},
        ToolUses: {"rows": [(1, 1, "t1", "m1", 0, *([None] * (len(USE_ROW) - 5)))], "ids": {"t1"}},
        ToolResults: {
            "rows": [(1, 1, "t1", "main", *([None] * (len(RESULT_ROW) - 4)))],
            "ids": {"t1"},
            "cleared": {"t1": 1},
        },
        Events: {"rows": [(1, 1, "main", *([None] * (len(EVENT_SCHEMA) - 3)))]},
        Stamps: {"stamps": ["2026-01-01T00:00:00Z"], "ms": {"2026-01-01T00:00:00Z": 0}},
        Calls: {},
    }[cls]
    for name, value in special.items():
        setattr(obj, name, value)
    if cls is Calls:
        obj.add(("m1", 1, 2, 3), list(_CALL_ROW), 1)
        obj.clashing_ids = {"m0"}
    return obj


def _merge(head: Any, tail: Any) -> None:
    cls = type(head)
    if cls is Diagnostics:
        head.merge(tail, "f", 10, 0)
    elif cls is Facts:
        head.merge(tail, True)
    elif cls is Calls:
        head.merge(tail, 0, 10, 1, {}, None)
    elif cls is ToolUses:
        head.merge(tail, 0, 10, 1, [0])
    elif cls in (ToolResults, Events):
        head.merge(tail, 0, 10, 1, {})
    else:
        head.merge(tail)


STATES = [Seen, Diagnostics, Facts, Evidence, Threads, ToolUses, ToolResults, Events, Stamps, Calls]


@pytest.mark.parametrize("cls", STATES, ids=lambda c: c.__name__)
def test_every_field_is_merged_or_named_not_merged(cls):
    """Merging a tail whose every field holds something changes every field of an empty head, but those
    the class names in `NOT_MERGED` (each with its reason in the class)."""
    head, tail = cls(), _filled(cls)
    _merge(head, tail)
    fresh = cls()
    not_merged = getattr(cls, "NOT_MERGED", frozenset())
    for name in cls.__slots__:
        if name in not_merged:
            assert getattr(head, name) == getattr(fresh, name), name
        elif not (cls is Calls and name in ("at", "key_of_id", "placeholder_of_id")):  # indexes, rebuilt with the rows
            assert getattr(head, name) != getattr(fresh, name), f"{cls.__name__}.{name} is not merged"


def test_the_builder_holds_only_merged_state():
    """The builder's own fields are the states above and its reading context (named here); a new field
    needs its merge in `Builder.merge_tail`."""
    state_types = set(STATES)
    builder = Builder("f", "f")
    own = {name for name, value in builder.__dict__.items() if type(value) not in state_types}
    assert own == {"name", "path", "seq", "prev_ts", "text_hash", "words", "inputs"}
    assert {type(v) for v in builder.__dict__.values()} >= state_types


def test_a_call_row_has_every_column_the_builder_fills():
    """Rows made by the builder are `CALL_SCHEMA` less the columns `build` adds."""
    from contexttrace.reading.claude.builder import CALL_ROW
    from contexttrace.reading.claude.calls import BUILT_COLUMNS

    assert len(_CALL_ROW) == len(CALL_ROW) == len(CALL_SCHEMA) - len(BUILT_COLUMNS)


def test_b25_series_keeps_file_order_not_timestamp_order(write):
    """B25: three calls with identical timestamps and one line with none stay in file order."""
    lines = []
    for i, cr in enumerate((300, 100, 200)):
        rec = assistant(f"m{i}", 0, 0, cr)
        rec["timestamp"] = "2026-01-24T04:08:00.000Z"
        lines.append(rec)
    lines.insert(1, {"type": "permission-mode", "permissionMode": "default", "sessionId": "s25"})
    trace, rep = trace_and_report(write("t.jsonl", *lines))
    assert rep.prompt_tokens == [300, 100, 200]
    assert trace.calls["ts_ms"].to_list() == [1769227680000] * 3


def plain_epoch_ms(value: str) -> int | None:
    """`epoch_ms` of one timestamp as first written: a timedelta floor-divided by one millisecond; None
    outside the moments every report can show (0001-01-02 to 9999-12-30 UTC)."""
    try:
        if len(value) <= 10:
            raise ValueError
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    first = datetime(1, 1, 2, tzinfo=UTC)
    last = datetime(9999, 12, 31, tzinfo=UTC) - timedelta(milliseconds=1)
    return ms if first <= moment <= last else None


_OFFSETS = st.integers(-23 * 60, 23 * 60).map(lambda minutes: timezone(timedelta(minutes=minutes)))


_ZONES = st.one_of(st.none(), st.just(UTC), _OFFSETS)


@given(st.datetimes(timezones=_ZONES), st.sampled_from(["auto", "milliseconds", "microseconds", "seconds"]))
def test_epoch_ms_equals_plain_floor_division(moment: datetime, spec: str) -> None:
    """Timestamps before and after 1970, with and without an offset, at every precision: the same floor."""
    value = moment.isoformat(timespec=spec)
    assert epoch_ms([value]) == {None: None, value: plain_epoch_ms(value)}
    zulu = value.replace("+00:00", "Z")
    assert epoch_ms([zulu])[zulu] == plain_epoch_ms(zulu)


@pytest.mark.parametrize(
    ("stamp", "ms"),
    [
        ("0001-01-01T00:00:00+14:00", None),  # year 0 in UTC
        ("9999-12-31T23:59:59-14:00", None),  # year 10000 in UTC
        ("0001-01-01T23:59:59.999Z", None),  # a moment a display zone west of UTC puts in year 0
        ("0001-01-02T00:00:00Z", -62_135_510_400_000),
        ("9999-12-30T23:59:59.999Z", 253_402_214_399_999),
        ("9999-12-31T00:00:00Z", None),
    ],
)
def test_a_stamp_that_names_no_moment_is_unknown(stamp: str, ms: int | None) -> None:
    """fuzz 14, 14b: a stamp outside the moments every report can show in any zone is unknown (None), in the
    Claude reader and in the one the other readers share (`values.epoch_ms`)."""
    from contexttrace.reading.values import epoch_ms as one_epoch_ms

    assert epoch_ms([stamp])[stamp] == ms
    assert one_epoch_ms(stamp) == ms


@pytest.mark.parametrize(
    ("name", "line"),
    [("14-timestamp-year-0.jsonl", 5), ("14b-turn-duration-year-10000.jsonl", 6)],
)
def test_fuzz_14_stamp_naming_no_moment_costs_its_value_with_a_warning_naming_the_line(name: str, line: int):
    """fuzz 14, 14b: one line stamped in year 0 (or 10000) in UTC: the trace reports (its calls all read),
    the stamp is no timestamp, and a warning names the first line writing it."""
    path = FUZZ / name
    rep = report_of(path)
    assert rep.calls == 3
    said = (
        "1 timestamp(s) name no moment every time zone can show (a date outside 0001-01-02 to 9999-12-30, UTC), "
        "read as unknown; the first at"
    )
    assert f"{said} {path}:{line}" in rep.warnings
    [trace] = read_trace(str(path))
    assert all(-62_135_510_400_000 <= ms <= 253_402_214_399_999 for ms in trace.timestamps_ms)


def test_fuzz_15_subagent_stamp_naming_no_moment_never_drops_the_session():
    """fuzz 15: the same stamp in a subagent file costs that value: the session reports with both its main
    calls and its subagent's, and the warning names the subagent file's line."""
    folder = FUZZ / "15-subagent-bad-timestamp-drops-session"
    run = analyze([str(folder)])
    assert run.failures == []
    [rep] = run.reports
    assert (rep.calls, rep.subagent_calls) == (2, 10)
    agent = folder / "29ccd257-68b1-427f-ae5f-6524b7cb6f20" / "subagents" / "agent-a2271d1.jsonl"
    assert any(w.endswith(f"the first at {agent}:4") for w in rep.warnings)


def test_a_moment_is_warned_only_where_it_is_read(write):
    """A stamp that is text (no date) is no timestamp and no warning, as before; a date naming no moment on
    a line whose stamp is read is warned once for each distinct stamp, by its first line."""
    bad = "0001-01-01T00:00:00+14:00"
    lines = [
        assistant("m1", 1, 2, 3, timestamp="soon"),
        assistant("m2", 1, 2, 4, timestamp=bad),
        assistant("m3", 1, 2, 5, timestamp=bad),
        assistant("m4", 1, 2, 6, timestamp="2026-01-01T00:00:00Z"),
    ]
    trace, rep = trace_and_report(write("t.jsonl", *lines))
    assert trace.calls["ts_ms"].to_list() == [None, None, None, 1_767_225_600_000]
    assert [w for w in rep.warnings if "no moment" in w] == [
        "1 timestamp(s) name no moment every time zone can show (a date outside 0001-01-02 to 9999-12-30, UTC), "
        f"read as unknown; the first at "
        f"{trace.path}:2"
    ]
