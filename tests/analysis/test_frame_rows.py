"""A trace's tables read once into rows (`analysis/frame_rows.py`): the main thread's rows against the
plain filter and sort."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.frame_rows import main_rows


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["main", "main", "subagent", "compaction", None]), st.integers(0, 6), st.integers()),
        max_size=12,
    ),
    all_main=st.booleans(),
    sort=st.booleans(),
)
def test_main_rows_filter_and_stable_sort(rows, all_main, sort):
    """`main_rows` (every row kept at once, and not sorted again, when all are the main thread's and in
    order) equals filtering the main thread's rows and sorting them stably by seq."""
    from contexttrace.reading.model import ColumnView

    if all_main:
        rows = [("main", s, v) for _, s, v in rows]
    kinds = [k for k, _, _ in rows]
    table = ColumnView({"seq": [s for _, s, _ in rows], "value": [v for _, _, v in rows]})
    expected = [(s, v) for k, s, v in rows if k == "main"]
    if sort:
        expected.sort(key=lambda r: r[0])
    assert main_rows(kinds, table, ("seq", "value"), sort) == expected
