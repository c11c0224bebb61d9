"""The second round of CASES.md (B29-B38) and the fuzz finds (tests/data/fuzz, copies of shared/cases/fuzz).

Each expected value is the case's own, worked out by hand from its file (CASES.md, "Second round"); each
fuzz kind is tested as a kind: the file of the find, and a variant of the same kind built here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from contexttrace import analyze, read_trace
from contexttrace.errors import TraceFormatError
from contexttrace.render.trace import render_json
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage

from .conftest import CASES, SAMPLES, assistant, jsonl

FUZZ = Path(__file__).resolve().parent / "data" / "fuzz"
GOOD = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")


def report_of(path: Path | str):
    run = analyze([str(path)])
    assert not run.failures, run.failures
    [rep] = run.reports
    return rep


# -- B29: records repeated in one file ---------------------------------------------------------------


def test_b29_repeated_records_count_once(tmp_path):
    """B29: lines 9-16 repeat lines 1-8 (same uuids): calls 4, series [20,003, 20,352, 4,003, 4,203], compact 1
    (not 2), tools 1, failed 1, result chars 32, repeat 0; 8 records dropped and said; health and weather
    equal to the same file without the repeated lines; usage turns 3 and cost $0.039423."""
    rep = report_of(CASES / "B29.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.compact) == (4, [20003, 20352, 4003, 4203], 1)
    assert (rep.tools, rep.failed, rep.result_chars, rep.repeat) == (1, 1, 32, 0)
    assert any("8 repeated record(s) dropped" in w for w in rep.warnings)
    lines = (CASES / "B29.jsonl").read_bytes().splitlines(keepends=True)
    clean = tmp_path / "B29.jsonl"
    clean.write_bytes(b"".join(lines[:8] + lines[16:]))
    once = report_of(clean)
    assert rep.extra == once.extra  # health and weather
    [usage] = analyze([str(CASES / "B29.jsonl")], build=build_usage).reports
    assert usage.turn_figures["turns"] == 3
    assert round(usage.to_dict()["cost_usd"], 6) == 0.039423


# -- B30: NUL padding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nul-early.jsonl", "nul-late.jsonl"])
def test_b30_nul_padding_is_skipped_not_binary(name):
    """B30: calls 3, series [11,003, 11,503, 11,903], growth 900; the 2 NUL-only lines skipped as NUL padding
    (not "file still being written"); the record followed by NULs on its line is read."""
    rep = report_of(CASES / "B30" / name)
    assert (rep.calls, rep.prompt_tokens, rep.growth) == (3, [11003, 11503, 11903], 900)
    assert rep.skipped_lines == 2
    assert [n.reason for n in rep.line_notes] == ["NUL padding (left by a crash while writing)"] * 2
    assert rep.truncated_last_line is False


def test_nul_bytes_only_file_is_binary(tmp_path):
    """A file is binary only when nothing in it decodes as JSON lines, whatever NULs it holds."""
    path = tmp_path / "blob.jsonl"
    path.write_bytes(b"\x89PNG\x00\x00\x01\n\x00\x00garbage\n")
    run = analyze([str(path), GOOD])
    assert [f.reason for f in run.failures] == ["binary file (NUL bytes), not a JSONL trace"]
    assert [r.trace for r in run.reports] == [GOOD]


# -- B31: background-task notifications ----------------------------------------------------------------


def test_b31_task_notification_is_not_a_turn():
    """B31: turns 1, calls 3, series [22,003, 22,102, 22,302], tools 1, result chars 44, cost $0.048585,
    velocity null (one turn)."""
    rep = report_of(CASES / "B31.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.tools, rep.result_chars) == (3, [22003, 22102, 22302], 1, 44)
    [usage] = analyze([str(CASES / "B31.jsonl")], build=build_usage).reports
    assert usage.turn_figures["turns"] == 1
    assert round(usage.to_dict()["cost_usd"], 6) == 0.048585
    assert usage.turn_figures["context_velocity_tokens"] is None
    [trace] = read_trace(str(CASES / "B31.jsonl"))
    assert trace.events.filter(kind="task_notification").height == 1


def test_task_notification_text_fallback(write):
    """Without `origin`, a user text starting with <task-notification> is still not a prompt."""
    lines = [
        {"type": "user", "sessionId": "s", "uuid": "u1", "message": {"role": "user", "content": "go"}},
        assistant("m1", 1, 10, 0),
        {
            "type": "user",
            "sessionId": "s",
            "uuid": "u2",
            "message": {"role": "user", "content": "<task-notification>x"},
        },
        assistant("m2", 1, 10, 10),
    ]
    [trace] = read_trace(write("t.jsonl", *lines))
    assert trace.events["kind"].to_list() == ["prompt", "task_notification"]


# -- B34: microcompaction --------------------------------------------------------------------------------


def test_b34_microcompaction_ends_already_had():
    """B34: calls 4, series [21,003, 29,003, 21,103, 29,103], compact 0, tools 2, failed 0, result chars 44,
    repeat 0 (the Read's result was cleared before it was fetched again); the microcompaction is reported on
    its own: count 1, 8,000 tokens saved, before call 3."""
    rep = report_of(CASES / "B34.jsonl")
    assert (rep.calls, rep.prompt_tokens, rep.compact) == (4, [21003, 29003, 21103, 29103], 0)
    assert (rep.tools, rep.failed, rep.result_chars, rep.repeat) == (2, 0, 44, 0)
    data = orjson.loads(render_json(analyze([str(CASES / "B34.jsonl")])))[0]
    assert (data["microcompact"], data["microcompact_tokens_saved"]) == (1, 8000)
    assert data["microcompaction_events"] == [
        {"call": 3, "line": 5, "trigger": "auto", "pre_tokens": 29023, "tokens_saved": 8000, "cleared_results": 1}
    ]


def test_b34_without_the_boundary_the_read_is_a_repeat(tmp_path):
    """The same file without its microcompact_boundary line: the second identical Read is a repeat (the rule
    is the boundary, not the file)."""
    lines = (CASES / "B34.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(x for x in lines if b"microcompact_boundary" not in x))
    assert report_of(path).repeat == 1


# -- B36: Windows captures -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bom-utf8.jsonl", "utf16le.jsonl"])
def test_b36_windows_captures(name):
    """B36: one stream-json trace, calls 1, first 10,005, the surface from the init line, the reported cost
    matched."""
    rep = report_of(CASES / "B36" / name)
    assert (rep.format, rep.calls, rep.first) == ("stream-json", 1, 10005)
    assert rep.surface is not None and rep.surface["model"] is not None
    [usage] = analyze([str(CASES / "B36" / name)], build=build_usage).reports
    assert usage.reported is not None and usage.reported["cost_difference_usd"] == 0.0


def test_utf16_on_standard_input_and_big_endian(tmp_path, monkeypatch):
    """UTF-16 is recognised by its BOM (either byte order) wherever the bytes come from."""
    text = (CASES / "B36" / "utf16le.jsonl").read_bytes().decode("utf-16")
    path = tmp_path / "be.jsonl"
    path.write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    assert report_of(path).first == 10005


# -- B38: every request failed ---------------------------------------------------------------------------


def test_b38_no_model_call_is_not_graded():
    """B38: calls 0, synthetic errors 1, no health grade nor weather; another trace in the run prints in full."""
    run = analyze([str(CASES / "B38.jsonl"), GOOD])
    assert not run.failures
    rep, good = run.reports
    assert (rep.calls, rep.synthetic_errors) == (0, 1)
    assert rep.extra["health"]["grade"] is None and rep.extra["health"]["reason"]
    assert rep.extra["weather"]["level"] is None and rep.extra["weather"]["reason"]
    assert good.calls == 36


# -- fuzz finds, each as a kind ---------------------------------------------------------------------------

FUZZ_FILES = sorted(p.name for p in FUZZ.iterdir())


@pytest.mark.parametrize("name", FUZZ_FILES)
def test_fuzz_find_never_raises_and_good_trace_prints(name):
    """Every fuzz find: `analyze` returns (no exception), the good trace beside it is reported in full, the
    frames build, and the JSON renders."""
    run = analyze([str(FUZZ / name), GOOD])
    assert GOOD in [r.trace for r in run.reports]
    assert orjson.loads(render_json(run))
    if (FUZZ / name).is_file():
        for trace in read_trace(str(FUZZ / name)):
            for frame in (trace.calls, trace.tool_uses, trace.tool_results, trace.events):
                assert frame.height >= 0


def test_fuzz_01_type_not_a_string_is_an_unknown_line():
    """01: `"type": ["assistant"]` is an unknown line type, and the trace keeps its other call."""
    rep = report_of(FUZZ / "01-type-is-list.jsonl")
    assert rep.calls == 1


@pytest.mark.parametrize("name", ["02-persisted-size-not-a-number.jsonl", "02b-persisted-size-overflow.jsonl"])
def test_fuzz_02_persisted_size_unknown_result_still_counts(name):
    """02/02b: a persisted-output size that is not a number (or overflows) is unknown; the result counts."""
    [trace] = read_trace(str(FUZZ / name))
    assert trace.tool_results["persisted"].to_list() == [True]
    assert trace.tool_results["persisted_bytes"].to_list() == [None]
    assert report_of(FUZZ / name).tools == 1


@pytest.mark.parametrize(
    ("name", "column"),
    [("04-huge-int-in-compact-metadata.jsonl", "pre_tokens"), ("09-frames-int-above-int64.jsonl", "duration_ms")],
)
def test_fuzz_04_09_out_of_range_counts_are_unknown_with_a_warning(name, column):
    """04/09: a count above the 64-bit range is None in the frames, with a warning; --json renders."""
    [trace] = read_trace(str(FUZZ / name))
    values = [v for v in trace.events[column].to_list()]
    assert None in values and all(v is None or v < 2**53 for v in values)
    assert any("out of range" in w for w in trace.warnings)
    assert orjson.loads(render_json(analyze([str(FUZZ / name)])))


def test_fuzz_negative_counts_are_unknown(write):
    """The same kind, below the range: a negative duration is unknown, not a negative number of ms."""
    line = {"type": "system", "subtype": "turn_duration", "sessionId": "s", "durationMs": -5}
    [trace] = read_trace(write("t.jsonl", assistant("m1", 1, 1, 1), line))
    assert trace.events["duration_ms"].to_list() == [None]


@pytest.mark.parametrize("name", ["06-task-input-lone-surrogate.jsonl", "08-frames-lone-surrogate-string.jsonl"])
def test_fuzz_06_08_lone_surrogates_replaced_before_frames(name):
    """06/08: lone surrogates become U+FFFD (one code point for one) before any frame or JSON is built."""
    [trace] = read_trace(str(FUZZ / name))
    for frame in (trace.calls, trace.tool_uses, trace.tool_results, trace.events):
        for column in frame.columns:
            for value in frame[column].to_list():
                if isinstance(value, str):
                    value.encode("utf-8")  # raises on a lone surrogate


def test_lone_surrogate_in_a_key_at_depth(write):
    """The kind: a lone surrogate in a key, deep inside a tool input, never reaches a frame."""
    raw = (
        '{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"claude-sonnet-4-5","content":'
        '[{"type":"tool_use","id":"t1","name":"Read\\udc80","input":{"a":[{"k\\ud800":"v\\udfff"}]}}],'
        '"usage":{"input_tokens":1,"cache_creation_input_tokens":1,"cache_read_input_tokens":1,"output_tokens":1}}}'
    )
    [trace] = read_trace(write("t.jsonl", raw))
    assert trace.tool_uses["name"].to_list() == ["Read\ufffd"]
    assert trace.tool_uses["input_json"].to_list() == ['{"a":[{"k\ufffd":"v\ufffd"}]}']


def test_fuzz_07_stray_stream_key_keeps_the_transcript_and_its_subagents():
    """07: one stray `parent_tool_use_id` in a transcript: still a transcript, its subagent file read, a warning."""
    rep = report_of(FUZZ / "07-stream-key-in-transcript-drops-subagents" / "s1.jsonl")
    assert rep.format == "transcript"
    assert rep.subagent_calls == 2
    assert any("stream-json keys" in w for w in rep.warnings)


def test_fuzz_10_nul_in_first_4kib_is_not_binary():
    """10: a NUL byte in the first 4 KiB: the line with it is skipped, the trace read."""
    rep = report_of(FUZZ / "10-nul-byte-in-first-4KiB.jsonl")
    assert (rep.calls, rep.skipped_lines) == (1, 1)


def test_fuzz_12_image_bytes_never_negative():
    """12: base64 data of padding only decodes to 0 bytes, never -1."""
    assert report_of(FUZZ / "12-image-data-padding-only-negative-bytes.jsonl").result_image_bytes == 0


def test_fuzz_13_flat_agent_file_linked_by_a_late_session_id(tmp_path):
    """13: a flat agent file whose sessionId first appears after line 20 is attached to its session."""
    folder = tmp_path / "proj"
    shutil.copytree(FUZZ / "13-flat-agent-file-sessionId-after-line-20", folder)
    run = analyze([str(folder)])
    assert run.orphan_agent_files == 0
    [rep] = run.reports
    assert (rep.calls, rep.subagent_calls) == (1, 1)


# -- other agents' traces ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lines", "agent"),
    [
        (
            [
                {"type": "init", "timestamp": "2026-01-01T00:00:00Z", "session_id": "g1", "model": "gemini-2.5-pro"},
                {"type": "message", "role": "user", "content": "hi"},
                {"type": "result", "status": "success", "stats": {}},
            ],
            "Gemini CLI stream-json",
        ),
    ],
)
def test_another_agents_trace_is_named_as_not_supported(write, lines, agent):
    """A Gemini CLI stream-json capture (session totals only, no per-call usage) is an error naming the
    agent, not an empty Claude trace graded A 100; the other traces print."""
    path = write("other.jsonl", *lines)
    run = analyze([path, GOOD])
    assert [r.trace for r in run.reports] == [GOOD]
    [failure] = run.failures
    assert agent in failure.reason and "not supported" in failure.reason
    with pytest.raises(TraceFormatError):
        read_trace(path)


def test_codex_rollout_without_token_counts_is_read_as_codex(write):
    """A Codex CLI rollout is read by its own reader, not as an empty Claude trace: with no token count,
    it has no measured call and is not graded."""
    path = write(
        "rollout.jsonl",
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "x", "cli_version": "0.50.0"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": {"type": "message"}},
    )
    [trace] = read_trace(path)
    assert (trace.format, trace.session_id, trace.cli_version) == ("codex", "x", "0.50.0")
    run = analyze([path, GOOD])
    assert not run.failures
    report = next(r for r in run.reports if r.trace == path)
    assert (report.calls, report.extra["health"]["grade"]) == (0, None)


# -- the firewall ----------------------------------------------------------------------------------------


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


def test_a_line_that_raises_is_skipped_and_named(monkeypatch, write):
    """A record no rule expected (here: the router raising) costs its line only, named with the exception."""
    from contexttrace import reading as reader

    real = reader.Builder._system

    def system(self, rec, line, src):
        if rec.subtype == "boom":
            raise KeyError("x")
        return real(self, rec, line, src)

    monkeypatch.setattr(reader.Builder, "_system", system)
    path = write("t.jsonl", assistant("m1", 1, 1, 1), {"type": "system", "subtype": "boom"}, assistant("m2", 1, 1, 2))
    [trace] = read_trace(path)
    assert trace.calls.height == 2
    assert trace.skipped_lines == 1
    assert "KeyError" in trace.line_notes[0].reason and trace.line_notes[0].line == 2


def test_unreadable_folder_is_an_error(tmp_path, monkeypatch):
    """A named folder that cannot be listed, and a locked folder inside a scanned tree, are each an error of
    the run (exit 1), never "no traces found" nor skipped silently. Tests run as root here, where permission
    bits do not bind, so the refusal is made by the os functions the scan calls."""
    import os

    tree = tmp_path / "projects"
    (tree / "locked").mkdir(parents=True)
    (tree / "open").mkdir()
    (tree / "open" / "s.jsonl").write_bytes(jsonl(assistant("m1", 1, 1, 1)))
    real_scandir, real_access = os.scandir, os.access

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = analyze([str(tree)])
    assert [r.trace for r in run.reports] == [str(tree / "open" / "s.jsonl")]
    assert [(f.path, f.reason) for f in run.failures] == [
        (str(tree / "locked"), "cannot read this folder (permission denied)")
    ]
    monkeypatch.setattr(
        os, "access", lambda path, mode: False if str(path).endswith("locked") else real_access(path, mode)
    )
    run = analyze([str(tree / "locked"), GOOD])
    assert [f.reason for f in run.failures] == ["cannot read this folder (permission denied)"]
    assert [r.trace for r in run.reports] == [GOOD]


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
    from contexttrace.reports.trace import RunResult, TraceFailure

    run = RunResult(failures=[TraceFailure("a.jsonl", "could not read this trace: boom", line=7, error="KeyError")])
    assert render_diagnostics(run) == ["Error: a.jsonl:7: could not read this trace: boom (KeyError)"]


def test_read_trace_takes_a_path_object():
    """A notebook user passes a `pathlib.Path`: same trace as the string, frames build."""
    [trace] = read_trace(CASES / "B01.jsonl")
    assert (trace.name, trace.calls.height) == (str(CASES / "B01.jsonl"), 1)


# -- discovery inside the firewall (review of issue 10) --------------------------------------------------


def test_a_fifo_named_jsonl_is_an_error_not_a_hang(tmp_path):
    """A FIFO (or socket, device) is never opened: reading it would wait for ever for a writer. Named or
    found by a scan, it is that path's error; the good trace prints."""
    import os

    fifo = tmp_path / "zz.jsonl"
    os.mkfifo(fifo)
    shutil.copy(GOOD, tmp_path / "good.jsonl")
    for args in ([str(tmp_path)], [str(fifo), str(tmp_path / "good.jsonl")]):
        run = analyze(args)
        assert [r.trace for r in run.reports] == [str(tmp_path / "good.jsonl")]
        assert [(f.path, f.reason) for f in run.failures] == [(str(fifo), "not a regular file (a FIFO), not read")]


@pytest.mark.parametrize("bad", ["a" * 300, "a\x00b.jsonl"])
def test_a_path_the_system_refuses_is_an_error_not_a_crash(bad):
    """A name too long for the file system, or with a NUL byte, is that path's error (exit 1); the good
    trace named with it prints."""
    run = analyze([bad, GOOD])
    assert [r.trace for r in run.reports] == [GOOD]
    [failure] = run.failures
    assert failure.reason.startswith("cannot read this path")


def test_analyze_refuses_one_string():
    """`analyze("run.jsonl")` would read each character as a path (and "/" the whole file system)."""
    with pytest.raises(TypeError, match="list of paths"):
        analyze(GOOD)  # type: ignore[arg-type]


def test_unlistable_subagent_folder_is_a_warning_not_a_crash(tmp_path, monkeypatch):
    """A session whose <session>/subagents folder cannot be listed: the session prints with a warning naming
    the folder (its subagents were found but not read), never a PermissionError that drops the run."""
    import os

    src = SAMPLES / "b-ccl-print-mode-sessions"
    sid = "29ccd257-68b1-427f-ae5f-6524b7cb6f20"
    shutil.copytree(src / sid, tmp_path / sid)
    shutil.copy(src / f"{sid}.jsonl", tmp_path / f"{sid}.jsonl")
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("subagents"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = analyze([str(tmp_path / f"{sid}.jsonl"), GOOD])
    assert not run.failures
    session, good = run.reports
    assert any("subagents: cannot read this folder (permission denied)" in w for w in session.warnings)
    assert good.trace == GOOD


def test_symlinked_project_folder_is_followed_once(tmp_path):
    """A project folder that is a symbolic link inside a scanned tree is scanned (os.walk does not follow
    links by default); a link loop is walked once."""
    elsewhere = tmp_path / "elsewhere" / "proj"
    elsewhere.mkdir(parents=True)
    shutil.copy(GOOD, elsewhere / "s1.jsonl")
    root = tmp_path / "projects"
    root.mkdir()
    (root / "linked").symlink_to(elsewhere, target_is_directory=True)
    (elsewhere / "loop").symlink_to(elsewhere, target_is_directory=True)
    run = analyze([str(root)])
    assert [r.calls for r in run.reports] == [36]
    assert not run.failures


def test_a_folder_named_like_a_trace_with_nothing_inside_is_said(tmp_path):
    """A folder named x.jsonl and named on the command line: an error, not silence."""
    (tmp_path / "x.jsonl").mkdir()
    run = analyze([str(tmp_path / "x.jsonl")])
    assert [f.reason for f in run.failures] == ["is a directory where a file was expected (no trace inside)"]


# -- lines the type prefilter skips are whole records (review of issue 10) ---------------------------------


def _sample_lines() -> list[bytes]:
    return Path(GOOD).read_bytes().splitlines(keepends=True)


def test_a_record_glued_onto_a_skipped_line_type_is_counted_and_named(tmp_path):
    """A newline lost in a crash glues a record onto a queue-operation line: the glued line is decoded, fails,
    and is counted and named like any bad line, never swallowed by the skip-by-type prefilter."""
    lines = _sample_lines()
    queue = b'{"type":"queue-operation","operation":"enqueue","sessionId":"s"}'
    glued = queue + lines[1]  # the second record of the sample, glued on
    path = tmp_path / "glued.jsonl"
    path.write_bytes(lines[0] + glued + b"".join(lines[2:]))
    [trace] = read_trace(path)
    assert trace.skipped_lines == 1
    assert trace.line_notes[0].line == 2 and trace.line_notes[0].reason == "not JSON"


def test_an_incomplete_last_line_of_a_skipped_type_is_noted(tmp_path):
    """A last line cut short that starts like a queue-operation is an incomplete last line, noted."""
    path = tmp_path / "cut.jsonl"
    path.write_bytes(b"".join(_sample_lines()) + b'{"type":"queue-operation","operation":"enq')
    [trace] = read_trace(path)
    assert trace.truncated_last_line is True and trace.skipped_lines == 1


def test_cr_only_line_ends_read_every_record(tmp_path):
    """A session written with CR alone between records reads like the same session with LF."""
    path = tmp_path / "cr.jsonl"
    path.write_bytes(b"\r".join(line.rstrip(b"\n") for line in _sample_lines()))
    assert report_of(path).prompt_tokens == report_of(GOOD).prompt_tokens


def test_a_bom_before_any_line_is_dropped(tmp_path):
    """A UTF-8 byte-order mark before a line in the middle (runs appended with `cat` from Windows captures)
    is dropped as at the file's start: the line is read, and no run merges into another."""
    lines = _sample_lines()
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"".join(b"\xef\xbb\xbf" + line for line in lines))
    rep = report_of(path)
    assert (rep.calls, rep.skipped_lines) == (36, 0)


def test_a_subagent_file_named_alone_says_so():
    """A subagent file named on its own has no main thread: not graded (–), and a warning says why and
    what to name instead."""
    from contexttrace.discover.local import SUBAGENT_ALONE

    path = (
        SAMPLES / "b-spotter-compaction" / "4d5611e5-241a-462a-8d15-5122611a9569" / "subagents" / "agent-a2898e3.jsonl"
    )
    rep = report_of(path)
    assert rep.calls == 0 and rep.subagent_calls > 0
    assert rep.extra["health"]["grade"] is None
    assert SUBAGENT_ALONE in rep.warnings
