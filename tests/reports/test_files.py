"""contexttrace.reports.files (`context files`): every rule on a hand-built trace, spec 003's formula and
its DROP-unreachable property, and every bundled sample."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from functools import partial

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from contexttrace.analysis.placement import file_of_tool_use
from contexttrace.cli.app import app
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace
from contexttrace.reading.text import path_words
from contexttrace.render.files import files_panel_of, render_files_json, render_files_table
from contexttrace.reports.files import (
    DROP,
    DROPPED,
    At,
    build_files,
    parse_at,
    relevance,
    relevance_level,
)
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.run.runner import analyze

from ..conftest import ROOT, SAMPLES, assert_keys_documented, assistant, json_keys, result

CWD = "/p"
T0 = 1_770_000_000_000  # Unix epoch ms of minute 0
MINUTE = 60_000


def _iso(minute: float) -> str:
    return datetime.fromtimestamp((T0 + minute * MINUTE) / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _call(mid, minute, tools=(), text=None, prompt=1000, cwd=CWD):
    """A main-thread call at `minute`, with its tool uses and, first, a text block."""
    rec = assistant(mid, 0, 0, prompt, tools=tools, timestamp=_iso(minute), cwd=cwd)
    if text is not None:
        rec["message"]["content"].insert(0, {"type": "text", "text": text})
    return rec


def _res(tid, minute, content="x" * 400, **extra):
    return result(tid, content, timestamp=_iso(minute), **{"cwd": CWD, **extra})


def _system(subtype, minute, **extra):
    return {"type": "system", "subtype": subtype, "sessionId": "s", "timestamp": _iso(minute), **extra}


def _compaction(minute):
    return _system("compact_boundary", minute, compactMetadata={"trigger": "auto", "preTokens": 1000})


def _micro(minute, ids):
    return _system("microcompact_boundary", minute, microcompactMetadata={"compactedToolIds": ids})


def _ide_edit(path, minute):
    return {"type": "attachment", "sessionId": "s", "timestamp": _iso(minute),
            "attachment": {"type": "edited_text_file", "filename": path, "snippet": "x"}}  # fmt: skip


def _read(tid, path, **more):
    return (tid, "Read", {"file_path": path, **more})


def _files(write, *records, at=None, name="t.jsonl"):
    return build_files(read_trace(write(name, *records))[0], at=at)


def _row(report, path):
    (row,) = [r for r in report.rows if r["path"] == path]
    return row


# -- spec 003's formula ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("minutes", "refs", "score", "level"),
    [
        # age 0: exp(0) = 1, the boost only pushes it past 1: min(1, ...) = 1
        pytest.param(0, 1, 1.0, "HIGH", id="0min-1ref"),
        pytest.param(0, 2, 1.0, "HIGH", id="0min-2refs"),
        pytest.param(0, 5, 1.0, "HIGH", id="0min-5refs"),
        # 20 min: exp(-0.693) = 0.500074; + 0.3 ln 2 = 0.207944 / 0.3 ln 3 = 0.329584 / 0.3 ln 6 = 0.537528
        pytest.param(20, 1, 0.708018, "HIGH", id="20min-1ref"),
        pytest.param(20, 2, 0.829658, "HIGH", id="20min-2refs"),
        pytest.param(20, 5, 1.0, "HIGH", id="20min-5refs"),
        # 40 min: exp(-1.386) = 0.250074; + the same boosts
        pytest.param(40, 1, 0.458018, "MED", id="40min-1ref"),
        pytest.param(40, 2, 0.579658, "MED", id="40min-2refs"),
        pytest.param(40, 5, 0.787602, "HIGH", id="40min-5refs"),
    ],
)
def test_relevance_at_0_20_40_minutes(minutes, refs, score, level):
    """Spec 003's formula at 0, 20 and 40 minutes with 1, 2 and 5 references (values worked out above)."""
    got = relevance(minutes * MINUTE, refs)
    assert got == pytest.approx(score, abs=1e-6)
    assert relevance_level(got) == level


@pytest.mark.parametrize(
    ("score", "level"),
    [(1.0, "HIGH"), (0.7, "HIGH"), (0.6999, "MED"), (0.4, "MED"), (0.3999, "LOW"), (0.15, "LOW"), (0.1499, DROP)],
)
def test_levels_at_their_edges(score, level):
    """HIGH ≥ 0.7, MED ≥ 0.4, LOW ≥ 0.15, else DROP: each edge inclusive."""
    assert relevance_level(score) == level


@given(age_ms=st.floats(min_value=0, max_value=1e15, allow_nan=False), refs=st.integers(min_value=1, max_value=10**6))
def test_a_referenced_file_never_reaches_drop_by_score(age_ms, refs):
    """One reference already adds 0.3·ln 2 ≈ 0.208 > 0.15: at any age, a referenced file is at least LOW."""
    score = relevance(age_ms, refs)
    assert score >= 0.3 * math.log(2) > 0.15
    assert relevance_level(score) != DROP


