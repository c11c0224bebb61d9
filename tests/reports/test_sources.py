"""`context sources`: the window's rows on hand-built traces whose rows the docstrings compute,
every bundled sample (rows sum to the size at every call, none negative, the honesty figures), the golden
output of the compaction sample, and the command."""

from __future__ import annotations

import json
from functools import partial

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace
from contexttrace.render.sources import estimator_line, render_sources_json, render_sources_table, sources_panel_of
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.reports.sources import ROWS, build_sources, is_at_choice, thread_ids, unknown_thread
from contexttrace.run.runner import analyze

from ..conftest import GOLDEN, SAMPLES, assert_keys_documented, assistant, check_golden, json_keys, result

COMPACTION = SAMPLES / "b-spotter-compaction"


def call(mid, inp, cw, cr, out=0, *, thinking=None, text="", tools=(), stop="end_turn", signature="s"):
    """A transcript assistant line with thinking, text and tool_use blocks; `stop` None writes it as
    streamed (no stop_reason: its output_tokens a lower bound, FORMATS G2); `thinking` "" writes a hidden
    thinking block (a signature, no text)."""
    content = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking, "signature": signature})
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": tid, "name": name, "input": inp_} for tid, name, inp_ in tools]
    usage = {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr,
             "output_tokens": out}  # fmt: skip
    return {"type": "assistant", "sessionId": "s",
            "message": {"id": mid, "model": "claude-sonnet-4-5", "content": content, "usage": usage,
                        "stop_reason": stop}}  # fmt: skip


def prompt(content):
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": content}}


def attachment(chars):
    return {"type": "attachment", "sessionId": "s", "attachment": {"type": "todo_reminder", "content": "w" * chars}}


def _sources(write, *records, at="last"):
    """The rows of a hand-built trace at spec 001's 4 chars/token (the arithmetic the docstrings do): a
    few synthetic steps are no calibration."""
    (trace,) = read_trace(write("t.jsonl", *records))
    return build_sources(trace, at=at, calibrated=False)


def _rows(report):
    return {r["source"]: r["tokens"] for r in report.sources if r["tokens"]}


def _step(report, n):
    return {k: v for k, v in report.steps[n - 1]["sources"].items() if v}


def test_read_bash_cat_mcp_attachment_thinking(write):
    """Call 1: prompt 1,100 = cache write 1,000 (the prefix) + input 100; before it a 400-char prompt (100).
    Its output, 60 tokens: thinking 80 chars (20), a Read of /p/a.py (input `{"file_path":"/p/a.py"}`, 23
    chars: 5), prose 60 − 20 − 5 = 35. A 4,000-char Read result (files 1,000). Call 2: 1,100 + 60 + 1,000 +
    50 = 2,210 (other 50). Its output, 40: a Bash `cat /p/b.txt` (26 chars) and an mcp__srv__get (`{"q":1}`,
    7): inputs 33 // 4 = 8, prose 32. Results: the cat 800 chars (files 200), the MCP 400 (mcp 100); an
    attachment of 200 chars (harness 50). Call 3: 2,210 + 40 + 350 = 2,600."""
    r = _sources(
        write,
        prompt("p" * 400),
        call("m1", 100, 1000, 0, 60, thinking="t" * 80, tools=[("t1", "Read", {"file_path": "/p/a.py"})]),
        result("t1", "x" * 4000),
        call("m2", 0, 0, 2210, 40,
             tools=[("t2", "Bash", {"command": "cat /p/b.txt"}), ("t3", "mcp__srv__get", {"q": 1})]),
        result("t2", "y" * 800),
        result("t3", "z" * 400),
        attachment(200),
        call("m3", 0, 0, 2600, 5),
    )  # fmt: skip
    assert _step(r, 1) == {"prefix": 1000, "prompts": 100}
    assert _step(r, 2) == {"prefix": 1000, "prompts": 100, "thinking": 20, "tool_inputs": 5, "prose": 35,
                           "files": 1000, "other": 50}  # fmt: skip
    assert _rows(r) == {"prefix": 1000, "prompts": 100, "thinking": 20, "tool_inputs": 13, "prose": 67,
                        "files": 1200, "mcp": 100, "harness": 50, "other": 50}  # fmt: skip
    assert (r.call, r.context_tokens, r.overflow_raw, r.reconciled, r.withdrawn) == (3, 2600, 0, 0, 0)
    assert r.reference == {"kind": "session_start", "call": 1, "delta_tokens": None, "ts_ms": None,
                           "microcompactions": 0}  # fmt: skip
    assert r.thinking_exact is False
    est = {x["source"]: x["estimated"] for x in r.sources}
    assert est["thinking"] and est["prose"] and est["files"] and est["prefix"]
    # a person's prompt since session start: harness per turn = 50 / 1
    assert r.harness_per_turn == 50


