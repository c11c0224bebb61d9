"""`context compare`: conditions, medians, ranges, deltas, noise, statistics, readings, surface.

Expected figures are computed here from what the generator wrote (`_run`), never read back from the code
under test; the statistics' expected values come from counting splits by hand where they are exact.
"""

from __future__ import annotations

import csv
import io
import math
import random
import re
import statistics
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.cli.app import app
from contexttrace.render.compare import (
    CSV_COLUMNS,
    compare_dict,
    render_compare,
    render_compare_notes,
)
from contexttrace.reports.compare import (
    METRICS,
    SCHEMA_VERSION,
    ConditionError,
    compare,
    parse_conditions,
    parse_metrics,
    pick_baseline,
    split_condition,
)
from contexttrace.reports.stats import MIN_RUNS_FOR_TEST, median_difference_ci, noise_of, rank_test, within_noise
from contexttrace.reports.usage import build_usage
from contexttrace.run.conditions import analyze_conditions
from contexttrace.select.views import CompareFormat

from ..conftest import ROOT, SAMPLES, assistant, jsonl, result

RALPH = SAMPLES / "a-ralph-27runs-with-separators.jsonl"
BASE_TOOLS = ["Task", "Bash", "Glob", "Grep", "Read", "Edit", "Write", "TodoWrite", "WebFetch", "WebSearch"]


def _init(sid: str, *, mcp=(), skills=0, model="claude-sonnet-4-5", version="2.0.57", agents=2) -> dict:
    """A stream-json `system/init` line offering `BASE_TOOLS`, two tools per MCP server and `skills` skills."""
    tools = BASE_TOOLS + [f"mcp__{m}__{t}" for m in mcp for t in ("read", "write")]
    return {
        "type": "system",
        "subtype": "init",
        "session_id": sid,
        "cwd": "/tmp/task",
        "tools": tools,
        "mcp_servers": [{"name": m, "status": "connected"} for m in mcp],
        "model": model,
        "permissionMode": "default",
        "slash_commands": ["compact", "cost"],
        "apiKeySource": "none",
        "claude_code_version": version,
        "agents": ["general-purpose", "Explore"][:agents],
        "skills": [f"skill-{i}" for i in range(skills)],
        "plugins": [],
    }


def _run(seed: int, *, prefix: int, calls: int, **init) -> tuple[list[dict], dict]:
    """One stream-json run and its figures as written: the first prompt is `prefix` plus a task of
    500-900 tokens (drawn from `seed`), each later call adds 300-2,000 tokens; every call but the last
    reads a file whose result is 100 characters."""
    rng = random.Random(seed)
    sid = f"s{seed}-{prefix}-{calls}"
    lines = [_init(sid, **init)]
    ctx = prefix + rng.randint(500, 900)
    prompts = []
    for i in range(calls):
        prompts.append(ctx)
        tools = [(f"tu_{sid}_{i}", "Read", {"file_path": f"/tmp/task/f{i}.py"})] if i < calls - 1 else []
        line = assistant(f"msg_{sid}_{i}", 3, 0, ctx - 3, tools=tools, parent="", session_id=sid)
        line["message"]["stop_reason"] = "tool_use" if tools else "end_turn"  # a final output count
        lines.append(line)
        if tools:
            lines.append(result(tools[0][0], "x" * 100, stream=True, session_id=sid))
        ctx += rng.randint(300, 2_000)
    lines.append({"type": "result", "subtype": "success", "session_id": sid, "is_error": False, "num_turns": calls})
    figures = {
        "calls": calls,
        "first": prompts[0],
        "peak": max(prompts),
        "growth": max(prompts) - prompts[0],
        "tools": calls - 1,
        "result_chars": 100 * (calls - 1),
        "compact": 0,
        "failed": 0,
        "repeat": 0,
    }
    return lines, figures


