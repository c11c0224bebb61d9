"""Which traces a command shows, in what order, and what adds up: the daily-use options.

The options read the facts every JSON record carries (`label`, `project`, `cwd`, `start`, `start_source`:
`analysis.facts.trace_facts`, stored by each report builder).

* `parse_timezone`, `parse_when`, `TimeRange`: `--since` / `--until` / `--timezone`.
* `Selection`, `select`: `--since`, `--until`, `--project`, `--session`.
* `sort_order`: `--sort KEY --desc/--asc`.
* `unique_labels`: the labels, made unique where two traces would share one.
* `trace_totals`, `sum_totals`, `usage_totals`, `group_usage`: the totals row, `context usage --group-by`.

Everything works on the JSON records (`to_dict()`), never prints, and never formats a number.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from contexttrace.reading.contract import CAPABILITIES_BY_FORMAT
from contexttrace.reading.urls import is_folder, is_url
from contexttrace.select.thresholds import METRICS, metric_rank


def start_ms(record: Mapping[str, Any]) -> int | None:
    """A record's `start` back as Unix epoch ms (None without one)."""
    text = record.get("start")
    return None if not text else int(datetime.fromisoformat(text).timestamp() * 1000)


# -- --since / --until / --timezone ---------------------------------------------------------------


def parse_timezone(name: str | None) -> tzinfo | None:
    """`--timezone`: an IANA name (``Europe/Paris``, ``UTC``); None or ``local`` is the local time zone.

    Returns
    -------
    tzinfo or None
        None stands for the local time zone (each date resolved with its own daylight-saving offset).

    Raises
    ------
    ValueError
        Not a time zone this system knows (the message names it).

    >>> parse_timezone("UTC"), parse_timezone("local")
    (zoneinfo.ZoneInfo(key='UTC'), None)
    """
    if name is None or name.strip().lower() == "local":
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # (imports sysconfig: only for --timezone)

    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{name!r} is not a time zone (examples: UTC, Europe/Paris, America/New_York, local)") from exc


def localize(moment: datetime, tz: tzinfo | None) -> datetime:
    """A naive date-time read in `tz` (None: local time); an aware one is kept as it is."""
    if moment.tzinfo is not None:
        return moment
    return moment.astimezone() if tz is None else moment.replace(tzinfo=tz)


_AGO = re.compile(r"(\d+)\s*([dhw])")
_AGO_UNIT = {"d": "days", "h": "hours", "w": "weeks"}
_COMPACT_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")


def parse_when(text: str, tz: tzinfo | None, *, end: bool = False, now_ms: int | None = None) -> int:
    """Parse a `--since` / `--until` value into a bound in Unix epoch ms.

    Parameters
    ----------
    text
        A date (``2026-02-12`` or ``20260212``), a date-time (``2026-02-12T16:00``, ``2026-02-12 16:00``,
        with seconds, a fraction, an offset or ``Z``), ``today``, ``yesterday``, or a time ago (``7d``,
        ``12h``, ``2w``).
    tz
        The zone of a date or a date-time without an offset (`parse_timezone`; None: local).
    end
        True for `--until`: the bound returned is exclusive, so a date means through the end of that day
        and a date-time is included.
    now_ms
        Now, for ``today`` and times ago (default: the clock).

    Returns
    -------
    int
        Unix epoch ms: `--since` keeps traces that start at or after it, `--until` (``end``) those that
        start before it.

    Raises
    ------
    ValueError
        Anything else (the message gives examples), or a moment outside the years 1 to 9999 once read
        in `tz` (``800000d``, ``9999-12-31``: its end is in the year 10000); the message quotes `text`.

    Examples
    --------
    >>> utc = parse_timezone("UTC")
    >>> parse_when("2026-02-12", utc), parse_when("2026-02-12", utc, end=True)
    (1770854400000, 1770940800000)
    >>> parse_when("2026-02-12T17:02:25+01:00", utc)
    1770912145000
    """
    now = (time.time() * 1000) if now_ms is None else now_ms
    try:
        bound = _bound(text, tz, end, now)
    except OverflowError:
        raise ValueError(_out_of_range(text)) from None
    try:
        in_zone(datetime.fromtimestamp(bound / 1000, UTC), tz)  # the notes show the bound in `tz`
    except (OverflowError, OSError, ValueError):
        raise ValueError(_out_of_range(text)) from None
    return bound


