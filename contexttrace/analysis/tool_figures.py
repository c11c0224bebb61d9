"""The main thread's tool calls as figures: counts, failures, repeats, result sizes, MCP servers.

Definitions (spec 004):

* a repeat is a main-thread tool call identical in name and canonical input to an earlier one whose
  result did not fail, with no `WRITER_TOOLS` call, no compaction boundary and no microcompaction that
  cleared the earlier result in between (each ends what the agent "already had");
* result chars are characters of text in the main thread's tool results (images apart).

Each figure has a public function over the trace's tables and a ``*_of`` twin over rows already read
(`frame_rows.FrameRows`), which `reports.trace.build_report` uses; both give the same values. Pure:
nothing here prints or formats numbers.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.frame_rows import FrameRows, cleared_results, main_rows, result_hashes
from contexttrace.reading.contract import EDIT_TOOLS, SHELL_TOOLS, THREAD_MAIN

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import Trace

#: Tools whose call can change what a repeated read would return; a call after one is not a repeat (spec 004:
#: Bash, Edit, MultiEdit, NotebookEdit, Write, and the other agents' shell and edit tools).
WRITER_TOOLS = SHELL_TOOLS | EDIT_TOOLS | {"NotebookEdit"}

#: How many tools the "largest tool results" line names.
LARGEST_TOOLS_SHOWN = 5


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
        output each time is a repeat but not `same_result`). A call is a repeat when an earlier
        main-thread call had the same name and canonical input (sorted keys), its result did not fail
        (`is_error` not true; a call with no result yet counts as not failed), and no `WRITER_TOOLS`
        call nor compaction boundary lies strictly between the two, nor a microcompaction that cleared
        the earlier call's result (`tool_results.cleared_seq`: the agent no longer had it). Exact.

    Examples
    --------
    >>> import polars as pl
    >>> uses = pl.DataFrame({"seq": [1, 2, 3], "tool_use_id": ["a", "b", "c"], "thread_kind": ["main"] * 3,
    ...     "name": ["Read", "Read", "Read"], "input_json": ['{"f":1}', '{"f":1}', '{"f":2}']})
    >>> res = pl.DataFrame({"tool_use_id": ["a"], "is_error": [False]})
    >>> ev = pl.DataFrame(schema={"seq": pl.Int64, "kind": pl.String, "thread_kind": pl.String})
    >>> repeat_flags(uses, res, ev)["is_repeat"].to_list()
    [False, True, False]
    """
    uses = main_rows(
        tool_uses.get_column("thread_kind").to_list(), tool_uses, ("seq", "tool_use_id", "name", "input_json")
    )
    ids = tool_results.get_column("tool_use_id").to_list()
    failed = {i for i, e in zip(ids, tool_results.get_column("is_error").to_list(), strict=True) if e and i is not None}
    bounds = [
        s
        for s, k, t in zip(
            events.get_column("seq").to_list(),
            events.get_column("kind").to_list(),
            events.get_column("thread_kind").to_list(),
            strict=True,
        )
        if k == "compact_boundary" and t == THREAD_MAIN
    ]
    cleared = cleared_results(tool_results, ids)
    flags, same = _repeats(uses, failed, result_hashes(tool_results, ids), bounds, cleared)
    import polars as pl

    return pl.DataFrame(
        {
            "seq": [u[0] for u in uses],
            "tool_use_id": [u[1] for u in uses],
            "name": [u[2] for u in uses],
            "is_repeat": flags,
            "same_result": same,
        },
        schema={"seq": tool_uses.schema["seq"], "tool_use_id": tool_uses.schema["tool_use_id"],
                "name": tool_uses.schema["name"], "is_repeat": pl.Boolean, "same_result": pl.Boolean},
    )  # fmt: skip


