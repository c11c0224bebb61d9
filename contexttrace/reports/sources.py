"""What filled the window: spec 001's "Context sources" and "Context anatomy" per model call (`context
sources`).

`build_sources` turns a read `Trace` into a `SourcesReport`: for every call of one thread (the main thread
by default, numbered as `--calls` numbers them) the window's tokens split into `ROWS`, and for the chosen
call (`--at`: the last call, the peak one, or call N) the rows with their shares, the context reference,
and the honesty figures. Pure functions over the tables read through `Trace.view` (plain lists, no
Polars); nothing here prints or formats numbers. docs/sources.md states every rule with its source.

The rules this module owns (the steps themselves: `reports.sources_walk`):

* Calibration. Every estimate is characters ÷ the thread's own characters per token
  (`estimator.calibrated_rates`): tool results at the results' fit, prompts, attachments and summaries at
  the prompts', tool inputs at the inputs', thinking and text at the overall fit; a kind with too few
  steps takes the overall fit, a thread with no step spec 001's 4 (`calibration` says which).
* Items. A tool result is its characters at that rate plus its images (w·h / 750, else 1,500) in its
  `placement.result_source` row; a prompt (`events` kinds in `PROMPT_KINDS`) adds 1,500 per pasted
  image; an attachment is its listing's row (`ATTACHMENT_ROWS`: memory files, skills, custom agents,
  deferred tools, MCP instructions) or `harness`; the compaction summary is `summary`. Each is placed on
  the first call of the thread after it (`seq`); an item after the last call is not resident.
* Output. A call's own output is not in its prompt; it lands in the next one. When its `output_tokens` is
  final (`metrics.output_is_lower_bound` false: a `stop_reason` was written) it is split exactly into
  thinking (≈ its characters at the rate: the trace writes no thinking tokens), tool inputs (capped at the
  output less thinking) and prose (the rest); a call whose thinking is hidden (its blocks carry a
  signature and no text) gives prose its text and thinking the rest. When the count is a streaming
  placeholder (a lower bound, FORMATS G2) nothing is capped at it: thinking, tool inputs and prose are
  each estimated and placed as estimates of the step (hidden thinking then has no estimate).
* Prefix. The first measured call's prompt less what it carried (its estimates): the system prompt and the
  tool schemas, which no trace writes (a stream-json run's `-p` prompt too); after a boundary, lowered to
  that call's size if above it.
* Exactness. Every row is ≈ but thinking and prose: thinking once a call since the reference wrote
  thinking blocks (visible or hidden), prose once it holds an estimate, a final output less an estimate,
  or less tokens withdrawn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.estimator import calibrated_rates, estimate_trace
from contexttrace.analysis.metrics import output_is_lower_bound
from contexttrace.analysis.placement import boundaries, result_source
from contexttrace.analysis.threads import thread_ids, thread_note
from contexttrace.analysis.tokens import result_tokens
from contexttrace.analysis.window import window_choice
from contexttrace.reading.contract import THREAD_MAIN
from contexttrace.reports.claude_context import claude_categories
from contexttrace.reports.results import ReadingDiagnostics
from contexttrace.reports.sources_walk import OTHER_PARTS, ROWS, Call, Item, reference_of, walk
from contexttrace.reports.trace import reading_diagnostics

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: The version of each `context sources --json` object (a change of its keys or their types bumps it; 2 added
#: `output_lower_bound_calls` and `hidden_thinking_calls`).
SCHEMA_VERSION = 3

#: The rows a harness listing fills (`ATTACHMENT_ROWS`): the parts of the prefix the trace writes the text of.
PREFIX_PARTS = ("memory", "skills", "custom_agents", "deferred_tools", "mcp_instructions")
#: Each row's label in the table.
ROW_LABELS: dict[str, str] = {
    "prefix": "system prompt + tools, not itemised in the trace",
    "memory": "memory files",
    "skills": "skills",
    "custom_agents": "custom agents",
    "deferred_tools": "deferred tools",
    "mcp_instructions": "mcp instructions",
    "files": "files",
    "bash": "bash output",
    "mcp": "mcp results",
    "agent": "agent returns",
    "web": "web",
    "other_results": "other results",
    "prompts": "prompts",
    "harness": "harness",
    "thinking": "thinking",
    "tool_inputs": "tool inputs",
    "prose": "prose",
    "summary": "summary",
    "other": "other",
}
#: `events.attachment_type` → its row: the listings Claude Code's `/context` counts apart from the messages
#: (the memory files loaded at start-up or after a compaction, a CLAUDE.md read in a subfolder; the skill,
#: agent, deferred tool and MCP instruction listings). Every other attachment is `harness`.
ATTACHMENT_ROWS: dict[str, str] = {
    "instructions": "memory",
    "nested_memory": "memory",
    "skill_listing": "skills",
    "agent_listing_delta": "custom_agents",
    "deferred_tools_delta": "deferred_tools",
    "mcp_instructions_delta": "mcp_instructions",
}
#: `events` kinds that are prompts (what a person, a command or the harness wrote as a user message).
PROMPT_KINDS = frozenset({"prompt", "meta", "command", "interrupt", "task_notification", "subagent_prompt"})
#: Tokens of a pasted image whose size the trace does not state (spec 001).
PROMPT_IMAGE_TOKENS = 1_500
#: `--at` values besides a call number.
AT_CHOICES = ("last", "peak")


def is_at_choice(at: str) -> bool:
    """Whether `at` is a value `--at` takes: ``last``, ``peak`` or a call number from 1.

    >>> is_at_choice("peak"), is_at_choice("62"), is_at_choice("0"), is_at_choice("first")
    (True, True, False, False)
    """
    return at in AT_CHOICES or (at.isascii() and at.isdigit() and int(at) > 0)


@dataclass(frozen=True)
class SourcesReport(ReadingDiagnostics):
    """The `context sources` readings of one trace and thread (plain values; keys as docs/sources.md).

    `steps`: one dict per call of the thread (`call`, `prompt_tokens`, `sources`: row → tokens, None for a
    call whose usage could not be read). `sources`: the chosen call's rows (`source`, `label`, `tokens`,
    `share`, `estimated`); [] when no call was chosen. `output_lower_bound_calls` and
    `hidden_thinking_calls` count the thread's calls written with no `stop_reason` and with thinking
    blocks that carry no text. `thread_found` and `thread_list` (not in the JSON) say whether `--thread`
    named a thread of this trace, and which threads it has (`unknown_thread`).
    """

    trace: str
    path: str
    format: str
    session_id: str | None
    thread: str
    at: str
    call: int | None
    calls: int
    context_tokens: int | None
    reference: dict[str, Any]
    sources: list[dict[str, Any]]
    overflow_raw: int
    reconciled: int
    withdrawn: int
    harness_per_turn: float | None
    thinking_exact: bool
    timestamps_known: bool
    estimator: dict[str, Any]
    steps: list[dict[str, Any]]
    output_lower_bound_calls: int = 0
    hidden_thinking_calls: int = 0
    netted: int = 0
    calibration: dict[str, Any] = field(default_factory=dict)
    other_parts: dict[str, int] = field(default_factory=dict)
    surface: dict[str, Any] | None = None
    claude_context: dict[str, Any] | None = None
    thread_found: bool = True  # `thread` names a thread of the trace (not in the JSON: `unknown_thread`)
    thread_list: list[str] = field(default_factory=list)  # the trace's thread keys, main first

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this trace (docs/sources.md)."""
        return {
            "schema_version": SCHEMA_VERSION,
            **self.facts,
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "thread": self.thread,
            "at": self.at,
            "call": self.call,
            "calls": self.calls,
            "context_tokens": self.context_tokens,
            "reference": self.reference,
            "sources": self.sources,
            "overflow_raw": self.overflow_raw,
            "reconciled": self.reconciled,
            "withdrawn": self.withdrawn,
            "netted": self.netted,
            "harness_per_turn": self.harness_per_turn,
            "thinking_exact": self.thinking_exact,
            "output_lower_bound_calls": self.output_lower_bound_calls,
            "hidden_thinking_calls": self.hidden_thinking_calls,
            "timestamps_known": self.timestamps_known,
            "estimator": self.estimator,
            "calibration": self.calibration,
            "other_parts": self.other_parts,
            "surface": self.surface,
            "claude_context": self.claude_context,
            "steps": self.steps,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }


def tokens_at(chars: int | None, chars_per_token: float) -> int:
    """≈ tokens of `chars` characters at `chars_per_token` (floor; 0 for none).

    >>> tokens_at(1000, 2.5), tokens_at(None, 4), tokens_at(7, 4)
    (400, 0, 1)
    """
    return int((chars or 0) / chars_per_token)


def _calls(trace: Trace, thread: str, rates: dict[str, float]) -> list[Call]:
    """The thread's calls by seq, their outputs' parts at the thread's rates; a prompt of 0 (usage
    unreadable) is None."""
    v = trace.view("calls")
    cols = [v.get_column(c).to_list() for c in ("seq", "thread", "prompt_tokens", "output_tokens",
            "has_thinking", "thinking_chars", "tool_input_chars", "text_chars", "ts_ms", "stop_reason")]  # fmt: skip
    out = []
    output, inputs = rates["output"], rates["inputs"]
    for seq, th, prompt, out_t, has_think, think, inp, text, ts, stop in zip(*cols, strict=True):
        if th != thread:
            continue
        has_think = has_think is True
        thinking = tokens_at(think, output) if has_think else 0
        out.append(Call(seq, prompt or None, out_t or 0, thinking, tokens_at(inp, inputs),
                         tokens_at(text, output), ts, not output_is_lower_bound(stop), has_think,
                         has_think and not think))  # fmt: skip
    out.sort(key=lambda c: c.seq)
    return out


