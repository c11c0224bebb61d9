"""`context report`: the page's data against the reports' figures, the specs, escaping, the CLI."""

from __future__ import annotations

import html.parser
import re
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.analysis.health import read_counts
from contexttrace.analysis.session import session_rows
from contexttrace.cli.app import app
from contexttrace.reading import read_trace
from contexttrace.render.html import data as html_report
from contexttrace.render.html import growth as html_growth
from contexttrace.render.html.compare_view import compare_view
from contexttrace.render.html.data import (
    build_page,
    chart_axes,
    decimate,
    gauge,
    growth_spec_name,
    rows_of,
)
from contexttrace.render.html.index import index_groups, trace_labels
from contexttrace.render.html.section import build_section
from contexttrace.render.text import GRADE_COLORS
from contexttrace.reports.results import RunResult

from ..conftest import (
    HUGE,
    SAMPLES,
    assistant,
    stream_run,
    write_file,
)

pytest.importorskip("jinja2")
pytest.importorskip("altair")
pytest.importorskip("vl_convert")

from contexttrace.render.html import charts as html_charts
from contexttrace.render.html.page import csp, render_page, script_hash, script_json

MOMENT = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)


@pytest.fixture(scope="module")
def sample_run():
    """Every bundled sample read with the report's build, in one process."""
    return analyze([str(SAMPLES)], build=build_section, workers=1)


@pytest.fixture(scope="module")
def sample_page(sample_run):
    return build_page(sample_run, paths=["samples"], generated_at=MOMENT)


@pytest.fixture(scope="module")
def sample_html(sample_page):
    return render_page(sample_page)


def _traces_of(section):
    """The `Trace` a section was built from (read again: sections keep no frames)."""
    name = section.report.trace
    return next(t for t in read_trace(section.report.path) if t.name == name)


def test_html_report_growth_data_matches_the_report(sample_run):
    """Every chart series equals the report's own figures: one point per call, one line per compaction."""
    assert len(sample_run.reports) >= 30
    for s in sample_run.reports:
        r = s.report
        calls = rows_of(s.datasets["calls"])
        assert [c["tokens"] for c in calls] == r.prompt_tokens
        assert [c["call"] for c in calls] == list(range(1, r.calls + 1))
        assert [c["xc"] for c in calls] == list(range(1, r.calls + 1))
        if s.axis == "time":
            xt = [c["xt"] for c in calls]
            assert None not in xt and xt == sorted(xt), r.trace
        comps = rows_of(s.datasets["compactions"])
        assert len(comps) == r.compact == len(r.compaction_events)
        for row, event in zip(comps, r.compaction_events, strict=True):
            assert (row["trigger"], row["pre"], row["post"], row["call"]) == (
                event["trigger"],
                event["pre_tokens"],
                event["post_tokens"],
                event["call"],
            )
            assert row["xc"] == (event["call"] if event["call"] is not None else r.calls + 1) - 0.5
        h = r.extra["health"]
        limits = dict(zip(s.datasets["limits"]["kind"], s.datasets["limits"]["tokens"], strict=True))
        assert limits["window"] == h["window"]
        assert limits["autocompact"] == s.threshold["tokens"]
        assert len(s.datasets["subagents"]["tokens"]) == r.subagent_calls


def test_html_report_compaction_sample(sample_run):
    """The compaction sample: 139 calls, its auto compaction before call 62 labelled with pre and next-call tokens."""
    [s] = [s for s in sample_run.reports if "b-spotter-compaction" in s.report.trace]
    [comp] = rows_of(s.datasets["compactions"])
    assert comp["label"] == "auto 170,251 → next call 36,081"
    assert comp["call"] == 62 and comp["xc"] == 61.5
    assert s.axis == "time" and chart_axes(s) == (["time", "calls"], "calls")  # idle 4h10m of 5h1m
    # the threshold was observed (the compaction's pre tokens), so it is exact
    assert s.threshold == {"tokens": 170_251, "source": "observed"}
    # re-reads: the Re-reads signal's count, one marker each, labelled with the path and the first read
    _reads, rereads = read_counts(session_rows(_traces_of(s)).tools)
    labels = s.datasets["rereads"]["label"]
    assert len(labels) == rereads == 16
    assert all(x.startswith("File re-read: ") and " was already read at 2026-02-12 " in x for x in labels)


