"""The report page's index of traces: its columns, the short label of each trace, the runs of one file
grouped, and the chart of first and peak prompt per trace.

Pure functions over trace names and sections; the rows themselves are `data.index_rows`'. Must not import
jinja2, altair or vl-convert, nor print.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from contexttrace.render.html.section import TraceSection

#: The index table's sortable columns: (header, key of the row's sort value, numeric). `title` and, on a
#: comparison's page, `condition` follow `trace` (`index_columns`).
INDEX_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("trace", "trace", False),
    ("calls", "calls", True),
    ("first", "first", True),
    ("peak", "peak", True),
    ("fill", "fill", True),
    ("growth", "growth", True),
    ("compact", "compact", True),
    ("tools", "tools", True),
    ("failed", "failed", True),
    ("repeated calls", "repeat", True),
    ("result chars", "result_chars", True),
    ("health", "health", True),
    ("weather", "weather", True),
    ("cost", "cost", True),
)

#: Runs of one file this many or more are grouped under one collapsible row.
GROUP_MIN_RUNS = 2

#: Characters of a session id (a UUID file name) a label keeps: enough to tell sessions apart.
SESSION_ID_CHARS = 8

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_EXTENSIONS = (".jsonl", ".json")


def index_columns(conditions: bool) -> list[dict[str, Any]]:
    """The index's columns in order: trace, title, condition (only on a comparison's page), the figures."""
    extra = [("title", "title", False)] + ([("condition", "condition", False)] if conditions else [])
    cols = [INDEX_COLUMNS[0], *extra, *INDEX_COLUMNS[1:]]
    return [{"label": h, "key": k, "numeric": num} for h, k, num in cols]


def _stem(part: str) -> str:
    """A path part as a label shows it: no .jsonl/.json, a session id cut to `SESSION_ID_CHARS`."""
    for ext in _EXTENSIONS:
        if part.endswith(ext):
            part = part[: -len(ext)]
            break
    return part[:SESSION_ID_CHARS] if _UUID.match(part) else part


def trace_labels(names: Sequence[str]) -> list[str]:
    """Each trace's short label: the last folder levels of its path that tell it apart from the others
    (the file alone when that is unique), without the extension, a session id (a UUID) cut to its first
    `SESSION_ID_CHARS` characters, a run's ``#N`` kept. The full name stays in the row's tooltip.

    >>> trace_labels(["s/a/x.jsonl", "s/b/x.jsonl", "s/loop.jsonl#2",
    ...               "s/p/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"])
    ['a/x', 'b/x', 'loop#2', '29ccd257']
    """
    split = []
    for name in names:
        path, hash_, run = name.replace("\\", "/").partition("#")
        split.append(([_stem(p) for p in path.split("/") if p], hash_ + run))
    out = []
    for parts, run in split:
        depth = 1
        while depth < len(parts) and sum(1 for p, r in split if p[-depth:] == parts[-depth:] and r == run) > 1:
            depth += 1
        out.append("/".join(parts[-depth:]) + run)
    return out


def index_groups(names: Sequence[str], labels: Sequence[str]) -> dict[int, dict[str, Any]]:
    """The runs of one file, grouped: for the first run of each file with `GROUP_MIN_RUNS` runs or more in
    the index, `id` (``g1``, ...), `label` (the file's label), `file` (its name), `rows` (the indexes of its
    runs, in page order). Keyed by that first run's index.

    >>> index_groups(["d/l.jsonl#1", "d/l.jsonl#2", "d/x.jsonl"], ["l#1", "l#2", "x"])[0]["rows"]
    [0, 1]
    """
    files: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        path, hash_, run = name.partition("#")
        if hash_ and run.isdigit():
            files.setdefault(path, []).append(i)
    out: dict[int, dict[str, Any]] = {}
    for path, rows in files.items():
        if len(rows) >= GROUP_MIN_RUNS:
            label = labels[rows[0]].rsplit("#", 1)[0]
            out[rows[0]] = {"id": f"g{len(out) + 1}", "label": label, "file": path, "rows": rows}
    return out


def index_datasets(sections: Sequence[TraceSection]) -> dict[str, dict[str, list[Any]]]:
    """The index chart's data: one row per trace and figure (`first`, `peak`), columnar.

    Columns: `label` ("#1", ...: the trace's number in the page), `trace`, `figure` ("first" or "peak"),
    `tokens` (exactly the report's `first` / `peak`), `href` (the link to its section).
    """
    out: dict[str, list[Any]] = {"label": [], "trace": [], "figure": [], "tokens": [], "href": []}
    for i, s in enumerate(sections):
        for figure in ("first", "peak"):
            out["label"].append(f"#{i + 1}")
            out["trace"].append(s.report.trace)
            out["figure"].append(figure)
            out["tokens"].append(getattr(s.report, figure))
            out["href"].append(f"#t{i + 1}")
    return {"traces": out}