def test_image_and_overshoot_reconciled(write):
    """Call 1: 1,000 (cache read: the prefix), no output. A pasted prompt of 40 chars and one image:
    10 + 1,500 = 1,510; a Read result of 4,000 chars (1,000). Estimates 2,510 against a growth of
    1,255 (call 2: 2,255): scaled by 1,255 / 2,510, prompts 1,510 · ½ = 755, files 1,000 · ½ = 500.
    reconciled 2,510 − 1,255 = 1,255 = overflow_raw (1,000 + 2,510 − 2,255)."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    r = _sources(
        write,
        call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 4000),
        prompt([{"type": "text", "text": "q" * 40}, image]),
        call("m2", 0, 0, 2255),
    )
    assert _rows(r) == {"prefix": 1000, "files": 500, "prompts": 755}
    assert (r.overflow_raw, r.reconciled, r.withdrawn) == (1255, 1255, 0)


def _compaction(write, at="last"):
    return _sources(
        write,
        call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 8000),
        call("m2", 0, 0, 3000),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s",
         "compactMetadata": {"trigger": "auto", "preTokens": 3000}},
        {"type": "user", "sessionId": "s", "isCompactSummary": True,
         "message": {"role": "user", "content": "s" * 800}},
        call("m3", 0, 0, 1300),
        at=at,
    )  # fmt: skip


def test_compaction_restarts_from_the_summary(write):
    """Call 2: prefix 1,000 + files 2,000 (8,000 chars) = 3,000. A compaction, then its 800-char summary
    (200): call 3 is 1,300 = prefix 1,000 + summary 200 + other 100; the files left with the boundary. The
    reference is the compaction at call 3, Δcontext 1,300 − 3,000."""
    r = _compaction(write)
    assert _step(r, 2) == {"prefix": 1000, "files": 2000}
    assert _rows(r) == {"prefix": 1000, "summary": 200, "other": 100}
    assert r.reference == {"kind": "compaction", "call": 3, "delta_tokens": -1700, "ts_ms": None,
                           "microcompactions": 0}  # fmt: skip
    before = _compaction(write, at="2")
    assert before.reference["kind"] == "session_start" and _rows(before) == {"prefix": 1000, "files": 2000}


def test_compaction_below_the_prefix_lowers_it(write):
    """After a compaction to 600 tokens, below the first call's prefix (1,000), the prefix is 600 and the
    summary scaled to nothing (reconciled 200)."""
    r = _sources(
        write,
        call("m1", 0, 0, 1000),
        call("m2", 0, 0, 3000),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s", "compactMetadata": {"preTokens": 3000}},
        {"type": "user", "sessionId": "s", "isCompactSummary": True, "message": {"role": "user", "content": "s" * 800}},
        call("m3", 0, 0, 600),
    )  # fmt: skip
    assert _rows(r) == {"prefix": 600}
    assert r.reconciled == 200


def test_microcompaction_removes_the_cleared_result(write):
    """Call 2: prefix 1,000 + files 400 (t1, 1,600 chars) + bash 100 (t2 `ls`, 400 chars) = 1,500. A
    microcompaction clears t1; call 3 (1,150): files 0, bash 100, other 1,150 − 1,100 = 50."""
    r = _sources(
        write,
        call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {"file_path": "/a"}), ("t2", "Bash", {"command": "ls"})]),
        result("t1", "x" * 1600),
        result("t2", "y" * 400),
        call("m2", 0, 0, 1500),
        {"type": "system", "subtype": "microcompact_boundary", "sessionId": "s",
         "microcompactMetadata": {"trigger": "auto", "preTokens": 1500, "compactedToolIds": ["t1"]}},
        call("m3", 0, 0, 1150),
    )  # fmt: skip
    assert _step(r, 2) == {"prefix": 1000, "files": 400, "bash": 100}
    assert _rows(r) == {"prefix": 1000, "bash": 100, "other": 50}
    assert r.reference["kind"] == "session_start" and r.reference["microcompactions"] == 1


def test_a_prompt_that_grew_less_than_the_output_withdraws(write):
    """Call 1: 1,000, output 100 (prose: 400 chars of text, no inputs). Call 2 is 1,050: the rows would be
    1,100, so 50 are withdrawn (from other: 0, thinking: 0, then the rest in proportion: prose 100 → 50)."""
    r = _sources(write, call("m1", 0, 0, 1000, 100, text="a" * 400), call("m2", 0, 0, 1050))
    assert _rows(r) == {"prefix": 1000, "prose": 50}
    assert (r.withdrawn, r.reconciled, r.overflow_raw) == (50, 0, 50)
    prose = next(x for x in r.sources if x["source"] == "prose")
    assert prose["estimated"] is True  # 50 tokens were withdrawn from it: no longer the exact output


def _estimated(report):
    return {x["source"]: x["estimated"] for x in report.sources}


def test_prose_is_exact_only_when_nothing_was_taken_from_a_final_output(write):
    """Call 1: 10,000 (cache read), output 1,000 final (stop_reason end_turn), 4,000 chars of text. Call 2:
    11,200 = 10,000 + 1,000 + 200 (other; the prompt "more" is 1 token, placed): prose 1,000, exact."""
    r = _sources(write, call("m1", 0, 0, 10_000, 1000, text="x" * 4000), prompt("more"), call("m2", 0, 0, 11_200))
    assert _rows(r) == {"prefix": 10_000, "prose": 1000, "prompts": 1, "other": 199}
    assert _estimated(r)["prose"] is False and _estimated(r)["thinking"] is False
    assert (r.withdrawn, r.output_lower_bound_calls, r.hidden_thinking_calls, r.thinking_exact) == (0, 0, 0, True)


def test_prose_withdrawn_is_estimated(write):
    """The reviewer's case (finding 3): call 2 is 10,500, 500 below 10,000 + 1,000: 500 withdrawn, all from
    prose (other and thinking are 0, the prefix last): prose 500, ≈ (it was the exact output less 500)."""
    r = _sources(write, call("m1", 0, 0, 10_000, 1000, text="x" * 4000), prompt("more"),
                 call("m2", 0, 0, 10_500, 5))  # fmt: skip
    assert _rows(r) == {"prefix": 10_000, "prose": 500}
    assert (r.withdrawn, r.reconciled) == (500, 1)  # the prompt's 1 token not placed
    assert _estimated(r)["prose"] is True
    assert "≈500" in render_sources_table(analyze([write("w.jsonl", call("m1", 0, 0, 10_000, 1000, text="x" * 4000),
                                                         call("m2", 0, 0, 10_500))], build=build_sources))  # fmt: skip


def test_a_partial_output_is_not_a_cap(write):
    """Finding 1: call 1 (10,000) was written while streaming: no stop_reason, output_tokens 3 (a lower
    bound, FORMATS G2), 800 chars of text (200), 400 chars of thinking (100), a Bash input
    `{"command":"` + 4,000 x + `"}` (4,014 chars: 1,003). Nothing is capped at 3: the three estimates sum
    to 1,303 and are placed with the step's other estimates. Call 2: 10,000 + 1,500: the result of 2,000
    chars (500) and the three fill 1,803 > 1,500, scaled by 1,500 / 1,803 (floor): bash 500 · … = 415,
    thinking 83, tool inputs 834, prose 166; reconciled 1,803 − 1,498 = 305, other 2."""
    r = _sources(
        write,
        call("m1", 0, 0, 10_000, 3, thinking="t" * 400, text="p" * 800,
             tools=[("t1", "Bash", {"command": "x" * 4000})], stop=None),
        result("t1", "y" * 2000),
        call("m2", 0, 0, 11_500),
    )  # fmt: skip
    assert _rows(r) == {"prefix": 10_000, "bash": 415, "thinking": 83, "tool_inputs": 834, "prose": 166, "other": 2}
    assert (r.reconciled, r.withdrawn, r.overflow_raw) == (305, 0, 303)
    assert (r.output_lower_bound_calls, r.thinking_exact) == (1, False)
    est = _estimated(r)
    assert est["prose"] and est["thinking"] and est["tool_inputs"]


def test_a_partial_output_within_the_gap_is_placed_whole(write):
    """Call 1 partial (output 2) with 400 chars of text (100) and a Read input `{"file_path":"/a"}` (18
    chars: 4); call 2 grew by 5,000: prose 100, tool inputs 4, other 5,000 − 104 = 4,896. Capped as
    before, tool inputs and prose would have been 2 and 0."""
    r = _sources(write, call("m1", 0, 0, 10_000, 2, text="p" * 400, tools=[("t1", "Read", {"file_path": "/a"})],
                            stop=None), call("m2", 0, 0, 15_000))  # fmt: skip
    assert _rows(r) == {"prefix": 10_000, "tool_inputs": 4, "prose": 100, "other": 4896}
    assert r.reconciled == 0


def test_hidden_thinking_is_not_exact_zero(write):
    """Finding 2: thinking blocks with no text and a signature (the output holds thinking the trace does
    not show). Call 1's output is final, 900 tokens: text 400 chars (100), no inputs, so thinking ≈ 900 −
    100 = 800 and prose ≈ 100. Call 2: 10,000 + 900 + 100 (other). Call 2's output is a lower bound
    (stop None) with hidden thinking: no estimate for it; call 3 = 11,000 + 60 + 40 chars of text (10):
    prose +10, other +50."""
    r = _sources(
        write,
        call("m1", 0, 0, 10_000, 900, thinking="", text="a" * 400, signature="S" * 600),
        call("m2", 0, 0, 11_000, 4, thinking="", text="b" * 40, signature="S" * 352, stop=None),
        call("m3", 0, 0, 11_070),
    )
    assert _step(r, 2) == {"prefix": 10_000, "thinking": 800, "prose": 100, "other": 100}
    assert _rows(r) == {"prefix": 10_000, "thinking": 800, "prose": 110, "other": 160}
    assert (r.hidden_thinking_calls, r.thinking_exact, r.output_lower_bound_calls) == (2, False, 1)
    est = _estimated(r)
    assert est["thinking"] is True and est["prose"] is True
    text = render_sources_table(analyze([write("h.jsonl", call("m1", 0, 0, 10_000, 900, thinking="", text="a" * 400),
                                               call("m2", 0, 0, 11_000))],
                                        build=partial(build_sources, calibrated=False)))  # fmt: skip
    assert "≈800" in text and "thinking hidden in 1 call " in text


def test_hidden_thinking_with_no_text_gives_prose_nothing(write):
    """A final output of 500 with hidden thinking, no text, a 40-char input (10): tool inputs 10,
    thinking 490, prose 0 (not 490 exact, as before)."""
    r = _sources(write, call("m1", 0, 0, 10_000, 500, thinking="", tools=[("t1", "Grep", {"pattern": "p" * 26})]),
                 call("m2", 0, 0, 10_500))  # fmt: skip
    assert _rows(r) == {"prefix": 10_000, "thinking": 490, "tool_inputs": 10}


def _command(text="<command-name>/clear</command-name>"):
    return prompt(text)


def test_a_small_drop_after_clear_restarts_the_rows(write):
    """Finding 4 (the reviewer's smallclear.jsonl): call 1 20,010 (cache read 20,000: the prefix), a
    20,000-char Read (5,000); call 2 25,030; then /clear and a new question; call 3 20,005 (−20 %, below
    30 %). The /clear is the reference (call 3, Δcontext 20,005 − 25,030 = −5,025): the rows restart from
    the prefix (20,000) and hold what came after the /clear line, a gap of 5: the command's output line
    (45 chars: 11) and the question (12 chars: 3), 14 scaled by 5 / 14: 3 + 1 = prompts 4, reconciled 10,
    other 1. Nothing withdrawn; before, the rows kept the Read and withdrew 5,045 pro rata."""
    r = _sources(
        write,
        prompt("p" * 40),
        call("m1", 10, 0, 20_000, 20, tools=[("t1", "Read", {"file_path": "a.py"})]),
        result("t1", "a" * 20_000),
        call("m2", 0, 5020, 20_010, 20, text="ok"),
        _command("<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        _command("<local-command-stdout></local-command-stdout>"),
        prompt("new question"),
        call("m3", 5, 0, 20_000, 20, text="hi"),
    )
    assert (r.reference["kind"], r.reference["call"], r.reference["delta_tokens"]) == ("clear", 3, -5025)
    assert _rows(r) == {"prefix": 20_000, "prompts": 4, "other": 1}
    assert (r.withdrawn, r.reconciled) == (0, 10)


def test_a_drop_of_exactly_30_percent_is_the_reference(write):
    """Finding 5: 187,240 → 131,068 is a drop of exactly 30 %: the reference is a drop at call 2."""
    r = _sources(write, call("m1", 0, 0, 187_240, 1, text="a"), prompt("next"), call("m2", 0, 0, 131_068))
    assert (r.reference["kind"], r.reference["call"], r.reference["delta_tokens"]) == ("drop", 2, -56_172)


def test_a_glob_read_is_bash_output(write):
    """Finding 6: `cat src/*.py` prints any number of files: its 4,000-char result is bash output (1,000),
    not a file read; `cat a.py 2>/dev/null` is one (files 250)."""
    r = _sources(
        write,
        call("m1", 0, 0, 10_000, 30, tools=[("t1", "Bash", {"command": "cat src/*.py"}),
                                            ("t2", "Bash", {"command": "cat a.py 2>/dev/null"})]),
        result("t1", "x" * 4000),
        result("t2", "y" * 1000),
        call("m2", 0, 0, 12_000),
    )  # fmt: skip
    assert _rows(r)["bash"] == 1000 and _rows(r)["files"] == 250


def test_at_with_leading_zeros_and_counts_in_words(write):
    """Finding 8: `--at 007` is call 7 and echoed as 7; one call is "1 call"; --at past the end says why
    in the table too."""
    records = [call("m1", 0, 0, 1000, 5, text="a" * 20)] + [call(f"m{n}", 0, 0, 1000 + 10 * n) for n in range(2, 8)]
    r = _sources(write, *records, at="007")
    assert (r.at, r.call) == ("7", 7)
    one = _sources(write, call("m1", 0, 0, 1000), at="3")
    assert "--at 3: the thread has 1 call" in one.warnings
    path = write("one.jsonl", call("m1", 0, 0, 1000))
    text = render_sources_table(analyze([path], build=partial(build_sources, at="3")))
    assert "no call to split: --at 3: the thread has 1 call" in text


def test_estimator_line_says_when_calibration_is_no_better():
    """Finding 8: a calibrated median error at or above the rule's is not shown as an improvement (B34:
    rule 27.5 %, calibrated 45.7 %); one compared call is "1 call"."""
    e = {
        "rule_chars_per_token": 3.5,
        "calls_compared": 1,
        "rule_median_error": 0.275,
        "rule_worst_error": 0.275,
        "chars_per_token": 0.01,
        "results_chars_per_token": None,
        "prompts_chars_per_token": None,
        "inputs_chars_per_token": None,
        "calibrated_median_error": 0.457,
        "calibrated_worst_error": 0.457,
    }
    line = estimator_line(e)
    assert line.endswith("median 45.7%, worst 45.7%, no better than the rule") and "over 1 call;" in line
    assert not estimator_line(e | {"calibrated_median_error": 0.1}).endswith("no better than the rule")


def test_at_peak_and_out_of_range(write):
    records = [call("m1", 0, 0, 1000), call("m2", 0, 0, 5000), call("m3", 0, 0, 2000)]
    assert _sources(write, *records, at="peak").call == 2
    far = _sources(write, *records, at="9")
    assert far.call is None and far.sources == [] and any("--at 9" in w for w in far.warnings)
    with pytest.raises(ValueError, match="last, peak"):
        _sources(write, *records, at="first")
    assert [is_at_choice(a) for a in ("last", "peak", "3", "0", "-1", "²")] == [True, True, True, False, False, False]


def test_no_calls_is_a_warning_not_an_error(write):
    r = _sources(write, prompt("hello"))
    assert r.call is None and r.steps == [] and r.sources == []
    assert "no call to split" in render_sources_table(analyze([write("e.jsonl", prompt("x"))], build=build_sources))


def test_unreadable_usage_carries_to_the_next_call(write):
    """Call 2's usage is 0 (unreadable): it has no rows; the result before it lands on call 3."""
    r = _sources(
        write,
        call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {"file_path": "/a"})]),
        result("t1", "x" * 400),
        call("m2", 0, 0, 0),
        call("m3", 0, 0, 1100),
    )
    assert r.steps[1] == {"call": 2, "prompt_tokens": None, "sources": None}
    assert _rows(r) == {"prefix": 1000, "files": 100}


