"""`context sources` (issue 12): the window's rows on hand-built traces whose rows the docstrings compute,
every bundled sample (rows sum to the size at every call, none negative, the honesty figures), the golden
output of the compaction sample, and the command."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli import app
from contexttrace.context_sources import ROWS, build_sources, is_at_choice, sources_panel
from contexttrace.reader import read_trace
from contexttrace.render_sources import render_sources_json, render_sources_table
from contexttrace.runner import analyze

from .conftest import SAMPLES, result

GOLDEN = Path(__file__).resolve().parent / "golden"
COMPACTION = SAMPLES / "b-spotter-compaction"


def call(mid, inp, cw, cr, out=0, *, thinking="", text="", tools=()):
    """A transcript assistant line with thinking, text and tool_use blocks."""
    content = []
    if thinking:
        content.append({"type": "thinking", "thinking": thinking, "signature": "s"})
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": tid, "name": name, "input": inp_} for tid, name, inp_ in tools]
    usage = {"input_tokens": inp, "cache_creation_input_tokens": cw, "cache_read_input_tokens": cr,
             "output_tokens": out}  # fmt: skip
    return {"type": "assistant", "sessionId": "s",
            "message": {"id": mid, "model": "claude-sonnet-4-5", "content": content, "usage": usage}}  # fmt: skip


def prompt(content):
    return {"type": "user", "sessionId": "s", "message": {"role": "user", "content": content}}


def attachment(chars):
    return {"type": "attachment", "sessionId": "s", "attachment": {"type": "todo_reminder", "content": "w" * chars}}


def _sources(write, *records, at="last"):
    (trace,) = read_trace(write("t.jsonl", *records))
    return build_sources(trace, at=at)


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
    assert prose["estimated"] is False  # no thinking nor tool input taken out of the output: exact


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
    assert missing.call is None and any("'nope'" in w for w in missing.warnings)


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
        assert sum(x["tokens"] for x in r.sources) == r.context_tokens
    assert steps == sum(r.calls - r.unmeasured_calls for r in sample_reports.values()) == 661


#: Per sample (its last call): context size, overflow_raw, reconciled, withdrawn, the prefix row.
SAMPLE_FIGURES = {
    "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (106060, 0, 0, 0, 26447),
    "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (66603, 0, 1700, 0, 27860),
    "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": (68182, 0, 1499, 0, 16340),
    "b-ccl-image-and-errors.jsonl": (78284, 0, 1845, 3596, 16399),
    "b-ccl-thinking-sonnet45.jsonl": (72484, 0, 434, 0, 16376),
    "a-ralph-subagent-opus45-haiku45.jsonl#1": (133511, 0, 8, 0, 25101),
    "a-ralph-27runs-with-separators.jsonl#1": (80284, 0, 11, 0, 26327),
}


@pytest.mark.parametrize(("name", "figures"), SAMPLE_FIGURES.items())
def test_sample_honesty_figures(sample_sources, name, figures):
    r = sample_sources[name]
    prefix = next(x["tokens"] for x in r.sources if x["source"] == "prefix")
    assert (r.context_tokens, r.overflow_raw, r.reconciled, r.withdrawn, prefix) == figures


def test_compaction_sample_reference_is_call_62(sample_sources):
    """b-spotter-compaction: the window at the last call is counted from the compaction at call 62
    (164,831 → 36,081 tokens), its summary in its own row; at call 61 it is the session start."""
    r = sample_sources["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert (r.reference["kind"], r.reference["call"], r.reference["delta_tokens"]) == ("compaction", 62, -128750)
    assert _rows(r)["summary"] == 3935
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
    if request.config.getoption("--update-golden", default=False) or not path.exists():
        path.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == path.read_text(encoding="utf-8")


def test_cli_json_and_table(write):
    path = write("c.jsonl", call("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {})]), result("t1", "x" * 400),
                 call("m2", 0, 0, 1100))  # fmt: skip
    out = CliRunner().invoke(app, ["context", "sources", path, "--json", "--no-cache"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    (obj,) = orjson.loads(out.stdout)
    assert obj["schema_version"] == 1 and obj["call"] == 2 and len(obj["steps"]) == 2
    assert [s["source"] for s in obj["sources"]] == list(ROWS)
    out = CliRunner().invoke(app, ["context", "sources", path, "--no-cache", "--steps", "--at", "1"])
    assert out.exit_code == 0 and "call 1 of 2 (1)" in out.stdout and "| prefix" in out.stdout
    bad = CliRunner().invoke(app, ["context", "sources", path, "--at", "nope"])
    assert bad.exit_code == 2


def test_json_renders_every_sample(sample_sources):
    run = analyze([str(COMPACTION)], build=build_sources)
    (obj,) = orjson.loads(render_sources_json(run))
    assert obj["estimator"]["calls_compared"] == 137 and obj["reference"]["call"] == 62


def test_panel_for_the_html_report(write):
    (trace,) = read_trace(write("t.jsonl", call("m1", 0, 0, 1000), call("m2", 0, 0, 1100)))
    panel = sources_panel(trace, None)
    assert panel["kind"] == "table" and panel["rows"] == [
        {"source": "prefix", "tokens": "≈1,000", "share": "91%"},
        {"source": "other", "tokens": "≈100", "share": "9%"},
    ]
    (empty,) = read_trace(write("e.jsonl", prompt("x")))
    assert sources_panel(empty, None) is None


def test_every_json_key_is_snake_case_and_documented(sample_sources):
    """Every key `context sources --json` emits over the samples is snake_case and in docs/sources.md or
    docs/estimator.md (the trace facts in docs/definitions.md)."""
    import re

    keys: set[str] = set()

    def walk(value):
        if isinstance(value, dict):
            for k, v in value.items():
                keys.add(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(orjson.loads(orjson.dumps([r.to_dict() for r in sample_sources.values()])))
    docs = "".join((SAMPLES.parent / "docs" / n).read_text() for n in ("sources.md", "estimator.md", "definitions.md"))
    assert len(keys) > 40
    assert sorted(k for k in keys if not re.match(r"^[a-z][a-z0-9_]*$", k)) == []
    assert sorted(k for k in keys if f"`{k}`" not in docs) == []
