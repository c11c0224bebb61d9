"""Tests of `context usage`: token totals and cost of every sample, turns, agents, the stream-json result.

How the sample figures were obtained
------------------------------------
`EXPECTED` was produced by a separate 60-line script that imports nothing from contexttrace: it reads
each file with plain `json` (splitting on b"\\n"), splits stream-json files into runs at `system/init`,
adds a transcript's `<session>/subagents/*.jsonl` and the flat `agent-*.jsonl` files whose lines carry
its `sessionId`, keeps one row per (message.id, input, cache write, cache read) with the highest
`output_tokens`, skips `<synthetic>` lines, and prices each row with its own constants (Opus 4.5/4.6/4.7
$5/$25, Sonnet 4/4.5 $3/$15, Haiku 4.5 $1/$5 per MTok; 5m write 1.25×, 1h write 2×, read 0.1× input).

ccusage comparison (`npx ccusage@20.0.24 claude session --json --offline`, CLAUDE_CONFIG_DIR holding
`projects/<sample>/` copies of the seven transcript samples; run 2026-11-30)
----------------------------------------------------------------------------------------------------
Per session: input / cache write / cache read / output tokens, cost USD (ccusage) — ours.

* b-spotter-compaction 4d5611e5: 233 / 559,475 / 12,387,553 / 28,899, $10.11369555 — identical
  (ccusage also reads `subagents/agent-*.jsonl`, the compaction summariser included).
* b-ccl-agent-teams-opus47 ef958aa1: 2,546 / 398,573 / 2,455,695 / 53,458, $5.4513175 — identical
  (ccusage also prices the 102,189 one-hour cache-write tokens at 2× input).
* b-ccl-image-and-errors: 419 / 330,302 / 4,775,345 / 3,195, $2.720418 — identical.
* b-ccv-inline-sidechains-v1098: 818 / 137,976 / 3,647,854 / 51,933, $2.3932152 — identical.
* b-ccl-thinking-sonnet45: 1,804 / 182,937 / 1,502,915 / 20,797, $1.45425525 — identical.
* b-ccl-print-mode-sessions 29ccd257: 4,468 / 50,764 / 272,977 / 20, $0.1497523 — identical;
  2b4ed4c0: 2 / 9,462 / 212,147 / 180, $0.169721 — identical.
* b-ccl-flat-agent-files-v2037 cb2e607c: ccusage lists the session as 735 / 152,097 / 3,483,153 /
  23,714, $1.97322465 and each flat 2.0.x agent file as a session of its own (agent-ea02459f
  3,289 / 36,957 / 76,673 / 1,799, $0.19844265; agent-2b93909d 1,004 / 0 / 0 / 48, $0.003732;
  agent-645808c9 993 / 0 / 0 / 110, $0.001543). We attach those files to their session by `sessionId`
  (FORMATS §3.1), so our session row is the sum: 6,021 / 189,054 / 3,559,826 / 25,671, $2.1769423.
  The difference is only which session the agent files are counted under; the grand totals agree.

ccusage's totals over the seven: 16,311 / 1,858,543 / 28,814,312 / 184,153, $24.6293171 — the same as
the sum of our seven session rows.

stream-json: the `result` line (Claude Code 2.0.57) reports more than the calls written: pricing the
result's own `modelUsage` tokens with our table gives `total_cost_usd` to within $1e-9 (checked below),
so the table agrees with Claude Code's; the difference to our priced calls comes from the tokens the
result counts that no assistant line shows (helper calls on Haiku, the final output counts where lines
hold a streaming placeholder, FORMATS G2/G9). `EXPECTED` is what the calls written show (`lines_total`);
`total` adds, per model, what `modelUsage` counts beyond them (`result_only`). Over the 28 runs with a
result line, the calls written price to $11.20587595 and Claude Code's `total_cost_usd` sums to
$12.4703631; our `total` is $12.4703631 (every run within $1e-9). Claude Code's figure is reported beside
ours, never added.
"""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.cli.app import app
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace
from contexttrace.render.trace import render_json
from contexttrace.render.usage import render_usage_table
from contexttrace.reports.results import RunResult
from contexttrace.reports.turns import context_band, context_velocity
from contexttrace.reports.usage import build_usage

from ..conftest import (
    CASES,
    HUGE,
    MODEL,
    SAMPLES,
    assistant,
    float_usage_call,
    memory_trace,
    report_of,
    result,
    stream_run,
    write_file,
)

