"""Rendering: the JSON and the table of a run over the directory corpus."""

from __future__ import annotations

import orjson
import pytest
from conftest import check_reports

from contexttrace.render.trace import render_json, render_table
from contexttrace.run.runner import analyze


@pytest.fixture(scope="module")
def run(corpora):
    return analyze(corpora["directory"].paths)


def test_render_json(timed, corpora, run):
    text = timed("render-json", render_json, run)
    check_reports(orjson.loads(text), corpora["directory"].expected)


def test_render_table(timed, corpora, run):
    text = timed("render-table", render_table, run, False)
    assert text.count("\n") >= len(corpora["directory"].expected)
