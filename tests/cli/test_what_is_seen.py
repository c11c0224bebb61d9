"""What a new user reads on the bundled samples: one fill, named re-read measures, named subagent counts,
undated starts shown unknown, one cost format, weather factors in words, consumers and left-out files named.

Each test runs the CLI as a person does (fixed COLUMNS, no colour) and asserts the text printed.
"""

from __future__ import annotations

import orjson
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import SAMPLES

runner = CliRunner()
ENV = {"COLUMNS": "120", "NO_COLOR": "1", "TZ": "UTC"}
COMPACTION = str(SAMPLES / "b-spotter-compaction")
CODEX = str(SAMPLES / "c-codex-0.65-compaction.jsonl")


def _run(*args: str) -> tuple[str, str, int]:
    out = runner.invoke(app, list(args), env=ENV, catch_exceptions=False)
    return out.stdout, out.stderr, out.exit_code


def _cells(table: str, row: int = 0) -> dict[str, str]:
    """The cells of a pipe table's row (0 = the first after the rule), keyed by header."""
    lines = table.splitlines()
    headers = [c.strip() for c in lines[0].strip("|").split("|")]
    return dict(zip(headers, (c.strip() for c in lines[2 + row].strip("|").split("|")), strict=True))


def test_fill_is_the_peak_over_the_window_with_its_source_everywhere():
    """Without --window the table shows the fill the gauge and index show (82 %), the window's origin beside
    it; --explain names the same fill and window; weather's context is named the last call's fill."""
    stdout, _, code = _run("context", "trace", "--no-cache", "--explain", COMPACTION, CODEX)
    assert code == 0
    first, codex = _cells(stdout), _cells(stdout, 1)
    assert (first["peak"], first["fill"], first["window"]) == ("164,831", "82%", "200k inferred")
    assert (codex["peak"], codex["fill"], codex["window"]) == ("244,674", "95%", "258,400 stated")
    assert (
        "  fill 82%: peak 164,831 of a 200,000-token window (inferred: Claude Code's default; the trace does "
        "not say)" in stdout
    )
    assert (
        "  fill 95%: peak 244,674 of a 258,400-token window (stated: the rollout's model_context_window (Codex CLI "
        "from 0.48: 95 % of the model's window))" in stdout
    )
    assert "    last call's fill 53% · 5 tool errors" in stdout and "context 53%" not in stdout
    given, _, _ = _run("context", "trace", "--no-cache", "--window", "400k", COMPACTION)
    assert (_cells(given)["fill"], _cells(given)["window"]) == ("41%", "400k given")
    data = orjson.loads(_run("context", "trace", "--no-cache", "--json", COMPACTION)[0])[0]
    assert (data["fill"], data["window"], data["window_source"]) == (164_831 / 200_000, 200_000, "default")


def test_fill_threshold_needs_no_window():
    """`--fail-on fill>0.8` is checked against the trace's own window: the compaction sample breaches it."""
    _, stderr, code = _run("context", "trace", "--no-cache", "--fail-on", "fill>0.8", COMPACTION)
    assert code == 3 and "breach:" in stderr and "fill 0.8242 > 0.8 (--fail-on fill>0.8)" in stderr


def test_weather_factors_print_in_words_and_keep_their_keys_in_json():
    """The worst weather's causes and the signals not judged read as spec 002 means them; JSON keeps the keys."""
    stdout, _, _ = _run("context", "trace", "--no-cache", "--explain", COMPACTION)
    assert "(worst: ⛈️ stormy 1.18 after call #52: latency drift, context pressure)" in stdout
    assert "not judged: truncated output — no call records its stop_reason" in stdout
    for key in ("latency_drift", "ctx_pressure", "compaction_scar", "error_cumulative"):
        assert key not in stdout
    data = orjson.loads(_run("context", "trace", "--no-cache", "--json", COMPACTION)[0])[0]
    assert data["weather"]["worst"]["factors"][:2] == ["latency_drift", "ctx_pressure"]