#: trace → (calls, fresh input, cache write, of which 5m, of which 1h, cache read, output, cost USD)
EXPECTED = {
    "a-ralph-27runs-with-separators.jsonl#1": (40, 14, 80282, 80282, 0, 2421712, 7415, 1.8980635000000001),
    "a-ralph-27runs-with-separators.jsonl#2": (44, 22, 42122, 42122, 0, 1962228, 5921, 1.3925115000000001),
    "a-ralph-27runs-with-separators.jsonl#3": (4, 2, 16060, 16060, 0, 106669, 798, 0.17366949999999998),
    "a-ralph-27runs-with-separators.jsonl#4": (3, 2, 6539, 6539, 0, 81349, 300, 0.08905325),
    "a-ralph-27runs-with-separators.jsonl#5": (4, 2, 8763, 8763, 0, 113872, 405, 0.12183975),
    "a-ralph-27runs-with-separators.jsonl#6": (4, 2, 8809, 8809, 0, 113929, 928, 0.13523075),
    "a-ralph-27runs-with-separators.jsonl#7": (4, 2, 8782, 8782, 0, 113875, 602, 0.126885),
    "a-ralph-27runs-with-separators.jsonl#8": (4, 2, 8770, 8770, 0, 113886, 781, 0.1312905),
    "a-ralph-27runs-with-separators.jsonl#9": (4, 2, 8784, 8784, 0, 113892, 787, 0.131531),
    "a-ralph-27runs-with-separators.jsonl#10": (4, 2, 8809, 8809, 0, 113926, 451, 0.12330425000000002),
    "a-ralph-27runs-with-separators.jsonl#11": (4, 2, 8783, 8783, 0, 113885, 775, 0.13122125),
    "a-ralph-27runs-with-separators.jsonl#12": (4, 2, 8807, 8807, 0, 113923, 442, 0.12306525000000001),
    "a-ralph-27runs-with-separators.jsonl#13": (4, 2, 8848, 8848, 0, 113897, 917, 0.1351835),
    "a-ralph-27runs-with-separators.jsonl#14": (4, 2, 8771, 8771, 0, 113897, 412, 0.12207725),
    "a-ralph-27runs-with-separators.jsonl#15": (4, 2, 8817, 8817, 0, 113942, 885, 0.13421225),
    "a-ralph-27runs-with-separators.jsonl#16": (4, 2, 8735, 8735, 0, 113828, 375, 0.12089275000000001),
    "a-ralph-27runs-with-separators.jsonl#17": (4, 2, 5433, 5433, 0, 117142, 384, 0.10213725),
    "a-ralph-27runs-with-separators.jsonl#18": (4, 2, 8765, 8765, 0, 113874, 285, 0.11885325),
    "a-ralph-27runs-with-separators.jsonl#19": (4, 2, 8773, 8773, 0, 113890, 661, 0.12831125),
    "a-ralph-27runs-with-separators.jsonl#20": (4, 2, 8781, 8781, 0, 113879, 416, 0.12223075),
    "a-ralph-27runs-with-separators.jsonl#21": (4, 2, 8809, 8809, 0, 113934, 875, 0.13390825),
    "a-ralph-27runs-with-separators.jsonl#22": (4, 2, 8807, 8807, 0, 113924, 449, 0.12324075),
    "a-ralph-27runs-with-separators.jsonl#23": (4, 2, 8786, 8786, 0, 113885, 830, 0.13261499999999998),
    "a-ralph-27runs-with-separators.jsonl#24": (4, 2, 5431, 5431, 0, 117144, 227, 0.09820075),
    "a-ralph-27runs-with-separators.jsonl#25": (4, 2, 8777, 8777, 0, 113882, 807, 0.13198225),
    "a-ralph-27runs-with-separators.jsonl#26": (4, 2, 8799, 8799, 0, 113910, 440, 0.12295874999999999),
    "a-ralph-27runs-with-separators.jsonl#27": (4, 2, 8812, 8812, 0, 113934, 826, 0.13270200000000001),
    "a-ralph-subagent-opus45-haiku45.jsonl#1": (80, 48946, 194229, 194229, 0, 6968944, 18573, 4.768704449999998),
    "a-ralph-subagent-opus45-haiku45.jsonl#2": (16, 11233, 63131, 63131, 0, 1037822, 7537, 1.1580697500000001),
    "b-ccl-image-and-errors.jsonl": (101, 419, 330302, 330302, 0, 4775345, 3195, 2.720418),
    "b-ccl-thinking-sonnet45.jsonl": (36, 1804, 182937, 182937, 0, 1502915, 20797, 1.4542552499999999),
    "b-ccv-inline-sidechains-v1098.jsonl": (170, 818, 137976, 137976, 0, 3647854, 51933, 2.3932151999999993),
    "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl": (
        83, 2546, 398573, 296384, 102189, 2455695, 53458, 5.451317500000002
    ),
    "b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl": (
        12, 4468, 50764, 50764, 0, 272977, 20, 0.1497523
    ),
    "b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl": (
        10, 2, 9462, 9462, 0, 212147, 180, 0.16972099999999998
    ),
    "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (
        152, 233, 559475, 559475, 0, 12387553, 28899, 10.113695550000005
    ),
    "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl": (
        87, 6021, 189054, 189054, 0, 3559826, 25671, 2.1769422999999994
    ),
    # The other agents' samples, from the same kind of independent script: Codex (a call per token_count
    # whose totals grew; input less cached, cached, output with reasoning) and Gemini (a call per gemini
    # message with tokens; input less cached, cached, output + thoughts), at the table's list prices.
    "c-codex-0.41-small.jsonl": (2, 1511, 0, 0, 0, 3840, 128, 0.00364875),
    "c-codex-0.111-exec-command.jsonl": (85, 438328, 0, 0, 0, 4439936, 28409, 1.9417888000000008),
    "c-codex-0.65-compaction.jsonl": (143, 2366730, 0, 0, 0, 16200448, 68772, 1.1342377000000003),
    "d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json": (5, 25540, 0, 0, 0, 29491, 279, 0.00924423),
    "d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json": (12, 45310, 0, 0, 0, 49708, 2027, 0.0603397),
    "d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json": (8, 18487, 0, 0, 0, 39192, 1571, 0.0159161),
}  # fmt: skip


@pytest.fixture(scope="module")
def reports() -> dict:
    """Every sample's usage report, keyed by its path relative to samples/."""
    run = analyze([str(SAMPLES)], build=build_usage)
    assert not run.failures
    return {r.trace.split("samples/", 1)[1]: r for r in run.reports}


def test_every_sample_is_covered(reports: dict) -> None:
    """The expected table names exactly the traces the samples folder holds."""
    assert set(reports) == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_token_totals_and_cost(reports: dict, name: str) -> None:
    """Token totals equal the independent script's exactly; cost to $1e-9 (float summation order only)."""
    calls, inp, cw, cw5, cw1, cr, out, usd = EXPECTED[name]
    t = reports[name].lines_total
    got = (
        t["calls"],
        t["input_tokens"],
        t["cache_write_tokens"],
        t["cache_write_5m_tokens"],
        t["cache_write_1h_tokens"],
    )
    assert got == (calls, inp, cw, cw5, cw1)
    assert (t["cache_read_tokens"], t["output_tokens"]) == (cr, out)
    assert t["cost_usd"] == pytest.approx(usd, abs=1e-9)
    assert "unpriced_model" not in t["lower_bound_reasons"]
    assert t["cache_hit_ratio"] == pytest.approx(cr / (cr + cw + inp))
    if reports[name].result_only is None:  # no result line to complete them: the total is the calls'
        assert reports[name].total == {**t, "lower_bound_reasons": reports[name].total["lower_bound_reasons"],
                                       "cost_is_lower_bound": reports[name].total["cost_is_lower_bound"]}  # fmt: skip


def test_threads_and_models_add_up(reports: dict) -> None:
    """Per-thread and per-model rows partition the totals (the result-only tokens being a row of each):
    tokens and cost sum back to the trace's."""
    for r in reports.values():
        for rows in (r.threads, r.models):
            for key in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens", "calls"):
                assert sum(x[key] for x in rows) == r.total[key], key
            assert sum(x["cost_usd"] for x in rows) == pytest.approx(r.total["cost_usd"])
        assert r.main["calls"] + r.subagents["calls"] == r.total["calls"]
        extra = r.result_only["output_tokens"] if r.result_only else 0
        assert r.main["output_tokens"] + r.subagents["output_tokens"] + extra == r.total["output_tokens"]