def _repeats(
    uses: list[tuple[Any, ...]],
    failed: set[str],
    hashes: dict[str, int],
    bound_seqs: list[int],
    cleared: list[tuple[int, str]] = (),  # type: ignore[assignment]
) -> tuple[list[bool], list[bool]]:
    """`repeat_flags`' two columns from main-thread uses (seq, tool_use_id, name, input_json, ...) in
    order, the ids of failed results, result hashes, the main thread's compaction boundary seqs and the
    results microcompactions cleared ((seq, tool_use_id), by seq)."""
    bounds = sorted(bound_seqs)
    flags: list[bool] = []
    same: list[bool] = []
    # signature -> (writers seen, inclusive, when the latest non-failed identical call was made; its id)
    had: dict[tuple[str, str], tuple[int, str]] = {}
    sig_of: dict[str, tuple[str, str]] = {}  # tool_use_id -> its signature, for a microcompaction's clearing
    writers = 0
    b = c = 0
    for seq, tid, name, payload, *_ in uses:
        while b < len(bounds) and bounds[b] < seq:
            had.clear()
            b += 1
        while c < len(cleared) and cleared[c][0] < seq:
            gone = cleared[c][1]
            sig = sig_of.pop(gone, None)
            if sig is not None and had.get(sig, (0, None))[1] == gone:
                del had[sig]  # its result left the window: fetching it again is not a repeat
            c += 1
        sig = (name, payload)
        earlier = had.get(sig)
        repeat = earlier is not None and earlier[0] == writers
        flags.append(repeat)
        same.append(
            repeat and earlier is not None and hashes.get(tid) is not None and hashes.get(tid) == hashes.get(earlier[1])
        )
        if name in WRITER_TOOLS:
            writers += 1
        if tid not in failed:
            had[sig] = (writers, tid)
            if tid is not None:
                sig_of[tid] = sig
    return flags, same


def tool_figures(trace: Trace) -> dict[str, Any]:
    """Count the main thread's tool calls, failures, denials, repeats and result sizes.

    Returns
    -------
    dict
        `tools` (tool_use blocks on the main thread, deduplicated by id), `failed` (their results with
        `is_error` true, denials included), `denied` (refusals by a person or a rule, a subset of
        failed), `repeat` (see `repeat_flags`), `repeat_same_result`, `result_chars` (chars of text in
        main-thread tool results), `result_images` / `result_image_bytes` (image blocks, decoded bytes),
        `orphan_results` (results whose tool_use_id matches no tool use), `persisted_results` (results
        written as a `<persisted-output>` preview) and `persisted_bytes` (≈ the full sizes those previews
        state). All exact except `persisted_bytes`.
    """
    return tool_figures_of(FrameRows(trace))


def tool_figures_of(rows: FrameRows) -> dict[str, Any]:
    """Compute `tool_figures` from a trace's rows already read.

    Parameters
    ----------
    rows
        The trace's `FrameRows`, shared with the other figures of a report.

    Returns
    -------
    dict
        The same as `tool_figures`.
    """
    known = {i for i, _ in rows.use_names if i is not None}
    flags, same = _repeats(rows.main_uses, rows.failed_ids, rows.hashes, [b[0] for b in rows.bounds], rows.cleared)
    failed = denied = chars = images = image_bytes = orphans = persisted = persisted_bytes = 0
    for _seq, tid, err, den, rc, ri, rib, pers, pb, _ts in rows.main_results:
        # Polars' sums skip nulls; `is_error & denied` is null (not counted) when either is null
        failed += err is True
        denied += err is True and den is True
        chars += rc or 0
        images += ri or 0
        image_bytes += rib or 0
        orphans += tid is not None and tid not in known
        persisted += pers is True
        persisted_bytes += pb or 0
    return {
        "tools": len(rows.main_uses),
        "failed": failed,
        "denied": denied,
        "repeat": sum(flags),
        "repeat_same_result": sum(same),
        "result_chars": chars,
        "result_images": images,
        "result_image_bytes": image_bytes,
        "orphan_results": orphans,
        "persisted_results": persisted,
        "persisted_bytes": persisted_bytes,
    }


