"""The report page's index as a person reads it: short labels, a title per session, the runs of one file
grouped, the conditions in the header and a condition column, and the weather's word beside its emoji
(where no colour-emoji font is installed the emoji is an empty box: the word must carry the meaning)."""

from __future__ import annotations

import re

import pytest

from contexttrace.reading.titles import session_title, shorten
from contexttrace.render.html.compare_view import compare_view
from contexttrace.render.html.data import build_page
from contexttrace.render.html.page import render_page
from contexttrace.render.html.section import build_section
from contexttrace.reports.compare import Condition
from contexttrace.reports.results import RunResult
from contexttrace.run.runner import analyze

from ..conftest import SAMPLES

WEATHER_EMOJI = "☀️|☀|🌤️|🌤|⛅|🌦️|🌦|🌧️|🌧|⛈️|⛈|🌩️|🌩|🌫️|🌫|🌪️|🌪"
LEVELS = ("sunny", "fair", "cloudy", "rainy", "stormy", "foggy", "overcast")


@pytest.fixture(scope="module")
def samples_page():
    run = analyze([str(SAMPLES)], build=build_section, workers=1)
    page = build_page(run, paths=[str(SAMPLES)])
    return page, render_page(page)


def test_index_labels_titles_and_groups_over_the_samples(samples_page):
    page, _ = samples_page
    rows = page["index"]["rows"]
    by_trace = {r["trace"].rsplit("/", 1)[-1]: r for r in rows}
    assert by_trace["b-ccl-thinking-sonnet45.jsonl"]["short"] == "b-ccl-thinking-sonnet45"
    assert by_trace["b-ccl-thinking-sonnet45.jsonl"]["title"] == "/init"
    assert by_trace["4d5611e5-241a-462a-8d15-5122611a9569.jsonl"]["short"] == "4d5611e5"
    assert by_trace["session-2025-12-12T21-46-7c761c30.json"]["title"] == "find logread.tar"
    assert by_trace["c-codex-0.41-small.jsonl"]["title"] == "/clarify"
    assert max(len(r["short"]) for r in rows) <= 40
    groups = list(page["index"]["groups"].values())
    assert [(g["label"], len(g["rows"])) for g in groups] == [
        ("a-ralph-27runs-with-separators", 27),
        ("a-ralph-subagent-opus45-haiku45", 2),
    ]
    assert groups[0]["summary"] == "27 runs · calls 3–44 · peak 32,546–80,284"
    assert [rows[i]["short"] for i in groups[0]["rows"][:3]] == ["#1", "#2", "#3"]


def test_weather_word_always_beside_its_emoji(samples_page):
    """Every weather emoji on the page (index, header, card, tooltip) is followed by its level's word."""
    _, html = samples_page
    markup = re.sub(r"(?s)<script.*?</script>", "", html)
    found = re.findall(rf"({WEATHER_EMOJI})((?:</span>|<strong>|\s)*)([a-z]+)", markup)
    assert len(found) > 43
    assert {word for _, _, word in found} <= set(LEVELS)
    bare = [m.start() for m in re.finditer(WEATHER_EMOJI, markup)]
    assert len(bare) == len(found)


def test_title_prefers_custom_then_ai_title_then_first_prompt(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [
        '{"type":"user","message":{"role":"user","content":"<command-name>/review</command-name>"}}',
        '{"type":"ai-title","aiTitle":"AI title"}',
        '{"type":"custom-title","customTitle":"old name"}',
        '{"type":"custom-title","customTitle":"Renamed session"}',
        '{"type":"ai-title","aiTitle":"later AI title"}',
    ]
    path.write_text("\n".join(lines) + "\n")
    assert session_title(str(path)) == "Renamed session"
    path.write_text("\n".join(lines[:2] + lines[4:]) + "\n")
    assert session_title(str(path)) == "later AI title"
    path.write_text(lines[0] + "\n")
    assert session_title(str(path)) == "/review"
    assert shorten("x" * 100).endswith("…") and len(shorten("x" * 100)) == 60


def test_page_header_and_index_name_the_conditions():
    conditions = [
        Condition("free", (str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl"),)),
        Condition("loaded", (str(SAMPLES / "b-ccl-image-and-errors.jsonl"), str(SAMPLES / "c-codex-0.41-small.jsonl"))),
    ]
    results = [analyze(list(c.paths), build=build_section, workers=1) for c in conditions]
    names = [c.name for c, r in zip(conditions, results, strict=True) for _ in r.reports]
    run = RunResult(reports=[s for r in results for s in r.reports])
    page = build_page(run, compare=compare_view(conditions, results), conditions=names)
    html = render_page(page)
    head = html[html.index('<header class="page"') : html.index("</header>")]
    assert "conditions (-c): <strong>free</strong> (baseline) = " in head and "<strong>loaded</strong> = " in head
    assert [c["key"] for c in page["index"]["columns"]][:3] == ["trace", "title", "condition"]
    assert [r["condition"] for r in page["index"]["rows"]] == ["free", "loaded", "loaded"]
    assert "<td>loaded</td>" in html
