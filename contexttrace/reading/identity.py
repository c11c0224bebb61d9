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
from typing import Any

from contexttrace.reading.contract import FORMAT_TRANSCRIPT, THREAD_MAIN
from contexttrace.reading.model import KEY_COLUMNS, TABLES, Table, Trace


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
    # Plain Python over the call columns: one pass per trace, no frame is built for traces that keep all.
    owner: dict[str, tuple[int, int]] = {}  # call key -> (last timestamp, trace index) of its owner
    held: list[tuple[int, set[str]]] = []
    for i, t in keyed:
        view = t.view("calls")
        cols = [view.get_column(c).to_list() for c in KEY_COLUMNS]
        ends = [v for v in view.get_column("end_ts_ms").to_list() if v is not None]
        last = max(ends) if ends else 2**62
        keys = {f"{m}|{a}|{b}|{c}" for m, a, b, c in zip(*cols, strict=True) if m is not None}
        held.append((i, keys))
        for key in keys:
            if key not in owner or (last, i) < owner[key]:
                owner[key] = (last, i)
    lost_by_trace = {i: {k for k in keys if owner[k][1] != i} for i, keys in held}
    return {i: keys for i, keys in lost_by_trace.items() if keys}


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
        keep_calls = [m is None or f"{m}|{a}|{b}|{c}" not in drop for m, a, b, c in keys]
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
