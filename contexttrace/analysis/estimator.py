"""Spec 003's token estimate measured against exact counts: the fixed rule and a trace's own chars per token.

Spec 003 estimates the context as characters / 3.5, accumulated over the system prompt, the messages, the
tool inputs and the tool outputs, and says it is "accurate to within ~10 %" and that it should be
calibrated against exact counts where they exist. A trace has the exact counts (every call's prompt
tokens, from usage), so `estimate_trace` measures both, per thread:

* The rule. A trace does not write the system prompt, so the rule starts from the exact prompt of the
  first measured call of each segment (the session start, and the first call after each compaction,
  `/clear` or unmarked drop: `placement.boundaries`) and adds, call by call, the characters that landed
  since the previous call / 3.5: tool results (`tool_results.result_chars`), prompts, attachments and
  compaction summaries (`events.text_chars`), and the previous call's output (`calls.thinking_chars`,
  `text_chars`, `tool_input_chars`). Images are counted in tokens, not characters (w·h / 750, else 1,500,
  as `tokens.result_tokens`; 1,500 per pasted image). Its error at a call is |estimate − prompt| / prompt;
  the anchor calls (exact by construction) are left out. A microcompaction does not reset it: a live
  estimator would not know what was cleared.
* The calibration. On each step (two consecutive measured calls of one segment with no microcompaction
  between), the exact growth less the image tokens is the tokens of the step's characters. The trace's
  chars per token is Σ characters / Σ that growth over the steps that grew; per kind (results, prompts,
  tool inputs) over the steps where that kind holds at least `DOMINANT` of the characters, the rest of the
  step's characters taken at the overall figure, and the previous call's output, when final (a
  `stop_reason` written), at its exact `output_tokens` instead (its characters then weigh nothing); a kind
  with fewer than `MIN_STEPS` such steps has none.
  The error after calibration is the rule's error with the overall figure in place of 3.5 (fitted on the
  same calls it is measured on: an in-sample figure).
* The rates (`calibrated_rates`). What `context sources` estimates its rows with: per kind of content
  (results, prompts, tool inputs, output), the kind's own fit, else the overall fit, else spec 001's
  characters / 4; each with the source it came from.
"""

from __future__ import annotations

import statistics
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.placement import boundaries
from contexttrace.analysis.tokens import result_tokens
from contexttrace.reading.contract import THREAD_MAIN

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: Spec 003's characters per token.
RULE_CHARS_PER_TOKEN = 3.5
#: Share of a step's characters one kind must hold for the step to fit that kind's chars per token.
DOMINANT = 0.8
#: Steps a per-kind fit needs.
MIN_STEPS = 5
#: Decimals kept on the fitted chars per token and the error fractions.
DECIMALS = 4
#: `events` kinds whose text counts as prompts (user-side text: prompts, harness attachments, summaries).
PROMPT_EVENT_KINDS = frozenset({"prompt", "meta", "command", "interrupt", "task_notification", "subagent_prompt",
                                "attachment", "compact_summary"})  # fmt: skip
#: The kinds fitted apart.
KINDS = ("results", "prompts", "inputs")
#: Tokens of a pasted image (spec 001).
PROMPT_IMAGE_TOKENS = 1_500
#: The kinds of content `calibrated_rates` gives a rate for: the fitted `KINDS` and the calls' own output
#: (thinking and text), which has no fit of its own (a step rarely holds mostly output).
RATE_KINDS = ("results", "prompts", "inputs", "output")
#: Spec 001's characters per token: the rate of a kind when the thread has no step to fit on.
SPEC_CHARS_PER_TOKEN = 4
#: Where a rate comes from: the kind's own fit, the thread's overall fit, spec 001's rule.
RATE_SOURCES = ("fit", "overall", "rule")


@dataclass
class _Step:
    """What landed between two calls: characters per kind, image tokens."""

    results: int = 0
    prompts: int = 0
    inputs: int = 0
    output: int = 0  # the previous call's thinking and text
    images: int = 0
    final: int | None = None  # the previous call's exact output tokens when final (a `stop_reason` written)

    @property
    def chars(self) -> int:
        return self.results + self.prompts + self.inputs + self.output