def test_subagent_thread(write):
    """--thread: the subagent's own window, its calls numbered from 1."""
    side = call("s1", 0, 0, 700)
    side.update(isSidechain=True, agentId="ag1")
    r = build_sources(read_trace(write("t.jsonl", call("m1", 0, 0, 1000), side))[0], thread="ag1")
    assert (r.thread, r.calls, r.context_tokens) == ("ag1", 1, 700)
    missing = build_sources(read_trace(write("u.jsonl", call("m1", 0, 0, 1000)))[0], thread="nope")
    assert missing.call is None and "--thread nope: no such thread in this trace; it has no subagent thread" in (
        missing.warnings)  # fmt: skip
    assert (missing.thread_found, missing.thread_list) == (False, ["main"])


def test_thread_by_the_ids_a_user_sees():
    """Finding 7: a-ralph-subagent's subagent (stream-json) is keyed by its Task tool_use id; its result's
    toolUseResult.agentId 96dad8ed (the id its agent file and `context usage --breakdown` show) names it
    too. 12 calls."""
    (run1, _) = read_trace(str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl"))
    task = "toolu_01KHp6GtFD1DBDvYDrp6vfHh"
    for given in ("96dad8ed", task, "agent-" + task):
        r = build_sources(run1, thread=given)
        assert (r.thread, r.calls, r.call, r.thread_found) == (task, 12, 12, True), given
    assert thread_ids(run1) == {"main": "main", task: task, "agent-" + task: task, "96dad8ed": task}


def test_thread_by_agent_id_or_task_id_in_a_transcript():
    """b-spotter-compaction's subagent file agent-a2898e3.jsonl: its thread is a2898e3; the Task call that
    started it, toolu_017pLRuPHYTX5t99EnLyV53m, names it too (the result's agentId). 12 calls."""
    (source,) = find_traces([str(COMPACTION)])
    (trace,) = read_trace(source.path, source.subagents)
    for given in ("a2898e3", "agent-a2898e3", "toolu_017pLRuPHYTX5t99EnLyV53m"):
        assert (build_sources(trace, thread=given).thread, build_sources(trace, thread=given).calls) == ("a2898e3", 12)


def test_unknown_thread_exits_2_naming_the_threads():
    """An id no trace has is a usage error (exit 2, as a bad --at), naming the threads; stdout stays empty."""
    out = CliRunner().invoke(app, ["context", "sources", str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl"),
                                   "--thread", "nope", "--no-cache"])  # fmt: skip
    assert out.exit_code == 2 and out.stdout == ""
    assert "names no thread of the traces read" in out.stderr and "toolu_01KHp6GtFD1DBDvYDrp6vfHh" in out.stderr
    assert unknown_thread([], "x") is None  # no trace read: nothing to say


def test_a_run_with_only_subagent_calls_points_to_thread(write):
    """stream-json: the main thread has no call, a subagent (parent_tool_use_id tu1) has one: the warning
    names it for --thread, and the table says why there is nothing to split."""
    sub = assistant("s1", 0, 0, 700, parent="tu1")
    path = write("s.jsonl", {"type": "system", "subtype": "init", "session_id": "s"}, sub)
    r = build_sources(read_trace(path)[0])
    assert r.call is None and "no main-thread call: no window to split; its subagent threads (--thread): tu1" in (
        r.warnings)  # fmt: skip
    assert "no call to split: no main-thread call" in render_sources_table(analyze([path], build=build_sources))


# -- samples ------------------------------------------------------------------------------------------------------


def _sample_paths():
    return sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())


