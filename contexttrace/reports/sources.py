"""What filled the window: spec 001's "Context sources" and "Context anatomy" per model call (`context
sources`).

`build_sources` turns a read `Trace` into a `SourcesReport`: for every call of one thread (the main thread
by default, numbered as `--calls` numbers them) the window's tokens split into `ROWS`, and for the chosen
call (`--at`: the last call, the peak one, or call N) the rows with their shares, the context reference,
and the honesty figures. Pure functions over the tables read through `Trace.view` (plain lists, no
Polars); nothing here prints or formats numbers. docs/sources.md states every rule with its source.

The rules this module owns:

* Items. A tool result is `tokens.result_tokens` (chars / 4, images w·h / 750 or 1,500) in its
  `placement.result_source` row; a prompt (`events` kinds in `PROMPT_KINDS`) is chars / 4 + 1,500 per
  pasted image; an attachment (harness) and the compaction summary (`summary`) are chars / 4. Each is
  placed on the first call of the thread after it (`seq`); an item after the last call is not resident.
* Output. A call's own output is not in its prompt; it lands in the next one. When its `output_tokens` is
  final (`metrics.output_is_lower_bound` false: a `stop_reason` was written) it is split exactly into
  thinking (≈ thinking chars / 4: the trace writes no thinking tokens), tool inputs (input chars / 4,
  capped at the output less thinking) and prose (the rest); a call whose thinking is hidden (its blocks
  carry a signature and no text) gives prose its text chars / 4 and thinking the rest. When the count is a
  streaming placeholder (a lower bound, FORMATS G2) nothing is capped at it: thinking, tool inputs and
  prose are each chars / 4, placed as estimates of the step (hidden thinking then has no estimate).
* Steps. At each measured call the rows carried over plus the previous final outputs leave a gap to the
  exact prompt size; the placed estimates (items, and outputs whose count is a lower bound) fill it,
  scaled down (floor) when they exceed it (`reconciled`), and what they miss goes to `other`. A gap below
  zero (the prompt grew less than the previous output, as when the API drops earlier thinking) places no
  estimate and withdraws the excess from `other`, then `thinking`, then the other rows in proportion
  (`withdrawn`). So the rows sum to the size at every call.
* Exactness. Every row is ≈ but thinking and prose: thinking once a call since the reference wrote
  thinking blocks (visible or hidden), prose once it holds an estimate, a final output less an estimate,
  or less tokens withdrawn (`_Window.prose_estimated`).
* Prefix. The first call's cache read + cache write (spec 001 "Fixed prefix"; its first prompt is inside
  it), else its prompt less what it carried; after a boundary, lowered to that call's size if above it.
* Boundaries (`placement.boundaries`). A compaction, `/clear` or unmarked drop restarts the rows from the
  prefix; a summary lands in its own row `summary`. A microcompaction removes the results it cleared.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.estimator import estimate_trace
from contexttrace.analysis.metrics import output_is_lower_bound
from contexttrace.analysis.placement import Boundary, boundaries, result_source
from contexttrace.analysis.threads import thread_ids, thread_note
from contexttrace.analysis.tokens import CHARS_PER_TOKEN, result_tokens
from contexttrace.reading.contract import THREAD_MAIN
from contexttrace.reports.trace import ReadingDiagnostics, reading_diagnostics

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: The version of each `context sources --json` object (a change of its keys or their types bumps it; 2 added
#: `output_lower_bound_calls` and `hidden_thinking_calls`).
SCHEMA_VERSION = 3

#: The rows, in table order: spec 001's "Context sources", with the compaction summary as its own row.
ROWS = ("prefix", "files", "bash", "mcp", "agent", "web", "other_results", "prompts", "harness", "thinking",
        "tool_inputs", "prose", "summary", "other")  # fmt: skip
#: Each row's label in the table.
ROW_LABELS: dict[str, str] = {
    "prefix": "prefix",
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
#: `events` kinds that are prompts (what a person, a command or the harness wrote as a user message).
PROMPT_KINDS = frozenset({"prompt", "meta", "command", "interrupt", "task_notification", "subagent_prompt"})
#: Tokens of a pasted image whose size the trace does not state (spec 001).
PROMPT_IMAGE_TOKENS = 1_500
#: Withdrawal order of a step whose prompt grew less than the previous output (then the rest in proportion).
WITHDRAW_FIRST = ("other", "thinking")
#: `--at` values besides a call number.
AT_CHOICES = ("last", "peak")
#: Boundaries with a marker line (`placement.boundaries`): what lands after the line is in the new window.
MARKED = frozenset({"compaction", "clear"})


def is_at_choice(at: str) -> bool:
    """Whether `at` is a value `--at` takes: ``last``, ``peak`` or a call number from 1.

    >>> is_at_choice("peak"), is_at_choice("62"), is_at_choice("0"), is_at_choice("first")
    (True, True, False, False)
    """
    return at in AT_CHOICES or (at.isascii() and at.isdigit() and int(at) > 0)


@dataclass(frozen=True)
class _Item:
    seq: int
    row: str
    tokens: int
    tool_use_id: str | None = None
    turn: bool = False  # a prompt the person typed (`events.kind == "prompt"`): a human turn


@dataclass(frozen=True)
class _Call:
    seq: int
    prompt: int | None
    output: int
    cache: int
    thinking: int  # thinking chars / 4 (0 when hidden)
    inputs: int  # tool input chars / 4
    text: int  # text chars / 4
    ts_ms: int | None
    final: bool = True  # `output` is the final count (else a lower bound: `metrics.output_is_lower_bound`)
    has_thinking: bool = False
    hidden: bool = False  # thinking blocks with no text (a signature only, or redacted): the trace hides them


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
            "harness_per_turn": self.harness_per_turn,
            "thinking_exact": self.thinking_exact,
            "output_lower_bound_calls": self.output_lower_bound_calls,
            "hidden_thinking_calls": self.hidden_thinking_calls,
            "timestamps_known": self.timestamps_known,
            "estimator": self.estimator,
            "steps": self.steps,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }


def _calls(trace: Trace, thread: str) -> list[_Call]:
    """The thread's calls by seq; a prompt of 0 (usage unreadable) is None."""
    v = trace.view("calls")
    cols = [v.get_column(c).to_list() for c in ("seq", "thread", "prompt_tokens", "output_tokens",
            "cache_read_tokens", "cache_write_tokens", "has_thinking", "thinking_chars", "tool_input_chars",
            "text_chars", "ts_ms", "stop_reason")]  # fmt: skip
    out = []
    for seq, th, prompt, out_t, cr, cw, has_think, think, inp, text, ts, stop in zip(*cols, strict=True):
        if th != thread:
            continue
        has_think = has_think is True
        thinking = (think or 0) // CHARS_PER_TOKEN if has_think else 0
        out.append(_Call(seq, prompt or None, out_t or 0, (cr or 0) + (cw or 0), thinking,
                         (inp or 0) // CHARS_PER_TOKEN, (text or 0) // CHARS_PER_TOKEN, ts,
                         not output_is_lower_bound(stop), has_think, has_think and not think))  # fmt: skip
    out.sort(key=lambda c: c.seq)
    return out


