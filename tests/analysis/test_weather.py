"""Tests of session weather (spec 002): curves at their anchors, levels, composition, samples, golden output."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict

import orjson
import pytest

from contexttrace.analysis import weather, weather_signals
from contexttrace.analysis.session import AXIS_CALLS, Compaction, MainCall, SessionRows, ToolCall, session_rows
from contexttrace.analysis.weather import weather_level, weather_of
from contexttrace.analysis.weather_series import signal_series, signals_after
from contexttrace.analysis.weather_signals import SIGNALS, compose, curve
from contexttrace.analysis.weather_worst import scores_after_each_call, worst_weather
from contexttrace.discover.local import find_traces
from contexttrace.reading import read_trace
from contexttrace.render.explain import render_explain, render_weather_tooltip
from contexttrace.render.text import GRADE_COLORS
from contexttrace.run.runner import analyze

from ..conftest import DATA, GOLDEN, ROOT, SAMPLES, check_golden


@pytest.mark.parametrize(
    ("name", "measure", "severity"),
    [
        pytest.param("ctx_pressure", 0.39, 0.0, id="ctx-below-40"),
        pytest.param("ctx_pressure", 0.40, 0.0, id="ctx-at-40"),
        pytest.param("ctx_pressure", 0.70, 0.5, id="ctx-70-linear"),
        pytest.param("ctx_pressure", 1.00, 1.0, id="ctx-at-100"),
        pytest.param("ctx_pressure", 1.30, 1.0, id="ctx-over-window-capped"),
        pytest.param("compaction_scar", 0, 0.0, id="scar-0"),
        pytest.param("compaction_scar", 1, 0.4, id="scar-1"),
        pytest.param("compaction_scar", 2, 0.6, id="scar-2"),
        pytest.param("compaction_scar", 7, 0.6, id="scar-7-capped"),
        pytest.param("truncation", 0, 0.0, id="trunc-none"),
        pytest.param("truncation", 1, 0.5, id="trunc-one"),
        pytest.param("truncation", 4, 0.5, id="trunc-fixed"),
        pytest.param("stuck", 9, 0.0, id="stuck-9"),
        pytest.param("stuck", 10, 0.9, id="stuck-at-10"),
        pytest.param("stuck", 30, 0.9, id="stuck-30"),
        pytest.param("latency_drift", 0.8, 0.0, id="lat-faster"),
        pytest.param("latency_drift", 1.0, 0.0, id="lat-1x"),
        pytest.param("latency_drift", 2.0, 0.5, id="lat-2x"),
        pytest.param("latency_drift", 3.0, 1.0, id="lat-3x"),
        pytest.param("latency_drift", 5.0, 1.0, id="lat-5x-capped"),
        pytest.param("error_cluster", 0.0, 0.0, id="cluster-0"),
        pytest.param("error_cluster", 0.5, 0.25, id="cluster-rate-over-2"),
        pytest.param("error_cluster", 1.0, 0.5, id="cluster-cap"),
        pytest.param("error_cumulative", 0.10, 0.25, id="cum-10"),
        pytest.param("error_cumulative", 0.20, 0.5, id="cum-at-20"),
        pytest.param("error_cumulative", 0.30, 0.75, id="cum-30"),
        pytest.param("error_cumulative", 0.40, 1.0, id="cum-at-40"),
        pytest.param("error_cumulative", 0.90, 1.0, id="cum-capped"),
        pytest.param("cache_health", 0.0, 0.5, id="cache-0"),
        pytest.param("cache_health", 0.25, 0.25, id="cache-25"),
        pytest.param("cache_health", 0.50, 0.0, id="cache-at-50"),
        pytest.param("cache_health", 0.97, 0.0, id="cache-97"),
    ],
)
def test_curve_anchor_points(name, measure, severity):
    """Each signal's severity is the spec's at its anchors, linear between, capped above."""
    assert curve(measure, SIGNALS[name]) == severity


def test_signal_caps_are_the_specs():
    """Caps: functional 0.9–1.0, quality 0.5–0.6, cost 0.5, as spec 002's table."""
    assert {k: v.cap for k, v in SIGNALS.items()} == {
        "ctx_pressure": 1.0,
        "compaction_scar": 0.6,
        "truncation": 0.5,
        "stuck": 0.9,
        "latency_drift": 1.0,
        "error_cluster": 0.5,
        "error_cumulative": 1.0,
        "cache_health": 0.5,
    }


