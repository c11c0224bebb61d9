"""`context report` in a real browser: Debian's chromium driven by Playwright.

Every bundled sample's page loads with no console error, no Content-Security-Policy violation (the page
allows no `'unsafe-eval'`: `securitypolicyviolation` events are recorded from before its scripts run) and
no network request, shows each section and chart (drawn: its SVG marks are counted), draws one point per
call and one line per compaction in the growth chart, and shows a point's tooltip on hover; a screenshot of
each goes to tests/artifacts/ (gitignored; kept as a CI artefact).
A page made from a trace full of markup runs none of it.

The browser is /usr/bin/chromium (`apt-get install chromium`; .ci/run installs it when missing; set
CONTEXTTRACE_CHROMIUM to use another). Locally the tests skip without it; in CI (CI set) they fail.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from contexttrace.run.runner import analyze

from ..conftest import ROOT, SAMPLES

IN_CI = bool(os.environ.get("CI"))
CHROMIUM = os.environ.get("CONTEXTTRACE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / "tests" / "artifacts"
MOMENT = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
SAMPLE_NAMES = sorted(p.name for p in SAMPLES.iterdir() if p.suffix != ".md")


#: Run before the page's own scripts: record each Content-Security-Policy violation (a blocked `eval` or
#: `Function`, script, style or load) as "<directive> <blocked URI or 'eval'> <sample>".
RECORD_CSP_VIOLATIONS = """document.addEventListener("securitypolicyviolation", (e) => {
  (window.__cspViolations = window.__cspViolations || []).push(
    `${e.effectiveDirective} ${e.blockedURI} ${e.sample}`);
});"""


def _require(condition: bool, why: str) -> None:
    if not condition:
        if IN_CI:
            pytest.fail(f"{why} (CI must run the browser tests: see .ci/run)")
        pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require(False, "playwright is not installed (pip install -e '.[dev]')")
    _require(Path(CHROMIUM).exists(), f"no chromium at {CHROMIUM} (apt-get install chromium)")
    for module in ("jinja2", "altair", "vl_convert"):
        _require(__import__("importlib").util.find_spec(module) is not None, f"{module} missing: the html extra")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def render(paths: list[str], name: str) -> Path:
    """Write the report page of `paths` to tests/artifacts/<name>.html and return its path."""
    from contexttrace.render.html.data import build_page
    from contexttrace.render.html.page import render_page
    from contexttrace.render.html.section import build_section

    run = analyze(paths, build=build_section, workers=1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / f"{name}.html"
    out.write_text(render_page(build_page(run, paths=paths, generated_at=MOMENT)), encoding="utf-8")
    return out


class Page:
    """A page open in the browser, with every console message, page error, request and dialog recorded."""

    def __init__(self, browser: Any, path: Path, width: int = 1200, height: int = 900) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.url = path.resolve().as_uri()
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.add_init_script(RECORD_CSP_VIOLATIONS)
        self.page.goto(self.url)
        self.page.wait_for_load_state("load")

    def draw_all(self) -> None:
        self.page.evaluate("window.contexttrace.drawAll()")
        states = self.page.eval_on_selector_all("[data-chart]", "els => els.map(e => e.dataset.state)")
        assert all(s == "drawn" for s in states), states

    def errors(self) -> list[str]:
        """Console errors and page errors, and every Content-Security-Policy violation the page reported."""
        violations = self.page.evaluate("window.__cspViolations || []")
        return [m for m in self.console if m.startswith(("error", "pageerror"))] + [f"csp: {v}" for v in violations]

    def outside_requests(self) -> list[str]:
        return [u for u in self.requests if u != self.url]

    def close(self) -> None:
        self.page.close()


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_browser_sample_page(browser, sample):
    """A sample's page: no console error, no request, every section and chart, one point per call and one
    line per compaction, a point's tooltip on hover; a screenshot of its first trace."""
    path = render([str(SAMPLES / sample)], f"sample-{Path(sample).stem}")
    view = Page(browser, path)
    try:
        view.draw_all()
        page = view.page
        sections = page.query_selector_all("section[data-section=trace]")
        assert sections
        for section in sections:
            assert section.query_selector("dl.meta") and section.query_selector("[data-panel=gauges] svg")
            assert section.query_selector("[data-panel=weather]") and section.query_selector("[data-panel=largest]")
            chart = section.query_selector("[data-chart=growth]")
            if chart is None:  # no main-thread call: said in words instead
                assert "No main-thread model call" in section.inner_text()
                continue
            assert section.query_selector("[data-panel=breakdown]")
            calls, compactions = int(chart.get_attribute("data-calls")), int(chart.get_attribute("data-compactions"))
            points = chart.query_selector_all("g[class*='ct_calls'] > path")
            assert len(points) == calls
            lines = chart.query_selector_all("g[class*='ct_compactions'] > line")
            assert len(lines) == compactions
            assert len(chart.query_selector_all("g[class*='ct_health'][class*='mark-rect'] > path")) == 80
        # hover the middle point of the first growth chart: its tooltip names the call and its tokens
        chart = page.query_selector("[data-chart=growth]")
        if chart is not None:
            chart.scroll_into_view_if_needed()
            points = chart.query_selector_all("g[class*='ct_calls'] > path")
            middle = points[len(points) // 2]
            middle.hover(force=True)
            tip = page.wait_for_selector("#vg-tooltip-element.visible", timeout=5000)
            text = tip.inner_text()
            assert "call" in text and "prompt tokens" in text
            assert f"{len(points) // 2 + 1}" in text.split("prompt tokens")[0]
        first = sections[0]
        first.scroll_into_view_if_needed()
        first.screenshot(path=str(ARTIFACTS / f"sample-{Path(sample).stem}.png"))
        assert view.errors() == []
        assert view.outside_requests() == []
    finally:
        view.close()


@pytest.fixture(scope="module")
def samples_page() -> Path:
    return render([str(SAMPLES)], "samples")


#: True once every chart on screen is drawn (the page draws the others as they scroll into view).
ON_SCREEN_DRAWN = """() => Array.from(document.querySelectorAll('[data-chart]')).filter(e => {
    const r = e.getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0;
  }).every(e => e.dataset.state === 'drawn')"""


def test_browser_samples_folder_page(browser, samples_page):
    """The whole samples folder's page: the charts on screen get drawn; the index sorts. (How fast is a
    timing: benchmarks/test_bench_report_page.py measures it against its 2 s target.)"""
    view = Page(browser, samples_page)
    try:
        view.page.wait_for_function(ON_SCREEN_DRAWN)
        page = view.page
        # the index: a row per trace; sorting by peak orders the rows, a group's runs among themselves and
        # the groups by their first run
        rows = page.query_selector_all("#index-table tbody tr[data-row]")
        assert len(rows) == len(page.query_selector_all("section[data-section=trace]"))
        page.click("#index-table th[data-key=peak] button")

        def blocks() -> list[list[int]]:
            cells = page.eval_on_selector_all(
                "#index-table tbody tr[data-row]",
                "els => els.map(e => [e.dataset.group || e.dataset.row, e.querySelector('td.peak').textContent])",
            )
            out: dict[str, list[int]] = {}
            for key, text in cells:
                out.setdefault(key, []).append(int(text.replace(",", "")))
            return list(out.values())

        assert all(b == sorted(b) for b in blocks()) and [b[0] for b in blocks()] == sorted(b[0] for b in blocks())
        page.click("#index-table th[data-key=peak] button")
        assert all(b == sorted(b, reverse=True) for b in blocks())
        assert [b[0] for b in blocks()] == sorted((b[0] for b in blocks()), reverse=True)
        view.draw_all()
        index_bars = page.query_selector_all("[data-chart=index] g[class*='ct_index'] > path")
        assert len(index_bars) == 2 * len(rows)
        page.query_selector("#index").screenshot(path=str(ARTIFACTS / "samples-index.png"))
        assert view.errors() == [] and view.outside_requests() == []
    finally:
        view.close()


def test_browser_badge_toggles_breakdown_and_axis_switch(browser):
    """Spec 000: the grade badge toggles the breakdown panel, Escape closes it; 'by time' redraws the chart."""
    path = render([str(SAMPLES / "b-spotter-compaction")], "compaction-interactions")
    view = Page(browser, path)
    try:
        page = view.page
        badge, panel = page.query_selector("button.badge"), page.query_selector("[data-panel=breakdown]")
        assert badge.get_attribute("title") == "Context Health: C (score: 63/100)"
        assert panel.is_visible()
        badge.click()
        assert not panel.is_visible() and badge.get_attribute("aria-expanded") == "false"
        badge.click()
        assert panel.is_visible()
        page.keyboard.press("Escape")
        assert not panel.is_visible()
        view.draw_all()
        chart = page.query_selector("[data-chart=growth]")
        assert chart.get_attribute("data-axis") == "calls"  # idle 4 h of 5: drawn by call first
        page.click(".axis-switch button[data-axis=time]")
        page.wait_for_function("() => document.querySelector('[data-chart=growth]').dataset.state === 'drawn'")
        assert chart.get_attribute("data-axis") == "time"
        assert len(chart.query_selector_all("g[class*='ct_calls'] > path")) == 139
        assert len(chart.query_selector_all("g[class*='ct_compactions'] > line")) == 1
        page.query_selector("section[data-section=trace]").screenshot(path=str(ARTIFACTS / "compaction-by-time.png"))
        assert view.errors() == [] and view.outside_requests() == []
    finally:
        view.close()


def test_browser_hostile_trace_runs_nothing(browser, tmp_path):
    """Markup and script in paths, tool names, the model and tool output: nothing runs, no element appears."""
    from .test_html_report import hostile_trace

    trace = hostile_trace(tmp_path)
    path = render([str(trace), str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")], "hostile")
    view = Page(browser, path)
    try:
        view.draw_all()
        page = view.page
        # hover every point, re-read marker and compaction line, and the weather, so every tooltip renders
        shown = []
        selectors = (
            "g[class*='ct_calls'] > path",
            "g[class*='ct_rereads'] > text",
            "g[class*='ct_compactions'] > line",
        )
        for selector in selectors:
            for el in page.query_selector_all(selector):
                el.scroll_into_view_if_needed()
                el.hover(force=True)
                shown.append(page.inner_text("#vg-tooltip-element"))
        assert any("<script>window.__pwned=1</script>" in t for t in shown)  # tools: shown as text
        assert any("File re-read: <script>" in t for t in shown)  # a re-read of the hostile path
        page.hover(".weather")
        assert page.evaluate("window.__pwned") is None
        assert view.dialogs == []
        assert page.evaluate("document.querySelectorAll('img, iframe, object, embed').length") == 0
        assert (
            page.evaluate("Array.from(document.querySelectorAll('svg')).filter(s => s.getAttribute('onload')).length")
            == 0
        )
        assert "window.__pwned=1" in page.inner_text("section[data-section=trace] h2")  # the name, as text
        page.query_selector("section[data-section=trace]").screenshot(path=str(ARTIFACTS / "hostile.png"))
        assert view.errors() == [] and view.outside_requests() == []
    finally:
        view.close()


def test_browser_comparison(browser):
    """A comparison page: every run a point in each metric's row, a median tick per condition and metric."""
    from contexttrace.render.html.compare_view import compare_view
    from contexttrace.render.html.data import build_page
    from contexttrace.render.html.page import render_page
    from contexttrace.render.html.section import build_section
    from contexttrace.reports.compare import Condition
    from contexttrace.reports.results import RunResult

    conditions = [
        Condition("free", (str(SAMPLES / "a-ralph-27runs-with-separators.jsonl"),)),
        Condition(
            "loaded", tuple(str(SAMPLES / n) for n in ("b-ccl-thinking-sonnet45.jsonl", "b-ccl-image-and-errors.jsonl"))
        ),
    ]
    results = [analyze(list(c.paths), build=build_section, workers=1) for c in conditions]
    view = compare_view(conditions, results)
    run = RunResult(reports=[s for r in results for s in r.reports])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / "compare.html"
    path.write_text(render_page(build_page(run, generated_at=MOMENT, compare=view)), encoding="utf-8")
    page_view = Page(browser, path)
    try:
        page_view.draw_all()
        page = page_view.page
        kinds = view["datasets"]["runs"]["kind"]
        assert len(page.query_selector_all("#compare g[class*='ct_compare_runs'] > path")) == kinds.count("run")
        assert len(page.query_selector_all("#compare g[class*='ct_compare_medians'] > path")) == kinds.count("median")
        page.query_selector("#compare").screenshot(path=str(ARTIFACTS / "compare.png"))
        assert page_view.errors() == [] and page_view.outside_requests() == []
    finally:
        page_view.close()


def test_browser_index_fits_its_card_and_groups_the_runs_of_one_file(browser, samples_page):
    """The index over the samples: the chart inside its card (no bar past its edge), trace names and titles
    on one line, the 27 runs of the loop under one row that opens and closes them; a screenshot."""
    view = Page(browser, samples_page)
    try:
        page = view.page
        view.draw_all()
        card = page.eval_on_selector("#index", "e => e.getBoundingClientRect().right")
        chart = page.eval_on_selector(
            "[data-chart=index]",
            "e => [e.getBoundingClientRect().right, e.scrollWidth, e.clientWidth,"
            " e.querySelectorAll(\"g[class*='ct_index'] > path\").length]",
        )
        assert chart[0] <= card and chart[1] <= chart[2] + 1  # fits: 43 traces need no scrolling at 1200 px
        assert chart[3] == 2 * 43
        loop = page.query_selector("#index-table tr.group[data-group=g1]")
        assert "a-ralph-27runs-with-separators" in loop.inner_text() and "27 runs" in loop.inner_text()
        runs = "#index-table tr.run[data-group=g1]"
        assert len(page.query_selector_all(runs)) == 27
        assert not any(r.is_visible() for r in page.query_selector_all(runs))
        loop.query_selector("summary").click()
        assert all(r.is_visible() for r in page.query_selector_all(runs))
        assert page.query_selector(runs + " td.trace").inner_text() == "#1"
        heights = page.eval_on_selector_all(
            "#index-table tr[data-row]:not([hidden]) td.trace, #index-table tr[data-row]:not([hidden]) td.title",
            "els => els.map(e => e.getBoundingClientRect().height)",
        )
        assert heights and max(heights) < 34  # one line each (a row holds a 24 px sparkline)
        titles = page.eval_on_selector_all("#index-table td.title", "els => els.map(e => e.textContent)")
        assert "/init" in titles and "find logread.tar" in titles
        loop.query_selector("summary").click()
        assert not any(r.is_visible() for r in page.query_selector_all(runs))
        page.query_selector("#index").screenshot(path=str(ARTIFACTS / "samples-index-grouped.png"))
        assert view.errors() == [] and view.outside_requests() == []
    finally:
        view.close()


def test_browser_subagent_calls_stand_out(browser):
    """The subagent calls of the growth chart are opaque diamonds, one per subagent call, with a legend."""
    path = render([str(SAMPLES / "a-ralph-subagent-opus45-haiku45.jsonl")], "subagent-diamonds")
    view = Page(browser, path)
    try:
        view.draw_all()
        page = view.page
        marks = page.query_selector_all("[data-chart=growth] g[class*='ct_subagents'] > path")
        assert marks
        opacity = page.eval_on_selector(
            "[data-chart=growth] g[class*='ct_subagents'] > path", "e => Number(e.getAttribute('opacity') || 1)"
        )
        assert opacity >= 0.9
        assert page.query_selector(".legend i.diamond") is not None
        page.query_selector("[data-chart=growth]").screenshot(path=str(ARTIFACTS / "subagent-diamonds.png"))
        assert view.errors() == []
    finally:
        view.close()