def _out_of_range(text: str) -> str:
    return f"{text!r} is out of range: a bound must fall within the years 1 to 9999 in its time zone"


def _bound(text: str, tz: tzinfo | None, end: bool, now: float) -> int:
    """`parse_when`'s bound; ValueError when `text` is no moment, OverflowError when the moment falls
    outside the years 1 to 9999."""
    value = text.strip().lower()
    ago = _AGO.fullmatch(value)
    if ago:
        return int(now - timedelta(**{_AGO_UNIT[ago[2]]: int(ago[1])}).total_seconds() * 1000)
    day: date | None = None
    if value in ("today", "yesterday"):
        day = datetime.fromtimestamp(now / 1000, tz).date() - timedelta(days=value == "yesterday")
    elif compact := _COMPACT_DATE.fullmatch(value):
        value = f"{compact[1]}-{compact[2]}-{compact[3]}"
    if day is None:
        try:
            day = date.fromisoformat(value) if len(value) == 10 else None
            moment = None if day else datetime.fromisoformat(text.strip())
        except ValueError:
            raise ValueError(
                f"{text!r} is not a date or time (examples: 2026-02-12, 2026-02-12T16:00, 2026-02-12T16:00Z, "
                "today, yesterday, 7d, 12h)"
            ) from None
        if moment is not None:
            return _epoch_ms(moment, tz) + (1 if end else 0)  # ms: an inclusive end
    assert day is not None
    if end:
        day += timedelta(days=1)  # OverflowError past 9999-12-31
    return _epoch_ms(datetime(day.year, day.month, day.day), tz)


def _epoch_ms(moment: datetime, tz: tzinfo | None) -> int:
    """`moment` (naive: read in `tz`) as Unix epoch ms; OverflowError when the zone's offset takes it
    past the year 1 or 9999 (where Python raises ValueError "year 0 is out of range")."""
    try:
        return int(localize(moment, tz).timestamp() * 1000)
    except ValueError as exc:
        raise OverflowError(str(exc)) from None


def in_zone(moment: datetime, tz: tzinfo | None) -> datetime:
    """An aware `moment` in `tz` (None: the local zone).

    Raises
    ------
    OverflowError
        The zone's offset takes the moment past the year 1 or 9999 (``9999-12-31T23:00Z`` in Asia/Tokyo),
        which no date-time can hold.

    >>> in_zone(datetime(2026, 2, 12, 23, 30, tzinfo=UTC), parse_timezone("Asia/Tokyo")).isoformat()
    '2026-02-13T08:30:00+09:00'
    """
    try:
        return moment.astimezone(tz)
    except (OverflowError, ValueError, OSError) as exc:
        raise OverflowError(f"{moment.isoformat()} cannot be shown in that time zone: {exc}") from None


@dataclass(frozen=True)
class Selection:
    """What `select` keeps: a start in [`since_ms`, `until_ms`), a project matching one of `projects`
    (glob patterns, ``*`` and ``?``), a session id starting with one of `sessions`. Empty means any."""

    since_ms: int | None = None
    until_ms: int | None = None
    projects: tuple[str, ...] = ()
    sessions: tuple[str, ...] = ()

    @property
    def by_time(self) -> bool:
        """True when `--since` or `--until` was given."""
        return self.since_ms is not None or self.until_ms is not None

    @property
    def empty(self) -> bool:
        """True when it keeps every record."""
        return not (self.by_time or self.projects or self.sessions)