@given(age_ms=st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_an_unreferenced_file_drops_after_about_55_minutes(age_ms):
    """With no reference the score is the decay alone: DROP once exp(−0.693·age/20 min) < 0.15, i.e. after
    20·ln(1/0.15)/0.693 ≈ 54.76 minutes."""
    edge = 20 * MINUTE * math.log(1 / 0.15) / 0.693
    assert (relevance_level(relevance(age_ms, 0)) == DROP) == (age_ms > edge)


def test_parse_at():
    """--at: last, a call number from 1, an ISO time (no zone: UTC); anything else is refused."""
    assert parse_at("last") == At() and parse_at("7") == At("call", 7)
    assert parse_at("2026-02-12T16:02:25") == parse_at("2026-02-12T16:02:25+00:00") == At("time", 1770912145000)
    for bad in ("0", "soon", "-3"):
        with pytest.raises(ValueError):
            parse_at(bad)


# -- touches, reads, writes, references -----------------------------------------------------------------


def test_touches_reads_writes_tokens_and_references(write):
    """a.py: Read (400 chars: ≈100 tokens), Edit (new_string 80 chars: ≈20), Write (content 200: ≈50), a
    failed Read; b.py: one Read. References of a.py: the 4 inputs' paths, 1 in the Edit's old_string, and
    2 in the text ("/p/a.py", "a.py:3"; "notes" and "b.pyc" are not it): 7; b.py: its Read's path, "b.py"
    in the text: 2."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py"), _read("t2", "/p/b.py")]),
        _res("t1", 0),
        _res("t2", 0, "y" * 40),
        _call(
            "m2",
            1,
            [
                ("t3", "Edit", {"file_path": "/p/a.py", "old_string": "see /p/a.py", "new_string": "z" * 80}),
                ("t4", "Write", {"file_path": "/p/a.py", "content": "w" * 200}),
            ],
            text="I read /p/a.py and a.py:3, notes, b.pyc and b.py.",
        ),
        _res("t3", 1, "ok"),
        _res("t4", 1, "ok"),
        _call("m3", 2, [_read("t5", "/p/a.py")]),
        _res("t5", 2, "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
        _call("m4", 3),
    )
    a, b = _row(report, "/p/a.py"), _row(report, "/p/b.py")
    assert (a["touches"], a["reads"], a["writes"], a["failed"]) == (4, 1, 2, 1)
    assert (a["tokens_read"], a["tokens_written"]) == (100, 70)
    assert a["references"] == 7 and b["references"] == 2
    assert (a["last_seen_call"], a["last_seen_ms"]) == (3, T0 + 2 * MINUTE)
    assert (b["last_seen_call"], b["last_seen_ms"]) == (2, T0 + 1 * MINUTE)
    assert (b["touches"], b["reads"], b["tokens_read"]) == (1, 1, 10)


def test_a_bash_reader_of_two_paths_stays_in_bash(write):
    """`cat a.py b.py` reads no one file: no touch of either (b.py gets no row), but its words still
    reference a.py, which a Read touched; `cat a.py` alone is a touch and a read."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py"), ("t2", "Bash", {"command": "cat a.py b.py"})]),
        _res("t1", 0),
        _res("t2", 0),
        _call("m2", 1, [("t3", "Bash", {"command": "cat a.py"})]),
        _res("t3", 1),
        _call("m3", 2),
    )
    assert [r["path"] for r in report.rows] == ["/p/a.py"]
    a = report.rows[0]
    assert (a["touches"], a["reads"], a["references"]) == (2, 2, 3)


def test_a_relative_path_resolves_against_the_cwd(write):
    """A Read of `src/x.py` in /p and a `sed -n` of `./src/x.py` are one file, /p/src/x.py; the text's
    `src/x.py:12` and `x.py` (the end of one path only) reference it."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "src/x.py")]),
        _res("t1", 0),
        _call("m2", 1, [("t2", "Bash", {"command": "sed -n '1,5p' ./src/x.py"})], text="In `src/x.py:12`, x.py says"),
        _res("t2", 1),
        _call("m3", 2),
    )
    (row,) = report.rows
    assert row["path"] == "/p/src/x.py"
    assert (row["touches"], row["reads"], row["ranged_reads"], row["references"]) == (2, 2, 1, 4)


def test_windows_paths_are_normalised(write):
    """A Windows session (cwd C:\\w): `C:\\w\\a.py` and `c:/w/a.py` are one file, C:/w/a.py."""
    path = write(
        "w.jsonl",
        assistant(
            "m1",
            0,
            0,
            100,
            tools=[_read("t1", "C:\\w\\a.py"), ("t2", "Edit", {"file_path": "c:/w/a.py"})],
            timestamp=_iso(0),
            cwd="C:\\w",
        ),
        result("t1", "x", timestamp=_iso(0)),
        result("t2", "ok", timestamp=_iso(0)),
        assistant("m2", 0, 0, 100, timestamp=_iso(1)),
    )
    (row,) = build_files(read_trace(path)[0]).rows
    assert (row["path"], row["touches"], row["references"]) == ("C:/w/a.py", 2, 2)


def test_path_words_keep_what_could_name_a_file():
    """The reader's lean form of the text (`calls.path_words`): words with a / or a . (trailing . , and :
    dropped), nothing else; `[ ] ( ) $ # , ' =` stay inside a word (route files hold them), a bracket
    around a word is trimmed when the word is matched (`file_paths.candidates`)."""
    assert path_words("Edit `src/a.py:3` (and b.txt). Then ok: done.") == ["src/a.py:3", "b.txt)"]
    assert path_words("See app/[id]/page.tsx, routes/$id.tsx and a.py,b.py.") == [
        "app/[id]/page.tsx", "routes/$id.tsx", "a.py,b.py"]  # fmt: skip
    assert path_words("no paths here") == []


def test_the_reader_keeps_each_calls_path_words(write):
    """`calls.path_words`: the path-like words of the call's text blocks, across its lines, null without."""
    rec = _call("m1", 0, text="open a/b.py now")
    second = _call("m1", 0, text="and c.md")
    second["message"]["content"] = [{"type": "text", "text": "and c.md"}]
    t = read_trace(write("w.jsonl", rec, second, _call("m2", 1, text="nothing")))[0]
    assert t.view("calls").get_column("path_words").to_list() == ["a/b.py c.md", None]


# -- re-reads ------------------------------------------------------------------------------------------------

