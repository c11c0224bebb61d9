"""Defects a review of issue 10 found (/tmp/ct-findings), each fixed as a kind and tested here on small
inline traces: numbers of the stream-json `result` line taken without a bound, a session's missing
subagents silent in `context trace` and said twice by `context usage`, calls whose usage could not be read
graded and priced as if measured, the fill rounded twice, 0-based `spikes`, and NO_COLOR ignored by the
progress bar."""

from __future__ import annotations

import io
from fractions import Fraction

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.analysis import metrics
from contexttrace.analysis import window as window_rules
from contexttrace.analysis.counts import shown_value
from contexttrace.cli.analyze import StderrProgress
from contexttrace.cli.app import app
from contexttrace.cli.options import MAX_WINDOW_TOKENS
from contexttrace.reading import read_trace
from contexttrace.render.explain import render_explain
from contexttrace.render.text import fmt_percent
from contexttrace.render.trace import render_json, render_table
from contexttrace.render.usage import render_usage_table
from contexttrace.reports.trace import RunResult, build_report
from contexttrace.reports.usage import build_usage

from .conftest import assistant, jsonl, result

runner = CliRunner()

MODEL = "claude-sonnet-4-5-20250929"
HUGE = "1" + "0" * 400  # an integer literal orjson cannot read: the lenient fallback makes it a Python int


def _raw(record: dict, **raw: str) -> str:
    """`record` as a JSON line, each string value ``"<name>"`` replaced by `raw[name]` written as it is:
    the numbers orjson will not write (10**400) or writes otherwise (``10.0`` stays a float here anyway)."""
    text = orjson.dumps(record).decode()
    for name, value in raw.items():
        text = text.replace(f'"<{name}>"', value)
    return text


def _stream(*, calls: tuple[int, ...] = (5_000,), result_fields: dict | None = None, model_usage: dict | None = None,
            **raw: str) -> bytes:  # fmt: skip
    """A stream-json run: init, one main call per prompt size in `calls`, and a result line with
    `result_fields` and `modelUsage[MODEL]` fields added (`"<name>"` values written as `raw[name]`)."""
    entry = {"inputTokens": sum(calls), "outputTokens": 5 * len(calls), "cacheReadInputTokens": 0,
             "cacheCreationInputTokens": 0, **(model_usage or {})}  # fmt: skip
    end = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s1",
           "usage": {"input_tokens": 1}, **(result_fields or {}), "modelUsage": {MODEL: entry}}  # fmt: skip
    lines = [
        orjson.dumps({"type": "system", "subtype": "init", "session_id": "s1", "model": MODEL}).decode(),
        *(orjson.dumps(_call(f"m{i}", n, out=5, parent="", model=MODEL)).decode() for i, n in enumerate(calls)),
        _raw(end, **raw),
    ]
    return ("\n".join(lines) + "\n").encode()


def _call(mid: str, prompt: int, **kw) -> dict:
    """A main-thread call of `prompt` input tokens with a final usage (a stop_reason written)."""
    line = assistant(mid, prompt, kw.pop("cw", 0), 0, kw.pop("out", 10), **kw)
    line["message"]["stop_reason"] = "end_turn"
    return line


def _write(tmp_path, data: bytes, name: str = "run.jsonl") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _trace(*records) -> object:
    [t] = read_trace("mem.jsonl", fh=io.BytesIO(jsonl(*records)))
    return t


# -- 1. numbers of the result line are bounded like every other count ----------------------------------


def test_huge_context_window_is_not_the_window_and_json_still_prints(tmp_path):
    """A `contextWindow` of 10**400 (read by the lenient JSON fallback) was taken as the window: `--json`
    crashed ("Integer exceeds 64-bit range") and `--explain` printed a 130-digit window. It is no window:
    the next rule decides (200,000, the default), a warning names it, JSON and --explain print."""
    path = _write(tmp_path, _stream(calls=(40_000,), model_usage={"contextWindow": "<w>"}, w=HUGE))
    [t] = read_trace(path)
    assert t.result["modelUsage"][MODEL]["contextWindow"] == 10**400  # the reader keeps it as written
    assert window_rules.window_choice(t) == (200_000, "default")
    run = analyze([path])
    [r] = run.reports
    assert (r.extra["health"]["window"], r.extra["health"]["window_source"]) == (200_000, "default")
    assert r.extra["health"]["fill_percent"] == 20.0
    note = (
        f"result line: modelUsage[{MODEL!r}] contextWindow is not a window of 1 to 10,000,000 tokens "
        "(100000000000000000000000000000000000000…); not used"
    )
    assert note in r.warnings
    assert orjson.loads(render_json(run))[0]["health"]["window"] == 200_000
    out = runner.invoke(app, ["context", "trace", path, "--json"])
    assert out.exit_code == 0, out.output
    assert orjson.loads(out.stdout)[0]["warnings"] == [note]
    explained = runner.invoke(app, ["context", "trace", path, "--explain"])
    assert "window 200,000 tokens (Claude Code's default" in explained.stdout
    usage = runner.invoke(app, ["context", "usage", path, "--json"])
    assert usage.exit_code == 0, usage.output
    [u] = orjson.loads(usage.stdout)
    assert u["window"] == 200_000 and u["reported"]["reported_model_usage"][0]["context_window_tokens"] is None
    assert u["reported"]["reported_model_usage"][0]["implausible_fields"] == ["contextWindow"]
    assert u["warnings"].count(note) == 1


