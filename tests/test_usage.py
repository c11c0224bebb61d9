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
hold a streaming placeholder, FORMATS G2/G9). We report both, never add them.
"""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli import app
from contexttrace.runner import analyze
from contexttrace.usage import build_usage, context_band, context_velocity

from .conftest import CASES, SAMPLES

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
    t = reports[name].total
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
    assert t["cost_is_lower_bound"] is False
    assert t["cache_hit_ratio"] == pytest.approx(cr / (cr + cw + inp))


def test_threads_and_models_add_up(reports: dict) -> None:
    """Per-thread and per-model rows partition the totals: tokens and cost sum back to the trace's."""
    for r in reports.values():
        for rows in (r.threads, r.models):
            assert sum(x["cache_read_tokens"] for x in rows) == r.total["cache_read_tokens"]
            assert sum(x["cost_usd"] for x in rows) == pytest.approx(r.total["cost_usd"])
        assert r.main["calls"] + r.subagents["calls"] == r.total["calls"]


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
    assert r.total["cost_usd"] == pytest.approx(EXPECTED[name][-1], abs=1e-9)  # never the sum of both


def test_stream_json_reported_figures(reports: dict) -> None:
    """a-ralph-27runs#1: result total_cost_usd $2.15471825, usage output 14,624 vs 7,415 in the lines written."""
    r = reports["a-ralph-27runs-with-separators.jsonl#1"]
    assert r.reported["reported_cost_usd"] == 2.15471825
    assert r.reported["reported_usage"]["output_tokens"] == 14624
    assert r.total["output_tokens"] == 7415
    assert r.total["output_lower_bound_calls"] == 40  # every line has stop_reason null (FORMATS G2)
    assert reports["a-ralph-subagent-opus45-haiku45.jsonl#2"].reported is None  # run without a result line


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
    """b-spotter: the isCompactSummary line is not a turn; turn_duration lines give the first two durations."""
    r = reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert [(t["line"], t["calls"]) for t in r.turns] == [(7, 18), (280, 119), (1502, 2)]
    assert [(t["duration_ms"], t["duration_source"]) for t in r.turns] == [
        (341765, "turn_duration"),
        (1528816, "turn_duration"),
        (8162, "timestamps"),
    ]
    assert [t["compacted"] for t in r.turns] == [False, True, False]
    # the compacted turn gives no sample: velocity = 106,060 − 98,232 = 7,828
    assert r.turn_figures["context_velocity_tokens"] == 7828.0
    # observed threshold (auto boundary preTokens 170,251): (170,251 − 106,060) / 7,828
    assert r.turn_figures["autocompact_threshold_tokens"] == 170251
    assert r.turn_figures["turns_until_autocompact"] == pytest.approx((170251 - 106060) / 7828)


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
    from contexttrace.reader import read_trace
    from contexttrace.usage import build_usage

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
    from contexttrace.reader import read_trace
    from contexttrace.usage import build_usage

    line = (
        '{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"deepseek-v4-flash",'
        '"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5}}}\n'
    )
    path = tmp_path / "t.jsonl"
    path.write_text(line)
    report = build_usage(read_trace(str(path))[0])
    assert [m["cost_usd"] for m in report.models] == [None]
    assert report.total["cost_is_lower_bound"] is True
