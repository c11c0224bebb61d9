"""Tests of the price table and per-call pricing (CASES B13 long context, B14 unknown models, B15 fast mode).

Every expected value is worked out by hand in the test from list prices in USD per million tokens
(MTok); the table itself is checked against the pricing page's figures it cites.
"""

from __future__ import annotations

import pytest

from contexttrace.analysis.pricing import (
    ModelPrice,
    call_cost_usd,
    load_prices,
    normalize_model,
    parse_prices,
    price_of,
)
from contexttrace.reports.costs import priced_calls, token_totals
from contexttrace.reports.usage import build_usage

from ..conftest import (
    final_call,
    memory_trace,
)

OPUS_46 = ModelPrice("claude-opus-4-6", 5, 25, 6.25, 10, 0.5, fast_multiplier=6)
SONNET_45 = ModelPrice(
    "claude-sonnet-4-5", 3, 15, 3.75, 6, 0.3, long_context_input_multiplier=2, long_context_output_multiplier=1.5
)


@pytest.mark.parametrize(
    ("written", "key"),
    [
        pytest.param("claude-haiku-4-5-20251001", "claude-haiku-4-5", id="date"),
        pytest.param("claude-opus-4-6[1m]", "claude-opus-4-6", id="1m-suffix"),
        pytest.param("anthropic/claude-opus-4-7", "claude-opus-4-7", id="anthropic-prefix"),
        pytest.param("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", id="bedrock"),
        pytest.param("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5", id="bedrock-global"),
        pytest.param("claude-sonnet-4-5@20250929", "claude-sonnet-4-5", id="vertex"),
        pytest.param("claude-opus-4.8", "claude-opus-4-8", id="dotted-version"),
        pytest.param("claude-opus-4-20250514", "claude-opus-4", id="opus-4-not-4-2"),
        pytest.param("deepseek-v4-flash", "deepseek-v4-flash", id="foreign-untouched"),
    ],
)
def test_normalize_model_strips_what_does_not_change_the_price(written: str, key: str) -> None:
    """Dates, `[1m]`, provider prefixes, Bedrock versions and dotted versions are removed before lookup."""
    assert normalize_model(written) == key


def test_price_table_states_date_and_sources() -> None:
    """The packaged table carries an ISO date and at least one source URL."""
    table = load_prices()
    assert len(table.date) == 10 and table.date[4] == "-"
    assert any(s.startswith("https://platform.claude.com/") for s in table.sources)


@pytest.mark.parametrize(
    ("model", "row"),
    [
        # (input, 5m write, 1h write, cache read, output) USD/MTok, the pricing page's "Model pricing" table
        ("claude-opus-4-6", (5, 6.25, 10, 0.5, 25)),
        ("claude-opus-4-5-20251101", (5, 6.25, 10, 0.5, 25)),
        ("claude-opus-4-1-20250805", (15, 18.75, 30, 1.5, 75)),
        ("claude-sonnet-4-5-20250929", (3, 3.75, 6, 0.3, 15)),
        ("claude-sonnet-4-20250514", (3, 3.75, 6, 0.3, 15)),
        ("claude-haiku-4-5-20251001", (1, 1.25, 2, 0.1, 5)),
        ("claude-3-5-haiku-20241022", (0.8, 1, 1.6, 0.08, 4)),
        ("claude-3-haiku-20240307", (0.25, 0.30, 0.50, 0.03, 1.25)),
    ],
)
def test_price_table_matches_the_pricing_page(model: str, row: tuple[float, ...]) -> None:
    """Each model's five prices equal the pricing page's row (cache prices derived or explicit)."""
    p = price_of(model, load_prices())
    assert p is not None
    assert (p.input, p.cache_write_5m, p.cache_write_1h, p.cache_read, p.output) == pytest.approx(row)


