"""The context window a trace is measured against: which one, and where that choice came from.

One rule for every figure that divides by the window (fill, health's Context Fill, weather's
ctx_pressure, usage's context share): `--window` when given; else what the trace states (a `result`
line's `modelUsage[model].contextWindow`; the window its reader read from it, `Trace.window_tokens`, such as
a Codex rollout's `model_context_window` or Gemini CLI's model table, unless the trace's own steady peak
exceeds it; a model id ending in ``[1m]``); else Claude Code's default, raised to the 1M window when a
steady main-thread prompt exceeds it. Pure: nothing here prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from contexttrace.analysis.counts import count_of, shown_value
from contexttrace.analysis.frame_rows import main_rows
from contexttrace.analysis.metrics import measured, spike_indexes

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: Claude Code's default context window; a larger one is an opt-in that transcripts do not record.
DEFAULT_WINDOW_TOKENS = 200_000

#: The window assumed when a steady main-thread prompt exceeds the default (spec 000's "auto-detected from
#: session peak"): a context above 200,000 tokens can only be held by the 1M window.
LARGE_WINDOW_TOKENS = 1_000_000

#: The largest context window, in tokens, taken from `--window` (the CLI refuses more) or from a trace
#: (`window_choice` leaves a larger `contextWindow` out): ten times the largest window a Claude model
#: offers (1M tokens), so a typo or damage (an extra zero or two) is never a fill of 0 %.
MAX_WINDOW_TOKENS = 10_000_000


def context_windows(result: dict[str, Any] | None) -> tuple[dict[str, int], list[str]]:
    """Read the `contextWindow` of each model a stream-json `result` line's `modelUsage` lists.

    Parameters
    ----------
    result
        The `result` line (`Trace.result`), or None.

    Returns
    -------
    (dict, list of str)
        Model key (as written) → window in tokens, only for a count from 1 to `MAX_WINDOW_TOKENS`, in the
        order written; and a warning per `contextWindow` written that is not such a window (not a count,
        0, or above `MAX_WINDOW_TOKENS`: no model has that window, so `window_choice` goes on to its next
        rule rather than measure every fill against it). Exact as written; never raises.

    Examples
    --------
    >>> context_windows({"modelUsage": {"a": {"contextWindow": 200000}, "b": {"contextWindow": 10**400}}})[0]
    {'a': 200000}
    """
    usage = (result or {}).get("modelUsage")
    if not isinstance(usage, dict):
        return {}, []
    sizes: dict[str, int] = {}
    warnings = []
    for model, entry in usage.items():
        if not isinstance(entry, dict) or entry.get("contextWindow") is None:
            continue
        value = entry["contextWindow"]
        size, _ = count_of(value)
        if size is not None and 0 < size <= MAX_WINDOW_TOKENS:
            sizes[model] = size
        else:
            warnings.append(
                f"result line: modelUsage[{model!r}] contextWindow is not a window of 1 to "
                f"{MAX_WINDOW_TOKENS:,} tokens ({shown_value(value)}); not used"
            )
    return sizes, warnings


class WindowChoice(NamedTuple):
    """The context window a trace is measured against, and where it came from.

    `tokens` is the window in tokens. `source` is one of ``"option"`` (``--window``), ``"modelUsage"``
    (the stream-json `result` line's `modelUsage[model].contextWindow`), ``"model [1m]"`` (1,000,000: a
    model id ends in ``[1m]``), ``"default"`` (200,000) or ``"peak"`` (1,000,000 because the main-thread
    peak exceeds 200,000).
    """

    tokens: int
    source: str


def window_choice(trace: Trace, window: int | None = None) -> WindowChoice:
    """Decide the effective context window of a trace, with its source.

    Parameters
    ----------
    trace
        A trace from `reading.read_trace`.
    window
        `--window` in tokens, or None. When given it wins, even below the trace's peak.

    Returns
    -------
    WindowChoice
        In order of preference: `window`; the `contextWindow` of the main thread's last model in the
        stream-json `result` line's `modelUsage` (or, if that model is not listed, the largest
        `contextWindow` listed; only counts from 1 to `MAX_WINDOW_TOKENS`, `context_windows`); else
        1,000,000 when a model id (the init line's or a call's) ends in ``[1m]``; else 200,000, raised
        to 1,000,000 when the main thread's peak measured prompt exceeds 200,000 (transient spikes,
        `metrics.spike_indexes`, and unmeasured calls, `metrics.measured`, left out: a spike is no
        evidence of a larger window). Exact as far as the trace states it; the default is an assumption
        (a model-name table is never consulted: Opus 4.6 appears at 1M in some tables, yet the
        b-spotter-compaction sample auto-compacted at 170,251 tokens, which only a 200,000 window
        explains). Never raises.

    Examples
    --------
    >>> import polars as pl
    >>> from types import SimpleNamespace
    >>> calls = pl.DataFrame({"seq": [1], "thread_kind": ["main"], "prompt_tokens": [310_000], "model": ["m"]})
    >>> window_choice(SimpleNamespace(calls=calls, result=None))
    WindowChoice(tokens=1000000, source='peak')
    >>> window_choice(SimpleNamespace(calls=calls, result=None), 400_000)
    WindowChoice(tokens=400000, source='option')
    """
    if window is not None:
        return WindowChoice(window, "option")
    calls = trace.view("calls") if hasattr(trace, "view") else trace.calls
    main = main_rows(calls.get_column("thread_kind").to_list(), calls, ("seq", "prompt_tokens", "model"))
    return window_choice_of(trace, [m for _, _, m in main], [p for _, p, _ in main], window)


def window_choice_of(
    trace: Trace, models_all: list[str | None], prompts: list[int | None], window: int | None
) -> WindowChoice:
    """Decide the window as `window_choice` does, from the main calls already read into rows.

    Parameters
    ----------
    trace
        The trace (its `result` line and `surface` are read; the calls are not).
    models_all
        Each main-thread call's model, in trace order (None where absent).
    prompts
        Each main-thread call's prompt tokens, in the same order.
    window
        `--window` in tokens, or None.

    Returns
    -------
    WindowChoice
        The same as `window_choice(trace, window)`. Never raises.
    """
    if window is not None:
        return WindowChoice(window, "option")
    main_models = [m for m in models_all if m is not None]
    # Each `contextWindow` bounded (`context_windows`): a 400-digit integer read by the lenient JSON
    # fallback, or a window no model has, is left out (and warned by the reports), never the window.
    sizes, _ = context_windows(getattr(trace, "result", None))
    if main_models and main_models[-1] in sizes:
        return WindowChoice(sizes[main_models[-1]], "modelUsage")
    if sizes:
        return WindowChoice(max(sizes.values()), "modelUsage")
    stated = stated_window(trace, prompts)
    if stated is not None:
        return stated
    # Claude Code selects the 1M window with a `[1m]` model suffix, which a stream-json init line (or a
    # gateway's model id) can carry even where `message.model` does not.
    surface = getattr(trace, "surface", None) or {}
    named = [surface.get("model"), *main_models]
    if any(isinstance(m, str) and m.lower().endswith("[1m]") for m in named):
        return WindowChoice(LARGE_WINDOW_TOKENS, "model [1m]")
    # A transient spike (at least 1.8x both neighbours) is not evidence of a larger window; an unmeasured
    # call (prompt 0) is no prompt at all, so it is neither a neighbour nor a peak.
    series = [p for p in prompts if measured(p)]
    if max(series, default=0) > DEFAULT_WINDOW_TOKENS:  # else no steady prompt is above it either
        spikes = set(spike_indexes(series))
        if max((v for i, v in enumerate(series) if i not in spikes), default=0) > DEFAULT_WINDOW_TOKENS:
            return WindowChoice(LARGE_WINDOW_TOKENS, "peak")
    return WindowChoice(DEFAULT_WINDOW_TOKENS, "default")


def stated_window(trace: Trace, prompts: list[int | None]) -> WindowChoice | None:
    """The window the trace's reader read from it (`Trace.window_tokens`, with its `window_source`), or None
    when it states none, states one outside 1 to `MAX_WINDOW_TOKENS`, or one below the trace's own steady
    peak (a window is never smaller than a prompt it held: Codex CLI 0.137 stated 2,432 for a 272,000-token
    model). Exact as stated.

    >>> from types import SimpleNamespace
    >>> t = SimpleNamespace(window_tokens=258_400, window_source="model_context_window")
    >>> stated_window(t, [10_000, 200_000])
    WindowChoice(tokens=258400, source='model_context_window')
    >>> stated_window(SimpleNamespace(window_tokens=2432, window_source="x"), [5000]) is None
    True
    """
    tokens = getattr(trace, "window_tokens", None)
    if tokens is None or not 0 < tokens <= MAX_WINDOW_TOKENS:
        return None
    series = [p for p in prompts if measured(p)]
    spikes = set(spike_indexes(series))
    if max((v for i, v in enumerate(series) if i not in spikes), default=0) > tokens:
        return None
    return WindowChoice(tokens, getattr(trace, "window_source", None) or "trace")


#: Where a window comes from, in one word per `WindowChoice.source`: ``given`` (`--window`), ``stated`` by
#: the trace (its `result` line's `modelUsage`, a ``[1m]`` model id, or its reader's `Trace.window_source`),
#: or ``inferred`` (Claude Code's default, or the 1M window a steady peak above it needs).
WINDOW_ORIGINS = {"option": "given", "default": "inferred", "peak": "inferred", "model table": "inferred"}


def window_origin(source: str | None) -> str:
    """The origin of a window in one word: ``given``, ``stated`` or ``inferred`` (`WINDOW_ORIGINS`; every
    other source is one a trace states).

    >>> window_origin("option"), window_origin("model_context_window"), window_origin("default")
    ('given', 'stated', 'inferred')
    """
    return WINDOW_ORIGINS.get(source or "", "stated")


def effective_window(trace: Trace, window: int | None = None) -> int:
    """Return the effective context window of a trace in tokens (see `window_choice` for the rule).

    Returns
    -------
    int
        Tokens, 1 to `MAX_WINDOW_TOKENS` from a trace: `--window`, else `modelUsage[*].contextWindow`, else
        200,000 (1,000,000 when the main-thread peak exceeds 200,000).
    """
    return window_choice(trace, window).tokens