@pytest.mark.parametrize(
    ("score", "level", "emoji"),
    [
        (0.0, "sunny", "☀️"),
        (0.3499, "sunny", "☀️"),
        (0.35, "fair", "🌤️"),
        (0.5499, "fair", "🌤️"),
        (0.55, "cloudy", "⛅"),
        (0.7499, "cloudy", "⛅"),
        (0.75, "rainy", "🌧️"),
        (0.9499, "rainy", "🌧️"),
        (0.95, "stormy", "⛈️"),
        (1.3, "stormy", "⛈️"),
    ],
)
def test_weather_level_band_edges(score, level, emoji):
    """Levels are `<` edges: a score on an edge is the worse level; the emoji are the spec's."""
    assert weather_level(score) == (level, emoji)


@pytest.mark.parametrize(
    ("severities", "score"),
    [([], 0.0), ([0.4], 0.4), ([0.4, 0.6], 0.72), ([0.5, 0.5, 0.5], 0.65), ([0.6, 0.5], 0.75), ([1.0, 1.0], 1.3)],
)
def test_compose_only_two_highest(severities, score):
    """Score = max + 0.3 × second; a third signal never adds."""
    assert compose(severities) == score


def test_weather_composition_hand_built():
    """A hand-built session is rainy 0.79.

    Twelve calls of 1,000 prompt tokens, the last at 154,000 of 200,000 = 0.77 → ctx (0.77 − 0.4) / 0.6 = 0.6167.
    One compaction → 0.4. Calls 2–11 (numbered from 1) each ask one tool; calls 9, 10 and 11 fail: the last 5 calls
    hold 4 tool calls (calls 8–11; call 12 asked none) with 3 errors → rate 0.75 → cluster 0.375; cumulative 3 of
    10 = 0.3 → 0.75. Cache reads 900 of 1,000 → 0.9 hit → 0; no stop_reason → truncation abstains; 10 results,
    longest failed run 3 → stuck 0; no latency → abstains. Score = 0.75 + 0.3 × 0.6167 = 0.935 → rainy, reached
    first after the last call, 12.
    """
    calls = [MainCall(10 * i, 1_000, 900, None, "m", None) for i in range(11)]
    calls.append(MainCall(110, 154_000, 900, None, "m", None))
    tools = [ToolCall(10 * i + 1, "Bash", None, i >= 8, False, 10 * i + 2, i) for i in range(1, 11)]
    rows = SessionRows(calls, tools, [Compaction(55, "auto", 150_000)], {}, AXIS_CALLS)
    w = weather_of(rows, 200_000)
    sev = {s["name"]: s["severity"] for s in w["signals"]}
    assert sev == {
        "ctx_pressure": 0.616666667,
        "compaction_scar": 0.4,
        "truncation": None,
        "stuck": 0.0,
        "latency_drift": None,
        "error_cluster": 0.375,
        "error_cumulative": 0.75,
        "cache_health": 0.0,
    }
    assert (w["level"], w["emoji"], w["score"]) == ("rainy", "🌧️", 0.935)
    assert [f["name"] for f in w["factors"]] == ["error_cumulative", "ctx_pressure", "compaction_scar", "error_cluster"]
    assert w["factors"][0]["calls"] == [9, 10, 11]  # numbered from 1: the 0-based indexes 8, 9, 10
    assert w["factors"][0]["why"] == "3 of 10 tool calls failed"
    factors = ["error_cumulative", "ctx_pressure", "compaction_scar", "error_cluster"]
    assert w["worst"] == {"level": "rainy", "emoji": "🌧️", "score": 0.935, "call": 12, "factors": factors}
    assert w["reason"] is None


