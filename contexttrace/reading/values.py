"""Values as a trace writes them, read the one way every reader reads them: moments and token counts.

A value that cannot be what its field holds (a stamp that names no moment, a year out of range, a count
that is negative, fractional or past 2**53) is unknown (None): it costs its field, never its line or the
trace.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

#: A count at or above this is no token count (past what a float holds exactly).
MAX_COUNT = 2**53


def epoch_ms(stamp: Any) -> int | None:
    """Unix epoch milliseconds of an ISO-8601 stamp (``2026-01-01T10:00:00.123Z``; a stamp without an offset
    is UTC); None for anything else, a year out of range included.

    >>> epoch_ms("2026-01-01T00:00:00.5Z"), epoch_ms("2026-01-01T00:00:00.5"), epoch_ms("0000-01-01T00:00:00Z")
    (1767225600500, 1767225600500, None)
    """
    if type(stamp) is not str:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00") if stamp.endswith("Z") else stamp)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None


def token_count(value: Any) -> int | None:
    """A token count as written: an int from 0 below `MAX_COUNT` (a bool is no count), else None.

    >>> token_count(12), token_count(-1), token_count(1.5), token_count(True), token_count(2**53)
    (12, None, None, None, None)
    """
    return value if type(value) is int and 0 <= value < MAX_COUNT else None
