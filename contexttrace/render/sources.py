"""Text and JSON of `context sources` (issue 12): one table per trace, the reference above it, the honesty
figures and the estimator line under it, and with `--steps` the rows of every call.

Every number is formatted here (`render.fmt_int`, `render.fmt_percent`); estimates carry ≈. The reports
come from `context_sources.build_sources`; nothing here computes a figure.
"""

from __future__ import annotations

from typing import Any

import orjson

from contexttrace.render.trace import _clean, _safe, _table, fmt_int, fmt_percent
from contexttrace.reports.sources import ROW_LABELS, ROWS, SourcesReport, calls_word
from contexttrace.reports.trace import RunResult

HEADERS = ["source", "tokens", "share"]
#: Short headers of the `--steps` table, one per row of `context_sources.ROWS`.
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


def fmt_tokens(tokens: int, estimated: bool) -> str:
    """Tokens with ≈ when estimated (never on 0).

    >>> fmt_tokens(26447, True), fmt_tokens(912, False), fmt_tokens(0, True)
    ('≈26,447', '912', '0')
    """
    return ("≈" if estimated and tokens else "") + fmt_int(tokens)


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


def _pct(value: float | None) -> str:
    """An error fraction as a percentage with one decimal (``0.1446`` → ``"14.5%"``); None → ``"-"``."""
    return "-" if value is None else f"{value * 100:.1f}%"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


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
    line = (f"{head}median error {_pct(e['rule_median_error'])}, worst {_pct(e['rule_worst_error'])} "
            f"over {calls_word(e['calls_compared'])}")  # fmt: skip
    if e["chars_per_token"] is None:
        return line + "; no step to calibrate on"
    rule, calibrated = e["rule_median_error"], e["calibrated_median_error"]
    worse = rule is not None and calibrated is not None and calibrated >= rule
    return (f"{line}; calibrated {_ratio(e['chars_per_token'])} chars/token (results "
            f"{_ratio(e['results_chars_per_token'])}, prompts {_ratio(e['prompts_chars_per_token'])}, inputs "
            f"{_ratio(e['inputs_chars_per_token'])}): median {_pct(e['calibrated_median_error'])}, worst "
            f"{_pct(e['calibrated_worst_error'])}" + (", no better than the rule" if worse else ""))  # fmt: skip


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
    return _table(rows, ["call", "context", *(STEP_HEADERS[k] for k in ROWS)], left=0)


def render_sources_table(run: RunResult, steps: bool = False) -> str:
    """One block per trace: its name, the reference and size, the sources table (≈ on estimated rows),
    `overflow_raw` / `reconciled` / `withdrawn`, harness per turn, the estimator line; with `steps`, a table
    of every call × source (tokens, the ≈ of the rows above applies)."""
    blocks = []
    for r in run.reports:
        lines = [_safe(r.trace)]
        if r.call is None:
            why = [w for w in r.warnings if w.startswith(("--at", "--thread", "no main-thread call"))]
            lines.append("no call to split" + (f": {_safe(why[-1])}" if why else ""))
        else:
            lines.append(_safe(_head(r)))
            cells = [[x["label"], fmt_tokens(x["tokens"], x["estimated"]), fmt_percent(x["share"])]
                     for x in r.sources]  # fmt: skip
            cells.append(["total", fmt_int(r.context_tokens), fmt_percent(1.0 if r.context_tokens else None)])
            lines.append(_table(cells, HEADERS))
            lines.extend(_notes(r))
            if steps and r.steps:
                lines.append(_steps_table(r))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def render_sources_json(run: RunResult) -> str:
    """A JSON list, one object per trace (`SourcesReport.to_dict`: steps always included)."""
    return orjson.dumps(_clean([r.to_dict() for r in run.reports]), option=orjson.OPT_INDENT_2).decode()


def panel_rows(r: SourcesReport) -> list[dict[str, str]]:
    """The HTML panel's rows (`context_sources.sources_panel`): the non-empty sources, formatted."""
    return [{"source": x["label"], "tokens": fmt_tokens(x["tokens"], x["estimated"]),
             "share": fmt_percent(x["share"])} for x in r.sources if x["tokens"]]  # fmt: skip


__all__ = ["ROW_LABELS", "estimator_line", "fmt_reference", "panel_rows", "render_sources_json",
           "render_sources_table"]  # fmt: skip
