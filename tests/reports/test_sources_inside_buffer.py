"""`context sources --view claude` when the context is already inside the autocompact buffer (the
compaction subagent of b-spotter-compaction: 173,514 of 200,000, past the 167,000 where Claude Code
compacts), and `other`'s parts in the HTML report's sources panel (issue 27)."""

from __future__ import annotations

import re
from html import unescape

import orjson
from typer.testing import CliRunner

from contexttrace.cli.app import app

from ..conftest import SAMPLES

COMPACTION = str(SAMPLES / "b-spotter-compaction")
ENV = {"COLUMNS": "200"}


def _sources(*args: str):
    out = CliRunner().invoke(app, ["context", "sources", COMPACTION, "--thread", "acompact-e1f845", "--no-cache",
                                   *args], env=ENV, catch_exceptions=False)  # fmt: skip
    assert out.exit_code == 0, out.output
    return out.stdout


def test_the_buffer_shows_what_is_left_of_it_and_says_so():
    lines = _sources("--view", "claude").splitlines()
    assert "claude-opus-4-6 · 173,514/200,000 tokens (87%) · window: default" in lines
    assert "| Free space                   |        0 |      0% |" in lines
    assert "| Autocompact buffer           |  ≈26,486 |     13% |" in lines
    assert lines[14].startswith("autocompact buffer ≈33,000: the constant /context shows for CLI 2.1.39")
    assert lines[15] == (
        "context already inside the autocompact buffer: ≈6,514 tokens over the point where Claude Code "
        "compacts (≈167,000 = window − buffer); the buffer row shows what is left of it, ≈26,486"
    )
    shares = [int(m) for m in re.findall(r"\|\s+(\d+)% \|", "\n".join(lines[5:14]))]
    assert shares == [85, 0, 0, 0, 0, 0, 2, 0, 13]


def test_the_json_agrees_with_the_table():
    (report,) = orjson.loads(_sources("--json"))
    c = report["claude_context"]
    assert (c["context_tokens"], c["window_tokens"]) == (173_514, 200_000)
    assert (c["autocompact_buffer_tokens"], c["autocompact_buffer_constant_tokens"], c["free_tokens"]) == (
        26_486, 33_000, 0)  # fmt: skip
    cats = {x["category"]: x for x in c["categories"]}
    assert cats["Autocompact buffer"]["tokens"] == 26_486
    assert sum(x["tokens"] for x in c["categories"]) == 200_000
    assert abs(sum(x["share"] for x in c["categories"]) - 1.0) < 1e-9


def test_a_context_below_the_compaction_point_keeps_the_constant():
    out = CliRunner().invoke(app, ["context", "sources", COMPACTION, "--view", "claude", "--no-cache"], env=ENV,
                             catch_exceptions=False)  # fmt: skip
    assert "| Autocompact buffer           |  ≈33,000 |     17% |" in out.stdout.splitlines()
    assert "inside the autocompact buffer" not in out.stdout


def test_the_html_panel_names_the_parts_of_other(tmp_path):
    page = tmp_path / "r.html"
    out = CliRunner().invoke(app, ["context", "report", COMPACTION, "-o", str(page), "--no-cache"], env=ENV,
                             catch_exceptions=False)  # fmt: skip
    assert out.exit_code == 0, out.output
    text = unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))))
    assert "other ≈14,488 14% " in text
    assert "other: output of calls written while streaming (their counts lower bounds) ≈11,788 11% " in text
    assert ("other: what the harness adds and the trace does not write (system reminders, message framing) "
            "≈2,700 3% ") in text  # fmt: skip
    assert "other: hidden thinking" not in text  # zero in this trace: not shown
