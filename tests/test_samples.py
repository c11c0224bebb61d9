"""Every real sample's `context trace` figures, asserted exactly.

How the expected values were obtained: an independent script (plain `json`, sharing no code with
contexttrace, written from the issue's definitions by a second engineer) computed each figure from the raw
lines; the tool's output was compared field by field and every figure agreed. Two points were settled by
hand: the 27-run file's separator lines (`=== Iteration N ===`) stand just before each run's `system/init`,
so each of the 27 runs counts exactly one skipped line; and the compaction sample's boundary (line 754,
auto, preTokens 170,251) falls between the call at 164,831 tokens and the call at 36,081 (index 61).
The last column is the sum of the per-call prompt-token series, a checksum of every element of it.
"""

from __future__ import annotations

import pytest

from contexttrace.run.runner import analyze

from .conftest import SAMPLES

FIELDS = (
    "calls", "first", "peak", "growth", "compact", "tools", "failed", "repeat", "result_chars", "result_images",
    "subagent_calls", "compaction_calls", "skipped_lines",
)  # fmt: skip

EXPECTED = [
    ("a-ralph-27runs-with-separators.jsonl#1", (40, 26329, 80284, 53955, 0, 40, 0, 1, 111915, 1, 0, 0, 1), 2502008),
    ("a-ralph-27runs-with-separators.jsonl#2", (44, 26351, 60876, 34525, 0, 43, 0, 3, 73408, 2, 0, 0, 1), 2004372),
    ("a-ralph-27runs-with-separators.jsonl#3", (4, 26009, 34814, 8805, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122731),
    ("a-ralph-27runs-with-separators.jsonl#4", (3, 26009, 32546, 6537, 0, 2, 0, 0, 18811, 0, 0, 0, 1), 87890),
    ("a-ralph-27runs-with-separators.jsonl#5", (4, 26009, 34770, 8761, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122637),
    ("a-ralph-27runs-with-separators.jsonl#6", (4, 26009, 34816, 8807, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122740),
    ("a-ralph-27runs-with-separators.jsonl#7", (4, 26009, 34789, 8780, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122659),
    ("a-ralph-27runs-with-separators.jsonl#8", (4, 26009, 34777, 8768, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122658),
    ("a-ralph-27runs-with-separators.jsonl#9", (4, 26009, 34791, 8782, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122678),
    ("a-ralph-27runs-with-separators.jsonl#10", (4, 26009, 34816, 8807, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122737),
    ("a-ralph-27runs-with-separators.jsonl#11", (4, 26009, 34790, 8781, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122670),
    ("a-ralph-27runs-with-separators.jsonl#12", (4, 26009, 34814, 8805, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122732),
    ("a-ralph-27runs-with-separators.jsonl#13", (4, 26009, 34855, 8846, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122747),
    ("a-ralph-27runs-with-separators.jsonl#14", (4, 26009, 34778, 8769, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122670),
    ("a-ralph-27runs-with-separators.jsonl#15", (4, 26009, 34824, 8815, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122761),
    ("a-ralph-27runs-with-separators.jsonl#16", (4, 26009, 34742, 8733, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122565),
    ("a-ralph-27runs-with-separators.jsonl#17", (4, 26009, 34750, 8741, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122577),
    ("a-ralph-27runs-with-separators.jsonl#18", (4, 26009, 34772, 8763, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122641),
    ("a-ralph-27runs-with-separators.jsonl#19", (4, 26009, 34780, 8771, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122665),
    ("a-ralph-27runs-with-separators.jsonl#20", (4, 26009, 34788, 8779, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122662),
    ("a-ralph-27runs-with-separators.jsonl#21", (4, 26009, 34816, 8807, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122745),
    ("a-ralph-27runs-with-separators.jsonl#22", (4, 26009, 34814, 8805, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122733),
    ("a-ralph-27runs-with-separators.jsonl#23", (4, 26009, 34793, 8784, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122673),
    ("a-ralph-27runs-with-separators.jsonl#24", (4, 26009, 34748, 8739, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122577),
    ("a-ralph-27runs-with-separators.jsonl#25", (4, 26009, 34784, 8775, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122661),
    ("a-ralph-27runs-with-separators.jsonl#26", (4, 26009, 34806, 8797, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122711),
    ("a-ralph-27runs-with-separators.jsonl#27", (4, 26009, 34819, 8810, 0, 3, 0, 0, 25434, 0, 0, 0, 1), 122748),
    ("a-ralph-subagent-opus45-haiku45.jsonl#1", (68, 25104, 133511, 108407, 0, 73, 0, 0, 245600, 3, 12, 0, 0), 6583941),
    ("a-ralph-subagent-opus45-haiku45.jsonl#2", (16, 25100, 81886, 56786, 0, 21, 0, 0, 151906, 0, 0, 0, 0), 1112186),
    ("b-ccl-image-and-errors.jsonl", (101, 19367, 78284, 58917, 0, 92, 10, 0, 78711, 0, 0, 0, 0), 5106066),
    ("b-ccl-thinking-sonnet45.jsonl", (36, 16386, 72484, 56098, 0, 71, 6, 0, 80767, 0, 0, 0, 0), 1687656),
    ("b-ccv-inline-sidechains-v1098.jsonl", (9, 16208, 21552, 5344, 0, 11, 0, 0, 7903, 0, 161, 0, 0), 168358),
    (
        "b-ccl-agent-teams-opus47/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl",
        (17, 27866, 66603, 38737, 0, 40, 0, 0, 17856, 0, 66, 0, 0),
        832157,
    ),
    (
        "b-ccl-flat-agent-files-v2037/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl",
        (80, 16350, 68182, 51832, 0, 76, 7, 3, 63659, 0, 7, 0, 0),
        3635985,
    ),
    (
        "b-ccl-print-mode-sessions/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl",
        (2, 20053, 23954, 3901, 0, 1, 0, 0, 13552, 0, 10, 0, 0),
        44007,
    ),
    (
        "b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl",
        (10, 20011, 23256, 3245, 0, 9, 6, 0, 9762, 0, 0, 0, 0),
        221611,
    ),
    (
        "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
        (139, 26450, 164831, 138381, 1, 150, 5, 0, 428944, 0, 12, 1, 0),
        12098281,
    ),
    # The other agents' samples, by the same kind of independent script: Codex (a call per token_count whose
    # totals grew and that counts input or output; a failure is a non-zero exit code in the output text; a
    # repeat has no shell or edit call between), Gemini (a call per gemini message with tokens; a failure
    # is a status other than success).
    ("c-codex-0.41-small.jsonl", (2, 2659, 2692, 33, 0, 0, 0, 0, 0, 0, 0, 0, 0), 5351),
    ("c-codex-0.111-exec-command.jsonl", (85, 10406, 88208, 77802, 0, 128, 9, 1, 215288, 0, 0, 0, 0), 4878264),
    ("c-codex-0.65-compaction.jsonl", (143, 4267, 244674, 240407, 1, 142, 23, 0, 826668, 0, 0, 0, 0), 18567178),
    (
        "d-gemini-sessions/chats/session-2025-12-12T21-46-7c761c30.json",
        (5, 10834, 11113, 279, 0, 3, 0, 1, 290, 0, 0, 0, 0),
        55031,
    ),
    (
        "d-gemini-sessions/chats/session-2025-12-26T04-02-b68abb2e.json",
        (12, 6692, 8746, 2054, 0, 9, 1, 0, 4721, 0, 0, 0, 0),
        95018,
    ),
    (
        "d-gemini-sessions/chats/session-2025-12-30T01-16-3f9ce747.json",
        (8, 6734, 7764, 1030, 0, 7, 1, 0, 1637, 0, 0, 0, 0),
        57679,
    ),
]


#: The Claude Code samples' traces: what the real-content corpus (benchmarks/realcorpus.py) copies.
CLAUDE_EXPECTED = [e for e in EXPECTED if e[0][:2] in ("a-", "b-")]


@pytest.fixture
def reports(sample_reports):
    return sample_reports


def test_samples_read_cleanly():
    """Every sample reads: no failure; the one file a folder scan leaves out is the Codex rollout of a CLI
    before 0.32, which records no model call."""
    run = analyze([str(SAMPLES)], workers=1)
    assert run.ok and run.left_out == 1 and run.orphan_agent_files == 0


def test_samples_all_traces_found(reports):
    """The samples directory holds exactly these 43 traces (27 + 2 runs, 8 Claude sessions, 3 Codex rollouts
    with calls, 3 Gemini sessions); no agent file is one."""
    assert sorted(reports) == sorted(name for name, _, _ in EXPECTED)


@pytest.mark.parametrize(("name", "figures", "series_sum"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_sample_figures(reports, name, figures, series_sum):
    """Each trace's figures equal the independent computation."""
    r = reports[name]
    assert tuple(getattr(r, f) for f in FIELDS) == figures
    assert sum(r.prompt_tokens) == series_sum
    assert len(r.prompt_tokens) == r.calls


def test_sample_compaction_event(reports):
    """The spotter session's one auto compaction: metadata as written, the call after it, the drop."""
    r = reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert r.compaction_events == [
        {
            "trigger": "auto",
            "pre_tokens": 170251,
            "post_tokens": None,
            "call": 62,
            "line": 754,
            "context_before": 164831,
            "context_after": 36081,
            "effect_tokens": -128750,
        }
    ]
    assert r.prompt_tokens[60:62] == [164831, 36081]


def test_sample_surface_and_identity(reports):
    """stream-json runs carry the init surface (tool count, MCP servers); transcripts carry none."""
    r = reports["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    assert r.format == "stream-json"
    assert r.session_id == "07d00377-1788-46c1-9a2a-2169504fedce"
    assert r.surface is not None and r.surface["mcp_servers"] is not None
    assert r.models == ["claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"]
    t = reports["b-ccl-thinking-sonnet45.jsonl"]
    assert (t.format, t.surface, t.cli_version) == ("transcript", None, "2.0.42")


def test_sample_denials(reports):
    """The thinking sample's 6 failed results hold 4 refusals by the person (two 'doesn't want to proceed',
    two 'doesn't want to take this action'), counted by hand from the lines; print-mode 2b4e's 6 are all
    permission refusals."""
    assert (reports["b-ccl-thinking-sonnet45.jsonl"].failed, reports["b-ccl-thinking-sonnet45.jsonl"].denied) == (6, 4)
    pm = reports["b-ccl-print-mode-sessions/2b4ed4c0-b905-41de-9238-273db3ec737a.jsonl"]
    assert (pm.failed, pm.denied) == (6, 6)


def test_sample_subagent_files_are_attached_when_the_session_is_named(reports):
    """Naming only the 2.0.x session file still attaches its flat agent files (7 subagent calls)."""
    [r] = analyze(
        [str(SAMPLES / "b-ccl-flat-agent-files-v2037" / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl")]
    ).reports
    assert r.subagent_calls == 7


def test_sample_durations(reports):
    """Wall and active time of the spotter session: an independent script took every user/assistant/system
    line's timestamp in the session file and its two subagent files: max − min = 18,068,922 ms, and the sum
    of gaps of at most 30 minutes = 3,015,338 ms. stream-json runs have no timestamps."""
    r = reports["b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]
    assert (r.duration_ms, r.active_duration_ms) == (18068922, 3015338)
    s = reports["a-ralph-subagent-opus45-haiku45.jsonl#1"]
    assert (s.duration_ms, s.active_duration_ms) == (None, None)
