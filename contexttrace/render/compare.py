"""Turn a `compare.Comparison` into text: the table and what is printed under it, CSV, JSON, stderr notes.

All of `context compare`'s number formatting and sentences live here; `compare` holds only data.
Renderers return `str` (or lines for stderr) and never print. The table is a GitHub pipe table, as
`context trace`'s, so the output pastes as markdown.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from contexttrace.reading.contract import FORMAT_CODEX, FORMAT_GEMINI, FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT
from contexttrace.render.compare_startup import startup_sentence, startup_table
from contexttrace.render.text import (
    TABLE_FORMAT,
    fmt_figure,
    fmt_p,
    fmt_percent_change,
    fmt_usd,
    json_text,
    safe_text,
)
from contexttrace.reports import compare as cmp
from contexttrace.reports.stats import ALPHA, CI_LEVEL, MIN_RUNS_FOR_TEST, RESAMPLES, SEED
from contexttrace.reports.surface import SURFACE_FIELDS
from contexttrace.select.views import CompareFormat

#: How a metric is named in the table and the readings (its key is the JSON and CSV name).
LABELS = {"result_chars": "result chars", "cost_usd": "cost", "health_score": "health", "repeat": "repeated calls"}

#: Columns of the CSV: every key of a row (`compare.metric_row`), in this order.
CSV_COLUMNS = [
    "metric", "condition", "runs", "unit", "median", "min", "max", "delta", "delta_pct", "noise",
    "within_noise", "p_value", "ci_low", "ci_high", "verdict", "lower_bound_runs",
]  # fmt: skip

_HEADERS = ["metric", "condition", "runs", "median", "range", "Δ", "Δ %", "verdict", "p", "95% CI"]
_ALIGN = ["left", "left", "right", "right", "right", "right", "right", "left", "right", "right"]


def label(metric: str) -> str:
    """The name a metric prints as (``cost_usd`` → ``cost``)."""
    return LABELS.get(metric, metric)


# -- cells -----------------------------------------------------------------------------------------


def p_phrase(p: float | None) -> str:
    """A p-value in a sentence: ``p = 0.03``, ``p < 0.001``; empty without one.

    >>> p_phrase(0.0312), p_phrase(0.0004), p_phrase(None)
    ('p = 0.03', 'p < 0.001', '')
    """
    if p is None:
        return ""
    text = fmt_p(p)
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def _median_cell(row: dict[str, Any]) -> str:
    if row["unit"] == "usd" and row["median"] is not None:
        return fmt_usd(row["median"], lower_bound=row["lower_bound_runs"] > 0)
    return fmt_figure(row["median"], row["unit"])


def _range_cell(row: dict[str, Any]) -> str:
    if row["min"] is None:
        return "–"
    if row["unit"] == "usd":  # a cost as every cost prints (`fmt_usd`), its mark once before the range: ≥ when a
        # run's cost is a lower bound, as the median's
        lower = row["lower_bound_runs"] > 0
        return f"{fmt_usd(row['min'], lower_bound=lower)}–{fmt_usd(row['max'], estimate=False)}"
    return f"{fmt_figure(row['min'], row['unit'])}–{fmt_figure(row['max'], row['unit'])}"


def _pct_cell(pct: float | None) -> str:
    """``+11.5%``, ``0%``; ``–`` when the baseline's median is 0 (no percentage of nothing)."""
    if pct is None:
        return "–"
    return "0%" if pct == 0 else fmt_percent_change(pct)


def verdict_cell(row: dict[str, Any]) -> str:
    """The verdict (`stats.verdict`) in the table: with a rank test ``beyond noise`` / ``within noise`` (p
    beside it decides), without one against the band, ``beyond ±342`` / ``within ±342``; ``same`` (Δ 0),
    ``same median`` (Δ 0 yet p < 0.05); ``–`` with nothing to judge by."""
    v = row.get("verdict")
    if v is None:
        return "–"
    if v in ("same", "same_median"):
        return v.replace("_", " ")
    word = "beyond" if v == "beyond_noise" else "within"
    if row["p_value"] is not None or row["noise"] is None:
        return f"{word} noise"
    return f"{word} ±{fmt_figure(row['noise'], row['unit'])}"


