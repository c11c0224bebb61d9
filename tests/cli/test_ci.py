"""CI use (docs/ci.md): `--fail-on` thresholds and exit 3, `--format table|markdown|csv|json`, `-o FILE`, the
totals row, `--sort`, and tables that fit a narrow terminal. Everything through typer's CliRunner."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from contexttrace.cli import output as cli_output
from contexttrace.cli.app import app
from contexttrace.render.views import table_width

from ..conftest import CASES, GOOD, SAMPLES

runner = CliRunner()
#: 36 calls, peak 72,484, health A 94, sunny, repeat 0, cost ≈$1.45 (final usage written: not a lower bound)
#: a folder: 139 calls, peak 164,831 (fill 0.824 of 200k), one compaction, health C 63, fair, cost ≥ $10.11
SPOTTER = str(SAMPLES / "b-spotter-compaction")
SPOTTER_FILE = str(next(Path(SPOTTER).glob("*.jsonl")))
#: a trace with no model call: a zero row, health and weather not graded
NO_CALLS = str(CASES / "B38.jsonl")


def trace(*args: str, exit_code: int | None = None):
    out = runner.invoke(app, ["context", "trace", *args], catch_exceptions=False)
    if exit_code is not None:
        assert out.exit_code == exit_code, (out.stdout, out.stderr)
    return out


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


# -- --fail-on ------------------------------------------------------------------------------------


def test_fail_on_breach_prints_every_trace_names_each_breach_and_exits_3():
    """Two traces, one breaching two thresholds: both rows print, stderr names each breach with the trace,
    metric, value and threshold, and the command exits 3."""
    out = trace(GOOD, SPOTTER_FILE, "--window", "200k", "--fail-on", "peak>150000", "--fail-on", "compact>0",
                exit_code=3)  # fmt: skip
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "total" not in line]
    assert len(rows) == 3  # header and the two traces
    breaches = [line for line in out.stderr.splitlines() if line.startswith("breach:")]
    assert breaches == [
        f"breach: {SPOTTER_FILE}: peak 164,831 > 150000 (--fail-on peak>150000)",
        f"breach: {SPOTTER_FILE}: compact 1 > 0 (--fail-on compact>0)",
    ]
    assert "2 threshold breaches: exit 3" in out.stderr


def test_fail_on_every_format_still_prints_everything():
    """A breach changes the exit code only: JSON still lists every trace."""
    out = trace(GOOD, SPOTTER_FILE, "--fail-on", "peak>150000", "--json", exit_code=3)
    assert len(orjson.loads(out.stdout)) == 2


@pytest.mark.parametrize(
    ("expr", "breached"),
    [
        pytest.param("peak>150000", True, id="peak"),
        pytest.param("peak>=164831", True, id="peak-inclusive-edge"),
        pytest.param("peak>164831", False, id="peak-exclusive-edge"),
        pytest.param("peak>150k", True, id="k-suffix"),
        pytest.param("fill>=0.8", True, id="fill"),
        pytest.param("fill>=90%", False, id="fill-percent"),
        pytest.param("compact>0", True, id="compact"),
        pytest.param("health<B", True, id="health-C-is-worse-than-B"),
        pytest.param("health<C", False, id="health-C-is-not-worse-than-C"),
        pytest.param("health<=C", True, id="health-inclusive"),
        pytest.param("health>=B", False, id="health-at-least-B"),
        pytest.param("health_score<70", True, id="health-score"),
        pytest.param("repeat>3", False, id="repeat"),
        pytest.param("weather>=cloudy", False, id="weather-fair-is-not-cloudy"),
        pytest.param("weather>=fair", True, id="weather-fair"),
        pytest.param("weather==fair", True, id="weather-equal"),
        pytest.param("cost>2.5", True, id="cost-lower-bound-breaches-for-sure"),
        pytest.param("calls!=139", False, id="not-equal"),
        pytest.param(" tools > 100 ", True, id="spaces"),
    ],
)
def test_fail_on_each_metric_on_the_compaction_sample(expr, breached):
    """Each metric and operator, at the compaction sample's values (edges inclusive and exclusive)."""
    out = trace(SPOTTER_FILE, "--window", "200k", "--fail-on", expr)
    assert out.exit_code == (3 if breached else 0), out.stderr
    assert ("breach:" in out.stderr) == breached


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param("pek>1", "unknown metric 'pek'; valid metrics: calls", id="unknown-metric"),
        pytest.param("peak150000", "is not a threshold", id="no-operator"),
        pytest.param("peak>lots", "is not a value for peak", id="not-a-number"),
        pytest.param("health<G", "one of A, B, C, D, F", id="not-a-grade"),
        pytest.param("weather>windy", "sunny < fair < cloudy < rainy < stormy", id="not-a-level"),
        pytest.param("peak>10%", "is not a value for peak", id="percent-of-tokens"),
    ],
)
def test_fail_on_bad_expression_is_a_usage_error(expr, message):
    """A malformed expression, an unknown metric or a bad value exits 2 before reading anything; an unknown
    metric or a malformed expression lists the valid metrics."""
    out = trace(GOOD, "--fail-on", expr, exit_code=2)
    assert message in " ".join(out.stderr.split())
    if "metric" in message or "threshold" in message:
        assert all(m in out.stderr for m in ("peak", "fill", "health", "weather", "cost", "repeat"))
    assert out.stdout == ""