def test_cost_cache_write_5m_vs_1h() -> None:
    """1,000,000 tokens written for 5 minutes cost 1.25 × input; for 1 hour 2 × input (Opus 4.6: $6.25 / $10)."""
    assert call_cost_usd(OPUS_46, 0, 1_000_000, 0, 0, 0) == pytest.approx(6.25)
    assert call_cost_usd(OPUS_46, 0, 0, 1_000_000, 0, 0) == pytest.approx(10.0)
    # a mixed call: 3 input ($0.000015) + 1,000 5m ($0.00625) + 2,000 1h ($0.02) + 10,000 read ($0.005) + 100 out
    # ($0.0025) = $0.033765
    assert call_cost_usd(OPUS_46, 3, 1_000, 2_000, 10_000, 100) == pytest.approx(0.033765)


def test_cost_long_context_applies_to_the_whole_request() -> None:
    """B13: a 250,005-token prompt on Sonnet 4.5 pays 2× on every input kind and 1.5× on output; 150,000 does not.

    Long: 5 × $6 + 250,000 × $0.60 (read at 0.1 × $6) + 1,000 × $22.50, per MTok = $0.00003 + $0.15 + $0.0225
    = $0.17253. Short: 5 × $3 + 150,000 × $0.30 + 1,000 × $15 = $0.000015 + $0.045 + $0.015 = $0.060015.
    """
    assert call_cost_usd(SONNET_45, 5, 0, 0, 250_000, 1_000, long_context=True) == pytest.approx(0.17253)
    assert call_cost_usd(SONNET_45, 5, 0, 0, 150_000, 1_000) == pytest.approx(0.060015)
    # A model with no tier keeps its base rates however long the prompt is.
    assert call_cost_usd(OPUS_46, 5, 0, 0, 250_000, 1_000, long_context=True) == pytest.approx(0.150025)


def test_priced_calls_decides_long_context_on_the_whole_prompt() -> None:
    """B13: the tier is chosen on input + cache write + cache read, not on `input_tokens` (5 here)."""
    import polars as pl

    calls = _calls(
        [
            ("claude-sonnet-4-5-20250929", 5, 0, 250_000, 1_000, None),
            ("claude-sonnet-4-5-20250929", 5, 0, 150_000, 1_000, None),
        ]
    )
    out = priced_calls(calls, load_prices())
    assert out["long_context"].to_list() == [True, False]
    assert out["cost_usd"].to_list() == pytest.approx([0.17253, 0.060015])
    assert isinstance(out, pl.DataFrame)


def test_cost_fast_mode_uses_the_models_multiplier() -> None:
    """B15: Opus 4.6 fast = 6 × standard. 10 input + 40,000 read + 500 output: standard $0.03255, fast $0.1953."""
    standard = 10 * 5 / 1e6 + 40_000 * 0.5 / 1e6 + 500 * 25 / 1e6
    assert standard == pytest.approx(0.03255)
    assert call_cost_usd(OPUS_46, 10, 0, 0, 40_000, 500) == pytest.approx(standard)
    assert call_cost_usd(OPUS_46, 10, 0, 0, 40_000, 500, fast=True) == pytest.approx(6 * standard)


def test_fast_call_on_a_model_without_fast_price_is_unpriced() -> None:
    """B15: a fast call on a model whose fast price the table lacks is unpriced, never priced as standard."""
    assert call_cost_usd(SONNET_45, 10, 0, 0, 40_000, 500, fast=True) is None


