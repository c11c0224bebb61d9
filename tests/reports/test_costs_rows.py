"""`costs.totals_of_rows` against the plain per-row rules it stands for, on random priced rows."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from contexttrace.analysis import metrics
from contexttrace.reports.costs import COST_FROM_MESSAGES, cache_hit_ratio, totals_of_rows

_TOKENS = ("input_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
           "cache_read_tokens", "output_tokens", "cache_write_assumed_5m_tokens", "web_search_requests")  # fmt: skip
_COUNT = st.one_of(st.none(), st.integers(0, 3), st.integers(0, 10**7))
_ROW = st.fixed_dictionaries(
    {
        **{c: _COUNT for c in _TOKENS},
        "cost_usd": st.one_of(st.none(), st.just(0.0), st.floats(0, 50, allow_nan=False)),
        "model": st.sampled_from([None, "claude-opus-4-5", "claude-haiku-4-5", "mystery"]),
        "price_model": st.sampled_from([None, "claude-opus-4-5", "claude-haiku-4-5"]),
        "stop_reason": st.sampled_from([None, "tool_use", "end_turn"]),
        "prompt_tokens": st.one_of(st.none(), st.integers(0, 2), st.integers(0, 10**6)),
        "long_context": st.one_of(st.none(), st.booleans()),
        "fast": st.one_of(st.none(), st.booleans()),
    }
)


def plain_totals(rows: list[dict[str, Any]], covered: frozenset[str]) -> dict[str, Any]:
    """The totals as the per-row rules state them, one row at a time."""
    sums = {c: sum(r[c] for r in rows if r[c] is not None) for c in _TOKENS}
    sums["cache_write_5m_tokens"] += sums["cache_write_assumed_5m_tokens"]
    unpriced = [r["model"] for r in rows if r["cost_usd"] is None]
    placeholders = [r for r in rows if metrics.output_is_lower_bound(r["stop_reason"])]
    output_lower = any(r["price_model"] not in covered for r in placeholders)
    unreadable = any(not metrics.measured(r["prompt_tokens"]) and r["price_model"] not in covered for r in rows)
    reasons = (["unpriced_model"] if unpriced else []) + (["output_placeholder"] if output_lower else [])
    reasons += ["unreadable_usage"] if unreadable else []
    return {
        "calls": len(rows),
        **sums,
        "cache_hit_ratio": cache_hit_ratio(sums["cache_read_tokens"], sums["cache_write_tokens"], sums["input_tokens"]),
        "cost_usd": math.fsum(r["cost_usd"] for r in rows if r["cost_usd"] is not None),
        "cost_source": COST_FROM_MESSAGES,
        "cost_is_lower_bound": bool(reasons),
        "lower_bound_reasons": reasons,
        "unpriced_calls": len(unpriced),
        "unpriced_models": sorted({m if m is not None else "?" for m in unpriced}),
        "long_context_calls": sum(r["long_context"] is True for r in rows),
        "fast_calls": sum(r["fast"] is True for r in rows),
        "output_lower_bound_calls": len(placeholders),
        "output_is_lower_bound": output_lower,
    }


@given(st.lists(_ROW, max_size=12), st.sets(st.sampled_from(["claude-opus-4-5", "claude-haiku-4-5"])))
def test_totals_of_rows_are_the_per_row_rules(rows: list[dict[str, Any]], covered: set[str]) -> None:
    """Nulls, zeros, unpriced and placeholder calls, unmeasured prompts, covered models, no row at all: the
    same totals (key order included) as the rules applied row by row; a fresh dict and fresh lists each call."""
    got = totals_of_rows(rows, frozenset(covered))
    want = plain_totals(rows, frozenset(covered))
    assert got == want
    assert list(got) == list(want)
    again = totals_of_rows(rows, frozenset(covered))
    assert again["lower_bound_reasons"] is not got["lower_bound_reasons"]
    assert again["unpriced_models"] is not got["unpriced_models"]