def test_fail_on_ungraded_trace_is_not_a_breach_and_says_so():
    """A trace with no grade (no main-thread model call) breaches neither health<B nor weather>=cloudy; stderr
    says it was not checked, and the command exits 0."""
    out = trace(NO_CALLS, "--fail-on", "health<B", "--fail-on", "weather>=cloudy", exit_code=0)
    notes = [line for line in out.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        f"note: {NO_CALLS}: health not graded (nothing measured: no main-thread model call), not a breach of health<B",
        f"note: {NO_CALLS}: no weather (nothing measured: no main-thread model call), not a breach of weather>=cloudy",
    ]


def test_fail_on_cost_lower_bound_below_the_threshold_is_said():
    """A cost that is a lower bound (≥) and below the threshold is no breach, but stderr says the true cost
    may be above; the table gains a cost column only when a threshold asks for cost."""
    out = trace(SPOTTER_FILE, "--fail-on", "cost>100", exit_code=0)
    assert "cost USD" in out.stdout.splitlines()[0]
    assert "note: " in out.stderr and "is a lower bound; the true figure may breach cost>100" in out.stderr
    plain = trace(SPOTTER_FILE, exit_code=0)
    assert "cost USD" not in plain.stdout


def test_fail_on_cost_breach_shows_the_lower_bound_mark():
    """A lower-bound cost above the threshold is a breach for sure, printed with ≥."""
    out = trace(SPOTTER_FILE, "--fail-on", "cost>2.5", exit_code=3)
    assert f"breach: {SPOTTER_FILE}: cost ≥$10.11 > 2.5 (--fail-on cost>2.5)" in out.stderr.splitlines()


def test_fail_on_a_trace_error_wins_over_a_breach(tmp_path):
    """A trace that cannot be read exits 1 even when another breaches (it was not checked)."""
    bad = tmp_path / "binary.jsonl"
    bad.write_bytes(b"\x00\x01\x02garbage\xff\n")
    out = trace(SPOTTER_FILE, str(bad), "--fail-on", "peak>1", exit_code=1)
    assert "breach:" in out.stderr and "Error: " in out.stderr


def test_fail_on_usage_metrics_and_groups():
    """`context usage --fail-on` reads the usage metrics (cost, calls, tokens, hit), per trace or per group."""
    out = runner.invoke(app, ["context", "usage", GOOD, "--fail-on", "cost>1"], catch_exceptions=False)
    assert out.exit_code == 3 and f"breach: {GOOD}: cost ≈$1.45 > 1" in out.stderr
    out = runner.invoke(app, ["context", "usage", GOOD, "--fail-on", "hit<0.5", "--fail-on", "output>1M"])
    assert out.exit_code == 0, out.stderr
    out = runner.invoke(app, ["context", "usage", GOOD, "--group-by", "model", "--fail-on", "cost>1"])
    assert out.exit_code == 3 and "breach: claude-sonnet-4-5: cost" in out.stderr
    out = runner.invoke(app, ["context", "usage", GOOD, "--fail-on", "peak>1"])
    assert out.exit_code == 2 and "valid metrics: calls" in " ".join(out.stderr.split())


# -- --format and -o -----------------------------------------------------------------------------


def _markdown_tables(text: str) -> list[list[list[str]]]:
    """Each table a GitHub markdown renderer sees in `text`: rows (header first) of cell texts."""
    md = MarkdownIt("commonmark").enable("table")
    tables, row, current = [], None, None
    for tok in md.parse(text):
        if tok.type == "table_open":
            current = []
            tables.append(current)
        elif tok.type == "tr_open":
            row = []
            current.append(row)
        elif tok.type == "inline" and row is not None and current is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            row = None
        elif tok.type == "table_close":
            current = None
    return tables


