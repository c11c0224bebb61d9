"""The stream-json `result` line beside a trace's own figures: read, bounded, reconciled, never double-counted.

A stream-json run ends with a `result` line holding Claude Code's own totals: `total_cost_usd`, `usage`,
`duration_ms`, `num_turns` and, per model, `modelUsage`. `context usage` reports them beside its own figures
(`reported_totals`), warns about the numbers it cannot use (`result_warnings`, `model_usage_rows`), and adds
to its totals only the tokens `modelUsage` counts beyond the calls written (`result_only_rows`): the final
output counts the stream leaves as placeholders (FORMATS G2) and the helper calls it writes no line for
(FORMATS G9). Every number read from the line is bounded like a usage count (`metrics.count_of`), a cost
as a number from 0; one that is not is unknown (None) and warned once. Nothing here prints.
"""

from __future__ import annotations

from typing import Any

from contexttrace.analysis.counts import MAX_COUNT, count_of, result_count, shown_value
from contexttrace.analysis.pricing import PriceTable, call_cost_usd, normalize_model, price_of
from contexttrace.analysis.window import context_windows
from contexttrace.reports.costs import COST_FROM_RESULT, add_totals, cache_hit_ratio

#: `modelUsage` count fields as Claude Code writes them (camelCase) → our keys.
_MODEL_USAGE_COUNTS = (
    ("inputTokens", "input_tokens"),
    ("cacheCreationInputTokens", "cache_write_tokens"),
    ("cacheReadInputTokens", "cache_read_tokens"),
    ("outputTokens", "output_tokens"),
    ("webSearchRequests", "web_search_requests"),
)
#: A `modelUsage` count read like a usage count (`counts.count_of`: 0 <= n < 2**53, else unknown).
_count = count_of


def _usd(value: Any) -> float | None:
    """A USD figure as written: a number from 0 (an int below 2**53, a float not NaN, ∞ nor 2**53 or
    more), else None. A cost is never negative; a 400-digit integer read by the lenient JSON fallback is
    no cost."""
    if type(value) is int and 0 <= value < MAX_COUNT:
        return float(value)
    return value if type(value) is float and 0 <= value < MAX_COUNT else None


def _usd_warning(source: dict[str, Any], key: str, where: str = "") -> str | None:
    """A warning when `source[key]` is written but not a USD figure (`_usd`), else None."""
    value = source.get(key)
    if value is None or _usd(value) is not None:
        return None
    return f"result line: {where}{key} is not a cost in USD ({shown_value(value)}); not used"


#: `result.usage` counts as written, in the order `reported_usage` lists them.
_RESULT_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")


def result_warnings(result: dict[str, Any] | None) -> list[str]:
    """Warnings about the numbers of a stream-json `result` line that `context usage` reads but cannot use.

    Every number taken from the line is bounded like a usage count (`metrics.count_of`; a cost must be a
    number from 0): `total_cost_usd`, `duration_ms`, `num_turns` and the `usage` counts here; the
    `modelUsage` counts and `costUSD` in `model_usage_rows`; each `contextWindow` in
    `metrics.context_windows`. A value that is not is unknown (null), never a figure, and warned once.

    Examples
    --------
    >>> result_warnings({"duration_ms": -5, "num_turns": 3})
    ['result line: duration_ms is not a count (-5); not used']
    """
    if not result:
        return []
    notes = [_usd_warning(result, "total_cost_usd")]
    notes += [result_count(result, key)[1] for key in ("duration_ms", "num_turns")]
    usage = result.get("usage")
    if isinstance(usage, dict):
        notes += [result_count(usage, key, "usage.")[1] for key in _RESULT_USAGE_KEYS]
    return [n for n in notes if n is not None]