def largest_results(
    tool_uses: pl.DataFrame, tool_results: pl.DataFrame, limit: int = LARGEST_TOOLS_SHOWN
) -> list[dict[str, Any]]:
    """Rank tools by the characters their main-thread results put into the context.

    Returns
    -------
    list of dict
        Up to `limit` entries `{"tool": name, "chars": total}`, largest first (ties by name); tools
        whose results total 0 chars are left out. A result whose call is unknown counts under ``"?"``.
        Exact.
    """
    names = list(
        zip(tool_uses.get_column("tool_use_id").to_list(), tool_uses.get_column("name").to_list(), strict=True)
    )
    results = main_rows(
        tool_results.get_column("thread_kind").to_list(), tool_results, ("tool_use_id", "result_chars"), sort=False
    )
    return largest_results_of(names, results, limit)


def largest_results_of(
    names: list[tuple[str | None, str | None]], results: list[tuple[Any, Any]], limit: int = LARGEST_TOOLS_SHOWN
) -> list[dict[str, Any]]:
    """Rank tools as `largest_results` does, from rows already read.

    Parameters
    ----------
    names
        Every tool use's (tool_use_id, name), all threads (`FrameRows.use_names`).
    results
        The main thread's results as (tool_use_id, result_chars).
    limit
        How many tools to return at most.

    Returns
    -------
    list of dict
        The same as `largest_results`.
    """
    totals: dict[str, int] = {}
    name_of = dict(names)
    if len(name_of) == len(names):  # no id twice (nor two null ids): a result's call is one row, or none
        for tid, chars in results:
            name = name_of.get(tid) if tid is not None else None  # a left join never matches null keys
            key = name if name is not None else "?"
            totals[key] = totals.get(key, 0) + (chars or 0)
    else:
        by_id: dict[str, list[str]] = {}
        for tid, name in names:
            if tid is not None:  # a repeated id matches each of its rows
                by_id.setdefault(tid, []).append(name if name is not None else "?")
        for tid, chars in results:
            for key in by_id.get(tid, ["?"]) if tid is not None else ["?"]:
                totals[key] = totals.get(key, 0) + (chars or 0)
    ranked = sorted(((c, n) for n, c in totals.items() if c > 0), key=lambda cn: (-cn[0], cn[1]))[:limit]
    return [{"tool": n, "chars": int(c)} for c, n in ranked]


def mcp_server_of(tool: str, servers: list[str] | None) -> tuple[str | None, bool]:
    """Return the MCP server a tool name belongs to, and whether that is a guess.

    Returns
    -------
    (str or None, bool)
        The server, None for a tool of no server; True when the server was split from the name without
        a known server to match (a guess), else False.

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
    kinds = tool_uses.get_column("thread_kind").to_list()
    names = [n for k, n in zip(kinds, tool_uses.get_column("name").to_list(), strict=True) if k == THREAD_MAIN]
    return tool_counts_of(names, servers)


def tool_counts_of(names: list[str | None], servers: list[str] | None) -> dict[str, Any]:
    """Count tool calls as `tool_counts` does, from names already read.

    Parameters
    ----------
    names
        The main thread's tool names (`tool_uses.name`), in trace order.
    servers
        MCP server names from the init line, or None.

    Returns
    -------
    dict
        The same as `tool_counts`.

    >>> tool_counts_of(["Read", "mcp__gh__issue", "Read"], ["gh"])["by_mcp_server"]
    {'gh': 1}
    """
    # most used first, ties by name (a null name first, as Polars sorts nulls first)
    counts = sorted(Counter(names).items(), key=lambda nc: (-nc[1], nc[0] is not None, nc[0] or ""))
    by_tool = {str(n): int(c) for n, c in counts}
    by_server: dict[str, int] = {}
    guessed = False
    for name, count in by_tool.items():
        server, guess = mcp_server_of(name, servers)
        if server is not None:
            by_server[server] = by_server.get(server, 0) + count
            guessed = guessed or guess
    ordered = dict(sorted(by_server.items(), key=lambda kv: (-kv[1], kv[0])))
    return {"by_tool": by_tool, "by_mcp_server": ordered, "mcp_server_guessed": guessed}