def _median_row(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


@pytest.fixture
def known(tmp_path: Path) -> dict:
    """Two generated conditions with a known difference: `free` (a directory of 5 one-run files, start-up
    20,000 tokens, 5 calls a run) and `loaded` (one file of 5 runs: the same tasks with start-up 3,000
    tokens larger, two more MCP servers and a skill, and 2 more calls a run)."""
    free_dir = tmp_path / "free"
    free_dir.mkdir()
    free, loaded, loaded_lines = [], [], []
    for seed in range(5):
        lines, figures = _run(seed, prefix=20_000, calls=5)
        (free_dir / f"run{seed}.jsonl").write_bytes(jsonl(*lines))
        free.append(figures)
        lines, figures = _run(seed, prefix=23_000, calls=7, mcp=("github", "figma"), skills=1)
        loaded_lines.extend(lines)
        loaded.append(figures)
    loaded_file = tmp_path / "loaded.jsonl"
    loaded_file.write_bytes(jsonl(*loaded_lines))
    return {"free_dir": str(free_dir), "loaded_file": str(loaded_file), "free": free, "loaded": loaded}


def _compare(specs: list[str], dirs: list[str] = (), **kw):
    conditions = parse_conditions(specs, dirs)
    return compare(conditions, analyze_conditions(conditions, workers=1), **kw)


# -- generated conditions with a known difference --------------------------------------------------


def test_compare_known_difference_medians_deltas_noise(known):
    """Medians, ranges, deltas and noise flags of two generated conditions equal those computed from the
    figures the generator wrote."""
    c = _compare([f"loaded={known['loaded_file']}"], [known["free_dir"]], baseline="free")
    assert [x.name for x in c.conditions] == ["loaded", "free"]
    assert [len(x.runs) for x in c.conditions] == [5, 5]  # the multi-run file counts each of its runs
    for key in ("calls", "first", "peak", "growth", "tools", "result_chars", "compact", "failed", "repeat"):
        free = [f[key] for f in known["free"]]
        loaded = [f[key] for f in known["loaded"]]
        base_row, row = c.row("free", key), c.row("loaded", key)
        assert {k: base_row[k] for k in ("median", "min", "max")} == _median_row(free), key
        assert {k: row[k] for k in ("median", "min", "max")} == _median_row(loaded), key
        delta = statistics.median(loaded) - statistics.median(free)
        assert row["delta"] == delta, key
        base = statistics.median(free)
        assert row["delta_pct"] == (pytest.approx(delta / base * 100) if base else None), key
        quartiles = [statistics.quantiles(v, n=4, method="inclusive") for v in (free, loaded)]
        noise = max(q[2] - q[0] for q in quartiles)
        assert row["noise"] == pytest.approx(noise) and row["within_noise"] is (abs(delta) <= noise), key
        assert base_row["delta"] is None and base_row["within_noise"] is None
    # start-up is larger by exactly 3,000 tokens in every run: far beyond the 400-token spread of the tasks
    first = c.row("loaded", "first")
    assert first["delta"] == 3_000 and first["within_noise"] is False
    assert 0 < first["ci_low"] <= 3_000 <= first["ci_high"]  # each side resampled apart: the tasks' spread widens it
    assert c.row("loaded", "calls")["delta"] == 2 and c.row("loaded", "calls")["within_noise"] is False
    assert c.row("loaded", "compact")["within_noise"] is True  # 0 vs 0: no difference, no spread
    assert c.row("loaded", "compact")["delta_pct"] is None  # no percentage of a baseline of 0


def test_compare_known_difference_exact_p_value(known):
    """Every loaded run starts above every free run, so U is 0 and the exact two-sided p is the 2 splits
    (all loaded above, all below) out of C(10, 5) = 252; the same for calls (7 against 5 in every run)."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"])
    assert c.baseline == "free"
    assert c.row("loaded", "first")["p_value"] == pytest.approx(2 / math.comb(10, 5))
    assert c.row("loaded", "calls")["p_value"] == pytest.approx(2 / math.comb(10, 5))


def test_compare_cost_and_health_come_from_the_usage_and_trace_reports(known):
    """The cost row is the median of each run's `context usage` cost; health the median of the scores."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"])
    costs = [u.total["cost_usd"] for u in analyze([known["free_dir"]], workers=1, build=build_usage).reports]
    assert len(costs) == 5 and all(x > 0 for x in costs)
    assert c.row("free", "cost_usd")["median"] == pytest.approx(statistics.median(costs))
    scores = [r.extra["health"]["score"] for r in analyze([known["loaded_file"]], workers=1).reports]
    assert c.row("loaded", "health_score")["median"] == statistics.median(scores)


def test_compare_readings_spell_out_spec_004(known):
    """The readings name the start-up cost on every call and what the condition cost over the run."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"], metrics=["first", "peak", "calls"])
    text = render_compare(c)
    free_first = statistics.median(f["first"] for f in known["free"])
    peak = statistics.median(f["peak"] for f in known["loaded"]) - statistics.median(f["peak"] for f in known["free"])
    assert f"- free: start-up loads {free_first:,} tokens before any work (first, 5 runs)" in text
    assert f"- loaded − free: what start-up loads costs ≈ 3,000 tokens on every call (first: {free_first + 3000:,}" in (
        text
    )
    assert f"- loaded − free, over the run: a peak {peak:,} tokens higher (beyond the noise, p = " in text
    assert "; 2 more calls (beyond the noise, p = 0.008)" in text
    assert [r["kind"] for r in c.readings] == ["baseline", "startup", "startup_sources", "run"]
    # stream-json records neither the guidance nor the -p prompt: the whole +3,000 is in the not itemised row
    assert (
        "- loaded − free, start-up by source: first +3,000, none of it in a row the trace itemises: all in the "
        "system prompt + tools, not itemised (≈+3,000), where what the trace does not record lands" in text
    )


def test_compare_saved_reading_when_the_condition_is_smaller(known):
    """Measured against the loaded condition, free saves: the reading says so rather than a negative cost."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"], baseline="loaded")
    text = render_compare(c)
    assert "- free − loaded: what start-up loads saves ≈ 3,000 tokens on every call" in text
    assert "- free − loaded, over the run: a peak " in text and " tokens lower (beyond the noise" in text
    assert "; 2 fewer calls (beyond the noise, p = 0.008)" in text