def test_spotter_threads_split_main_subagent_and_compaction(reports: dict) -> None:
    """b-spotter: main Opus 4.6, an Explore subagent on Sonnet 4.5, and the compaction summariser's one call."""
    r = reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    kinds = {t["thread"]: (t["thread_kind"], t["calls"]) for t in r.threads}
    assert kinds == {"main": ("main", 139), "a2898e3": ("subagent", 12), "acompact-e1f845": ("compaction", 1)}
    assert [m["model"] for m in r.models] == ["claude-opus-4-6", "claude-sonnet-4-5"]
    # compaction call: 3 input, 8,681 write, 164,830 read, 8 output on Opus 4.6 ($5/$25):
    # (3×5 + 8,681×6.25 + 164,830×0.5 + 8×25) / 1e6 = (15 + 54,256.25 + 82,415 + 200) / 1e6 = $0.13688625
    compaction = next(t for t in r.threads if t["thread_kind"] == "compaction")
    assert compaction["cost_usd"] == pytest.approx(0.13688625)


def test_one_hour_cache_writes_are_split(reports: dict) -> None:
    """agent-teams: the main thread's 102,189 cache-write tokens are 1-hour, the subagents' 5-minute."""
    r = reports["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    assert (r.main["cache_write_1h_tokens"], r.main["cache_write_5m_tokens"]) == (102189, 0)
    assert r.subagents["cache_write_1h_tokens"] == 0
    assert r.total["cache_write_assumed_5m_tokens"] == 0


@pytest.mark.parametrize(
    "name",
    ["a-ralph-27runs-with-separators.jsonl#1", "a-ralph-subagent-opus45-haiku45.jsonl#1"],
)
def test_stream_json_result_reported_beside_ours(reports: dict, name: str) -> None:
    """The result's total_cost_usd is reported, not added; priced from its own modelUsage it matches to $1e-9."""
    r = reports[name]
    rep = r.reported
    assert rep["reported_cost_usd"] == pytest.approx(rep["reported_tokens_priced_usd"], abs=1e-9)
    assert rep["cost_difference_usd"] == pytest.approx(r.total["cost_usd"] - rep["reported_cost_usd"])
    assert r.lines_total["cost_usd"] == pytest.approx(EXPECTED[name][-1], abs=1e-9)
    assert r.total["cost_usd"] < r.lines_total["cost_usd"] + rep["reported_cost_usd"]  # never the sum of both


def test_stream_json_reported_figures(reports: dict) -> None:
    """a-ralph-27runs#1: result total_cost_usd $2.15471825, usage output 14,624 vs 7,415 in the lines written."""
    r = reports["a-ralph-27runs-with-separators.jsonl#1"]
    assert r.reported["reported_cost_usd"] == 2.15471825
    assert r.reported["reported_usage"]["output_tokens"] == 14624
    assert r.lines_total["output_tokens"] == 7415
    assert r.lines_total["output_lower_bound_calls"] == 40  # every line has stop_reason null (FORMATS G2)
    assert reports["a-ralph-subagent-opus45-haiku45.jsonl#2"].reported is None  # run without a result line


#: stream-json runs with a result line: (run, Claude Code's total_cost_usd) — all but one of the samples'.
_STREAM_RUNS = [
    name for name in EXPECTED if name.startswith("a-") and name != "a-ralph-subagent-opus45-haiku45.jsonl#2"
]


def test_stream_json_cost_completed_from_model_usage(reports: dict) -> None:
    """B16: on every stream-json run with a result line, our total prices the calls plus what `modelUsage`
    counts beyond them, and equals Claude Code's own total_cost_usd (to $1e-9); it is no lower bound.

    Over the 28 runs: the calls written alone $11.20587595 (the old figure), Claude Code $12.4703631.
    """
    assert len(_STREAM_RUNS) == 28
    before = after = claude = 0.0
    for name in _STREAM_RUNS:
        r = reports[name]
        assert r.total["cost_usd"] == pytest.approx(r.reported["reported_cost_usd"], abs=1e-9), name
        assert r.total["cost_source"] == "messages+result.modelUsage"
        assert r.total["lower_bound_reasons"] == [] and r.total["output_is_lower_bound"] is False
        before += r.lines_total["cost_usd"]
        after += r.total["cost_usd"]
        claude += r.reported["reported_cost_usd"]
    assert before == pytest.approx(11.20587595, abs=1e-8)
    assert after == pytest.approx(claude, abs=1e-8) == pytest.approx(12.4703631, abs=1e-8)


def test_stream_json_model_usage_per_model(reports: dict) -> None:
    """a-ralph-27runs#1: Opus lines show output 7,415, modelUsage 14,655; Haiku writes no line (helper calls),
    modelUsage 10,780 in / 414 out = $0.01285 at $1/$5; the extra is a thread of its own, `unattributed`."""
    r = reports["a-ralph-27runs-with-separators.jsonl#1"]
    opus, haiku = r.models
    assert (opus["model"], opus["calls"], opus["output_tokens"], opus["input_tokens"]) == (
        "claude-opus-4-5", 40, 14655, 4038
    )  # fmt: skip
    assert opus["cost_source"] == "messages+result.modelUsage"
    assert (haiku["model"], haiku["calls"], haiku["output_tokens"], haiku["cost_source"]) == (
        "claude-haiku-4-5", 0, 414, "result.modelUsage"
    )  # fmt: skip
    assert haiku["cost_usd"] == pytest.approx((10780 * 1 + 414 * 5) / 1e6)
    assert r.total["output_tokens"] == 14655 + 414
    # the 407 cache-write tokens modelUsage counts beyond the calls (80,689 − 80,282) have no split: 5m, assumed
    assert r.result_only["cache_write_assumed_5m_tokens"] == 407 == r.total["cache_write_assumed_5m_tokens"]
    main, extra = r.threads
    assert (main["thread"], main["output_tokens"], main["output_is_lower_bound"]) == ("main", 7415, True)
    assert (extra["thread"], extra["thread_kind"], extra["output_tokens"]) == ("result.modelUsage", "unattributed",
                                                                             14655 + 414 - 7415)  # fmt: skip


def test_stream_json_run_without_result_is_a_lower_bound(reports: dict) -> None:
    """a-ralph-subagent#2 has no result line and placeholder outputs: its cost prints `≥`, both reasons named."""
    r = reports["a-ralph-subagent-opus45-haiku45.jsonl#2"]
    assert r.result_only is None
    assert r.total["lower_bound_reasons"] == ["output_placeholder", "no_result_line"]
    assert r.total["cost_is_lower_bound"] is True
    from contexttrace.render.usage import usage_cells

    assert usage_cells(r.trace, r.total, 1)[-1] == "≥$1.16"
    assert usage_cells(r.trace, r.total, 1)[-3] == "≥7,537"


@pytest.mark.parametrize(
    ("name", "reasons"),
    [
        pytest.param("b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", ["output_placeholder"],
                     id="placeholders"),
        pytest.param("b-ccl-thinking-sonnet45.jsonl", [], id="final-usage"),
        pytest.param("b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl", [], id="flat"),
    ],
)  # fmt: skip
def test_transcript_lower_bound_only_with_placeholder_output(reports: dict, name: str, reasons: list) -> None:
    """A transcript whose calls are written with `stop_reason: null` (FORMATS G2) has no result line to give
    the final output: its cost is a lower bound; one written with final usage is an estimate (≈)."""
    r = reports[name]
    assert r.total["lower_bound_reasons"] == reasons
    assert r.total["output_is_lower_bound"] is bool(reasons)
    assert r.total["cost_source"] == "messages" and r.result_only is None


def test_b16_result_without_model_usage_leaves_output_a_lower_bound() -> None:
    """B16: the result line has `usage` but no `modelUsage`: output stays ≥ 17, cost ≥, the result reported."""

    [trace] = read_trace(str(CASES / "B16.jsonl"))
    r = build_usage(trace)
    assert r.total["output_tokens"] == 17 and r.total["lower_bound_reasons"] == ["output_placeholder"]
    assert r.reported["reported_cost_usd"] == 0.0191 and r.reported["reported_usage"]["output_tokens"] == 420
    assert r.result_only is None


# -- turns ---------------------------------------------------------------------------------------------


def test_turns_skip_commands_meta_and_interrupts(reports: dict) -> None:
    """b-ccl-thinking: a slash command, its isMeta expansion and an interrupt are not turns; 5 typed prompts are.

    The 7 calls answering the command (before the first typed prompt) belong to no turn.
    """
    r = reports["b-ccl-thinking-sonnet45.jsonl"]
    assert r.turn_figures["turns"] == 5
    assert r.turn_figures["calls_before_first_turn"] == 7
    assert [t["calls"] for t in r.turns] == [1, 1, 7, 12, 8]
    assert [t["line"] for t in r.turns] == [47, 59, 64, 99, 169]
    assert r.turn_figures["median_calls_per_turn"] == 7


def test_turns_skip_compact_summary_and_use_turn_duration(reports: dict) -> None:
    """b-spotter: the isCompactSummary line is not a turn, nor the background-task notification of line 1502
    (CASES B31: its 2 calls belong to the turn before); turn_duration lines give both durations."""
    r = reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert [(t["line"], t["calls"]) for t in r.turns] == [(7, 18), (280, 119 + 2)]
    assert [(t["duration_ms"], t["duration_source"]) for t in r.turns] == [
        (341765, "turn_duration"),
        (1528816, "turn_duration"),
    ]
    assert [t["compacted"] for t in r.turns] == [False, True]
    # the compacted turn gives no sample, and there is no other: no velocity, so no turns-until figure
    assert r.turn_figures["context_velocity_tokens"] is None
    # observed threshold (auto boundary preTokens 170,251)
    assert r.turn_figures["autocompact_threshold_tokens"] == 170251
    assert r.turn_figures["turns_until_autocompact"] is None
    assert r.turn_figures["context_tokens"] == 106060


def test_turns_interrupt_and_subagent_prompts(reports: dict) -> None:
    """flat-agent-files: the interrupt is not a turn (5 prompts); warmup and Task prompts are subagents'."""
    r = reports["b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"]
    assert r.turn_figures["turns"] == 5
    inline = reports["b-ccv-inline-sidechains-v1098.jsonl"]
    assert inline.turn_figures["turns"] == 1  # 5 inline sidechain prompts are not turns


def test_turns_stream_json_run_is_one_turn_timed_by_result(reports: dict) -> None:
    """A stream-json run writes no prompt line: one turn, its duration the result's duration_ms."""
    r = reports["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    assert r.turns == [
        {"turn": 0, "line": None, "calls": 68, "context_tokens": 133511, "compacted": False,
         "duration_ms": 487629, "duration_source": "result"}
    ]  # fmt: skip
    assert r.turn_figures["context_velocity_tokens"] is None  # absent until a second turn


def test_context_velocity_is_an_ema_of_turn_deltas(reports: dict) -> None:
    """b-ccl-thinking: deltas 1,649, 4,437, 16,138, 14,643 → EMA (α 1/5) 6,922.904."""
    r = reports["b-ccl-thinking-sonnet45.jsonl"]
    sizes = [t["context_tokens"] for t in r.turns]
    assert sizes == [35617, 37266, 41703, 57841, 72484]
    ema = 1649.0
    for d in (4437, 16138, 14643):
        ema += (d - ema) / 5
    assert r.turn_figures["context_velocity_tokens"] == pytest.approx(ema) == pytest.approx(6922.904)
    assert context_velocity([{"context_tokens": 5, "compacted": False}]) is None


def test_agent_teams_turn_durations_and_prefix(reports: dict) -> None:
    """agent-teams: 2 turns timed by turn_duration; fixed prefix = read + write of the first main call."""
    r = reports["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    assert [t["duration_ms"] for t in r.turns] == [247515, 152878]
    assert r.turn_figures["context_velocity_tokens"] == 66603 - 51003
    assert r.turn_figures["fixed_prefix_tokens"] == 27860
    assert r.turn_figures["context_band"] == "ok"


@pytest.mark.parametrize(
    ("context", "band"),
    [(146_999, "ok"), (147_000, "warn"), (166_999, "warn"), (167_000, "blocked"), (196_999, "blocked")],
)
def test_context_band_edges(context: int, band: str) -> None:
    """Threshold 167,000 on a 200,000 window: ok < 147,000 ≤ warn < 167,000 ≤ blocked."""
    assert context_band(context, 167_000, 200_000) == band


def test_context_band_blocked_near_window() -> None:
    """Blocked from window − 3,000 even when the threshold is above it."""
    assert context_band(197_000, 250_000, 200_000) == "blocked"


# -- agents --------------------------------------------------------------------------------------------


def test_agent_rows_from_meta_json(reports: dict) -> None:
    """agent-teams: six agents, type and description from .meta.json, returned = Task result chars / 4."""
    r = reports["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"]
    rows = {a["thread"]: a for a in r.agents}
    assert len(rows) == 6
    a = rows["a4ca7529859c158c2"]
    assert (a["agent_type"], a["description"], a["tasks"]) == ("general-purpose", "Research Claude Code plan mode", 1)
    assert a["returned_chars"] == 2178 and a["returned_tokens"] == 544.5
    assert a["return_ratio"] == pytest.approx(544.5 / a["output_tokens"])
    assert a["duration_ms"] == 1776519239564 - 1776518436808  # Task tool_use → its tool_result
    assert sum(x["cost_usd"] for x in r.agents) == pytest.approx(r.subagents["cost_usd"])


def test_agent_rows_stream_json_linked_by_id(reports: dict) -> None:
    """stream-json: the subagent thread is its Task call's id; type/description from the call's input."""
    r = reports["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    (a,) = r.agents
    assert (a["agent_type"], a["description"], a["linked_by"]) == ("Explore", "Explore Studio Mode code", "tool_use_id")
    assert a["returned_chars"] == 14169 and a["calls"] == 12


def test_agent_rows_warmups_have_no_task(reports: dict) -> None:
    """flat-agent-files: two Warmup sidechains have no Task call; the Plan agent is linked exactly by its
    result's agentId."""
    r = reports["b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"]
    rows = {a["thread"]: a for a in r.agents}
    assert rows["2b93909d"]["tasks"] == 0 and rows["2b93909d"]["returned_tokens"] is None
    assert (rows["ea02459f"]["agent_type"], rows["ea02459f"]["linked_by"]) == ("Plan", "agent_id")


# -- command -------------------------------------------------------------------------------------------


def test_cli_usage_json_holds_every_reading() -> None:
    """`context usage --json` prints a list whose object carries the totals, turns, agents and price date."""
    result = CliRunner().invoke(
        app, ["context", "usage", str(SAMPLES / "b-ccl-print-mode-sessions"), "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0
    data = orjson.loads(result.stdout)
    assert isinstance(data, list) and len(data) == 2
    keys = {"total", "main", "subagents", "models", "threads", "turns", "turn_figures", "turn_rows", "agents",
            "reported", "price_table_date", "cost_usd", "cost_is_lower_bound", "unpriced_models", "window"}  # fmt: skip
    assert keys <= set(data[0])


def test_cli_usage_table_and_breakdown() -> None:
    """The table has a subagents row under a trace with subagents; --breakdown adds model/agent tables."""
    result = CliRunner().invoke(
        app, ["context", "usage", str(SAMPLES / "b-spotter-compaction"), "--breakdown"], catch_exceptions=False
    )
    assert result.exit_code == 0
    assert "↳ subagents" in result.stdout and "$10.11" in result.stdout
    assert ": by model" in result.stdout and ": agents" in result.stdout and "band ok" in result.stdout


def test_cache_write_without_split_counts_once_as_assumed_5m() -> None:
    """B01 writes no 5m/1h split: its 1,200 cache-write tokens are 5-minute once (assumed), not twice."""
    from contexttrace.reports.usage import build_usage

    [trace] = read_trace(str(CASES / "B01.jsonl"))
    total = build_usage(trace).total
    assert (total["cache_write_tokens"], total["cache_write_5m_tokens"], total["cache_write_1h_tokens"]) == (
        1200,
        1200,
        0,
    )
    assert total["cache_write_assumed_5m_tokens"] == 1200


def test_unpriced_model_row_costs_none_not_zero(tmp_path) -> None:
    """B14: a model the table lacks gets cost None in its row (unknown), and the total is a lower bound."""
    from contexttrace.reports.usage import build_usage

    line = (
        '{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"deepseek-v4-flash",'
        '"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}\n'
    )
    path = tmp_path / "t.jsonl"
    path.write_text(line)
    report = build_usage(read_trace(str(path))[0])
    assert [m["cost_usd"] for m in report.models] == [None]
    assert report.total["cost_is_lower_bound"] is True


# -- what a trace does not hold, and inputs that are not what they should be -------------------

SPOTTER = "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


def test_session_copied_without_subagents_warns_and_is_a_lower_bound(reports: dict, tmp_path) -> None:
    """b-spotter's session file alone (no `subagents/` folder): its Explore agent a2898e3 is named by a Task
    result but not found; a warning says so, the cost is `≥` and equals the full session's main thread."""
    import shutil

    path = tmp_path / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    shutil.copy(SAMPLES / SPOTTER, path)
    [r] = analyze([str(path)], build=build_usage).reports
    full = reports[SPOTTER]
    assert r.missing_subagents == ["a2898e3"]
    assert "1 subagent(s) referenced but not found; totals exclude them (a2898e3)" in r.warnings
    assert r.total["lower_bound_reasons"] == ["output_placeholder", "missing_subagents"]
    assert r.total["cost_usd"] == pytest.approx(full.main["cost_usd"]) == pytest.approx(9.52614975)
    assert r.to_dict()["missing_subagents"] == 1 and r.to_dict()["missing_subagent_ids"] == ["a2898e3"]
    assert full.missing_subagents == []  # read from its folder, the agent is found


def test_no_missing_subagents_when_every_agent_is_read(reports: dict) -> None:
    """Agents found by id (2.x), by the Task call's id (stream-json), or inline: none is reported missing."""
    assert all(r.missing_subagents == [] for r in reports.values())
    assert [a["thread"] for a in reports["a-ralph-subagent-opus45-haiku45.jsonl#1"].agents] == [
        "toolu_01KHp6GtFD1DBDvYDrp6vfHh"
    ]  # its result names agent 96dad8ed; the thread is the Task call's id


def test_cache_split_written_as_zero_zero_is_priced_as_assumed_5m(tmp_path) -> None:
    """b-ccl-thinking with every `cache_creation` split rewritten to 0/0: the 182,937 cache-write tokens are
    priced as 5-minute (the cost is the sample's own $1.45425525, all its writes being 5-minute) and
    reported as assumed; before, they were shown but priced at $0."""
    import json

    lines = []
    for raw in (SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes().splitlines(keepends=True):
        rec = json.loads(raw)
        usage = rec.get("message", {}).get("usage") if isinstance(rec.get("message"), dict) else None
        if isinstance(usage, dict) and isinstance(usage.get("cache_creation"), dict):
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
            raw = json.dumps(rec).encode() + b"\n"
        lines.append(raw)
    path = tmp_path / "zero-split.jsonl"
    path.write_bytes(b"".join(lines))
    [r] = analyze([str(path)], build=build_usage).reports
    t = r.total
    assert (t["cache_write_tokens"], t["cache_write_5m_tokens"], t["cache_write_1h_tokens"]) == (182937, 182937, 0)
    assert t["cache_write_assumed_5m_tokens"] == 182937
    assert t["cost_usd"] == pytest.approx(1.45425525, abs=1e-9)
    from contexttrace.render.usage import render_usage_notes
    from contexttrace.reports.results import RunResult

    notes = render_usage_notes(RunResult([r], []))
    assert any("182,937 cache-write tokens priced as 5-minute writes (assumed 5m" in n for n in notes)


@pytest.mark.parametrize("name", ["fuzz/03-usage-breakdown-no-calls.jsonl", "cases/B38.jsonl"])
def test_breakdown_of_a_trace_without_calls(name: str) -> None:
    """B38 / fuzz 03: `context usage --breakdown` prints the zero row (calls 0, turns 1, $0.00), omits the
    empty tables, exits 0, and the trace named after it prints in full."""
    good = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    result = CliRunner().invoke(
        app, ["context", "usage", "--breakdown", str(CASES.parent / name), good], catch_exceptions=False
    )
    assert result.exit_code == 0
    label = name.rsplit("/", 1)[-1]  # the table names a trace by its file name (its short label)
    row = next(line for line in result.stdout.splitlines() if f"| {label} " in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:] == ["0", "1", "0", "0", "0", "0", "-", "$0.00"]
    assert f"{name}: by model" not in result.stdout and f"{name}: by thread" not in result.stdout
    assert f"{name}: turns 1 ·" in result.stdout
    for table in ("by model", "by thread"):
        assert f"b-ccl-thinking-sonnet45.jsonl: {table}" in result.stdout
    assert "≈$1.45" in result.stdout


@pytest.mark.parametrize(
    ("value", "written"),
    [
        pytest.param('"abc"', "'abc'", id="string"),
        pytest.param("NaN", "nan", id="nan"),
        pytest.param("1e999", "inf", id="overflow-float"),
        pytest.param("[12]", "[12]", id="list"),
        pytest.param("-5", "-5", id="negative"),
        pytest.param("true", "True", id="bool"),
        pytest.param("123456789012345678901234567890", "1.2345678901234568e+29", id="huge-int"),
    ],
)
def test_model_usage_count_that_is_not_a_count(tmp_path, value: str, written: str) -> None:
    """fuzz 05: a modelUsage token count that is not a count is read as none (never a crash): a warning
    names it, the entry prices nothing (the output stays ≥), the report renders as table and JSON."""
    text = (CASES.parent / "fuzz" / "05-result-modelUsage-tokens-not-a-number.jsonl").read_text()
    path = tmp_path / "t.jsonl"
    path.write_text(text.replace('"inputTokens":"abc"', f'"inputTokens":{value}'))
    [r] = analyze([str(path)], build=build_usage).reports
    assert any(f"inputTokens is not a token count ({written}" in w for w in r.warnings), r.warnings
    [row] = r.reported["reported_model_usage"]
    assert (row["input_tokens"], row["output_tokens"], row["implausible_fields"]) == (None, 5, ["inputTokens"])
    assert r.reported["reported_tokens_priced_usd"] is None  # unpriced, never priced as 0
    assert r.reported["reported_cost_usd"] == 0.01
    assert r.result_only is None and r.total["lower_bound_reasons"] == ["output_placeholder"]
    assert r.total["cost_usd"] == pytest.approx((10 * 3 + 5 * 15) / 1e6)  # the call as written, Sonnet 4.5
    from contexttrace.render.usage import render_usage_table
    from contexttrace.reports.results import RunResult

    run = RunResult([r], [])
    assert orjson.loads(render_json(run))[0]["reported"]["reported_model_usage"][0]["input_tokens"] is None
    assert "≥$0.0001" in render_usage_table(run, breakdown=True)


def test_model_usage_cost_and_window_that_are_not_numbers(tmp_path) -> None:
    """A total_cost_usd or costUSD of the wrong type or not finite reads as None, never a crash or NaN."""
    text = (CASES.parent / "fuzz" / "05-result-modelUsage-tokens-not-a-number.jsonl").read_text()
    text = text.replace('"total_cost_usd":0.01', '"total_cost_usd":1e999').replace('"costUSD":0.01', '"costUSD":"x"')
    text = text.replace('"inputTokens":"abc"', '"inputTokens":10')
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    [r] = analyze([str(path)], build=build_usage).reports
    assert r.reported["reported_cost_usd"] is None and r.reported["cost_difference_usd"] is None
    assert r.reported["reported_model_usage"][0]["cost_usd"] is None
    # the entry's counts are counts: it completes the call (output 5 as written, nothing beyond it)
    assert r.total["cost_source"] == "messages" and r.total["lower_bound_reasons"] == []


def test_task_input_lone_surrogate_is_not_parsed_again(tmp_path) -> None:
    """fuzz 06: a Task input holding a lone surrogate: the agent row takes its type and description from
    the reader's columns (never re-parsing `input_json`), linked by the result's agentId."""
    text = (CASES.parent / "fuzz" / "06-task-input-lone-surrogate.jsonl").read_text()
    more = [
        {"type": "user", "sessionId": "s1", "uuid": "u2", "timestamp": "2026-01-24T04:08:09.000Z",
         "message": {"role": "user",
                     "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "found"}]},
         "toolUseResult": {"status": "completed", "agentId": "x1"}},
        {"type": "assistant", "sessionId": "s1", "agentId": "x1", "isSidechain": True, "uuid": "b1",
         "timestamp": "2026-01-24T04:08:02.000Z",
         "message": {"id": "msg_s1", "model": "claude-haiku-4-5-20251001", "role": "assistant", "content": [],
                     "stop_reason": "end_turn", "usage": {"input_tokens": 7, "cache_creation_input_tokens": 0,
                                                          "cache_read_input_tokens": 0, "output_tokens": 3}}},
    ]  # fmt: skip
    path = tmp_path / "t.jsonl"
    path.write_text(text + "".join(orjson.dumps(m).decode() + "\n" for m in more))
    [r] = analyze([str(path)], build=build_usage).reports
    [agent] = r.agents
    assert (agent["agent_type"], agent["description"], agent["linked_by"]) == ("general-purpose", "look", "agent_id")
    assert agent["returned_chars"] == 5 and agent["duration_ms"] == 8000  # 04:08:01 Task → 04:08:09 result


def test_task_input_nested_too_deep_is_not_parsed_again() -> None:
    """fuzz 06b: a Task input nested 990 deep (its canonical JSON not decodable): usage builds, no agent."""

    [trace] = read_trace(str(CASES.parent / "fuzz" / "06b-task-input-nested-990.jsonl"))
    r = build_usage(trace)
    assert (r.total["calls"], r.agents, r.turn_figures["turns"]) == (1, [], 1)


def test_subagent_duration_from_the_timestamps_that_parse() -> None:
    """fuzz 11: the subagent call's last line has a timestamp that does not parse: the row is built, and
    with one timestamp left there is no duration to measure (None, not a crash or 0)."""

    [trace] = read_trace(str(CASES.parent / "fuzz" / "11-subagent-call-last-line-bad-timestamp.jsonl"))
    [agent] = build_usage(trace).agents
    assert (agent["thread"], agent["calls"], agent["output_tokens"]) == ("x1", 1, 3)
    assert (agent["duration_ms"], agent["duration_source"]) == (None, None)


@pytest.mark.parametrize("name", sorted(p.name for p in (CASES.parent / "fuzz").iterdir()) + sorted(
    p.name for p in CASES.iterdir()))  # fmt: skip
def test_usage_never_raises_on_fuzz_and_cases(name: str) -> None:
    """Every fuzz find and field case: `build_usage` and both renderers run on whatever the reader gives
    (the runner's firewall is not relied on)."""
    from contexttrace.errors import ContextTraceError
    from contexttrace.render.trace import render_json
    from contexttrace.render.usage import render_usage_table
    from contexttrace.reports.results import RunResult

    base = CASES.parent / ("fuzz" if (CASES.parent / "fuzz" / name).exists() else "cases") / name
    files = sorted(base.rglob("*.jsonl")) if base.is_dir() else [base]
    for f in files:
        try:
            traces = read_trace(str(f))
        except ContextTraceError:  # a file the reader refuses (a failure of that trace) has no usage
            continue
        reports = [build_usage(t) for t in traces]
        run = RunResult(reports, [])
        assert isinstance(orjson.loads(render_json(run)), list)
        assert render_usage_table(run, breakdown=True)


def _keys(value: object) -> set[str]:
    """Every object key at any depth of a decoded JSON value."""
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def test_every_usage_json_key_is_documented() -> None:
    """Each key `context usage --json` writes (samples of both formats, a run without a result, a session
    missing its subagents) is snake_case and named in backticks in docs/usage.md."""
    import re

    from contexttrace.reports.results import RunResult

    run = analyze([str(SAMPLES)], build=build_usage)
    keys = _keys(orjson.loads(render_json(RunResult(run.reports, []))))
    doc = (SAMPLES.parent / "docs" / "usage.md").read_text()
    documented = set(re.findall(r"`([a-z0-9_]+)`", doc)) | set(re.findall(r"`([a-z0-9_.]+)\[\]`", doc))
    documented |= {k.split(".")[-1] for k in re.findall(r"`([a-z0-9_.]+)`", doc)}
    assert {k for k in keys if not re.fullmatch(r"[a-z][a-z0-9_]*", k)} == set()
    assert keys - documented == set()


def test_usage_stdout_holds_only_the_table_notes_go_to_stderr():
    """`context usage` prints its notes (lower bounds, Claude Code's own cost) on stderr: stdout is the table."""
    out = CliRunner().invoke(app, ["context", "usage", str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")])
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines and all(line.startswith("|") for line in lines)
    assert "Claude Code" in out.stderr or "≥" in out.stderr


runner = CliRunner()


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
    path = write_file(tmp_path, stream_run(result_fields={"duration_ms": "<d>", "num_turns": 1}, d=written))
    out = runner.invoke(app, ["context", "usage", path, "--json"])
    assert out.exit_code == 0, out.output
    [u] = orjson.loads(out.stdout)
    assert (u["turn_rows"][0]["duration_ms"], u["turn_rows"][0]["duration_source"]) == (None, None)
    assert u["reported"]["reported_duration_ms"] is None and u["reported"]["reported_num_turns"] == 1
    assert u["warnings"] == [f"result line: duration_ms is not a count ({shown}); not used"]


def test_result_duration_that_is_a_count_times_the_turn(tmp_path):
    """The same field, a count: the run's one turn is timed by it, as before."""
    path = write_file(tmp_path, stream_run(result_fields={"duration_ms": 1500}))
    [u] = analyze([path], build=build_usage).reports
    assert (u.turns[0]["duration_ms"], u.turns[0]["duration_source"]) == (1500, "result")
    assert u.reported["reported_duration_ms"] == 1500 and u.warnings == []


def test_result_usage_counts_and_costs_are_bounded(tmp_path):
    """Every other number of the result line too: a `usage` count of 10**400, a negative
    `total_cost_usd`, a `costUSD` of 10**400 are unknown (null) and warned, and the JSON prints."""
    fields = {"total_cost_usd": -3.5, "num_turns": "<huge>", "usage": {"input_tokens": "<huge>"}}
    data = stream_run(result_fields=fields, model_usage={"costUSD": "<huge>"}, huge=HUGE)
    path = write_file(tmp_path, data)
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
    t = memory_trace(
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
    t = memory_trace(
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


def test_unreadable_usage_makes_the_cost_a_lower_bound_and_the_split_never_exceeds_its_total():
    """The float-usage session priced its still-readable 5m split ($0.686 with every token column 0, and
    JSON cache_write_tokens 0 beside cache_write_5m_tokens 182,937). A split is cut to the total it
    splits, and a call whose usage was unreadable makes the cost `≥` with a reason."""
    t = memory_trace(
        float_usage_call("m1", split={"ephemeral_5m_input_tokens": 182_937, "ephemeral_1h_input_tokens": 0}),
        float_usage_call("m2"),
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
    assert "≥$0.00" in table and "≈$0.6" not in table


def test_b33_compaction_pass_is_billed_and_priced_on_its_own_prompt() -> None:
    """B33: one Sonnet 4.5 response holding a compaction pass (180,000 in, 3,500 out) and the answer (23,000 in,
    1,000 out): tokens count both passes, each priced under 200K ($0.54 + $0.0525 + $0.069 + $0.015), never
    at the long-context rate their sum (203,000) would cross; the context is the answer's prompt, and the
    pass is a compaction whose pre-size is its prompt."""
    path = str(CASES / "B33.jsonl")
    [trace] = read_trace(path)
    usage = build_usage(trace)
    total = usage.total
    assert (total["calls"], total["input_tokens"], total["output_tokens"]) == (1, 203_000, 4_500)
    assert total["cost_usd"] == pytest.approx(0.6765)
    assert (total["long_context_calls"], total["cost_is_lower_bound"]) == (0, False)
    assert usage.turn_figures["context_tokens"] == 23_000
    rep = report_of(path)
    assert (rep.calls, rep.first, rep.peak, rep.compact) == (1, 23_000, 23_000, 1)
    [compaction] = rep.compaction_events
    assert (compaction["pre_tokens"], compaction["context_after"], compaction["call"]) == (180_000, 23_000, 1)


def test_b33_a_pass_over_the_threshold_takes_the_long_rate_alone(tmp_path) -> None:
    """A pass whose own prompt crosses 200K is priced at the long-context rate; the answer under it is not."""
    line = orjson.loads((CASES / "B33.jsonl").read_bytes().splitlines()[1])
    line["message"]["usage"]["iterations"][0]["input_tokens"] = 250_000
    path = tmp_path / "long.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    [trace] = read_trace(str(path))
    total = build_usage(trace).total
    long_pass = 250_000 * 6 / 1e6 + 3_500 * 22.5 / 1e6  # Sonnet 4.5 over 200K: $6 in, $22.50 out per MTok
    assert total["cost_usd"] == pytest.approx(long_pass + 0.084)
    assert total["long_context_calls"] == 0  # the answer's own prompt is 23,000


def test_b35_init_with_the_same_session_continues_the_run() -> None:
    """B35: a second `system/init` with the run's `session_id` (one per message read on standard input) is
    one run: two calls, two turns, and the last result's cumulative cost matches ours (difference $0.00)."""
    [trace] = read_trace(str(CASES / "B35.jsonl"))
    usage = build_usage(trace)
    assert (usage.total["calls"], usage.turn_figures["turns"]) == (2, 2)
    assert usage.total["cost_usd"] == pytest.approx(0.0409425)
    assert usage.reported["reported_cost_usd"] == pytest.approx(0.0409425)
    assert usage.reported["cost_difference_usd"] == pytest.approx(0.0, abs=1e-9)


def test_b37_background_agent_timed_to_its_notification_and_returning_its_report() -> None:
    """B37: an Agent call launched in the background returns a 129-char receipt at once; the agent's report
    (53 chars) comes 58 minutes later in a task notification. The agent runs to the notification (≈58 min,
    from the tool_use at 02:52:22.260 to the notification line at 03:50:39.200; the queue's enqueue line,
    29 ms earlier, is skipped unread) and returns the report; the trace's own columns keep the receipt."""
    path = CASES / "B37" / "s37.jsonl"
    rep = report_of(path)
    assert (rep.calls, rep.tools, rep.result_chars) == (3, 1, 129)
    [trace] = read_trace(str(path), find_traces([str(CASES / "B37")])[0].subagents)
    usage = build_usage(trace)
    assert usage.turn_figures["turns"] == 1
    [agent] = usage.agents
    assert (agent["thread"], agent["calls"], agent["output_tokens"]) == ("ag37", 2, 700)
    assert agent["cost_usd"] == pytest.approx(0.101665)
    assert agent["duration_ms"] == pytest.approx(3_496_911, abs=100)
    assert agent["returned_chars"] == 53


def test_b37_background_agent_without_its_notification_returned_unknown(tmp_path) -> None:
    """Without the notification the agent's report is not in the trace: returned is unknown (never the
    receipt), and its duration is measured over its own calls' lines (03:20:00 to 03:50:38)."""
    import shutil

    session = tmp_path / "B37"
    shutil.copytree(CASES / "B37", session)
    main = session / "s37.jsonl"
    main.write_bytes(b"".join(line for line in main.read_bytes().splitlines(True) if b"task-notification" not in line))
    [source] = find_traces([str(session)])
    [trace] = read_trace(source.path, source.subagents)
    [agent] = build_usage(trace).agents
    assert (agent["returned_chars"], agent["returned_tokens"], agent["return_ratio"]) == (None, None, None)
    assert (agent["duration_ms"], agent["duration_source"]) == (1_838_000, "agent_lines")


def test_b39_placeholder_then_real_line_is_one_call() -> None:
    """B39: each call written first with all usage 0, then with its real usage, under one message id: two
    calls, no "not unique" or unreadable-usage warning, peak and cost from the real lines."""
    [trace] = read_trace(str(CASES / "B39.jsonl"))
    usage = build_usage(trace)
    assert usage.total["calls"] == 2
    assert usage.total["cost_usd"] == pytest.approx(0.023043)
    assert (usage.total["cost_is_lower_bound"], usage.warnings) == (False, [])
    rep = report_of(CASES / "B39.jsonl")
    assert (rep.calls, rep.first, rep.peak, rep.warnings) == (2, 20_003, 20_303, [])


def test_rows_between_seqs_equal_a_scan_in_order_and_out_of_order():
    """`turns.between` (a binary search over rows in `seq` order) gives what a scan of every row gives, for
    rows in order, with repeated seqs, and out of order (where it scans)."""
    from contexttrace.reports.turns import between

    ordered = [(1, "a"), (3, "b"), (3, "c"), (7, "d"), (9, "e")]
    shuffled = [(7, "d"), (1, "a"), (9, "e"), (3, "b")]
    for rows in (ordered, shuffled, []):
        find = between(rows)
        for lo in range(0, 11):
            for hi in (*range(lo, 12), None):
                assert find(lo, hi) == [r for r in rows if r[0] >= lo and (hi is None or r[0] < hi)]
    assert between(ordered)(3, 8) == [(3, "b"), (3, "c"), (7, "d")]
