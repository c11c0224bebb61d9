"""One trace's tables read once into plain Python rows, shared by every figure of a report.

On tables of tens to hundreds of rows a Polars operation costs more in overhead (≈ 20–100 µs) than in
work, so a report reads the columns its figures need once into lists (`FrameRows`) and computes from
those. The row layouts (`CALL_ROW`, `USE_ROW`, `RESULT_ROW`, `EVENT_ROW`) are named here once, so a
reader of a row finds a column by name, never by a position repeated elsewhere. Pure: nothing here
prints, and no Polars frame is built.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from contexttrace.reading.contract import THREAD_MAIN

if TYPE_CHECKING:
    from contexttrace.reading import Table, Trace

_by_seq = itemgetter(0)

#: Columns of `FrameRows.main_calls`, `main_uses`, `main_results` and `main_events`, in tuple order.
#: Each layout names its `ts_ms` column; a reader finds it with ``LAYOUT.index("ts_ms")``.
CALL_ROW = ("seq", "prompt_tokens", "cache_read_tokens", "stop_reason", "model", "end_ts_ms", "prev_ts_ms",
            "output_tokens", "ts_ms")  # fmt: skip
USE_ROW = ("seq", "tool_use_id", "name", "input_json", "file_path", "ts_ms")
RESULT_ROW = ("seq", "tool_use_id", "is_error", "denied", "result_chars", "result_images", "result_image_bytes",
              "persisted", "persisted_bytes", "ts_ms")  # fmt: skip
EVENT_ROW = ("seq", "kind", "trigger", "pre_tokens", "post_tokens", "line", "ts_ms", "tokens_saved", "cleared_results")


def main_rows(kinds: list[Any], frame: Table, cols: tuple[str, ...], sort: bool = True) -> list[tuple[Any, ...]]:
    """Read the main thread's rows of a table as tuples of the columns asked for.

    Parameters
    ----------
    kinds
        The table's `thread_kind` column as a list (the caller often has it already).
    frame
        A table of the trace (`Trace.view`), with every column of `cols`.
    cols
        The columns of each tuple, in order; the first is the sort key (`seq`).
    sort
        Sort by the first column (stable, as Polars' sort); False keeps table order.

    Returns
    -------
    list of tuple
        One tuple per row whose thread kind is ``"main"``. Exact; raises what `get_column` raises for a
        missing column.
    """
    lists = [frame.get_column(c).to_list() for c in cols]
    if kinds.count(THREAD_MAIN) == len(kinds):  # every row is the main thread's: no subagent, no compaction
        rows = list(zip(*lists, strict=True))
        if sort and lists[0] != sorted(lists[0]):  # a stable sort of rows already in order moves none
            rows.sort(key=_by_seq)
        return rows
    rows = [r for k, r in zip(kinds, zip(*lists, strict=True), strict=True) if k == THREAD_MAIN]
    if sort:
        rows.sort(key=_by_seq)
    return rows


class FrameRows:
    """One trace's tables as plain Python rows, read once and shared by every figure of a report.

    `main_*` rows are the main thread's (tuples in the order of `CALL_ROW`, `USE_ROW`, `RESULT_ROW`,
    `EVENT_ROW`), sorted by `seq` except `main_results` (table order). The other attributes cover every
    thread where their comment says so. Exact copies of the table values.
    """

    def __init__(self, trace: Trace) -> None:
        # Views, not frames: a report never needs the Polars frames it would turn straight into lists.
        calls, uses, results, events = (trace.view(t) for t in ("calls", "tool_uses", "tool_results", "events"))
        self.call_kinds: list[str | None] = calls.get_column("thread_kind").to_list()
        self.main_calls = main_rows(self.call_kinds, calls, CALL_ROW)
        #: every call's (seq, model), all threads
        self.call_models: list[tuple[int, str | None]] = list(
            zip(calls.get_column("seq").to_list(), calls.get_column("model").to_list(), strict=True)
        )
        use_kinds = uses.get_column("thread_kind").to_list()
        self.main_uses = main_rows(use_kinds, uses, USE_ROW)
        #: every tool use's (tool_use_id, name), all threads, table order
        self.use_names: list[tuple[str | None, str | None]] = list(
            zip(uses.get_column("tool_use_id").to_list(), uses.get_column("name").to_list(), strict=True)
        )
        result_kinds = results.get_column("thread_kind").to_list()
        self.main_results = main_rows(result_kinds, results, RESULT_ROW, sort=False)
        result_ids = results.get_column("tool_use_id").to_list()
        self.failed_ids: set[str] = {
            i for i, e in zip(result_ids, results.get_column("is_error").to_list(), strict=True) if e and i is not None
        }
        self.hashes: dict[str, int] = result_hashes(results, result_ids)
        self.main_events = main_rows(events.get_column("thread_kind").to_list(), events, EVENT_ROW)
        self.bounds = [e for e in self.main_events if e[1] == "compact_boundary"]
        self.microcompactions = [e for e in self.main_events if e[1] == "microcompact_boundary"]
        #: (seq of the microcompaction, tool_use_id) of each tool result a microcompaction cleared
        self.cleared: list[tuple[int, str]] = cleared_results(results, result_ids)


def cleared_results(results: Table, ids: list[str | None]) -> list[tuple[int, str]]:
    """List the tool results a microcompaction cleared from the window.

    Parameters
    ----------
    results
        The `tool_results` table (`Trace.view("tool_results")`).
    ids
        Its `tool_use_id` column as a list.

    Returns
    -------
    list of (int, str)
        ``(cleared_seq, tool_use_id)`` per cleared result (`tool_results.cleared_seq`: the seq of the
        `microcompact_boundary` line whose `compactedToolIds` names it), sorted; [] when the table has no
        `cleared_seq` column. Exact.
    """
    if "cleared_seq" not in results.columns:
        return []
    return sorted(
        (s, i) for s, i in zip(results.get_column("cleared_seq").to_list(), ids, strict=True) if s is not None and i
    )


def result_hashes(results: Table, ids: list[str | None] | None = None) -> dict[str, int]:
    """Map each tool result's `tool_use_id` to the hash of its content.

    Parameters
    ----------
    results
        The `tool_results` table.
    ids
        Its `tool_use_id` column as a list, or None to read it here.

    Returns
    -------
    dict
        tool_use_id → `content_hash` for the rows that have both (a later row wins); {} when the table has
        no `content_hash` column. Exact.
    """
    if "content_hash" not in results.columns:
        return {}
    if ids is None:
        ids = results.get_column("tool_use_id").to_list()
    return {
        i: h
        for i, h in zip(ids, results.get_column("content_hash").to_list(), strict=True)
        if i is not None and h is not None
    }
