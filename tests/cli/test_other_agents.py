"""Every command on the real Codex CLI rollouts and Gemini CLI sessions of samples/, as a person runs it:
the exact cells of each table, what a format cannot give shown as `–` with its reason (never 0), standard
input, one table for a folder of the three agents, and the HTML report."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import GOOD, SAMPLES

runner = CliRunner()
ENV = {"COLUMNS": "250", "NO_COLOR": "1"}

CODEX_41 = SAMPLES / "c-codex-0.41-small.jsonl"
CODEX_111 = SAMPLES / "c-codex-0.111-exec-command.jsonl"
CODEX_65 = SAMPLES / "c-codex-0.65-compaction.jsonl"
CODEX_LEGACY = SAMPLES / "c-codex-legacy-2025-08.jsonl"
CHATS = SAMPLES / "d-gemini-sessions" / "chats"
GEMINI_GLOB = CHATS / "session-2025-12-12T21-46-7c761c30.json"
GEMINI_SHELL = CHATS / "session-2025-12-26T04-02-b68abb2e.json"
GEMINI_CANCEL = CHATS / "session-2025-12-30T01-16-3f9ce747.json"


def _run(*args: str, stdin: bytes | None = None):
    out = runner.invoke(app, ["context", *args, "--no-cache"], env=ENV, input=stdin, catch_exceptions=False)
    return out


def _rows(stdout: str) -> list[dict[str, str]]:
    """The pipe table's rows as header → cell."""
    lines = [line for line in stdout.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True)) for line in lines[2:]]


TRACE = ("calls", "first", "peak", "fill", "window", "growth", "compact", "tools", "failed", "repeated calls",
         "result chars")  # fmt: skip


@pytest.mark.parametrize(
    ("path", "cells"),
    [
        pytest.param(CODEX_41, ("2", "2,659", "2,692", "1%", "272k stated", "33", "0", "0", "0", "0", "0"),
                     id="codex-0.41"),
        pytest.param(CODEX_111, ("85", "10,406", "88,208", "34%", "258,400 stated", "77,802", "0", "128", "9", "1",
                                 "215,288"), id="codex-0.111"),
        pytest.param(CODEX_65, ("143", "4,267", "244,674", "95%", "258,400 stated", "240,407", "1", "142", "23", "0",
                                "826,668"), id="codex-0.65-compaction"),
        pytest.param(GEMINI_GLOB, ("5", "10,834", "11,113", "1%", "1,048,576 inferred", "279", "0", "3", "0", "1",
                                   "290"), id="gemini-0.20"),
        pytest.param(GEMINI_SHELL, ("12", "6,692", "8,746", "1%", "1,048,576 inferred", "2,054", "0", "9",
                                    "1 (1 denied)", "0", "4,721"), id="gemini-0.21"),
        pytest.param(GEMINI_CANCEL, ("8", "6,734", "7,764", "1%", "1,048,576 inferred", "1,030", "0", "7",
                                     "1 (1 denied)", "0", "1,637"), id="gemini-0.22"),
    ],
)  # fmt: skip
def test_trace_cells(path, cells):
    """`context trace`: calls, first, peak, growth as the calls wrote them; fill against the window beside it,
    shown without --window: stated by a Codex rollout (model_context_window 272,000 or 258,400), inferred for a
    Gemini session (the CLI's model table, 1,048,576: the session does not record it)."""
    out = _run("trace", str(path))
    assert out.exit_code == 0
    [row] = _rows(out.stdout)
    assert tuple(row[c] for c in TRACE) == cells


def test_trace_explain_names_the_window_source_in_words():
    """--explain says on each trace's fill line where its window came from, in words: the rollout's own
    statement, the model table."""
    out = _run("trace", "--explain", str(CODEX_65), str(GEMINI_SHELL))
    assert (
        "  fill 95%: peak 244,674 of a 258,400-token window (stated: the rollout's model_context_window (Codex CLI "
        "from 0.48: 95 % of the model's window))" in out.stdout.splitlines()
    )
    assert (
        "  fill 1%: peak 8,746 of a 1,048,576-token window (inferred: Gemini CLI's model table for the session's "
        "model (the session does not record it))" in out.stdout.splitlines()
    )