def ci_cell(row: dict[str, Any]) -> str:
    """The 95 % CI of Δ as ``[-1,249, +62,422]`` (`fmt_figure`: whole tokens); ``–`` without one."""
    if row["ci_low"] is None:
        return "–"
    return f"[{fmt_figure(row['ci_low'], row['unit'], True)}, {fmt_figure(row['ci_high'], row['unit'], True)}]"


def table_row(row: dict[str, Any], baseline: str) -> list[str]:
    """One row (`compare.metric_row`) as the table's cells, in `_HEADERS` order; the baseline's row leaves
    the difference's cells empty."""
    is_base = row["condition"] == baseline
    pct = row["delta_pct"]
    return [
        label(row["metric"]),
        row["condition"],
        str(row["runs"]),
        _median_cell(row),
        _range_cell(row),
        "baseline" if is_base else fmt_figure(row["delta"], row["unit"], signed=True),
        "" if is_base else _pct_cell(pct),
        "" if is_base else verdict_cell(row),
        "" if is_base else fmt_p(row["p_value"]),
        "" if is_base else ci_cell(row),
    ]


# -- renderers -------------------------------------------------------------------------------------


def render_compare(comparison: cmp.Comparison, fmt: CompareFormat = CompareFormat.TABLE) -> str:
    """Render a comparison for stdout in one format.

    Parameters
    ----------
    comparison
        From `compare.compare`.
    fmt
        `CompareFormat`: the table (`render_compare_table`), markdown (the same table, headings under it),
        CSV (`render_compare_csv`) or JSON (`render_compare_json`).

    Returns
    -------
    str
        The output, ending without a newline; always valid UTF-8.
    """
    if fmt is CompareFormat.JSON:
        return render_compare_json(comparison)
    if fmt is CompareFormat.CSV:
        return render_compare_csv(comparison)
    return render_compare_table(comparison, markdown=fmt is CompareFormat.MARKDOWN)


def render_compare_table(comparison: cmp.Comparison, markdown: bool = False) -> str:
    """The comparison table, then the readings, the surface differences and a legend.

    Parameters
    ----------
    comparison
        From `compare.compare`.
    markdown
        Titles under the table as markdown headings (``#### Readings``) rather than lines ending in ``:``.

    Returns
    -------
    str
        A pipe table: one row per metric and condition (metric by metric, each condition's rows
        together): runs, median, range (min–max), and for the other conditions Δ (median − the
        baseline's), Δ %, noise (``within``/``beyond`` the runs' spread, ``–`` with one run a side), p (rank
        test) and the 95 % CI of Δ (``–`` below `stats.MIN_RUNS_FOR_TEST` runs a side). Cost medians carry
        ≈ (list prices), ≥ when a run's cost is a lower bound. Then, after blank lines, the readings as
        ``- `` lines, the start-up by source (`compare_startup.startup_table`), the surface as ``- `` lines,
        and the legend.
    """
    from tabulate import tabulate  # imported here, as in `text.pipe_table`: start-up of the other commands

    rows = [table_row(r, comparison.baseline) for r in comparison.rows]
    table = tabulate(rows, headers=_HEADERS, tablefmt=TABLE_FORMAT, disable_numparse=True, colalign=_ALIGN)
    parts = [table]
    title = (lambda t: f"#### {t}") if markdown else (lambda t: f"{t}:")
    lines = readings_text(comparison)
    if lines:
        parts.append("\n".join([title("Readings (medians over the runs; spec 004)"), *(f"- {x}" for x in lines)]))
    startup = startup_table(comparison.startup, comparison.baseline, markdown)
    parts.extend([startup] if startup else [])
    lines = surface_text(comparison)
    if lines:
        parts.append(
            "\n".join([title("Surface (what start-up offered, from system/init)"), *(f"- {x}" for x in lines)])
        )
    parts.append(_legend(markdown))
    return safe_text("\n\n".join(parts))


