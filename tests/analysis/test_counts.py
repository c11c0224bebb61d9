"""Counts as a trace writes them (`analysis/counts.py`): what a warning quotes of a value it refused."""

from __future__ import annotations

from contexttrace.analysis.counts import shown_value


def test_warning_quotes_any_value_without_raising():
    """A warning quotes what it refused: a 3,000-deep object (no repr: RecursionError) or an integer past
    Python's 4,300-digit limit (no str: ValueError) is described, never an exception."""
    deep: dict = {}
    node = deep
    for _ in range(3000):
        node["a"] = {}
        node = node["a"]
    assert shown_value(deep) == "a JSON object nested too deep to show"
    assert shown_value(10**20000) == "an integer of 66439 bits"
    assert shown_value([1, 2]) == "[1, 2]"