_RESETS = {
    "none": ([], 1),
    "edit": ([_call("mx", 1, [("tx", "Edit", {"file_path": "/p/a.py", "new_string": "n"})]), _res("tx", 1, "ok")], 0),
    "write": ([_call("mx", 1, [("tx", "Write", {"file_path": "/p/a.py", "content": "n"})]), _res("tx", 1, "ok")], 0),
    "ide-edit": ([_ide_edit("/p/a.py", 1)], 0),
    "ide-edit-of-another-file": ([_ide_edit("/p/z.py", 1)], 1),
    "modified-since-read": (
        [_call("mx", 1, [("tx", "Edit", {"file_path": "/p/a.py"})]),
         _res("tx", 1, "File has been modified since read, either by the user or by a linter.", is_error=True)],
        0,
    ),
    "compaction": ([_compaction(1)], 0),
    "microcompaction-of-its-read": ([_micro(1, ["t1"])], 0),
    "microcompaction-of-another-result": ([_call("mx", 1, [_read("tx", "/p/z.py")]), _res("tx", 1), _micro(1, ["tx"])],
                                          1),
}  # fmt: skip


@pytest.mark.parametrize("between", list(_RESETS))
def test_each_re_read_reset(write, between):
    """Two whole-file Reads of a.py are one re-read, unless between them a write, a change under the model
    (an IDE edit of it, an edit refused as "modified since read") or a boundary that removed its content."""
    records, expected = _RESETS[between]
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        *records,
        _call("m2", 2, [_read("t2", "/p/a.py")]),
        _res("t2", 2),
        _call("m3", 3),
    )
    assert _row(report, "/p/a.py")["rereads"] == expected


@pytest.mark.parametrize(
    ("second", "extra", "expected"),
    [
        pytest.param(_read("t2", "/p/a.py"), {}, 1, id="whole"),
        pytest.param(_read("t2", "/p/a.py", offset=10, limit=5), {}, 0, id="ranged-read"),
        pytest.param(_read("t2", "/p/a.py"), {"toolUseResult": {"type": "file_unchanged"}}, 0, id="file-unchanged"),
        pytest.param(("t2", "Bash", {"command": "cat /p/a.py"}), {}, 1, id="bash-cat"),
        pytest.param(("t2", "Bash", {"command": "head -n 5 a.py"}), {}, 0, id="bash-head"),
        pytest.param(("t2", "Bash", {"command": "sed -n '1,9p' a.py"}), {}, 0, id="bash-sed"),
    ],
)
def test_what_counts_as_a_re_read(write, second, extra, expected):
    """Ranged reads (offset/limit, head, tail, sed -n) and file_unchanged answers are no re-reads; a whole
    Read or a `cat` is one."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        _call("m2", 1, [second]),
        _res("t2", 1, **extra),
        _call("m3", 2),
    )
    assert _row(report, "/p/a.py")["rereads"] == expected


def test_three_whole_reads_are_two_re_reads(write):
    """Reads 1, 2, 3 of one file with nothing between: the 2nd and 3rd are re-reads."""
    tools = [[_read(f"t{i}", "/p/a.py")] for i in range(3)]
    records = [x for i, t in enumerate(tools) for x in (_call(f"m{i}", i, t), _res(f"t{i}", i))]
    report = _files(write, *records, _call("m9", 9))
    assert _row(report, "/p/a.py")["rereads"] == 2


# -- the window: in_window, DROPPED, drop events -------------------------------------------------------------


def test_a_microcompaction_that_clears_one_files_result(write):
    """a.py and b.py read at call 1; a microcompaction clears a.py's result before call 2: a.py left the
    window (DROPPED, one drop event at call 2), b.py is still in it."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py"), _read("t2", "/p/b.py")]),
        _res("t1", 0),
        _res("t2", 0),
        _micro(1, ["t1"]),
        _call("m2", 2),
    )
    a, b = _row(report, "/p/a.py"), _row(report, "/p/b.py")
    assert (a["in_window"], a["level"], a["drops"]) == (False, DROPPED, 1)
    assert (b["in_window"], b["level"], b["drops"]) == (True, "HIGH", 0)
    (drop,) = report.drop_events
    assert (drop["path"], drop["call"], drop["kind"], drop["read_again"]) == ("/p/a.py", 2, "microcompaction", False)
    assert drop["ts_ms"] == T0 + MINUTE


def test_the_last_read_decides(write):
    """a.py read whole (t1), then a part of it (t2); a microcompaction clears t2 only: the content last read
    left the window, so a.py is DROPPED at call 3, though t1's older content is still there."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        _call("m2", 1, [_read("t2", "/p/a.py", offset=5, limit=5)]),
        _res("t2", 1),
        _micro(2, ["t2"]),
        _call("m3", 3),
    )
    a = _row(report, "/p/a.py")
    assert (a["in_window"], a["level"], a["drops"]) == (False, DROPPED, 1)
    assert [(d["call"], d["kind"]) for d in report.drop_events] == [(3, "microcompaction")]


def test_a_drop_then_an_edit_then_a_re_read(write):
    """a.py read at call 1; a compaction before call 3; call 4 edits it without reading it again; call 5
    reads it, so call 6's prompt holds it again: read again at call 6, 3 calls after the drop; in the
    window at the end."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        _call("m2", 1),
        _compaction(2),
        _call("m3", 3),
        _call("m4", 4, [("t2", "Edit", {"file_path": "/p/a.py", "old_string": "o", "new_string": "n"})]),
        _res("t2", 4, "ok"),
        _call("m5", 5, [_read("t3", "/p/a.py")]),
        _res("t3", 5),
        _call("m6", 6),
    )
    (drop,) = report.drop_events
    assert drop == {
        "path": "/p/a.py",
        "call": 3,
        "ts_ms": T0 + 2 * MINUTE,
        "kind": "compaction",
        "read_again": True,
        "read_again_call": 6,
        "calls_until_read": 3,
        "edited_without_reading": True,
        "edit_call": 4,
    }
    a = _row(report, "/p/a.py")
    assert (a["in_window"], a["level"], a["drops"], a["rereads"]) == (True, "HIGH", 1, 0)
    assert [b["kind"] for b in report.boundaries] == ["compaction"]