def _legend(markdown: bool) -> str:
    text = (
        f"verdict: with {MIN_RUNS_FOR_TEST} runs on each side the rank test decides (beyond the noise when "
        f"p < {ALPHA}); with fewer, Δ (median − the baseline's median) against ±N, the wider of the two "
        "conditions' interquartile ranges (the middle half of their runs); same: Δ 0 (same median: Δ 0, yet "
        "p < 0.05 finds the runs shifted). p: two-sided Mann–Whitney U; 95% CI: bootstrap interval of Δ; "
        f"both need {MIN_RUNS_FOR_TEST} runs on each side. docs/compare.md says how to read them."
    )
    return f"_{text}_" if markdown else text


def render_compare_csv(comparison: cmp.Comparison) -> str:
    """The rows (`compare.metric_row`) as CSV, columns `CSV_COLUMNS`, raw numbers (empty for None).

    Readings, surface and warnings are not rows: `render_compare_notes` gives them for stderr.
    """
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in comparison.rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return safe_text(out.getvalue().rstrip("\n"))


def compare_dict(comparison: cmp.Comparison) -> dict[str, Any]:
    """The `--json` object (docs/compare.md names every key): raw numbers, and each reading, surface
    difference and warning also as the sentence the table prints."""
    base = comparison.baseline
    return {
        "schema_version": cmp.SCHEMA_VERSION,
        "baseline": base,
        "metrics": comparison.metrics,
        "statistics": {
            "noise": "iqr",
            "test": "mann-whitney-u",
            "alternative": "two-sided",
            "min_runs": MIN_RUNS_FOR_TEST,
            "ci": "bootstrap-percentile",
            "ci_level": CI_LEVEL,
            "alpha": ALPHA,
            "resamples": RESAMPLES,
            "seed": SEED,
        },
        "conditions": [
            {
                "name": c.name,
                "paths": c.paths,
                "runs": [_run_dict(r) for r in c.runs],
                "no_call": c.no_call,
                "failures": c.failures,
                "surface": c.surface,
            }
            for c in comparison.conditions
        ],
        "rows": comparison.rows,
        "startup": comparison.startup,
        "readings": [
            {
                "kind": r["kind"],
                "condition": r["condition"],
                "baseline": r.get("baseline"),
                "metrics": [x["metric"] for x in r["rows"]] if "rows" in r else ["first"],
                "text": _reading(r),
            }
            for r in comparison.readings
        ],
        "surface": {
            "within": [{**d, "text": _within_text(d)} for d in comparison.surface_within],
            "between": [
                {
                    "condition": b["condition"],
                    "baseline": b["baseline"],
                    "differences": [{**d, "text": _difference_text(d)} for d in b["differences"]],
                    "text": _between_text(b),
                }
                for b in comparison.surface_between
            ],
        },
        "warnings": [_warning_text(w) for w in comparison.warnings],
    }


def _run_dict(run: cmp.RunFigures) -> dict[str, Any]:
    out: dict[str, Any] = {"trace": run.trace, "path": run.path}
    for key, metric in cmp.METRICS.items():
        out[key] = metric.value(run)
    out["cost_is_lower_bound"] = bool(cmp.METRICS["cost_usd"].lower_bound(run))
    out["first_sources"] = run.sources
    return out


def render_compare_json(comparison: cmp.Comparison) -> str:
    """Render `context compare --json`: the `compare_dict` object, indented, keys sorted, raw numbers.

    Returns
    -------
    str
        JSON, valid UTF-8 whatever the traces held (`text.json_text`).
    """
    return json_text(compare_dict(comparison))


