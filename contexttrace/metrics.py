"""Pure metric functions over the normalised frames of `schema.py`.

Every function here takes frames (or a `reader.Trace`) and returns a frame or a scalar; none reads files,
prints or formats numbers. The definitions are spec 004's, with the open points decided in issue 2:

* prompt tokens of a call = input + cache write + cache read (`message.usage`); exact.
* first / peak / growth over the main thread's calls, in trace order; fill = peak / window.
* compact = `system/compact_boundary` lines on the main thread.
* repeat = a main-thread tool call identical in name and canonical input to an earlier one whose result
  did not fail, with no Bash/Edit/MultiEdit/NotebookEdit/Write call and no compaction boundary in between
  (a boundary ends what the agent "already had": its content left the window).
* result chars = characters of the main thread's tool results (images apart).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import polars as pl

from .schema import THREAD_COMPACTION, THREAD_MAIN, THREAD_SUBAGENT

if TYPE_CHECKING:
    from .reader import Trace

#: Tools whose call can change what a repeated read would return; a call after one is not a repeat.
WRITER_TOOLS = frozenset({"Bash", "Edit", "MultiEdit", "NotebookEdit", "Write"})

#: A call is a spike when its prompt is at least this many times both neighbours' (CASES B11).
SPIKE_FACTOR = 1.8

#: How many tools the "largest tool results" line names.
LARGEST_TOOLS_SHOWN = 5


def main_calls(calls: pl.DataFrame) -> pl.DataFrame:
    """Select the main thread's calls, in trace order.

    Parameters
    ----------
    calls
        Call frame (`schema.CALL_SCHEMA`).

    Returns
    -------
    polars.DataFrame
        The rows whose `thread_kind` is ``"main"``, sorted by `seq`, same columns.

    Examples
    --------
    >>> import polars as pl
    >>> main_calls(pl.DataFrame({"seq": [2, 1], "thread_kind": ["main", "subagent"]})).height
    1
    """
    return calls.filter(pl.col("thread_kind") == THREAD_MAIN).sort("seq")


def prompt_series(calls: pl.DataFrame) -> list[int]:
    """Return the prompt tokens of each main-thread call, in trace order.

    Returns
    -------
    list of int
        Tokens (exact: `input_tokens + cache_creation_input_tokens + cache_read_input_tokens` of each
        deduplicated `assistant` call); empty when the trace has no main-thread call.
    """
    return [int(v) for v in main_calls(calls)["prompt_tokens"].to_list()]


def context_figures(series: list[int], window: int | None) -> dict[str, Any]:
    """Compute first, peak, growth and fill from a prompt-token series.

    Parameters
    ----------
    series
        Prompt tokens per main-thread call, in order (`prompt_series`).
    window
        Context window in tokens, or None when not known (then `fill` is None).

    Returns
    -------
    dict
        `first`, `peak`, `growth` (tokens, exact; 0 for an empty series), `fill` (peak / window, a
        fraction 0–1+, or None), `spikes` (0-based call indexes flagged as transient spikes: at least
        1.8× both neighbours, or above the window) and `peak_without_spikes` (tokens).

    Examples
    --------
    >>> f = context_figures([21390, 21673], 200000)
    >>> f["first"], f["peak"], f["growth"], round(f["fill"], 4)
    (21390, 21673, 283, 0.1084)
    """
    if not series:
        return {"first": 0, "peak": 0, "growth": 0, "fill": None, "spikes": [], "peak_without_spikes": 0}
    first = series[0]
    peak = max(series)
    spikes = []
    for i, v in enumerate(series):
        over_window = window is not None and v > window
        between = 0 < i < len(series) - 1 and v >= SPIKE_FACTOR * series[i - 1] and v >= SPIKE_FACTOR * series[i + 1]
        if over_window or between:
            spikes.append(i)
    flagged = set(spikes)
    rest = [v for i, v in enumerate(series) if i not in flagged]
    return {
        "first": first,
        "peak": peak,
        "growth": peak - first,
        "fill": peak / window if window else None,
        "spikes": spikes,
        "peak_without_spikes": max(rest) if rest else 0,
    }


def compaction_events(events: pl.DataFrame, calls: pl.DataFrame) -> list[dict[str, Any]]:
    """List the main thread's compaction boundaries with what the trace says about each.

    Parameters
    ----------
    events
        Event frame (`schema.EVENT_SCHEMA`).
    calls
        Call frame (`schema.CALL_SCHEMA`).

    Returns
    -------
    list of dict
        One per `system/compact_boundary` line on the main thread, in order, with `trigger` ("auto" /
        "manual" / None), `pre_tokens` and `post_tokens` (as the harness wrote them, None where absent;
        metadata only, CASES B11), `call_index` (0-based index among main calls of the first call
        after the boundary, None if none followed), `line`, and `context_before` / `context_after` /
        `effect_tokens` (prompt tokens of the last call before and first call after, and after minus
        before; usage-derived, exact, may be positive).
    """
    bounds = events.filter((pl.col("kind") == "compact_boundary") & (pl.col("thread_kind") == THREAD_MAIN)).sort("seq")
    if bounds.height == 0:
        return []
    main = main_calls(calls)
    seqs = main["seq"].to_list()
    prompts = main["prompt_tokens"].to_list()
    out = []
    for row in bounds.iter_rows(named=True):
        after = next((i for i, s in enumerate(seqs) if s > row["seq"]), None)
        before = (after - 1 if after is not None else len(seqs) - 1) if seqs else -1
        ctx_before = prompts[before] if before >= 0 else None
        ctx_after = prompts[after] if after is not None else None
        out.append(
            {
                "trigger": row["trigger"],
                "pre_tokens": row["pre_tokens"],
                "post_tokens": row["post_tokens"],
                "call_index": after,
                "line": row["line"],
                "context_before": ctx_before,
                "context_after": ctx_after,
                "effect_tokens": ctx_after - ctx_before if ctx_after is not None and ctx_before is not None else None,
            }
        )
    return out


def repeat_flags(tool_uses: pl.DataFrame, tool_results: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Flag main-thread tool calls that fetch again what the agent already had.

    Parameters
    ----------
    tool_uses, tool_results, events
        Frames of one trace (`schema.TOOL_USE_SCHEMA`, `TOOL_RESULT_SCHEMA`, `EVENT_SCHEMA`).

    Returns
    -------
    polars.DataFrame
        One row per main-thread tool use, in trace order: `seq` (i64), `tool_use_id` (str), `name`
        (str), `is_repeat` (bool), `same_result` (bool: a repeat whose result text is identical to the
        earlier call's, so it fetched exactly what the agent already had; polling that returns new
        output each time is a repeat but not `same_result`, CASES B24). A call is a repeat when an earlier main-thread call had the same name
        and canonical input (sorted keys), its result did not fail (`is_error` not true; a call with no
        result yet counts as not failed), and no `WRITER_TOOLS` call nor compaction boundary lies
        strictly between the two. Exact.

    Examples
    --------
    >>> import polars as pl
    >>> uses = pl.DataFrame({"seq": [1, 2, 3], "tool_use_id": ["a", "b", "c"], "thread_kind": ["main"] * 3,
    ...     "name": ["Read", "Read", "Read"], "input_json": ['{"f":1}', '{"f":1}', '{"f":2}']})
    >>> res = pl.DataFrame({"tool_use_id": ["a"], "is_error": [False]})
    >>> ev = pl.DataFrame({"seq": [], "kind": [], "thread_kind": []}, schema={"seq": pl.Int64, "kind": pl.String, "thread_kind": pl.String})
    >>> repeat_flags(uses, res, ev)["is_repeat"].to_list()
    [False, True, False]
    """
    uses = tool_uses.filter(pl.col("thread_kind") == THREAD_MAIN).sort("seq")
    failed = set(
        tool_results.filter(pl.col("is_error") & pl.col("tool_use_id").is_not_null())["tool_use_id"].to_list()
    )
    hashes: dict[str, int] = {}
    if "content_hash" in tool_results.columns:
        hashes = dict(tool_results.select("tool_use_id", "content_hash").drop_nulls().iter_rows())
    bounds = sorted(
        events.filter((pl.col("kind") == "compact_boundary") & (pl.col("thread_kind") == THREAD_MAIN))["seq"].to_list()
    )
    flags: list[bool] = []
    same: list[bool] = []
    # signature -> (writers seen, inclusive, when the latest non-failed identical call was made; its id)
    had: dict[tuple[str, str], tuple[int, str]] = {}
    writers = 0
    b = 0
    for seq, tid, name, payload in uses.select("seq", "tool_use_id", "name", "input_json").iter_rows():
        while b < len(bounds) and bounds[b] < seq:
            had.clear()
            b += 1
        sig = (name, payload)
        earlier = had.get(sig)
        repeat = earlier is not None and earlier[0] == writers
        flags.append(repeat)
        same.append(repeat and earlier is not None and hashes.get(tid) is not None and hashes.get(tid) == hashes.get(earlier[1]))
        if name in WRITER_TOOLS:
            writers += 1
        if tid not in failed:
            had[sig] = (writers, tid)
    return uses.select("seq", "tool_use_id", "name").with_columns(
        is_repeat=pl.Series(flags, dtype=pl.Boolean), same_result=pl.Series(same, dtype=pl.Boolean)
    )