def test_markdown_is_one_clean_table_with_notes_as_a_list():
    """Markdown renders as exactly one table (header, one row per trace, the totals row) whatever follows it:
    the notes, the thresholds, the --calls series and --explain are a list and fenced code blocks."""
    out = trace(GOOD, SPOTTER_FILE, str(CASES / "B22.jsonl"), "--window", "200k", "--calls", "--explain",
                "--format", "markdown", "--fail-on", "peak>150000", exit_code=3)  # fmt: skip
    [table] = _markdown_tables(out.stdout)
    assert [row[0] for row in table] == ["trace", "b-ccl-thinking-sonnet45.jsonl", "spotter-dov/4d5611e5",
                                         "B22.jsonl", "**total**"]  # fmt: skip
    assert all(len(row) == len(table[0]) for row in table)
    calls = table[0].index("calls")
    assert int(table[-1][calls]) == sum(int(row[calls]) for row in table[1:-1])
    md = MarkdownIt("commonmark").enable("table")
    kinds = [t.type for t in md.parse(out.stdout) if t.level == 0]
    assert kinds.count("bullet_list_open") == 1 and kinds.count("fence") == 2
    assert "- ❌ spotter-dov/4d5611e5: peak 164,831 > 150000" in out.stdout
    assert "- b-ccl-thinking-sonnet45.jsonl: largest tool results (chars): Read 55,483" in out.stdout
    # notes are in the markdown, not on stderr; breaches are on both
    assert "largest tool results" not in out.stderr and "breach:" in out.stderr


def test_markdown_escapes_a_pipe_in_a_cell(write):
    """A trace whose name holds `|` stays one cell: the table keeps its columns."""
    path = write("odd|name.jsonl", Path(GOOD).read_bytes().decode())
    out = trace(path, GOOD, "--format", "markdown", exit_code=0)
    [table] = _markdown_tables(out.stdout)
    assert table[1][0] == "odd|name.jsonl"
    assert {len(row) for row in table} == {len(table[0])}


def test_markdown_breaches_render_as_written():
    """Breach lines render as text: `<` neither opens HTML nor shows as `&lt;` in a code span; a lower-bound
    cost keeps its ≥."""
    out = trace(SPOTTER_FILE, "--format", "markdown", "--fail-on", "health<B", "--fail-on", "cost>2.5", exit_code=3)
    html = MarkdownIt("commonmark").enable("table").render(out.stdout)
    assert "(<code>health&lt;B</code>, <code>cost&gt;2.5</code>)" in html
    assert "spotter-dov/4d5611e5: health C &lt; B</li>" in html
    assert "spotter-dov/4d5611e5: cost ≥$10.11 &gt; 2.5</li>" in html


def test_markdown_says_the_thresholds_held():
    """With thresholds and no breach, the markdown says they held."""
    out = trace(GOOD, "--format", "markdown", "--fail-on", "peak>150000", exit_code=0)
    assert "- ✅ thresholds held: `peak>150000`" in out.stdout


def test_csv_is_raw_numbers_one_row_per_trace():
    """CSV: a header of JSON keys and one row per trace (no totals), raw numbers, fractions as fractions."""
    out = trace(GOOD, SPOTTER_FILE, "--window", "200k", "--format", "csv", exit_code=0)
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["label"] for r in rows] == ["b-ccl-thinking-sonnet45.jsonl", "spotter-dov/4d5611e5"]
    assert rows[1]["trace"] == SPOTTER_FILE
    assert (rows[1]["peak"], rows[1]["fill"], rows[1]["health"], rows[1]["weather"]) == ("164831", "0.824155", "C",
                                                                                         "fair")  # fmt: skip
    assert rows[1]["start"] == "2026-02-12T16:02:25.284Z"
    usage = runner.invoke(app, ["context", "usage", GOOD, "--format", "csv"], catch_exceptions=False)
    [row] = list(csv.DictReader(io.StringIO(usage.stdout)))
    assert row["total.calls"] == "36" and row["total.cost_is_lower_bound"] == "false"
    assert float(row["total.cost_usd"]) == pytest.approx(1.45425525)


def test_format_json_is_json_and_conflicts_are_usage_errors():
    """`--format json` prints what `--json` prints; `--json` with another format is a usage error."""
    assert trace(GOOD, "--format", "json").stdout == trace(GOOD, "--json").stdout
    out = trace(GOOD, "--json", "--format", "csv", exit_code=2)
    assert "two formats" in out.stderr
    trace(GOOD, "--format", "yaml", exit_code=2)


def test_output_file_holds_the_output_and_stderr_keeps_the_rest(tmp_path):
    """`-o FILE` writes what stdout would hold; notes and breaches stay on stderr."""
    target = tmp_path / "summary.md"
    out = trace(SPOTTER_FILE, "--format", "markdown", "-o", str(target), "--fail-on", "peak>1", exit_code=3)
    assert out.stdout == ""
    text = target.read_text(encoding="utf-8")
    assert len(_markdown_tables(text)) == 1 and text.endswith("\n")
    assert "breach:" in out.stderr
    missing = tmp_path / "no" / "such" / "dir" / "x.md"
    assert "cannot write" in trace(GOOD, "-o", str(missing), exit_code=2).stderr