def test_trace_compaction_with_the_sizes_around_it():
    """The 0.65 rollout's compaction: --calls marks it after call 119 (244,674, its pre size) and before call
    120 (4,804, the first prompt after it); the JSON gives both."""
    out = _run("trace", "--calls", str(CODEX_65))
    assert "119:244,674 | compact (?, pre 244,674) | 120:4,804 121:5,041" in out.stdout
    data = _run("trace", "--json", str(CODEX_65))
    assert '"context_after": 4804' in data.stdout and '"context_before": 244674' in data.stdout


def test_legacy_rollout_shows_dashes_and_the_reason():
    """A rollout of a CLI before 0.32 has no token count: its token, fill, window and compaction cells are
    `–`, never 0 (nor Claude Code's default window), and stderr says why; its usage row likewise."""
    out = _run("trace", str(CODEX_LEGACY))
    [row] = _rows(out.stdout)
    assert [row[c] for c in ("calls", "first", "peak", "fill", "window", "growth", "compact")] == ["–"] * 7
    assert row["tools"] == "0"
    assert (
        f"{CODEX_LEGACY}: – for what the trace cannot give (token counts, compactions): a Codex CLI before 0.32 "
        "wrote no token counts and no compaction" in out.stderr
    )
    usage = _run("usage", str(CODEX_LEGACY))
    [row] = _rows(usage.stdout)[:1]
    assert [row[c] for c in ("calls", "fresh input", "cache read", "output", "hit", "cost USD")] == ["–"] * 6


USAGE = ("calls", "turns", "fresh input", "cache write", "cache read", "output", "hit", "cost USD")


@pytest.mark.parametrize(
    ("path", "cells"),
    [
        pytest.param(CODEX_41, ("2", "2", "1,511", "0", "3,840", "128", "72%", "≈$0.0036"), id="codex-0.41"),
        pytest.param(CODEX_111, ("85", "5", "438,328", "0", "4,439,936", "28,409", "91%", "≈$1.94"), id="codex-0.111"),
        pytest.param(CODEX_65, ("143", "1", "2,366,730", "0", "16,200,448", "68,772", "87%", "≈$1.13"),
                     id="codex-0.65"),
        pytest.param(GEMINI_GLOB, ("5", "3", "25,540", "0", "29,491", "279", "54%", "≈$0.0092"), id="gemini-0.20"),
        pytest.param(GEMINI_SHELL, ("12", "4", "45,310", "0", "49,708", "2,027", "52%", "≈$0.0603"), id="gemini-0.21"),
        pytest.param(GEMINI_CANCEL, ("8", "2", "18,487", "0", "39,192", "1,571", "68%", "≈$0.0159"), id="gemini-0.22"),
    ],
)  # fmt: skip
def test_usage_cells(path, cells):
    """`context usage`: fresh input is the prompt less its cached part, output holds reasoning (Codex) or
    thoughts (Gemini) once; cost from the dated price table (≈: list prices)."""
    out = _run("usage", str(path))
    [row] = _rows(out.stdout)[:1]
    assert tuple(row[c] for c in USAGE) == cells


def test_unpriced_model_is_flagged(tmp_path):
    """A model the price table lacks is named, and the cost is a lower bound."""
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(CODEX_41.read_bytes().replace(b'"gpt-5-codex"', b'"gpt-99-codex"'))
    out = _run("usage", str(path))
    [row] = _rows(out.stdout)[:1]
    assert row["cost USD"] == "≥$0.00"
    assert "unpriced (model, or its fast-mode price, not in the price table of 2026-10-01): gpt-99-codex" in out.stderr


def test_tools_rows():
    """`context tools`: per tool, calls and errors read from the outputs' exit codes (Codex) or the call's
    status (Gemini: a cancelled call is a refusal)."""
    rows = {r["tool"]: r for r in _rows(_run("tools", str(CODEX_111)).stdout)}
    assert {t: (r["calls"], r["errors"]) for t, r in rows.items()} == {
        "exec_command": ("88", "8"),
        "apply_patch": ("32", "0"),
        "write_stdin": ("8", "1"),
    }
    [row] = _rows(_run("tools", str(GEMINI_SHELL)).stdout)
    assert (row["tool"], row["calls"], row["errors"], row["denied"]) == ("run_shell_command", "9", "0", "1")