def test_compare_surface_between_conditions_names_what_they_differ_in(known):
    """The loaded condition offers two more MCP servers (four more tools) and a skill: printed as such."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"])
    assert "- loaded differs from free in: +4 tools; +1 skill; +2 MCP servers: figma, github" in render_compare(c)
    assert not [w for w in c.warnings if w["kind"] in ("surface_within", "same_start", "baseline_offers")]


def test_compare_is_deterministic(known):
    """The same runs give the same JSON, bootstrap intervals included (seeded resampling)."""
    specs = [f"free={known['free_dir']}", f"loaded={known['loaded_file']}"]
    assert render_compare(_compare(specs), CompareFormat.JSON) == render_compare(_compare(specs), CompareFormat.JSON)


# -- the 27-run sample split in halves ---------------------------------------------------------------


def _split_runs(path: Path, at: int, out: Path) -> tuple[str, str]:
    """Write the runs of a multi-run stream-json file before and from run `at` (0-based) to two files."""
    lines = path.read_bytes().split(b"\n")
    starts = [i for i, line in enumerate(lines) if b'"subtype":"init"' in line.replace(b" ", b"")]
    first, second = out / "first-half.jsonl", out / "second-half.jsonl"
    first.write_bytes(b"\n".join(lines[: starts[at]]) + b"\n")
    second.write_bytes(b"\n".join(lines[starts[at] :]))
    return str(first), str(second)


def test_compare_halves_of_one_loop_show_no_difference_outside_the_noise(tmp_path):
    """The 27 runs of one loop, split 13 + 14 into two conditions: no metric differs beyond the noise."""
    first, second = _split_runs(RALPH, 13, tmp_path)
    c = _compare([f"h1={first}", f"h2={second}"])
    assert [len(x.runs) for x in c.conditions] == [13, 14]
    rows = [r for r in c.rows if r["condition"] == "h2"]
    assert [r["metric"] for r in rows] == list(METRICS)
    assert [r["metric"] for r in rows if r["within_noise"] is not True] == []
    assert {r["metric"]: r["verdict"] for r in rows if r["verdict"] not in ("same", "within_noise")} == {}
    assert all(r["p_value"] is not None and r["ci_low"] is not None for r in rows)  # 13 and 14 runs: tested
    assert not [w for w in c.warnings if w["kind"] == "surface_within"]  # one loop, one surface
    assert "- h2: the same surface as h1" in render_compare(c)


# -- statistics --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("baseline", "values", "noise", "flag"),
    [
        # quartiles interpolated between runs: [10, 12, 20] has Q1 11 and Q3 16, an IQR of 5
        pytest.param([10, 12, 20], [15, 16], 5, True, id="delta-3.5-inside-the-wider-iqr"),
        pytest.param([10, 12, 20], [18, 19, 20], 5, False, id="delta-7-beyond-the-wider-iqr"),
        pytest.param([10, 10, 10], [20, 20], 0, False, id="no-spread-any-delta-is-beyond"),
        pytest.param([10, 10], [10, 10], 0, True, id="no-spread-no-delta"),
        pytest.param([10, 30], [30], 10, True, id="delta-equal-to-the-noise-is-within"),
        pytest.param([10, 30], [30.5], 10, False, id="just-beyond"),
        pytest.param(
            [4, 4, 4, 3, 40, 44, 4, 4, 4, 4, 4], [4, 4, 4, 4, 5], 0, True, id="outlier-runs-leave-the-iqr-alone"
        ),
        pytest.param([10], [30], None, None, id="one-run-a-side-no-spread-measured"),
    ],
)
def test_noise_flag_edges(baseline, values, noise, flag):
    """The noise is the wider of the two interquartile ranges; a delta equal to it is still within; one run
    a side has none."""
    q = [statistics.quantiles(v, n=4, method="inclusive") for v in (baseline, values) if len(v) > 1]
    assert noise == (max(x[2] - x[0] for x in q) if q else None)  # the expected noise, from the stdlib
    delta = statistics.median(values) - statistics.median(baseline)
    assert noise_of(baseline, values) == noise
    assert within_noise(delta, noise_of(baseline, values)) is flag


def test_statistics_need_min_runs_on_each_side():
    """Below `MIN_RUNS_FOR_TEST` runs on either side there is no p-value and no interval."""
    few, enough = [1, 2, 3, 4], [5, 6, 7, 8, 9]
    assert MIN_RUNS_FOR_TEST == 5
    assert rank_test(few, enough) is None and median_difference_ci(few, enough) is None
    assert rank_test(enough, [x + 10 for x in enough]) == pytest.approx(2 / math.comb(10, 5))


def test_rank_test_ties_and_identical_samples():
    """Identical samples give p = 1; ties are counted exactly (one 5 among 4s: 2 of the 10 + 10 splits put
    the 5 on a side, p is not below 0.05)."""
    assert rank_test([4] * 5, [4] * 5) == 1.0
    assert rank_test([4] * 5, [4] * 4 + [5]) == pytest.approx(1.0)


def test_median_difference_ci_brackets_the_difference():
    """The bootstrap interval of a clear shift holds the shift of the medians and not 0."""
    base = [100, 104, 98, 101, 97, 103]
    shifted = [x + 50 for x in base]
    low, high = median_difference_ci(base, shifted)
    assert low <= 50 <= high and low > 0


# -- conditions and options --------------------------------------------------------------------------


def test_parse_conditions_globs_directories_and_repeats(tmp_path):
    """A glob expands sorted, a repeated name adds paths, a directory is named by its folder."""
    for name in ("b.jsonl", "a.jsonl"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "free").mkdir()
    one, two = str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")
    got = parse_conditions([f"loaded={tmp_path}/*.jsonl", f"x={one}", f"x={two}"], [str(tmp_path / "free") + "/"])
    assert [(c.name, c.paths) for c in got] == [
        ("loaded", (one, two)),
        ("x", (one, two)),
        ("free", (str(tmp_path / "free") + "/",)),
    ]


def test_condition_names_may_hold_equals_signs(tmp_path, monkeypatch):
    """A value splits at the last '=' that leaves an existing PATH: `a=b=dir` is condition `a=b` when dir
    exists; a file whose name holds '=' is found too (`a=x=y.jsonl` is `a` when only x=y.jsonl exists)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dir").mkdir()
    (tmp_path / "x=y.jsonl").write_text("{}")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.jsonl").write_text("{}")
    got = parse_conditions(["a=b=dir", "a=x=y.jsonl", "t=0.2=runs/*.jsonl", "stdin=-"])
    assert [(c.name, c.paths) for c in got] == [
        ("a=b", ("dir",)), ("a", ("x=y.jsonl",)), ("t=0.2", ("runs/r.jsonl",)), ("stdin", ("-",))]  # fmt: skip
    assert split_condition("s3=s3://bucket/runs/") == ("s3", "s3://bucket/runs/")