def test_html_report_health_slices_follow_the_timeline(sample_run):
    """The health bar: 20 steps × the slices per step, from point 0's grade colour to point 20's."""
    for s in sample_run.reports:
        timeline = s.report.extra["health"]["timeline"]
        slices = s.datasets["health"]
        if not timeline:
            assert slices["color"] == []
            continue
        assert len(slices["color"]) == 20 * html_growth.HEALTH_SLICES_PER_STEP
        # a point before the first model call has no grade (docs/health-weather.md): the bar's grey
        first = GRADE_COLORS.get(timeline[0]["grade"] or "", html_growth.NO_GRADE_COLOR)
        assert slices["color"][0] == first
        assert slices["color"][-1] == GRADE_COLORS[timeline[-1]["grade"]]
        assert slices["label"][-1] == f"100%: {timeline[-1]['grade']} {timeline[-1]['score']}/100"
        key = "xt" if s.axis == "time" else "xc"
        ends = slices["x2t" if s.axis == "time" else "x2c"]
        assert slices[key][0] == pytest.approx(timeline[0]["ts_ms" if s.axis == "time" else "calls"])
        assert ends[-1] == pytest.approx(timeline[-1]["ts_ms" if s.axis == "time" else "calls"])


def test_html_report_index_chart_is_first_and_peak(sample_run, sample_page):
    """The index chart's bars are each trace's `first` and `peak`, linking to its section."""
    rows = rows_of(sample_page["data"]["index"]["traces"])
    assert len(rows) == 2 * len(sample_run.reports)
    for i, s in enumerate(sample_run.reports):
        first, peak = rows[2 * i], rows[2 * i + 1]
        assert (first["figure"], first["tokens"]) == ("first", s.report.first)
        assert (peak["figure"], peak["tokens"]) == ("peak", s.report.peak)
        assert first["href"] == peak["href"] == f"#t{i + 1}"
    index_rows = sample_page["index"]["rows"]
    assert [r["sort"]["peak"] for r in index_rows] == [s.report.peak for s in sample_run.reports]
    assert [r["cells"]["calls"] for r in index_rows] == [f"{s.report.calls:,}" for s in sample_run.reports]


def test_html_report_page_data_names_existing_specs(sample_page):
    """Each trace's chart names a spec the page carries, on each axis it offers."""
    specs = html_charts.chart_specs()
    for t, sec in zip(sample_page["data"]["traces"], sample_page["sections"], strict=True):
        assert t["axis"] in t["specs"]
        assert set(t["specs"]) == set(sec["axes"])
        assert all(name in specs for name in t["specs"].values())


@pytest.mark.parametrize(
    ("tokens", "band", "warn"),
    [
        pytest.param(119_999, "cyan", False, id="below-60"),
        pytest.param(120_000, "amber", False, id="60-is-amber"),
        pytest.param(169_999, "amber", False, id="below-85"),
        pytest.param(170_000, "red", True, id="85-is-red-and-warns"),
        pytest.param(250_000, "red", True, id="above-100"),
    ],
)
def test_html_report_gauge_bands(tokens, band, warn):
    """Spec 003's gauge: cyan to 60 %, amber to 85 %, red above, a warning from 85 %; the arc stops at 100 %."""
    g = gauge(tokens, 200_000, "peak")
    assert (g["band"], g["warn"]) == (band, warn)
    assert g["arc"] and g["track"]
    if tokens > 200_000:
        assert g["arc"] == html_report._arc(1.0) and g["percent"] == "125%"


def test_html_report_decimate_keeps_extremes():
    """The index's sparklines keep every stretch's lowest and highest prompt, the first and the last."""
    series = [(i * 37) % 1000 for i in range(5000)]
    series[1234] = 10**6  # a spike
    kept = decimate(series, buckets=40)
    assert len(kept) <= 82
    assert (1234, 10**6) in kept and kept[0] == (0, 0) and kept[-1][0] == 4999
    assert decimate([3, 1], buckets=40) == [(0, 3), (1, 1)]


def test_html_report_labels_are_the_shortest_unique_suffix():
    """The index labels a trace by the fewest path levels that tell it apart, a session id by its first 8
    characters, a run by its file and number; the runs of one file form a group."""
    names = ["a/b/x.jsonl", "a/c/x.jsonl", "a/b/c/y.jsonl", "s/loop.jsonl#1", "s/loop.jsonl#2",
             "p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"]  # fmt: skip
    labels = trace_labels(names)
    assert labels == ["b/x", "c/x", "y", "loop#1", "loop#2", "29ccd257"]
    groups = index_groups(names, labels)
    assert list(groups) == [3] and groups[3]["label"] == "loop" and groups[3]["rows"] == [3, 4]


