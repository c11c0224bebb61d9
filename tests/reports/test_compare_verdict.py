"""What a person reads in `context compare`: one verdict per row that the figures beside it support, p in
words, whole tokens, each metric's sentence in plain grammar, and one note when the conditions mix agents.

The rows reproduce the contradictions a new user reported (issue 26, item 3): "15.5 more calls (within the
noise, p = 0.03)", Δ 0 beside p 0.006, "p = <0.001", "cost 17,653 more tokens at the peak", intervals of
fractional tokens.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from contexttrace.cli.app import app
from contexttrace.render.compare import ci_cell, run_phrase, table_row, verdict_cell
from contexttrace.reports.stats import verdict

from ..conftest import SAMPLES


def _row(metric: str, unit: str, delta: float, noise: float | None, p: float | None, **kw: object) -> dict:
    row = {"metric": metric, "unit": unit, "condition": "loaded", "runs": 20, "median": 100 + delta, "min": 1,
           "max": 999, "delta": delta, "delta_pct": None, "noise": noise, "p_value": p, "ci_low": None,
           "ci_high": None, "lower_bound_runs": 0}  # fmt: skip
    row["within_noise"] = None if noise is None else abs(delta) <= noise
    row.update(kw)
    row["verdict"] = verdict(delta, noise, p)
    return row


def test_a_small_p_is_beyond_the_noise_whatever_the_spread():
    """15.5 more calls inside a spread of 20 but p = 0.03: the test decides, and the sentence says so."""
    row = _row("calls", "calls", 15.5, 20, 0.03)
    assert run_phrase([row]) == "15.5 more calls (beyond the noise, p = 0.03)"
    assert verdict_cell(row) == "beyond noise"  # the band is not printed beside a test's verdict


def test_delta_zero_with_a_small_p_is_the_same_median_said_so():
    """Δ 0 with p 0.006: the medians tie and the runs are shifted; never "within the noise" beside p 0.006."""
    row = _row("calls", "calls", 0, 0, 0.006)
    assert row["verdict"] == "same_median" and verdict_cell(row) == "same median"
    said = "the same number of calls (as a median; the rank test finds the runs shifted, p = 0.006)"
    assert run_phrase([row]) == said


def test_p_below_a_thousandth_reads_as_words_and_peak_reads_as_a_peak():
    """ "p = <0.001" is "p < 0.001"; the peak is "a peak N tokens higher", not "cost N more tokens"."""
    rows = [_row("peak", "tokens", 17653, 900, 0.0004), _row("calls", "calls", -2, 1, None),
            _row("cost_usd", "usd", 0.05, 0.2, None)]  # fmt: skip
    assert run_phrase(rows) == (
        "a peak 17,653 tokens higher (beyond the noise, p < 0.001); 2 fewer calls (beyond the noise); "
        "cost ≈$0.0500 higher (within the noise)"
    )


def test_token_intervals_and_medians_are_whole_tokens():
    """A bootstrap bound of -1,248.9 tokens prints as -1,249; the median of an even count of runs too."""
    row = _row("peak", "tokens", 3000.5, 10, 0.2, ci_low=-1248.9, ci_high=62422.4, median=34786.5)
    assert ci_cell(row) == "[-1,249, +62,422]"
    cells = table_row(row, "free")
    assert cells[3] == "34,787" and cells[5] == "+3,001" and cells[7] == "within noise" and cells[8] == "0.20"


@pytest.mark.parametrize(
    ("delta", "noise", "p", "expected"),
    [
        (2, 4, None, "within ±4"),
        (6, 4, None, "beyond ±4"),
        (3, None, None, "–"),  # one run a side: nothing to judge by
        (0, None, None, "same"),
        (40, 4, 0.2, "within noise"),  # with a test, p decides even when Δ is past the band
    ],
)
def test_verdict_cell_follows_one_rule(delta, noise, p, expected):
    assert verdict_cell(_row("tools", "count", delta, noise, p)) == expected


def test_cli_compare_says_in_one_line_that_the_agents_differ():
    """A Codex CLI run beside a Claude Code run: compared, with one note naming the agents and windows."""
    args = ["context", "compare", "--no-cache", "-c", f"claude={SAMPLES / 'b-ccl-thinking-sonnet45.jsonl'}",
            "-c", f"codex={SAMPLES / 'c-codex-0.41-small.jsonl'}",
            "-c", f"gemini={SAMPLES / 'd-gemini-sessions'}"]  # fmt: skip
    out = CliRunner().invoke(app, args, env={"COLUMNS": "120", "NO_COLOR": "1"}, catch_exceptions=False)
    assert out.exit_code == 0
    notes = [line for line in out.stderr.splitlines() if "mix agents" in line]
    assert notes == [
        "note: the conditions mix agents (claude: Claude Code; codex: Codex CLI; gemini: Gemini CLI): first, peak "
        "and growth are counted by each agent's own tokenizer and held against windows of 200,000, 272,000 and "
        "1,048,576 tokens, so their differences compare the agents as much as the conditions"
    ]
    assert "| verdict " in out.stdout and "p = <" not in out.stdout


def test_cli_compare_of_one_agent_has_no_agents_note():
    args = ["context", "compare", "--no-cache", "-c", f"a={SAMPLES / 'b-ccl-thinking-sonnet45.jsonl'}",
            "-c", f"b={SAMPLES / 'b-ccl-image-and-errors.jsonl'}"]  # fmt: skip
    out = CliRunner().invoke(app, args, env={"COLUMNS": "120"}, catch_exceptions=False)
    assert "mix agents" not in out.stderr