def tool_figures(trace: Trace) -> dict[str, Any]:
    """Count the main thread's tool calls, failures, denials, repeats and result sizes.

    Returns
    -------
    dict
        `tools` (tool_use blocks on the main thread, deduplicated by id), `failed` (their results with
        `is_error` true, denials included), `denied` (refusals by a person or a rule, a subset of
        failed), `repeat` (see `repeat_flags`), `result_chars` (chars of text in main-thread tool
        results), `result_images` / `result_image_bytes` (image blocks, decoded bytes), `orphan_results`
        (results whose tool_use_id matches no tool use), `persisted_results` (results written as a
        `<persisted-output>` preview) and `persisted_bytes` (≈ the full sizes those previews state).
        All exact except `persisted_bytes`.
    """
    uses = trace.tool_uses.filter(pl.col("thread_kind") == THREAD_MAIN)
    results = trace.tool_results.filter(pl.col("thread_kind") == THREAD_MAIN)
    known = set(trace.tool_uses["tool_use_id"].drop_nulls().to_list())
    repeats = repeat_flags(trace.tool_uses, trace.tool_results, trace.events)
    return {
        "tools": uses.height,
        "failed": int(results["is_error"].sum()),
        "denied": int((results["is_error"] & results["denied"]).sum()),
        "repeat": int(repeats["is_repeat"].sum()),
        "repeat_same_result": int(repeats["same_result"].sum()),
        "result_chars": int(results["result_chars"].sum()),
        "result_images": int(results["result_images"].sum()),
        "result_image_bytes": int(results["result_image_bytes"].sum()),
        "orphan_results": int((~results["tool_use_id"].is_in(list(known))).sum()),
        "persisted_results": int(results["persisted"].sum()),
        "persisted_bytes": int(results["persisted_bytes"].sum() or 0),
    }