def test_abstaining_signals_say_why():
    """A signal without enough data has severity None and a reason, and is not composed."""
    rows = SessionRows([MainCall(1, 10_000, 0, None, "m", None)], [], [], {}, AXIS_CALLS)
    w = weather_of(rows, 200_000)
    idle = {s["name"]: s["why"] for s in w["signals"] if s["severity"] is None}
    assert set(idle) == {"truncation", "stuck", "latency_drift", "error_cluster", "error_cumulative", "cache_health"}
    assert idle["latency_drift"] == "no timestamps to time calls by"
    assert w["score"] == 0.0


def test_stuck_fires_at_ten_consecutive_failures():
    """Ten failed results in a row give 0.9; nine do not."""
    calls = [MainCall(100 * i, 1_000, 900, None, "m", None) for i in range(3)]
    for run, severity in ((9, 0.0), (10, 0.9)):
        tools = [ToolCall(1 + i, "Bash", None, i < run, False, 50 + i, 0) for i in range(12)]
        w = weather_of(SessionRows(calls, tools, [], {}, AXIS_CALLS), 200_000)
        assert next(s for s in w["signals"] if s["name"] == "stuck")["severity"] == severity


def test_latency_baselines_are_the_samples_medians():
    """The baseline table is what it says: the median main-call latency of the bundled Claude Code transcripts,
    by model (the other agents' lines are stamped when written, not when a call starts: no baseline)."""
    latencies: dict[str, list[int]] = defaultdict(list)
    for source in find_traces([str(SAMPLES)]):
        for trace in read_trace(source.path, source.subagents):
            if trace.format != "transcript":
                continue
            for c in session_rows(trace).calls:
                if c.latency_ms is not None and c.model:
                    latencies[re.sub(r"-\d{8}$", "", c.model)].append(c.latency_ms)
    table = {m: (e["ms"], e["calls"]) for m, e in weather_signals.LATENCY_BASELINE_MS.items()}
    assert table == {m: (statistics.median(v), len(v)) for m, v in latencies.items()}