def render_compare_notes(comparison: cmp.Comparison, fmt: CompareFormat = CompareFormat.TABLE) -> list[str]:
    """Lines for stderr: each warning (``warning:``, or ``note:`` for the baseline checks); with CSV, which
    has no room for them, the readings and the surface differences too."""
    out: list[str] = []
    if fmt is CompareFormat.CSV:
        out.extend(f"reading: {x}" for x in readings_text(comparison))
        out.extend(f"surface: {x}" for x in surface_text(comparison))
    for w in comparison.warnings:
        prefix = "note" if w["kind"] in ("baseline_offers", "same_start", "mixed_agents") else "warning"
        out.append(f"{prefix}: {_warning_text(w)}")
    return [safe_text(x) for x in out]


# -- sentences -------------------------------------------------------------------------------------


def readings_text(comparison: cmp.Comparison) -> list[str]:
    """The readings (`compare.readings`) as sentences, one per reading."""
    return [_reading(r) for r in comparison.readings]


def _judged(row: dict[str, Any]) -> str:
    """``beyond the noise, p = 0.002``: the verdict (`stats.verdict`) and the p it rests on, for the
    sentences; empty when there is no verdict."""
    v = row.get("verdict")
    if v is None:
        return ""
    words = {
        "beyond_noise": "beyond the noise",
        "within_noise": "within the noise",
        "same": "the same",
        "same_median": "the same median, though the rank test finds the runs shifted",
    }[v]
    p = p_phrase(row["p_value"])
    return f"{words}, {p}" if p else words


def _reading(r: dict[str, Any]) -> str:
    if r["kind"] == "baseline":
        row, offered = r["row"], _offered(r["offers"])
        head = (
            f"{r['condition']}: start-up loads {fmt_figure(row['median'], 'tokens')} tokens before any work "
            f"(first, {row['runs']} run{'s' if row['runs'] != 1 else ''})"
        )
        if offered:
            return head + f"; not the harness's own baseline: it offers {offered}, which a free workspace does not"
        return head + ": in an empty workspace, that is the harness's own baseline"
    if r["kind"] == "startup":
        row = r["row"]
        base_median = row["median"] - row["delta"]
        figures = f"first: {fmt_figure(row['median'], 'tokens')} − {fmt_figure(base_median, 'tokens')}"
        head = f"{r['condition']} − {r['baseline']}: "
        if row["verdict"] in ("same", "same_median"):
            p = p_phrase(row["p_value"]) if row["verdict"] == "same_median" else ""
            shifted = f"; the rank test finds the runs shifted, {p}" if p else ""
            return head + f"start-up is the same size ({figures}{shifted})"
        judged = _judged(row)
        figures += f"; {judged}" if judged else ""
        verb = "costs" if row["delta"] > 0 else "saves"
        size = fmt_figure(abs(row["delta"]), "tokens")
        return head + f"what start-up loads {verb} ≈ {size} tokens on every call ({figures})"
    if r["kind"] == "startup_sources":
        return startup_sentence(r)
    return f"{r['condition']} − {r['baseline']}, over the run: " + run_phrase(r["rows"])


#: How a run reading names a metric whose medians are the same.
_SAME = {"calls": "the same number of calls", "peak": "the same peak", "cost_usd": "the same cost"}


def _amount(row: dict[str, Any]) -> str:
    """One difference as words: ``a peak 4,100 tokens higher``, ``2 fewer calls``, ``cost ≈$0.0500 higher``."""
    size, up = abs(row["delta"]), row["delta"] > 0
    if row["metric"] == "peak":
        return f"a peak {fmt_figure(size, 'tokens')} tokens {'higher' if up else 'lower'}"
    if row["metric"] == "calls":
        return f"{fmt_figure(size, 'calls')} {'more' if up else 'fewer'} call{'' if size == 1 else 's'}"
    if row["metric"] == "cost_usd":
        return f"cost ≈{fmt_figure(size, 'usd')} {'higher' if up else 'lower'}"
    return f"{label(row['metric'])} {fmt_figure(size, row['unit'])} {'higher' if up else 'lower'}"