def largest_results(tool_uses: pl.DataFrame, tool_results: pl.DataFrame, limit: int = LARGEST_TOOLS_SHOWN) -> list[dict[str, Any]]:
    """Rank tools by the characters their main-thread results put into the context.

    Returns
    -------
    list of dict
        Up to `limit` entries `{"tool": name, "chars": total}`, largest first (ties by name); tools
        whose results total 0 chars are left out. A result whose call is unknown counts under ``"?"``.
    """
    names = tool_uses.select("tool_use_id", "name")
    results = tool_results.filter(pl.col("thread_kind") == THREAD_MAIN).select("tool_use_id", "result_chars")
    ranked = (
        results.join(names, on="tool_use_id", how="left")
        .with_columns(pl.col("name").fill_null("?"))
        .group_by("name")
        .agg(pl.col("result_chars").sum())
        .filter(pl.col("result_chars") > 0)
        .sort(["result_chars", "name"], descending=[True, False])
        .head(limit)
    )
    return [{"tool": n, "chars": int(c)} for n, c in ranked.iter_rows()]


def thread_call_counts(calls: pl.DataFrame) -> dict[str, int]:
    """Count calls per thread kind.

    Returns
    -------
    dict
        `calls` (main thread), `subagent_calls` (every subagent and sidechain, warmups included),
        `compaction_calls` (the compaction summariser's own calls); exact.
    """
    kinds = calls["thread_kind"].value_counts()
    counts = dict(zip(kinds["thread_kind"].to_list(), kinds["count"].to_list(), strict=True))
    return {
        "calls": int(counts.get(THREAD_MAIN, 0)),
        "subagent_calls": int(counts.get(THREAD_SUBAGENT, 0)),
        "compaction_calls": int(counts.get(THREAD_COMPACTION, 0)),
    }


