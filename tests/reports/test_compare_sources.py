"""`context compare`'s start-up by source: each condition's first call split into `context sources`' rows.

Real samples where the trace records start-up text (the agent-teams transcript: a skill listing, a deferred
tools listing, hook context) against ones where it does not (the print-mode sessions, the stream-json
loop); and the `instructions` attachment, which no bundled trace holds, on built lines that follow its
recorded shape (below).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import read_trace
from contexttrace.cli.app import app
from contexttrace.render.compare import CompareFormat, render_compare
from contexttrace.render.compare_startup import startup_cells
from contexttrace.render.html.compare_view import compare_view
from contexttrace.render.html.section import build_section
from contexttrace.reports.compare import compare, parse_conditions
from contexttrace.reports.compare_sources import condition_rows, first_sources, startup_rows
from contexttrace.reports.sources import ROWS, build_sources, tokens_at
from contexttrace.run.conditions import analyze_conditions
from contexttrace.run.runner import analyze

from ..conftest import ROOT, SAMPLES

TEAMS_DIR = SAMPLES / "b-ccl-agent-teams-opus47"
TEAMS = TEAMS_DIR / "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
PRINT = SAMPLES / "b-ccl-print-mode-sessions"
LOOP = SAMPLES / "a-ralph-27runs-with-separators.jsonl"


def _compare(specs: list[str], **kw):
    conditions = parse_conditions(specs)
    return compare(conditions, analyze_conditions(conditions, workers=1), **kw)


def _rows(comparison, condition: str) -> dict:
    return {r["source"]: r for r in comparison.startup if r["condition"] == condition}


# -- real samples ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def print_teams():
    """print-mode sessions (baseline: two 2.1.17 `claude -p` transcripts) against the agent-teams one."""
    return _compare([f"print={PRINT}", f"teams={TEAMS}"], metrics=["first"])


def test_each_run_s_rows_are_context_sources_at_its_first_call(print_teams):
    """A run's `first_sources` is `context sources --at 1`'s split of the same trace, and sums to `first`."""
    for cond in print_teams.conditions:
        for run in cond.runs:
            [trace] = read_trace(run.path)
            at_one = build_sources(trace, at="1")
            assert run.sources["call"] == 1 and run.sources["prompt_tokens"] == run.report.first
            assert run.sources["rows"] == {x["source"]: x["tokens"] for x in at_one.sources}
            assert sum(run.sources["rows"].values()) == run.report.first
    [teams] = [c for c in print_teams.conditions if c.name == "teams"]
    assert {k: v for k, v in teams.runs[0].sources["rows"].items() if v} == {
        "prefix": 22_370,
        "skills": 4_086,
        "deferred_tools": 532,
        "prompts": 802,
        "harness": 76,
    }
    assert teams.runs[0].sources["calibration"]["prompts"] == {"chars_per_token": 1.3737, "source": "overall"}


def test_real_samples_start_up_by_source_medians_and_deltas(print_teams):
    """print's two runs (first 20,053 and 20,011: prefix ≈20,014 / ≈19,975, prompts ≈39 / ≈36) against
    teams' one: the medians, the not-itemised row as the median first less the itemised ones, and the
    deltas, which sum to Δ first (+7,834) exactly."""
    base, teams = _rows(print_teams, "print"), _rows(print_teams, "teams")
    assert list(base) == ["first", "prefix", "skills", "deferred_tools", "prompts", "harness"]
    assert {k: r["tokens"] for k, r in base.items()} == {
        "first": 20_032,
        "prefix": 19_994.5,
        "skills": 0,
        "deferred_tools": 0,
        "prompts": 37.5,
        "harness": 0,
    }
    assert {k: r["delta"] for k, r in teams.items()} == {
        "first": 7_834,
        "prefix": 2_375.5,
        "skills": 4_086,
        "deferred_tools": 532,
        "prompts": 764.5,
        "harness": 76,
    }
    assert sum(r["delta"] for k, r in teams.items() if k != "first") == print_teams.row("teams", "first")["delta"]
    assert [r["estimated"] for r in teams.values()] == [False, True, True, True, True, True]
    assert all(r["delta"] is None and r["runs"] == 2 for r in base.values())


def test_real_samples_reading_names_what_the_first_difference_is_made_of(print_teams):
    [reading] = [r for r in print_teams.readings if r["kind"] == "startup_sources"]
    assert reading["itemised"] == 5_458.5 and reading["not_itemised"] == 2_375.5 and reading["first"] == 7_834
    assert [p["source"] for p in reading["parts"]] == ["skills", "prompts", "deferred_tools", "harness"]
    assert (
        "- teams − print, start-up by source: first +7,834 = skills ≈+4,086, prompts ≈+765, deferred tools ≈+532, "
        "harness ≈+76 (itemised in the trace: ≈+5,459, 70%) + system prompt + tools, not itemised ≈+2,375"
    ) in render_compare(print_teams)


def test_cli_compare_prints_the_start_up_table(monkeypatch):
    """What a person sees: the table under the readings, ≈ on every estimated cell, exact `first`."""
    monkeypatch.setenv("COLUMNS", "120")
    args = ["context", "compare", "-c", f"print={PRINT}", "-c", f"teams={TEAMS}", "--no-cache", "-m", "first"]
    out = CliRunner().invoke(app, args, catch_exceptions=False)
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    at = lines.index("Start-up by source (the first call split as context sources splits it; medians over the runs):")
    assert lines[at + 1 : at + 10] == [
        "| source                                           |   print |   teams |   Δ teams |",
        "|--------------------------------------------------|---------|---------|-----------|",
        "| first                                            |  20,032 |  27,866 |    +7,834 |",
        "| system prompt + tools, not itemised in the trace | ≈19,994 | ≈22,370 |   ≈+2,375 |",
        "| skills                                           |       0 |  ≈4,086 |   ≈+4,086 |",
        "| deferred tools                                   |       0 |    ≈532 |     ≈+532 |",
        "| prompts                                          |     ≈38 |    ≈802 |     ≈+765 |",
        "| harness                                          |       0 |     ≈76 |      ≈+76 |",
        "first: exact, the median first prompt. ≈ rows: text the trace records (memory files, skills, custom agents, "
        "deferred tools, MCP instructions, the first prompt, harness lines) at each run's own chars/token; system "
        "prompt + tools, not itemised: the median first less those rows, so it holds the system prompt, the tool "
        "schemas and whatever the trace does not record (a stream-json run's CLAUDE.md and -p prompt). A "
        "condition's Δ rows sum to its Δ first. docs/compare.md says how to read them.",
    ]
    # the printed Δ rows add up to the printed Δ first (the not-itemised row takes the rounding)
    deltas = [int(line.split("|")[4].strip().lstrip("≈").replace(",", "")) for line in lines[at + 4 : at + 9]]
    assert sum(deltas) == 7834
    assert (
        lines.index("Readings (medians over the runs; spec 004):")
        < at
        < lines.index("Surface (what start-up offered, from system/init):")
    )
    data = orjson.loads(CliRunner().invoke(app, [*args, "--json"], catch_exceptions=False).stdout)
    assert data["schema_version"] == 3
    assert [(r["source"], r["condition"], r["tokens"], r["delta"]) for r in data["startup"][:4]] == [
        ("first", "print", 20_032, None),
        ("first", "teams", 27_866, 7_834),
        ("prefix", "print", 19_994.5, None),
        ("prefix", "teams", 22_370, 2_375.5),
    ]
    [teams] = [c for c in data["conditions"] if c["name"] == "teams"]
    assert teams["runs"][0]["first_sources"]["rows"]["skills"] == 4_086
    csv = CliRunner().invoke(app, [*args, "--format", "csv"], catch_exceptions=False)
    assert "Start-up by source" not in csv.stdout and "reading: teams − print, start-up by source: " in csv.stderr


def test_stream_json_runs_itemise_nothing_at_start_up(tmp_path):
    """A stream-json run writes neither the guidance files nor the -p prompt: the two halves of the 27-run
    loop split nothing, and their whole first sits in the not-itemised row (its difference, 0, too)."""
    text = LOOP.read_bytes().split(b"\n")
    half = len(text) // 2
    (tmp_path / "h1.jsonl").write_bytes(b"\n".join(text[:half]) + b"\n")
    (tmp_path / "h2.jsonl").write_bytes(b"\n".join(text[half:]))
    c = _compare([f"h1={tmp_path / 'h1.jsonl'}", f"h2={tmp_path / 'h2.jsonl'}"], metrics=["first"])
    assert [(r["source"], r["condition"], r["tokens"], r["delta"]) for r in c.startup] == [
        ("first", "h1", c.row("h1", "first")["median"], None),
        ("first", "h2", c.row("h2", "first")["median"], c.row("h2", "first")["delta"]),
        ("prefix", "h1", c.row("h1", "first")["median"], None),
        ("prefix", "h2", c.row("h2", "first")["median"], c.row("h2", "first")["delta"]),
    ]


def test_no_start_up_table_when_first_is_not_compared():
    c = _compare([f"print={PRINT}", f"teams={TEAMS}"], metrics=["peak"])
    assert c.startup == [] and "Start-up by source" not in render_compare(c)
    assert orjson.loads(render_compare(c, CompareFormat.JSON))["startup"] == []


def test_html_compare_section_shows_the_same_start_up_rows():
    """The report page's comparison carries the text table's cells (from each section's sources report)."""
    conditions = parse_conditions([f"print={PRINT}", f"teams={TEAMS}"])
    results = [analyze(list(c.paths), build=build_section, workers=1) for c in conditions]
    view = compare_view(conditions, results)
    text = _compare([f"print={PRINT}", f"teams={TEAMS}"])
    headers, cells = startup_cells(text.startup, "print")
    assert view["startup"]["headers"] == headers == ["source", "print", "teams", "Δ teams"]
    assert view["startup"]["rows"] == cells
    assert cells[2] == ["skills", "0", "≈4,086", "≈+4,086"]
    from contexttrace.render.html.data import build_page
    from contexttrace.render.html.page import render_page
    from contexttrace.reports.results import RunResult

    run = RunResult(reports=[s for r in results for s in r.reports])
    page = render_page(build_page(run, compare=view))
    assert "Start-up by source" in page and "<td>system prompt + tools, not itemised in the trace</td>" in page


# -- the rule ------------------------------------------------------------------------------------------


def test_condition_rows_keep_the_sum_with_runs_that_differ():
    """Medians do not add: the not-itemised row is the median first less the itemised medians, so the rows
    sum to the median first whatever the runs."""
    runs = [
        {"prompt_tokens": 1_000, "rows": {"prefix": 700, "memory": 300}},
        {"prompt_tokens": 1_300, "rows": {"prefix": 900, "memory": 400}},
        {"prompt_tokens": 1_100, "rows": {"prefix": 600, "memory": 500}},
    ]
    rows = condition_rows(runs)
    assert rows["first"] == 1_100 and rows["memory"] == 400 and rows["prefix"] == 700
    assert sum(v for k, v in rows.items() if k != "first") == rows["first"]
    assert set(rows) == {"first", *ROWS}
    assert condition_rows([]) is None
    table = startup_rows([("free", [None]), ("loaded", runs)], "free")
    assert [(r["condition"], r["tokens"], r["delta"]) for r in table if r["source"] == "memory"] == [
        ("free", None, None),
        ("loaded", 400, None),
    ]


# -- the `instructions` attachment -----------------------------------------------------------------
#
# No bundled trace holds one. Its shape is from public material (searched 2026-12-02): transcript dumps and
# parsers' fixtures of Claude Code 2.1.2xx sessions write `{"type":"instructions","files":[{"path":…,
# "type":"Project"|"User"|"AutoMem"|"Managed","content":…}],"reason":"session_start"|"compaction"}` on an
# `attachment` line at session start and after a compaction (with `files: []` and `changed`/`removed` when
# nothing was loaded again), and `nested_memory` as `{"type":"nested_memory","path":…,"content":{"path":…,
# "type":"Project","content":…,"contentDiffersFromDisk":false}}`. The lines below follow those shapes, on
# the envelope of the agent-teams sample's own skill listing line.

CLAUDE_MD = "# Project rules\n\n- Run the tests before a commit.\n- Never edit generated files.\n" * 20
USER_MD = "- Answer in English.\n" * 15


def _with_attachment(tmp_path: Path, attachment: dict) -> Path:
    """A copy of the agent-teams session (its subagent folder too) with one `attachment` line after its
    skill listing, before the first call."""
    root = tmp_path / "teams"
    shutil.copytree(TEAMS_DIR, root)
    path = root / TEAMS.name
    lines = path.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if '"skill_listing"' in x)
    record = json.loads(lines[at])
    record.update(uuid="00000000-0000-4000-8000-000000000001", attachment=attachment)
    lines.insert(at + 1, json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n")
    return path


INSTRUCTIONS = {
    "type": "instructions",
    "files": [
        {"path": "/repo/CLAUDE.md", "type": "Project", "content": CLAUDE_MD},
        {"path": "/home/u/.claude/CLAUDE.md", "type": "User", "content": USER_MD},
    ],
    "reason": "session_start",
}


def test_instructions_attachment_is_its_memory_files_text(tmp_path):
    """The reader counts the files' contents (not the paths, not the JSON around them); the rows place them
    in `memory` at the prompts' rate, and the prefix gives up exactly what the memory row takes."""
    [trace] = read_trace(str(_with_attachment(tmp_path, INSTRUCTIONS)))
    ev = trace.view("events")
    [chars] = [c for c, t in zip(ev.get_column("text_chars").to_list(), ev.get_column("attachment_type").to_list(),
                                 strict=True) if t == "instructions"]  # fmt: skip
    assert chars == len(CLAUDE_MD) + len(USER_MD) == 1_600 + 315
    loaded = build_sources(trace, at="1")
    [plain] = read_trace(str(TEAMS))
    free = build_sources(plain, at="1")
    rows = {x["source"]: x["tokens"] for x in loaded.sources}
    before = {x["source"]: x["tokens"] for x in free.sources}
    rate = loaded.calibration["prompts"]["chars_per_token"]
    assert rate == free.calibration["prompts"]["chars_per_token"] == 1.3737
    assert rows["memory"] == tokens_at(chars, rate) == 1_394 and before["memory"] == 0
    assert rows["prefix"] == before["prefix"] - 1_394 and loaded.context_tokens == free.context_tokens == 27_866
    assert {k: v for k, v in rows.items() if k not in ("memory", "prefix")} == {
        k: v for k, v in before.items() if k not in ("memory", "prefix")
    }
    claude = {c["category"]: c["tokens"] for c in loaded.claude_context["categories"]}
    assert claude["Memory files"] == 1_394


@pytest.mark.parametrize(
    ("attachment", "chars"),
    [
        pytest.param(
            {
                "type": "nested_memory",
                "path": "/repo/sub/CLAUDE.md",
                "displayPath": "sub/CLAUDE.md",
                "content": {
                    "path": "/repo/sub/CLAUDE.md",
                    "type": "Project",
                    "content": CLAUDE_MD,
                    "contentDiffersFromDisk": False,
                },
            },
            1_600,
            id="nested_memory-object",
        ),
        pytest.param({"type": "nested_memory", "content": USER_MD}, 315, id="nested_memory-text"),
        pytest.param({"type": "instructions", "files": [], "changed": True, "reason": "compaction"}, 0, id="none"),
        pytest.param({"type": "instructions", "content": USER_MD}, 315, id="content-text"),
    ],
)
def test_memory_attachments_count_their_text(tmp_path, attachment, chars):
    [trace] = read_trace(str(_with_attachment(tmp_path, attachment)))
    ev = trace.view("events")
    [got] = [c for c, t in zip(ev.get_column("text_chars").to_list(), ev.get_column("attachment_type").to_list(),
                               strict=True) if t == attachment["type"]]  # fmt: skip
    assert got == chars
    report = build_sources(trace, at="1")
    rows = {x["source"]: x["tokens"] for x in report.sources}
    assert rows["memory"] == tokens_at(chars, report.calibration["prompts"]["chars_per_token"])


def test_compare_names_the_memory_files_in_the_first_difference(tmp_path):
    """free: the agent-teams session; loaded: the same with the memory files written in. first is the same
    (the recorded usage is the same), and the reading says where the memory files' tokens came from: the
    not-itemised row gives up what memory takes."""
    loaded = _with_attachment(tmp_path, INSTRUCTIONS)
    c = _compare([f"free={TEAMS}", f"loaded={loaded}"], metrics=["first"])
    rows = _rows(c, "loaded")
    assert rows["first"]["delta"] == 0 and rows["memory"]["delta"] == 1_394 and rows["prefix"]["delta"] == -1_394
    assert rows["memory"]["label"] == "memory files"
    assert (
        "- loaded − free, start-up by source: first 0 = memory files ≈+1,394 (itemised in the trace: ≈+1,394) + "
        "system prompt + tools, not itemised ≈-1,394"
    ) in render_compare(c)


def test_first_sources_of_a_trace_without_a_measured_call():
    from contexttrace.reports.sources import SourcesReport

    r = SourcesReport("t", "t", "transcript", None, "main", "last", None, 1, None, {}, [], 0, 0, 0, None, True,
                      True, {}, [{"call": 1, "prompt_tokens": None, "sources": None}])  # fmt: skip
    assert first_sources(r) is None


def test_docs_name_the_start_up_keys():
    docs = (ROOT / "docs" / "compare.md").read_text()
    for key in ("startup", "first_sources", "startup_sources", "prompt_tokens"):
        assert f"`{key}`" in docs