def _items(trace: Trace, thread: str) -> list[_Item]:
    """The thread's tool results, prompts, attachments and compaction summaries as items to place, by seq."""
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
    items: list[_Item] = []
    res = trace.view("tool_results")
    cols = [res.get_column(c).to_list() for c in ("seq", "thread", "tool_use_id", "result_chars", "result_images",
            "result_image_pixels", "result_images_sized")]  # fmt: skip
    for seq, th, tid, chars, images, pixels, sized in zip(*cols, strict=True):
        if th == thread:
            name, read_path = use_of.get(tid, (None, None)) if tid is not None else (None, None)
            row = result_source(name, read_path)
            items.append(_Item(seq, row, result_tokens(chars, images, pixels, sized), tid))
    ev = trace.view("events")
    cols = [ev.get_column(c).to_list() for c in ("seq", "thread", "kind", "text_chars", "images")]
    for seq, th, kind, chars, images in zip(*cols, strict=True):
        if th != thread:
            continue
        tokens = (chars or 0) // CHARS_PER_TOKEN
        if kind in PROMPT_KINDS:
            items.append(_Item(seq, "prompts", tokens + (images or 0) * PROMPT_IMAGE_TOKENS, None, kind == "prompt"))
        elif kind == "attachment":
            items.append(_Item(seq, "harness", tokens))
        elif kind == "compact_summary":
            items.append(_Item(seq, "summary", tokens))
    items.sort(key=lambda i: i.seq)
    return items