def model_usage_rows(result: dict[str, Any] | None) -> tuple[list[dict[str, Any]], list[str]]:
    """Read a stream-json `result` line's `modelUsage`: one row per model, and warnings.

    Parameters
    ----------
    result
        `Trace.result` (the run's last `result` line) or None.

    Returns
    -------
    (list of dict, list of str)
        Rows in the order written: `model` (the key as written), `input_tokens`, `cache_write_tokens`,
        `cache_read_tokens`, `output_tokens`, `web_search_requests` (int; None when absent or implausible),
        `cost_usd` (`costUSD`, Claude Code's estimate; None unless a number from 0, `_usd`),
        `context_window_tokens` (`contextWindow`: None unless a window of 1 to `metrics.MAX_WINDOW_TOKENS`
        tokens, `metrics.context_windows`), `implausible_fields` (the fields as written whose value is
        not a count, a cost or a window) and `complete` (the four token counts are all counts: only such a
        row is used to price tokens the calls do not show). A warning per row with implausible counts, and
        one for an implausible cost (a `contextWindow`'s is `metrics.context_windows`'). Never raises.

    Examples
    --------
    >>> rows, warnings = model_usage_rows({"modelUsage": {"m": {"inputTokens": "abc", "outputTokens": 5}}})
    >>> rows[0]["input_tokens"], rows[0]["output_tokens"], rows[0]["complete"], warnings
    (None, 5, False, ["result line: modelUsage['m'] inputTokens is not a token count ('abc'); not used"])
    """
    usage = (result or {}).get("modelUsage")
    if usage is None:
        return [], []
    if not isinstance(usage, dict):
        return [], [f"result line: modelUsage is not an object ({type(usage).__name__}); not used"]
    rows, warnings = [], []
    windows, _ = context_windows(result)  # its warnings are the reports' own (`build_usage`)
    for model, entry in usage.items():
        fields = entry if isinstance(entry, dict) else {}
        row: dict[str, Any] = {"model": model}
        bad = [] if isinstance(entry, dict) else ["*"]
        for written, key in _MODEL_USAGE_COUNTS:
            row[key], ok = _count(fields.get(written))
            if not ok:
                bad.append(written)
        row["cost_usd"] = _usd(fields.get("costUSD"))
        cost_warning = _usd_warning(fields, "costUSD", f"modelUsage[{model!r}] ")
        row["context_window_tokens"] = windows.get(model)
        window_bad = fields.get("contextWindow") is not None and row["context_window_tokens"] is None
        row["implausible_fields"] = bad + ["costUSD"] * (cost_warning is not None) + ["contextWindow"] * window_bad
        row["complete"] = not bad and all(row[k] is not None for _, k in _MODEL_USAGE_COUNTS[:4])
        rows.append(row)
        if bad:
            what = (
                f"{', '.join(bad)} {'is' if len(bad) == 1 else 'are'} not a token count "
                f"({', '.join(shown_value(fields.get(b)) for b in bad)})"
                if isinstance(entry, dict)
                else f"is not an object ({type(entry).__name__})"
            )
            warnings.append(f"result line: modelUsage[{model!r}] {what}; not used")
        if cost_warning is not None:
            warnings.append(cost_warning)
    return rows, warnings


def result_only_rows(
    priced: list[dict[str, Any]], usage_rows: list[dict[str, Any]], table: PriceTable
) -> list[dict[str, Any]]:
    """Per model, the tokens a `result` line's `modelUsage` counts beyond the calls written, priced.

    stream-json writes most calls' `output_tokens` as a streaming placeholder and never the final count
    (FORMATS G2), and its helper calls (e.g. Haiku) write no line at all (G9); `modelUsage` holds
    each model's final totals over the run. For each model (normalised; ids that normalise alike added up)
    with a `complete` row, each count beyond the calls' sum (`max(0, modelUsage − calls)`) is priced at the
    model's base rates, cache writes as 5-minute (`modelUsage` gives no split; Claude Code prices them so).
    Never added a second time: where the calls show more than `modelUsage` (its cache fields written as 0,
    anthropics/claude-agent-sdk-typescript#80), the calls stand.

    Parameters
    ----------
    priced
        Priced call rows (`costs.priced_rows`) of the run, all threads.
    usage_rows
        `model_usage_rows(trace.result)[0]`.
    table
        The price table.

    Returns
    -------
    list of dict
        One per model with a `complete` row, in `modelUsage` order, with the keys of `costs.token_totals` (`calls`
        0; `cache_write_assumed_5m_tokens` = the extra cache write; `cost_usd` None when the table lacks
        the model) plus `model` (normalised) and `models_written` (the keys as written). Models whose
        counts add nothing are kept (tokens 0): their calls' output is then known to be final.
    """
    out = []
    for key, mu in _merged_model_usage(usage_rows).items():
        mine = [r for r in priced if r["price_model"] == key]
        extra = {k: max(0, mu[k] - sum(r[k] or 0 for r in mine)) for _, k in _MODEL_USAGE_COUNTS}
        out.append(_result_only_row(key, mu["models_written"], extra, table))
    return out


