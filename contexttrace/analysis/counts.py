"""Counts as a trace writes them (tokens, ms, turns): a bounded integer, or unknown, never a guess.

The reader bounds the usage counts of each call; this module bounds what the figures take from elsewhere
in a trace, mainly the stream-json `result` line, which the reader keeps as written. A value that is not a
count is unknown (None) and named in a warning, quoted short (`shown_value`). Pure: no frames, no printing.
"""

from __future__ import annotations

from typing import Any

#: A count at or above this is not a count: past 2**53 a float, and so Claude Code's JavaScript, cannot hold
#: it exactly. The reader bounds usage and other counts the same way; `count_of` bounds what the figures
#: take from a stream-json `result` line.
MAX_COUNT = 2**53

#: A warning quotes at most this many characters of a value.
SHOWN_CHARS = 40


def count_of(value: Any) -> tuple[int | None, bool]:
    """Read a count (tokens, ms, turns) as the trace wrote it, bounded as the reader bounds usage counts.

    Parameters
    ----------
    value
        The value as parsed from JSON: any type.

    Returns
    -------
    (int or None, bool)
        ``(n, True)`` for an int with 0 <= n < `MAX_COUNT` (a bool is not an int here); ``(None, True)``
        when absent or null; ``(None, False)`` when written but not a count: a string, a float (``10.0``,
        NaN, ``1e999``), a list, a bool, a negative number, or an integer of 2**53 or more (the lenient
        JSON fallback reads any number of digits). Exact; never raises.

    Examples
    --------
    >>> count_of(5), count_of(None), count_of(-1), count_of(10.0), count_of(10**400), count_of(True)
    ((5, True), (None, True), (None, False), (None, False), (None, False), (None, False))
    """
    if value is None:
        return None, True
    if type(value) is int and 0 <= value < MAX_COUNT:
        return value, True
    return None, False


def shown_value(value: Any) -> str:
    """Quote a value as a warning shows it: short, and for any value the JSON parser can return.

    Parameters
    ----------
    value
        Any value read from a trace.

    Returns
    -------
    str
        Its repr, cut at `SHOWN_CHARS` characters (the last one ``…``), so a 400-digit integer stays
        short; a container nested too deep for a repr (a 990-deep object raises RecursionError) by its
        type; an integer past Python's digit limit for str() by its size in bits. Never raises.

    Examples
    --------
    >>> shown_value(-1), shown_value("x" * 50)[-3:], shown_value(2**20_000)
    ('-1', 'xx…', 'an integer of 20001 bits')
    """
    if type(value) is int and value.bit_length() > 14_000:  # past str()'s 4,300 digits: ValueError
        return f"an integer of {value.bit_length()} bits"
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep to show
        return f"a {'JSON object' if isinstance(value, dict) else type(value).__name__} nested too deep to show"
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def result_count(result: dict[str, Any] | None, key: str, where: str = "") -> tuple[int | None, str | None]:
    """Read one count of a stream-json `result` line (`duration_ms`, `num_turns`, a `usage` count).

    Parameters
    ----------
    result
        The `result` line (`Trace.result`) or a dict inside it (its `usage`), or None.
    key
        The field's name as written.
    where
        How the warning names the dict inside the line (``"usage."``), empty for the line itself.

    Returns
    -------
    (int or None, str or None)
        The count (`count_of`), None when absent or not a count; and a warning when a value was written
        that is not a count (it is then unknown, never a figure), else None. Exact; never raises.

    Examples
    --------
    >>> result_count({"duration_ms": -123456789}, "duration_ms")
    (None, 'result line: duration_ms is not a count (-123456789); not used')
    """
    value = (result or {}).get(key)
    count, ok = count_of(value)
    return count, None if ok else f"result line: {where}{key} is not a count ({shown_value(value)}); not used"
