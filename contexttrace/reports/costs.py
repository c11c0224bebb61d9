"""Tokens and cost of a trace's calls: each call priced, then summed per trace, thread kind, model and thread.

Pure functions over the call rows of a `Trace` and the price table of `analysis.pricing`; `usage.build_usage`
gathers them into a `UsageReport`. Each summing function comes twice: over a priced frame (`priced_calls`,
for library use) and over priced rows (`priced_rows`, plain dicts: what `build_usage` passes, no Polars).
Nothing here reads files (but the packaged price table), prints or formats numbers.

Rules this module owns (docs/usage.md states each with its source and exact/≈):

* Every API response counts once: the reader has already deduplicated the call rows (one per message id).
* Tokens are summed per thread kind, thread and model; the part of a cache write that its 5m/1h split does
  not account for (the split absent, or written as 0/0) is priced as 5-minute and reported as assumed
  (`cache_write_assumed_5m_tokens`); a split is never priced beyond the cache-write total it splits.
* A call whose prompt reads 0 had usage the reader could not read (`metrics.measured`): its tokens are
  unknown, so every total it is in is a lower bound (`unreadable_usage`).
* A compaction pass inside a response (`usage.iterations`, the reader's `compaction_*` columns) is billed
  with its call and priced on its own prompt: tokens count both passes, the long-context rate is decided per
  pass, never on their sum.
* Cost is priced per call (`pricing.call_cost_usd`); a call on a model the table lacks is unpriced, its
  model listed in `unpriced_models`, and every total it belongs to is a lower bound; a model none of
  whose calls could be priced costs None (unknown), never $0.
"""

from __future__ import annotations

import math
from functools import partial
from itertools import repeat
from operator import is_, is_not, itemgetter
from typing import TYPE_CHECKING, Any

from contexttrace.analysis import metrics
from contexttrace.analysis.pricing import PriceTable, call_cost_usd, normalize_model, price_of

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import Table

_TOKEN_COLS = ("input_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
               "cache_read_tokens", "output_tokens")  # fmt: skip