def _items(trace: Trace, thread: str, rates: dict[str, float]) -> list[Item]:
    """The thread's tool results, prompts, attachments and compaction summaries as items to place, by seq,
    at the thread's rates (results: `results`; prompts, attachments and summaries: `prompts`)."""
    uses = trace.view("tool_uses")
    use_of = {
        tid: (name, rp)
        for tid, name, rp in zip(
            uses.get_column("tool_use_id").to_list(),
            uses.get_column("name").to_list(),
            uses.get_column("read_path").to_list(),
            strict=True,
        )
        if tid is not None
    }
    items: list[Item] = []
    res = trace.view("tool_results")
    cols = [res.get_column(c).to_list() for c in ("seq", "thread", "tool_use_id", "result_chars", "result_images",
            "result_image_pixels", "result_images_sized")]  # fmt: skip
    for seq, th, tid, chars, images, pixels, sized in zip(*cols, strict=True):
        if th == thread:
            name, read_path = use_of.get(tid, (None, None)) if tid is not None else (None, None)
            row = result_source(name, read_path)
            tokens = tokens_at(chars, rates["results"]) + result_tokens(0, images, pixels, sized)
            items.append(Item(seq, row, tokens, tid))
    ev = trace.view("events")
    cols = [ev.get_column(c).to_list() for c in ("seq", "thread", "kind", "text_chars", "images", "attachment_type")]
    for seq, th, kind, chars, images, attached in zip(*cols, strict=True):
        if th != thread:
            continue
        tokens = tokens_at(chars, rates["prompts"])
        if kind in PROMPT_KINDS:
            items.append(Item(seq, "prompts", tokens + (images or 0) * PROMPT_IMAGE_TOKENS, None, kind == "prompt"))
        elif kind == "attachment":
            items.append(Item(seq, ATTACHMENT_ROWS.get(attached, "harness"), tokens))
        elif kind == "compact_summary":
            items.append(Item(seq, "summary", tokens))
    items.sort(key=lambda i: i.seq)
    return items