@dataclass
class Selected:
    """The indexes `select` kept, in record order, and counts for its notes on stderr."""

    kept: list[int] = field(default_factory=list)
    undated: int = 0  # left out by --since/--until: no start (standard input, stream-json without timestamps)


def project_names(record: Mapping[str, Any]) -> list[str]:
    """The names `--project` matches: the project, its full working directory, and a transcript's folder."""
    names = [record.get("project"), record.get("cwd")]
    path = record.get("path")
    has = CAPABILITIES_BY_FORMAT.get(record.get("format") or "")
    if has is not None and has.project_folder and path and path != "-":
        names.append(Path(path).parent.name)
    return [n for n in names if n]


def select(records: Sequence[Mapping[str, Any]], selection: Selection) -> Selected:
    """Keep the records that `selection` admits.

    Returns
    -------
    Selected
        Indexes kept (record order). With `--since` / `--until`, a record with no `start` is left out and
        counted (`undated`), so the CLI can say how many it could not place.

    Examples
    --------
    >>> recs = [{"project": "app", "session_id": "4d56aa", "start": "2026-02-12T16:02:25.284Z"},
    ...         {"project": "web", "session_id": "77aa00", "start": None}]
    >>> select(recs, Selection(projects=("app",))).kept, select(recs, Selection(sessions=("77",))).kept
    ([0], [1])
    >>> s = select(recs, Selection(since_ms=0)); s.kept, s.undated
    ([0], 1)
    """
    out = Selected()
    for i, rec in enumerate(records):
        if selection.projects and not any(
            fnmatchcase(name, pattern) for name in project_names(rec) for pattern in selection.projects
        ):
            continue
        sid = rec.get("session_id") or ""
        if selection.sessions and not any(sid.startswith(prefix) for prefix in selection.sessions):
            continue
        if selection.by_time:
            start = start_ms(rec)
            if start is None:
                out.undated += 1
                continue
            if selection.since_ms is not None and start < selection.since_ms:
                continue
            if selection.until_ms is not None and start >= selection.until_ms:
                continue
        out.kept.append(i)
    return out


# -- --sort ---------------------------------------------------------------------------------------

#: Sort keys that are not metrics: record key (or the label) each reads.
TEXT_SORT_KEYS = {"trace": "label", "project": "project", "start": "start", "session": "session_id", "path": "path"}
GROUP_SORT_KEYS = {"group": "group"}


def sort_keys(kind: str) -> list[str]:
    """Every `--sort` key of a record kind (``trace``, ``usage``, ``usage-group``)."""
    text = GROUP_SORT_KEYS if kind == "usage-group" else TEXT_SORT_KEYS
    return [*text, *METRICS[kind]]


def sort_order(records: Sequence[Mapping[str, Any]], kind: str, key: str, descending: bool = False) -> list[int]:
    """Order records by one key, stably; records without a value come last, in their order.

    Parameters
    ----------
    kind
        ``trace``, ``usage`` or ``usage-group``: which metrics exist (`thresholds.METRICS`).
    key
        A metric name (``peak``, ``cost``: grades and weather order by their score) or ``trace`` (the
        label), ``project``, ``start``, ``session``, ``path`` (``group`` for group rows); ``-`` and ``_``
        alike (``result-chars``).

    Returns
    -------
    list of int
        Record indexes in the new order.

    Raises
    ------
    ValueError
        An unknown key (the message lists the valid ones).

    Examples
    --------
    >>> sort_order([{"peak": 5}, {"peak": None}, {"peak": 9}], "trace", "peak", descending=True)
    [2, 0, 1]
    """
    name = key.strip().lower().replace("-", "_")
    text_keys = GROUP_SORT_KEYS if kind == "usage-group" else TEXT_SORT_KEYS
    metric = METRICS[kind].get(name)
    if metric is None and name not in text_keys:
        raise ValueError(f"{key!r} is not a sort key; valid keys: {', '.join(sort_keys(kind))}")

    def value(rec: Mapping[str, Any]) -> Any:
        if metric is not None:
            return metric_rank(metric, rec)
        raw = rec.get(text_keys[name])
        return raw.casefold() if isinstance(raw, str) else raw

    valued = [(value(r), i) for i, r in enumerate(records)]
    # reverse=True keeps equal values in their order (sorted stays stable), as ascending does
    known = sorted((v for v in valued if v[0] is not None), key=lambda v: v[0], reverse=descending)
    return [i for _, i in known] + [i for v, i in valued if v is None]