def test_unknown_model_is_unpriced_and_the_total_a_lower_bound() -> None:
    """B14: opus-4-7 and dated haiku are priced; deepseek-v4-flash is listed as unpriced, never $0.

    Opus 4.7: 1,000 input × $5 + 100 output × $25 = $0.0075; Haiku 4.5: 1,000 × $1 + 100 × $5 = $0.0015.
    """
    calls = _calls(
        [
            ("claude-opus-4-7", 1_000, 0, 0, 100, None),
            ("claude-haiku-4-5-20251001", 1_000, 0, 0, 100, None),
            ("deepseek-v4-flash", 1_000, 0, 0, 100, None),
        ]
    )
    out = priced_calls(calls, load_prices())
    assert out["cost_usd"].to_list()[:2] == pytest.approx([0.0075, 0.0015])
    assert out["cost_usd"][2] is None
    totals = token_totals(out)
    assert totals["cost_usd"] == pytest.approx(0.009)
    assert totals["cost_is_lower_bound"] is True
    assert totals["unpriced_models"] == ["deepseek-v4-flash"]
    assert totals["input_tokens"] == 3_000  # tokens of the unpriced model still count


def test_fast_calls_are_reported_apart() -> None:
    """B15: fast calls carry their own label, "claude-opus-4-6 (fast)"."""
    calls = _calls([("claude-opus-4-6", 10, 0, 40_000, 500, "fast"), ("claude-opus-4-6", 10, 0, 40_000, 500, None)])
    out = priced_calls(calls, load_prices())
    assert out["priced_as"].to_list() == ["claude-opus-4-6 (fast)", "claude-opus-4-6"]
    assert out["cost_usd"].to_list() == pytest.approx([0.1953, 0.03255])


def test_absent_cache_split_counts_as_5m_and_is_marked_assumed() -> None:
    """A cache write with no `cache_creation` split is priced as 5-minute and reported as assumed."""
    import polars as pl

    calls = _calls([("claude-opus-4-6", 0, 1_000_000, 0, 0, None)]).with_columns(
        cache_split_known=pl.lit(False), cache_write_5m_tokens=pl.lit(1_000_000, pl.Int64)
    )
    out = priced_calls(calls, load_prices())
    assert out["cost_usd"].to_list() == pytest.approx([6.25])
    totals = token_totals(out)
    assert totals["cache_write_assumed_5m_tokens"] == 1_000_000


@pytest.mark.parametrize(
    ("split_5m", "split_1h", "cost", "assumed"),
    [
        pytest.param(0, 0, 6.25, 1_000_000, id="zero-zero"),  # written 0/0: all of it 5m, assumed
        pytest.param(400_000, 0, 6.25, 600_000, id="short-split"),  # the 600,000 the split leaves out: 5m
        pytest.param(0, 1_000_000, 10.0, 0, id="all-1h"),  # a full split is taken as written: $10 at 2 × $5
        pytest.param(250_000, 750_000, 0.25 * 6.25 + 0.75 * 10, 0, id="mixed"),
    ],
)
def test_cache_split_that_does_not_cover_the_write_is_assumed_5m(
    split_5m: int, split_1h: int, cost: float, assumed: int
) -> None:
    """1,000,000 cache-write tokens on Opus 4.6 ($6.25 5m, $10 1h per MTok): what the 5m/1h split does not
    account for (all of it when written as 0/0) is priced as 5-minute and counted as assumed, never $0."""
    import polars as pl

    calls = _calls([("claude-opus-4-6", 0, 1_000_000, 0, 0, None)]).with_columns(
        cache_write_5m_tokens=pl.lit(split_5m, pl.Int64), cache_write_1h_tokens=pl.lit(split_1h, pl.Int64)
    )
    out = priced_calls(calls, load_prices())
    assert out["cost_usd"].to_list() == pytest.approx([cost])
    totals = token_totals(out)
    assert totals["cache_write_assumed_5m_tokens"] == assumed
    assert totals["cache_write_5m_tokens"] + totals["cache_write_1h_tokens"] == 1_000_000


