"""Tests of the health grade (spec 000): band edges, the composite, the timeline, and every real sample."""

from __future__ import annotations

import orjson
import pytest

from contexttrace import health
from contexttrace.health import AXIS_CALLS, Compaction, MainCall, SessionRows, ToolCall, health_grade
from contexttrace.runner import analyze

from .conftest import SAMPLES


@pytest.mark.parametrize(
    ("fill", "score"),
    [
        pytest.param(None, 100, id="no-call"),
        pytest.param(0.4999, 100, id="below-0.50"),
        pytest.param(0.50, 80, id="at-0.50-exclusive"),
        pytest.param(0.6499, 80, id="below-0.65"),
        pytest.param(0.65, 60, id="at-0.65-exclusive"),
        pytest.param(0.80, 40, id="at-0.80-exclusive"),
        pytest.param(0.8999, 40, id="below-0.90"),
        pytest.param(0.90, 20, id="at-0.90-exclusive"),
        pytest.param(1.3, 20, id="over-window"),
    ],
)
def test_fill_score_band_edges(fill, score):
    """Context Fill bands are `<` edges: the edge itself falls in the worse band."""
    assert health.fill_score(fill) == score


@pytest.mark.parametrize(("count", "score"), [(0, 100), (1, 75), (2, 55), (3, 35), (4, 15), (9, 15)])
def test_compaction_score_counts(count, score):
    """Compactions: 0/1/2/3 exact, 4 and more are F."""
    assert health.compaction_score(count) == score


@pytest.mark.parametrize(
    ("ratio", "score"),
    [
        pytest.param(None, 100, id="no-reads"),
        pytest.param(0.05, 100, id="at-0.05-inclusive"),
        pytest.param(0.0501, 80, id="above-0.05"),
        pytest.param(0.10, 80, id="at-0.10-inclusive"),
        pytest.param(0.20, 60, id="at-0.20-inclusive"),
        pytest.param(0.2001, 40, id="above-0.20"),
        pytest.param(0.35, 40, id="at-0.35-inclusive"),
        pytest.param(0.3501, 20, id="above-0.35"),
    ],
)
def test_reread_score_band_edges(ratio, score):
    """Re-read bands are `<=` edges: the edge itself falls in the better band."""
    assert health.reread_score(ratio) == score


@pytest.mark.parametrize(
    ("rates", "score"),
    [
        pytest.param(None, 100, id="too-few"),
        pytest.param((0.0, 0.0), 100, id="clean"),
        pytest.param((0.0, 0.1), 40, id="from-clean"),
        pytest.param((0.2, 0.2), 100, id="ratio-1.0-inclusive"),
        pytest.param((0.2, 0.21), 75, id="ratio-above-1"),
        pytest.param((0.1, 0.2), 75, id="ratio-2.0-inclusive"),
        pytest.param((0.1, 0.3), 55, id="ratio-3.0-inclusive"),
        pytest.param((0.1, 0.5), 35, id="ratio-5.0-inclusive"),
        pytest.param((0.1, 0.51), 15, id="ratio-above-5"),
    ],
)
def test_error_acceleration_band_edges(rates, score):
    """Error acceleration: second ÷ first error rate, `<=` edges; clean → errors gives 40."""
    assert health.error_acceleration_score(rates) == score


@pytest.mark.parametrize(
    ("ratios", "score"),
    [
        pytest.param(None, 100, id="too-few"),
        pytest.param((0.0, 0.5), 80, id="no-writes-first-half"),
        pytest.param((0.5, 0.45), 100, id="change-0.9-inclusive"),
        pytest.param((0.5, 0.4499), 75, id="below-0.9"),
        pytest.param((0.5, 0.35), 75, id="change-0.7-inclusive"),
        pytest.param((0.5, 0.2), 55, id="change-0.4-inclusive"),
        pytest.param((0.4, 0.06), 35, id="change-0.15-inclusive"),
        pytest.param((0.4, 0.0599), 15, id="below-0.15"),
    ],
)
def test_tool_efficiency_band_edges(ratios, score):
    """Tool efficiency: second ÷ first productive share, `>=` edges; no writes at first gives 80."""
    assert health.tool_efficiency_score(ratios) == score