def models_used(calls: pl.DataFrame) -> list[str]:
    """Return the distinct model ids of the trace's calls, in order of first use (synthetic never included)."""
    return [m for m in calls.sort("seq")["model"].drop_nulls().unique(maintain_order=True).to_list()]


#: Claude Code's default context window; a larger one is an opt-in that transcripts do not record.
DEFAULT_WINDOW_TOKENS = 200_000

#: The window assumed when a main-thread prompt exceeds the default (spec 000's "auto-detected from
#: session peak"; CASES B26: a context above 200,000 implies the 1M window).
LARGE_WINDOW_TOKENS = 1_000_000


class WindowChoice(NamedTuple):
    """The context window a trace is measured against, and where it came from.

    `source` is one of ``"option"`` (``--window``), ``"modelUsage"`` (the stream-json `result` line's
    `modelUsage[model].contextWindow`), ``"model [1m]"`` (1,000,000: a model id ends in ``[1m]``),
    ``"default"`` (200,000) or ``"peak"`` (1,000,000 because the main-thread peak exceeds 200,000).
    """

    tokens: int
    source: str


def window_choice(trace: Trace, window: int | None = None) -> WindowChoice:
    """Decide the effective context window of a trace (issue 3), with its source.

    Parameters
    ----------
    trace
        A trace from `reader.read_trace`.
    window
        `--window` in tokens, or None. When given it wins, even below the trace's peak.

    Returns
    -------
    WindowChoice
        In order of preference: `window`; the `contextWindow` of the main thread's last model in the
        stream-json `result` line's `modelUsage` (or, if that model is not listed, the largest
        `contextWindow` listed); else 1,000,000 when a model id (the init line's or a call's) ends in
        ``[1m]``; else 200,000, raised to 1,000,000 when the main thread's peak prompt exceeds 200,000. Exact as far as the trace states it; the default is an assumption (a model-name
        table is never consulted: Opus 4.6 appears at 1M in some tables, yet the b-spotter-compaction
        sample auto-compacted at 170,251 tokens, which only a 200,000 window explains).

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
    main = main_calls(trace.calls)
    usage = (trace.result or {}).get("modelUsage")
    if isinstance(usage, dict):
        sizes = {
            m: v["contextWindow"]
            for m, v in usage.items()
            if isinstance(v, dict) and type(v.get("contextWindow")) is int and v["contextWindow"] > 0
        }
        models = main["model"].drop_nulls().to_list()
        if models and models[-1] in sizes:
            return WindowChoice(sizes[models[-1]], "modelUsage")
        if sizes:
            return WindowChoice(max(sizes.values()), "modelUsage")
    # Claude Code selects the 1M window with a `[1m]` model suffix, which a stream-json init line (or a
    # gateway's model id) can carry even where `message.model` does not (CASES B26).
    surface = getattr(trace, "surface", None) or {}
    named = [surface.get("model"), *main["model"].drop_nulls().to_list()]
    if any(isinstance(m, str) and m.lower().endswith("[1m]") for m in named):
        return WindowChoice(LARGE_WINDOW_TOKENS, "model [1m]")
    peak = int(main["prompt_tokens"].max() or 0) if main.height else 0  # type: ignore[arg-type]
    if peak > DEFAULT_WINDOW_TOKENS:
        return WindowChoice(LARGE_WINDOW_TOKENS, "peak")
    return WindowChoice(DEFAULT_WINDOW_TOKENS, "default")


def effective_window(trace: Trace, window: int | None = None) -> int:
    """Return the effective context window of a trace in tokens (see `window_choice` for the rule).

    Returns
    -------
    int
        Tokens, > 0: `--window`, else `modelUsage[*].contextWindow`, else 200,000 (1,000,000 when the
        main-thread peak exceeds 200,000).
    """
    return window_choice(trace, window).tokens


def mcp_server_of(tool: str, servers: list[str] | None) -> tuple[str | None, bool]:
    """Return the MCP server a tool name belongs to, and whether that is a guess (CASES B23).

    Claude Code names MCP tools `mcp__<server>__<tool>`, and both parts may contain `__`. With the
    server names the init line lists, the longest one that prefixes the name wins (exact); without them,
    the name is split at the first `__` after `mcp__` (a guess). Names without the `mcp__` prefix
    (including single-underscore `mcp_x_y`) belong to no server.

    Examples
    --------
    >>> mcp_server_of("mcp__a__b__fetch", ["a", "a__b"]), mcp_server_of("mcp__github__get_issue", None)
    (('a__b', False), ('github', True))
    >>> mcp_server_of("Read", None)
    (None, False)
    """
    if not tool.startswith("mcp__"):
        return None, False
    rest = tool[len("mcp__") :]
    known = [s for s in servers or [] if rest.startswith(s + "__")]
    if known:
        return max(known, key=len), False
    server, sep, _ = rest.partition("__")
    return (server, True) if sep and server else (None, False)


def tool_counts(tool_uses: pl.DataFrame, servers: list[str] | None = None) -> dict[str, Any]:
    """Count the main thread's tool calls per tool and per MCP server.

    Parameters
    ----------
    tool_uses
        Tool-use frame (`schema.TOOL_USE_SCHEMA`).
    servers
        MCP server names from the stream-json init line (`surface["mcp_servers"]`), or None.

    Returns
    -------
    dict
        `by_tool` (full tool name → calls, most used first, ties by name), `by_mcp_server` (server →
        calls, same order) and `mcp_server_guessed` (True when some server was split from a name without
        a list of known servers to match). Exact counts of `tool_use` blocks.
    """
    counts = (
        tool_uses.filter(pl.col("thread_kind") == THREAD_MAIN)
        .group_by("name")
        .len()
        .sort(["len", "name"], descending=[True, False])
    )
    by_tool = {str(n): int(c) for n, c in counts.iter_rows()}
    by_server: dict[str, int] = {}
    guessed = False
    for name, count in by_tool.items():
        server, guess = mcp_server_of(name, servers)
        if server is not None:
            by_server[server] = by_server.get(server, 0) + count
            guessed = guessed or guess
    ordered = dict(sorted(by_server.items(), key=lambda kv: (-kv[1], kv[0])))
    return {"by_tool": by_tool, "by_mcp_server": ordered, "mcp_server_guessed": guessed}


#: A gap between two timestamped lines longer than this is idle time, not work (CASES B25).
IDLE_GAP_MS = 30 * 60 * 1000


def durations(trace: Trace) -> dict[str, int | None]:
    """Measure how long a trace ran, from its lines' timestamps.

    Returns
    -------
    dict
        `duration_ms` (wall: last timestamp − first, over every timestamped user, assistant and system
        line of every thread; progress and bookkeeping lines are not read) and `active_duration_ms` (the
        same with every gap longer than `IDLE_GAP_MS` left out); both None when the trace has no
        timestamps (stream-json). Exact differences of the lines' ISO-8601 `timestamp` fields, whatever
        order the lines are in (max − min, CASES B25).
    """
    stamps = trace.timestamps_ms
    if stamps.len() == 0:
        return {"duration_ms": None, "active_duration_ms": None}
    gaps = stamps.diff().drop_nulls()
    return {
        "duration_ms": int(stamps[-1] - stamps[0]),
        "active_duration_ms": int(gaps.filter(gaps <= IDLE_GAP_MS).sum()),
    }
