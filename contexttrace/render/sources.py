"""Text, JSON and the report panel of `context sources`: one table per trace, the reference above it, the
honesty figures and the estimator line under it, and with `--steps` the rows of every call.

Every number is formatted by `render.text` (`fmt_int`, `fmt_tokens`, `fmt_percent`, `fmt_error_percent`,
`fmt_ratio`); estimates carry ≈. The reports come from `reports.sources.build_sources`; nothing here computes a figure.
"""

from __future__ import annotations

from typing import Any

from contexttrace.render.text import (
    fmt_error_percent,
    fmt_int,
    fmt_percent,
    fmt_ratio,
    fmt_tokens,
    json_text,
    pipe_table,
    safe_text,
)
from contexttrace.reports.sources import ROW_LABELS, ROWS, SourcesReport, calls_word
from contexttrace.reports.trace import RunResult

HEADERS = ["source", "tokens", "share"]
#: Short headers of the `--steps` table, one per row of `reports.sources.ROWS`.
STEP_HEADERS: dict[str, str] = {
    "prefix": "prefix",
    "files": "files",
    "bash": "bash",
    "mcp": "mcp",
    "agent": "agent",
    "web": "web",
    "other_results": "o.res",
    "prompts": "prompt",
    "harness": "harn",
    "thinking": "think",
    "tool_inputs": "inputs",
    "prose": "prose",
    "summary": "summ",
    "other": "other",
}


def fmt_reference(ref: dict[str, Any]) -> str:
    """The context reference in words (spec 001).

    >>> fmt_reference({"kind": "compaction", "call": 62, "delta_tokens": -128750})
    'compaction at call 62 (Δcontext -128,750)'
    >>> fmt_reference({"kind": "session_start", "call": 1, "delta_tokens": None})
    'session start'
    """
    if ref["kind"] == "session_start":
        return "session start"
    delta = ref["delta_tokens"]
    shown = f" (Δcontext {fmt_int(delta)})" if delta is not None else ""
    return f"{ref['kind']} at call {fmt_int(ref['call'])}{shown}"


def estimator_line(e: dict[str, Any]) -> str:
    """The estimator's line: spec 003's rule against exact counts, then the calibrated figure, said to be no
    better than the rule when its median error is not below the rule's.

    >>> estimator_line({"rule_chars_per_token": 3.5, "calls_compared": 0, "rule_median_error": None,
    ...     "rule_worst_error": None, "chars_per_token": None})
    'estimator (spec 003, 3.5 chars/token): no call to compare'
    >>> estimator_line({"rule_chars_per_token": 3.5, "calls_compared": 1, "rule_median_error": 0.275,
    ...     "rule_worst_error": 0.275, "chars_per_token": None})
    'estimator (spec 003, 3.5 chars/token): median error 27.5%, worst 27.5% over 1 call; no step to calibrate on'
    """
    head = f"estimator (spec 003, {e['rule_chars_per_token']} chars/token): "
    if not e["calls_compared"]:
        return head + "no call to compare"
    line = (f"{head}median error {fmt_error_percent(e['rule_median_error'])}, worst "
            f"{fmt_error_percent(e['rule_worst_error'])} over {calls_word(e['calls_compared'])}")  # fmt: skip
    if e["chars_per_token"] is None:
        return line + "; no step to calibrate on"
    rule, calibrated = e["rule_median_error"], e["calibrated_median_error"]
    worse = rule is not None and calibrated is not None and calibrated >= rule
    ratios = {k: fmt_ratio(e[f"{k}chars_per_token"]) for k in ("", "results_", "prompts_", "inputs_")}
    errors = {k: fmt_error_percent(e[f"calibrated_{k}_error"]) for k in ("median", "worst")}
    return (f"{line}; calibrated {ratios['']} chars/token (results {ratios['results_']}, prompts "
            f"{ratios['prompts_']}, inputs {ratios['inputs_']}): median {errors['median']}, worst {errors['worst']}"
            + (", no better than the rule" if worse else ""))  # fmt: skip


def _head(r: SourcesReport) -> str:
    thread = "" if r.thread == "main" else f" · thread {r.thread}"
    return (f"call {fmt_int(r.call)} of {fmt_int(r.calls)} ({r.at}){thread} · context {fmt_int(r.context_tokens)} "
            f"tokens · reference: {fmt_reference(r.reference)}")  # fmt: skip


