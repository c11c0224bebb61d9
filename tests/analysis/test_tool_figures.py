"""The main thread's tool calls as figures (`analysis/tool_figures.py`): the largest results against the
plain join."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from contexttrace.analysis.tool_figures import largest_results_of


def _largest_by_the_rule(names: list, results: list, limit: int = 5) -> list[dict]:
    """`largest_results_of` as first written: every row of an id matches (a left join; null ids never do)."""
    by_id: dict[str, list[str]] = {}
    for tid, name in names:
        if tid is not None:
            by_id.setdefault(tid, []).append(name if name is not None else "?")
    totals: dict[str, int] = {}
    for tid, chars in results:
        for name in by_id.get(tid, ["?"]) if tid is not None else ["?"]:
            totals[name] = totals.get(name, 0) + (chars or 0)
    ranked = sorted(((c, n) for n, c in totals.items() if c > 0), key=lambda cn: (-cn[0], cn[1]))[:limit]
    return [{"tool": n, "chars": int(c)} for c, n in ranked]


_IDS = st.sampled_from(["t1", "t2", "t3", "t4", "t5", "t6", "t7", None])


_NAMES = st.sampled_from(["Read", "Bash", "Grep", "Edit", "mcp__a__b", "?", None])


@settings(max_examples=500, deadline=None)
@given(
    names=st.one_of(
        st.lists(st.tuples(_IDS, _NAMES), max_size=8),  # ids repeated, null ids
        st.lists(st.tuples(_IDS, _NAMES), max_size=8, unique_by=lambda u: u[0]),  # each id once
    ),
    results=st.lists(st.tuples(_IDS, st.sampled_from([None, 0, 1, 5, 100, 100, 2_000])), max_size=10),
    limit=st.sampled_from([1, 2, 5]),
)
def test_largest_results_is_the_join(names, results, limit):
    """`largest_results_of` equals the join of results to every row of their id, ids unique or not."""
    assert largest_results_of(names, results, limit) == _largest_by_the_rule(names, results, limit)
