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

#: The first and last Unix epoch ms a moment may have: 0001-01-02 and the last ms before 9999-12-31, UTC. A day
#: inside `datetime`'s years 1 to 9999, so that every report can show a moment in any time zone (offsets are
#: under a day); a stamp outside names no moment (``0001-01-01T00:00:00+14:00`` is in year 0 in UTC).
MIN_MOMENT_MS = -62_135_510_400_000
MAX_MOMENT_MS = 253_402_214_400_000 - 1


def is_moment(ms: int) -> bool:
    """Whether a Unix epoch ms is a moment every report can show (`MIN_MOMENT_MS` to `MAX_MOMENT_MS`).

    >>> is_moment(0), is_moment(-62135647200000), is_moment(253402351199000)
    (True, False, False)
    """
    return MIN_MOMENT_MS <= ms <= MAX_MOMENT_MS


def epoch_ms(stamp: Any) -> int | None:
    """Unix epoch milliseconds of an ISO-8601 stamp (``2026-01-01T10:00:00.123Z``; a stamp without an offset
    is UTC); None for anything else, a moment out of range included (`is_moment`).

    >>> epoch_ms("2026-01-01T00:00:00.5Z"), epoch_ms("2026-01-01T00:00:00.5"), epoch_ms("0000-01-01T00:00:00Z")
    (1767225600500, 1767225600500, None)
    >>> epoch_ms("0001-01-01T00:00:00+14:00"), epoch_ms("9999-12-31T23:59:59-14:00")
    (None, None)
    """
    if type(stamp) is not str:
        return None
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00") if stamp.endswith("Z") else stamp)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        ms = int(moment.timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None
    return ms if is_moment(ms) else None


def token_count(value: Any) -> int | None:
    """A token count as written: an int from 0 below `MAX_COUNT` (a bool is no count), else None.

    >>> token_count(12), token_count(-1), token_count(1.5), token_count(True), token_count(2**53)
    (12, None, None, None, None)
    """
    return value if type(value) is int and 0 <= value < MAX_COUNT else None