def test_a_file_only_written_has_no_window_state(write):
    """A file never read has in_window null: its level is spec 003's, never DROPPED."""
    report = _files(
        write,
        _call("m1", 0, [("t1", "Write", {"file_path": "/p/n.py", "content": "x"})]),
        _res("t1", 0, "ok"),
        _compaction(1),
        _call("m2", 2),
    )
    (row,) = report.rows
    assert (row["in_window"], row["level"], report.drop_events) == (None, "HIGH", [])


def _timeline(write):
    """a.py read at minute 0 (call 1), b.py at minute 30 (call 2), a compaction at minute 40, call 3 at 50."""
    return write(
        "at.jsonl",
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        _call("m2", 30, [_read("t2", "/p/b.py")]),
        _res("t2", 30),
        _compaction(40),
        _call("m3", 50),
    )


def test_at_a_call_counts_only_what_came_before_it(write):
    """--at 2: call 2's prompt held a.py's read only (b.py's Read is call 2's own, its result later); the
    age is 30 minutes: exp(−0.693·1.5) + 0.3·ln 2 = 0.353632 + 0.207944 = 0.561576, MED."""
    t = read_trace(_timeline(write))[0]
    report = build_files(t, at=At("call", 2))
    (a,) = report.rows
    assert a["path"] == "/p/a.py" and a["age_ms"] == 30 * MINUTE
    assert a["relevance"] == pytest.approx(0.561576, abs=1e-6) and a["level"] == "MED"
    assert report.at == {"moment": "call", "call": 2, "ts_ms": T0 + 30 * MINUTE} and report.drop_events == []


def test_at_a_time_and_at_the_last_line(write):
    """At minute 45 both files left the window at the compaction (minute 40); at the last line (minute 50)
    too, a.py aged 50 minutes: exp(−0.693·2.5) + 0.208 = 0.176842 + 0.207944 = 0.384786 (LOW, shown
    DROPPED); a call past the last is read at the last line, with a warning."""
    t = read_trace(_timeline(write))[0]
    at45 = build_files(t, at=parse_at(_iso(45)))
    assert at45.at == {"moment": "time", "call": 2, "ts_ms": T0 + 45 * MINUTE}
    assert sorted(d["path"] for d in at45.drop_events) == ["/p/a.py", "/p/b.py"]
    last = build_files(t)
    a = _row(last, "/p/a.py")
    assert a["relevance"] == pytest.approx(0.384786, abs=1e-6) and a["level"] == DROPPED
    far = build_files(t, at=At("call", 99))
    assert far.at["moment"] == "last" and any("--at 99" in w for w in far.warnings)


def test_stream_json_has_no_relevance_but_every_count(write):
    """stream-json writes no timestamps: relevance and level are null (a warning says why), counts stay."""
    path = write(
        "s.jsonl",
        {"type": "system", "subtype": "init", "cwd": "/p", "session_id": "s"},
        assistant("m1", 0, 0, 100, tools=[_read("t1", "a.py")], parent=""),
        result("t1", "x" * 40, stream=True),
        assistant("m2", 0, 0, 100, parent=""),
    )
    (report,) = analyze([path], build=partial(build_files, at=parse_at("2026-01-01T00:00:00"))).reports
    (row,) = report.rows
    assert (row["path"], row["touches"], row["relevance"], row["level"], row["in_window"]) == (
        "/p/a.py", 1, None, None, True)  # fmt: skip
    assert not report.relevance_known and any("no timestamps" in w for w in report.warnings)


def test_a_trace_with_no_calls_or_files(write):
    """No calls, no tool uses: no rows, no drop events, no crash."""
    path = write("e.jsonl", {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}})
    report = build_files(read_trace(path)[0], at=At("call", 3))
    assert (report.rows, report.drop_events, report.at["moment"]) == ([], [], "last")
    assert files_panel_of(build_files(read_trace(path)[0])) is None


def test_subagent_touches_are_counted_apart(write):
    """A sidechain's Read is no row (its own window) but is counted in subagent_touches."""
    report = _files(
        write,
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        assistant("s1", 0, 0, 10, tools=[_read("t2", "/p/b.py")], sidechain=True, timestamp=_iso(1)),
        _res("t2", 1, isSidechain=True),
        _call("m2", 2),
    )
    assert [r["path"] for r in report.rows] == ["/p/a.py"] and report.subagent_touches == 1


# -- the bundled samples -------------------------------------------------------------------------------------


def _sample_paths():
    return sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())


@pytest.mark.parametrize("path", _sample_paths())
def test_every_sample_runs(path):
    """Each sample gives rows whose counts add up, sorted by relevance, and both renderings."""
    run = analyze([path], build=build_files)
    assert run.ok and run.reports
    assert render_files_table(run)
    for report in run.reports:
        for row in report.rows:
            assert row["reads"] + row["writes"] + row["failed"] == row["touches"] > 0
            assert row["ranged_reads"] + row["unchanged_reads"] <= row["reads"]
            assert row["rereads"] < max(row["reads"], 1)
            assert row["references"] >= 1  # every touch's input names its path
            assert (row["level"] == DROPPED) == (row["in_window"] is False)
        for lost in (False, True):  # the DROPPED rows after the others, each group by relevance
            scores = [
                r["relevance"] for r in report.rows if r["relevance"] is not None and (r["level"] == DROPPED) == lost
            ]
            assert scores == sorted(scores, reverse=True)
        levels = [r["level"] == DROPPED for r in report.rows]
        assert levels == sorted(levels)
    assert orjson.loads(render_files_json(run))


