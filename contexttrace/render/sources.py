"""Text, JSON and the report panel of `context sources`: one table per trace, the reference above it, the
honesty figures and the estimator line under it, and with `--steps` the rows of every call.

Every number is formatted by `render.text` (`fmt_int`, `fmt_tokens`, `fmt_percent`, `fmt_error_percent`,
`fmt_ratio`); estimates carry ≈. The reports come from `reports.sources.build_sources`; nothing here computes a figure.
"""

from __future__ import annotations

from typing import Any

from contexttrace.reading.contract import FORMAT_CODEX
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
from contexttrace.reports.results import RunResult
from contexttrace.reports.sources import PREFIX_PARTS, ROW_LABELS, ROWS, SourcesReport, calls_word

HEADERS = ["source", "tokens", "share"]
#: Short headers of the `--steps` table, one per row of `reports.sources.ROWS`.
STEP_HEADERS: dict[str, str] = {
    "prefix": "prefix",
    "memory": "memory",
    "skills": "skills",
    "custom_agents": "agents",
    "deferred_tools": "deferred",
    "mcp_instructions": "mcp.in",
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


#: How `calibration_line` names where a rate comes from (`estimator.RATE_SOURCES`).
RATE_WORDS = {"fit": "fit", "overall": "overall fit", "rule": "spec 001's rule"}
#: How `other_line` names each part of `other` (`reports.sources.OTHER_PARTS`).
OTHER_WORDS = {
    "hidden_thinking": "hidden thinking of calls written while streaming",
    "streamed_output": "output of calls written while streaming (their counts lower bounds)",
    "unrecorded": "what the harness adds and the trace does not write (system reminders, message framing)",
}
#: `OTHER_WORDS`' unrecorded part where a format's harness adds something else: a Codex rollout keeps a
#: compaction's summary encrypted (what it holds is resident after the compaction, its size unknown).
UNRECORDED_WORDS = {
    FORMAT_CODEX: "what the harness adds and the rollout does not write (message framing; after a compaction, "
    "its encrypted summary)",
}


def other_words(part: str, fmt: str) -> str:
    """How `other_line` (and the report page) names a part of `other` for a trace of format `fmt`.

    >>> other_words("unrecorded", "codex")[:50]
    'what the harness adds and the rollout does not wri'
    """
    if part == "unrecorded" and fmt in UNRECORDED_WORDS:
        return UNRECORDED_WORDS[fmt]
    return OTHER_WORDS[part]


def calibration_line(calibration: dict[str, Any]) -> str:
    """The rates the rows were estimated at, each with where it comes from.

    >>> calibration_line({"results": {"chars_per_token": 2.79, "source": "fit"},
    ...                   "output": {"chars_per_token": 2.614, "source": "overall"}})
    "rows at the trace's own calibration: results 2.79 chars/token (fit), output 2.61 (overall fit)"
    """
    words = {"inputs": "tool inputs"}
    parts = [f"{words.get(k, k)} {fmt_ratio(v['chars_per_token'])}" + (" chars/token" if not i else "")
             + f" ({RATE_WORDS[v['source']]})" for i, (k, v) in enumerate(calibration.items())]  # fmt: skip
    return "rows at the trace's own calibration: " + ", ".join(parts)


def other_line(r: SourcesReport) -> str | None:
    """What `other` holds, by part (≈ by the step that left it unclaimed); None when it is empty."""
    other = next((x["tokens"] for x in r.sources if x["source"] == "other"), 0)
    if not other:
        return None
    parts = [f"≈{fmt_int(v)} {other_words(k, r.format)}" for k, v in r.other_parts.items() if v]
    return f"other ≈{fmt_int(other)}, no row can claim it: " + "; ".join(parts)


def surface_line(surface: dict[str, Any] | None) -> str | None:
    """What a stream-json run's `system/init` line offered (names and counts, no sizes: the trace has none).

    >>> surface_line({"tools": 57, "mcp_servers": ["gym", "pw"], "agents": 4, "skills": 0, "plugins": []})[:70]
    'start-up (system/init): 57 tools, MCP servers gym, pw, 4 agents, 0 ski'
    """
    if not surface:
        return None
    shown = []
    for key, word in (("tools", "tools"), ("mcp_servers", "MCP servers"), ("agents", "agents"),
                      ("skills", "skills"), ("plugins", "plugins")):  # fmt: skip
        value = surface.get(key)
        if isinstance(value, list):
            if value:
                shown.append(f"{word} {', '.join(safe_text(str(v)) for v in value)}")
        elif value is not None:
            shown.append(f"{fmt_int(value)} {word}")
    if not shown:
        return None
    return f"start-up (system/init): {', '.join(shown)}; their sizes are not in the trace (in the first row)"


def _notes(r: SourcesReport) -> list[str]:
    out = [f"overflow_raw {fmt_int(r.overflow_raw)} · reconciled {fmt_int(r.reconciled)} · withdrawn "
           f"{fmt_int(r.withdrawn)} · netted {fmt_int(r.netted)}"]  # fmt: skip
    if r.calibration:
        out.append(calibration_line(r.calibration))
    other, surface = other_line(r), surface_line(r.surface)
    out.extend(line for line in (other, surface) if line)
    if r.reference.get("microcompactions"):
        out.append(f"microcompactions since the reference: {fmt_int(r.reference['microcompactions'])}")
    harness = r.harness_per_turn
    out.append("harness per turn: " + ("- (no human turn since the reference)" if harness is None
                                       else "≈" + fmt_int(round(harness))))  # fmt: skip
    out.append(estimator_line(r.estimator))
    if not r.thinking_exact:
        out.append("thinking ≈: the trace writes no thinking tokens; the thinking it shows is estimated from its "
                   "blocks' characters")  # fmt: skip
    if r.hidden_thinking_calls:
        out.append(f"thinking hidden in {calls_word(r.hidden_thinking_calls)} (blocks with a signature and no "
                   "text): where the output count is final, thinking ≈ output − tool inputs − text / 4; where "
                   "it is a lower bound, in other")  # fmt: skip
    if r.output_lower_bound_calls:
        out.append(f"output a lower bound in {calls_word(r.output_lower_bound_calls)} (no stop_reason, FORMATS "
                   "G2): their thinking, tool inputs and prose ≈ from their characters, reconciled with the "
                   "step")  # fmt: skip
    if not r.timestamps_known:
        out.append("times: - (the trace has no timestamps; stream-json writes none)")
    return out


def shown_rows(r: SourcesReport) -> tuple[str, ...]:
    """The rows a table shows: every row but the parts of the prefix the trace never fills (they need the
    listings' text, which only newer Claude Code transcripts write)."""
    used = {k for s in r.steps if s["sources"] for k in PREFIX_PARTS if s["sources"][k]}
    return tuple(k for k in ROWS if k not in PREFIX_PARTS or k in used)


def _steps_table(r: SourcesReport) -> str:
    rows = []
    keys = shown_rows(r)
    for s in r.steps:
        src = s["sources"]
        cells = [fmt_int(s["call"]), fmt_int(s["prompt_tokens"])]
        cells += [fmt_int(src[k]) if src is not None else "-" for k in keys]
        rows.append(cells)
    return pipe_table(rows, ["call", "context", *(STEP_HEADERS[k] for k in keys)], left=0)


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
            keys = set(shown_rows(r))
            cells = [[x["label"], fmt_tokens(x["tokens"], x["estimated"]), fmt_percent(x["share"])]
                     for x in r.sources if x["source"] in keys]  # fmt: skip
            cells.append(["total", fmt_int(r.context_tokens), fmt_percent(1.0 if r.context_tokens else None)])
            lines.append(pipe_table(cells, HEADERS))
            lines.extend(_notes(r))
            if steps and r.steps:
                lines.append(_steps_table(r))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


#: The `--view` values: the rows (default), or Claude Code's `/context` categories.
VIEWS = ("rows", "claude")


def _buffer_note(c: dict[str, Any]) -> list[str]:
    constant = c["autocompact_buffer_constant_tokens"]
    if constant is None:
        return ["autocompact buffer: - (not a Claude Code trace: free space is the window less the context)"]
    version = c["cli_version"] or "unknown"
    out = [f"autocompact buffer ≈{fmt_int(constant)}: the constant /context shows for CLI {safe_text(version)} "
           "(≈45,000 before 2.1; ≈33,000 from 2.1, 20,000 kept for the output + 13,000 margin; not written in "
           "the trace, docs/sources.md)"]  # fmt: skip
    compact_at = c["window_tokens"] - constant
    if c["context_tokens"] > compact_at:
        out.append(f"context already inside the autocompact buffer: ≈{fmt_int(c['context_tokens'] - compact_at)} "
                   f"tokens over the point where Claude Code compacts (≈{fmt_int(compact_at)} = window − buffer); "
                   f"the buffer row shows what is left of it, ≈{fmt_int(c['autocompact_buffer_tokens'])}")  # fmt: skip
    return out


def _claude_block(r: SourcesReport) -> list[str]:
    c = r.claude_context or {}
    model = safe_text(c.get("model") or "-")
    head = (f"{model} · {fmt_int(c['context_tokens'])}/{fmt_int(c['window_tokens'])} tokens "
            f"({fmt_percent(c['context_tokens'] / c['window_tokens'] if c['window_tokens'] else None)}) · window: "
            f"{safe_text(c['window_source'])}")  # fmt: skip
    cells = [[x["category"], fmt_tokens(x["tokens"], x["estimated"]), fmt_percent(x["share"])]
             for x in c["categories"]]  # fmt: skip
    lines = [head, pipe_table(cells, ["category", "tokens", "share"]), *_buffer_note(c)]
    lines.append("System prompt + System tools: one lump, not itemised in the trace (the first prompt less what "
                 "it carried); Messages: every row after it")  # fmt: skip
    other = other_line(r)
    lines.extend(x for x in (other, surface_line(r.surface)) if x)
    return lines


def render_sources_claude(run: RunResult) -> str:
    """Render `context sources --view claude`: per trace, the chosen call's rows in Claude Code's `/context`
    words and order (`reports.claude_context`), free space against the effective window and the
    autocompact buffer as the CLI's constant (≈); blocks separated by blank lines.

    Returns
    -------
    str
        Per trace: its name, the call line of the rows view, the `/context` header (``model · used/window
        tokens (share)``), the categories table, the buffer's source, what the prefix and Messages hold,
        `other` by part; ``no call to split`` and why when there is no call.
    """
    blocks = []
    for r in run.reports:
        lines = [safe_text(r.trace)]
        if r.call is None or r.claude_context is None:
            why = [w for w in r.warnings if w.startswith(("--at", "--thread", "no main-thread call"))]
            lines.append("no call to split" + (f": {safe_text(why[-1])}" if why else ""))
        else:
            lines.append(safe_text(_head(r)))
            lines.extend(_claude_block(r))
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
        `source`, `tokens` (≈ where estimated) and `share`, `other` followed by its non-zero parts as
        ``other: <part>`` rows (≈, `OTHER_WORDS`), `note`); None when no call was measured.
    """
    if r.call is None:
        return None
    rows = []
    for x in r.sources:
        if not x["tokens"]:
            continue
        rows.append({"source": x["label"], "tokens": fmt_tokens(x["tokens"], x["estimated"]),
                     "share": fmt_percent(x["share"])})  # fmt: skip
        if x["source"] == "other":  # its parts, in `other_line`'s words, as the CLI names them
            rows += [{"source": f"other: {other_words(k, r.format)}", "tokens": f"≈{fmt_int(v)}",
                      "share": fmt_percent(v / r.context_tokens if r.context_tokens else None)}
                     for k, v in r.other_parts.items() if v]  # fmt: skip
    return {
        "id": "sources",
        "title": f"Context sources at call {r.call}, since {fmt_reference(r.reference)}",
        "kind": "table",
        "columns": PANEL_COLUMNS,
        "rows": rows,
        "note": (
            "≈: characters at the trace's own chars/token, placed on the call that first carried them, "
            "reconciled per step; other: what no row can claim (docs/sources.md)"
        ),
    }


__all__ = ["OTHER_WORDS", "ROW_LABELS", "VIEWS", "calibration_line", "estimator_line", "fmt_reference", "other_line",
           "render_sources_claude", "render_sources_json", "render_sources_table", "sources_panel_of",
           "surface_line"]  # fmt: skip