@pytest.mark.parametrize(
    ("score", "letter"),
    [(100, "A"), (85, "A"), (84.99, "B"), (70, "B"), (69.99, "C"), (55, "C"), (54.99, "D"), (40, "D"), (39.99, "F")],
)
def test_grade_band_edges(score, letter):
    """Grades are `>=` edges on the composite."""
    assert health.grade(score) == letter


def _tool(i: int, name: str = "Bash", error: bool = False, path: str | None = None) -> ToolCall:
    return ToolCall(
        seq=10 + i, name=name, file_path=path, is_error=error, denied=False, result_seq=11 + i, call_index=0
    )


def test_health_grade_composite_hand_built():
    """A hand-built session grades C 61.

    Last prompt 140,000 of 200,000 = 0.70 → fill 60. Two compactions → 55. Reads a, a, b, a: 2 re-reads of
    4 = 0.5 → 20. Eight tool calls, errors at 3 (first half) and 5, 6 (second half): rates 0.25, 0.5, ratio
    2.0 → 75. Productive: Edit at 0, 1 (first half 0.5), Write at 4 (second half 0.25): change 0.5 → 55.
    Composite 60·0.40 + 55·0.25 + 20·0.15 + 75·0.10 + 55·0.10 = 24 + 13.75 + 3 + 7.5 + 5.5 = 53.75 → D, 54.
    """
    tools = [
        _tool(0, "Edit"),
        _tool(1, "Edit"),
        _tool(2, "Read", path="a"),
        _tool(3, "Read", error=True, path="a"),
        _tool(4, "Write"),
        _tool(5, "Bash", error=True),
        _tool(6, "Read", error=True, path="b"),
        _tool(7, "Read", path="a"),
    ]
    rows = SessionRows(
        calls=[MainCall(1, 100_000, 0, None, None, None), MainCall(30, 140_000, 0, None, None, None)],
        tools=tools,
        compactions=[Compaction(5, "auto", 1), Compaction(6, "manual", 1)],
        times={},
        axis=AXIS_CALLS,
    )
    h = health_grade(rows, 200_000)
    assert [s["value"] for s in h["signals"]] == [60, 55, 20, 75, 55]
    assert (h["grade"], h["score"]) == ("D", 54)
    assert h["rereadRatio"] == 0.5 and h["errorAcceleration"] == 2.0 and h["toolEfficiency"] == 0.5


def test_health_grade_rounds_half_up():
    """The score is the composite rounded half up (Math.round), computed in exact hundredths.

    Four tool calls, Edit Edit | Bash Bash: the productive share falls from 1.0 to 0.0 → efficiency 15; the
    rest is 100. Composite 40 + 25 + 15 + 10 + 1.5 = 91.5 → 92 (half up). Six calls Edit Edit Edit | Edit
    Bash Bash: 1.0 → 1/3, change 0.33 → 35: 40 + 25 + 15 + 10 + 3.5 = 93.5 → 94. Python's round() would
    give 92 and 94 here too (half to even), so the half-up rule is also checked directly on 92.5 → 93.
    """
    call = [MainCall(1, 1_000, 0, None, None, None)]
    tools = [_tool(i, "Edit" if i < 2 else "Bash") for i in range(4)]
    assert (health_grade(SessionRows(call, tools, [], {}, AXIS_CALLS), 200_000)["score"]) == 92
    tools = [_tool(i, "Edit" if i < 4 else "Bash") for i in range(6)]
    h = health_grade(SessionRows(call, tools, [], {}, AXIS_CALLS), 200_000)
    assert (h["score"], h["grade"]) == (94, "A")
    # 92.5 in hundredths: (9250 + 50) // 100 = 93, where round(92.5) == 92.
    assert (9250 + 50) // 100 == 93 and round(92.5) == 92