@pytest.mark.parametrize("name", html_charts.SPEC_NAMES)
def test_html_charts_specs_are_valid_vega_lite(name, monkeypatch):
    """altair builds every spec with schema validation on (a report run skips it: see VALIDATE)."""
    monkeypatch.setattr(html_charts, "VALIDATE", True)
    spec = html_charts._build_spec(name)
    text = orjson.dumps(spec).decode()
    assert "$schema" not in spec and "datasets" not in spec
    wanted = {"index": ["ct_index"], "compare": ["ct_compare_runs", "ct_compare_medians"]}.get(
        name, ["ct_calls", "ct_compactions", "ct_limits", "ct_health", "ct_rereads"]
    )
    assert all(f'"name":"{n}' in text for n in wanted)  # altair suffixes a view's name: ct_calls_0
    assert ('"name":"ct_subagents' in text) == name.endswith("_sub")
    assert "http" not in text  # nothing in a spec names an address


# -- the page -----------------------------------------------------------------------------------------


class _Tags(html.parser.HTMLParser):
    """Collect every start tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = True
            self.scripts.append("")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _tags(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def test_html_page_is_self_contained(sample_html):
    """No element loads anything: no src, no link, no outside href; the CSP forbids loads and names both scripts."""
    parsed = _tags(sample_html)
    names = [t for t, _ in parsed.tags]
    assert "link" not in names and "img" not in names and "iframe" not in names
    assert not [a for _, a in parsed.tags if "src" in a]
    hrefs = [a["href"] for t, a in parsed.tags if t == "a"]
    assert hrefs and all(h.startswith("#") for h in hrefs)
    [meta] = [a for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    policy = meta["content"]
    assert policy.startswith("default-src 'none'") and "connect-src 'none'" in policy
    assert len(parsed.scripts) == 3  # the JSON data, the Vega bundle, the page's script
    assert [a.get("type") for t, a in parsed.tags if t == "script"] == ["application/json", None, None]
    for script in parsed.scripts[1:]:
        assert script_hash(script) in policy  # only these two run
    assert "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";")[0]


def test_html_page_sections_for_every_trace(sample_run, sample_html):
    """An index row, a section, a growth chart holder and a breakdown panel per trace."""
    parsed = _tags(sample_html)
    sections = [a for t, a in parsed.tags if t == "section" and a.get("data-section") == "trace"]
    assert len(sections) == len(sample_run.reports)
    charts = [a for t, a in parsed.tags if a.get("data-chart") == "growth"]
    assert [int(a["data-calls"]) for a in charts] == [s.report.calls for s in sample_run.reports if s.report.calls]
    assert sum(1 for _, a in parsed.tags if a.get("data-panel") == "breakdown") == len(sample_run.reports)
    assert sum(1 for t, a in parsed.tags if t == "tr" and "data-row" in a) == len(sample_run.reports)


def test_script_json_cannot_close_its_script():
    """The JSON island writes <, > and & as escapes: a trace's `</script>` stays inside the string."""
    text = script_json({"x": "</script><script>alert(1)</script>", "y": "a & b", "z": "\u2028"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert orjson.loads(text) == {"x": "</script><script>alert(1)</script>", "y": "a & b", "z": "\u2028"}


def test_csp_allows_only_the_named_scripts():
    """Scripts run only by hash, and nothing is evaluated from a string (no 'unsafe-eval')."""
    policy = csp(["a", "b"])
    assert f"script-src {script_hash('a')} {script_hash('b')};" in policy
    assert "unsafe-eval" not in policy


# -- hostile traces -----------------------------------------------------------------------------------

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '"><img src=x onerror="window.__pwned=2">',
    "javascript:window.__pwned=3",
    "'><svg onload=window.__pwned=4>",
)


def hostile_trace(folder: Path) -> Path:
    """A transcript whose folder name, file paths, tool names, model and tool output hold markup and script."""
    root = folder / PAYLOADS[0].replace("/", "_")
    root.mkdir(parents=True)
    ts = "2026-01-01T00:00:{:02d}Z"
    lines = []
    for i, payload in enumerate(PAYLOADS * 2):
        tid = f"toolu_{i}"
        tools = [(tid, "Read", {"file_path": payload}), (f"{tid}b", payload, {"command": payload})]
        rec = assistant(f"msg_{i}", 10, 100 + i * 50, 1000 * (i + 1), tools=tools, model=PAYLOADS[1])
        rec["timestamp"] = ts.format(2 * i)
        rec["sessionId"] = "s"
        lines.append(rec)
        for use in (tid, f"{tid}b"):
            lines.append(
                {
                    "type": "user",
                    "sessionId": "s",
                    "timestamp": ts.format(2 * i + 1),
                    "message": {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": use, "content": payload * 3}],
                    },
                }
            )
    lines.append(
        {
            "type": "system",
            "subtype": "compact_boundary",
            "sessionId": "s",
            "timestamp": ts.format(40),
            "compactMetadata": {"trigger": PAYLOADS[2], "preTokens": 7000},
        }
    )
    rec = assistant("msg_last", 10, 100, 500, model=PAYLOADS[1])
    rec["timestamp"] = ts.format(41)
    rec["sessionId"] = "s"
    lines.append(rec)
    path = root / f"{PAYLOADS[1].replace('/', '_')}.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(x) for x in lines) + b"\n")
    return path


@pytest.fixture
def hostile_html(tmp_path):
    path = hostile_trace(tmp_path)
    run = analyze([str(path), str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")], build=build_section, workers=1)
    assert len(run.reports) == 2 and not run.failures
    return render_page(build_page(run, paths=[str(path)], generated_at=MOMENT)), run


def test_html_report_escapes_everything_from_a_trace(hostile_html):
    """Paths, tool names, models, triggers holding markup are never written as markup."""
    page, run = hostile_html
    s = run.reports[0]
    assert s.report.compact == 1 and PAYLOADS[1] in s.report.models  # the payloads reached the report
    for payload in PAYLOADS:
        if "<" in payload or '"' in payload:
            assert payload not in page, payload
    markup = re.sub(r"(?s)(<script[^>]*>).*?(</script>)", r"\1\2", page)  # the page without its scripts
    assert "<img" not in markup.lower()
    assert not re.search(r"<svg[^>]*onload", markup, re.IGNORECASE)
    assert not re.search(r"""(href|src)\s*=\s*["']?\s*javascript:""", markup, re.IGNORECASE)
    parsed = _tags(page)
    assert len(parsed.scripts) == 3
    assert [t for t, _ in parsed.tags].count("img") == 0
    assert not [a for _, a in parsed.tags if any(k.startswith("on") for k in a)]
    # the payloads are there, as text: escaped in the HTML, \u-escaped in the JSON island
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    data = orjson.loads(parsed.scripts[0])
    tools = data["traces"][0]["datasets"]["calls"]["tools"]
    assert any(PAYLOADS[0] in t for t in tools)


# -- the command --------------------------------------------------------------------------------------


def test_cli_report_writes_one_page(tmp_path):
    """`context report` writes the page and says where on stderr; exit 0."""

    out = tmp_path / "r.html"
    sample = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    result = CliRunner().invoke(app, ["context", "report", sample, "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert f"wrote {out}: 1 trace(s)" in result.stderr
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "b-ccl-thinking-sonnet45.jsonl" in text


def test_cli_report_to_stdout_and_failures(tmp_path):
    """`-o -` prints the page; a bad path is named on stderr and in the page, exit 1."""

    sample = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    missing = str(tmp_path / "missing.jsonl")
    result = CliRunner().invoke(app, ["context", "report", sample, missing, "-o", "-"])
    assert result.exit_code == 1
    assert result.stdout.startswith("<!doctype html>")
    assert "missing.jsonl" in result.stderr and "Error: " in result.stdout  # the page lists it too


def test_cli_report_says_what_to_install(monkeypatch):
    """Without the html extra, the command names the install line and exits 2 before reading anything."""

    monkeypatch.setattr(html_charts, "missing_extras", lambda: ["vl-convert-python"])
    result = CliRunner().invoke(app, ["context", "report", str(SAMPLES)])
    assert result.exit_code == 2
    assert "pip install 'contexttrace[html]'" in result.stderr and "vl-convert-python" in result.stderr


# -- the panels of other commands ----------------------------------------------------------------------


def test_html_report_panel_table_badges_amber_and_escaping():
    """A table panel shows spec 003's badges with dropped rows in amber, and escapes what a trace wrote."""
    run = analyze([str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")], build=build_section, workers=1)
    run.reports[0].panels = [
        {
            "id": "files",
            "title": "Files",
            "kind": "table",
            "columns": [{"key": "path", "label": "file"}, {"key": "level", "label": "relevance"}],
            "rows": [{"path": "<b>a.py</b>", "level": "HIGH", "dropped": False},
                     {"path": "b.py", "level": "DROP", "dropped": True}],
            "badge_key": "level",
            "amber_key": "dropped",
        }
    ]  # fmt: skip
    page = render_page(build_page(run, generated_at=MOMENT))
    assert 'data-panel="files"' in page
    assert '<span class="rel rel-DROP">DROP</span>' in page and 'class="dropped"' in page
    assert "&lt;b&gt;a.py&lt;/b&gt;" in page


def test_html_report_has_the_panels_of_sources_tools_and_files():
    """The compaction sample's section carries the three commands' panels (`section.trace_panels`): sources,
    tools (Bash first with 67 calls) and files (spec 003's badges, DROPPED rows in amber)."""
    run = analyze([str(SAMPLES / "b-spotter-compaction")], build=build_section, workers=1)
    [section] = run.reports
    assert [p["id"] for p in section.panels] == ["sources", "tools", "files"]
    page = render_page(build_page(run, generated_at=MOMENT))
    for panel in ("sources", "tools", "files"):
        assert f'data-panel="{panel}"' in page
    assert '<span class="rel rel-DROPPED">DROPPED</span>' in page and 'class="dropped"' in page
    assert ">Bash<" in page and ">67<" in page


def test_growth_spec_name_by_subagents(sample_run):
    """A trace with subagent calls is drawn with the spec that has their axis."""
    for s in sample_run.reports:
        for axis in chart_axes(s)[0]:
            name = growth_spec_name(s, axis)
            assert name.endswith("_sub") == bool(s.report.subagent_calls)


# -- comparing conditions -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compared():
    """Two conditions of bundled runs: the 27-run file (free) and two single transcripts (loaded)."""
    from contexttrace.reports.compare import Condition

    conditions = [
        Condition("free", (str(SAMPLES / "a-ralph-27runs-with-separators.jsonl"),)),
        Condition(
            "loaded", tuple(str(SAMPLES / n) for n in ("b-ccl-thinking-sonnet45.jsonl", "b-ccl-image-and-errors.jsonl"))
        ),
    ]
    results = [analyze(list(c.paths), build=build_section, workers=1) for c in conditions]
    return conditions, results, compare_view(conditions, results)


def test_html_report_compare_points_and_medians(compared):
    """Each metric per condition: a point per run with its value, the median as `context compare` computes it."""
    from contexttrace.reports import compare as cmp

    conditions, results, view = compared
    rows = rows_of(view["datasets"]["runs"])
    figures = [RunResult(reports=[cmp.RunFigures(s.report, s.usage) for s in r.reports]) for r in results]
    comparison = cmp.compare(conditions, figures)
    assert view["baseline"] == "free"
    peaks = [r for r in rows if r["metric"] == "peak" and r["kind"] == "run"]
    assert [r["value"] for r in peaks] == [s.report.peak for r in results for s in r.reports]
    assert [r["href"] for r in peaks] == [f"#t{i}" for i in range(1, len(peaks) + 1)]
    for cond in ("free", "loaded"):
        [median] = [r for r in rows if r["metric"] == "peak" and r["kind"] == "median" and r["condition"] == cond]
        assert median["value"] == comparison.row(cond, "peak")["median"]
    assert {r["metric"] for r in view["rows"]} >= {"peak", "cost", "health"}


def test_html_page_with_a_comparison(compared):
    """The comparison section comes first and carries its chart's spec and data."""
    _conditions, results, view = compared
    run = RunResult(reports=[s for r in results for s in r.reports])
    page = render_page(build_page(run, generated_at=MOMENT, compare=view))
    parsed = _tags(page)
    assert any(a.get("data-section") == "compare" for _, a in parsed.tags)
    data = orjson.loads(parsed.scripts[0])
    assert "compare" in data["specs"] and data["compare"]["runs"]["kind"]
    assert page.index('id="compare"') < page.index('id="t1"')


@pytest.mark.parametrize("written", [HUGE, "-123456789"])
def test_html_report_header_duration_is_bounded_like_every_result_count(tmp_path, written):
    """The HTML page's header took the result's `duration_ms` as any int ≥ 0: a 396-digit duration."""
    from contexttrace.render.html.section import build_section

    path = write_file(tmp_path, stream_run(result_fields={"duration_ms": "<d>", "num_turns": 1}, d=written))
    [trace] = read_trace(path)
    assert build_section(trace).reported_duration_ms is None
