"""The ids a user can name a thread by (`context sources --thread`): what `context usage
--breakdown` and the subagent files show, and the Task / Agent tool_use id that started a subagent.

Pure functions over a read `Trace` (tables through `Trace.view`, plain lists); nothing here prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from contexttrace.reading.contract import THREAD_MAIN

if TYPE_CHECKING:
    from contexttrace.reading import Trace


def thread_ids(trace: Trace) -> dict[str, str]:
    """Map every id `--thread` takes to the thread it names.

    Returns
    -------
    dict
        Id → thread (`calls.thread`): ``main``; each other thread's own key (the agent id of a
        transcript's agent file, the Task / Agent tool_use id in stream-json, ``sidechain-<uuid>`` for a
        1.0.x inline sidechain; as `context usage --breakdown` names it), also spelt ``agent-<id>`` as
        its file is named; and the other id of each pair a Task / Agent result links exactly
        (`tool_results.agent_id` ↔ `tool_use_id`: the agent id of a stream-json subagent, the Task id of
        a transcript's). Keys in the order of the threads' first calls. Exact.
    """
    v = trace.view("calls")
    first: dict[str, int] = {}
    for seq, th in zip(v.get_column("seq").to_list(), v.get_column("thread").to_list(), strict=True):
        if th is not None and (th not in first or seq < first[th]):
            first[th] = seq
    ids = {THREAD_MAIN: THREAD_MAIN}
    for th in sorted(first, key=first.__getitem__):
        ids[th] = th
    for th in list(ids):
        if th != THREAD_MAIN:
            ids.setdefault(f"agent-{th}", th)
    res = trace.view("tool_results")
    for tid, agent in zip(res.get_column("tool_use_id").to_list(), res.get_column("agent_id").to_list(), strict=True):
        if tid is not None and agent is not None:
            if tid in ids and agent not in ids:
                ids[agent] = ids[tid]
            elif agent in ids and tid not in ids:
                ids[tid] = ids[agent]
    return ids


def thread_note(thread: str, ids: dict[str, str]) -> str:
    """Word why `thread` (an id as given, or ``main``) has no window to split.

    Returns
    -------
    str
        The note, naming the trace's other threads (`ids`: `thread_ids`), at most 12.

    >>> thread_note("main", {"main": "main", "t1": "t1", "agent-t1": "t1"})
    'no main-thread call: no window to split; its subagent threads (--thread): t1'
    >>> thread_note("x", {"main": "main"})
    '--thread x: no such thread in this trace; it has no subagent thread'
    """
    others = [k for k, v in ids.items() if k == v and k != THREAD_MAIN]
    listed = ", ".join(others[:12]) + (", …" if len(others) > 12 else "")
    if thread == THREAD_MAIN:
        note = "no main-thread call: no window to split"
        return f"{note}; its subagent threads (--thread): {listed}" if others else note
    if not others:
        return f"--thread {thread}: no such thread in this trace; it has no subagent thread"
    return f"--thread {thread}: no such thread in this trace; its threads: main, {listed}"