def test_denied_results_are_not_errors():
    """A refusal is kept as a tool call but never counts as an error."""
    tools = [ToolCall(i, "Bash", None, False, i == 3, i + 1, 0) for i in range(4)]
    rows = SessionRows([MainCall(0, 1_000, 0, None, None, None)], tools, [], {}, AXIS_CALLS)
    assert health_grade(rows, 200_000)["signals"][3]["value"] == 100


def test_timeline_has_21_points_ending_at_the_grade():
    """The timeline has 21 points, 0 … 100 %, and its last point is the whole-trace grade."""
    run = analyze([str(SAMPLES / "b-spotter-compaction")], workers=1)
    h = run.reports[0].extra["health"]
    assert [p["percent"] for p in h["timeline"]] == list(range(0, 101, 5))
    assert (h["timeline"][-1]["score"], h["timeline"][-1]["grade"]) == (h["score"], h["grade"])
    assert h["timelineAxis"] == "time"
    assert h["compactions"] == [{"trigger": "auto", "pre_tokens": 170251, "percent": 90}]


def test_stream_json_timeline_runs_over_calls():
    """stream-json has no timestamps: its timeline counts calls, from the first call to all of them."""
    run = analyze([str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")], workers=1)
    h = run.reports[0].extra["health"]
    assert h["timelineAxis"] == "calls"
    assert h["timeline"][0]["calls"] == 1 and h["timeline"][-1]["calls"] == 68
    assert "".join(p["grade"] for p in h["timeline"]) == "AAAAAAAAAAABBBBBBBBBC"


#: Every sample's grade, score and sub-scores (Context Fill, Compactions, Re-reads, Error Rate, Tool
#: Efficiency). Each composite was checked by hand from the sub-scores (weights 40/25/15/10/10), e.g.
#: a-ralph#1: 40 + 25 + 60·.15 + 10 + 15·.1 = 85.5 → A 86; subagent#1: 24 + 25 + 3 + 10 + 3.5 = 65.5 → C 66;
#: image: 40 + 25 + 3 + 7.5 + 10 = 85.5 → A 86; thinking: 40 + 25 + 15 + 4 + 10 = 94; flat: 40 + 25 + 3 + 10 +
#: 5.5 = 83.5 → B 84; print-mode 2b4e: 40 + 25 + 15 + 5.5 + 8 = 93.5 → A 94; spotter: 32 + 18.75 + 3 + 4 + 5.5
#: = 63.25 → C 63. The sub-scores of the transcripts are re-derived from the raw lines by
#: `_independent_subscores` below, which shares no code with contexttrace.
SAMPLE_HEALTH = [
    ("a-ralph-27runs-with-separators.jsonl#1", "A", 86, [100, 100, 60, 100, 15]),
    ("a-ralph-27runs-with-separators.jsonl#2", "A", 98, [100, 100, 100, 100, 80]),
    *[(f"a-ralph-27runs-with-separators.jsonl#{i}", "A", 100, [100] * 5) for i in range(3, 28)],
    ("a-ralph-subagent-opus45-haiku45.jsonl#1", "C", 66, [60, 100, 20, 100, 35]),
    ("a-ralph-subagent-opus45-haiku45.jsonl#2", "A", 92, [100, 100, 60, 100, 80]),
    ("b-ccl-image-and-errors.jsonl", "A", 86, [100, 100, 20, 75, 100]),
    ("b-ccl-thinking-sonnet45.jsonl", "A", 94, [100, 100, 100, 40, 100]),
    ("b-ccv-inline-sidechains-v1098.jsonl", "A", 98, [100, 100, 100, 100, 80]),
    ("b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", "A", 98, [100, 100, 100, 100, 80]),
    ("b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl", "B", 84, [100, 100, 20, 100, 55]),
    ("b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl", "A", 100, [100] * 5),
    ("b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl", "A", 98, [100, 100, 100, 100, 80]),
    ("b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "C", 63, [80, 75, 20, 40, 55]),
]


@pytest.mark.parametrize(("name", "letter", "score", "subs"), SAMPLE_HEALTH, ids=[s[0] for s in SAMPLE_HEALTH])
def test_sample_health(sample_reports, name, letter, score, subs):
    """Each real sample's grade, score and sub-scores are as checked by hand."""
    h = sample_reports[name].extra["health"]
    assert (h["grade"], h["score"], [s["value"] for s in h["signals"]]) == (letter, score, subs)
    weights = [40, 25, 15, 10, 10]
    assert (sum(v * w for v, w in zip(subs, weights, strict=True)) + 50) // 100 == score


def _band(value, edges, floor, better):
    for edge, sub in edges:
        if better(value, edge):
            return sub
    return floor


def _independent_subscores(path):
    """Spec 000 straight from the raw transcript lines (main, non-sidechain), sharing no code with the package."""
    prompts, seen_ids, tools, errors, denied, bounds = {}, [], [], {}, set(), 0
    for raw in path.read_bytes().splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            bounds += 1
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        if rec.get("type") == "assistant" and isinstance(msg.get("usage"), dict) and msg.get("model") != "<synthetic>":
            u = msg["usage"]
            if msg.get("id") not in prompts:
                seen_ids.append(msg.get("id"))
            prompts[msg.get("id")] = (
                u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
            )
            for block in msg.get("content") or []:
                if (
                    isinstance(block, dict)
                    and block.get("type") == "tool_use"
                    and block["id"] not in [t[0] for t in tools]
                ):
                    tools.append((block["id"], block["name"], (block.get("input") or {}).get("file_path")))
        if rec.get("type") == "user" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    errors[block.get("tool_use_id")] = bool(block.get("is_error"))
                    text = str(block.get("content"))
                    # The refusal texts CASES B22 and the samples show (a person's "no", an ungranted permission).
                    if (
                        rec.get("toolDenialKind")
                        or "The user doesn't want to" in text
                        or "requested permissions" in text
                        or "requires approval" in text
                        or "was blocked. For security" in text
                    ):
                        denied.add(block.get("tool_use_id"))
    fill = prompts[seen_ids[-1]] / 200_000
    reads = [t[2] for t in tools if t[1] == "Read" and t[2]]
    rereads = sum(1 for i, p in enumerate(reads) if p in reads[:i])
    err = [errors.get(t[0], False) and t[0] not in denied for t in tools]
    prod = [t[1] in ("Write", "Edit", "MultiEdit") for t in tools]
    mid = len(tools) // 2
    subs = [
        _band(fill, [(0.5, 100), (0.65, 80), (0.8, 60), (0.9, 40)], 20, lambda v, e: v < e),
        {0: 100, 1: 75, 2: 55, 3: 35}.get(bounds, 15),
        _band(rereads / len(reads), [(0.05, 100), (0.1, 80), (0.2, 60), (0.35, 40)], 20, lambda v, e: v <= e)
        if reads
        else 100,
    ]
    for flags, kind in ((err, "err"), (prod, "prod")):
        if len(tools) < 4:
            subs.append(100)
            continue
        a, b = sum(flags[:mid]) / mid, sum(flags[mid:]) / (len(tools) - mid)
        if kind == "err":
            subs.append(
                100
                if a == b == 0
                else 40
                if a == 0
                else _band(b / a, [(1, 100), (2, 75), (3, 55), (5, 35)], 15, lambda v, e: v <= e)
            )
        else:
            subs.append(
                80 if a == 0 else _band(b / a, [(0.9, 100), (0.7, 75), (0.4, 55), (0.15, 35)], 15, lambda v, e: v >= e)
            )
    return subs


@pytest.mark.parametrize("name", [s[0] for s in SAMPLE_HEALTH if s[0].startswith("b-")])
def test_sample_subscores_independently(name):
    """The transcripts' sub-scores agree with a from-scratch reading of their main file."""
    expected = next(s[3] for s in SAMPLE_HEALTH if s[0] == name)
    assert _independent_subscores(SAMPLES / name.split("#")[0]) == expected