@pytest.mark.parametrize(
    ("options", "dirs", "match"),
    [
        pytest.param(["free"], [], "expected NAME=PATH", id="no-equals"),
        pytest.param(["=pyproject.toml"], [], "expected NAME=PATH", id="no-name"),
        pytest.param(["a=b=missing.jsonl"], [], "NAME may contain '='", id="no-existing-path"),
        pytest.param(["a=/nonexistent/*.jsonl"], [], "matches nothing", id="glob-matches-nothing"),
        pytest.param([], ["pyproject.toml"], "quote a glob", id="bare-file"),
        pytest.param(["tests=pyproject.toml"], ["tests"], "two conditions are named 'tests'", id="same-name"),
    ],
)
def test_parse_conditions_refuses(options, dirs, match, monkeypatch):
    """What cannot name a condition is a usage error saying why."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(ConditionError, match=match):
        parse_conditions(options, [str(ROOT / d) for d in dirs])


def test_parse_metrics_and_baseline():
    """Metrics by key or alias, in order, once; the baseline must be one of at least two conditions."""
    assert parse_metrics(None) == list(METRICS)
    assert parse_metrics(["health,cost", "result-chars"]) == ["health_score", "cost_usd", "result_chars"]
    with pytest.raises(ConditionError, match="unknown metric 'fill'"):
        parse_metrics(["fill"])
    two = parse_conditions(["a=.", "b=."])
    assert pick_baseline(two, None) == "a" and pick_baseline(two, "b") == "b"
    with pytest.raises(ConditionError, match="not a condition"):
        pick_baseline(two, "c")
    with pytest.raises(ConditionError, match="at least two"):
        pick_baseline(two[:1], None)


# -- surface checks on hand-made init lines ---------------------------------------------------------


def _write_runs(path: Path, runs: list[tuple[list[dict], dict]]) -> str:
    path.write_bytes(jsonl(*[line for lines, _ in runs for line in lines]))
    return str(path)


def test_surface_within_a_condition_is_warned(tmp_path):
    """Runs of one condition that start with different MCP servers, or another model, are named."""
    loaded = _write_runs(
        tmp_path / "loaded.jsonl",
        [
            _run(1, prefix=20_000, calls=3, mcp=("github",)),
            _run(2, prefix=20_000, calls=3, mcp=("github",)),
            _run(3, prefix=20_000, calls=3, mcp=("github", "figma"), model="claude-opus-4-5"),
        ],
    )
    free = _write_runs(tmp_path / "free.jsonl", [_run(4, prefix=20_000, calls=3)])
    c = _compare([f"free={free}", f"loaded={loaded}"])
    notes = render_compare_notes(c)
    assert (
        f"warning: condition loaded: its runs differ in MCP servers: github (2 runs); figma, github (1 run: "
        f"{loaded}#3). Runs that differ there are not the same condition (spec 004)"
    ) in notes
    assert any(
        n.startswith("warning: condition loaded: its runs differ in model: claude-sonnet-4-5 (2 runs)") for n in notes
    )
    assert any(
        n.startswith("warning: condition loaded: its runs differ in tools: 12 (2 runs); 14 (1 run") for n in notes
    )
    # between conditions, each side's most common surface is compared
    assert "- loaded differs from free in: +2 tools; +1 MCP server: github" in render_compare(c)


def test_surface_free_baseline_traps_are_warned(tmp_path):
    """A baseline that starts as the loaded condition does (same surface, same first), and one that offers
    MCP servers, get spec 004's notes on how to run a free baseline."""
    free = _write_runs(tmp_path / "free.jsonl", [_run(s, prefix=20_000, calls=3, mcp=("github",)) for s in (1, 2)])
    # the same tasks, and (the trap) the same start-up: loaded adds nothing free did not load already
    loaded = _write_runs(tmp_path / "loaded.jsonl", [_run(s, prefix=20_000, calls=4, mcp=("github",)) for s in (1, 2)])
    c = _compare([f"free={free}", f"loaded={loaded}"])
    kinds = {w["kind"]: w for w in c.warnings}
    assert kinds["same_start"]["same_surface"] is True
    assert kinds["baseline_offers"]["mcp_servers"] == ["github"]
    notes = render_compare_notes(c)
    assert any(n.startswith("note: loaded starts as free does (first ") and "~/.claude/CLAUDE.md" in n for n in notes)
    assert any(n.startswith("note: baseline free offers MCP servers github at start-up") for n in notes)
    assert "not the harness's own baseline: it offers MCP servers github" in render_compare(c)