def test_files_rows():
    """`context files`: Codex's apply_patch writes and shell reads (`sed -n`), Gemini's shell reads."""
    rows = {r["file"]: r for r in _rows(_run("files", str(CODEX_65)).stdout)}
    assert (rows["src/components/alden/AldenChatScreen.tsx"]["writes"], len(rows)) == ("12", 7)
    rows = {r["file"]: r for r in _rows(_run("files", str(CODEX_111)).stdout)}
    assert rows["AGENTS.md"]["reads"] == "1 (1 ranged)" and rows["AGENTS.md"]["writes"] == "1"
    [row] = _rows(_run("files", str(GEMINI_SHELL)).stdout)
    assert (row["file"], row["reads"]) == ("/etc/os-release", "1")


def test_standard_input_reads_each_format():
    """``-`` reads a rollout or a session from standard input, told apart by content."""
    out = _run("trace", "-", stdin=CODEX_65.read_bytes())
    [row] = _rows(out.stdout)
    assert (row["trace"], row["calls"], row["peak"], row["compact"]) == ("-", "143", "244,674", "1")
    out = _run("usage", "-", stdin=GEMINI_GLOB.read_bytes())
    [row] = _rows(out.stdout)[:1]
    assert (row["calls"], row["cost USD"]) == ("5", "≈$0.0092")


def test_a_folder_of_three_agents_prints_one_table(tmp_path):
    """Claude Code, Codex CLI and Gemini CLI files in one folder: one table, a row each, fill and window shown
    for each (the rollout states its window; Claude Code's default and Gemini CLI's model table are inferred)."""
    shutil.copy(GOOD, tmp_path)
    shutil.copy(CODEX_41, tmp_path)
    (tmp_path / "chats").mkdir()
    shutil.copy(GEMINI_GLOB, tmp_path / "chats")
    out = _run("trace", str(tmp_path))
    assert out.stdout.count("| trace ") == 1
    rows = {r["trace"]: r for r in _rows(out.stdout)}
    assert {t: (r["calls"], r["peak"], r["fill"], r["window"]) for t, r in rows.items()} == {
        "b-ccl-thinking-sonnet45.jsonl": ("36", "72,484", "36%", "200k inferred"),
        "c-codex-0.41-small.jsonl": ("2", "2,692", "1%", "272k stated"),
        "session-2025-12-12T21-46-7c761c30.json": ("5", "11,113", "1%", "1,048,576 inferred"),
        "total": ("43", "", "", ""),
    }


def test_report_renders_each_agent(tmp_path):
    """`context report` writes one page for a Codex rollout and a Gemini session, the compaction labelled
    with its sizes."""
    page = tmp_path / "r.html"
    out = _run("report", str(CODEX_65), str(GEMINI_SHELL), "-o", str(page))
    assert out.exit_code == 0
    html = page.read_text()
    assert "244,674 → next call 4,804" in html
    assert "c-codex-0.65-compaction.jsonl" in html and "session-2025-12-26T04-02-b68abb2e.json" in html


def test_compare_names_what_each_condition_runs_are():
    """`context compare`'s surface lines say what recorded no system/init: a Codex CLI rollout, a Gemini CLI
    session, a Claude Code session transcript (not "session transcripts" for every agent)."""
    transcript = SAMPLES / "b-ccl-thinking-sonnet45.jsonl"
    out = _run("compare", "--condition", f"a={CODEX_111}", "--condition", f"b={GEMINI_SHELL}",
               "--condition", f"c={transcript}")  # fmt: skip
    lines = [line for line in out.stdout.splitlines() if "recorded no system/init" in line]
    assert lines == [
        "- a: its runs recorded no system/init (Codex CLI rollouts): only the model and CLI version are compared",
        "- b: its runs recorded no system/init (Gemini CLI sessions): only the model and CLI version are compared",
        "- c: its runs recorded no system/init (session transcripts): only the model and CLI version are compared",
    ]
