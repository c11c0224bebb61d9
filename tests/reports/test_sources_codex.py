"""`context sources` and `context compare` on real Codex CLI rollouts: the guidance files (AGENTS.md) Codex
writes as a user message are memory files, the skills listing it appends to them skills, and its
`<environment_context>` harness, not prompts — in the table, the JSON, `--view claude`, the HTML panel
and compare's start-up rows."""

from __future__ import annotations

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.reading import read_trace
from contexttrace.render.sources import sources_panel_of
from contexttrace.reports.sources import build_sources

from ..conftest import SAMPLES

EXEC = SAMPLES / "c-codex-0.111-exec-command.jsonl"
COMPACTION = SAMPLES / "c-codex-0.65-compaction.jsonl"
SMALL = SAMPLES / "c-codex-0.41-small.jsonl"


def _rows(path, at):
    [trace] = read_trace(str(path))
    report = build_sources(trace, at=at)
    return report, {x["source"]: x["tokens"] for x in report.sources if x["tokens"]}


@pytest.mark.parametrize(
    ("path", "at", "call", "rows"),
    [
        # first call 10,406: before, prefix ≈5,140 and prompts ≈5,266 (AGENTS.md, its skills listing and the
        # environment among them); now memory ≈804 (2,586 chars at 3.21), skills ≈1,229 (3,951); the developer
        # messages (<permissions instructions> 3,996, <collaboration_mode> 996) moved from prompts ≈3,168 to
        # harness (≈64 → ≈1,616 with the environment's 206), prompts keeps the person's 5,193
        pytest.param(EXEC, "1", 1, {"prefix": 5_141, "memory": 804, "skills": 1_229, "prompts": 1_616,
                                    "harness": 1_616}, id="0.111-first"),
        pytest.param(EXEC, "last", 85, {"prefix": 5_141, "memory": 781, "skills": 1_194, "other_results": 55_130,
                                        "prompts": 1_570, "harness": 1_570, "thinking": 1_875, "tool_inputs": 17_470,
                                        "prose": 3_271, "other": 206}, id="0.111-last"),
        # before: prompts ≈1,185 (2,924 + 246 + 530 chars at 3.12)
        pytest.param(COMPACTION, "1", 1, {"prefix": 3_082, "memory": 937, "prompts": 170, "harness": 78},
                     id="0.65-first"),
        pytest.param(COMPACTION, "peak", 119, {"prefix": 3_082, "memory": 937, "other_results": 173_571,
                                               "prompts": 170, "harness": 78, "thinking": 2_851,
                                               "tool_inputs": 14_873, "prose": 44_233, "other": 4_879},
                     id="0.65-peak"),
        # the compaction at call 120 writes its replacement_history back (AGENTS.md, the environment, the
        # person's prompt): before, memory, prompts and harness were 0 there and other ≈1,722 (36 %); what
        # other keeps is the encrypted compaction summary (no honest token size) and the framing
        pytest.param(COMPACTION, "120", 120, {"prefix": 3_082, "memory": 937, "prompts": 170, "harness": 78,
                                              "other": 537}, id="0.65-after-compaction"),
        # before: other_results ≈41,394 and no memory, prompts or harness
        pytest.param(COMPACTION, "last", 143, {"prefix": 3_082, "memory": 937, "other_results": 40_209,
                                               "prompts": 170, "harness": 78, "thinking": 414,
                                               "tool_inputs": 576, "prose": 1_745, "other": 586}, id="0.65-last"),
        pytest.param(SMALL, "1", 1, {"prefix": 2_592, "prompts": 1, "harness": 66}, id="0.41-first"),
    ],
)  # fmt: skip
def test_codex_start_up_rows(path, at, call, rows):
    report, got = _rows(path, at)
    assert report.call == call and got == rows and sum(got.values()) == report.context_tokens


def test_harness_per_turn_counts_the_environment():
    """`<environment_context>` and the developer messages are the harness's: 0.111's ≈1,616 over its one turn at
    call 1, ≈1,570 over 5 at the end (before the developer messages moved: 64.0 and 12.6)."""
    assert _rows(EXEC, "1")[0].harness_per_turn == 1_616.0
    assert _rows(EXEC, "last")[0].harness_per_turn == 314.0