def _chosen(at: str, calls: list[Call]) -> tuple[int | None, str | None]:
    """(0-based index of the chosen call, or None; a warning when `at` names no measured call)."""
    measured = [k for k, c in enumerate(calls) if c.prompt is not None]
    if not measured:
        return None, None
    if at == "last":
        return measured[-1], None
    if at == "peak":
        return max(measured, key=lambda k: (calls[k].prompt or 0, -k)), None
    n = int(at)
    if not 1 <= n <= len(calls):
        return None, f"--at {n}: the thread has {calls_word(len(calls))}"
    if calls[n - 1].prompt is None:
        return None, f"--at {n}: call {n}'s usage could not be read (its prompt size is unknown)"
    return n - 1, None


def calls_word(n: int) -> str:
    """``"1 call"``, ``"2 calls"``: a count of calls in words.

    >>> calls_word(1), calls_word(139)
    ('1 call', '139 calls')
    """
    return f"{n:,} call" + ("" if n == 1 else "s")


def source_rows(
    rows: dict[str, int], size: int, thinking_estimated: bool = False, prose_estimated: bool = False
) -> list[dict[str, Any]]:
    """The rows of one call as the JSON lists them: `source` (a key of `ROWS`), `label`, `tokens`, `share`
    (tokens / size, 0–1, None when the size is 0) and `estimated` (≈): every row but thinking and prose
    (spec 001); thinking when `thinking_estimated` (a call since the reference wrote thinking blocks: the
    trace writes no thinking tokens), prose when `prose_estimated` (`Window.prose_estimated`).

    >>> r = source_rows(dict.fromkeys(ROWS, 0) | {"prefix": 750, "files": 250}, 1000)
    >>> [(x["source"], x["tokens"], x["share"], x["estimated"]) for x in r if x["tokens"]]
    [('prefix', 750, 0.75, True), ('files', 250, 0.25, True)]
    """
    exact = {"thinking": not thinking_estimated, "prose": not prose_estimated}
    return [
        {"source": row, "label": ROW_LABELS[row], "tokens": rows[row],
         "share": rows[row] / size if size else None, "estimated": not exact.get(row, False)}
        for row in ROWS
    ]  # fmt: skip


