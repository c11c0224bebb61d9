"""The report page of the samples folder in a real browser: from opening it to every chart on screen drawn.

Issue 16 asks for the page to open with its visible charts drawn in under 2 s. That is a timing, so it is
measured here (pytest-benchmark) and asserted only with `--bench-enforce`, not in the unit tests
(tests/render/test_html_browser.py checks what the page shows, whatever the time). Needs Playwright and Debian's
chromium, as those tests do; skipped without them.
"""

from __future__ import annotations

import pytest
from conftest import MEDIANS

from tests.render.test_html_browser import ON_SCREEN_DRAWN, SAMPLES, Page, browser, render  # noqa: F401 (a fixture)

#: Issue 16: the samples folder's page with its on-screen charts drawn, seconds.
PAGE_TARGET_S = 2.0


@pytest.fixture(scope="module")
def samples_page():
    return render([str(SAMPLES)], "samples-bench")


def _open_and_draw(opened, path) -> int:
    view = Page(opened, path)
    try:
        view.page.wait_for_function(ON_SCREEN_DRAWN)
        return len(view.page.query_selector_all("[data-chart]"))
    finally:
        view.close()


def test_report_page_draws(benchmark, rounds, pytestconfig, browser, samples_page):  # noqa: F811
    charts = benchmark.pedantic(_open_and_draw, args=(browser, samples_page), rounds=rounds, iterations=1)
    assert charts > 0
    stats = getattr(getattr(benchmark, "stats", None), "stats", None)
    if stats is not None:
        MEDIANS["report-page"] = stats.median
    if pytestconfig.getoption("--bench-enforce") and stats is not None:
        assert stats.median < PAGE_TARGET_S, f"{stats.median:.2f} s"