def run_phrase(rows: list[dict[str, Any]]) -> str:
    """Each metric's difference with its verdict, in `compare.RUN_METRICS` order, ``; ``-separated:
    ``a peak 11,186 tokens lower (beyond the noise); 2 more calls (within the noise); the same cost``."""
    parts = []
    for row in rows:
        if row["verdict"] in ("same", "same_median"):
            name = _SAME.get(row["metric"], f"the same {label(row['metric'])}")
            p = p_phrase(row["p_value"]) if row["verdict"] == "same_median" else ""
            parts.append(name + (f" (as a median; the rank test finds the runs shifted, {p})" if p else ""))
            continue
        judged = _judged(row)
        parts.append(_amount(row) + (f" ({judged})" if judged else ""))
    return "; ".join(parts)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


#: How each surface field is named: (one, several).
_SURFACE_NAMES = {
    "tools": ("tool", "tools"),
    "skills": ("skill", "skills"),
    "agents": ("agent", "agents"),
    "slash_commands": ("slash command", "slash commands"),
    "mcp_servers": ("MCP server", "MCP servers"),
    "plugins": ("plugin", "plugins"),
    "model": ("model", "model"),
    "cli_version": ("CLI version", "CLI version"),
    "permission_mode": ("permission mode", "permission mode"),
}


def _shown(value: Any) -> str:
    if value is None:
        return "not recorded"
    if isinstance(value, list):
        return ", ".join(value) if value else "none"
    return str(value)


def _difference_text(d: dict[str, Any]) -> str:
    """``+2 MCP servers: figma, github``, ``+1 skill``, ``model a → b``."""
    one, several = _SURFACE_NAMES[d["field"]]
    kind = SURFACE_FIELDS[d["field"]]
    if kind == "count" and d["baseline"] is not None and d["value"] is not None:
        n = d["value"] - d["baseline"]
        return f"{n:+d} {one if abs(n) == 1 else several}"
    if "added" in d:
        signed = [("+", d["added"]), ("-", d["removed"])]
        return "; ".join(
            f"{sign}{len(names)} {one if len(names) == 1 else several}: {', '.join(names)}"
            for sign, names in signed
            if names
        )
    return f"{several} {_shown(d['baseline'])} → {_shown(d['value'])}"


def _between_text(b: dict[str, Any]) -> str:
    if not b["differences"]:
        return f"{b['condition']}: the same surface as {b['baseline']}"
    return f"{b['condition']} differs from {b['baseline']} in: " + "; ".join(
        _difference_text(d) for d in b["differences"]
    )


#: What a trace format is called where a condition's runs recorded no `system/init` (no start-up listing).
_NO_INIT_FORMATS = {
    FORMAT_TRANSCRIPT: "session transcripts",
    FORMAT_STREAM_JSON: "stream-json without system/init",
    FORMAT_CODEX: "Codex CLI rollouts",
    FORMAT_GEMINI: "Gemini CLI sessions",
}


def surface_text(comparison: cmp.Comparison) -> list[str]:
    """What the conditions differ in (spec 004's surface), one line per condition against the baseline,
    and a line per condition whose runs recorded no `system/init`, naming what they are (session
    transcripts, Codex CLI rollouts, Gemini CLI sessions: none of these writes one)."""
    out = [_between_text(b) for b in comparison.surface_between]
    for c in comparison.conditions:
        if c.surface is not None and all(c.surface.get(k) is None for k in ("tools", "mcp_servers", "plugins")):
            kinds = dict.fromkeys(_NO_INIT_FORMATS.get(r.report.format, r.report.format) for r in c.runs)
            out.append(
                f"{c.name}: its runs recorded no system/init ({', '.join(kinds) or 'no run'}): only the model "
                "and CLI version are compared"
            )
    return out


