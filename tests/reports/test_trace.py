"""The `context trace` report (`reports/trace.py`): what is measured when usage cannot be read, the fill as
one figure, spikes numbered from 1, missing subagents, a trace without a model call, its invariants, and
every key of `context trace --json` (snake_case and documented, collected over every sample and case)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from contexttrace import analyze, read_trace
from contexttrace.cli.app import app
from contexttrace.render.explain import render_explain
from contexttrace.render.trace import render_json, render_table
from contexttrace.reports.results import RunResult
from contexttrace.reports.trace import build_report
from contexttrace.reports.usage import build_usage

from ..conftest import (
    CASES,
    GOOD,
    ROOT,
    SAMPLES,
    assistant,
    final_call,
    float_usage_call,
    jsonl,
    memory_trace,
    result,
    write_file,
)

runner = CliRunner()

DOCS = (ROOT / "docs" / "definitions.md", ROOT / "docs" / "health-weather.md")
#: Objects whose keys are data (tool names, MCP server names), not names of figures.
DATA_KEYED = {"by_tool", "by_mcp_server"}
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _inputs() -> list[str]:
    paths = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())
    return paths + sorted(str(p) for p in CASES.rglob("*.jsonl"))


def _keys(value: object, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            out.setdefault(key, f"{path}.{key}")
            if key not in DATA_KEYED:
                _keys(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        for item in value:
            _keys(item, f"{path}[]", out)


def emitted_keys() -> dict[str, str]:
    """key -> the first path it was seen at, over `--json --calls` of every sample and case."""
    run = analyze(_inputs())
    out: dict[str, str] = {}
    for obj in orjson.loads(render_json(run, with_calls=True)):
        _keys(obj, "", out)
    return out


def test_every_trace_json_key_is_snake_case_and_documented():
    keys = emitted_keys()
    assert len(keys) > 60  # the walk saw the nested objects (health, weather, events), not just the top
    docs = "".join(Path(p).read_text() for p in DOCS)
    not_snake = sorted(path for key, path in keys.items() if not SNAKE.match(key))
    undocumented = sorted(path for key, path in keys.items() if f"`{key}`" not in docs)
    assert not_snake == []
    assert undocumented == []


def test_b38_no_model_call_is_not_graded():
    """B38: calls 0, synthetic errors 1, no health grade nor weather; another trace in the run prints in full."""
    run = analyze([str(CASES / "B38.jsonl"), GOOD])
    assert not run.failures
    rep, good = run.reports
    assert (rep.calls, rep.synthetic_errors) == (0, 1)
    assert rep.extra["health"]["grade"] is None and rep.extra["health"]["reason"]
    assert rep.extra["weather"]["level"] is None and rep.extra["weather"]["reason"]
    assert good.calls == 36


@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),
            st.integers(0, 10**6),
            st.integers(0, 10**6),
            st.booleans(),
            st.sampled_from(["Read", "Bash"]),
        ),
        min_size=1,
        max_size=12,
    )
)
def test_metric_invariants(rows):
    """peak ≥ first, growth = peak − first, failed ≤ tools, repeat ≤ tools, fill ≥ 0."""
    records = []
    for i, (inp, cw, cr, fail, tool) in enumerate(rows):
        records.append(assistant(f"m{i}", inp, cw, cr, tools=[(f"t{i}", tool, {"x": inp})]))
        records.append(result(f"t{i}", "r" * inp, is_error=fail))
    [t] = read_trace("mem.jsonl", fh=io.BytesIO(jsonl(*records)))
    rep = build_report(t, window=200000)
    assert rep.peak >= rep.first
    assert rep.growth == rep.peak - rep.first
    assert rep.failed <= rep.tools and rep.repeat <= rep.tools
    assert rep.fill is not None and rep.fill >= 0


def _session_without_agent_file(tmp_path) -> str:
    task = ("t1", "Task", {"prompt": "look", "description": "explore", "subagent_type": "Explore"})
    return write_file(
        tmp_path,
        jsonl(
            final_call("m1", 5_000, tools=[task]),
            result("t1", "found it", toolUseResult={"agentId": "ea02459f", "status": "completed"}),
            final_call("m2", 5_500),
        ),
        "session.jsonl",
    )


def test_missing_subagents_warned_by_both_reports_once(tmp_path):
    """`context trace` said nothing (subagent_calls 0) while `context usage` printed the same sentence
    twice on stderr; now one function finds them, both reports carry the same warning, each prints it once."""
    path = _session_without_agent_file(tmp_path)
    note = "1 subagent(s) referenced but not found; totals exclude them (ea02459f)"
    [r] = analyze([path]).reports
    assert (r.subagent_calls, r.warnings) == (0, [note])
    [u] = analyze([path], build=build_usage).reports
    assert (u.missing_subagents, u.warnings) == (["ea02459f"], [note])
    assert u.total["lower_bound_reasons"] == ["missing_subagents"]
    traced = runner.invoke(app, ["context", "trace", path, "--json"])
    assert traced.stderr.count("referenced but not found") == 1
    assert orjson.loads(traced.stdout)[0]["warnings"] == [note]
    used = runner.invoke(app, ["context", "usage", path])
    assert used.stderr.count("referenced but not found") == 1
    assert "cost is a lower bound ≥$0.0318: subagents are missing" in used.stderr  # (10,500 × $3 + 20 × $15) / 1M


def test_calls_with_unreadable_usage_are_not_graded_as_measured():
    """Usage counts written as floats read as 0 (warned), yet Context Fill graded "100 A: prompt 0" and
    first/peak/growth printed 0 as figures. Nothing was measured: Context Fill has no data (the spec's 100,
    `has_data` false), first/peak/growth are `-` in the table, ctx_pressure abstains, and a warning says why."""
    t = memory_trace(float_usage_call("m1"), float_usage_call("m2"), float_usage_call("m3"))
    r = build_report(t)
    assert (r.calls, r.first, r.peak, r.growth, r.fill, r.unmeasured_calls, r.spikes) == (3, 0, 0, 0, 0.0, 3, [])
    assert (
        "none of the 3 main-thread call(s) has readable usage (read as 0): no prompt size was measured, so first, "
        "peak, growth and fill are unknown (0 in JSON, - in the table) and Context Fill has no data (spec 000's 100)"
    ) in r.warnings
    h = r.extra["health"]
    fill = h["signals"][0]
    assert (fill["name"], fill["has_data"], fill["value"], h["fill_percent"]) == ("Context Fill", False, 100, None)
    assert fill["why"] == "no call's prompt size could be read (usage read as 0 on all 3): spec's 100"
    assert h["grade"] == "A" and h["score"] == 100  # every signal 100: no data, no compaction, no tool call
    ctx = r.extra["weather"]["signals"][0]
    assert (ctx["name"], ctx["severity"], ctx["measure"]) == ("ctx_pressure", None, None)
    assert r.extra["weather"]["stats"]["context_fill_frac"] is None
    row = render_table(RunResult([r], [])).splitlines()[2]
    assert [c.strip() for c in row.split("|")[2:7]] == ["3", "-", "-", "-", "200k inferred"]
    windowed = build_report(t, window=200_000)
    assert windowed.fill == 0.0  # 0 in JSON, as first/peak/growth are (the warning says so); `-` in the table
    row = render_table(RunResult([windowed], [])).splitlines()[2]
    assert [c.strip() for c in row.split("|")[2:8]] == ["3", "-", "-", "-", "200k given", "-"]


def test_unmeasured_calls_are_left_out_of_first_peak_growth_and_fill():
    """Calls 1, 3 and 5 unreadable, 2 and 4 measured: first/peak/growth over 2 and 4; the fill is call 4's,
    named as the last with readable usage; the turn readings do not take a 0 for a context."""
    t = memory_trace(
        float_usage_call("m1"),
        assistant("m2", 50_000, 0, 0),
        float_usage_call("m3"),
        assistant("m4", 80_000, 0, 0),
        float_usage_call("m5"),
    )
    r = build_report(t, window=200_000)
    assert (r.first, r.peak, r.growth, r.fill, r.unmeasured_calls) == (50_000, 80_000, 30_000, 0.4, 3)
    h = r.extra["health"]
    assert (h["fill_percent"], h["signals"][0]["value"], h["signals"][0]["measure"]) == (40.0, 100, 0.4)
    assert h["signals"][0]["why"] == "call #4's (the last with readable usage) prompt 80,000 of a 200,000-token window"
    ctx = r.extra["weather"]["signals"][0]
    assert (ctx["measure"], ctx["calls"]) == (0.4, [])  # 40 %: severity 0, not active
    assert ctx["why"] == "call #4's (the last with readable usage) prompt is 40% of 200,000 tokens"
    assert "3 of 5 main-thread call(s) have unreadable usage (read as 0)" in r.warnings[-1]
    u = build_usage(t, window=200_000)
    assert (u.turn_figures["context_tokens"], u.turn_figures["context_band"]) == (None, None)
    assert u.turn_figures["fixed_prefix_tokens"] == 0  # call 2's cache read + write, not call 1's zeros
    assert "unreadable_usage" in u.total["lower_bound_reasons"]


@pytest.mark.parametrize(
    ("prompt", "whole", "percent", "fraction"),
    [
        pytest.param(5_010, "3%", 2.51, 0.0251, id="2.505%"),
        pytest.param(4_999, "2%", 2.5, 0.025, id="2.4995%"),
        pytest.param(1_000, "1%", 0.5, 0.005, id="0.5%"),
        pytest.param(3_000, "2%", 1.5, 0.015, id="1.5%"),
    ],
)
def test_fill_is_one_figure_in_every_view(prompt, whole, percent, fraction):
    """5,010 of 200,000 tokens (2.505 %) printed "context 2%" in --explain (rounded to 0.025, then half to
    even), "3%" in ctx_pressure's why and 2.5 in health.fill_percent. Each view now rounds the exact
    fraction once, half up: 3 %, 3 %, 2.51 (and 0.0251 as a fraction)."""
    r = build_report(memory_trace(assistant("m1", prompt, 0, 0)))
    h, w = r.extra["health"], r.extra["weather"]
    explain = render_explain(RunResult([r], []))
    assert f"    last call's fill {whole} · " in explain
    assert w["signals"][0]["why"] == f"last call's prompt is {whole} of 200,000 tokens"
    assert (h["fill_percent"], h["signals"][0]["measure"]) == (percent, fraction)
    assert (w["stats"]["context_fill_frac"], w["signals"][0]["measure"]) == (fraction, fraction)


def test_spikes_are_call_numbers_from_one():
    """`spikes` in `context trace --json` listed 0-based indexes while every other call number counts from
    1: a spike at the second call is now 2, as `--calls` shows it."""
    r = build_report(memory_trace(assistant("m1", 100, 0, 0), assistant("m2", 180, 0, 0), assistant("m3", 100, 0, 0)))
    assert r.to_dict()["spikes"] == [2]
    assert r.to_dict()["peak_without_spikes"] == 100 and r.to_dict()["peak"] == 180