#: Per sample: (traces, files, Σ touches, Σ re-reads, Σ references, drop events, subagent touches).
SAMPLE_FIGURES = {
    "a-ralph-27runs-with-separators.jsonl": (27, 83, 92, 1, 136, 0, 0),
    "a-ralph-subagent-opus45-haiku45.jsonl": (2, 16, 40, 1, 152, 0, 13),
    "b-ccl-agent-teams-opus47": (1, 0, 0, 0, 0, 0, 23),
    "b-ccl-flat-agent-files-v2037": (1, 3, 32, 0, 93, 0, 6),
    # 175: 4 words of tool inputs (`tokenizer.js` in a commit message and an Edit of index.html) on lines whose
    # cwd is /…/online-llm-tokenizer resolve against it (before the per-line cwd: 171)
    "b-ccl-image-and-errors.jsonl": (1, 9, 45, 0, 175, 0, 0),
    "b-ccl-print-mode-sessions": (2, 1, 1, 0, 1, 0, 13),
    "b-ccl-thinking-sonnet45.jsonl": (1, 16, 35, 0, 175, 0, 0),
    "b-ccv-inline-sidechains-v1098.jsonl": (1, 1, 1, 0, 3, 0, 71),
    "b-spotter-compaction": (1, 16, 71, 1, 147, 12, 16),
}


@pytest.mark.parametrize("name", sorted(SAMPLE_FIGURES))
def test_each_samples_figures(name):
    """Each sample's totals; the touches (main thread and subagents) also counted here from the frames: tool
    uses whose one file `placement.file_of_tool_use` names and whose result the trace holds."""
    reports = analyze([str(SAMPLES / name)], build=build_files).reports
    got = (len(reports), *(sum(len(r.rows) if k == "rows" else sum(f[k] for f in r.rows) for r in reports)
                           for k in ("rows", "touches", "rereads", "references")),
           sum(len(r.drop_events) for r in reports), sum(r.subagent_touches for r in reports))  # fmt: skip
    assert got == SAMPLE_FIGURES[name]
    main = sub = 0
    for source in find_traces([str(SAMPLES / name)]):
        for t in read_trace(source.path, source.subagents):
            answered = set(t.tool_results["tool_use_id"].to_list())
            for tid, n, f, r, k in t.tool_uses.select("tool_use_id", "name", "file_path", "read_path",
                                                      "thread_kind").rows():  # fmt: skip
                if file_of_tool_use(n, f, r, t.cwd) is not None:
                    main += k == "main" and tid in answered
                    sub += k != "main" and tid in answered  # (a touch needs its result, as on the main thread)
    assert (main, sub) == (got[2], got[6])


#: samples/b-spotter-compaction: every file whose read content was in the window at the compaction before
#: call 62, and which of them the agent read again (at which call), edited first without reading.
COMPACTION_DROPS = {
    "assets/js/app.js": 82,
    "deps/ash_computer/lib/ash_computer.ex": None,
    "deps/ash_computer/lib/ash_computer/live_view.ex": 72,
    "lib/spotter/services/transcript_renderer.ex": None,
    "lib/spotter_web/components/transcript_components.ex": 64,
    "lib/spotter_web/live/pane_list_live.ex": None,
    "lib/spotter_web/live/session_live.ex": 67,
    "lib/spotter_web/live/subagent_live.ex": 67,
    "lib/spotter_web/live/transcript_computers.ex": None,
    "test/spotter/services/transcript_renderer_test.exs": None,
    "test/spotter_web/live/session_live_test.exs": None,
    "/tmp/claude-1000/-home-USER-projects-spotter-worktrees-spotter-dov/tasks/b7636e2.output": 139,
}


def test_the_compaction_sample_drops_its_files_at_call_62():
    """Every file drops at the compaction before call 62; the set is the one computed here from the frames
    (main-thread Read / Bash-reader results with no error landed before the compact_boundary line), and
    each read again at the call given, transcript_components.ex edited at call 62 before its re-read."""
    path = str(SAMPLES / "b-spotter-compaction")
    (report,) = analyze([path], build=build_files).reports
    cwd = report.facts["cwd"]
    root = cwd + "/"
    got = {d["path"].removeprefix(root): d["read_again_call"] for d in report.drop_events}
    assert got == COMPACTION_DROPS
    assert {d["call"] for d in report.drop_events} == {62} and {d["kind"] for d in report.drop_events} == {"compaction"}
    assert [d["path"].removeprefix(root) for d in report.drop_events if d["edited_without_reading"]] == [
        "lib/spotter_web/components/transcript_components.ex"]  # fmt: skip
    # the same set from the frames
    (t,) = [x for x in read_trace(path + "/4d5611e5-241a-462a-8d15-5122611a9569.jsonl")]
    uses, res, ev = t.tool_uses, t.tool_results, t.events
    cut = ev.filter(ev["kind"] == "compact_boundary")["seq"].item()
    ok = res.filter((res["seq"] < cut) & ~res["is_error"].fill_null(False))["tool_use_id"].to_list()
    read = {
        file_of_tool_use(n, f, r, cwd)
        for tid, n, f, r, k in uses.select("tool_use_id", "name", "file_path", "read_path", "thread_kind").rows()
        if tid in ok and k == "main" and (n == "Read" or (n == "Bash" and r))
    }
    assert {d["path"] for d in report.drop_events} == read
    dropped = {r["path"] for r in report.rows if r["level"] == DROPPED}
    assert dropped == {d["path"] for d in report.drop_events if not d["read_again"]}