class _Window:
    """The rows of one window as the steps build them (ints), with the raw estimates beside them."""

    def __init__(self, prefix: int) -> None:
        self.rows = dict.fromkeys(ROWS, 0)
        self.rows["prefix"] = prefix
        self.raw = prefix  # what the rows would sum to with no reconciliation and no withdrawal
        self.placed: dict[str, tuple[str, int, int]] = {}  # tool_use_id → (row, placed, raw)
        self.reconciled = 0
        self.withdrawn = 0
        self.turn_prompts = 0
        self.thinking_estimated = False  # a call with thinking blocks (visible or hidden) since the reference
        self.prose_estimated = False  # prose holds an estimate, or a final output less estimates (finding 3)

    def remove(self, cleared: frozenset[str]) -> None:
        """Take the results a microcompaction cleared off their rows."""
        for tid in cleared:
            found = self.placed.pop(tid, None)
            if found is not None:
                row, placed, raw = found
                self.rows[row] -= min(placed, self.rows[row])
                self.raw -= raw

    def add_output(self, call: _Call) -> list[_Item]:
        """The previous call's output, now part of the prompt: thinking, tool inputs, prose. A final count is
        split into the rows; a lower bound is returned as three estimates for the step to place."""
        self.thinking_estimated |= call.has_thinking
        if not call.final:
            self.prose_estimated = True
            estimates = (("thinking", call.thinking), ("tool_inputs", call.inputs), ("prose", call.text))
            return [_Item(call.seq, row, tokens) for row, tokens in estimates if tokens]
        if call.hidden:  # the output holds thinking the trace does not show: prose is the text, thinking the rest
            inputs = min(call.inputs, call.output)
            prose = min(call.text, call.output - inputs)
            thinking = call.output - inputs - prose
        else:
            thinking = min(call.thinking, call.output)
            inputs = min(call.inputs, call.output - thinking)
            prose = call.output - thinking - inputs
        self.prose_estimated |= bool(thinking or inputs or call.hidden)
        for row, tokens in (("thinking", thinking), ("tool_inputs", inputs), ("prose", prose)):
            self.rows[row] += tokens
        self.raw += call.output
        return []

    def step(self, size: int, items: list[_Item]) -> None:
        """Place `items` so that the rows sum to `size` (module docstring, "Steps")."""
        gap = size - sum(self.rows.values())
        total = sum(i.tokens for i in items)
        self.raw += total
        self.turn_prompts += sum(i.turn for i in items)
        if gap < 0:
            self.reconciled += total
            self._withdraw(-gap)
            return
        keep = total <= gap
        placed = 0
        for i in items:
            tokens = i.tokens if keep else i.tokens * gap // total
            self.rows[i.row] += tokens
            if i.tool_use_id is not None:
                self.placed[i.tool_use_id] = (i.row, tokens, i.tokens)
            placed += tokens
        self.reconciled += total - placed
        self.rows["other"] += gap - placed

    def _withdraw(self, excess: int) -> None:
        self.withdrawn += excess
        for row in WITHDRAW_FIRST:
            take = min(excess, self.rows[row])
            self.rows[row] -= take
            excess -= take
        rest = [r for r in ROWS if r not in WITHDRAW_FIRST and r != "prefix" and self.rows[r] > 0]
        pool = sum(self.rows[r] for r in rest)
        if excess and pool:
            share = min(excess, pool)
            taken = 0
            prose = self.rows["prose"]
            for r in rest:
                take = self.rows[r] * share // pool
                self.rows[r] -= take
                taken += take
            for r in sorted(rest, key=lambda r: -self.rows[r]):
                if taken >= share:
                    break
                take = min(share - taken, self.rows[r])
                self.rows[r] -= take
                taken += take
            excess -= taken
            self.prose_estimated |= self.rows["prose"] < prose
        self.rows["prefix"] -= min(excess, self.rows["prefix"])


@dataclass(frozen=True)
class _Snap:
    """The window at one measured call."""

    rows: dict[str, int]
    overflow_raw: int
    reconciled: int
    withdrawn: int
    turns: int
    reference: dict[str, Any]
    thinking_estimated: bool = False
    prose_estimated: bool = False


def _reference(b: Boundary | None, first: _Call | None) -> dict[str, Any]:
    if b is None:
        return {"kind": "session_start", "call": 1 if first else None, "delta_tokens": None,
                "ts_ms": first.ts_ms if first else None, "microcompactions": 0}  # fmt: skip
    return {"kind": b.kind, "call": b.call, "delta_tokens": b.delta, "ts_ms": b.ts_ms, "microcompactions": 0}


