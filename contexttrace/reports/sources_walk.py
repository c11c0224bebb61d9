"""The steps of `context sources`: the rows of one thread's window built call by call (docs/sources.md).

`walk` takes the thread's calls and items (their tokens already estimated by `reports.sources`) and its
boundaries, and returns the window at every call:

* Steps. At each measured call the rows carried over plus the previous final outputs leave a gap to the
  exact prompt size; the placed estimates (items, and outputs whose count is a lower bound) fill it. When
  they exceed it they first take back what earlier steps left in `other` (`netted`: a calibration's
  errors run both ways), then are scaled down (floor, `reconciled`); what they miss goes to `other`, as the
  part the step names (`OTHER_PARTS`). A gap below zero (the prompt grew less than the previous output, as
  when the API drops earlier thinking) places no estimate and withdraws the excess from `other`, then
  `thinking`, then the other rows in proportion (`withdrawn`). So the rows sum to the size at every call.
* Boundaries (`placement.boundaries`). A compaction, `/clear` or unmarked drop restarts the rows from the
  prefix; a summary lands in its own row `summary`. A microcompaction removes the results it cleared.

Pure: plain values in, plain values out; nothing here reads a trace or prints.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from contexttrace.analysis.placement import Boundary

#: The rows, in table order: the prefix (split as Claude Code's `/context` splits it, where the trace writes the
#: parts), then spec 001's "Context sources", with the compaction summary as its own row.
ROWS = ("prefix", "memory", "skills", "custom_agents", "deferred_tools", "mcp_instructions", "files", "bash", "mcp",
        "agent", "web", "other_results", "prompts", "harness", "thinking", "tool_inputs", "prose", "summary",
        "other")  # fmt: skip
#: The parts of `other` (`other_parts`), named for what the step that left them unclaimed carried: the output
#: of a call written while streaming whose thinking the trace hides, the output of one written while streaming
#: (its count a lower bound), else what the harness adds and the trace does not write (system reminders).
OTHER_PARTS = ("hidden_thinking", "streamed_output", "unrecorded")
#: Withdrawal order of a step whose prompt grew less than the previous output (then the rest in proportion).
WITHDRAW_FIRST = ("other", "thinking")
#: Boundaries with a marker line (`placement.boundaries`): what lands after the line is in the new window.
MARKED = frozenset({"compaction", "clear"})


@dataclass(frozen=True)
class Item:
    """One piece of content to place: its seq, row, ≈ tokens, tool_use_id, whether a typed prompt."""

    seq: int
    row: str
    tokens: int
    tool_use_id: str | None = None
    turn: bool = False  # a prompt the person typed (`events.kind == "prompt"`): a human turn


@dataclass(frozen=True)
class Call:
    """One call of the thread: its exact prompt (None: unreadable) and output, its output's ≈ parts."""

    seq: int
    prompt: int | None
    output: int
    thinking: int  # ≈ thinking tokens at the output rate (0 when hidden)
    inputs: int  # ≈ tool input tokens at the inputs rate
    text: int  # ≈ text tokens at the output rate
    ts_ms: int | None
    final: bool = True  # `output` is the final count (else a lower bound: `metrics.output_is_lower_bound`)
    has_thinking: bool = False
    hidden: bool = False  # thinking blocks with no text (a signature only, or redacted): the trace hides them