def test_the_compaction_sample_before_the_compaction():
    """--at 61: the compaction is after call 61's prompt: no drop yet; the 12 files it drops are in the
    window, and one more was only written (in_window null)."""
    (report,) = analyze([str(SAMPLES / "b-spotter-compaction")], build=partial(build_files, at=At("call", 61))).reports
    assert report.drop_events == [] and report.boundaries == []
    root = report.facts["cwd"] + "/"
    assert {r["path"].removeprefix(root) for r in report.rows if r["in_window"]} == set(COMPACTION_DROPS)
    assert [r["path"].removeprefix(root) for r in report.rows if r["in_window"] is None] == [
        "test/spotter_web/live/subagent_live_test.exs"]  # fmt: skip


def test_the_report_panel_of_the_compaction_sample():
    """The html report's files panel: spec 003's badges, the dropped files' rows in amber."""
    (t,) = read_trace(SAMPLES / "b-spotter-compaction" / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl")
    panel = files_panel_of(build_files(t))
    assert panel is not None and (panel["badge_key"], panel["amber_key"]) == ("level", "dropped")
    assert sum(r["dropped"] for r in panel["rows"]) == 6 and "call 62" in panel["note"]


# -- CLI, JSON and docs --------------------------------------------------------------------------------------


def test_cli_table_json_and_bad_at(write):
    """`context files` prints the table and the drop events, `--json` a list, a bad `--at` is a usage error."""
    path = _timeline(write)
    out = CliRunner().invoke(app, ["context", "files", path, "--no-cache"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "| DROPPED" in out.stdout and "call 3 (compaction" in out.stdout and "a.py: not read again" in out.stdout
    out = CliRunner().invoke(app, ["context", "files", path, "--json", "--no-cache", "--at", "2"])
    (obj,) = orjson.loads(out.stdout)
    assert obj["schema_version"] == SCHEMA_VERSIONS["files"] and obj["at"]["call"] == 2 and len(obj["files"]) == 1
    bad = CliRunner().invoke(app, ["context", "files", path, "--at", "soon"])
    assert bad.exit_code == 2


def test_every_json_key_is_snake_case_and_documented():
    """Every key `context files --json` emits over the samples is snake_case and in docs/files.md."""
    run = analyze(_sample_paths(), build=build_files)
    keys = json_keys(orjson.loads(render_files_json(run)))
    assert_keys_documented(keys, (ROOT / "docs" / "files.md").read_text(), at_least=35)


# -- what a review found: each finding on a hand-built trace ------------------------------------------------


def _clear(minute):
    text = "<command-name>/clear</command-name>\n<command-args></command-args>"
    return {"type": "user", "sessionId": "s", "timestamp": _iso(minute), "cwd": CWD,
            "message": {"role": "user", "content": text}}  # fmt: skip


def test_route_paths_and_spaces_are_referenced(write):
    """Finding 1: paths holding `[ ] ( ) $` or a space. Each file's Read names it (1 reference, from the tool
    use's path itself), and call 2's text names each once more ("app/[id]/page.tsx,", "(app/(auth)/login/page.tsx)",
    "routes/$id.tsx:4", and "My Docs/notes.md", whose word "Docs/notes.md" is the end of that one path at its
    space): 2 references, last seen call 2 (minute 10); at the last line (minute 50) the age is 40 minutes:
    exp(−0.693·2) + 0.3·ln 3 = 0.2500736 + 0.3295837 = 0.579657, MED."""
    paths = ["/p/app/[id]/page.tsx", "/p/app/(auth)/login/page.tsx", "/p/routes/$id.tsx", "/p/My Docs/notes.md"]
    report = _files(
        write,
        _call("m1", 0, [_read(f"t{i}", p) for i, p in enumerate(paths)]),
        *(_res(f"t{i}", 0) for i in range(4)),
        _call(
            "m2",
            10,
            text="I looked at app/[id]/page.tsx, (app/(auth)/login/page.tsx) and My Docs/notes.md; "
            "routes/$id.tsx:4 too.",
        ),
        _call("m3", 50),
    )
    for p in paths:
        row = _row(report, p)
        assert (row["references"], row["last_seen_call"], row["age_ms"]) == (2, 2, 40 * MINUTE), p
        assert row["relevance"] == 0.579657 and row["level"] == "MED", p


def test_a_bash_reader_of_a_path_with_a_space_is_referenced(write):
    """Finding 1: `cat "My Docs/a.md"` touches /p/My Docs/a.md and names it once (its read path), though no
    word of the command is that path."""
    report = _files(
        write,
        _call("m1", 0, [("t1", "Bash", {"command": 'cat "My Docs/a.md"'})]),
        _res("t1", 0),
        _call("m2", 1),
    )
    (row,) = report.rows
    assert (row["path"], row["touches"], row["references"], row["last_seen_call"]) == ("/p/My Docs/a.md", 1, 1, 1)


def _cleared_session(write):
    """Call 1 reads a.py, call 2 b.py (prompt 60,000); a `/clear`; call 3 (prompt 5,500: a fall of 91 %)
    edits a.py; call 4 (20,000) reads b.py again; call 5 (1,000: a fall of 95 %, no marker) is a drop."""
    return write(
        "clear.jsonl",
        _call("m1", 0, [_read("t1", "/p/a.py")], prompt=10_000),
        _res("t1", 0),
        _call("m2", 1, [_read("t2", "/p/b.py")], prompt=60_000),
        _res("t2", 1),
        _clear(2),
        _call("m3", 3, [("t3", "Edit", {"file_path": "/p/a.py", "old_string": "o", "new_string": "n"})], prompt=5_500),
        _res("t3", 3, "ok"),
        _call("m4", 4, [_read("t4", "/p/b.py")], prompt=20_000),
        _res("t4", 4),
        _call("m5", 5, prompt=1_000),
        _call("m6", 6, prompt=1_500),
    )


def test_at_n_holds_a_clear_or_a_drop_that_took_effect_at_call_n(write):
    """Finding 2: call 3's prompt came after the /clear, so --at 3 has both files out of the window (DROPPED,
    two drop events at call 3); call 3's own Edit is not counted. --at 5: the drop before call 5 removed
    b.py's read of call 4 (b.py read again at call 5 after the clear, 2 calls later; a.py edited at call 3
    without reading it); --at 2 is before the clear: both in the window."""
    t = read_trace(_cleared_session(write))[0]
    at3 = build_files(t, at=At("call", 3))
    assert [(d["path"], d["call"], d["kind"]) for d in at3.drop_events] == [("/p/a.py", 3, "clear"),
                                                                           ("/p/b.py", 3, "clear")]  # fmt: skip
    assert {r["path"]: (r["in_window"], r["level"], r["touches"]) for r in at3.rows} == {
        "/p/a.py": (False, DROPPED, 1), "/p/b.py": (False, DROPPED, 1)}  # fmt: skip
    at5 = build_files(t, at=At("call", 5))
    events = [
        (d["path"], d["call"], d["read_again_call"], d["calls_until_read"], d["edit_call"]) for d in at5.drop_events
    ]
    assert events == [("/p/a.py", 3, None, None, 3), ("/p/b.py", 3, 5, 2, None), ("/p/b.py", 5, None, None, None)]
    assert [b["kind"] for b in at5.boundaries] == ["clear", "drop"]
    at2 = build_files(t, at=At("call", 2))
    assert at2.drop_events == [] and [r["in_window"] for r in at2.rows] == [True]


def test_relative_paths_resolve_against_each_lines_cwd(write):
    """Finding 3: `cat a.py` on a line whose cwd is /p reads /p/a.py; after `cd sub`, lines with cwd /p/sub
    read /p/sub/a.py and /p/sub/b.py: three files, no re-read."""
    report = _files(
        write,
        _call("m1", 0, [("t1", "Bash", {"command": "cat a.py"})]),
        _res("t1", 0),
        _call("m2", 1, [("t2", "Bash", {"command": "cd sub"})], cwd="/p/sub"),
        _res("t2", 1, "", cwd="/p/sub"),
        _call("m3", 2, [("t3", "Bash", {"command": "cat a.py"}), _read("t4", "b.py")], cwd="/p/sub"),
        _res("t3", 2, cwd="/p/sub"),
        _res("t4", 2, cwd="/p/sub"),
        _call("m4", 3, cwd="/p/sub"),
    )
    assert sorted((r["path"], r["touches"], r["rereads"]) for r in report.rows) == [
        ("/p/a.py", 1, 0), ("/p/sub/a.py", 1, 0), ("/p/sub/b.py", 1, 0)]  # fmt: skip
    t = read_trace(
        write("cwd.jsonl", _call("m1", 0, [_read("t1", "a.py")]), _call("m2", 1, [_read("t2", "a.py")], cwd="/q"))
    )[0]
    assert t.tool_uses.get_column("cwd").to_list() == [None, "/q"]  # the session's cwd is not repeated


def test_windows_paths_compare_without_case(write):
    """Finding 4: in a Windows session, `C:\\Users\\u\\proj\\src\\a.py` and `c:/users/u/proj/src/a.py` are one
    file, shown as first written (C:/Users/u/proj/src/a.py): 2 touches, 1 re-read; the text's `SRC\\A.PY`
    (resolved against the cwd) is a third reference."""
    cwd = "C:\\Users\\u\\proj"
    path = write(
        "win.jsonl",
        _call("m1", 0, [_read("t1", "C:\\Users\\u\\proj\\src\\a.py")], cwd=cwd),
        result("t1", "x" * 40, timestamp=_iso(0)),
        _call("m2", 1, [_read("t2", "c:/users/u/proj/src/a.py")], cwd=cwd),
        result("t2", "x" * 40, timestamp=_iso(1)),
        _call("m3", 2, text="see SRC\\A.PY", cwd=cwd),
    )
    (row,) = build_files(read_trace(path)[0]).rows
    assert (row["path"], row["touches"], row["rereads"], row["references"]) == ("C:/Users/u/proj/src/a.py", 2, 1, 3)


def test_a_tilde_path_is_kept_as_written(write):
    """Finding 5: `cat ~/notes.md` names ~/notes.md (no home directory is known), never /p/~/notes.md; it is
    another row than /home/u/notes.md; the text's `~/notes.md` references it."""
    report = _files(
        write,
        _call("m1", 0, [("t1", "Bash", {"command": "cat ~/notes.md"}), _read("t2", "/home/u/notes.md")]),
        _res("t1", 0),
        _res("t2", 0),
        _call("m2", 1, text="I read ~/notes.md"),
    )
    assert sorted((r["path"], r["references"]) for r in report.rows) == [("/home/u/notes.md", 1), ("~/notes.md", 2)]


def test_the_level_is_the_unrounded_scores(write):
    """Finding 6: one reference, aged 1,227,988 ms: exp(−0.693·1227988/1200000) + 0.3·ln 2 = 0.6999999956,
    shown as 0.7 (6 decimals) but below HIGH's 0.7: MED."""
    path = write("r.jsonl", _call("m1", 0, [_read("t1", "/p/a.py")]), _res("t1", 0), _call("m2", 40))
    moment = datetime.fromtimestamp((T0 + 1_227_988) / 1000, UTC).isoformat(timespec="milliseconds")
    (row,) = build_files(read_trace(path)[0], at=parse_at(moment)).rows
    assert (row["age_ms"], row["relevance"], row["level"]) == (1_227_988, 0.7, "MED")


@pytest.mark.parametrize("moment", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_time_that_cannot_be_shown_is_a_usage_error(write, moment):
    """Finding 7: a time whose UTC date is past 9999 or before year 1 is refused by `parse_at` and is a
    usage error (exit 2, named), never a traceback."""
    with pytest.raises(ValueError, match="years 1 to 9999"):
        parse_at(moment)
    out = CliRunner().invoke(app, ["context", "files", _timeline(write), "--no-cache", "--at", moment])
    assert out.exit_code == 2 and "years 1 to 9999" in out.stderr
    assert out.exception is None or isinstance(out.exception, SystemExit)  # a usage error, no traceback


def test_times_outside_the_trace_are_warned(write):
    """Findings 8 and 9: before 1970 (ts_ms −60,000, valid against the files schema), before the trace's first
    line (no files, said so), after its last (aged, said so); year 1 shown with four digits."""
    from jsonschema import Draft202012Validator

    from contexttrace.reports.schemas import schema_of

    path = _timeline(write)
    out = CliRunner().invoke(app, ["context", "files", path, "--json", "--no-cache", "--at", "1969-12-31T23:59:00Z"])
    (obj,) = orjson.loads(out.stdout)
    assert obj["at"]["ts_ms"] == -60_000 and obj["files"] == [] and obj["schema_version"] == SCHEMA_VERSIONS["files"]
    assert list(Draft202012Validator(schema_of("files")).iter_errors(obj)) == []
    assert any("before 1970" in w for w in obj["warnings"])
    assert any("before the trace's first line" in w and "no files" in w for w in obj["warnings"])
    t = read_trace(path)[0]
    late = build_files(t, at=parse_at(_iso(50 + 120)))
    assert any("120 min after the trace's last line" in w for w in late.warnings)
    text = CliRunner().invoke(app, ["context", "files", path, "--no-cache", "--at", "0001-01-01"]).stdout
    assert "at 0001-01-01 00:00:00 UTC" in text


def _lost_and_kept(write):
    """a.py read at call 1, dropped by a compaction before call 2; call 2 reads b.py and writes c.py (never
    read); call 3 (minute 50) names a.py; a second compaction at minute 51, after the last call, drops b.py."""
    return write(
        "lost.jsonl",
        _call("m1", 0, [_read("t1", "/p/a.py")]),
        _res("t1", 0),
        _compaction(1),
        _call("m2", 2, [_read("t2", "/p/b.py"), ("t3", "Write", {"file_path": "/p/c.py", "content": "c"})]),
        _res("t2", 2),
        _res("t3", 2, "ok"),
        _call("m3", 50, text="a.py again"),
        _compaction(51),
    )


def test_dropped_rows_sort_last_and_drop_events_by_call(write):
    """Findings 10 and 11: at the last line (minute 51) a.py scores 1.0 (2 references, 1 minute old) but is
    DROPPED: it sorts after c.py (in the window or never read) and before b.py (DROPPED, 49 minutes old:
    exp(−0.693·2.45) + 0.3·ln 2 = 0.183077 + 0.207944 = 0.391021). Drop events: a.py at call 2, then b.py
    after the last call (call null), last."""
    report = build_files(read_trace(_lost_and_kept(write))[0])
    assert [(r["path"], r["level"]) for r in report.rows] == [("/p/c.py", "LOW"), ("/p/a.py", DROPPED),
                                                             ("/p/b.py", DROPPED)]  # fmt: skip
    assert _row(report, "/p/a.py")["relevance"] == 1.0
    assert _row(report, "/p/b.py")["relevance"] == pytest.approx(0.391021, abs=1e-6)
    assert [(d["path"], d["call"]) for d in report.drop_events] == [("/p/a.py", 2), ("/p/b.py", None)]
    text = render_files_table(analyze([_lost_and_kept(write)], build=build_files))
    assert text.index("call 2 (compaction") < text.index("after the last call (compaction")


def test_one_call_later_failed_reads_and_subagent_touches(write):
    """Finding 13: a drop read again one call later says "1 call later"; a failed Read shows in the table's
    failed column (touches 2 = reads 1 + failed 1) with a note; a subagent's Read with no result is no
    touch (subagent_touches 1, not 2), as on the main thread."""
    path = write(
        "c.jsonl",
        _call("m1", 0, [_read("t1", "/p/a.py"), _read("t2", "/p/a.py")]),
        _res("t1", 0),
        _res("t2", 0, "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
        _compaction(1),
        _call("m2", 2, [_read("t3", "/p/b.py")]),
        _res("t3", 2),
        assistant(
            "s1", 0, 0, 10, tools=[_read("t4", "/p/x.py"), _read("t5", "/p/y.py")], sidechain=True, timestamp=_iso(2)
        ),
        _res("t4", 2, isSidechain=True),
        _call("m3", 3, [_read("t6", "/p/a.py")]),
        _res("t6", 3),
        _call("m4", 4),
    )
    run = analyze([path], build=build_files)
    (report,) = run.reports
    a = _row(report, "/p/a.py")
    assert (a["touches"], a["reads"], a["failed"]) == (3, 2, 1) and report.subagent_touches == 1
    text = render_files_table(run)
    assert "a.py: read again at call 4 (2 calls later)" in text
    assert "| failed |" in text.replace("  ", " ").replace("  ", " ") or "failed" in text.splitlines()[1]
    assert "failed: touches whose result was an error" in text