def priced_calls(calls: pl.DataFrame, table: PriceTable) -> pl.DataFrame:
    """Price every call.

    Parameters
    ----------
    calls
        Call frame (columns `contract.CALL_SCHEMA`), one row per API response (the reader deduplicates).
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
        A call with compaction passes inside it (`compaction_*` columns) is billed for them too: `input_tokens`,
        `cache_write_tokens` (and its split), `cache_read_tokens` and `output_tokens` are replaced by the
        call's and its passes' summed (exact), and `cost_usd` adds the passes priced on their own prompt
        (their long-context rate decided by the largest pass's prompt, not the sum with the answer's).

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
    import polars as pl  # the frame API imports Polars; `build_usage` (plain rows) never does

    # (a frame made without the compaction columns has no compaction pass)
    wanted = [pl.col(c) if c in calls.columns else pl.lit(None, pl.Int64).alias(c) for c in _PRICE_INPUT]
    extra = _price_columns(calls.select(wanted).rows(), table)

    return calls.with_columns(
        price_model=pl.Series(extra["price_model"], dtype=pl.String),
        fast=pl.Series(extra["fast"], dtype=pl.Boolean),
        long_context=pl.Series(extra["long_context"], dtype=pl.Boolean),
        cache_write_assumed_5m_tokens=pl.Series(extra["cache_write_assumed_5m_tokens"], dtype=pl.Int64),
        cache_write_5m_tokens=pl.Series(extra["cache_write_5m_tokens"], dtype=pl.Int64),
        cache_write_1h_tokens=pl.Series(extra["cache_write_1h_tokens"], dtype=pl.Int64),
        priced_as=pl.Series(extra["priced_as"], dtype=pl.String),
        cost_usd=pl.Series(extra["cost_usd"], dtype=pl.Float64),
        input_tokens=pl.Series(extra["input_tokens"], dtype=pl.Int64),
        cache_write_tokens=pl.Series(extra["cache_write_tokens"], dtype=pl.Int64),
        cache_read_tokens=pl.Series(extra["cache_read_tokens"], dtype=pl.Int64),
        output_tokens=pl.Series(extra["output_tokens"], dtype=pl.Int64),
    )


_PRICE_INPUT = ("model", "input_tokens", "cache_write_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens",
                "cache_split_known", "cache_read_tokens", "output_tokens", "prompt_tokens", "speed",
                "web_search_requests", "compaction_input_tokens", "compaction_cache_write_tokens",
                "compaction_cache_write_1h_tokens", "compaction_cache_read_tokens", "compaction_output_tokens",
                "compaction_prompt_tokens")  # fmt: skip


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
    billed: list[tuple[int, int, int, int]] = []
    models: dict[str | None, tuple[str | None, Any]] = {}  # model -> (price key, price): a trace names a few
    for model, inp, cw, c5, c1, known, cr, out, prompt, speed, web, *passes in rows:
        looked_up = models.get(model)
        if looked_up is None:
            looked_up = models[model] = (normalize_model(model) if model is not None else None, price_of(model, table))
        key, price = looked_up
        fast = speed == "fast"
        long = (
            prompt > table.long_context_threshold_tokens
            and price is not None
            and price.long_context_input_multiplier is not None
        )
        p_in, p_cw, p_c1, p_cr, p_out, p_prompt = (n or 0 for n in passes)  # (null: a reader that cannot tell)
        c5, c1 = (c5 or 0, c1 or 0) if known else (0, 0)
        # A split never prices more than the total it splits: with the total unreadable (read as 0) and
        # the split readable, pricing the split would cost writes no column counts. Cut to the total, the
        # cheaper 5-minute part first.
        cw = cw or 0
        c5 = min(c5, cw)
        c1 = min(c1, cw - c5)
        # The part of the write no split accounts for (the split absent, written as 0/0, or short) is priced
        # as 5-minute, as ccusage does, and reported as assumed.
        extra = cw - c5 - c1
        price_model.append(key)
        fast_col.append(fast)
        long_col.append(long)
        assumed.append(extra)
        # Compaction passes inside the response: billed beside the answer, each priced on its own prompt (the
        # largest decides their long-context rate), their cache writes not stated as 1-hour as 5-minute.
        split_5m.append(c5 + p_cw - p_c1)
        split_1h.append(c1 + p_c1)
        billed.append((inp + p_in, cw + p_cw, cr + p_cr, out + p_out))
        label.append(None if key is None else key + (" (fast)" if fast else ""))
        if price is None:
            cost.append(None)
            continue
        web_usd = table.web_search_usd_per_request
        total = call_cost_usd(price, inp, c5 + extra, c1, cr, out, fast, long, web or 0, web_usd)
        if p_prompt and total is not None:
            p_long = p_prompt > table.long_context_threshold_tokens and price.long_context_input_multiplier is not None
            total += call_cost_usd(price, p_in, p_cw - p_c1, p_c1, p_cr, p_out, fast, p_long) or 0.0
        cost.append(total)
    columns = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")
    return {
        "price_model": price_model,
        "fast": fast_col,
        "long_context": long_col,
        "cache_write_assumed_5m_tokens": assumed,
        "cache_write_5m_tokens": split_5m,
        "cache_write_1h_tokens": split_1h,
        "priced_as": label,
        "cost_usd": cost,
        **{c: [b[i] for b in billed] for i, c in enumerate(columns)},
    }


#: Call columns `build_usage` reads into its priced rows (dicts), besides those `_price_columns` adds.
_ROW_COLS = ("seq", "thread", "thread_kind", "model", *_TOKEN_COLS, "web_search_requests", "stop_reason",
             "prompt_tokens", "ts_ms", "end_ts_ms")  # fmt: skip


def priced_rows(calls: Table, table: PriceTable) -> list[dict[str, Any]]:
    """Price every call as `priced_calls` does, as plain rows: what `build_usage` sums without Polars.

    Parameters
    ----------
    calls
        The call table (`Trace.view("calls")`, columns `contract.CALL_SCHEMA`).
    table
        The price table (`pricing.load_prices()`).

    Returns
    -------
    list of dict
        One dict per call, in table order, keyed by the call columns the sums read (`seq`, `thread`,
        `thread_kind`, `model`, the token counts, `web_search_requests`, `stop_reason`, `prompt_tokens`,
        `ts_ms`, `end_ts_ms`, `cache_split_known`, `speed`) and the columns `priced_calls` adds, with the
        same values (tokens exact; `cost_usd` USD ≈, None when unpriced).
    """
    names = list(dict.fromkeys((*_ROW_COLS, *_PRICE_INPUT)))
    have = set(calls.columns)  # (a table made without the compaction columns has no compaction pass)
    cols = {c: calls.get_column(c).to_list() if c in have else [None] * calls.height for c in names}
    extra = _price_columns(list(zip(*(cols[c] for c in _PRICE_INPUT), strict=True)), table)
    cols.update(extra)
    # (each row a dict of the same keys, made by C calls: every value tuple has one value per key)
    return list(map(dict, map(zip, repeat(list(cols)), zip(*cols.values(), strict=True))))


def by_seq(row: dict[str, Any]) -> int:
    """The sort key of a priced row: its `seq` (the order of the trace's lines)."""
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
    return totals_of_rows(priced.to_dicts())


#: Why a cost can be a lower bound (`lower_bound_reasons`): a call on a model the table cannot price; output
#: written as a streaming placeholder with no final count from a `result` line (FORMATS G2); a
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


#: The columns `totals_of_rows` sums, each with its getter; the getters of the columns its rules read.
_SUMMED = tuple((c, itemgetter(c)) for c in (*_TOKEN_COLS, "cache_write_assumed_5m_tokens", "web_search_requests"))
_COST, _STOP, _PROMPT, _LONG, _FAST = map(
    itemgetter, ("cost_usd", "stop_reason", "prompt_tokens", "long_context", "fast")
)
#: Whether a value is not None (a C call: `filter` keeps what it is true for).
_is_value = partial(is_not, None)


def totals_of_rows(rows: list[dict[str, Any]], covered: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Sum the usage and cost of some priced rows, as `token_totals` sums a priced frame.

    Parameters
    ----------
    rows
        Priced rows (`priced_rows`, any subset, in the table's order).
    covered
        The models (normalised ids) whose final counts a `result` line's `modelUsage` gives: their calls'
        placeholder output or unreadable usage makes no lower bound.

    Returns
    -------
    dict
        The keys of `token_totals` (tokens exact, `cost_usd` USD ≈ as a correctly rounded sum).
    """
    if not rows and _NO_TOTALS:  # (no call: a thread kind the trace has none of)
        return {**_NO_TOTALS, "lower_bound_reasons": [], "unpriced_models": []}
    # integer sums skip nulls, as Polars' (`filter(None, ...)` drops the nulls, and the zeros, which add nothing)
    sums = {c: sum(filter(None, map(getter, rows))) for c, getter in _SUMMED}
    sums["cache_write_5m_tokens"] += sums["cache_write_assumed_5m_tokens"]
    # Each rule below reads a column in one pass of C calls, and looks at rows one by one only where the
    # column holds a value the rule counts: a null cost, a null stop reason (the only one
    # `metrics.output_is_lower_bound` counts), a prompt not `metrics.measured` (null, or 0 and below).
    costs = list(map(_COST, rows))
    unpriced = [r["model"] for r in rows if r["cost_usd"] is None] if None in costs else []
    stops = None in map(_STOP, rows)
    placeholders = [r for r in rows if metrics.output_is_lower_bound(r["stop_reason"])] if stops else []
    output_lower = any(r["price_model"] not in covered for r in placeholders)
    prompts = list(map(_PROMPT, rows))
    unreadable = (None in prompts or min(prompts, default=1) <= 0) and any(
        not metrics.measured(r["prompt_tokens"]) and r["price_model"] not in covered for r in rows
    )
    reasons = (["unpriced_model"] if unpriced else []) + (["output_placeholder"] if output_lower else [])
    reasons += ["unreadable_usage"] if unreadable else []
    return {
        "calls": len(rows),
        **sums,
        "cache_hit_ratio": cache_hit_ratio(sums["cache_read_tokens"], sums["cache_write_tokens"], sums["input_tokens"]),
        # correctly rounded (`math.fsum`), whatever the order of the calls
        "cost_usd": math.fsum(filter(_is_value, costs)),
        "cost_source": COST_FROM_MESSAGES,
        "cost_is_lower_bound": bool(reasons),
        "lower_bound_reasons": reasons,
        "unpriced_calls": len(unpriced),
        "unpriced_models": sorted({m if m is not None else "?" for m in unpriced}),
        "long_context_calls": sum(map(is_, map(_LONG, rows), repeat(True))),
        "fast_calls": sum(map(is_, map(_FAST, rows), repeat(True))),
        "output_lower_bound_calls": len(placeholders),
        "output_is_lower_bound": output_lower,
    }


#: `totals_of_rows([])`, computed once (its lists are made anew for each caller).
_NO_TOTALS: dict[str, Any] = {}
_NO_TOTALS.update(totals_of_rows([]))


def has_tokens(totals: dict[str, Any]) -> bool:
    """Whether some token or web-search count of a totals dict (`token_totals` shape) is above 0."""
    return any(totals[k] for k in ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens",
                                   "web_search_requests"))  # fmt: skip


def with_reasons(totals: dict[str, Any], *reasons: str) -> dict[str, Any]:
    """Return a copy of `totals` with more lower-bound `reasons` (from `LOWER_BOUND_REASONS`), the list kept in
    that order, and `cost_is_lower_bound` set when any."""
    have = set(totals["lower_bound_reasons"]).union(reasons)
    ordered = [r for r in LOWER_BOUND_REASONS if r in have]
    return {**totals, "lower_bound_reasons": ordered, "cost_is_lower_bound": bool(ordered)}


def add_totals(a: dict[str, Any], b: dict[str, Any] | None) -> dict[str, Any]:
    """Add two totals (`token_totals` shape): token sums and counts add (exact), costs add (`math.fsum`;
    None when neither is known), flags and lists join, `cost_source` says which sides held usage. `b` None
    returns `a` unchanged."""
    if b is None:
        return a
    cols = (*_TOKEN_COLS, "cache_write_assumed_5m_tokens", "web_search_requests", "calls", "unpriced_calls",
            "long_context_calls", "fast_calls", "output_lower_bound_calls")  # fmt: skip
    sums = {c: a[c] + b[c] for c in cols}
    costs = [c for c in (a["cost_usd"], b["cost_usd"]) if c is not None]
    has_a, has_b = a["calls"] > 0 or has_tokens(a), b["calls"] > 0 or has_tokens(b)
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
    return with_reasons(out, *b["lower_bound_reasons"])


def grouped(rows: list[dict[str, Any]], key: Any) -> dict[Any, list[dict[str, Any]]]:
    """Group rows by `key(row)`: groups in order of first appearance, rows in their order (as Polars'
    `group_by(maintain_order=True)`)."""
    keys = list(map(key, rows))
    if keys and keys.count(keys[0]) == len(keys):  # one group (one thread, one model): no step per row
        return {keys[0]: list(rows)}
    groups: dict[Any, list[dict[str, Any]]] = {}
    for k, r in zip(keys, rows, strict=True):
        groups.setdefault(k, []).append(r)
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
    return models_of_rows(sorted(priced.to_dicts(), key=by_seq))


def models_of_rows(
    ordered: list[dict[str, Any]], extras: list[dict[str, Any]] | None = None, covered: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """Total priced rows per model, as `by_model` totals a priced frame.

    Parameters
    ----------
    ordered
        Priced rows (`priced_rows`) sorted by `seq`.
    extras
        `result_line.result_only_rows`: each is added to its model's first row (standard before fast when
        the standard comes first); a model no call shows gets a row of its own when it holds tokens.
    covered
        As `totals_of_rows`.

    Returns
    -------
    list of dict
        As `by_model`.
    """

    def label_of(r: dict[str, Any]) -> str:  # coalesce(priced_as, model), null → "?"
        return r["priced_as"] if r["priced_as"] is not None else (r["model"] if r["model"] is not None else "?")

    pending = {e["model"]: e for e in extras or []}
    out = []
    for label, part in grouped(ordered, label_of).items():
        totals = totals_of_rows(part, covered)
        extra = pending.pop(part[0]["price_model"], None)
        if extra is not None:
            totals = add_totals(totals, {k: v for k, v in extra.items() if k not in ("model", "models_written")})
        if totals["unpriced_calls"] == totals["calls"] and totals["calls"]:
            totals["cost_usd"] = None  # unknown, never $0
        written = _written(part) + [m for m in (extra or {}).get("models_written", []) if m not in _written(part)]
        out.append({"model": label, "models_written": written, **totals})
    # models only the result line names (helper calls, FORMATS G9)
    out.extend(extra for extra in pending.values() if has_tokens(extra))
    return out


def by_thread(priced: pl.DataFrame) -> list[dict[str, Any]]:
    """Totals per thread (main, each subagent, the compaction summariser), in order of first call.

    Returns
    -------
    list of dict
        `thread`, `thread_kind`, `models` (ids as written) and the keys of `token_totals`.
    """
    return threads_of_rows(sorted(priced.to_dicts(), key=by_seq))


#: A priced row's (thread, thread_kind): what `threads_of_rows` groups by.
_THREAD_OF = itemgetter("thread", "thread_kind")
#: `threads[]` row of the tokens only a `result` line's `modelUsage` counts (no line says which thread).
RESULT_ONLY_THREAD = "result.modelUsage"
#: Its `thread_kind`.
THREAD_UNATTRIBUTED = "unattributed"


def threads_of_rows(ordered: list[dict[str, Any]], result_only: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Total priced rows per thread, as `by_thread` totals a priced frame.

    Parameters
    ----------
    ordered
        Priced rows (`priced_rows`) sorted by `seq`.
    result_only
        `result_line.result_only_totals` (tokens only a `result` line counts) or None: a last row
        (`RESULT_ONLY_THREAD`, kind `THREAD_UNATTRIBUTED`) when it holds any, so that the rows still add up
        to the trace's total.

    Returns
    -------
    list of dict
        As `by_thread`.
    """
    groups = grouped(ordered, _THREAD_OF)
    rows = [
        {"thread": thread, "thread_kind": kind, "models": _written(part), **totals_of_rows(part)}
        for (thread, kind), part in groups.items()
    ]
    if result_only is not None and has_tokens(result_only):
        rows.append({"thread": RESULT_ONLY_THREAD, "thread_kind": THREAD_UNATTRIBUTED, "models": [], **result_only})
    return rows