def _merged_model_usage(usage_rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The `complete` `modelUsage` rows per normalised model id, counts added, in order of first mention:
    `models_written` (the keys as written) and each count of `_MODEL_USAGE_COUNTS`."""
    merged: dict[str, dict[str, Any]] = {}
    for row in usage_rows:
        if not row["complete"] or not isinstance(row["model"], str):
            continue
        key = normalize_model(row["model"])
        m = merged.setdefault(key, {"models_written": [], **{k: 0 for _, k in _MODEL_USAGE_COUNTS}})
        m["models_written"].append(row["model"])
        for _, k in _MODEL_USAGE_COUNTS:
            m[k] += row[k] or 0
    return merged


def _result_only_row(key: str, written: list[str], extra: dict[str, int], table: PriceTable) -> dict[str, Any]:
    """The `result_only_rows` row of one model: its `extra` counts priced at base rates, cache writes 5-minute."""
    price = table.models.get(key)
    cost = (
        call_cost_usd(
            price,
            extra["input_tokens"],
            extra["cache_write_tokens"],
            0,
            extra["cache_read_tokens"],
            extra["output_tokens"],
            web_search_requests=extra["web_search_requests"],
            web_search_usd=table.web_search_usd_per_request,
        )
        if price is not None
        else None
    )
    has_tokens = any(extra.values())
    unpriced = cost is None and has_tokens
    return {
        "model": key,
        "models_written": written,
        "calls": 0,
        "input_tokens": extra["input_tokens"],
        "cache_write_tokens": extra["cache_write_tokens"],
        "cache_write_5m_tokens": extra["cache_write_tokens"],  # as in `totals_of_rows`: the assumed part included
        "cache_write_1h_tokens": 0,
        "cache_write_assumed_5m_tokens": extra["cache_write_tokens"],
        "cache_read_tokens": extra["cache_read_tokens"],
        "output_tokens": extra["output_tokens"],
        "web_search_requests": extra["web_search_requests"],
        "cache_hit_ratio": cache_hit_ratio(
            extra["cache_read_tokens"], extra["cache_write_tokens"], extra["input_tokens"]
        ),
        "cost_usd": cost if cost is not None else (None if has_tokens else 0.0),
        "cost_source": COST_FROM_RESULT,
        "cost_is_lower_bound": unpriced,
        "lower_bound_reasons": ["unpriced_model"] if unpriced else [],
        "unpriced_calls": 0,
        "unpriced_models": sorted(written) if unpriced else [],
        "long_context_calls": 0,
        "fast_calls": 0,
        "output_lower_bound_calls": 0,
        "output_is_lower_bound": False,
    }


def result_only_totals(extras: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Add a run's `result_only_rows` into one totals dict (`costs.token_totals` shape, `cost_source`
    `COST_FROM_RESULT`); None when the run has none."""
    if not extras:
        return None
    keys = [k for k in extras[0] if k not in ("model", "models_written")]
    total: dict[str, Any] = {k: extras[0][k] for k in keys}
    for row in extras[1:]:
        total = add_totals(total, {k: row[k] for k in keys})
    total["cost_source"] = COST_FROM_RESULT
    return total


def reported_totals(result: dict[str, Any] | None, ours_usd: float, table: PriceTable) -> dict[str, Any] | None:
    """Claude Code's own totals from a stream-json `result` line, reported beside ours, never added to them.

    Parameters
    ----------
    result
        `Trace.result` (the run's last `result` line) or None.
    ours_usd
        Our cost of the run, USD (`total.cost_usd`).
    table
        The price table, to price the result's own `modelUsage` tokens.

    Returns
    -------
    dict or None
        None without a result line. Else `reported_cost_usd` (`total_cost_usd`, Claude Code's estimate;
        None unless a finite number), `cost_difference_usd` (ours − reported), `reported_usage` (`usage`:
        input, cache write, cache read, output; main model only in 2.0.x, FORMATS G9), `reported_model_usage`
        (`model_usage_rows`: `modelUsage` read with our key names, implausible counts None) and
        `reported_tokens_priced_usd` (the `modelUsage` tokens priced with our table, cache writes as
        5-minute: checks the table against Claude Code's; None if a model is unpriced or a count is not a
        count), `reported_duration_ms`, `reported_num_turns`. Every number bounded as a count (or a cost
        from 0); one that is not is None (`result_warnings` warns). Never added to our totals.
    """
    if not result:
        return None
    reported = _usd(result.get("total_cost_usd"))
    written = result.get("usage")
    usage: dict[str, Any] = written if isinstance(written, dict) else {}
    rows, _ = model_usage_rows(result)
    priced: float | None = None
    if rows:
        priced = 0.0
        for row in rows:
            price = price_of(row["model"], table) if isinstance(row["model"], str) else None
            counts_bad = any(f not in ("costUSD", "contextWindow") for f in row["implausible_fields"])
            if price is None or counts_bad:
                priced = None
                break
            cost = call_cost_usd(
                price,
                row["input_tokens"] or 0,
                row["cache_write_tokens"] or 0,
                0,
                row["cache_read_tokens"] or 0,
                row["output_tokens"] or 0,
                web_search_requests=row["web_search_requests"] or 0,
                web_search_usd=table.web_search_usd_per_request,
            )
            priced += cost or 0.0

    def _tok(source: dict[str, Any], key: str) -> int | None:
        return result_count(source, key)[0]  # bounded; `result_warnings` says which were not

    return {
        "reported_cost_usd": reported,
        "cost_difference_usd": ours_usd - reported if reported is not None else None,
        "reported_usage": {
            "input_tokens": _tok(usage, "input_tokens"),
            "cache_write_tokens": _tok(usage, "cache_creation_input_tokens"),
            "cache_read_tokens": _tok(usage, "cache_read_input_tokens"),
            "output_tokens": _tok(usage, "output_tokens"),
        },
        "reported_model_usage": [{k: v for k, v in row.items() if k != "complete"} for row in rows],
        "reported_tokens_priced_usd": priced,
        "reported_duration_ms": _tok(result, "duration_ms"),
        "reported_num_turns": _tok(result, "num_turns"),
    }