#: Every sample's weather after its last call, and the worst it reached. Checked by hand from the signals:
#: spotter: ctx 106,060 / 200,000 = 0.5303 → 0.21717; scar 0.4 → 0.4 + 0.3 × 0.21717 = 0.46515 (fair).
#: subagent#1: ctx 133,511 / 200,000 = 0.667555 → 0.445925, nothing else → fair.
#: thinking: every call records its stop_reason, so latency is paced (see test_thinking_latency_is_paced):
#: p75 1.2353 × its own baseline → 0.1176; + 0.3 × cumulative 2 of 71 → 0.0704 = 0.1388 (sunny; the table's
#: raw latency, p75 17.5 s against 5.8 s, made it stormy 1.0211 on latency alone).
#: agent-teams (Opus 4.7, thinking): paced, 1.0951 → 0.0476 (sunny; raw latency made its worst stormy).
#: flat: paced 1.1278 → 0.0639, cumulative 5 of 76 → 0.1645: 0.1645 + 0.3 × 0.0639 = 0.1836 (sunny).
#: image: cumulative 0.2723 + 0.3 × latency 0.2035 = 0.3329 (sunny, < 0.35).
#: a-ralph#1: ctx 80,284 / 200,000 = 0.40142 → 0.0023667 (sunny).
#: print-mode 2b4e: its 6 failed results are all permission refusals, so no error signal; the only active
#: signal is latency drift, p75 over 1.0893 × the Opus 4.5 baseline → 0.0447 (sunny all along).
SAMPLE_WEATHER = [
    ("a-ralph-27runs-with-separators.jsonl#1", "sunny", 0.002366667, "sunny"),
    *[(f"a-ralph-27runs-with-separators.jsonl#{i}", "sunny", 0.0, "sunny") for i in range(2, 28)],
    ("a-ralph-subagent-opus45-haiku45.jsonl#1", "fair", 0.445925, "fair"),
    ("a-ralph-subagent-opus45-haiku45.jsonl#2", "sunny", 0.015716667, "sunny"),
    ("b-ccl-image-and-errors.jsonl", "sunny", 0.332936283, "fair"),
    ("b-ccl-thinking-sonnet45.jsonl", "sunny", 0.138766757, "sunny"),
    ("b-ccv-inline-sidechains-v1098.jsonl", "sunny", 0.286219081, "fair"),
    ("b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", "sunny", 0.047558013, "sunny"),
    ("b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl", "sunny", 0.183648674, "cloudy"),
    ("b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl", "sunny", 0.0, "sunny"),
    ("b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl", "sunny", 0.044664609, "sunny"),
    ("b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "fair", 0.46515, "stormy"),
    # Codex CLI rollouts (cache_health skipped: OpenAI usage). 0.65: error_cumulative 23 of 142 → 0.4049, one
    # compaction 0.4: 0.4049 + 0.3 × 0.4 = 0.5249 (fair).
    ("c-codex-0.111-exec-command.jsonl", "sunny", 0.21267404, "rainy"),
    ("c-codex-0.41-small.jsonl", "sunny", 0.0, "sunny"),
    ("c-codex-0.65-compaction.jsonl", "fair", 0.524929577, "stormy"),
    # Gemini CLI sessions (cache_health skipped: Google usage): latency drift alone, the message timestamps
    # of a session that waited on its person between calls.
    ("d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json", "stormy", 1.0, "stormy"),
    ("d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json", "rainy", 0.911805836, "stormy"),
    ("d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json", "stormy", 1.0, "stormy"),
]


@pytest.mark.parametrize(("name", "level", "score", "worst"), SAMPLE_WEATHER, ids=[s[0] for s in SAMPLE_WEATHER])
def test_sample_weather(sample_reports, name, level, score, worst):
    """Each real sample's weather and worst weather are as checked by hand."""
    w = sample_reports[name].extra["weather"]
    assert (w["level"], w["score"], w["worst"]["level"]) == (level, score, worst)


@pytest.mark.parametrize(
    ("name", "provider"),
    [
        ("c-codex-0.65-compaction.jsonl", "OpenAI"),
        ("c-codex-0.111-exec-command.jsonl", "OpenAI"),
        ("d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json", "Google"),
    ],
)
def test_cache_health_is_skipped_for_other_providers(sample_reports, name, provider):
    """Spec 002 scores cache health on Anthropic entries only: on a Codex rollout or a Gemini session the signal
    is not judged (severity null), the reason names the provider, and the tooltip's cache hit is unknown."""
    w = sample_reports[name].extra["weather"]
    [cache] = [x for x in w["signals"] if x["name"] == "cache_health"]
    assert (cache["severity"], cache["active"], cache["measure"], cache["calls"]) == (None, False, None, [])
    assert cache["why"] == (
        f"{provider} usage: spec 002 scores cache health on Anthropic entries only (other APIs count cached "
        "tokens differently)"
    )
    assert w["stats"]["cache_hit_frac"] is None


def test_cache_health_skip_follows_the_provider_not_the_numbers():
    """The same calls (13 with no cache hit) score cache health 0.5 as Anthropic's or unstated, and are skipped
    as OpenAI's, after the last call and after every call (`worst`)."""
    calls = [MainCall(k, 10_000, 0, "end_turn", "m", None) for k in range(13)]
    for provider, severity in (("anthropic", 0.5), (None, 0.5), ("openai", None), ("google", None)):
        rows = SessionRows(calls, [], [], {}, AXIS_CALLS, provider)
        w = weather_of(rows, 200_000)
        [cache] = [x for x in w["signals"] if x["name"] == "cache_health"]
        assert cache["severity"] == severity, provider
        assert w["worst"]["score"] == (0.5 if severity else 0.0), provider


def test_spotter_weather_by_hand(sample_reports):
    """The compaction sample's score is 0.4 (one compaction) + 0.3 × (0.5303 − 0.4) / 0.6, computed here."""
    w = sample_reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"].extra["weather"]
    assert w["score"] == round(0.4 + 0.3 * (106_060 / 200_000 - 0.4) / 0.6, 9)


def test_spec_colours_and_glyphs():
    """The health bar's five colours are spec 000's, grade A to F."""
    assert GRADE_COLORS == {"A": "#a6e3a1", "B": "#94e2d5", "C": "#f9e2af", "D": "#fab387", "F": "#f38ba8"}


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_explain_golden(request, color):
    """`--explain` for the compaction sample matches the reviewed golden text (plain glyphs and ANSI colour)."""
    run = analyze([str(SAMPLES / "b-spotter-compaction")], workers=1)
    text = render_explain(run, color=color).replace(str(SAMPLES), "samples")
    path = GOLDEN / f"b-spotter-compaction.explain.{'ansi' if color else 'txt'}"
    check_golden(request, path, text + "\n")
    if color:
        assert "\x1b[38;2;166;227;161m█" in text  # A, #a6e3a1
        assert "\x1b[38;2;243;139;168m┆" in text  # the compaction mark, #f38ba8
    else:
        assert "\x1b" not in text and "·AAAAAAAAAAAAAAAAABBC" in text  # · : the prompt before the first call


def test_worst_matches_full_signals_after_every_call():
    """The fast per-call path (no texts, no call lists) gives the same severities as the detailed one."""

    checked = 0
    for source in find_traces([str(SAMPLES / "b-spotter-compaction"), str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")]):
        [trace] = read_trace(source.path, source.subagents)
        rows = session_rows(trace)
        s = signal_series(rows, 200_000)
        for i in range(len(rows.calls)):
            fast = [x["severity"] for x in signals_after(s, i, detail=False)]
            full = [x["severity"] for x in signals_after(s, i)]
            assert fast == full
            checked += 1
    assert checked == 139 + 36  # the main-thread calls of both samples


def test_worst_is_the_highest_composed_score_after_any_call():
    """`worst_weather`'s fast pass equals composing `signals_after` after every call, on every real sample."""

    checked = 0
    for source in find_traces([str(SAMPLES)]):
        for trace in read_trace(source.path, source.subagents):
            rows = session_rows(trace)
            if not rows.calls:
                continue
            s = signal_series(rows, 200_000)
            scores = [
                compose([x["severity"] for x in signals_after(s, i, detail=False) if x["severity"] is not None])
                for i in range(len(rows.calls))
            ]
            best = max(scores)
            at = scores.index(best)
            then = sorted((x for x in signals_after(s, at, detail=False) if x["active"]), key=lambda x: -x["severity"])
            assert worst_weather(s) == (best, at, [x["name"] for x in then]), trace.name
            assert s.paces == [weather_signals.pace(c) for c in rows.calls], trace.name  # inlined in signal_series
            checked += 1
    assert checked == 43  # 37 Claude Code traces, 3 Codex rollouts (the legacy one has no call), 3 Gemini sessions


def _random_session(seed: int) -> SessionRows:
    """A random session mixing models, latencies around their baselines, outputs with and without a stop
    reason (paced and raw windows), hits around 0.5 and failed or refused results; its prompts all low or
    all high, so that the windowed signals decide."""
    import random

    rng = random.Random(seed)
    models = rng.choice([["claude-sonnet-4-5"], ["claude-opus-4-5", "claude-opus-4-7"], ["not-in-the-table", None]])
    high_prompts, fail_rate = rng.random() < 0.3, rng.choice([0.0, 0.05, 0.3])
    calls, tools, seq = [], [], 0
    for i in range(rng.randint(1, 60)):
        seq += rng.randint(1, 3)
        prompt = rng.randint(1_000, 190_000) if high_prompts else rng.choice([500, 999, 1_000, 20_000, 60_000])
        latency = rng.choice([None, 1_000, 3_078, 3_079, 5_795, 5_796, 6_000, 8_908, 8_909, 12_000, 30_000])
        stop = rng.choice([None, "tool_use", "end_turn", "max_tokens"] if rng.random() < 0.2 else [None, "end_turn"])
        read = rng.choice([0, prompt // 2 - 1, prompt // 2, prompt // 2 + 1, prompt])
        output = rng.choice([None, 1, 150, 800, 3_000])
        calls.append(MainCall(seq, prompt, read, stop, rng.choice(models), latency, output))
        for _ in range(rng.choice([0, 0, 1, 1, 2, 4])):
            seq += 1
            failed, denied = rng.random() < fail_rate, rng.random() < 0.1
            result_seq = rng.choice([None, seq + 1, seq + 1, seq + rng.randint(1, 12)])
            tools.append(ToolCall(seq, "Bash", None, failed and not denied, failed and denied, result_seq, i))
    bounds = sorted(rng.sample(range(1, seq + 2), k=min(rng.randint(0, 2), seq)))
    return SessionRows(calls, tools, [Compaction(b, "auto", None) for b in bounds], {}, AXIS_CALLS)


@pytest.mark.parametrize("seed", range(60))
def test_worst_equals_composed_scores_on_random_sessions(seed):
    """`worst_weather` skips windows whose severity is 0 whatever their measure (no failed result, no low cache
    hit, no latency above the lowest baseline): on random sessions (`_random_session`) it still equals
    composing `signals_after` after every call."""

    rows = _random_session(seed)
    s = signal_series(rows, 200_000)
    assert scores_after_each_call(s) == [
        compose([x["severity"] for x in signals_after(s, i, detail=False) if x["severity"] is not None])
        for i in range(len(rows.calls))
    ]


def test_random_sessions_judge_windows_both_ways():
    """The random sessions exercise both latency paths: some windows judged by pace, some by raw latency."""

    ways: dict[str, int] = defaultdict(int)
    for seed in range(60):
        rows = _random_session(seed)
        s = signal_series(rows, 200_000)
        for i in range(len(rows.calls)):
            lat = next(x for x in signals_after(s, i) if x["name"] == "latency_drift")
            if lat["severity"] is not None:
                ways["paced" if "per output token" in lat["why"] else "raw"] += 1
    assert ways["paced"] >= 100 and ways["raw"] >= 100, dict(ways)


def _latency_signal(w):
    return next(s for s in w["signals"] if s["name"] == "latency_drift")


def test_thinking_latency_is_paced():
    """The thinking sample's latency is judged per output token against its own first calls, not stormy.

    Recomputed here from the calls frame: every main call records its stop_reason, so each has a pace,
    (end_ts_ms − prev_ts_ms) ÷ (output_tokens + 150); p75 (numpy's linear) of the last 10 over the median of
    the first 10 is 1.2353 → severity (1.2353 − 1) / 2 = 0.1176. Raw latency against the table's Sonnet 4.5
    baseline (5,795 ms) is over 3× (→ 1.0, stormy on its own), because thinking is output.
    """
    [trace] = read_trace(str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl"))
    calls = trace.calls.filter(trace.calls["thread_kind"] == "main").sort("seq")
    assert calls["stop_reason"].null_count() == 0
    rows = calls.select("end_ts_ms", "prev_ts_ms", "output_tokens").rows()
    paces = [(end - prev) / (out + 150) for end, prev, out in rows]
    expected = statistics.quantiles(paces[-10:], n=4, method="inclusive")[2] / statistics.median(paces[:10])
    lat = _latency_signal(weather_of(session_rows(trace), 200_000))
    assert lat["measure"] == round(expected, 4) == 1.2353
    assert lat["severity"] == round((expected - 1) / 2, 9) == 0.117639996
    assert "ms per output token" in lat["why"]
    raw = [end - prev for end, prev, _ in rows]
    assert statistics.quantiles(raw[-10:], n=4, method="inclusive")[2] / 5795 > 3


@pytest.mark.parametrize(
    ("stop", "severity"),
    [pytest.param("end_turn", 0.0, id="final-outputs-paced"), pytest.param(None, 1.0, id="no-stop-reason-raw")],
)
def test_latency_in_proportion_to_output_is_no_drift(stop, severity):
    """Calls whose latency is exactly 20 ms × (output + 150), outputs growing from 100 to 3,000 tokens: paced,
    no drift; without stop_reasons (output not final) the spec's raw latency against the table is stormy."""
    outs = [100] * 5 + [3_000] * 10
    calls = [MainCall(10 * k, 1_000, 900, stop, "claude-sonnet-4-5", 20 * (o + 150), o) for k, o in enumerate(outs)]
    lat = _latency_signal(weather_of(SessionRows(calls, [], [], {}, AXIS_CALLS), 200_000))
    assert lat["severity"] == severity


@pytest.mark.parametrize(
    ("final", "mode"),
    [pytest.param(5, "paced", id="5-of-10-final-paced"), pytest.param(4, "raw", id="4-of-10-final-raw")],
)
def test_pace_mode_is_decided_per_window(final, mode):
    """A window is judged by pace when at least half its timed calls have a final output, else by raw latency."""
    calls = [
        MainCall(10 * k, 1_000, 900, "tool_use" if k < final else None, "claude-sonnet-4-5", 6_000, 250)
        for k in range(10)
    ]
    lat = _latency_signal(weather_of(SessionRows(calls, [], [], {}, AXIS_CALLS), 200_000))
    assert ("ms per output token" in lat["why"]) == (mode == "paced")
    assert lat["measure"] == (1.0 if mode == "paced" else round(6_000 / 5_795, 4))


def test_paced_window_with_few_final_outputs_abstains():
    """Eight timed calls, four with a final output: paced (4 of 8), and four paced calls are fewer than 5."""
    calls = [MainCall(10 * k, 1_000, 900, "end_turn" if k % 2 else None, "m", 6_000, 250) for k in range(8)]
    lat = _latency_signal(weather_of(SessionRows(calls, [], [], {}, AXIS_CALLS), 200_000))
    assert lat["severity"] is None
    assert lat["why"] == "4 call(s) with a final output count among the last 10: fewer than 5"


def test_weather_without_a_call():
    """No main-thread call: no level, emoji, score or worst, the reason, and the same keys as a real weather."""
    w = weather_of(SessionRows([], [], [], {}, AXIS_CALLS), 200_000)
    real = weather_of(SessionRows([MainCall(1, 1_000, 0, None, "m", None)], [], [], {}, AXIS_CALLS), 200_000)
    assert (w["level"], w["emoji"], w["score"], w["worst"]) == (None, None, None, None)
    assert w["reason"] == "no model call: no weather"
    assert set(w) == set(real) and set(w["stats"]) == set(real["stats"])
    assert all(s["severity"] is None and s["why"] == "no model call" for s in w["signals"])


@pytest.mark.parametrize("path", ["cases/B38.jsonl", "fuzz/03-usage-breakdown-no-calls.jsonl"])
def test_trace_without_a_call_has_no_weather(path):
    """B38 (every request failed) was `☀️ sunny`; with no call there is no weather, and --explain says why."""
    run = analyze([str(DATA / path)], workers=1)
    w = run.reports[0].extra["weather"]
    assert (w["level"], w["emoji"], w["score"], w["reason"]) == (None, None, None, weather.NO_CALL_REASON)
    text = render_explain(run)
    assert text.splitlines()[1:] == [
        "  fill – no model call: no prompt to measure",
        "  health – no model call: nothing to grade",
        "  weather – no model call: no weather",
    ]


def test_denials_are_named_beside_failures():
    """Refusals are not failures, and each failure count says how many were left out as denied.

    Ten calls asking one tool each: calls 1 and 2 fail, calls 8, 9, 10 are refused. Cumulative 2 of 10 = 0.2 →
    0.5 (fair); the last 5 calls hold 5 tool calls, none failed, 3 denied → cluster 0.
    """
    calls = [MainCall(10 * k, 1_000, 900, None, "m", None) for k in range(10)]
    tools = [ToolCall(10 * k + 1, "Bash", None, k < 2, k >= 7, 10 * k + 2, k) for k in range(10)]
    w = weather_of(SessionRows(calls, tools, [], {}, AXIS_CALLS), 200_000)
    why = {s["name"]: s["why"] for s in w["signals"]}
    assert why["error_cumulative"] == "2 of 10 tool calls failed (+3 denied, not counted)"
    assert why["error_cluster"] == "0 of 5 tool calls failed in the last 5 calls (+3 denied, not counted)"
    assert (w["stats"]["tool_errors"], w["stats"]["tool_denials"]) == (2, 3)
    assert (w["level"], w["score"]) == ("fair", 0.5)
    tooltip = render_weather_tooltip(w)
    assert "2 tool errors (+3 denied, not counted)" in tooltip[1]


def _keys(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def test_health_and_weather_json_keys_are_snake_case_and_documented(sample_reports):
    """Every key of `health` and `weather` is snake_case (the spec's camelCase names are gone) and named in
    docs/health-weather.md; fill_percent is rounded (72,484 / 200,000 × 100 = 36.242000000000004 unrounded)."""
    keys: set[str] = set()
    for r in sample_reports.values():
        _keys({"health": r.extra["health"], "weather": r.extra["weather"]}, keys)
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in keys), sorted(k for k in keys if not k.islower())
    assert {"fill_percent", "compaction_count", "reread_ratio", "error_acceleration", "tool_efficiency"} <= keys
    assert {"window_source", "timeline_axis", "has_data", "reason", "call"} <= keys
    assert "fillPercent" not in keys and "call_index" not in keys
    doc = (ROOT / "docs" / "health-weather.md").read_text(encoding="utf-8")
    assert [k for k in sorted(keys) if f"`{k}`" not in doc] == []
    assert sample_reports["b-ccl-thinking-sonnet45.jsonl"].extra["health"]["fill_percent"] == 36.24


def test_tooltip_names_the_worst_only_when_at_a_worse_level(sample_reports):
    """The heading adds the worst weather only when it reached a worse level, with its call (from 1) and the
    two signals that made it; a worst score that stayed at the same level adds nothing."""
    teams = sample_reports["b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"].extra["weather"]
    assert teams["worst"]["score"] > teams["score"] and teams["worst"]["level"] == teams["level"]
    assert render_weather_tooltip(teams)[0] == "  weather ☀️ sunny 0.05"
    spotter = sample_reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"].extra["weather"]
    assert render_weather_tooltip(spotter)[0] == (
        "  weather 🌤️ fair 0.47 (worst: ⛈️ stormy 1.18 after call #52: latency drift, context pressure)"
    )


def test_counts_are_integers_not_booleans():
    """The running counts print as numbers: one call with one clean tool result has `tool_errors` 0 (not
    false) and error_cumulative's reason says "1 call(s)" (not "True call(s)")."""
    rows = SessionRows(
        [MainCall(1, 1_000, 0, None, None, None)], [ToolCall(2, "Bash", None, False, False, 3, 0)], [], {}, AXIS_CALLS
    )
    w = weather_of(rows, 200_000)
    assert orjson.dumps(w["stats"]) == (
        b'{"context_fill_frac":0.005,"tool_errors":0,"tool_denials":0,"cache_hit_frac":null,'
        b'"latency_ratio":null,"compactions":0}'
    )
    why = next(x["why"] for x in w["signals"] if x["name"] == "error_cumulative")
    assert why == "1 call(s) used a tool: fewer than 10"