def _within_text(d: dict[str, Any]) -> str:
    several = _SURFACE_NAMES[d["field"]][1]
    shown = []
    for i, g in enumerate(d["values"]):
        n = len(g["runs"])
        runs = f"{n} run{'s' if n != 1 else ''}"
        if i:  # the runs that differ from the most common value, named (up to three)
            runs += ": " + ", ".join(g["runs"][:3]) + (", ..." if n > 3 else "")
        shown.append(f"{_shown(g['value'])} ({runs})")
    return (
        f"condition {d['condition']}: its runs differ in {several}: "
        + "; ".join(shown)
        + (". Runs that differ there are not the same condition (spec 004)")
    )


def _offered(offers: dict[str, Any]) -> str:
    """``MCP servers a, b and plugins c``; empty when nothing is offered."""
    parts = []
    if offers["mcp_servers"]:
        parts.append(f"MCP servers {', '.join(offers['mcp_servers'])}")
    if offers["plugins"]:
        parts.append(f"plugins {', '.join(offers['plugins'])}")
    return " and ".join(parts)


def _warning_text(w: dict[str, Any]) -> str:
    kind = w["kind"]
    if kind == "no_runs":
        why = []
        if w["no_call"]:
            why.append(f"{w['no_call']} with no model call")
        if w["failures"]:
            why.append(f"{w['failures']} could not be read")
        reason = f" ({'; '.join(why)})" if why else ""
        return f"condition {w['condition']}: no run to compare in {', '.join(w['paths'])}{reason}"
    if kind == "no_call":
        n = len(w["runs"])
        names = ", ".join(w["runs"][:3]) + (", ..." if n > 3 else "")
        return f"condition {w['condition']}: {n} run(s) with no model call left out of every figure: {names}"
    if kind == "shared_run":
        return f"{w['trace']} is a run of {_and(w['conditions'])}: conditions should not share runs"
    if kind == "surface_within":
        return _within_text(w)
    if kind == "baseline_offers":
        return (
            f"baseline {w['condition']} offers {_offered(w)} at start-up, which a free workspace does "
            "not: user-level settings load into every run. For a free baseline point CLAUDE_CONFIG_DIR at an "
            "empty directory (spec 004)"
        )
    if kind == "mixed_agents":
        return _mixed_text(w)
    # same_start
    row = w["row"]
    base_median = row["median"] - row["delta"]
    how = "within the noise" if row["verdict"] == "within_noise" else "the same"
    surface = "; the same surface" if w["same_surface"] else ""
    c, b = w["condition"], w["baseline"]
    return (
        f"{c} starts as {b} does (first {fmt_figure(row['median'], 'tokens')} vs {fmt_figure(base_median, 'tokens')}, "
        f"{how}{surface}). If {c} should load more (a CLAUDE.md, skills, MCP servers), either it did not, or {b} "
        f"loaded it too: a CLAUDE.md in {b}'s working directory or any directory above it, or a user-level "
        f"~/.claude/CLAUDE.md. Run {b} in a directory with no guidance file above it (the system temp dir "
        "usually qualifies) with CLAUDE_CONFIG_DIR pointing at an empty directory (spec 004)"
    )


def _mixed_text(w: dict[str, Any]) -> str:
    """One line: which agents each condition ran, and what is therefore not comparable."""
    agents = "; ".join(f"{c}: {', '.join(names)}" for c, names in w["agents"].items() if names)
    windows = _and([fmt_figure(x, "tokens") for x in w["windows"]])
    held = f"held against windows of {windows} tokens" if len(w["windows"]) > 1 else "held against one window"
    return (
        f"the conditions mix agents ({agents}): first, peak and growth are counted by each agent's own "
        f"tokenizer and {held}, so their differences compare the agents as much as the conditions"
    )