def unique_labels(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each record's short `label`; where two records would share one, the shortest ending of their `trace`
    names (whole folder names, the run's ``#N`` kept) that tells them apart.

    A table's first column stays narrow: ``project/4d5611e5`` or ``run.jsonl#2``, and ``a/run.jsonl`` beside
    ``b/run.jsonl`` rather than two absolute paths. The JSON keeps the full name (`trace`, `path`).

    >>> unique_labels([{"label": "a.jsonl", "trace": "/h/x/a.jsonl"}, {"label": "a.jsonl", "trace": "/h/y/a.jsonl"},
    ...                {"label": "b.jsonl", "trace": "b.jsonl"}])
    ['x/a.jsonl', 'y/a.jsonl', 'b.jsonl']
    >>> unique_labels([{"label": "r.jsonl#2", "trace": "/q/w/r.jsonl#2"},
    ...                {"label": "r.jsonl#2", "trace": "/p/w/r.jsonl#2"}])
    ['q/w/r.jsonl#2', 'p/w/r.jsonl#2']
    """
    labels = [r.get("label") or r["trace"] for r in records]
    seen: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        seen.setdefault(label, []).append(i)
    out = list(labels)
    for group in (g for g in seen.values() if len(g) > 1):
        names = [str(records[i]["trace"]) for i in group]
        for i, name in zip(group, shortest_endings(names), strict=True):
            out[i] = name
    return out


def shortest_endings(names: Sequence[str]) -> list[str]:
    """The shortest endings of `names`, in whole path parts (``/`` or ``\\``), that are all different.

    Names that are the same in full stay whole.

    >>> shortest_endings(["/h/x/a.jsonl", "/h/y/a.jsonl", "/h/y/b/a.jsonl"])
    ['x/a.jsonl', 'y/a.jsonl', 'b/a.jsonl']
    """
    parts = [re.split(r"(?<=[\\/])", n) for n in names]  # each part keeps its separator, so joins are exact
    longest = max(len(p) for p in parts)
    for k in range(1, longest + 1):
        endings = ["".join(p[-k:]) for p in parts]
        if len(set(endings)) == len(endings):
            return endings
    return list(names)


# -- totals ---------------------------------------------------------------------------------------

#: `context trace` columns that add up across traces (never maxima such as `peak`, nor grades).
TRACE_SUMS = ("calls", "compact", "tools", "failed", "denied", "repeat", "result_chars")
#: `context usage` totals keys that add up.
USAGE_SUMS = ("calls", "input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")


def _cost(values: Sequence[tuple[float | None, bool]]) -> tuple[float | None, bool]:
    """Sum of costs (correctly rounded) and whether it is a lower bound; None when no cost is known."""
    known = [c for c, _ in values if c is not None]
    lower = any(lb for _, lb in values) or len(known) < len(values)
    return (math.fsum(known) if known else None), lower


def trace_totals(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The totals row of `context trace`: the columns that add up, summed over `records`.

    Returns
    -------
    dict
        `traces` (count) and each `TRACE_SUMS` key (exact sums); `cost_usd` and `cost_is_lower_bound`
        when the records carry a cost (``--fail-on cost…``, ``--sort cost``).

    >>> trace_totals([{"calls": 2, "compact": 0, "tools": 3, "failed": 1, "denied": 0, "repeat": 0,
    ...                "result_chars": 10}] * 2)["calls"]
    4
    """
    out: dict[str, Any] = {"traces": len(records), **{k: sum(r[k] for r in records) for k in TRACE_SUMS}}
    if any("cost_usd" in r for r in records):
        out["cost_usd"], out["cost_is_lower_bound"] = _cost(
            [(r.get("cost_usd"), bool(r.get("cost_is_lower_bound"))) for r in records]
        )
    return out


def sum_totals(totals: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Add `context usage` totals dicts (`costs.token_totals` shape) into one.

    Returns
    -------
    dict
        `USAGE_SUMS` summed; `output_is_lower_bound` (any); `cache_hit_ratio` of the sums (None when
        all are 0); `cost_usd` (`math.fsum`; None when no cost is known), `cost_is_lower_bound` (any, or
        an unpriced part) and `lower_bound_reasons` (joined, in `costs.LOWER_BOUND_REASONS` order).
    """
    from contexttrace.reports.costs import LOWER_BOUND_REASONS, cache_hit_ratio  # (usage only: pricing)

    sums = {k: sum(t.get(k) or 0 for t in totals) for k in USAGE_SUMS}
    cost, lower = _cost([(t.get("cost_usd"), bool(t.get("cost_is_lower_bound"))) for t in totals])
    reasons = {r for t in totals for r in t.get("lower_bound_reasons") or ()}
    return {
        **sums,
        "output_is_lower_bound": any(t.get("output_is_lower_bound") for t in totals),
        "cache_hit_ratio": cache_hit_ratio(sums["cache_read_tokens"], sums["cache_write_tokens"], sums["input_tokens"]),
        "cost_usd": cost,
        "cost_is_lower_bound": lower,
        "lower_bound_reasons": [r for r in LOWER_BOUND_REASONS if r in reasons],
    }


def usage_totals(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The totals row of `context usage` (or of its groups): `traces`, `turns` (None when unknown) and
    `total` (`sum_totals` of the records' `total`)."""
    turns = [r.get("turns") for r in records]
    return {
        "traces": sum(r.get("traces", 1) for r in records),
        "turns": None if any(t is None for t in turns) else sum(turns),  # type: ignore[misc]
        "total": sum_totals([r["total"] for r in records]),
    }


GroupBy = Literal["day", "week", "month", "project", "model"]
GROUP_BY: tuple[str, ...] = ("day", "week", "month", "project", "model")


def group_key(record: Mapping[str, Any], by: str, tz: tzinfo | None) -> str | None:
    """The group of a usage record: its start's local date (``2026-02-12``), ISO week (``2026-W07``,
    weeks start on Monday) or month (``2026-02``) in `tz` (None: local), or its project; None when it has
    none (no start: standard input; no project).

    >>> rec = {"start": "2026-02-12T23:30:00.000Z", "project": "app"}
    >>> utc, paris = parse_timezone("UTC"), parse_timezone("Europe/Paris")
    >>> [group_key(rec, "day", utc), group_key(rec, "day", paris)]
    ['2026-02-12', '2026-02-13']
    >>> [group_key(rec, "week", utc), group_key(rec, "month", utc), group_key(rec, "project", utc)]
    ['2026-W07', '2026-02', 'app']
    """
    if by == "project":
        return record.get("project")
    return time_key(start_ms(record), by, tz)


def time_key(ms: int | None, by: str, tz: tzinfo | None) -> str | None:
    """The day (``2026-02-12``), ISO week (``2026-W07``) or month (``2026-02``) of a moment `ms` (epoch ms)
    in `tz` (None: local); None for no moment.

    >>> time_key(1770939000000, "day", parse_timezone("UTC")), time_key(None, "day", None)
    ('2026-02-12', None)
    """
    if ms is None:
        return None
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    try:
        day = in_zone(moment, tz).date()
    except OverflowError:
        day = moment.date()  # a start `tz` cannot show (year 9999 read east of UTC): its UTC date
    if by == "week":
        year, week, _ = day.isocalendar()
        return f"{year}-W{week:02d}"
    return day.isoformat() if by == "day" else day.isoformat()[:7]


def group_usage(
    records: Sequence[Mapping[str, Any]],
    by: str,
    tz: tzinfo | None,
    version: int,
    buckets: Sequence[Sequence[tuple[int, Mapping[str, Any]]]] | None = None,
) -> list[dict[str, Any]]:
    """`context usage --group-by`: one row per day, ISO week, month, project or model.

    Parameters
    ----------
    records
        `UsageReport.to_dict()` records (after `select`).
    by
        One of `GROUP_BY`. ``day``/``week``/``month`` group by message time: each call counts in the
        day of its own timestamp (`buckets`), so a session that runs past midnight counts in both days,
        once in each (its turns in the first); a trace whose calls carry no timestamp (stream-json) counts
        whole at its `start` (the file's modification time). ``model`` adds each trace's per-model rows
        (`models[]`, fast calls apart), so a trace on two models counts in both groups.
    tz
        The zone dates are read in (None: local).
    version
        The `usage-group` schema version each row carries.
    buckets
        Per record (same order), its calls' totals per quarter hour (`usage.time_buckets`); None or an
        empty list: the record counts whole at its start.

    Returns
    -------
    list of dict
        Sorted by group (None last): `schema_version`, `group_by`, `group` (None: no date, no project),
        `traces` (how many traces have calls in the group), `turns` (summed; None for ``model``: a turn has
        no single model), `total` (`sum_totals`).
    """
    groups: dict[str | None, list[tuple[Mapping[str, Any], Mapping[str, Any], bool]]] = {}
    for i, rec in enumerate(records):
        if by == "model":
            for row in rec.get("models") or ():
                groups.setdefault(row.get("model"), []).append((rec, row, True))
        elif by == "project" or not buckets or not buckets[i]:
            groups.setdefault(group_key(rec, by, tz), []).append((rec, rec["total"], True))
        else:
            for n, (key, total) in enumerate(_split_by_time(buckets[i], by, tz, rec["total"])):
                groups.setdefault(key, []).append((rec, total, n == 0))
    out = []
    for key in sorted(groups, key=lambda k: (k is None, k or "")):
        items = groups[key]
        traces = {id(rec): rec for rec, _, _ in items}
        turns = sum(rec.get("turns") or 0 for rec, _, first in items if first)
        out.append(
            {
                "schema_version": version,
                "group_by": by,
                "group": key,
                "traces": len(traces),
                "turns": None if by == "model" else turns,
                "total": sum_totals([t for _, t, _ in items]),
            }
        )
    return out


def _split_by_time(
    buckets: Sequence[tuple[int, Mapping[str, Any]]], by: str, tz: tzinfo | None, whole: Mapping[str, Any]
) -> list[tuple[str | None, Mapping[str, Any]]]:
    """A trace's totals per day, week or month of its calls' times, in time order; its whole `total` when
    they all fall in one (exactly the figures of the trace's row)."""
    parts: dict[str | None, list[Mapping[str, Any]]] = {}
    for ms, total in buckets:
        parts.setdefault(time_key(ms, by, tz), []).append(total)
    if len(parts) == 1:
        return [(next(iter(parts)), whole)]
    return [(key, sum_totals(totals)) for key, totals in parts.items()]


def is_scan(paths: Sequence[str]) -> bool:
    """True when the traces come from a folder scan: no path (the session roots) or a directory among
    them. A scan's table shows the `project` and `start` columns; traces named one by one do not need them."""
    return not paths or any(p != "-" and (is_folder(p) if is_url(p) else Path(p).expanduser().is_dir()) for p in paths)
