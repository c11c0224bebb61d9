"""Values as a trace writes them, read the one way every reader reads them: moments and token counts.

A value that cannot be what its field holds (a stamp that names no moment, a year out of range, a count
that is negative, fractional or past 2**53) is unknown (None): it costs its field, never its line or the
trace.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from contexttrace.reading.contract import THREAD_MAIN

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


def cached_prompt_call(prompt: int | None, cached: int, ts_ms: int | None, prev_ts_ms: int | None) -> dict[str, Any]:
    """The token and time columns of a `contract.CALL_SCHEMA` row for an API that reports a call's prompt
    with its cached part inside it and bills no cache write (OpenAI's Responses API in Codex CLI, Gemini's
    usage metadata in Gemini CLI); the reader adds identity, output and content columns.

    Parameters
    ----------
    prompt
        Prompt tokens of the call, cached included (exact, as the trace states them), or None if unreadable.
    cached
        Of which served from the cache (tokens; 0 when not stated). Clamped to `prompt`.
    ts_ms, prev_ts_ms
        The call's moment and the previous call's (epoch ms UTC, or None): one line per call, so it starts
        and ends there.

    Returns
    -------
    dict
        ``input_tokens`` (prompt − cached), ``cache_read_tokens``, ``cache_write_tokens`` 0 (None with the
        prompt unknown), ``prompt_tokens``, the fixed columns such APIs do not have (5m/1h writes 0, no
        cache split, no web search requests, ``stop_reason`` "completed", one line) and the main thread.

    >>> row = cached_prompt_call(1000, 400, 5, None)
    >>> row["input_tokens"], row["cache_read_tokens"], row["cache_write_tokens"], row["prompt_tokens"]
    (600, 400, 0, 1000)
    """
    return {
        "thread": THREAD_MAIN,
        "thread_kind": THREAD_MAIN,
        "input_tokens": None if prompt is None else max(prompt - cached, 0),
        "cache_write_tokens": 0 if prompt is not None else None,
        "cache_read_tokens": min(cached, prompt) if prompt is not None else None,
        "prompt_tokens": prompt,
        "cache_write_5m_tokens": 0,
        "cache_write_1h_tokens": 0,
        "cache_split_known": False,
        "web_search_requests": 0,
        "stop_reason": "completed",
        "ts_ms": ts_ms,
        "end_ts_ms": ts_ms,
        "prev_ts_ms": prev_ts_ms,
        "n_lines": 1,
    }