@pytest.mark.parametrize(
    ("written", "window", "source"),
    [
        pytest.param("10000000", 10_000_000, "modelUsage", id="at-the-maximum"),
        pytest.param("10000001", 200_000, "default", id="above-the-maximum"),
        pytest.param("0", 200_000, "default", id="zero"),
        pytest.param("-200000", 200_000, "default", id="negative"),
        pytest.param("200000.0", 200_000, "default", id="float"),
        pytest.param('"1000000"', 200_000, "default", id="string"),
        pytest.param("1000000", 1_000_000, "modelUsage", id="a-window"),
    ],
)
def test_context_window_from_the_trace_is_bounded_like_the_option(tmp_path, written, window, source):
    """A window the trace states must be one `--window` would accept (1 to 10,000,000 tokens): the CLI's
    maximum and the trace's are one constant."""
    path = _write(tmp_path, _stream(model_usage={"contextWindow": "<w>"}, w=written))
    [t] = read_trace(path)
    assert window_rules.window_choice(t) == (window, source)
    [r] = analyze([path]).reports
    assert any("contextWindow is not a window" in w for w in r.warnings) is (source == "default")
    assert MAX_WINDOW_TOKENS is window_rules.MAX_WINDOW_TOKENS == 10_000_000
    too_big = runner.invoke(app, ["context", "trace", path, "--window", "10000001"])
    assert too_big.exit_code == 2 and "1 to 10,000,000 tokens" in too_big.output


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        pytest.param(HUGE, "100000000000000000000000000000000000000…", id="huge"),
        pytest.param("-123456789", "-123456789", id="negative"),
        pytest.param("1500.5", "1500.5", id="float"),
        pytest.param('"1500"', "'1500'", id="string"),
    ],
)
def test_result_duration_that_is_not_a_count_is_unknown_everywhere(tmp_path, written, shown):
    """The result's `duration_ms` was only type-checked for a turn: 10**400 crashed `context usage
    --json`, −123456789 became the turn's duration (source `result`) while `reported_duration_ms` was
    null for the same value. Now both are null and one warning says why."""
    path = _write(tmp_path, _stream(result_fields={"duration_ms": "<d>", "num_turns": 1}, d=written))
    out = runner.invoke(app, ["context", "usage", path, "--json"])
    assert out.exit_code == 0, out.output
    [u] = orjson.loads(out.stdout)
    assert (u["turn_rows"][0]["duration_ms"], u["turn_rows"][0]["duration_source"]) == (None, None)
    assert u["reported"]["reported_duration_ms"] is None and u["reported"]["reported_num_turns"] == 1
    assert u["warnings"] == [f"result line: duration_ms is not a count ({shown}); not used"]


def test_result_duration_that_is_a_count_times_the_turn(tmp_path):
    """The same field, a count: the run's one turn is timed by it, as before."""
    path = _write(tmp_path, _stream(result_fields={"duration_ms": 1500}))
    [u] = analyze([path], build=build_usage).reports
    assert (u.turns[0]["duration_ms"], u.turns[0]["duration_source"]) == (1500, "result")
    assert u.reported["reported_duration_ms"] == 1500 and u.warnings == []