def test_result_only_rows_price_what_model_usage_counts_beyond_the_calls() -> None:
    """B16: Opus 4.5 calls show 8 output (placeholders), cache write 2,500; modelUsage says 420 output and
    cache write 0 (written as 0, claude-agent-sdk-typescript#80). The extra 412 output is priced at $25/MTok;
    the cache write stays the calls' (never subtracted); a model only modelUsage names is priced whole."""
    import polars as pl

    from contexttrace.reports.costs import priced_rows
    from contexttrace.reports.result_line import model_usage_rows, result_only_rows

    calls = _calls([("claude-opus-4-5-20251101", 5, 2_500, 10_000, 8, None)]).with_columns(
        stop_reason=pl.lit(None, pl.String), thread=pl.lit("main"), thread_kind=pl.lit("main"),
        ts_ms=pl.lit(None, pl.Int64), end_ts_ms=pl.lit(None, pl.Int64),
    )  # fmt: skip
    result = {"modelUsage": {
        "claude-opus-4-5-20251101": {"inputTokens": 5, "outputTokens": 420, "cacheReadInputTokens": 10_000,
                                     "cacheCreationInputTokens": 0},
        "claude-haiku-4-5-20251001": {"inputTokens": 1_000, "outputTokens": 100, "cacheReadInputTokens": 0,
                                      "cacheCreationInputTokens": 0, "webSearchRequests": 2},
    }}  # fmt: skip
    rows, warnings = model_usage_rows(result)
    assert warnings == [] and [r["complete"] for r in rows] == [True, True]
    opus, haiku = result_only_rows(priced_rows(calls, load_prices()), rows, load_prices())
    assert (opus["model"], opus["output_tokens"], opus["cache_write_tokens"], opus["input_tokens"]) == (
        "claude-opus-4-5", 412, 0, 0
    )  # fmt: skip
    assert opus["cost_usd"] == pytest.approx(412 * 25 / 1e6)
    assert haiku["cost_usd"] == pytest.approx((1_000 * 1 + 100 * 5) / 1e6 + 2 * 0.01)
    assert haiku["cost_source"] == opus["cost_source"] == "result.modelUsage"


def test_parse_prices_rejects_a_broken_table() -> None:
    """A table without `models` is a bug in package data and raises KeyError."""
    with pytest.raises(KeyError):
        parse_prices({"date": "x", "sources": [], "cache_multipliers": {"write_5m": 1, "write_1h": 2, "read": 0.1}})


def _calls(rows: list[tuple[str, int, int, int, int, str | None]]):
    """A call frame with the columns `priced_calls` reads: (model, input, 5m write, read, output, speed)."""
    import polars as pl

    return pl.DataFrame(
        {
            "seq": list(range(len(rows))),
            "model": [r[0] for r in rows],
            "input_tokens": [r[1] for r in rows],
            "cache_write_tokens": [r[2] for r in rows],
            "cache_write_5m_tokens": [r[2] for r in rows],
            "cache_write_1h_tokens": [0 for _ in rows],
            "cache_split_known": [True for _ in rows],
            "cache_read_tokens": [r[3] for r in rows],
            "output_tokens": [r[4] for r in rows],
            "prompt_tokens": [r[1] + r[2] + r[3] for r in rows],
            "speed": pl.Series([r[5] for r in rows], dtype=pl.String),
            "web_search_requests": [0 for _ in rows],
            "stop_reason": ["end_turn" for _ in rows],
        }
    )


def test_cache_split_larger_than_its_total_is_priced_within_it():
    """A readable split that exceeds its total (100 written, 80 + 50 split) is priced as 80 five-minute and
    20 one-hour writes, the cheaper first, and the columns say so."""
    line = final_call("m1", 1, cw=100, out=0, model="claude-sonnet-4-5")
    line["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 80, "ephemeral_1h_input_tokens": 50}
    total = build_usage(memory_trace(line)).total
    assert (total["cache_write_tokens"], total["cache_write_5m_tokens"], total["cache_write_1h_tokens"]) == (
        100,
        80,
        20,
    )
    assert total["cost_usd"] == pytest.approx((1 * 3 + 80 * 3.75 + 20 * 6) / 1e6)
    assert total["lower_bound_reasons"] == []