def _landed(trace: Trace, thread: str, seqs: list[int]) -> list[_Step]:
    """Per call of the thread (by seq), what landed after the previous call and before it."""
    steps = [_Step() for _ in seqs]

    def at(seq: int) -> _Step | None:
        k = bisect_right(seqs, seq)
        return steps[k] if k < len(steps) else None

    res = trace.view("tool_results")
    cols = [res.get_column(c).to_list() for c in ("seq", "thread", "result_chars", "result_images",
            "result_image_pixels", "result_images_sized")]  # fmt: skip
    for seq, th, chars, images, pixels, sized in zip(*cols, strict=True):
        step = at(seq) if th == thread else None
        if step is not None:
            step.results += chars or 0
            step.images += result_tokens(0, images, pixels, sized)
    ev = trace.view("events")
    cols = [ev.get_column(c).to_list() for c in ("seq", "thread", "kind", "text_chars", "images")]
    for seq, th, kind, chars, images in zip(*cols, strict=True):
        step = at(seq) if th == thread and kind in PROMPT_EVENT_KINDS else None
        if step is not None:
            step.prompts += chars or 0
            step.images += (images or 0) * PROMPT_IMAGE_TOKENS
    return steps


def _calls(trace: Trace, thread: str) -> list[tuple[int, int | None, int, int, int | None]]:
    """(seq, prompt tokens or None, output chars (thinking + text), tool input chars, output tokens when
    final else None) of the thread's calls."""
    v = trace.view("calls")
    cols = [v.get_column(c).to_list() for c in ("seq", "thread", "prompt_tokens", "thinking_chars", "text_chars",
            "tool_input_chars", "output_tokens", "stop_reason")]  # fmt: skip
    rows = [
        (s, p or None, (t or 0) + (x or 0), i or 0, o if stop is not None and o else None)
        for s, th, p, t, x, i, o, stop in zip(*cols, strict=True)
        if th == thread
    ]
    rows.sort(key=lambda r: r[0])
    return rows


def _segments(trace: Trace, thread: str, calls: list[tuple[int, int | None, int, int, int | None]]) -> list[list[Any]]:
    """Per call: (prompt, step, anchor, fit) — `anchor` a call the rule starts from, `fit` a step to fit on."""
    steps = _landed(trace, thread, [c[0] for c in calls])
    bounds = boundaries(trace, thread)
    restart = {b.call for b in bounds if b.cleared is None}
    micro = {b.call for b in bounds if b.cleared is not None}
    out: list[list[Any]] = []
    anchored = False
    prev_measured = False
    for n, ((_, prompt, *_), step) in enumerate(zip(calls, steps, strict=True), 1):
        if n in restart:
            anchored = prev_measured = False
        if n > 1:
            step.output += calls[n - 2][2]
            step.inputs += calls[n - 2][3]
            step.final = calls[n - 2][4]
        anchor = prompt is not None and not anchored
        fit = prompt is not None and prev_measured and n not in micro
        out.append([prompt, step, anchor, fit])
        anchored = anchored or anchor
        prev_measured = prompt is not None
    return out


def _errors(rows: list[list[Any]], cpt: float) -> list[float]:
    """|estimate − prompt| / prompt of every measured call but the anchors, with `cpt` chars per token."""
    errors, estimate = [], 0.0
    pending = _Step()
    for prompt, step, anchor, _ in rows:
        pending = _Step(pending.results + step.results, pending.prompts + step.prompts, pending.inputs + step.inputs,
                        pending.output + step.output, pending.images + step.images)  # fmt: skip
        if prompt is None:
            continue
        if anchor:
            estimate = float(prompt)
        else:
            estimate += pending.chars / cpt + pending.images
            errors.append(abs(estimate - prompt) / prompt)
        pending = _Step()
    return errors


def _fit(rows: list[list[Any]], prev: list[int | None]) -> tuple[float | None, dict[str, float | None], int]:
    """(overall chars per token, per-kind chars per token, steps fitted)."""
    pairs = []
    for (prompt, step, _, fit), before in zip(rows, prev, strict=True):
        if fit and before is not None and prompt is not None:
            growth = prompt - before - step.images
            if growth > 0 and step.chars > 0:
                pairs.append((step, growth))
    if not pairs:
        return None, dict.fromkeys(KINDS), 0
    overall = sum(s.chars for s, _ in pairs) / sum(g for _, g in pairs)
    kinds: dict[str, float | None] = {}
    for kind in KINDS:
        chosen = [(s, g) for s, g in pairs if getattr(s, kind) >= DOMINANT * _fitted_chars(s)]
        chars = sum(getattr(s, kind) for s, _ in chosen)
        tokens = sum(g - _known(s) - (_fitted_chars(s) - getattr(s, kind)) / overall for s, g in chosen)
        kinds[kind] = round(chars / tokens, DECIMALS) if len(chosen) >= MIN_STEPS and tokens > 0 else None
    return overall, kinds, len(pairs)