def test_files_with_no_model_call_are_named(tmp_path):
    """A folder scan names the file it left out, not only how many."""
    legacy = tmp_path / "c-codex-legacy-2025-08.jsonl"
    legacy.write_bytes((SAMPLES / "c-codex-legacy-2025-08.jsonl").read_bytes())
    (tmp_path / "good.jsonl").write_bytes((SAMPLES / "b-ccl-thinking-sonnet45.jsonl").read_bytes())
    _, stderr, code = _run("context", "trace", "--no-cache", str(tmp_path))
    assert code == 0
    assert f"1 file(s) with no model call left out: {legacy}" in stderr.splitlines()


def test_top_context_consumers_name_the_file_or_command():
    """Each top consumer names what it read (the file, relative to the session's folder) or ran (the command)."""
    stdout, _, code = _run(
        "context", "tools", "--no-cache", COMPACTION, str(SAMPLES / "c-codex-0.111-exec-command.jsonl")
    )
    assert code == 0
    assert "  1. Read lib/spotter_web/live/pane_list_live.ex ≈7,699 tokens, call 6," in stdout
    assert "  1. exec_command dotnet build MicroCalc.sln --configuration Release --no-restore ≈6,684 tokens" in stdout
    data = orjson.loads(_run("context", "tools", "--no-cache", "--json", COMPACTION)[0])[0]
    assert data["top_consumers"][0]["target"] == "lib/spotter_web/live/pane_list_live.ex"


def test_three_measures_of_reading_again_have_three_names():
    """spec 004's identical calls are `repeated calls`, spec 000's are File re-reads, `context tools`' are
    resent tokens: no two share a name on one trace."""
    stdout, _, _ = _run("context", "trace", "--no-cache", "--explain", COMPACTION)
    assert _cells(stdout)["repeated calls"] == "0"
    assert "    File re-reads    ██░░░░░░░░  20 F   15%  16 of 31 file reads re-read a file already read" in stdout
    tools, _, _ = _run("context", "tools", "--no-cache", COMPACTION)
    assert tools.splitlines()[1].rstrip().endswith("resent cost |")
    assert "call 6, resent 56× ≈$0.2156" in tools and "re-read 56×" not in tools


def test_one_cost_format_and_compare_marks_every_lower_bound():
    """Every cost reads `≈$` (an estimate) or `≥$` (a lower bound), never `≥ $`; compare's range of a condition
    with a lower-bound run is marked as its median is."""
    stdout, _, _ = _run("context", "usage", "--no-cache", COMPACTION)
    row, sub = _cells(stdout), _cells(stdout, 1)
    assert (row["cost USD"], sub["cost USD"], row["output"]) == ("≥$10.11", "≥$0.4507", "≥28,899")
    a, b = str(SAMPLES / "a-ralph-27runs-with-separators.jsonl"), str(SAMPLES / "b-ccl-print-mode-sessions")
    stdout, _, _ = _run("context", "compare", "--no-cache", "-c", f"a={a}", "-c", f"b={b}")
    cost = [line for line in stdout.splitlines() if line.startswith("| cost ")]
    assert [(_c[4].strip(), _c[5].strip()) for _c in (line.split("|") for line in cost)] == [
        ("≈$0.1566", "≈$0.1014–$2.15"),
        ("≥$0.1597", "≥$0.1498–$0.1697"),
    ]
    assert "≥ $" not in stdout


def test_subagent_calls_and_the_compaction_summariser_are_two_named_counts():
    """The usage table's `↳ subagents` row counts what `context trace --json` calls subagent_calls (12); the
    compaction summariser's call is its own row, `↳ compaction summary`, as compaction_calls counts it."""
    stdout, _, _ = _run("context", "usage", "--no-cache", "--breakdown", COMPACTION)
    sub, comp = _cells(stdout, 1), _cells(stdout, 2)
    assert (sub["trace"], sub["calls"]) == ("↳ subagents", "12")
    assert (comp["trace"], comp["calls"]) == ("↳ compaction summary", "1")
    trace = orjson.loads(_run("context", "trace", "--no-cache", "--json", COMPACTION)[0])[0]
    assert (trace["subagent_calls"], trace["compaction_calls"]) == (12, 1)
    usage = orjson.loads(_run("context", "usage", "--no-cache", "--json", COMPACTION)[0])[0]
    assert (usage["subagent_threads"]["calls"], usage["compaction_threads"]["calls"], usage["subagents"]["calls"]) == (
        12,
        1,
        13,
    )