def _notes(r: SourcesReport) -> list[str]:
    out = [f"overflow_raw {fmt_int(r.overflow_raw)} · reconciled {fmt_int(r.reconciled)} · withdrawn "
           f"{fmt_int(r.withdrawn)}"]  # fmt: skip
    if r.reference.get("microcompactions"):
        out.append(f"microcompactions since the reference: {fmt_int(r.reference['microcompactions'])}")
    harness = r.harness_per_turn
    out.append("harness per turn: " + ("- (no human turn since the reference)" if harness is None
                                       else "≈" + fmt_int(round(harness))))  # fmt: skip
    out.append(estimator_line(r.estimator))
    if not r.thinking_exact:
        out.append("thinking ≈: the trace writes no thinking tokens; the thinking it shows is estimated as its "
                   "blocks' characters / 4")  # fmt: skip
    if r.hidden_thinking_calls:
        out.append(f"thinking hidden in {calls_word(r.hidden_thinking_calls)} (blocks with a signature and no "
                   "text): where the output count is final, thinking ≈ output − tool inputs − text / 4; where "
                   "it is a lower bound, in other")  # fmt: skip
    if r.output_lower_bound_calls:
        out.append(f"output a lower bound in {calls_word(r.output_lower_bound_calls)} (no stop_reason, FORMATS "
                   "G2): their thinking, tool inputs and prose ≈ characters / 4, reconciled with the step")  # fmt: skip
    if not r.timestamps_known:
        out.append("times: - (the trace has no timestamps; stream-json writes none)")
    return out


def _steps_table(r: SourcesReport) -> str:
    rows = []
    for s in r.steps:
        src = s["sources"]
        cells = [fmt_int(s["call"]), fmt_int(s["prompt_tokens"])]
        cells += [fmt_int(src[k]) if src is not None else "-" for k in ROWS]
        rows.append(cells)
    return pipe_table(rows, ["call", "context", *(STEP_HEADERS[k] for k in ROWS)], left=0)


def render_sources_table(run: RunResult, steps: bool = False) -> str:
    """Render `context sources`: one block per trace, separated by blank lines.

    Parameters
    ----------
    run
        `RunResult` whose reports are `sources.SourcesReport`s.
    steps
        Also print a table of every call × source (tokens; the ≈ of the rows above applies).

    Returns
    -------
    str
        Per trace: its name, the reference and size, the sources table (≈ on estimated rows), then
        `overflow_raw` / `reconciled` / `withdrawn`, harness per turn and the estimator line
        (`estimator_line`); ``no call to split`` and why when the trace has no call at the moment asked.
    """
    blocks = []
    for r in run.reports:
        lines = [safe_text(r.trace)]
        if r.call is None:
            why = [w for w in r.warnings if w.startswith(("--at", "--thread", "no main-thread call"))]
            lines.append("no call to split" + (f": {safe_text(why[-1])}" if why else ""))
        else:
            lines.append(safe_text(_head(r)))
            cells = [[x["label"], fmt_tokens(x["tokens"], x["estimated"]), fmt_percent(x["share"])]
                     for x in r.sources]  # fmt: skip
            cells.append(["total", fmt_int(r.context_tokens), fmt_percent(1.0 if r.context_tokens else None)])
            lines.append(pipe_table(cells, HEADERS))
            lines.extend(_notes(r))
            if steps and r.steps:
                lines.append(_steps_table(r))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_sources_json(run: RunResult) -> str:
    """Render `context sources --json`: a JSON list, one object per trace (`SourcesReport.to_dict`: steps
    always included), raw numbers, keys in the report's order; always valid UTF-8."""
    return json_text([r.to_dict() for r in run.reports], sort_keys=False)


#: The report panel's columns (docs/report.md: `key`, `label`, `numeric`).
PANEL_COLUMNS = [
    {"key": "source", "label": "source"},
    {"key": "tokens", "label": "tokens", "numeric": True},
    {"key": "share", "label": "share", "numeric": True},
]


def sources_panel_of(r: SourcesReport) -> dict[str, Any] | None:
    """The `context report` panel of one trace's sources: the non-empty sources at its last main-thread call.

    Parameters
    ----------
    r
        From `reports.sources.build_sources` (at the last call).

    Returns
    -------
    dict or None
        A table panel (docs/report.md: `id`, `title`, `kind`, `columns` = `PANEL_COLUMNS`, `rows` with
        `source`, `tokens` (≈ where estimated) and `share`, `note`); None when no call was measured.
    """
    if r.call is None:
        return None
    rows = [{"source": x["label"], "tokens": fmt_tokens(x["tokens"], x["estimated"]),
             "share": fmt_percent(x["share"])} for x in r.sources if x["tokens"]]  # fmt: skip
    return {
        "id": "sources",
        "title": f"Context sources at call {r.call}, since {fmt_reference(r.reference)}",
        "kind": "table",
        "columns": PANEL_COLUMNS,
        "rows": rows,
        "note": "≈: chars / 4 placed on the call that first carried them, reconciled per step (docs/sources.md)",
    }


__all__ = ["ROW_LABELS", "estimator_line", "fmt_reference", "render_sources_json", "render_sources_table",
           "sources_panel_of"]  # fmt: skip