def _fitted_chars(step: _Step) -> int:
    """The step's characters a per-kind fit weighs: all of them, less a final output's (its tokens are known)."""
    return step.chars if step.final is None else step.results + step.prompts


def _known(step: _Step) -> int:
    """Tokens of the step known exactly: the previous call's final output (its tool inputs included)."""
    return step.final or 0


def _stats(errors: list[float]) -> tuple[float | None, float | None]:
    if not errors:
        return None, None
    return round(statistics.median(errors), DECIMALS), round(max(errors), DECIMALS)


def estimate_trace(trace: Trace, thread: str = THREAD_MAIN) -> dict[str, Any]:
    """Measure spec 003's estimate on one thread of a trace, and the thread's own chars per token.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    thread
        ``"main"`` or a subagent's id (`calls.thread`).

    Returns
    -------
    dict
        `rule_chars_per_token` (3.5), `calls_compared` (measured calls that are not anchors),
        `rule_median_error` and `rule_worst_error` (fractions 0–1+, None with no call compared),
        `fit_steps` (steps that grew, fitted on), `chars_per_token` (the overall fit, None without a
        step), `results_chars_per_token`, `prompts_chars_per_token`, `inputs_chars_per_token` (None without
        `MIN_STEPS` steps where that kind dominates), `calibrated_median_error`, `calibrated_worst_error`.
        Sources and rules: the module docstring. Never raises on missing values.
    """
    calls = _calls(trace, thread)
    rows = _segments(trace, thread, calls)
    prev: list[int | None] = [None]
    last: int | None = None
    for prompt, *_ in rows[:-1]:
        last = prompt if prompt is not None else last
        prev.append(last)
    rule = _errors(rows, RULE_CHARS_PER_TOKEN)
    cpt, kinds, fitted = _fit(rows, prev[: len(rows)])
    calibrated = _errors(rows, cpt) if cpt else []
    rule_median, rule_worst = _stats(rule)
    cal_median, cal_worst = _stats(calibrated)
    return {
        "rule_chars_per_token": RULE_CHARS_PER_TOKEN,
        "calls_compared": len(rule),
        "rule_median_error": rule_median,
        "rule_worst_error": rule_worst,
        "fit_steps": fitted,
        "chars_per_token": round(cpt, DECIMALS) if cpt else None,
        "results_chars_per_token": kinds["results"],
        "prompts_chars_per_token": kinds["prompts"],
        "inputs_chars_per_token": kinds["inputs"],
        "calibrated_median_error": cal_median,
        "calibrated_worst_error": cal_worst,
    }


def calibrated_rates(estimate: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The characters per token each kind of content is estimated at, and where that figure comes from.

    Parameters
    ----------
    estimate
        `estimate_trace` of the thread (its `chars_per_token` and `<kind>_chars_per_token`).

    Returns
    -------
    dict
        Kind (`RATE_KINDS`) → `chars_per_token` (float > 0) and `source`: ``fit`` (the kind's own fit over
        the steps it dominates), ``overall`` (the thread's overall fit: the kind has fewer than `MIN_STEPS`
        such steps, or is the output, which has no fit of its own), ``rule`` (spec 001's 4: the thread has
        no step that grew). ≈ as every estimate; never raises.

    >>> r = calibrated_rates({"chars_per_token": 2.614, "results_chars_per_token": 2.79,
    ...                       "prompts_chars_per_token": None, "inputs_chars_per_token": 2.46})
    >>> [(k, v["chars_per_token"], v["source"]) for k, v in r.items()]
    [('results', 2.79, 'fit'), ('prompts', 2.614, 'overall'), ('inputs', 2.46, 'fit'), ('output', 2.614, 'overall')]
    >>> calibrated_rates({"chars_per_token": None})["results"]
    {'chars_per_token': 4, 'source': 'rule'}
    """
    overall = estimate.get("chars_per_token")
    out: dict[str, dict[str, Any]] = {}
    for kind in RATE_KINDS:
        own = estimate.get(f"{kind}_chars_per_token")
        if own:
            out[kind] = {"chars_per_token": own, "source": "fit"}
        elif overall:
            out[kind] = {"chars_per_token": overall, "source": "overall"}
        else:
            out[kind] = {"chars_per_token": SPEC_CHARS_PER_TOKEN, "source": "rule"}
    return out
