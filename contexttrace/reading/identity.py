"""Calls copied across session files: which session owns a call that several transcripts hold.

`--resume`, `--continue` and forks start a new session file whose first lines are copies of earlier calls
(same `message.id` and input-side usage). A call found in more than one transcript trace of a run belongs
to the trace whose last timestamp is earliest; the others drop it (`drop_inherited_calls`).

This works on any `Trace`'s call columns (`model.KEY_COLUMNS` and `end_ts_ms`), the slim traces a worker or
the result store sends included, so a run served from the store checks it without importing a reader.
Plain Python over lists (no Polars), no I/O, nothing printed.
"""

from __future__ import annotations

import itertools
from typing import Any, TypeAlias

from contexttrace.reading.contract import FORMAT_TRANSCRIPT, THREAD_MAIN
from contexttrace.reading.model import KEY_COLUMNS, TABLES, Table, Trace

#: A call's identity as a tuple: message id, input tokens, cache write tokens, cache read tokens.
CallKey: TypeAlias = tuple[Any, Any, Any, Any]


def call_key_text(message_id: Any, input_tokens: Any, cache_write: Any, cache_read: Any) -> str:
    """A call's key as `inherited_calls` gives it: ``"message.id|input|cache write|cache read"`` (counts as
    written: ``None`` when unknown)."""
    return f"{message_id}|{input_tokens}|{cache_write}|{cache_read}"


def inherited_calls(traces: list[Trace]) -> dict[int, set[str]]:
    """The calls each trace holds that another trace of the run owns (`drop_inherited_calls`' rule).

    Returns
    -------
    dict of int to set of str
        Trace index (in `traces`) -> the keys of the calls it loses (``"message.id|input|cache write|cache
        read"``, token counts as written); traces that lose none are absent.

    Reads only the call columns `message_id`, `input_tokens`, `cache_write_tokens`, `cache_read_tokens` and
    `end_ts_ms` (Unix ms, from each call's last line), so it works on the slim traces workers send back
    (`Trace.slim`). Only session transcripts take part; a run of one trace loses nothing. Raises nothing.
    """
    keyed = [
        (i, t)
        for i, t in enumerate(traces)
        if t.format == FORMAT_TRANSCRIPT and t.view("calls").height and len(traces) > 1
    ]
    if len(keyed) < 2:
        return {}
    # A call belongs to the trace holding it whose (last timestamp, index) is least: taken in that order,
    # a trace loses the keys some trace before it holds. Set operations, no text made per call: first over
    # the message ids alone (a copied call repeats its id), then over whole keys for the ids seen in more
    # than one trace (none in most runs): 8 ms → 2 ms for the 851 traces of the real-content corpus.
    order: list[tuple[int, int, list[Any]]] = []  # (last timestamp, index, message ids), in that order
    for i, t in keyed:
        view = t.view("calls")
        ends = view.get_column("end_ts_ms").to_list()
        if None in ends:
            ends = [v for v in ends if v is not None]
        order.append((max(ends) if ends else 2**62, i, view.get_column("message_id").to_list()))
    order.sort(key=lambda o: o[:2])
    seen_ids: set[Any] = set()
    shared: set[Any] = set()
    for _last, _i, ids in order:
        shared |= seen_ids.intersection(ids)
        seen_ids.update(ids)
    shared.discard(None)  # a call without a message id is no copy of another
    if not shared:
        return {}
    seen: set[CallKey] = set()
    out: dict[int, set[str]] = {}
    for _last, i, ids in order:
        if shared.isdisjoint(ids):
            continue  # none of its calls is in another trace
        view = traces[i].view("calls")
        others = (view.get_column(c).to_list() for c in KEY_COLUMNS[1:])  # (the message ids are `ids`)
        keys = {k for k in zip(ids, *others, strict=True) if k[0] in shared}
        if lost := keys & seen:
            out[i] = {call_key_text(*k) for k in lost}
        seen |= keys
    return dict(sorted(out.items()))


def drop_inherited_calls(traces: list[Trace], lost: dict[int, set[str]] | None = None) -> list[Trace]:
    """Give each call copied into several session files to one session only.

    `--resume`, `--continue` and forks start a new file whose first lines are copies of earlier calls
    (same `message.id` and usage). A call found in more than one transcript trace of a run belongs to
    the trace whose last timestamp is earliest (the session it was first written in; argument order
    breaks ties); the other traces drop it, with its tool uses and their results and the events written
    up to the last copied main-thread call, count it in `inherited_calls` and say so in a warning.

    Parameters
    ----------
    traces
        Traces of one run, in argument order.
    lost
        `inherited_calls(traces)`, when already known.

    Returns
    -------
    list of Trace
        The same traces (new objects where something was dropped), in the same order.
    """
    lost_by_trace = inherited_calls(traces) if lost is None else lost
    if not lost_by_trace:
        return traces
    # Plain Python over the tables' columns (frames or lists): importing Polars for this alone would cost
    # a run over a projects folder 0.3 s and 130 MB, and resumed sessions are common there.
    out = list(traces)
    for idx, drop in lost_by_trace.items():
        t = traces[idx]
        if t.slim:
            continue  # only its call keys are here (a worker read it, and it could not be read again)
        tables = {name: _table_columns(t.view(name)) for name in TABLES}
        calls = tables["calls"]
        keys = zip(*(calls[c] for c in KEY_COLUMNS), strict=True)
        keep_calls = [m is None or call_key_text(m, a, b, c) not in drop for m, a, b, c in keys]
        dropped_ids = {m for m, keep in zip(calls["message_id"], keep_calls, strict=True) if not keep}
        # The copies are the new file's first lines: events among them (a copied compaction boundary, the
        # copied prompts) belong to the original session too.
        copied_main = [
            seq
            for seq, kind, keep in zip(calls["seq"], calls["thread_kind"], keep_calls, strict=True)
            if not keep and kind == THREAD_MAIN
        ]
        last_copied = max(copied_main) if copied_main else None
        uses = tables["tool_uses"]
        keep_uses = [m is None or m not in dropped_ids for m in uses["message_id"]]
        uses_drop = {
            tid for tid, keep in zip(uses["tool_use_id"], keep_uses, strict=True) if not keep and tid is not None
        }
        keep_results = [tid is None or tid not in uses_drop for tid in tables["tool_results"]["tool_use_id"]]
        keep_events = [last_copied is None or seq > last_copied for seq in tables["events"]["seq"]]
        out[idx] = Trace(
            **{
                **t.__dict__,
                "tables": {
                    name: {c: list(itertools.compress(values, keep)) for c, values in tables[name].items()}
                    for name, keep in (
                        ("calls", keep_calls),
                        ("tool_uses", keep_uses),
                        ("tool_results", keep_results),
                        ("events", keep_events),
                    )
                },
                "inherited_calls": len(drop),
                "warnings": [
                    *t.warnings,
                    f"{len(drop)} call(s) copied from another session's file (resume, continue or fork): counted there",
                ],
            }
        )
    return out


def _table_columns(table: Table) -> dict[str, list[Any]]:
    """A table's columns as lists, in its column order (a frame's values are copied out of it)."""
    return {name: table.get_column(name).to_list() for name in table.columns}