class Window:
    """The rows of one window as the steps build them (ints), with the raw estimates beside them."""

    def __init__(self, prefix: int) -> None:
        self.rows = dict.fromkeys(ROWS, 0)
        self.rows["prefix"] = prefix
        self.other_parts = dict.fromkeys(OTHER_PARTS, 0)  # `other` by the step that left it (sums to it)
        self.raw = prefix  # what the rows would sum to with no reconciliation and no withdrawal
        self.placed: dict[str, tuple[str, int, int]] = {}  # tool_use_id → (row, placed, raw)
        self.reconciled = 0
        self.withdrawn = 0
        self.netted = 0  # tokens of `other` an overshooting step took back
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

    def add_output(self, call: Call) -> list[Item]:
        """The previous call's output, now part of the prompt: thinking, tool inputs, prose. A final count is
        split into the rows; a lower bound is returned as three estimates for the step to place."""
        self.thinking_estimated |= call.has_thinking
        if not call.final:
            self.prose_estimated = True
            estimates = (("thinking", call.thinking), ("tool_inputs", call.inputs), ("prose", call.text))
            return [Item(call.seq, row, tokens) for row, tokens in estimates if tokens]
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

    def step(self, size: int, items: list[Item], cause: str = "unrecorded") -> None:
        """Place `items` so that the rows sum to `size` (module docstring, "Steps"); what they leave goes to
        `other` as the part `cause` (`OTHER_PARTS`)."""
        gap = size - sum(self.rows.values())
        total = sum(i.tokens for i in items)
        self.raw += total
        self.turn_prompts += sum(i.turn for i in items)
        if gap < 0:
            self.reconciled += total
            self._withdraw(-gap)
            return
        if total > gap and self.rows["other"]:  # an overshoot first takes back what earlier steps left unclaimed
            back = min(total - gap, self.rows["other"])
            self.rows["other"] -= back
            self._take_other(back)
            self.netted += back
            gap += back
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
        self.other_parts[cause] += gap - placed

    def _take_other(self, take: int) -> None:
        """Take `take` tokens off `other`'s parts in proportion (floor, the remainder from the largest)."""
        whole = sum(self.other_parts.values())
        taken = {k: v * take // whole for k, v in self.other_parts.items()} if whole else {}
        for k, v in taken.items():
            self.other_parts[k] -= v
        left = take - sum(taken.values())
        for k in sorted(OTHER_PARTS, key=lambda k: -self.other_parts[k]):
            step = min(left, self.other_parts[k])
            self.other_parts[k] -= step
            left -= step

    def _withdraw(self, excess: int) -> None:
        self.withdrawn += excess
        for row in WITHDRAW_FIRST:
            take = min(excess, self.rows[row])
            self.rows[row] -= take
            excess -= take
            if row == "other":
                self._take_other(take)
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
class Snap:
    """The window at one measured call."""

    rows: dict[str, int]
    overflow_raw: int
    reconciled: int
    withdrawn: int
    turns: int
    reference: dict[str, Any]
    thinking_estimated: bool = False
    prose_estimated: bool = False
    other_parts: dict[str, int] = field(default_factory=dict)
    netted: int = 0


def reference_of(b: Boundary | None, first: Call | None) -> dict[str, Any]:
    """The context reference (spec 001) a boundary opens, or the session start's (`b` None)."""
    if b is None:
        return {"kind": "session_start", "call": 1 if first else None, "delta_tokens": None,
                "ts_ms": first.ts_ms if first else None, "microcompactions": 0}  # fmt: skip
    return {"kind": b.kind, "call": b.call, "delta_tokens": b.delta, "ts_ms": b.ts_ms, "microcompactions": 0}


def _cause(outputs: list[Call]) -> str:
    """The part of `other` a step's unclaimed growth is (`OTHER_PARTS`), by the outputs it carried."""
    streamed = [o for o in outputs if not o.final]
    if any(o.hidden for o in streamed):
        return "hidden_thinking"
    return "streamed_output" if streamed else "unrecorded"


def walk(calls: list[Call], items: list[Item], bounds: list[Boundary]) -> list[Snap | None]:
    """The window at every call of the thread, in call order (None for a call whose usage could not be
    read); rules: the module docstring."""
    full = {b.call: b for b in bounds if b.cleared is None and b.call is not None}
    micro: dict[int, list[frozenset[str]]] = {}
    for b in bounds:
        if b.cleared is not None and b.call is not None:
            micro.setdefault(b.call, []).append(b.cleared)
    seqs = [i.seq for i in items]
    pos, prev_seq = 0, -1
    win: Window | None = None
    prefix0: int | None = None
    waiting: list[Item] = []  # items landed on calls whose usage could not be read
    outputs: list[Call] = []  # outputs not yet carried into a measured prompt
    reference = reference_of(None, calls[0] if calls else None)
    snaps: list[Snap | None] = []
    for n, c in enumerate(calls, 1):
        end = bisect_right(seqs, c.seq)
        landed, pos = waiting + items[pos:end], end
        opened = full.get(n)
        if opened is not None:
            cut = opened.seq if opened.kind in MARKED else prev_seq
            landed = [i for i in landed if i.seq > cut]
            win, outputs, reference = None, [], reference_of(opened, c)
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
                prefix0 = max(0, c.prompt - sum(i.tokens for i in landed))
            win = Window(min(prefix0, c.prompt))
        estimates = [i for o in outputs for i in win.add_output(o)]
        win.step(c.prompt, estimates + landed, _cause(outputs))
        waiting, outputs = [], [c]
        snaps.append(Snap(dict(win.rows), max(0, win.raw - c.prompt), win.reconciled, win.withdrawn,
                           win.turn_prompts, dict(reference), win.thinking_estimated, win.prose_estimated,
                           dict(win.other_parts), win.netted))  # fmt: skip
    return snaps