def test_result_usage_counts_and_costs_are_bounded(tmp_path):
    """Every other number of the result line too: a `usage` count of 10**400, a negative
    `total_cost_usd`, a `costUSD` of 10**400 are unknown (null) and warned, and the JSON prints."""
    fields = {"total_cost_usd": -3.5, "num_turns": "<huge>", "usage": {"input_tokens": "<huge>"}}
    data = _stream(result_fields=fields, model_usage={"costUSD": "<huge>"}, huge=HUGE)
    path = _write(tmp_path, data)
    out = runner.invoke(app, ["context", "usage", path, "--json"])
    assert out.exit_code == 0, out.output
    [u] = orjson.loads(out.stdout)
    rep = u["reported"]
    assert rep["reported_usage"]["input_tokens"] is None and rep["reported_num_turns"] is None
    assert rep["reported_cost_usd"] is None and rep["cost_difference_usd"] is None
    [row] = rep["reported_model_usage"]
    assert (row["cost_usd"], row["implausible_fields"], row["input_tokens"]) == (None, ["costUSD"], 5_000)
    assert rep["reported_tokens_priced_usd"] == pytest.approx((5_000 * 3 + 5 * 15) / 1e6)  # counts still price
    assert sorted(u["warnings"]) == sorted(
        [
            f"result line: modelUsage[{MODEL!r}] costUSD is not a cost in USD ({HUGE[:39]}…); not used",
            "result line: total_cost_usd is not a cost in USD (-3.5); not used",
            "result line: num_turns is not a count (100000000000000000000000000000000000000…); not used",
            "result line: usage.input_tokens is not a count (100000000000000000000000000000000000000…); not used",
        ]
    )


def test_turn_timed_by_timestamps_out_of_order_has_no_duration():
    """A turn whose last call is stamped before its prompt measured a negative duration; now none."""
    t = _trace(
        {
            "type": "user",
            "sessionId": "s",
            "timestamp": "2025-01-01T00:10:00Z",
            "message": {"role": "user", "content": "do it"},
        },
        assistant("m1", 5_000, 0, 0, timestamp="2025-01-01T00:00:00Z"),
    )
    [turn] = build_usage(t).turns
    assert (turn["calls"], turn["duration_ms"], turn["duration_source"]) == (1, None, None)


def test_agent_timed_by_a_result_stamped_before_its_task_call_falls_back_to_its_own_lines():
    """The same kind for a subagent: a Task result stamped before its call gave a negative `task_call`
    duration; the agent is then timed by its own calls' lines (5 s to 9 s past 00:10)."""
    task = ("t1", "Task", {"prompt": "look", "description": "explore", "subagent_type": "Explore"})
    t = _trace(
        assistant("m1", 5_000, 0, 0, tools=[task], timestamp="2025-01-01T00:10:00Z"),
        assistant("s1", 3_000, 0, 0, sidechain=True, agentId="a1", timestamp="2025-01-01T00:10:05Z"),
        assistant("s2", 3_500, 0, 0, sidechain=True, agentId="a1", timestamp="2025-01-01T00:10:09Z"),
        result("t1", "done", toolUseResult={"agentId": "a1"}, timestamp="2025-01-01T00:05:00Z"),
    )
    [agent] = build_usage(t).agents
    assert (agent["thread"], agent["linked_by"], agent["duration_ms"], agent["duration_source"]) == (
        "a1",
        "agent_id",
        4_000,
        "agent_lines",
    )


# -- 2. subagents referenced but not found: computed once, said by both reports, printed once ------------