def test_compaction_keeps_one_turn_and_reads_other_share(monkeypatch):
    """The replayed prompt after 0.65's compaction is no new turn (still 1), and --at 120's JSON shows the
    rows it brings back with other at 11 % (36 % before)."""
    [trace] = read_trace(str(COMPACTION))
    ev = trace.view("events")
    assert ev.get_column("kind").to_list().count("prompt") == 1
    args = ["context", "sources", str(COMPACTION), "--no-cache", "--at", "120", "--json"]
    [obj] = orjson.loads(CliRunner().invoke(app, args, catch_exceptions=False).stdout)
    shares = {r["source"]: (r["tokens"], round(r["share"], 3)) for r in obj["sources"] if r["tokens"]}
    assert shares == {"prefix": (3_082, 0.642), "memory": (937, 0.195), "prompts": (170, 0.035),
                      "harness": (78, 0.016), "other": (537, 0.112)}  # fmt: skip
    usage = orjson.loads(CliRunner().invoke(app, ["context", "usage", str(COMPACTION), "--no-cache", "--json"],
                                            catch_exceptions=False).stdout)  # fmt: skip
    assert '"turns": 1,' in orjson.dumps(usage, option=orjson.OPT_INDENT_2).decode()


def test_cli_table_json_and_claude_view(monkeypatch):
    """What a person sees on 0.111's first call: memory files and skills rows, prompts ≈1,616 (the person's
    first prompt), harness ≈1,616 (Codex's developer texts and the environment), the claude view's rows."""
    monkeypatch.setenv("COLUMNS", "120")
    args = ["context", "sources", str(EXEC), "--no-cache", "--at", "1"]
    out = CliRunner().invoke(app, args, catch_exceptions=False)
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[4:7] == [
        "| system prompt + tools, not itemised in the trace |   ≈5,141 |     49% |",
        "| memory files                                     |     ≈804 |      8% |",
        "| skills                                           |   ≈1,229 |     12% |",
    ]
    assert "| prompts                                          |   ≈1,616 |     16% |" in lines
    assert "| harness                                          |   ≈1,616 |     16% |" in lines
    assert "harness per turn: ≈1,616" in lines
    [obj] = orjson.loads(CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False).stdout)
    assert [(r["source"], r["label"], r["tokens"]) for r in obj["sources"][:3]] == [
        ("prefix", "system prompt + tools, not itemised in the trace", 5_141),
        ("memory", "memory files", 804),
        ("skills", "skills", 1_229),
    ]
    claude = CliRunner().invoke(app, [*args, "--view", "claude"], catch_exceptions=False).stdout.splitlines()
    assert "| Memory files                 |     ≈804 |      0% |" in claude
    assert "| Skills                       |   ≈1,229 |      0% |" in claude
    assert "| Messages                     |   ≈3,232 |      1% |" in claude


def test_html_panel_lists_the_memory_files():
    [trace] = read_trace(str(COMPACTION))
    panel = sources_panel_of(build_sources(trace, at="1"))
    assert panel["rows"] == [
        {"source": "system prompt + tools, not itemised in the trace", "tokens": "≈3,082", "share": "72%"},
        {"source": "memory files", "tokens": "≈937", "share": "22%"},
        {"source": "prompts", "tokens": "≈170", "share": "4%"},
        {"source": "harness", "tokens": "≈78", "share": "2%"},
    ]


def test_compare_start_up_by_source_of_two_codex_sessions(monkeypatch):
    """0.65 (AGENTS.md of 2,924 characters) against 0.111 (2,586 and a 3,951-character skills listing):
    before, the whole +4,081 itemised sat in prompts; now the listing is skills, the files memory and the
    developer messages harness."""
    monkeypatch.setenv("COLUMNS", "120")
    args = ["context", "compare", "-c", f"c65={COMPACTION}", "-c", f"c111={EXEC}", "--no-cache", "-m", "first"]
    out = CliRunner().invoke(app, args, catch_exceptions=False)
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert (
        "- c111 − c65, start-up by source: first +6,139 = harness ≈+1,538, prompts ≈+1,446, skills ≈+1,229, "
        "memory files ≈-133 (itemised in the trace: ≈+4,080, 66%) + system prompt + tools, not itemised ≈+2,059"
    ) in lines
    at = lines.index("Start-up by source (the first call split as context sources splits it; medians over the runs):")
    assert lines[at + 1 : at + 9] == [
        "| source                                           |    c65 |   c111 |   Δ c111 |",
        "|--------------------------------------------------|--------|--------|----------|",
        "| first                                            |  4,267 | 10,406 |   +6,139 |",
        "| system prompt + tools, not itemised in the trace | ≈3,082 | ≈5,141 |  ≈+2,059 |",
        "| memory files                                     |   ≈937 |   ≈804 |    ≈-133 |",
        "| skills                                           |      0 | ≈1,229 |  ≈+1,229 |",
        "| prompts                                          |   ≈170 | ≈1,616 |  ≈+1,446 |",
        "| harness                                          |    ≈78 | ≈1,616 |  ≈+1,538 |",
    ]