# -- totals and sorting ---------------------------------------------------------------------------


def test_totals_row_adds_only_what_adds_up():
    """The totals row sums calls, compact, tools, failed (and denied), repeat, result chars; never first,
    peak, fill, growth, health or weather."""
    out = trace(GOOD, SPOTTER_FILE, "--window", "200k", exit_code=0)
    header, *_, total = out.stdout.splitlines()
    row = dict(zip(_cells(header), _cells(total), strict=True))
    assert row["trace"] == "total"
    assert (row["calls"], row["compact"], row["tools"], row["result chars"]) == ("175", "1", "221", "509,711")
    assert row["failed"] == "11 (4 denied)"
    assert all(row[k] == "" for k in ("first", "peak", "fill", "growth", "health", "weather"))
    assert "total" not in trace(GOOD, SPOTTER_FILE, "--no-totals").stdout
    assert "total" not in trace(GOOD).stdout  # one trace: nothing to add up


def test_usage_totals_row_and_subagent_rows_not_counted_twice():
    """`context usage` totals add every trace's row (its ↳ subagents row is part of it), hit from the sums."""
    out = runner.invoke(app, ["context", "usage", GOOD, SPOTTER_FILE], catch_exceptions=False)
    lines = out.stdout.splitlines()
    header, total = _cells(lines[0]), _cells(lines[-1])
    rows = [_cells(line) for line in lines[2:-1] if "↳" not in line]
    calls = header.index("calls")
    assert total[0] == "total"
    assert int(total[calls].replace(",", "")) == sum(int(r[calls].replace(",", "")) for r in rows)
    assert total[header.index("cost USD")].startswith("≥")  # the compaction sample's cost is a lower bound


def test_sort_by_metric_desc_and_asc_and_errors():
    """`--sort peak --desc` puts the largest first, `--asc` the smallest; an unknown key is exit 2."""
    args = [GOOD, SPOTTER_FILE, str(CASES / "B22.jsonl"), "--no-totals", "--format", "csv"]
    desc = list(csv.DictReader(io.StringIO(trace(*args, "--sort", "peak", "--desc").stdout)))
    asc = list(csv.DictReader(io.StringIO(trace(*args, "--sort", "peak", "--asc").stdout)))
    assert [int(r["peak"]) for r in desc] == sorted((int(r["peak"]) for r in desc), reverse=True)
    assert [r["trace"] for r in asc] == [r["trace"] for r in reversed(desc)]
    health = list(csv.DictReader(io.StringIO(trace(*args, "--sort", "health").stdout)))
    assert health[0]["health"] == "C"  # by score: C 63 is the lowest
    out = trace(GOOD, "--sort", "nope", exit_code=2)
    assert "valid keys: trace, project, start" in " ".join(out.stderr.split())


# -- narrow terminals -----------------------------------------------------------------------------


def test_narrow_terminal_drops_the_least_important_columns_and_says_which(monkeypatch):
    """On an 80-column terminal the table drops columns (least important first) until it fits, and stderr
    names them; --wide prints them all; a pipe or file (no terminal) always gets every column."""
    monkeypatch.setattr(cli_output, "terminal_width", lambda: 80)
    out = trace(GOOD, "--window", "200k", exit_code=0)
    header = _cells(out.stdout.splitlines()[0])
    assert table_width(out.stdout) <= 80
    assert header[:2] == ["trace", "calls"] and {"peak", "fill", "health"} <= set(header)
    assert "result chars" not in header and "growth" not in header
    [note] = [line for line in out.stderr.splitlines() if "left out" in line]
    assert note.startswith("note: ") and "result chars, window, growth" in note and "(--wide shows them)" in note
    wide = trace(GOOD, "--window", "200k", "--wide", exit_code=0)
    assert "result chars" in wide.stdout and "left out" not in wide.stderr
    monkeypatch.setattr(cli_output, "terminal_width", lambda: None)
    assert "result chars" in trace(GOOD, "--window", "200k").stdout


def test_wide_terminal_keeps_every_column(monkeypatch):
    """A terminal wide enough for the table drops nothing."""
    monkeypatch.setattr(cli_output, "terminal_width", lambda: 300)
    out = trace(GOOD, "--window", "200k", exit_code=0)
    assert "result chars" in out.stdout and "left out" not in out.stderr


def test_narrow_terminal_usage_table(monkeypatch):
    """`context usage` keeps trace, calls and cost on a narrow terminal."""
    monkeypatch.setattr(cli_output, "terminal_width", lambda: 60)
    out = runner.invoke(app, ["context", "usage", GOOD], catch_exceptions=False)
    header = _cells(out.stdout.splitlines()[0])
    assert header[0] == "trace" and "calls" in header and "cost USD" in header
    assert "cache write" not in header and "left out" in out.stderr
