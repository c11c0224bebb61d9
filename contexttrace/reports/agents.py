"""Subagents of one trace: each subagent thread linked to the Task/Agent calls that started it, and totalled.

`agent_rows` gives one row per subagent thread: what it was (type, description), how it was linked to its
Task/Agent calls (by id exactly, or by prompt length ≈), its tokens and cost (`costs.totals_of_rows`), how
long it ran and how much of its output came back into the session. Nothing here prints or formats numbers.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.tokens import CHARS_PER_TOKEN
from contexttrace.reading.contract import AGENT_TOOLS, THREAD_SUBAGENT
from contexttrace.reports.costs import by_seq, grouped, totals_of_rows

if TYPE_CHECKING:
    import polars as pl

    from contexttrace.reading import Trace


def _link_agents(trace: Trace, threads: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Match each subagent thread to the Task/Agent calls that started it.

    stream-json names the thread by the call's id (exact). In transcripts, the Task/Agent result's
    `toolUseResult.agentId` names the agent file (exact, CLI 2.x); failing that (1.0.x inline sidechains,
    Warmups), a thread's `subagent_prompt` lines are matched to an unused Task/Agent call whose
    `input.prompt` has the same length in characters, the earliest first (a length match, not a text
    match).
    """
    frame = trace.view("tool_uses")
    # The reader keeps a Task/Agent call's subagent_type, description and prompt length as columns, so the
    # input is never decoded again here (it may hold a lone surrogate or nesting too deep to decode).
    cols = ("tool_use_id", "seq", "ts_ms", "name", "agent_type", "agent_description", "agent_prompt_chars")
    keys = ("tool_use_id", "seq", "ts_ms", "name", "agent_type", "description", "prompt_chars")
    rows = zip(*(frame.get_column(c).to_list() for c in cols), strict=True)
    uses = [dict(zip(keys, row, strict=True)) for row in rows if row[3] in AGENT_TOOLS]
    uses.sort(key=lambda u: u["seq"])  # the Task/Agent calls by seq (stable, as Polars' sort)
    by_id = {u["tool_use_id"]: u for u in uses if u["tool_use_id"]}
    used: set[str] = set()
    links: dict[str, list[dict[str, Any]]] = {t: [] for t in threads}
    for t in threads:
        if t in by_id:
            links[t].append({**by_id[t], "linked_by": "tool_use_id"})
            used.add(t)
    # Transcripts: the Task/Agent result's toolUseResult.agentId names the agent file (exact).
    results = trace.view("tool_results")
    named = [
        (agent, tid)
        for agent, tid in zip(
            results.get_column("agent_id").to_list(), results.get_column("tool_use_id").to_list(), strict=True
        )
        if agent is not None
    ]
    for agent, tid in named:
        if agent in links and tid in by_id and tid not in used and not links[agent]:
            links[agent].append({**by_id[tid], "linked_by": "agent_id"})
            used.add(tid)
    events = trace.view("events")
    starts = [
        r
        for r in zip(*(events.get_column(c).to_list() for c in ("seq", "thread", "text_chars", "kind")), strict=True)
        if r[3] == "subagent_prompt"
    ]
    starts.sort(key=lambda r: r[0])
    for _seq, thread, chars, _kind in starts:
        if thread not in links or any(link["linked_by"] in ("tool_use_id", "agent_id") for link in links[thread]):
            continue
        match = next((u for u in uses if u["tool_use_id"] not in used and u["prompt_chars"] == chars), None)
        if match is not None:
            used.add(match["tool_use_id"])
            links[thread].append({**match, "linked_by": "prompt_length"})
    return links


def _text(value: Any) -> str | None:
    """A non-empty string as written, else None (`.meta.json` values are not checked by the reader)."""
    return value if isinstance(value, str) and value else None


def _completions(trace: Trace) -> list[tuple[Any, int | None, int | None, bool]]:
    """How each tool call completed: (tool_use_id, characters returned, ms when it returned, whether that is
    known), one per tool result. A Task/Agent call that launched its agent in the background returns a receipt
    at once (`tool_results.agent_async`); it completes when the task notification naming it comes, with the
    report that notification carries (`events.report_chars`): the receipt is neither its end nor what it
    returned. Without a notification, both are unknown (None, known False)."""
    frame = trace.view("tool_results")
    cols = ("tool_use_id", "result_chars", "ts_ms", "agent_async")
    events = trace.view("events")
    notified: dict[Any, tuple[int | None, int | None]] = {}
    for kind, tid, ts, chars in zip(
        *(events.get_column(c).to_list() for c in ("kind", "tool_use_id", "ts_ms", "report_chars")), strict=True
    ):
        if kind == "task_notification" and tid is not None:
            notified.setdefault(tid, (ts, chars))  # the first notification naming the call
    out: list[tuple[Any, int | None, int | None, bool]] = []
    for tid, chars, ts, is_async in zip(*(frame.get_column(c).to_list() for c in cols), strict=True):
        if is_async:
            ts, chars = notified.get(tid, (None, None))
        out.append((tid, chars, ts, chars is not None or not is_async))
    return out