@pytest.fixture(scope="module")
def sample_sources():
    run = analyze(_sample_paths(), build=build_sources, workers=1)
    assert run.ok
    return {r.trace.split("samples/", 1)[1]: r for r in run.reports}


def test_every_sample_sums_to_the_size_at_every_call(sample_sources, sample_reports):
    """Every call of every sample: the rows sum to the exact prompt size, and none is negative; a step for
    every measured main-thread call `context trace` counts."""
    steps = 0
    for r in sample_sources.values():
        for s in r.steps:
            if s["sources"] is not None:
                assert sum(s["sources"].values()) == s["prompt_tokens"], (r.trace, s["call"])
                assert min(s["sources"].values()) >= 0, (r.trace, s["call"])
                steps += 1
        if r.context_tokens is None:  # a trace with no measured call (the Codex rollout without token counts)
            assert r.sources == [] or sum(x["tokens"] for x in r.sources) == 0, r.trace
        else:
            assert sum(x["tokens"] for x in r.sources) == r.context_tokens
    assert steps == sum(r.calls - r.unmeasured_calls for r in sample_reports.values()) == 661 + 255


#: Per sample (its last call, rows at the trace's own calibration): context size, overflow_raw, reconciled,
#: withdrawn, the prefix row (the first prompt less what it carried).
SAMPLE_FIGURES = {
    "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (106060, 0, 0, 0, 26394),
    "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (66603, 0, 0, 0, 22370),
    "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": (68182, 1093, 1361, 0, 16238),
    "b-ccl-image-and-errors.jsonl": (78284, 6716, 4660, 3458, 16399),
    "b-ccl-thinking-sonnet45.jsonl": (72484, 0, 1816, 0, 15715),
    "a-ralph-subagent-opus45-haiku45.jsonl#1": (133511, 0, 2011, 0, 25104),
    "a-ralph-27runs-with-separators.jsonl#1": (80284, 0, 797, 0, 26329),
}