def _session_without_agent_file(tmp_path) -> str:
    task = ("t1", "Task", {"prompt": "look", "description": "explore", "subagent_type": "Explore"})
    return _write(
        tmp_path,
        jsonl(
            _call("m1", 5_000, tools=[task]),
            result("t1", "found it", toolUseResult={"agentId": "ea02459f", "status": "completed"}),
            _call("m2", 5_500),
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
    assert "cost is a lower bound ≥ $0.0318: subagents are missing" in used.stderr  # (10,500 × $3 + 20 × $15) / 1M


def test_missing_subagents_rule_finds_agents_by_thread_call_id_or_file():
    """An agent is found by a call thread carrying its id, a thread named by its Task call's id
    (stream-json), or its file read; only the others are missing, each once, in result order."""
    ids = ["a1", "a2", "a3", "a4", None, "a1", "a5"]
    calls = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"]
    threads = {"main", "a1", "t2"}
    read = {"a3", "agent-a4.jsonl"}
    assert metrics.missing_subagents_of(ids, calls, threads, read) == ["a5"]
    assert metrics.missing_subagents_of(["b", "c", "b"], ["t1", "t2", "t3"], set(), set()) == ["b", "c"]


# -- 3. calls whose usage could not be read are not measured -------------------------------------------


def _float_call(mid: str, split: dict | None = None) -> str:
    """A call whose four usage counts are written as floats (``10.0``: a gateway or a re-encoder may
    write them so): the reader reads each as 0 and warns."""
    usage = {k: "<f>" for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                                "output_tokens")}  # fmt: skip
    if split is not None:
        usage["cache_creation"] = split
    message = {"id": mid, "model": "claude-sonnet-4-5", "stop_reason": "end_turn", "content": [], "usage": usage}
    return _raw({"type": "assistant", "sessionId": "s", "message": message}, f="10.0")


def test_calls_with_unreadable_usage_are_not_graded_as_measured():
    """Usage counts written as floats read as 0 (warned), yet Context Fill graded "100 A: prompt 0" and
    first/peak/growth printed 0 as figures. Nothing was measured: Context Fill abstains, first/peak/growth
    are `-` in the table, ctx_pressure abstains, and a warning says why."""
    t = _trace(_float_call("m1"), _float_call("m2"), _float_call("m3"))
    r = build_report(t)
    assert (r.calls, r.first, r.peak, r.growth, r.fill, r.unmeasured_calls, r.spikes) == (3, 0, 0, 0, None, 3, [])
    assert (
        "none of the 3 main-thread call(s) has readable usage (read as 0): no prompt size was measured, so first, "
        "peak, growth and fill are unknown (0 in JSON, - in the table) and Context Fill abstains"
    ) in r.warnings
    h = r.extra["health"]
    fill = h["signals"][0]
    assert (fill["name"], fill["abstained"], fill["value"], h["fill_percent"]) == ("Context Fill", True, None, None)
    assert fill["why"] == "no call's prompt size could be read (usage read as 0 on all 3)"
    assert h["grade"] == "A" and h["score"] == 100  # graded on Compactions alone (0: 100)
    ctx = r.extra["weather"]["signals"][0]
    assert (ctx["name"], ctx["severity"], ctx["measure"]) == ("ctx_pressure", None, None)
    assert r.extra["weather"]["stats"]["context_fill_frac"] is None
    row = render_table(RunResult([r], []), with_window=False).splitlines()[2]
    assert [c.strip() for c in row.split("|")[2:6]] == ["3", "-", "-", "-"]
    windowed = build_report(t, window=200_000)
    assert windowed.fill == 0.0  # 0 in JSON, as first/peak/growth are (the warning says so); `-` in the table
    row = render_table(RunResult([windowed], []), with_window=True).splitlines()[2]
    assert [c.strip() for c in row.split("|")[2:7]] == ["3", "-", "-", "-", "-"]


def test_unmeasured_calls_are_left_out_of_first_peak_growth_and_fill():
    """Calls 1, 3 and 5 unreadable, 2 and 4 measured: first/peak/growth over 2 and 4; the fill is call 4's,
    named as the last with readable usage; the turn readings do not take a 0 for a context."""
    t = _trace(
        _float_call("m1"),
        assistant("m2", 50_000, 0, 0),
        _float_call("m3"),
        assistant("m4", 80_000, 0, 0),
        _float_call("m5"),
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


def test_unreadable_usage_makes_the_cost_a_lower_bound_and_the_split_never_exceeds_its_total():
    """The float-usage session priced its still-readable 5m split ($0.686 with every token column 0, and
    JSON cache_write_tokens 0 beside cache_write_5m_tokens 182,937). A split is cut to the total it
    splits, and a call whose usage was unreadable makes the cost `≥` with a reason."""
    t = _trace(
        _float_call("m1", split={"ephemeral_5m_input_tokens": 182_937, "ephemeral_1h_input_tokens": 0}),
        _float_call("m2"),
    )
    u = build_usage(t)
    total = u.total
    assert (total["cache_write_tokens"], total["cache_write_5m_tokens"], total["cache_write_1h_tokens"]) == (0, 0, 0)
    assert (total["cost_usd"], total["cost_is_lower_bound"], total["lower_bound_reasons"]) == (
        0.0,
        True,
        ["unreadable_usage"],
    )
    table = render_usage_table(RunResult([u], []))
    assert "≥ $0.00" in table and "≈$0.6" not in table


def test_cache_split_larger_than_its_total_is_priced_within_it():
    """A readable split that exceeds its total (100 written, 80 + 50 split) is priced as 80 five-minute and
    20 one-hour writes, the cheaper first, and the columns say so."""
    line = _call("m1", 1, cw=100, out=0, model="claude-sonnet-4-5")
    line["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 80, "ephemeral_1h_input_tokens": 50}
    total = build_usage(_trace(line)).total
    assert (total["cache_write_tokens"], total["cache_write_5m_tokens"], total["cache_write_1h_tokens"]) == (
        100,
        80,
        20,
    )
    assert total["cost_usd"] == pytest.approx((1 * 3 + 80 * 3.75 + 20 * 6) / 1e6)
    assert total["lower_bound_reasons"] == []


# -- 4. the fill is rounded once, half up, from the exact fraction: the same figure in every view -------------


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
    r = build_report(_trace(assistant("m1", prompt, 0, 0)))
    h, w = r.extra["health"], r.extra["weather"]
    explain = render_explain(RunResult([r], []))
    assert f"    context {whole} · " in explain
    assert w["signals"][0]["why"] == f"last call's prompt is {whole} of 200,000 tokens"
    assert (h["fill_percent"], h["signals"][0]["measure"]) == (percent, fraction)
    assert (w["stats"]["context_fill_frac"], w["signals"][0]["measure"]) == (fraction, fraction)


def test_fmt_percent_rounds_half_up_from_the_value_it_prints_as():
    """The table's fill and cache hit: 12.5 % is 13 %, 2.505 % is 3 % (Python's `:.0%` gave 12 % and, from
    a rounded 0.025, 2 %); an exact fraction is rounded from its exact value."""
    assert [fmt_percent(x) for x in (0.125, 0.02505, 0.025, 0.1084, 0.0, 1.5)] == [
        "13%",
        "3%",
        "3%",
        "11%",
        "0%",
        "150%",
    ]
    assert fmt_percent(Fraction(4_999, 200_000)) == "2%" and fmt_percent(None) == "-"
    r = build_report(_trace(assistant("m1", 5_010, 0, 0)), window=200_000)
    assert render_table(RunResult([r], []), with_window=True).splitlines()[2].split("|")[5].strip() == "3%"


# -- 5. spikes are call numbers from 1 --------------------------------------------------------------------


def test_spikes_are_call_numbers_from_one():
    """`spikes` in `context trace --json` listed 0-based indexes while every other call number counts from
    1: a spike at the second call is now 2, as `--calls` shows it."""
    r = build_report(_trace(assistant("m1", 100, 0, 0), assistant("m2", 180, 0, 0), assistant("m3", 100, 0, 0)))
    assert r.to_dict()["spikes"] == [2]
    assert r.to_dict()["peak_without_spikes"] == 100 and r.to_dict()["peak"] == 180


# -- 6. the progress bar on stderr follows the CLI's colour rule ---------------------------------------------


class _TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("no_color", "flag", "colored"),
    [
        pytest.param("1", None, False, id="NO_COLOR"),
        pytest.param("", None, True, id="terminal"),
        pytest.param("1", True, True, id="--color-wins"),
        pytest.param("", False, False, id="--no-color"),
    ],
)
def test_progress_bar_follows_no_color(monkeypatch, no_color, flag, colored):
    """With NO_COLOR on a terminal the stderr progress bar still wrote ANSI colours (rich was told
    `no_color=False`); it now takes `color_enabled`'s decision for stderr, as the rest of the CLI does."""
    monkeypatch.setenv("NO_COLOR", no_color)
    monkeypatch.setenv("TERM", "xterm-256color")
    stderr = _TTY()
    monkeypatch.setattr("sys.stderr", stderr)
    progress = StderrProgress(flag)
    progress(1, 8)
    try:
        assert progress._bar.console.no_color is (not colored)
    finally:
        progress.close()
    assert ("\x1b[3" in stderr.getvalue() or "\x1b[9" in stderr.getvalue()) is colored


@pytest.mark.parametrize("written", [HUGE, "-123456789"])
def test_html_report_header_duration_is_bounded_like_every_result_count(tmp_path, written):
    """The HTML page's header took the result's `duration_ms` as any int ≥ 0: a 396-digit duration."""
    from contexttrace.render.html.section import build_section

    path = _write(tmp_path, _stream(result_fields={"duration_ms": "<d>", "num_turns": 1}, d=written))
    [trace] = read_trace(path)
    assert build_section(trace).reported_duration_ms is None


def test_warning_quotes_any_value_without_raising():
    """A warning quotes what it refused: a 3,000-deep object (no repr: RecursionError) or an integer past
    Python's 4,300-digit limit (no str: ValueError) is described, never an exception."""
    deep: dict = {}
    node = deep
    for _ in range(3000):
        node["a"] = {}
        node = node["a"]
    assert shown_value(deep) == "a JSON object nested too deep to show"
    assert shown_value(10**20000) == "an integer of 66439 bits"
    assert shown_value([1, 2]) == "[1, 2]"