def _walk(calls: list[_Call], items: list[_Item], bounds: list[Boundary]) -> list[_Snap | None]:
    """The window at every call of the thread (None for a call whose usage could not be read)."""
    full = {b.call: b for b in bounds if b.cleared is None and b.call is not None}
    micro: dict[int, list[frozenset[str]]] = {}
    for b in bounds:
        if b.cleared is not None and b.call is not None:
            micro.setdefault(b.call, []).append(b.cleared)
    seqs = [i.seq for i in items]
    pos, prev_seq = 0, -1
    win: _Window | None = None
    prefix0: int | None = None
    waiting: list[_Item] = []  # items landed on calls whose usage could not be read
    outputs: list[_Call] = []  # outputs not yet carried into a measured prompt
    reference = _reference(None, calls[0] if calls else None)
    snaps: list[_Snap | None] = []
    for n, c in enumerate(calls, 1):
        end = bisect_right(seqs, c.seq)
        landed, pos = waiting + items[pos:end], end
        opened = full.get(n)
        if opened is not None:
            cut = opened.seq if opened.kind in MARKED else prev_seq
            landed = [i for i in landed if i.seq > cut]
            win, outputs, reference = None, [], _reference(opened, c)
        for cleared in micro.get(n, ()):
            reference["microcompactions"] += 1
            if win is not None:
                win.remove(cleared)
        prev_seq = c.seq
        if c.prompt is None:
            waiting, outputs = landed, [*outputs, c]
            snaps.append(None)
            continue
        if win is None:
            if prefix0 is None:
                prefix0 = min(c.cache, c.prompt) if c.cache else max(0, c.prompt - sum(i.tokens for i in landed))
            win = _Window(min(prefix0, c.prompt))
        estimates = [i for o in outputs for i in win.add_output(o)]
        win.step(c.prompt, estimates + landed)
        waiting, outputs = [], [c]
        snaps.append(_Snap(dict(win.rows), max(0, win.raw - c.prompt), win.reconciled, win.withdrawn,
                           win.turn_prompts, dict(reference), win.thinking_estimated, win.prose_estimated))  # fmt: skip
    return snaps


def _chosen(at: str, calls: list[_Call]) -> tuple[int | None, str | None]:
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
    trace writes no thinking tokens), prose when `prose_estimated` (`_Window.prose_estimated`).

    >>> r = source_rows(dict.fromkeys(ROWS, 0) | {"prefix": 750, "files": 250}, 1000)
    >>> [(x["source"], x["tokens"], x["share"], x["estimated"]) for x in r[:2]]
    [('prefix', 750, 0.75, True), ('files', 250, 0.25, True)]
    """
    exact = {"thinking": not thinking_estimated, "prose": not prose_estimated}
    return [
        {"source": row, "label": ROW_LABELS[row], "tokens": rows[row],
         "share": rows[row] / size if size else None, "estimated": not exact.get(row, False)}
        for row in ROWS
    ]  # fmt: skip


def build_sources(
    trace: Trace, window: int | None = None, at: str = "last", thread: str = THREAD_MAIN
) -> SourcesReport:
    """Compute the `context sources` readings of one trace.

    Parameters
    ----------
    trace
        A trace from `read_trace`.
    window
        Unused: no figure here depends on the window's size (the runner passes `--window` to every build).
    at
        The call whose window the rows describe: ``"last"`` (the thread's last measured call), ``"peak"``
        (its largest prompt, the first on ties) or a call number (``"62"``, 1-based as `--calls`).
    thread
        Whose window is read: ``"main"`` or an id of `thread_ids` (a subagent's thread key, its agent id,
        ``agent-<id>``, or the Task / Agent tool_use id that started it). An id the trace lacks gives no
        rows, a warning naming the trace's threads and `thread_found` False.

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
    del window
    if not is_at_choice(at):
        raise ValueError(f"--at {at!r}: last, peak or a call number from 1")
    at = at if at in AT_CHOICES else str(int(at))  # `--at 007` is call 7
    ids = thread_ids(trace)
    found = thread in ids
    thread = ids.get(thread, thread)
    calls = _calls(trace, thread)
    snaps = _walk(calls, _items(trace, thread), boundaries(trace, thread))
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
    return SourcesReport(
        trace=trace.name, path=trace.path, format=trace.format, session_id=trace.session_id, thread=thread,
        at=at, call=k + 1 if k is not None else None, calls=len(calls), context_tokens=size,
        reference=snap.reference if snap is not None else _reference(None, None),
        sources=source_rows(snap.rows, size or 0, snap.thinking_estimated, snap.prose_estimated) if snap else [],
        overflow_raw=snap.overflow_raw if snap else 0, reconciled=snap.reconciled if snap else 0,
        withdrawn=snap.withdrawn if snap else 0, harness_per_turn=harness,
        thinking_exact=not any(c.has_thinking for c in calls),
        timestamps_known=any(c.ts_ms is not None for c in calls),
        output_lower_bound_calls=sum(not c.final for c in calls), hidden_thinking_calls=sum(c.hidden for c in calls),
        estimator=estimate_trace(trace, thread), steps=steps, **reading_diagnostics(trace, warnings),
        thread_found=found, thread_list=[k for k, v in ids.items() if k == v],
    )  # fmt: skip


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