@pytest.mark.parametrize(("name", "figures"), SAMPLE_FIGURES.items())
def test_sample_honesty_figures(sample_sources, name, figures):
    r = sample_sources[name]
    prefix = next(x["tokens"] for x in r.sources if x["source"] == "prefix")
    assert (r.context_tokens, r.overflow_raw, r.reconciled, r.withdrawn, prefix) == figures


def test_partial_outputs_of_a_real_sample_are_not_capped(sample_sources):
    """Finding 1 on b-ccl-image-and-errors: all 101 calls were written with no stop_reason (their output
    a lower bound). Its tool inputs row at the last call is Σ over calls 1–100 of (characters of each
    call's tool_use inputs as compact JSON) // 4, computed here from the raw lines: 9,189 (1,778 when
    capped at the output); prose is ≈ and at most their text // 4 (4,046). The rows take the same
    characters at the trace's own rates (`calibration`: inputs 2.91, output 2.68 chars/token)."""
    per_call: dict[str, list[int]] = {}
    for line in (SAMPLES / "b-ccl-image-and-errors.jsonl").read_text().splitlines():
        rec = orjson.loads(line)
        if rec.get("type") != "assistant" or rec.get("isSidechain"):
            continue
        seen = per_call.setdefault(rec["message"]["id"], [0, 0])
        for block in rec["message"]["content"]:
            if block["type"] == "tool_use":
                seen[0] += len(json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False))
            elif block["type"] == "text":
                seen[1] += len(block["text"])
    earlier = list(per_call.values())[:-1]
    inputs, text = sum(i // 4 for i, _ in earlier), sum(t // 4 for _, t in earlier)
    r = sample_sources["b-ccl-image-and-errors.jsonl"]
    rows = {x["source"]: x for x in r.sources}
    assert (len(per_call), inputs, text) == (101, 9189, 4046)
    rate_in, rate_out = (r.calibration[k]["chars_per_token"] for k in ("inputs", "output"))
    assert (rate_in, rate_out) == (2.908, 2.6812)
    at_rate = sum(int(i / rate_in) for i, _ in earlier)
    # placed whole but where a step's estimates overshot its growth (reconciled) or it shrank (withdrawn)
    assert at_rate == 12_652 and 1_778 < rows["tool_inputs"]["tokens"] == 12_226 <= at_rate
    assert rows["prose"]["tokens"] <= sum(int(t / rate_out) for _, t in earlier)
    assert rows["prose"]["estimated"] and r.output_lower_bound_calls == 101


def test_hidden_thinking_of_a_real_sample(sample_sources):
    """Finding 2 on b-ccl-agent-teams-opus47: 14 of its 17 main-thread calls carry thinking blocks with no
    text (a signature only), every output final. Computed here from the raw lines over calls 1–16: per
    call, inputs i = min(input chars // 4, output), prose p = min(text chars // 4, output − i), thinking
    the rest (hidden) — Σ thinking 14,466, Σ prose 402 (the final outputs are placed whole: nothing of
    them is reconciled or withdrawn here). Before, thinking read exact 0 and prose ≈14,868. The rows take
    the characters at the trace's own rates (`calibration`), the same rule."""
    per_call: dict[str, dict] = {}
    path = SAMPLES / "b-ccl-agent-teams-opus47" / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    for line in path.read_text().splitlines():
        rec = orjson.loads(line)
        if rec.get("type") != "assistant" or rec.get("isSidechain"):
            continue
        msg = rec["message"]
        c = per_call.setdefault(msg["id"], {"out": 0, "inputs": 0, "text": 0, "hidden": False})
        c["out"] = max(c["out"], msg["usage"]["output_tokens"])
        for block in msg["content"]:
            if block["type"] == "tool_use":
                c["inputs"] += len(json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False))
            elif block["type"] == "text":
                c["text"] += len(block["text"])
            elif block["type"] == "thinking" and not block["thinking"]:
                c["hidden"] = True
    r = sample_sources["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    rows = {x["source"]: x for x in r.sources}

    def split(rate_in, rate_out):
        thinking = prose = 0
        for c in list(per_call.values())[:-1]:
            i = min(int(c["inputs"] / rate_in), c["out"])
            p = min(int(c["text"] / rate_out), c["out"] - i) if c["hidden"] else c["out"] - i
            thinking, prose = thinking + c["out"] - i - p, prose + p
        return thinking, prose

    assert (len(per_call), sum(c["hidden"] for c in per_call.values()), *split(4, 4)) == (17, 14, 14466, 402)
    thinking, prose = split(r.calibration["inputs"]["chars_per_token"], r.calibration["output"]["chars_per_token"])
    assert (r.hidden_thinking_calls, r.output_lower_bound_calls, r.thinking_exact) == (14, 0, False)
    assert (rows["thinking"]["tokens"], rows["prose"]["tokens"]) == (thinking, prose)
    assert rows["thinking"]["estimated"] and rows["prose"]["estimated"]


def test_compaction_sample_reference_is_call_62(sample_sources):
    """b-spotter-compaction: the window at the last call is counted from the compaction at call 62
    (164,831 → 36,081 tokens), its summary in its own row; at call 61 it is the session start."""
    r = sample_sources["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert (r.reference["kind"], r.reference["call"], r.reference["delta_tokens"]) == ("compaction", 62, -128750)
    assert _rows(r)["summary"] == 6022
    at61 = analyze([str(COMPACTION)], build=partial(build_sources, at="61")).reports[0]
    assert at61.reference["kind"] == "session_start" and at61.context_tokens == 164831
    assert "summary" not in _rows(at61)


def test_stream_json_has_no_times(sample_sources):
    r = sample_sources["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    assert r.timestamps_known is False and r.reference["ts_ms"] is None
    assert "no timestamps" in render_sources_table(analyze([str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")],
                                                           build=build_sources))  # fmt: skip


@pytest.mark.parametrize("steps", [False, True], ids=["table", "steps"])
def test_compaction_sample_golden(request, steps):
    """`context sources` on the compaction sample (and with --steps) matches the reviewed golden text."""
    run = analyze([str(COMPACTION)], build=build_sources)
    text = render_sources_table(run, steps=steps)
    text = text.replace(str(SAMPLES), "samples")
    path = GOLDEN / f"b-spotter-compaction.sources{'-steps' if steps else ''}.txt"
    check_golden(request, path, text + "\n")


def test_cli_json_and_table(write):
    path = write("c.jsonl", call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {})]), result("t1", "x" * 400),
                 call("m2", 0, 0, 1100))  # fmt: skip
    out = CliRunner().invoke(app, ["context", "sources", path, "--json", "--no-cache"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    (obj,) = orjson.loads(out.stdout)
    assert obj["schema_version"] == SCHEMA_VERSIONS["sources"] and obj["call"] == 2 and len(obj["steps"]) == 2
    assert [s["source"] for s in obj["sources"]] == list(ROWS)
    out = CliRunner().invoke(app, ["context", "sources", path, "--no-cache", "--steps", "--at", "1"])
    assert out.exit_code == 0 and "call 1 of 2 (1)" in out.stdout and "| system prompt + tools" in out.stdout
    bad = CliRunner().invoke(app, ["context", "sources", path, "--at", "nope"])
    assert bad.exit_code == 2


def test_json_renders_every_sample(sample_sources):
    run = analyze([str(COMPACTION)], build=build_sources)
    (obj,) = orjson.loads(render_sources_json(run))
    assert obj["estimator"]["calls_compared"] == 137 and obj["reference"]["call"] == 62


def test_panel_for_the_html_report(write):
    (trace,) = read_trace(write("t.jsonl", call("m1", 0, 0, 1000), call("m2", 0, 0, 1100)))
    panel = sources_panel_of(build_sources(trace))
    assert panel["kind"] == "table" and panel["rows"] == [
        {"source": "system prompt + tools, not itemised in the trace", "tokens": "≈1,000", "share": "91%"},
        {"source": "other", "tokens": "≈100", "share": "9%"},
        {
            "source": "other: what the harness adds and the trace does not write (system reminders, message framing)",
            "tokens": "≈100",
            "share": "9%",
        },
    ]
    (empty,) = read_trace(write("e.jsonl", prompt("x")))
    assert sources_panel_of(build_sources(empty)) is None


def test_every_json_key_is_snake_case_and_documented(sample_sources):
    """Every key `context sources --json` emits over the samples is snake_case and in docs/sources.md or
    docs/estimator.md (the trace facts in docs/definitions.md)."""
    keys = json_keys(orjson.loads(orjson.dumps([r.to_dict() for r in sample_sources.values()])))
    docs = "".join((SAMPLES.parent / "docs" / n).read_text() for n in ("sources.md", "estimator.md", "definitions.md"))
    assert_keys_documented(keys, docs, at_least=40)