def build_sources(
    trace: Trace, window: int | None = None, at: str = "last", thread: str = THREAD_MAIN, calibrated: bool = True
) -> SourcesReport:
    """Compute the `context sources` readings of one trace.

    Parameters
    ----------
    trace
        A trace from `read_trace`.
    window
        `--window` in tokens, or None: only the `/context` view reads it (`claude_context`: its free space,
        against `analysis.window.window_choice`); the rows never depend on the window.
    at
        The call whose window the rows describe: ``"last"`` (the thread's last measured call), ``"peak"``
        (its largest prompt, the first on ties) or a call number (``"62"``, 1-based as `--calls`).
    thread
        Whose window is read: ``"main"`` or an id of `thread_ids` (a subagent's thread key, its agent id,
        ``agent-<id>``, or the Task / Agent tool_use id that started it). An id the trace lacks gives no
        rows, a warning naming the trace's threads and `thread_found` False.
    calibrated
        True: estimate at the thread's own characters per token (`estimator.calibrated_rates`); False:
        at spec 001's 4 for every kind (the rule the fit falls back to).

    Returns
    -------
    SourcesReport
        Every figure as the module docstring defines it; a trace or thread with no call has no rows
        (`call` None) and a warning, never an error. `at` as given, a number without its leading zeros;
        `thread` the thread's key (`calls.thread`) when the id names one, else the id as given.

    Raises
    ------
    ValueError
        `at` is neither ``last``, ``peak`` nor a positive integer.
    """
    if not is_at_choice(at):
        raise ValueError(f"--at {at!r}: last, peak or a call number from 1")
    at = at if at in AT_CHOICES else str(int(at))  # `--at 007` is call 7
    ids = thread_ids(trace)
    found = thread in ids
    thread = ids.get(thread, thread)
    estimator = estimate_trace(trace, thread)
    calibration = calibrated_rates(estimator if calibrated else {})
    rates = {kind: r["chars_per_token"] for kind, r in calibration.items()}
    calls = _calls(trace, thread, rates)
    snaps = walk(calls, _items(trace, thread, rates), boundaries(trace, thread))
    k, note = _chosen(at, calls)
    warnings = list(trace.warnings) + ([note] if note else [])
    if not calls:
        warnings.append(thread_note(thread, ids) if not found or thread == THREAD_MAIN
                        else f"--thread {thread}: the thread has no model call: no window to split")  # fmt: skip
    snap = snaps[k] if k is not None else None
    size = calls[k].prompt if k is not None else None
    steps = [
        {"call": n, "prompt_tokens": c.prompt, "sources": s.rows if s is not None else None}
        for n, (c, s) in enumerate(zip(calls, snaps, strict=True), 1)
    ]
    harness = snap.rows["harness"] / snap.turns if snap is not None and snap.turns else None
    view = None
    if snap is not None and k is not None:
        choice = window_choice(trace, window)
        view = claude_categories(snap.rows, size or 0, (choice.tokens, choice.source), trace.format,
                                 trace.cli_version, _model(trace, calls[k].seq))  # fmt: skip
    return SourcesReport(
        trace=trace.name, path=trace.path, format=trace.format, session_id=trace.session_id, thread=thread,
        at=at, call=k + 1 if k is not None else None, calls=len(calls), context_tokens=size,
        reference=snap.reference if snap is not None else reference_of(None, None),
        sources=source_rows(snap.rows, size or 0, snap.thinking_estimated, snap.prose_estimated) if snap else [],
        overflow_raw=snap.overflow_raw if snap else 0, reconciled=snap.reconciled if snap else 0,
        withdrawn=snap.withdrawn if snap else 0, netted=snap.netted if snap else 0, harness_per_turn=harness,
        thinking_exact=not any(c.has_thinking for c in calls),
        timestamps_known=any(c.ts_ms is not None for c in calls),
        output_lower_bound_calls=sum(not c.final for c in calls), hidden_thinking_calls=sum(c.hidden for c in calls),
        estimator=estimator, steps=steps, **reading_diagnostics(trace, warnings),
        calibration=calibration, other_parts=dict(snap.other_parts) if snap else dict.fromkeys(OTHER_PARTS, 0),
        surface=trace.surface if thread == THREAD_MAIN else None, claude_context=view,
        thread_found=found, thread_list=[k for k, v in ids.items() if k == v],
    )  # fmt: skip


def _model(trace: Trace, seq: int) -> str | None:
    """The model of the call at `seq` (`calls.model`), else the one the start-up line names."""
    v = trace.view("calls")
    for s, m in zip(v.get_column("seq").to_list(), v.get_column("model").to_list(), strict=True):
        if s == seq and m:
            return str(m)
    return (trace.surface or {}).get("model")


def unknown_thread(reports: list[SourcesReport], thread: str) -> str | None:
    """The usage error of a `--thread` id that names a thread of none of the traces read (the CLI exits 2
    with it), listing the threads they have; None when some trace has it, or no trace was read.

    >>> r = SourcesReport("t", "t", "transcript", None, "x", "last", None, 0, None, {}, [], 0, 0, 0, None,
    ...                   True, True, {}, [], thread_found=False, thread_list=["main", "a1"])
    >>> unknown_thread([r], "x")
    "'x' names no thread of the traces read; their threads: main, a1 (or a Task / Agent tool_use id that started one)"
    """
    if not reports or any(r.thread_found for r in reports):
        return None
    known = list(dict.fromkeys(k for r in reports for k in r.thread_list))
    shown = ", ".join(known[:20]) + (", …" if len(known) > 20 else "")
    return (f"{thread!r} names no thread of the traces read; their threads: {shown} (or a Task / Agent "
            "tool_use id that started one)")  # fmt: skip
