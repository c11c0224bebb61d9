"""Start-up by source: each condition's first call split into `context sources`' rows, and the difference.

Spec 004 reads a condition's `first` as what start-up loaded, and first minus the free run's as "what the
guidance costs on every call". This module says what that difference is made of, with the rows `context
sources` builds (`reports.sources.build_sources`; no second attribution): per run the rows at the thread's
first measured call (`first_sources`), per condition their medians, and per other condition their
differences to the baseline (`startup_rows`), with the reading that names them (`startup_reading`).

The rule that keeps a condition's rows summing to its `first`: every row but the prefix is the median of
that row over the condition's runs (≈: text the trace records, at each run's own chars/token), and the
prefix ("system prompt + tools, not itemised in the trace") is the median `first` (exact) less those
medians. With one run a condition, or runs that load the same, that is the run's own prefix row; so the
differences of the rows always sum to the difference of `first`. Pure: plain values in and out, no text.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from contexttrace.reports.stats import plain

if TYPE_CHECKING:  # `context trace` loads `reports.compare` (for `--help`), never the sources report
    from contexttrace.reports.sources import SourcesReport

#: The startup rows' first row: the exact size of the first prompt, which the source rows split.
FIRST = "first"
#: The row that holds what the trace does not itemise: the median `first` less the itemised rows.
PREFIX = "prefix"


def first_sources(report: SourcesReport) -> dict[str, Any] | None:
    """The rows of one run's thread at its first measured call, as `context sources --at N` prints them.

    Parameters
    ----------
    report
        From `reports.sources.build_sources` (any `--at`: the steps are the same).

    Returns
    -------
    dict or None
        `call` (its number, 1-based as `--calls`), `prompt_tokens` (its exact prompt: `first`), `rows`
        (each key of `sources.ROWS` → ≈ tokens; they sum to `prompt_tokens`) and `calibration` (the chars per
        token each kind was estimated at, with its source: `SourcesReport.calibration`); None when no call
        of the thread was measured.

    Examples
    --------
    >>> from contexttrace.reports.sources import SourcesReport
    >>> r = SourcesReport("t", "t", "transcript", None, "main", "last", 1, 1, 100, {}, [], 0, 0, 0, None, True,
    ...                   True, {}, [{"call": 1, "prompt_tokens": 100, "sources": {"prefix": 60, "memory": 40}}])
    >>> first_sources(r)["rows"]
    {'prefix': 60, 'memory': 40}
    """
    for step in report.steps:
        if step["sources"] is not None:
            return {
                "call": step["call"],
                "prompt_tokens": step["prompt_tokens"],
                "rows": dict(step["sources"]),
                "calibration": report.calibration,
            }
    return None


def _median(values: Sequence[int]) -> float | int:
    return plain(statistics.median(values))


def condition_rows(runs: Sequence[dict[str, Any]]) -> dict[str, float | int] | None:
    """One condition's start-up rows: `first` and every row of `sources.ROWS`, over its runs' `first_sources`.

    Returns
    -------
    dict or None
        ``first`` → the median first prompt (tokens, exact per run); every row but the prefix → its median
        over the runs (≈); ``prefix`` → the median first less those (≈, what the trace does not itemise).
        The rows sum to ``first``. None without a run.

    Examples
    --------
    >>> runs = [{"prompt_tokens": 100, "rows": {"prefix": 70, "memory": 30}},
    ...         {"prompt_tokens": 110, "rows": {"prefix": 70, "memory": 40}}]
    >>> r = condition_rows(runs)
    >>> r["first"], r["memory"], r["prefix"]
    (105, 35, 70)
    """
    from contexttrace.reports.sources import ROWS

    if not runs:
        return None
    out: dict[str, float | int] = {FIRST: _median([r["prompt_tokens"] for r in runs])}
    items = {row: _median([r["rows"].get(row, 0) for r in runs]) for row in ROWS if row != PREFIX}
    out[PREFIX] = plain(out[FIRST] - sum(items.values()))
    out.update(items)
    return out


def startup_rows(
    conditions: Sequence[tuple[str, Sequence[dict[str, Any] | None]]], baseline: str
) -> list[dict[str, Any]]:
    """The start-up table of a comparison: per source row and condition, its tokens and its difference.

    Parameters
    ----------
    conditions
        (name, its runs' `first_sources`, None for a run without) per condition, the baseline among them.
    baseline
        The baseline condition's name.

    Returns
    -------
    list of dict
        Source by source (``first``, then ``prefix``, then every row of `sources.ROWS` that is not 0 in some
        condition, in that order), within a source the baseline's row first, then the others in order:
        `source`, `label`, `condition`, `runs` (runs with rows), `tokens` (`condition_rows`; None without a
        run), `delta` (tokens − the baseline's; None on the baseline's row or without runs on a side) and
        `estimated` (every row but ``first``: ≈). The deltas of a condition sum to its ``first``'s delta.
        [] when no condition has a run with rows (or none is given: `first` is not compared).
    """
    from contexttrace.reports.sources import ROW_LABELS, ROWS

    table = {name: condition_rows([r for r in runs if r is not None]) for name, runs in conditions}
    counts = {name: sum(r is not None for r in runs) for name, runs in conditions}
    if not any(table.values()):
        return []
    shown = [FIRST, PREFIX] + [
        row for row in ROWS if row != PREFIX and any(t is not None and t[row] for t in table.values())
    ]
    names = [baseline] + [name for name, _ in conditions if name != baseline]
    base = table[baseline]
    out = []
    for row in shown:
        for name in names:
            figures = table[name]
            tokens = figures[row] if figures is not None else None
            delta = None
            if name != baseline and tokens is not None and base is not None:
                delta = plain(tokens - base[row])
            out.append(
                {
                    "source": row,
                    "label": FIRST if row == FIRST else ROW_LABELS[row],
                    "condition": name,
                    "runs": counts[name],
                    "tokens": tokens,
                    "delta": delta,
                    "estimated": row != FIRST,
                }
            )
    return out


def startup_reading(rows: Sequence[dict[str, Any]], condition: str, baseline: str) -> dict[str, Any] | None:
    """The reading of one condition's start-up by source: what its `first` difference is made of.

    Returns
    -------
    dict or None
        ``kind`` ``startup_sources``, `condition`, `baseline`, `first` (the difference of `first`, exact
        medians), `parts` (the itemised rows that differ: `source`, `label`, `delta`, largest \\|delta\\| first),
        `itemised` (their sum, ≈), `not_itemised` (the prefix row's difference: `first` − `itemised`, ≈);
        None when a side has no run with rows.
    """
    mine = {r["source"]: r for r in rows if r["condition"] == condition}
    first = mine.get(FIRST)
    if first is None or first["delta"] is None:
        return None
    parts = [
        {"source": r["source"], "label": r["label"], "delta": r["delta"]}
        for r in mine.values()
        if r["source"] not in (FIRST, PREFIX) and r["delta"]
    ]
    parts.sort(key=lambda p: -abs(p["delta"]))
    return {
        "kind": "startup_sources",
        "condition": condition,
        "baseline": baseline,
        "first": first["delta"],
        "parts": parts,
        "itemised": plain(sum(p["delta"] for p in parts)),
        "not_itemised": mine[PREFIX]["delta"],
    }
