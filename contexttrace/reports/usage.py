"""Usage, cost, turns and agents of one trace: the accounting readings of spec 001 (issue 4).

Pure functions over the frames of a `reader.Trace` (`calls`, `tool_uses`, `tool_results`, `events`) and
the price table of `pricing.py`; `build_usage` gathers them into a `UsageReport`. Nothing here reads
files (but the packaged price table), prints or formats numbers.

Rules this module owns (docs/usage.md states each with its source and exact/≈):

* Every API response counts once: the call rows of `reader` are already deduplicated (CASES B01).
* Tokens are summed per thread kind, thread and model; the part of a cache write that its 5m/1h split does
  not account for (the split absent, or written as 0/0) is priced as 5-minute and reported as assumed
  (`cache_write_assumed_5m_tokens`); a split is never priced beyond the cache-write total it splits.
* A call whose prompt reads 0 had usage the reader could not read (`metrics.measured`): its tokens are
  unknown, so every total it is in is a lower bound (`unreadable_usage`).
* Cost is priced per call (`pricing.call_cost_usd`); a call on a model the table lacks is unpriced, its
  model listed in `unpriced_models`, and every total it belongs to is a lower bound.
* The stream-json `result` line is reported beside our figures (`reported_*`), never added (B16).
* A turn is a prompt the person wrote (`events.kind == "prompt"` on the main thread); a stream-json run
  with no such line is one turn (the `-p` prompt is not written to the stream).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from contexttrace.analysis import metrics
from contexttrace.analysis.counts import MAX_COUNT, count_of, result_count, shown_value
from contexttrace.analysis.frame_rows import EVENT_ROW, main_rows
from contexttrace.analysis.pricing import PriceTable, call_cost_usd, load_prices, normalize_model, price_of
from contexttrace.analysis.window import context_windows, window_choice
from contexttrace.reading.contract import THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT
from contexttrace.reports.schemas import SCHEMA_VERSIONS
from contexttrace.select.filters import trace_facts

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import LineNote, Table, Trace

#: Claude Code keeps this many tokens of the window free for the model's output (spec 001).
OUTPUT_RESERVE_TOKENS = 20_000
#: Autocompact fires this many tokens below the effective window (spec 001).
AUTOCOMPACT_BUFFER_TOKENS = 13_000
#: Width of the "warn" band below the autocompact threshold (spec 001: Claude Code's "Context low").
WARN_BAND_TOKENS = 20_000
#: The window less this many tokens is "blocked" (spec 001).
BLOCKING_BUFFER_TOKENS = 3_000
#: Weight of the newest sample in the context-velocity moving average (spec 001: α = 1/5).
VELOCITY_ALPHA = 0.2
#: Characters per token for the ≈ size of text that came back into the session (spec 001: chars / 4).
CHARS_PER_TOKEN = 4
#: Tool names that start a subagent (renamed Task → Agent in 2.1.x, FORMATS G14).
AGENT_TOOLS = frozenset({"Task", "Agent"})

_TOKEN_COLS = ("input_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
               "cache_read_tokens", "output_tokens")  # fmt: skip


def priced_calls(calls: pl.DataFrame, table: PriceTable) -> pl.DataFrame:
    """Price every call.

    Parameters
    ----------
    calls
        Call frame (`schema.CALL_SCHEMA`), deduplicated by `reader`.
    table
        The price table (`pricing.load_prices()`).

    Returns
    -------
    polars.DataFrame
        The same rows and columns, in the same order, plus `price_model` (str: the normalised model id),
        `fast` (bool: `usage.speed == "fast"`), `long_context` (bool: prompt > the table's threshold and
        the model has a long-context tier), `cache_write_assumed_5m_tokens` (i64: the part of the cache
        write that no 5m/1h split accounts for — all of it when `cache_split_known` is false or the split is
        written as 0/0 — priced as 5-minute writes), `priced_as` (str: normalised model, with " (fast)" for
        fast calls) and `cost_usd` (f64, USD, ≈ list price; null when the model, or its fast price, is not
        in the table). `cache_write_5m_tokens` and `cache_write_1h_tokens` are replaced by the split as
        priced: 0 when unknown, and never more than `cache_write_tokens` (5-minute first, the cheaper: a
        split whose total could not be read, or that exceeds it, is cut to it, so a lower bound stays one).

    Examples
    --------
    >>> import polars as pl
    >>> from contexttrace.analysis.pricing import load_prices
    >>> calls = pl.DataFrame({"model": ["claude-haiku-4-5-20251001", "mystery-1"], "input_tokens": [1_000_000, 5],
    ...     "cache_write_tokens": [0, 0], "cache_write_5m_tokens": [0, 0], "cache_write_1h_tokens": [0, 0],
    ...     "cache_split_known": [True, True], "cache_read_tokens": [0, 0], "output_tokens": [0, 0],
    ...     "prompt_tokens": [1_000_000, 5], "speed": [None, None], "web_search_requests": [0, 0]})
    >>> priced_calls(calls, load_prices())["cost_usd"].to_list()
    [1.0, None]
    """
    extra = _price_columns(calls.select(_PRICE_INPUT).rows(), table)
    import polars as pl  # the frame API imports Polars; `build_usage` (plain rows) never does

    return calls.with_columns(
        price_model=pl.Series(extra["price_model"], dtype=pl.String),
        fast=pl.Series(extra["fast"], dtype=pl.Boolean),
        long_context=pl.Series(extra["long_context"], dtype=pl.Boolean),
        cache_write_assumed_5m_tokens=pl.Series(extra["cache_write_assumed_5m_tokens"], dtype=pl.Int64),
        cache_write_5m_tokens=pl.Series(extra["cache_write_5m_tokens"], dtype=pl.Int64),
        cache_write_1h_tokens=pl.Series(extra["cache_write_1h_tokens"], dtype=pl.Int64),
        priced_as=pl.Series(extra["priced_as"], dtype=pl.String),
        cost_usd=pl.Series(extra["cost_usd"], dtype=pl.Float64),
    )


_PRICE_INPUT = ("model", "input_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
                "cache_split_known", "cache_read_tokens", "output_tokens", "prompt_tokens", "speed",
                "web_search_requests")  # fmt: skip


def _price_columns(rows: list[tuple[Any, ...]], table: PriceTable) -> dict[str, list[Any]]:
    """The columns `priced_calls` adds, from call rows in `_PRICE_INPUT` order."""
    price_model: list[str | None] = []
    fast_col: list[bool] = []
    long_col: list[bool] = []
    assumed: list[int] = []
    split_5m: list[int] = []
    split_1h: list[int] = []
    label: list[str | None] = []
    cost: list[float | None] = []
    for model, inp, cw, c5, c1, known, cr, out, prompt, speed, web in rows:
        key = normalize_model(model) if model is not None else None
        price = price_of(model, table)
        fast = speed == "fast"
        long = (
            prompt > table.long_context_threshold_tokens
            and price is not None
            and price.long_context_input_multiplier is not None
        )
        c5, c1 = (c5 or 0, c1 or 0) if known else (0, 0)
        # A split never prices more than the total it splits: with the total unreadable (read as 0) and
        # the split readable, pricing the split would cost writes no column counts. Cut to the total, the
        # cheaper 5-minute part first.
        cw = cw or 0
        c5 = min(c5, cw)
        c1 = min(c1, cw - c5)
        # The part of the write no split accounts for (the split absent, written as 0/0, or short) is priced
        # as 5-minute, as ccusage does, and reported as assumed (CASES: issue 10).
        extra = cw - c5 - c1
        price_model.append(key)
        fast_col.append(fast)
        long_col.append(long)
        assumed.append(extra)
        split_5m.append(c5)
        split_1h.append(c1)
        label.append(None if key is None else key + (" (fast)" if fast else ""))
        cost.append(
            None
            if price is None
            else call_cost_usd(
                price, inp, c5 + extra, c1, cr, out, fast, long, web or 0, table.web_search_usd_per_request
            )
        )
    return {
        "price_model": price_model,
        "fast": fast_col,
        "long_context": long_col,
        "cache_write_assumed_5m_tokens": assumed,
        "cache_write_5m_tokens": split_5m,
        "cache_write_1h_tokens": split_1h,
        "priced_as": label,
        "cost_usd": cost,
    }


#: Call columns `build_usage` reads into its priced rows (dicts), besides those `_price_columns` adds.
_ROW_COLS = ("seq", "thread", "thread_kind", "model", *_TOKEN_COLS, "web_search_requests", "stop_reason",
             "prompt_tokens", "ts_ms", "end_ts_ms")  # fmt: skip


def _priced_rows(calls: Table, table: PriceTable) -> list[dict[str, Any]]:
    """The calls priced as `priced_calls` does, as one dict per call (frame order), for plain-Python sums."""
    names = list(dict.fromkeys((*_ROW_COLS, *_PRICE_INPUT)))
    cols = {c: calls.get_column(c).to_list() for c in names}
    extra = _price_columns(list(zip(*(cols[c] for c in _PRICE_INPUT), strict=True)), table)
    cols.update(extra)
    keys = list(cols)
    return [dict(zip(keys, values, strict=True)) for values in zip(*cols.values(), strict=True)]


def _by_seq(row: dict[str, Any]) -> int:
    return row["seq"]  # type: ignore[no-any-return]


def cache_hit_ratio(cache_read: int, cache_write: int, fresh_input: int) -> float | None:
    """Return cache read / (cache read + cache write + fresh input), a fraction 0–1; None when all are 0.

    Examples
    --------
    >>> cache_hit_ratio(90, 5, 5)
    0.9
    """
    total = cache_read + cache_write + fresh_input
    return cache_read / total if total else None


def token_totals(priced: pl.DataFrame) -> dict[str, Any]:
    """Sum the usage and cost of some priced calls (`priced_calls`, any subset).

    Returns
    -------
    dict
        `calls` (count), `input_tokens` (fresh input), `cache_write_tokens`, `cache_write_5m_tokens`,
        `cache_write_1h_tokens` (the split, 5m including the assumed part), `cache_write_assumed_5m_tokens`,
        `cache_read_tokens`, `output_tokens` (tokens, exact sums over distinct responses), `web_search_requests`,
        `cache_hit_ratio` (fraction or None), `cost_usd` (USD ≈, the priced calls only), `cost_source`
        (``"messages"``: priced from the calls written), `unpriced_calls`, `unpriced_models` (ids as written,
        sorted), `long_context_calls`, `fast_calls`, `output_lower_bound_calls` (calls written with no
        `stop_reason`: their output_tokens may be a streaming placeholder, FORMATS G2),
        `output_is_lower_bound` (some such call and no `modelUsage` gives its model's final count),
        `lower_bound_reasons` (sorted, from `LOWER_BOUND_REASONS`; `unreadable_usage` when a call's usage
        could not be read: its prompt reads 0) and `cost_is_lower_bound` (any reason).
    """
    return _totals(priced.to_dicts())


#: Why a cost can be a lower bound (`lower_bound_reasons`): a call on a model the table cannot price; output
#: written as a streaming placeholder with no final count from a `result` line (FORMATS G2, CASES B16); a
#: stream-json run with no `result` line (it ended before Claude Code wrote its totals); subagents named by
#: Task/Agent results whose calls the trace lacks (their files not read); calls whose usage counts could not
#: be read (read as 0: a prompt of 0 tokens, `metrics.measured`) with no `modelUsage` giving their model's
#: totals.
LOWER_BOUND_REASONS = ("unpriced_model", "output_placeholder", "no_result_line", "missing_subagents",
                       "unreadable_usage")  # fmt: skip

#: `cost_source` values: priced from the calls written, from the `result` line's `modelUsage` only (a model
#: no call line shows), or both (the calls, plus the tokens `modelUsage` counts beyond them).
COST_FROM_MESSAGES = "messages"
COST_FROM_RESULT = "result.modelUsage"
COST_FROM_BOTH = "messages+result.modelUsage"


def _totals(rows: list[dict[str, Any]], covered: frozenset[str] = frozenset()) -> dict[str, Any]:
    """`token_totals` over priced rows (`_priced_rows`, any subset, in the frame's order); `covered` holds the
    models (normalised) whose final output a `result` line's `modelUsage` gives."""
    cols = (*_TOKEN_COLS, "cache_write_assumed_5m_tokens", "web_search_requests")
    # integer sums skip nulls, as Polars' (`filter(None, ...)` drops the nulls, and the zeros, which add nothing)
    sums = {c: sum(filter(None, map(itemgetter(c), rows))) for c in cols}
    sums["cache_write_5m_tokens"] += sums["cache_write_assumed_5m_tokens"]
    costs = [r["cost_usd"] for r in rows]
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
        # correctly rounded (`math.fsum`), whatever the order of the calls
        "cost_usd": math.fsum(c for c in costs if c is not None),
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


def _has_tokens(totals: dict[str, Any]) -> bool:
    """Some token or web-search count of a totals dict is above 0."""
    return any(totals[k] for k in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
                                   "web_search_requests"))  # fmt: skip


def _with_reasons(totals: dict[str, Any], *reasons: str) -> dict[str, Any]:
    """`totals` with more lower-bound reasons (kept sorted as `LOWER_BOUND_REASONS` orders them)."""
    have = set(totals["lower_bound_reasons"]).union(reasons)
    ordered = [r for r in LOWER_BOUND_REASONS if r in have]
    return {**totals, "lower_bound_reasons": ordered, "cost_is_lower_bound": bool(ordered)}


def _plus(a: dict[str, Any], b: dict[str, Any] | None) -> dict[str, Any]:
    """Two totals added (`_totals` shape): token sums and cost add, flags and lists join; `b` None is none."""
    if b is None:
        return a
    cols = (*_TOKEN_COLS, "cache_write_assumed_5m_tokens", "web_search_requests", "calls", "unpriced_calls",
            "long_context_calls", "fast_calls", "output_lower_bound_calls")  # fmt: skip
    sums = {c: a[c] + b[c] for c in cols}
    costs = [c for c in (a["cost_usd"], b["cost_usd"]) if c is not None]
    has_a, has_b = a["calls"] > 0 or _has_tokens(a), b["calls"] > 0 or _has_tokens(b)
    source = COST_FROM_BOTH if has_a and has_b else b["cost_source"] if has_b else a["cost_source"]
    out = {
        **a,
        **sums,
        "cache_hit_ratio": cache_hit_ratio(sums["cache_read_tokens"], sums["cache_write_tokens"], sums["input_tokens"]),
        "cost_usd": math.fsum(costs) if costs else None,
        "cost_source": source,
        "unpriced_models": sorted(set(a["unpriced_models"]) | set(b["unpriced_models"])),
        "output_is_lower_bound": a["output_is_lower_bound"] or b["output_is_lower_bound"],
    }
    return _with_reasons(out, *b["lower_bound_reasons"])


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

    Every number taken from the line is bounded like a usage count (`counts.count_of`; a cost must be a
    number from 0): `total_cost_usd`, `duration_ms`, `num_turns` and the `usage` counts here; the
    `modelUsage` counts and `costUSD` in `model_usage_rows`; each `contextWindow` in
    `window.context_windows`. A value that is not is unknown (null), never a figure, and warned once.

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
        `context_window_tokens` (`contextWindow`: None unless a window of 1 to `window.MAX_WINDOW_TOKENS`
        tokens, `window.context_windows`), `implausible_fields` (the fields as written whose value is
        not a count, a cost or a window) and `complete` (the four token counts are all counts: only such a
        row is used to price tokens the calls do not show). A warning per row with implausible counts, and
        one for an implausible cost (a `contextWindow`'s is `window.context_windows`'). Never raises.

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
    (FORMATS G2, CASES B16), and its helper calls (e.g. Haiku) write no line at all (G9); `modelUsage` holds
    each model's final totals over the run. For each model (normalised; ids that normalise alike added up)
    with a `complete` row, each count beyond the calls' sum (`max(0, modelUsage − calls)`) is priced at the
    model's base rates, cache writes as 5-minute (`modelUsage` gives no split; Claude Code prices them so).
    Never added a second time: where the calls show more than `modelUsage` (its cache fields written as 0,
    anthropics/claude-agent-sdk-typescript#80), the calls stand.

    Parameters
    ----------
    priced
        Priced call rows (`_priced_rows`) of the run, all threads.
    usage_rows
        `model_usage_rows(trace.result)[0]`.
    table
        The price table.

    Returns
    -------
    list of dict
        One per model with a `complete` row, in `modelUsage` order, with the keys of `token_totals` (`calls`
        0; `cache_write_assumed_5m_tokens` = the extra cache write; `cost_usd` None when the table lacks
        the model) plus `model` (normalised) and `models_written` (the keys as written). Models whose
        counts add nothing are kept (tokens 0): their calls' output is then known to be final.
    """
    merged: dict[str, dict[str, Any]] = {}
    for row in usage_rows:
        if not row["complete"] or not isinstance(row["model"], str):
            continue
        key = normalize_model(row["model"])
        m = merged.setdefault(key, {"models_written": [], **{k: 0 for _, k in _MODEL_USAGE_COUNTS}})
        m["models_written"].append(row["model"])
        for _, k in _MODEL_USAGE_COUNTS:
            m[k] += row[k] or 0
    out = []
    for key, mu in merged.items():
        mine = [r for r in priced if r["price_model"] == key]
        extra = {k: max(0, mu[k] - sum(r[k] or 0 for r in mine)) for _, k in _MODEL_USAGE_COUNTS}
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
        out.append(
            {
                "model": key,
                "models_written": mu["models_written"],
                "calls": 0,
                "input_tokens": extra["input_tokens"],
                "cache_write_tokens": extra["cache_write_tokens"],
                "cache_write_5m_tokens": extra["cache_write_tokens"],  # as in `_totals`: the assumed part included
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
                "unpriced_models": sorted(mu["models_written"]) if unpriced else [],
                "long_context_calls": 0,
                "fast_calls": 0,
                "output_lower_bound_calls": 0,
                "output_is_lower_bound": False,
            }
        )
    return out


def _result_only_totals(extras: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The `result_only_rows` of a run added into one totals dict (None when the run has none)."""
    if not extras:
        return None
    keys = [k for k in extras[0] if k not in ("model", "models_written")]
    total: dict[str, Any] = {k: extras[0][k] for k in keys}
    for row in extras[1:]:
        total = _plus(total, {k: row[k] for k in keys})
    total["cost_source"] = COST_FROM_RESULT
    return total


def _grouped(rows: list[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    """Rows grouped by `key(row)`, groups in order of first appearance, rows in order (Polars'
    `group_by(maintain_order=True)`)."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def _written(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["model"] for r in rows if r["model"] is not None))


def by_model(priced: pl.DataFrame) -> list[dict[str, Any]]:
    """Totals per priced model (normalised id, " (fast)" apart), in order of first use.

    Returns
    -------
    list of dict
        `model` (the label, e.g. ``"claude-opus-4-6 (fast)"``; the id as written when unnormalisable),
        `models_written` (ids as the trace wrote them) and the keys of `token_totals`; `cost_usd` is None
        for a model the table cannot price.
    """
    return _by_model(sorted(priced.to_dicts(), key=_by_seq))


def _by_model(
    ordered: list[dict[str, Any]], extras: list[dict[str, Any]] | None = None, covered: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """`by_model` over priced rows sorted by seq; each model's `result_only_rows` row (`extras`) is added to
    its first row (standard before fast when the standard comes first), a model no call shows gets its own."""

    def label_of(r: dict[str, Any]) -> str:  # coalesce(priced_as, model), null → "?"
        return r["priced_as"] if r["priced_as"] is not None else (r["model"] if r["model"] is not None else "?")

    pending = {e["model"]: e for e in extras or []}
    out = []
    for label, part in _grouped(ordered, label_of).items():
        totals = _totals(part, covered)
        extra = pending.pop(part[0]["price_model"], None)
        if extra is not None:
            totals = _plus(totals, {k: v for k, v in extra.items() if k not in ("model", "models_written")})
        if totals["unpriced_calls"] == totals["calls"] and totals["calls"]:
            totals["cost_usd"] = None  # unknown, never $0 (CASES B14)
        written = _written(part) + [m for m in (extra or {}).get("models_written", []) if m not in _written(part)]
        out.append({"model": label, "models_written": written, **totals})
    # models only the result line names (helper calls, FORMATS G9)
    out.extend(extra for extra in pending.values() if _has_tokens(extra))
    return out


def by_thread(priced: pl.DataFrame) -> list[dict[str, Any]]:
    """Totals per thread (main, each subagent, the compaction summariser), in order of first call.

    Returns
    -------
    list of dict
        `thread`, `thread_kind`, `models` (ids as written) and the keys of `token_totals`.
    """
    return _by_thread(sorted(priced.to_dicts(), key=_by_seq))


#: `threads[]` row of the tokens only a `result` line's `modelUsage` counts (no line says which thread).
RESULT_ONLY_THREAD = "result.modelUsage"
#: Its `thread_kind`.
THREAD_UNATTRIBUTED = "unattributed"


def _by_thread(ordered: list[dict[str, Any]], result_only: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """`by_thread` over priced rows sorted by seq; `result_only` (tokens only the result counts) as a last
    row of kind `unattributed` when it holds any, so that the rows still add up to the trace's total."""
    groups = _grouped(ordered, lambda r: (r["thread"], r["thread_kind"]))
    rows = [
        {"thread": thread, "thread_kind": kind, "models": _written(part), **_totals(part)}
        for (thread, kind), part in groups.items()
    ]
    if result_only is not None and _has_tokens(result_only):
        rows.append({"thread": RESULT_ONLY_THREAD, "thread_kind": THREAD_UNATTRIBUTED, "models": [], **result_only})
    return rows


def turn_table(trace: Trace) -> list[dict[str, Any]]:
    """Split the main thread into turns: one per prompt the person wrote.

    A turn starts at a main-thread `prompt` event (a typed prompt: not a tool result, an `isMeta`
    injection, the compaction summary, an interrupt or slash-command text; `reader` classifies each user
    line) and runs to the next one. A stream-json run with no prompt line is one turn. Main-thread calls
    before the first prompt belong to no turn (see `calls_before_first_turn` in `turn_figures`).

    Returns
    -------
    list of dict
        One per turn, in order: `turn` (0-based), `line` (of the prompt; None for a stream-json run),
        `calls` (main-thread calls in it), `context_tokens` (prompt tokens of its last call, None if it
        made none or its last call's usage could not be read, `metrics.measured`), `compacted` (a
        main-thread compaction boundary lies between the previous turn's last
        call and this turn's last call), `duration_ms` and `duration_source` (``"turn_duration"``: the
        last `system/turn_duration` line in the turn, exact; ``"result"``: the stream-json `result` line's
        `duration_ms` when a count, exact; ``"timestamps"``: prompt timestamp to the last call's last line,
        ≈ as it omits the final tool work, when not negative; None when nothing says).
    """
    return _turn_table(trace, _main_events(trace.events), _main_calls(trace.calls))


#: Columns of `_main_events` rows: `frame_rows.EVENT_ROW`, then `duration_ms`.
_EVENT_COLS = (*EVENT_ROW, "duration_ms")
#: Positions in `_EVENT_COLS` rows, by name: `frame_rows.EVENT_ROW` may gain columns.
_SEQ, _KIND, _TRIGGER, _PRE, _LINE, _TS, _DURATION = (
    _EVENT_COLS.index(c) for c in ("seq", "kind", "trigger", "pre_tokens", "line", "ts_ms", "duration_ms")
)


def _main_events(events: Table) -> list[tuple[Any, ...]]:
    """Main-thread event rows (`_EVENT_COLS`), sorted by seq."""
    return main_rows(events.get_column("thread_kind").to_list(), events, _EVENT_COLS)


def _main_calls(calls: Table) -> list[tuple[Any, ...]]:
    """Main-thread call rows (seq, prompt_tokens, end_ts_ms, cache_read_tokens, cache_write_tokens), by seq."""
    cols = ("seq", "prompt_tokens", "end_ts_ms", "cache_read_tokens", "cache_write_tokens")
    return main_rows(calls.get_column("thread_kind").to_list(), calls, cols)


def _turn_table(trace: Trace, ev: list[tuple[Any, ...]], main: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """`turn_table` from the main thread's event rows (`_main_events`) and call rows (`_main_calls`)."""
    starts: list[tuple[int, int | None, int | None]] = [(e[_SEQ], e[_LINE], e[_TS]) for e in ev if e[_KIND] == "prompt"]
    if not starts and trace.has.prompt_outside_trace and main:
        starts = [(min(c[0] for c in main), None, None)]
    durations = [(e[_SEQ], e[_DURATION]) for e in ev if e[_KIND] == "turn_duration" and e[_DURATION] is not None]
    bounds = [e[_SEQ] for e in ev if e[_KIND] == "compact_boundary"]
    call_rows = [c[:3] for c in main]
    turns: list[dict[str, Any]] = []
    prev_last_seq: int | None = None
    for i, (seq, line, ts) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else None
        inside = [r for r in call_rows if r[0] >= seq and (end is None or r[0] < end)]
        dur_rows = [d for s, d in durations if s >= seq and (end is None or s < end)]
        duration: int | None = None
        source: str | None = None
        if dur_rows:
            duration, source = int(dur_rows[-1]), "turn_duration"
        elif line is None and (whole := result_count(trace.result, "duration_ms")[0]) is not None:
            duration, source = whole, "result"  # bounded as `reported_duration_ms` is: a count, else unknown
        elif inside and ts is not None and inside[-1][2] is not None and inside[-1][2] >= ts:
            # timestamps out of order (a clock step, damage) measure no duration, never a negative one
            duration, source = int(inside[-1][2] - ts), "timestamps"
        last_seq = inside[-1][0] if inside else None
        compacted = last_seq is not None and any(
            (prev_last_seq is None or b > prev_last_seq) and b < last_seq for b in bounds
        )
        turns.append(
            {
                "turn": i,
                "line": line,
                "calls": len(inside),
                # an unmeasured last call (prompt 0: usage unreadable) leaves the context unknown
                "context_tokens": int(inside[-1][1]) if inside and metrics.measured(inside[-1][1]) else None,
                "compacted": compacted,
                "duration_ms": duration,
                "duration_source": source,
            }
        )
        if last_seq is not None:
            prev_last_seq = last_seq
    return turns


def context_velocity(turns: list[dict[str, Any]]) -> float | None:
    """Return the exponential moving average (α = 1/5) of the change in context size per turn.

    Parameters
    ----------
    turns
        From `turn_table`.

    Returns
    -------
    float or None
        Tokens per turn (exact arithmetic on exact sizes). Samples are the context size at the end of a
        turn that made a call minus that of the previous such turn; a turn that compacted gives no
        sample. None until a second turn has made a call (no sample is not zero growth). The first sample
        seeds the average.

    Examples
    --------
    >>> t = [{"context_tokens": 100, "compacted": False}, {"context_tokens": 200, "compacted": False},
    ...      {"context_tokens": 50, "compacted": True}, {"context_tokens": 350, "compacted": False}]
    >>> context_velocity(t)
    140.0
    """
    ema: float | None = None
    prev: int | None = None
    for t in turns:
        size = t["context_tokens"]
        if size is None:
            continue
        if prev is not None and not t["compacted"]:
            delta = size - prev
            ema = float(delta) if ema is None else ema + VELOCITY_ALPHA * (delta - ema)
        prev = size
    return ema


def context_band(context_tokens: int, threshold_tokens: int, window_tokens: int) -> str:
    """Classify a context size as spec 001's band: ``"ok"``, ``"warn"`` or ``"blocked"``.

    ok below threshold − 20,000; warn from there up to the threshold; blocked at the threshold or at
    window − 3,000. Exact given the threshold.

    Examples
    --------
    >>> [context_band(n, 167_000, 200_000) for n in (146_999, 147_000, 167_000)]
    ['ok', 'warn', 'blocked']
    """
    if context_tokens >= threshold_tokens or context_tokens >= window_tokens - BLOCKING_BUFFER_TOKENS:
        return "blocked"
    if context_tokens >= threshold_tokens - WARN_BAND_TOKENS:
        return "warn"
    return "ok"


def turn_figures(trace: Trace, turns: list[dict[str, Any]], window_tokens: int) -> dict[str, Any]:
    """Compute the per-session turn readings of spec 001.

    Parameters
    ----------
    trace
        The trace (`calls`, `events`).
    turns
        From `turn_table`.
    window_tokens
        The effective context window (`window.window_choice`).

    Returns
    -------
    dict
        `turns` (count, exact), `calls_before_first_turn`, `median_calls_per_turn` (over turns with ≥ 1
        call; None if none), `context_tokens` (prompt of the last main call; None without one or when its
        usage could not be read), `context_velocity_tokens`
        (`context_velocity`), `autocompact_threshold_tokens` and `autocompact_threshold_source`
        (``"observed"``: `pre_tokens` of the last auto compaction boundary; else ``"window"``: effective
        window − 20,000 output reserve − 13,000, ≈), `turns_until_autocompact` ((threshold − context) /
        velocity, ≈; None without a positive velocity or a context), `context_band` (`context_band`; None
        without a context), and `fixed_prefix_tokens` (cache read + cache write of the first main call
        whose usage was read, lowered to the context right after any compaction that lands below it; ≈:
        it also holds the opening message).
    """
    return _turn_figures(turns, window_tokens, _main_events(trace.events), _main_calls(trace.calls))


def _turn_figures(
    turns: list[dict[str, Any]], window_tokens: int, ev: list[tuple[Any, ...]], main: list[tuple[Any, ...]]
) -> dict[str, Any]:
    """`turn_figures` from the main thread's event rows (`_main_events`) and call rows (`_main_calls`)."""
    prompt_seqs = [e[_SEQ] for e in ev if e[_KIND] == "prompt"]
    first_turn_seq = min(prompt_seqs) if prompt_seqs else None
    before = sum(1 for c in main if c[0] < first_turn_seq) if first_turn_seq is not None and turns else 0
    per_turn = [t["calls"] for t in turns if t["calls"] > 0]
    # the last call's prompt; unknown (None) when its usage could not be read (`metrics.measured`)
    context = int(main[-1][1]) if main and metrics.measured(main[-1][1]) else None
    velocity = context_velocity(turns)
    autos = [e for e in ev if e[_KIND] == "compact_boundary" and e[_TRIGGER] == "auto" and e[_PRE] is not None]
    if autos:
        threshold, source = int(autos[-1][_PRE]), "observed"
    else:
        threshold, source = window_tokens - OUTPUT_RESERVE_TOKENS - AUTOCOMPACT_BUFFER_TOKENS, "window"
    prefix = None
    first = next((c for c in main if metrics.measured(c[1])), None)  # the first call whose usage was read
    if first is not None:
        prefix = int(first[3] + first[4])
        bounds = [e[: len(EVENT_ROW)] for e in ev if e[_KIND] == "compact_boundary"]
        for event in metrics.compaction_events_of(bounds, [c[0] for c in main], [c[1] for c in main]):
            after = event["context_after"]
            if after is not None and after < prefix:
                prefix = after
    return {
        "turns": len(turns),
        "calls_before_first_turn": before,
        "median_calls_per_turn": float(statistics.median(per_turn)) if per_turn else None,
        "context_tokens": context,
        "context_velocity_tokens": velocity,
        "autocompact_threshold_tokens": threshold,
        "autocompact_threshold_source": source,
        "turns_until_autocompact": (threshold - context) / velocity
        if context is not None and velocity and velocity > 0
        else None,
        "context_band": context_band(context, threshold, window_tokens) if context is not None else None,
        "fixed_prefix_tokens": prefix,
    }


def _link_agents(trace: Trace, threads: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Match each subagent thread to the Task/Agent calls that started it.

    stream-json names the thread by the call's id (exact). In transcripts, the Task/Agent result's
    `toolUseResult.agentId` names the agent file (exact, CLI 2.x); failing that (1.0.x inline sidechains,
    Warmups), a thread's `subagent_prompt` lines are matched to an unused Task/Agent call whose
    `input.prompt` has the same length in characters, the earliest first (a length match, not a text
    match).
    """
    frame = trace.view("tool_uses")
    # The reader keeps a Task/Agent call's subagent_type, description and prompt length as columns, so the
    # input is never decoded again here (fuzz 06/06b: a lone surrogate or deep nesting in it).
    cols = ("tool_use_id", "seq", "ts_ms", "name", "agent_type", "agent_description", "agent_prompt_chars")
    keys = ("tool_use_id", "seq", "ts_ms", "name", "agent_type", "description", "prompt_chars")
    rows = zip(*(frame.get_column(c).to_list() for c in cols), strict=True)
    uses = [dict(zip(keys, row, strict=True)) for row in rows if row[3] in AGENT_TOOLS]
    uses.sort(key=lambda u: u["seq"])  # the Task/Agent calls by seq (stable, as Polars' sort)
    by_id = {u["tool_use_id"]: u for u in uses if u["tool_use_id"]}
    used: set[str] = set()
    links: dict[str, list[dict[str, Any]]] = {t: [] for t in threads}
    for t in threads:
        if t in by_id:
            links[t].append({**by_id[t], "linked_by": "tool_use_id"})
            used.add(t)
    # Transcripts: the Task/Agent result's toolUseResult.agentId names the agent file (exact).
    results = trace.view("tool_results")
    named = [
        (agent, tid)
        for agent, tid in zip(
            results.get_column("agent_id").to_list(), results.get_column("tool_use_id").to_list(), strict=True
        )
        if agent is not None
    ]
    for agent, tid in named:
        if agent in links and tid in by_id and tid not in used and not links[agent]:
            links[agent].append({**by_id[tid], "linked_by": "agent_id"})
            used.add(tid)
    events = trace.view("events")
    starts = [
        r
        for r in zip(*(events.get_column(c).to_list() for c in ("seq", "thread", "text_chars", "kind")), strict=True)
        if r[3] == "subagent_prompt"
    ]
    starts.sort(key=lambda r: r[0])
    for _seq, thread, chars, _kind in starts:
        if thread not in links or any(link["linked_by"] in ("tool_use_id", "agent_id") for link in links[thread]):
            continue
        match = next((u for u in uses if u["tool_use_id"] not in used and u["prompt_chars"] == chars), None)
        if match is not None:
            used.add(match["tool_use_id"])
            links[thread].append({**match, "linked_by": "prompt_length"})
    return links


def _text(value: Any) -> str | None:
    """A non-empty string as written, else None (`.meta.json` values are not checked by the reader)."""
    return value if isinstance(value, str) and value else None


def agent_rows(trace: Trace, priced: pl.DataFrame) -> list[dict[str, Any]]:
    """One row per subagent thread (Task/Agent subagents, warmups, inline sidechains).

    Returns
    -------
    list of dict
        In order of the thread's first call: `thread`, `agent_type` and `description` (the `.meta.json`
        beside the agent file, else the Task/Agent call's `input.subagent_type` / `input.description`;
        None when neither is known, e.g. warmups), `tasks` (Task/Agent calls linked to it),
        `linked_by` (``"tool_use_id"`` or ``"agent_id"`` exact, ``"prompt_length"`` ≈, or None), the keys
        of `token_totals`
        (its own calls), `duration_ms` (last tool_result − first tool_use of its Task calls, else first
        to last line of its own calls; None without timestamps) and `duration_source`, `returned_chars`
        (chars of its Task results, exact), `returned_tokens` (chars ÷ 4, ≈) and `return_ratio`
        (returned ÷ the agent's output tokens, ≈; None without a link or output).
    """
    return _agent_rows(trace, priced.to_dicts())


def _agent_rows(trace: Trace, priced: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`agent_rows` from priced rows (`_priced_rows`)."""
    sub = sorted((r for r in priced if r["thread_kind"] == THREAD_SUBAGENT), key=_by_seq)
    parts = _grouped(sub, lambda r: r["thread"])
    threads = list(parts)
    links = _link_agents(trace, threads)
    frame = trace.view("tool_results")
    results = list(zip(*(frame.get_column(c).to_list() for c in ("tool_use_id", "result_chars", "ts_ms")), strict=True))
    rows = []
    for thread in threads:
        part = parts[thread]
        meta = trace.agents.get(thread, {})
        tasks = links.get(thread, [])
        first = tasks[0] if tasks else {}
        meta_type, meta_desc = _text(meta.get("agentType")), _text(meta.get("description"))
        agent_type = meta_type or first.get("agent_type")
        description = meta_desc or first.get("description")
        if description and len(tasks) > 1 and not meta_desc:
            description += f" (+{len(tasks) - 1} more)"  # inline sidechains: several Task calls, one thread
        ids = {t["tool_use_id"] for t in tasks if t["tool_use_id"] is not None}  # `is_in` never matches a null
        res = [r for r in results if r[0] in ids]
        returned = sum(r[1] or 0 for r in res) if tasks else None
        duration, source = None, None
        use_ts = [t["ts_ms"] for t in tasks if t["ts_ms"] is not None]
        res_ts = [r[2] for r in res if r[2] is not None]
        # Every timestamp of its calls that parsed (first and last lines alike): one that did not parse
        # leaves the others to measure by (fuzz 11), and a single one measures nothing.
        stamps = [ts for r in part for ts in (r["ts_ms"], r["end_ts_ms"]) if ts is not None]
        if use_ts and res_ts and len(res_ts) == len(tasks) and max(res_ts) >= min(use_ts):
            duration, source = int(max(res_ts) - min(use_ts)), "task_call"  # never negative: out of order
        elif len(stamps) > 1:
            duration, source = int(max(stamps) - min(stamps)), "agent_lines"
        totals = _totals(part)
        returned_tokens = returned / CHARS_PER_TOKEN if returned is not None else None
        rows.append(
            {
                "thread": thread,
                "agent_type": agent_type,
                "description": description,
                "tasks": len(tasks),
                "linked_by": tasks[0]["linked_by"] if tasks else None,
                **totals,
                "duration_ms": duration,
                "duration_source": source,
                "returned_chars": returned,
                "returned_tokens": returned_tokens,
                "return_ratio": returned_tokens / totals["output_tokens"]
                if returned_tokens is not None and totals["output_tokens"]
                else None,
            }
        )
    return rows


def reported_totals(result: dict[str, Any] | None, ours_usd: float, table: PriceTable) -> dict[str, Any] | None:
    """Claude Code's own totals from a stream-json `result` line, beside ours (CASES B16).

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


@dataclass(frozen=True)
class UsageReport:
    """The `context usage` readings of one trace, ready to render (plain values, no frames).

    `total` covers every thread (what the trace cost): `lines_total`, the calls written (`main`, the main
    thread, plus `subagents`, the subagent and compaction-summariser threads), plus `result_only`, the
    tokens only a stream-json `result` line's `modelUsage` counts (None without a complete `modelUsage`);
    each is a `token_totals` dict. Token figures are exact sums over distinct API responses (or as
    `modelUsage` writes them); USD figures are ≈ (list prices from the table dated `price_table_date`),
    lower bounds (≥) when `total["lower_bound_reasons"]` names a reason. `missing_subagents`: the ids of
    subagents named by Task/Agent results whose calls the trace lacks (`metrics.missing_subagents`; their
    cost is in no total unless a stream-json `modelUsage` counts it).
    """

    trace: str
    path: str
    format: str
    session_id: str | None
    window: int
    window_source: str
    price_table_date: str
    total: dict[str, Any]
    main: dict[str, Any]
    subagents: dict[str, Any]
    models: list[dict[str, Any]]
    threads: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    turn_figures: dict[str, Any]
    agents: list[dict[str, Any]]
    agents_cost_share: float | None
    agents_return_ratio: float | None
    reported: dict[str, Any] | None
    skipped_lines: int = 0
    oversized_lines: int = 0
    truncated_last_line: bool = False
    warnings: list[str] = field(default_factory=list)
    line_notes: list[LineNote] = field(default_factory=list)
    lines_total: dict[str, Any] = field(default_factory=dict)
    result_only: dict[str, Any] | None = None
    missing_subagents: list[str] = field(default_factory=list)
    fill: float | None = None  # never set: lets `render.render_diagnostics` take these reports
    #: `label`, `project`, `cwd`, `start`, `start_source` (`filters.trace_facts`)
    facts: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, with_calls: bool = False) -> dict[str, Any]:
        """Return the JSON object of this trace: every reading, raw numbers (`with_calls` is ignored)."""
        return {
            "schema_version": SCHEMA_VERSIONS["usage"],
            **self.facts,
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "window": self.window,
            "window_source": self.window_source,
            "price_table_date": self.price_table_date,
            "total": self.total,
            "lines_total": self.lines_total,
            "result_only": self.result_only,
            "main": self.main,
            "subagents": self.subagents,
            "cost_usd": self.total["cost_usd"],
            "cost_source": self.total["cost_source"],
            "cost_is_lower_bound": self.total["cost_is_lower_bound"],
            "lower_bound_reasons": self.total["lower_bound_reasons"],
            "unpriced_models": self.total["unpriced_models"],
            "missing_subagents": len(self.missing_subagents),
            "missing_subagent_ids": self.missing_subagents,
            "models": self.models,
            "threads": self.threads,
            "turns": self.turn_figures["turns"],
            "turn_figures": self.turn_figures,
            "turn_rows": self.turns,
            "agents": self.agents,
            "agents_cost_usd": self.subagents_cost_usd,
            "agents_cost_share": self.agents_cost_share,
            "agents_return_ratio": self.agents_return_ratio,
            "reported": self.reported,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }

    @property
    def subagents_cost_usd(self) -> float:
        """USD (≈) of the subagent threads only (the compaction summariser apart)."""
        return float(sum(a["cost_usd"] for a in self.agents))


def build_usage(trace: Trace, window: int | None = None, table: PriceTable | None = None) -> UsageReport:
    """Compute every `context usage` reading of one trace.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace` (after `drop_inherited_calls`).
    window
        `--window` in tokens, or None (then `window.window_choice` decides).
    table
        A price table; None uses the packaged one.

    Returns
    -------
    UsageReport
        See the class and the functions it names for each figure's source.
    """
    table = table or load_prices()
    # Views, not frames: every figure below is a pass over plain rows.
    priced = _priced_rows(trace.view("calls"), table)
    ordered = sorted(priced, key=_by_seq)
    choice = window_choice(trace, window)
    events = _main_events(trace.view("events"))
    main_calls = _main_calls(trace.view("calls"))
    turns = _turn_table(trace, events, main_calls)
    warnings = list(trace.warnings)
    usage_rows, usage_warnings = model_usage_rows(trace.result) if trace.has.run_totals else ([], [])
    warnings.extend(usage_warnings)
    warnings.extend(context_windows(trace.result)[1])  # in the words `context trace` uses
    warnings.extend(result_warnings(trace.result))
    extras = result_only_rows(priced, usage_rows, table)
    covered = frozenset(e["model"] for e in extras)  # models whose final counts the result gives
    result_only = _result_only_totals(extras)
    # The result's final counts complete the trace's and each model's figures, never a thread's: no line
    # says which thread the tokens only `modelUsage` counts belong to, so a thread's output stays ≥.
    lines = _totals(priced)
    total = _plus(_totals(priced, covered), result_only)
    main = _totals([r for r in priced if r["thread_kind"] == THREAD_MAIN])
    side = _totals([r for r in priced if r["thread_kind"] in (THREAD_SUBAGENT, THREAD_COMPACTION)])
    missing = metrics.missing_subagents(trace)
    note = metrics.missing_subagents_warning(missing)
    if note is not None:  # the same warning as `context trace`'s, printed once (as a `warning:` line)
        warnings.append(note)
        if result_only is None:  # else `modelUsage` counts their tokens: the cost is whole
            total, side = _with_reasons(total, "missing_subagents"), _with_reasons(side, "missing_subagents")
    unmeasured = sum(not metrics.measured(c[1]) for c in main_calls)
    note = metrics.unmeasured_warning(unmeasured, len(main_calls))
    if note is not None:
        warnings.append(note)
    if trace.has.run_totals and trace.result is None and priced:
        total = _with_reasons(total, "no_result_line")
    agents = _agent_rows(trace, priced)
    agents_cost = sum(a["cost_usd"] for a in agents)
    returned = [a for a in agents if a["returned_tokens"] is not None]
    agent_out = sum(a["output_tokens"] for a in returned)
    return UsageReport(
        trace=trace.name,
        path=trace.path,
        format=trace.format,
        session_id=trace.session_id,
        window=choice.tokens,
        window_source=choice.source,
        price_table_date=table.date,
        total=total,
        main=main,
        subagents=side,
        models=_by_model(ordered, extras, covered),
        threads=_by_thread(ordered, result_only),
        turns=turns,
        turn_figures=_turn_figures(turns, choice.tokens, events, main_calls),
        agents=agents,
        agents_cost_share=agents_cost / total["cost_usd"] if agents and total["cost_usd"] else None,
        agents_return_ratio=sum(a["returned_tokens"] for a in returned) / agent_out if returned and agent_out else None,
        reported=reported_totals(trace.result, total["cost_usd"], table),
        skipped_lines=trace.skipped_lines,
        oversized_lines=trace.oversized_lines,
        truncated_last_line=trace.truncated_last_line,
        warnings=warnings,
        line_notes=list(trace.line_notes),
        lines_total=lines,
        result_only=result_only,
        missing_subagents=missing,
        facts=trace_facts(trace),
    )
