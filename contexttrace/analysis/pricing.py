"""The price table and the price of one model call.

The table is package data (`contexttrace/data/prices.json`) with its date and sources; nothing here is
hard-coded but the arithmetic. This module owns three rules:

* **Normalisation**: a model id is looked up after removing what does not change the price:
  a provider prefix (`anthropic/`, Bedrock `us.anthropic.` / `global.anthropic.` ...), a Bedrock version
  suffix (`-v1:0`), a Vertex or API date (`@20250929`, `-20250929`), a `[1m]` window marker, and dots
  between version digits (`claude-opus-4.8` → `claude-opus-4-8`). There is no fallback on a family
  substring: a model the table does not name is *unpriced*, never $0.
* **Long context**: when a call's whole prompt (input + cache write + cache read) exceeds the
  table's threshold (200,000 tokens) and the model has a `long_context` tier, every part of that call is
  priced at the tier's rates (input-side multiplier on input and both cache kinds, output multiplier on
  output). A model without a tier is priced at its base rates at any size.
* **Fast mode**: a call whose `usage.speed` is ``"fast"`` is priced at the model's
  `fast_multiplier`; a model with no fast multiplier in the table makes that call unpriced.

It never reads traces and never prints.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

#: One million: prices are per MTok.
MTOK = 1_000_000

_PREFIX = re.compile(r"^(?:(?:us|eu|apac|global|jp|au)\.)?(?:anthropic[./])")
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")
_DATE = re.compile(r"(?:[-@]\d{8})$")
_WINDOW = re.compile(r"\[[0-9]+[km]\]$", re.IGNORECASE)
_DOTTED = re.compile(r"(?<=\d)\.(?=\d)")


@dataclass(frozen=True)
class ModelPrice:
    """List prices of one model, USD per million tokens.

    `long_context_input_multiplier` / `long_context_output_multiplier` are None when the model has no
    long-context tier; `fast_multiplier` is None when the table knows no fast-mode price for it.
    """

    model: str
    input: float
    output: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    long_context_input_multiplier: float | None = None
    long_context_output_multiplier: float | None = None
    fast_multiplier: float | None = None


@dataclass(frozen=True)
class PriceTable:
    """The whole table: its date (ISO), sources, long-context threshold (tokens) and per-model prices."""

    date: str
    sources: tuple[str, ...]
    long_context_threshold_tokens: int
    web_search_usd_per_request: float
    models: dict[str, ModelPrice]


def normalize_model(model: str) -> str:
    """Return the price-table key of a model id as written in a trace.

    Parameters
    ----------
    model
        `message.model` (or a `modelUsage` key) as written.

    Returns
    -------
    str
        Lower-case id without provider prefix, Bedrock version, date or `[1m]` marker, with dotted
        version numbers written with dashes. Never raises; an unknown id comes back cleaned, not mapped.

    Examples
    --------
    >>> normalize_model("claude-haiku-4-5-20251001")
    'claude-haiku-4-5'
    >>> normalize_model("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    'claude-sonnet-4-5'
    >>> normalize_model("claude-opus-4-6[1m]"), normalize_model("anthropic/claude-opus-4.8")
    ('claude-opus-4-6', 'claude-opus-4-8')
    """
    return _normalized(model)


@lru_cache(maxsize=1024)
def _normalized(model: str) -> str:
    """`normalize_model`, remembered: a trace names a few models on thousands of calls."""
    m = model.strip().lower()
    m = _WINDOW.sub("", m)
    m = _PREFIX.sub("", m)
    m = _BEDROCK_VERSION.sub("", m)
    m = _DATE.sub("", m)
    return _DOTTED.sub("-", m)


def _model_price(key: str, row: dict[str, Any], mult: dict[str, float]) -> ModelPrice:
    inp = float(row["input"])
    lc = row.get("long_context")
    return ModelPrice(
        model=key,
        input=inp,
        output=float(row["output"]),
        cache_write_5m=float(row.get("cache_write_5m", inp * mult["write_5m"])),
        cache_write_1h=float(row.get("cache_write_1h", inp * mult["write_1h"])),
        cache_read=float(row.get("cache_read", inp * mult["read"])),
        long_context_input_multiplier=float(lc["input_multiplier"]) if lc else None,
        long_context_output_multiplier=float(lc["output_multiplier"]) if lc else None,
        fast_multiplier=float(row["fast_multiplier"]) if "fast_multiplier" in row else None,
    )


def parse_prices(data: dict[str, Any]) -> PriceTable:
    """Build a `PriceTable` from the decoded JSON of a price file.

    Parameters
    ----------
    data
        An object shaped like `contexttrace/data/prices.json`: `date`, `sources`, `cache_multipliers`
        (`write_5m`, `write_1h`, `read`), `long_context_threshold_tokens`, `web_search_usd_per_request`
        and `models` (key → `input`, `output` in USD/MTok, optional explicit `cache_write_5m`,
        `cache_write_1h`, `cache_read`, `long_context` {`input_multiplier`, `output_multiplier`},
        `fast_multiplier`).

    Returns
    -------
    PriceTable
        Cache prices derived from the multipliers unless the row gives them.

    Raises
    ------
    KeyError, TypeError, ValueError
        A required key is missing or not a number: the table is package data, so this is a bug.

    Examples
    --------
    >>> t = parse_prices({"date": "2026-01-01", "sources": [], "cache_multipliers": {"write_5m": 1.25,
    ...     "write_1h": 2, "read": 0.1}, "long_context_threshold_tokens": 200000,
    ...     "web_search_usd_per_request": 0.01, "models": {"m": {"input": 4, "output": 20}}})
    >>> t.models["m"].cache_write_5m, t.models["m"].cache_read
    (5.0, 0.4)
    """
    mult = {k: float(v) for k, v in data["cache_multipliers"].items()}
    return PriceTable(
        date=str(data["date"]),
        sources=tuple(str(s) for s in data["sources"]),
        long_context_threshold_tokens=int(data["long_context_threshold_tokens"]),
        web_search_usd_per_request=float(data["web_search_usd_per_request"]),
        models={normalize_model(k): _model_price(normalize_model(k), v, mult) for k, v in data["models"].items()},
    )


@cache
def load_prices(path: str | None = None) -> PriceTable:
    """Load the price table: the package's own, or the JSON file at `path`.

    Returns
    -------
    PriceTable
        Cached per path.

    Raises
    ------
    OSError
        `path` cannot be read.
    json.JSONDecodeError, KeyError, ValueError
        The file is not a valid price table.
    """
    if path is None:
        text = resources.files("contexttrace").joinpath("data/prices.json").read_text(encoding="utf-8")
    else:
        text = Path(path).read_text(encoding="utf-8")
    return parse_prices(json.loads(text))


def price_of(model: str | None, table: PriceTable) -> ModelPrice | None:
    """Look up a model's prices.

    Parameters
    ----------
    model
        A model id as the trace wrote it (`calls.model`), or None.
    table
        From `load_prices` or `parse_prices`.

    Returns
    -------
    ModelPrice or None
        The table's row for the id after `normalize_model`; None when the table lacks it (the call is
        unpriced, never $0) or there is no model.
    """
    if model is None:
        return None
    return table.models.get(normalize_model(model))


def call_cost_usd(
    price: ModelPrice,
    input_tokens: int,
    cache_write_5m_tokens: int,
    cache_write_1h_tokens: int,
    cache_read_tokens: int,
    output_tokens: int,
    fast: bool = False,
    long_context: bool = False,
    web_search_requests: int = 0,
    web_search_usd: float = 0.0,
) -> float | None:
    """Price one model call in USD.

    Parameters
    ----------
    price
        The model's row (`price_of`).
    input_tokens, cache_write_5m_tokens, cache_write_1h_tokens, cache_read_tokens, output_tokens
        The call's usage, tokens.
    fast
        `usage.speed` was ``"fast"``: multiply by the model's fast multiplier.
    long_context
        The call's whole prompt exceeded the table's threshold; the tier applies only if the model has one.
    web_search_requests, web_search_usd
        Server-side web searches and the price of one (USD).

    Returns
    -------
    float or None
        USD (≈: list prices, not a bill); None when `fast` is set and the model has no fast price.

    Examples
    --------
    >>> p = ModelPrice("m", 5, 25, 6.25, 10, 0.5, fast_multiplier=6)
    >>> round(call_cost_usd(p, 1_000_000, 0, 0, 0, 0), 6), round(call_cost_usd(p, 0, 0, 0, 0, 1000, fast=True), 6)
    (5.0, 0.15)
    """
    in_mult = out_mult = 1.0
    if long_context and price.long_context_input_multiplier is not None:
        in_mult = price.long_context_input_multiplier
        out_mult = price.long_context_output_multiplier or 1.0
    if fast:
        if price.fast_multiplier is None:
            return None
        in_mult *= price.fast_multiplier
        out_mult *= price.fast_multiplier
    micro = (
        in_mult
        * (
            input_tokens * price.input
            + cache_write_5m_tokens * price.cache_write_5m
            + cache_write_1h_tokens * price.cache_write_1h
            + cache_read_tokens * price.cache_read
        )
        + out_mult * output_tokens * price.output
    )
    return micro / MTOK + web_search_requests * web_search_usd