def agent_rows(trace: Trace, priced: pl.DataFrame) -> list[dict[str, Any]]:
    """One row per subagent thread (Task/Agent subagents, warmups, inline sidechains).

    Parameters
    ----------
    trace
        A trace from `read_trace` (its tool uses, tool results, events and `.meta.json` agent facts).
    priced
        Its priced calls (`costs.priced_calls`).

    Returns
    -------
    list of dict
        In order of the thread's first call: `thread`, `agent_type` and `description` (the `.meta.json`
        beside the agent file, else the Task/Agent call's `input.subagent_type` / `input.description`;
        None when neither is known, e.g. warmups), `tasks` (Task/Agent calls linked to it),
        `linked_by` (``"tool_use_id"`` or ``"agent_id"`` exact, ``"prompt_length"`` ≈, or None), the keys
        of `costs.token_totals` (its own calls), `duration_ms` (last completion − first tool_use of its Task
        calls: the tool_result, or for an agent launched in the background the task notification naming the
        call; else first to last line of its own calls; None without timestamps) and `duration_source`,
        `returned_chars` (chars of its Task results, or of a background agent's report in its notification,
        exact; None when a background agent's report is not in the trace), `returned_tokens` (chars ÷ 4, ≈)
        and `return_ratio` (returned ÷ the agent's output tokens, ≈; None without a link or output).
    """
    return agents_of_rows(trace, priced.to_dicts())


#: A priced row's thread: what `agents_of_rows` groups a subagent's calls by.
_THREAD = itemgetter("thread")


def agents_of_rows(trace: Trace, priced: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per subagent thread, as `agent_rows`, from priced rows (`costs.priced_rows`, all threads)."""
    sub = sorted((r for r in priced if r["thread_kind"] == THREAD_SUBAGENT), key=by_seq)
    if not sub:  # no subagent call: no row (nothing to link, no completion read)
        return []
    parts = grouped(sub, _THREAD)
    threads = list(parts)
    links = _link_agents(trace, threads)
    results = _completions(trace)
    result_at: dict[Any, list[int]] = {}  # tool_use_id -> the positions of its results
    for at, r in enumerate(results):
        result_at.setdefault(r[0], []).append(at)
    rows = []
    for thread in threads:
        part = parts[thread]
        meta = trace.agents.get(thread, {})
        tasks = links.get(thread, [])
        first = tasks[0] if tasks else {}
        meta_type, meta_desc = _text(meta.get("agentType")), _text(meta.get("description"))
        agent_type = meta_type or first.get("agent_type")
        description = meta_desc or first.get("description")
        if description and len(tasks) > 1 and not meta_desc:
            description += f" (+{len(tasks) - 1} more)"  # inline sidechains: several Task calls, one thread
        ids = {t["tool_use_id"] for t in tasks if t["tool_use_id"] is not None}  # `is_in` never matches a null
        res = [results[at] for at in sorted(at for tid in ids for at in result_at.get(tid, ()))]
        returned = sum(r[1] or 0 for r in res) if tasks and all(r[3] for r in res) else None
        duration, source = None, None
        use_ts = [t["ts_ms"] for t in tasks if t["ts_ms"] is not None]
        res_ts = [r[2] for r in res if r[2] is not None]
        # Every timestamp of its calls that parsed (first and last lines alike): one that did not parse
        # leaves the others to measure by, and a single one measures nothing.
        stamps = [ts for r in part for ts in (r["ts_ms"], r["end_ts_ms"]) if ts is not None]
        if use_ts and res_ts and len(res_ts) == len(tasks) and max(res_ts) >= min(use_ts):
            duration, source = int(max(res_ts) - min(use_ts)), "task_call"  # never negative: out of order
        elif len(stamps) > 1:
            duration, source = int(max(stamps) - min(stamps)), "agent_lines"
        totals = totals_of_rows(part)
        returned_tokens = returned / CHARS_PER_TOKEN if returned is not None else None
        rows.append(
            {
                "thread": thread,
                "agent_type": agent_type,
                "description": description,
                "tasks": len(tasks),
                "linked_by": tasks[0]["linked_by"] if tasks else None,
                **totals,
                "duration_ms": duration,
                "duration_source": source,
                "returned_chars": returned,
                "returned_tokens": returned_tokens,
                "return_ratio": returned_tokens / totals["output_tokens"]
                if returned_tokens is not None and totals["output_tokens"]
                else None,
            }
        )
    return rows