def test_runs_without_a_model_call_are_left_out_and_named(tmp_path):
    """A run that never called the model is not a zero in the medians: it is left out and named."""
    runs = [_run(s, prefix=20_000, calls=3) for s in (1, 2)] + [([_init("empty")], {})]
    loaded = _write_runs(tmp_path / "loaded.jsonl", runs)
    free = _write_runs(tmp_path / "free.jsonl", [_run(5, prefix=20_000, calls=3)])
    c = _compare([f"free={free}", f"loaded={loaded}"])
    assert len(c.conditions[1].runs) == 2 and c.conditions[1].no_call == [f"{loaded}#3"]
    assert f"warning: condition loaded: 1 run(s) with no model call left out of every figure: {loaded}#3" in (
        render_compare_notes(c)
    )


# -- output: JSON, CSV, CLI --------------------------------------------------------------------------


def _json_keys(value: object, out: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            _json_keys(item, out)
    elif isinstance(value, list):
        for item in value:
            _json_keys(item, out)
    return out


def test_compare_json_keys_are_documented(known, tmp_path):
    """Every key `--json` emits is snake_case and named in docs/compare.md, so its schema can be written."""
    first, second = _split_runs(RALPH, 13, tmp_path)
    docs = (ROOT / "docs" / "compare.md").read_text()
    keys: set[str] = set()
    for specs in ([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"], [f"h1={first}", f"h2={second}"]):
        data = orjson.loads(render_compare(_compare(specs), CompareFormat.JSON))
        assert data["schema_version"] == SCHEMA_VERSION == 3
        _json_keys(data, keys)
    assert len(keys) > 40
    assert sorted(k for k in keys if not re.fullmatch(r"[a-z][a-z0-9_]*", k)) == []
    assert sorted(k for k in keys if f"`{k}`" not in docs) == []


def test_compare_csv_is_the_rows(known):
    """CSV holds one row per metric and condition with raw numbers; the readings go to stderr notes."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"])
    rows = list(csv.DictReader(io.StringIO(render_compare(c, CompareFormat.CSV))))
    assert len(rows) == 2 * len(METRICS) and list(rows[0]) == CSV_COLUMNS
    first = next(r for r in rows if r["metric"] == "first" and r["condition"] == "loaded")
    assert (first["delta"], first["within_noise"]) == ("3000", "False")
    assert any(
        n.startswith("reading: loaded − free: what start-up loads costs")
        for n in render_compare_notes(c, CompareFormat.CSV)
    )


def test_compare_json_rows_match_the_table_rows(known):
    """The JSON holds the rows as they are computed, and each condition's runs with their trace ids."""
    c = _compare([f"free={known['free_dir']}", f"loaded={known['loaded_file']}"])
    data = compare_dict(c)
    assert data["rows"] == c.rows
    assert [r["trace"] for r in data["conditions"][1]["runs"]] == [f"{known['loaded_file']}#{k}" for k in range(1, 6)]
    assert [r["first"] for r in data["conditions"][0]["runs"]] == [f["first"] for f in known["free"]]


def test_cli_compare_table_json_csv(known):
    """The command prints the table with its readings, one JSON object, or CSV; exit 0."""
    runner = CliRunner()
    args = ["context", "compare", known["free_dir"], "-c", f"loaded={known['loaded_file']}", "--baseline", "free"]
    out = runner.invoke(app, args, catch_exceptions=False)
    assert out.exit_code == 0
    assert out.stdout.startswith("| metric ") and "Readings (medians over the runs; spec 004):" in out.stdout
    out = runner.invoke(app, [*args, "--json", "--metric", "first,cost"], catch_exceptions=False)
    data = orjson.loads(out.stdout)
    assert data["schema_version"] == 3 and data["baseline"] == "free" and data["metrics"] == ["first", "cost_usd"]
    out = runner.invoke(app, [*args, "--format", "csv", "-m", "calls"], catch_exceptions=False)
    assert out.stdout.splitlines()[0] == ",".join(CSV_COLUMNS) and len(out.stdout.splitlines()) == 3
    out = runner.invoke(app, [*args, "--format", "markdown", "-m", "calls"], catch_exceptions=False)
    assert "#### Readings (medians over the runs; spec 004)" in out.stdout


@pytest.mark.parametrize(
    ("args", "match"),
    [
        pytest.param(["pyproject.toml", "tests"], "quote a glob", id="bare-file"),
        pytest.param(["-c", "a=pyproject.toml"], "at least two", id="one-condition"),
        pytest.param(["-c", "a=samples", "-c", "b=tests", "--baseline", "c"], "not a condition", id="baseline"),
        pytest.param(["-c", "a=samples", "-c", "b=tests", "--metric", "fill"], "unknown metric", id="metric"),
        pytest.param(["-c", "a=x", "-c", "b=y", "--json", "--format", "csv"], "two formats", id="json-and-csv"),
        pytest.param(
            ["-c", "a=b=missing", "-c", "c=samples"],
            "--condition 'a=b=missing': expected NAME=PATH, PATH an existing file or directory or a quoted glob "
            "that matches; NAME may contain '=' (the value is split at the last '=' that leaves an existing PATH)",
            id="no-existing-path",
        ),
    ],
)
def test_cli_compare_usage_errors(args, match, monkeypatch):
    """Bad conditions, baselines, metrics and formats are usage errors: exit 2, the reason on stderr."""
    monkeypatch.chdir(ROOT)
    out = CliRunner().invoke(app, ["context", "compare", *args])
    assert out.exit_code == 2
    assert match in " ".join(out.stderr.split())


def test_cli_compare_condition_name_with_equals(tmp_path):
    """`-c temperature=0.2=DIR`: the condition is named `temperature=0.2` (its DIR exists), in the table and
    the JSON."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("b-ccl-thinking-sonnet45.jsonl", "b-ccl-image-and-errors.jsonl"):
        (runs / name).write_bytes((SAMPLES / name).read_bytes())
    args = ["context", "compare", "-c", f"temperature=0.2={runs}", "-c", f"temperature=1={runs}", "-m", "calls"]
    out = CliRunner().invoke(app, [*args, "--format", "json"], catch_exceptions=False)
    assert out.exit_code == 0, out.stderr
    assert [c["name"] for c in orjson.loads(out.stdout)["conditions"]] == ["temperature=0.2", "temperature=1"]
    table = CliRunner().invoke(app, args, catch_exceptions=False)
    assert "| temperature=0.2 " in table.stdout


def test_cli_compare_unreadable_run_exits_1(known, tmp_path):
    """A trace that cannot be read is named on stderr; the others are compared and the exit code is 1."""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\x00\x01\x02 not a trace")
    out = CliRunner().invoke(
        app, ["context", "compare", known["free_dir"], "-c", f"loaded={known['loaded_file']}", "-c", f"loaded={bad}"]
    )
    assert out.exit_code == 1
    assert "| first " in out.stdout and f"Error: {bad}" in out.stderr


def test_scipy_is_imported_only_by_a_comparison_that_tests():
    """Other commands never pay for scipy's import: loading the CLI, with compare, leaves it unloaded."""
    code = "import sys, contexttrace.cli.app, contexttrace.reports.compare; assert 'scipy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_compare_condition_without_runs_exits_1(known, tmp_path):
    """A condition with nothing to compare prints its empty row, is named on stderr, and exits 1."""
    empty = tmp_path / "empty"
    empty.mkdir()
    out = CliRunner().invoke(app, ["context", "compare", known["free_dir"], str(empty), "-m", "first"])
    assert out.exit_code == 1
    empty_row = next(line for line in out.stdout.splitlines() if "| empty " in line)
    assert [c.strip() for c in empty_row.strip("|").split("|")][:5] == ["first", "empty", "0", "–", "–"]
    assert f"warning: condition empty: no run to compare in {empty}" in out.stderr


def test_a_trace_in_two_conditions_is_warned(known):
    """The same run given to two conditions is named: conditions should not share runs."""
    c = _compare([f"a={known['loaded_file']}", f"b={known['loaded_file']}"], metrics=["first"])
    notes = render_compare_notes(c)
    assert f"warning: {known['loaded_file']}#1 is a run of a and b: conditions should not share runs" in notes
