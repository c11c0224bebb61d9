"""Per-tool readings of one trace: spec 001's Tools panel (`context tools`).

`build_tools` turns a read `Trace` into a `ToolsReport`: one row per tool name and thread group (the main
thread, and every subagent thread together), MCP tools grouped per server (`mcp:<server>`, with a row per
MCP tool under it), and the largest single results of the main thread. Pure functions over the tables read
through `Trace.view` (plain lists, no Polars) and the price table; nothing here prints or formats numbers.

Rules this module owns (docs/tools.md states each with its source and exact/≈):

* calls are tool_use blocks; a result is matched to its call by `tool_use_id` (a result whose call the
  trace lacks counts under the tool ``"?"``, in its own thread).
* server-side tools (`server_tool_use` blocks: web_search, web_fetch, code_execution, which the API runs
  inside a call) are kept apart, in `server_tools`: their calls, their inputs' tokens, and for web_search
  the requests the calls' usage bills (`usage.server_tool_use.web_search_requests`) at the price table's
  per-request price. Their results come back inside the same response (web search results encrypted),
  never as tool_result blocks: the calls' usage counts their tokens, and no per-tool size is measured.
* errors are `is_error` results that are not denials; denials are the reader's `denied` results (a person's
  or a rule's refusal). Every `is_error` result, denial or not, gets one error class (`ERROR_CLASSES`).
* durations are tool_use `ts_ms` → tool_result `ts_ms` (≈: they include any permission wait); a pair
  without both timestamps (stream-json has none) is not measured, and a tool with none measured has no
  percentile (None, never 0).
* tokens → context: result chars / 4 (floor) plus each image as w·h/750 when its size is known, else 1,500;
  input → context: the input's canonical-JSON chars / 4 (floor). Both ≈ (spec 001's heuristic).
* the re-read tax of a result: the API calls of its thread after it landed and before it left the context
  (a compaction of that thread, or a microcompaction that cleared it) × its tokens × each call's
  cache-read price (≈, list prices).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from contexttrace.analysis.placement import compaction_seqs, left_context
from contexttrace.analysis.pricing import PriceTable, load_prices, price_of
from contexttrace.analysis.tokens import CHARS_PER_TOKEN, result_tokens
from contexttrace.analysis.tool_figures import mcp_server_of
from contexttrace.reading.contract import THREAD_MAIN
from contexttrace.reports.results import ReadingDiagnostics
from contexttrace.reports.trace import reading_diagnostics

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: The version of each `context tools --json` object (a change of its keys or their types bumps it).
SCHEMA_VERSION = 3

#: Largest single results listed under the table.
TOP_CONSUMERS = 5
#: Decimals the re-read tax keeps (a millionth of a dollar: the sums' float noise is below it).
USD_DECIMALS = 6
#: Percentiles of the duration columns (nearest rank).
P50, P95 = 50, 95

#: The `thread` column's two values: the main thread, and every other thread together.
THREAD_GROUP_MAIN = "main"
THREAD_GROUP_SUBAGENTS = "subagents"

#: Error classes, in the order a failed result's text is tested (the first match wins): spec 001's list
#: (Claude Code's own taxonomy, then Content Not Found, Timeout, Tool Not Found and Denied). Each row:
#: (JSON key, label, pattern searched in `tool_results.error_head`, source of the pattern). A result no
#: pattern matches is `other`; a denial (`tool_results.denied`) no pattern matches is `denied`.
ERROR_CLASSES: tuple[tuple[str, str, re.Pattern[str] | None, str], ...] = (
    # Bash's failed command: "Exit code 1\n<output>" (samples/b-spotter-compaction, b-ccl-image-and-errors)
    ("command_failed", "Command Failed", re.compile(r"^(?:Error: )?Exit code -?\d+"), "Bash result text"),
    # the permission prompt answered no: content.DENIAL_PREFIXES (samples/b-ccl-image-and-errors)
    ("user_rejected", "User Rejected",
     re.compile(r"^(?:The user doesn't want to (?:proceed with this tool use|take this action)|User rejected)"),
     "permission prompt text"),
    # Edit/Write/MultiEdit before a Read, an ambiguous or no-op edit (samples/b-ccl-image-and-errors)
    ("edit_failed", "Edit Failed",
     re.compile(r"File has not been read yet|Found \d+ matches of the string to replace|"
                r"No changes to make: old_string and new_string are exactly the same"),
     "Edit tool text"),
    # the file changed on disk after the model read it ("File has been modified since read, ...")
    ("file_changed", "File Changed", re.compile(r"File has been (?:unexpectedly )?modified since read"),
     "Edit/Write tool text"),
    # Read's size cap: "File content (52830 tokens) exceeds maximum allowed tokens (25000)"
    # (samples/a-ralph-subagent-opus45-haiku45)
    ("file_too_large", "File Too Large",
     re.compile(r"File content \(.{0,40}\) exceeds maximum allowed|exceeds maximum allowed (?:tokens|size)"),
     "Read tool text"),
    # "<tool_use_error>File does not exist.</tool_use_error>" (samples/b-spotter-compaction), a shell's ENOENT
    # ("ls: cannot access 'x': No such file or directory", zsh's "(eval):1: no such file or directory: x")
    ("file_not_found", "File Not Found", re.compile(r"File does not exist|(?i:no such file or directory)|ENOENT"),
     "Read/Edit tool text, shell ENOENT"),
    # Edit's old_string absent: "String to replace not found in file." (samples/b-ccl-image-and-errors)
    ("content_not_found", "Content Not Found", re.compile(r"String to replace not found"), "Edit tool text"),
    # "Command timed out after 2m 0.0s", an MCP or fetch timeout
    ("timeout", "Timeout", re.compile(r"timed out|\btimeout\b|ETIMEDOUT", re.IGNORECASE), "Bash/MCP/fetch text"),
    # "<tool_use_error>Error: No such tool available: AskUserQuestion</tool_use_error>"
    # (samples/b-ccl-flat-agent-files-v2037)
    ("tool_not_found", "Tool Not Found", re.compile(r"No such tool available"), "harness text"),
    # a rule's or hook's refusal (toolDenialKind): reading/content._DENIAL_RE, or the reader's `denied` flag
    ("denied", "Denied",
     re.compile(r"^(?:Permission to use |Claude requested permissions to )|denied this tool|"
                r"Permission .{0,80} denied|requires approval|was blocked\. For security", re.IGNORECASE),
     "permission rule text; tool_results.denied"),
)  # fmt: skip
#: The class of a failed result no pattern matches.
OTHER = ("other", "Other")
#: JSON key → label of every class, in table order, `other` last.
ERROR_CLASS_LABELS: dict[str, str] = {k: label for k, label, _, _ in ERROR_CLASSES} | {OTHER[0]: OTHER[1]}


def error_class(text: str | None, denied: bool = False) -> str:
    """The JSON key of a failed result's error class (`ERROR_CLASSES`, tested in order).

    >>> error_class("Exit code 2\\nboom"), error_class("<tool_use_error>File does not exist.</tool_use_error>")
    ('command_failed', 'file_not_found')
    >>> error_class("hook said no", denied=True), error_class(None)
    ('denied', 'other')
    """
    if text:
        for key, _label, pattern, _source in ERROR_CLASSES:
            if pattern is not None and pattern.search(text):
                return key
    return "denied" if denied else OTHER[0]


def nearest_rank(values: list[int], pct: int) -> int | None:
    """The `pct`-th percentile of `values` by nearest rank (the ⌈pct/100·n⌉-th smallest); None when empty.

    >>> nearest_rank([5, 1, 3, 2, 4], 50), nearest_rank([5, 1, 3, 2, 4], 95), nearest_rank([], 50)
    (3, 5, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(1, math.ceil(pct * len(ordered) / 100)) - 1]


def _new_row(thread: str, tool: str, server: str | None, parent: str | None) -> dict[str, Any]:
    return {
        "thread": thread,
        "tool": tool,
        "parent": parent,
        "mcp_server": server,
        "calls": 0,
        "results": 0,
        "errors": 0,
        "denials": 0,
        "error_classes": dict.fromkeys(ERROR_CLASS_LABELS, 0),
        "timed_calls": 0,
        "p50_duration_ms": None,
        "p95_duration_ms": None,
        "tokens_to_context": 0,
        "input_tokens_to_context": 0,
        "result_chars": 0,
        "result_images": 0,
        "persisted_results": 0,
        "cleared_results": 0,
        "reread_calls": 0,
        "reread_tax_usd": 0.0,
        "reread_unpriced_calls": 0,
        "_durations": [],
    }


@dataclass(frozen=True)
class ToolsReport(ReadingDiagnostics):
    """The `context tools` readings of one trace (plain values). `rows`: one dict per (thread, tool), MCP
    tools first as their server's group row (`parent` None), then one row per MCP tool (`parent` naming its
    group); keys as docs/tools.md. `top_consumers`: the main thread's largest single results. `server_tools`:
    the server-side tools (`server_tool_rows`), apart from `rows`."""

    trace: str
    path: str
    format: str
    session_id: str | None
    price_table_date: str
    durations_known: bool
    rows: list[dict[str, Any]]
    top_consumers: list[dict[str, Any]]
    mcp_server_guessed: bool = False
    server_tools: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, by_tool: bool = False) -> dict[str, Any]:
        """The JSON object of this trace; `by_tool` keeps the per-MCP-tool rows (`parent` set)."""
        return {
            "schema_version": SCHEMA_VERSION,
            **self.facts,
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "price_table_date": self.price_table_date,
            "durations_known": self.durations_known,
            "mcp_server_guessed": self.mcp_server_guessed,
            "tools": [r for r in self.rows if by_tool or r["parent"] is None],
            "server_tools": self.server_tools,
            "top_consumers": self.top_consumers,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }


def _thread_group(kind: str | None) -> str:
    return THREAD_GROUP_MAIN if kind == THREAD_MAIN else THREAD_GROUP_SUBAGENTS


class _CallPrices:
    """Each thread's calls by seq with prefix sums of their cache-read price (USD per token)."""

    def __init__(self, trace: Trace, table: PriceTable) -> None:
        calls = trace.view("calls")
        by_thread: dict[Any, list[tuple[int, float | None]]] = {}
        cache: dict[Any, float | None] = {}
        for seq, thread, model in zip(
            calls.get_column("seq").to_list(),
            calls.get_column("thread").to_list(),
            calls.get_column("model").to_list(),
            strict=True,
        ):
            if model not in cache:
                price = price_of(model, table)
                cache[model] = price.cache_read / 1_000_000 if price is not None else None
            by_thread.setdefault(thread, []).append((seq, cache[model]))
        self.seqs: dict[Any, list[int]] = {}
        self.sums: dict[Any, list[float]] = {}
        self.unpriced: dict[Any, list[int]] = {}
        for thread, rows in by_thread.items():
            rows.sort(key=lambda r: r[0])
            self.seqs[thread] = [r[0] for r in rows]
            sums, unpriced = [0.0], [0]
            for _, p in rows:
                sums.append(sums[-1] + (p or 0.0))
                unpriced.append(unpriced[-1] + (p is None))
            self.sums[thread], self.unpriced[thread] = sums, unpriced

    def between(self, thread: Any, start: int, end: int | None) -> tuple[int, float, int]:
        """(calls, Σ cache-read USD per token, unpriced calls) of `thread`'s calls with start < seq < end."""
        seqs = self.seqs.get(thread)
        if not seqs:
            return 0, 0.0, 0
        lo = bisect_right(seqs, start)
        hi = len(seqs) if end is None else bisect_left(seqs, end)
        if hi <= lo:
            return 0, 0.0, 0
        sums, unpriced = self.sums[thread], self.unpriced[thread]
        return hi - lo, sums[hi] - sums[lo], unpriced[hi] - unpriced[lo]


#: The `tool_results` columns `build_tools` reads, in the order it unpacks them.
RESULT_COLUMNS = ("seq", "tool_use_id", "thread", "thread_kind", "is_error", "denied", "result_chars",
                  "result_images", "result_image_pixels", "result_images_sized", "persisted", "ts_ms",
                  "cleared_seq", "error_head", "capped")  # fmt: skip


def build_tools(trace: Trace, window: int | None = None, table: PriceTable | None = None) -> ToolsReport:
    """Compute every `context tools` reading of one trace.

    Parameters
    ----------
    trace
        A trace from `read_trace`.
    window
        Unused (the runner passes `--window` to every build); kept for `runner.analyze`'s signature.
    table
        A price table; None uses the packaged one.

    Returns
    -------
    ToolsReport
        Rows sorted by calls (most first), main thread before subagents on ties, then by tool name; see
        the module docstring for each figure's rule and docs/tools.md for its key.
    """
    del window
    table = table or load_prices()
    servers = (trace.surface or {}).get("mcp_servers")
    rows = _ToolRows(servers if isinstance(servers, list) else None)
    use_of = _count_uses(trace, rows)
    consumers, timed_any = _count_results(trace, rows, use_of, _CallPrices(trace, table))
    for row in rows.rows.values():
        durations = row.pop("_durations")
        row["timed_calls"] = len(durations)
        row["p50_duration_ms"] = nearest_rank(durations, P50)
        row["p95_duration_ms"] = nearest_rank(durations, P95)
        row["reread_tax_usd"] = round(row["reread_tax_usd"], USD_DECIMALS)
    consumers.sort(key=lambda c: (-c["tokens_to_context"], c["seq"]))
    top = [{k: v for k, v in c.items() if k != "seq"} for c in consumers[:TOP_CONSUMERS]]
    targets = use_targets(trace, {c["tool_use_id"] for c in top})
    for c in top:
        c["target"] = targets.get(c["tool_use_id"])
    warnings = list(trace.warnings)
    if rows.rows and not timed_any:
        warnings.append("no tool durations: the trace has no timestamps on its tool calls (stream-json writes none)")
    return ToolsReport(
        trace=trace.name,
        path=trace.path,
        format=trace.format,
        session_id=trace.session_id,
        price_table_date=table.date,
        durations_known=timed_any,
        rows=sort_rows(list(rows.rows.values()), "calls"),
        top_consumers=top,
        mcp_server_guessed=rows.guessed,
        server_tools=server_tool_rows(trace, table),
        **reading_diagnostics(trace, warnings),
    )


class _ToolRows:
    """The rows of `build_tools` by (thread group, tool), created on first use; an MCP tool also counts in
    its server's group row (`mcp:<server>`), created first."""

    def __init__(self, servers: list[Any] | None) -> None:
        self.servers = servers  # the init line's `mcp_servers`, to tell a server's name from its tool's
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        self.guessed = False  # some server name was guessed from a tool name (no init line names it)

    def of(self, group: str, name: str | None) -> list[dict[str, Any]]:
        """The rows a call of tool `name` (None: unknown, ``"?"``) in thread group `group` counts in."""
        rows = self.rows
        tool = name if name is not None else "?"
        server, guess = mcp_server_of(tool, self.servers)
        if server is None:
            key = (group, tool)
            if key not in rows:
                rows[key] = _new_row(group, tool, None, None)
            return [rows[key]]
        self.guessed = self.guessed or guess
        label = f"mcp:{server}"
        if (group, label) not in rows:
            rows[(group, label)] = _new_row(group, label, server, None)
        if (group, tool) not in rows:
            rows[(group, tool)] = _new_row(group, tool, server, label)
        return [rows[(group, label)], rows[(group, tool)]]


#: The input keys that name what a tool read or ran, in order, when it has no `file_path`.
TARGET_KEYS = ("command", "cmd", "url", "pattern", "query", "path", "description")
#: A target longer than this many characters is cut, ``…`` at its end.
TARGET_CHARS = 80


def use_target(file_path: str | None, input_json: str | None, cwd: str | None = None) -> str | None:
    """What one tool use read or ran, as a person names it: its `file_path` (relative to `cwd` when under it;
    a long one cut at its start, so the file's name stays), else the first of `TARGET_KEYS` its input holds
    as a string (a list of strings, as Codex writes a command, joined by spaces), on one line and cut to
    `TARGET_CHARS` at its end; None when the input names nothing. Exact as written.

    >>> use_target("/w/p/src/a.py", None, "/w/p"), use_target(None, '{"command":"git status"}')
    ('src/a.py', 'git status')
    >>> use_target(None, '{"cmd":["bash","-lc","ls"]}'), use_target(None, '{"x":1}'), use_target(None, "{")
    ('bash -lc ls', None, None)
    """
    if file_path:
        if cwd and file_path.startswith(cwd.rstrip("/") + "/"):
            file_path = file_path[len(cwd.rstrip("/")) + 1 :]
        flat = " ".join(file_path.split())
        return flat if len(flat) <= TARGET_CHARS else "…" + flat[-(TARGET_CHARS - 1) :]
    import orjson

    try:
        given = orjson.loads(input_json) if input_json else None
    except orjson.JSONDecodeError:
        return None
    if not isinstance(given, dict):
        return None
    for key in TARGET_KEYS:
        value = given.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return _one_line(value)
    return None


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= TARGET_CHARS else flat[: TARGET_CHARS - 1] + "…"


def use_targets(trace: Trace, ids: set[str | None]) -> dict[str, str | None]:
    """`use_target` of each tool use whose id is in `ids` (the first use of an id), by id."""
    uses = trace.view("tool_uses")
    out: dict[str, str | None] = {}
    columns = (uses.get_column(c).to_list() for c in ("tool_use_id", "file_path", "input_json"))
    for tid, path, given in zip(*columns, strict=True):
        if tid in ids and tid not in out:
            out[tid] = use_target(path, given, getattr(trace, "cwd", None))
    return out


def _count_uses(trace: Trace, rows: _ToolRows) -> dict[str, tuple[list[dict[str, Any]], int | None]]:
    """Count each tool_use into its rows (calls, input tokens); return, per tool_use id, its rows and `ts_ms`
    (the first use of an id wins)."""
    uses = trace.view("tool_uses")
    use_of: dict[str, tuple[list[dict[str, Any]], int | None]] = {}
    for tid, name, kind, ts, chars, server in zip(
        uses.get_column("tool_use_id").to_list(),
        uses.get_column("name").to_list(),
        uses.get_column("thread_kind").to_list(),
        uses.get_column("ts_ms").to_list(),
        uses.get_column("input_chars").to_list(),
        uses.get_column("server_side").to_list(),
        strict=True,
    ):
        if server is True:
            continue  # a server-side tool: `server_tool_rows`
        targets = rows.of(_thread_group(kind), name)
        for row in targets:
            row["calls"] += 1
            row["input_tokens_to_context"] += (chars or 0) // CHARS_PER_TOKEN
        if tid is not None:
            use_of.setdefault(tid, (targets, ts))
    return use_of


def _count_results(
    trace: Trace,
    rows: _ToolRows,
    use_of: dict[str, tuple[list[dict[str, Any]], int | None]],
    prices: _CallPrices,
) -> tuple[list[dict[str, Any]], bool]:
    """Count each tool_result into its call's rows (a result whose call is unknown: tool ``"?"``); return the
    main thread's results that put tokens into the context (`top_consumers` candidates, with their `seq`)
    and whether any duration was measured."""
    bounds = compaction_seqs(trace)
    main_seqs = prices.seqs.get(THREAD_MAIN, [])
    consumers: list[dict[str, Any]] = []
    timed_any = False
    results = trace.view("tool_results")
    lists = [results.get_column(c).to_list() for c in RESULT_COLUMNS]
    for seq, tid, thread, kind, err, den, chars, images, pixels, sized, pers, ts, cleared, head, capped in zip(
        *lists, strict=True
    ):
        found = use_of.get(tid) if tid is not None else None
        targets, use_ts = found if found is not None else (rows.of(_thread_group(kind), None), None)
        tokens = result_tokens(chars, images, pixels, sized)
        duration = ts - use_ts if ts is not None and use_ts is not None and ts >= use_ts else None
        n, per_token, unpriced = prices.between(thread, seq, left_context(seq, cleared, bounds.get(thread, [])))
        cls = error_class(head, den is True) if err is True else None
        for row in targets:
            row["results"] += 1
            row["errors"] += err is True and den is not True
            row["denials"] += den is True
            if cls is not None:
                row["error_classes"][cls] += 1
            if duration is not None:
                row["_durations"].append(duration)
            row["tokens_to_context"] += 0 if cleared is not None else tokens
            row["result_chars"] += chars or 0
            row["result_images"] += images or 0
            row["persisted_results"] += pers is True
            row["cleared_results"] += cleared is not None
            row["reread_calls"] += n
            row["reread_tax_usd"] += tokens * per_token
            row["reread_unpriced_calls"] += unpriced
        timed_any = timed_any or duration is not None
        if kind == THREAD_MAIN and tokens > 0:
            i = bisect_right(main_seqs, seq)
            consumers.append({
                "tool": targets[-1]["tool"],
                "tool_use_id": tid,
                "tokens_to_context": tokens,
                "result_chars": chars or 0,
                "result_images": images or 0,
                "persisted": pers is True,
                "capped": capped is True,
                "cleared": cleared is not None,
                "call": i + 1 if i < len(main_seqs) else None,
                "reread_calls": n,
                "reread_tax_usd": round(tokens * per_token, USD_DECIMALS),
                "seq": seq,
            })  # fmt: skip
    return consumers, timed_any


#: The server-side tool whose requests a call's usage counts (`calls.web_search_requests`), each billed at
#: the price table's `web_search_usd_per_request`.
WEB_SEARCH = "web_search"


def server_tool_rows(trace: Trace, table: PriceTable) -> list[dict[str, Any]]:
    """The server-side tools of a trace: one row per thread group and tool, most calls first (main before
    subagents on a tie, then by name).

    Returns
    -------
    list of dict
        `thread` (``main`` or ``subagents``), `tool` (the `server_tool_use` block's name as written),
        `calls` (its blocks, exact), `input_tokens_to_context` (≈ its inputs' canonical-JSON chars / 4),
        `requests` (web_search: Σ `usage.server_tool_use.web_search_requests` over the group's calls, exact,
        the count the API bills; None for another tool, whose usage counts nothing the reader reads) and
        `cost_usd` (web_search: `requests` × `web_search_usd_per_request`, ≈ list price; None otherwise).
        A group whose calls bill web searches gets a web_search row even when the trace holds none of its
        blocks (`calls` 0). Empty when the trace has no server-side tool.
    """
    found: dict[tuple[str, str], dict[str, Any]] = {}

    def row(group: str, tool: str) -> dict[str, Any]:
        if (group, tool) not in found:
            found[(group, tool)] = {"thread": group, "tool": tool, "calls": 0, "input_tokens_to_context": 0,
                                    "requests": None, "cost_usd": None}  # fmt: skip
        return found[(group, tool)]

    uses = trace.view("tool_uses")
    columns = [uses.get_column(c).to_list() for c in ("name", "thread_kind", "input_chars", "server_side")]
    for name, kind, chars, server in zip(*columns, strict=True):
        if server is True:
            target = row(_thread_group(kind), name if name is not None else "?")
            target["calls"] += 1
            target["input_tokens_to_context"] += (chars or 0) // CHARS_PER_TOKEN
    calls = trace.view("calls")
    searches: dict[str, int] = {}
    columns = [calls.get_column(c).to_list() for c in ("thread_kind", "web_search_requests")]
    for kind, n in zip(*columns, strict=True):
        searches[_thread_group(kind)] = searches.get(_thread_group(kind), 0) + (n or 0)
    for group, n in searches.items():
        if n or (group, WEB_SEARCH) in found:
            target = row(group, WEB_SEARCH)
            target["requests"] = n
            target["cost_usd"] = round(n * table.web_search_usd_per_request, USD_DECIMALS)
    return sorted(found.values(), key=lambda r: (-r["calls"], r["thread"] != THREAD_GROUP_MAIN, r["thread"], r["tool"]))


#: `--sort` keys → the row key sorted on (descending).
SORT_KEYS: dict[str, str] = {
    "calls": "calls",
    "errors": "errors",
    "tokens": "tokens_to_context",
    "p95": "p95_duration_ms",
}


def sort_rows(rows: list[dict[str, Any]], by: str) -> list[dict[str, Any]]:
    """Order rows by `SORT_KEYS[by]`, largest first (None last), then main before subagents, then tool name;
    each MCP tool row right after its group row, in the same order among its siblings.

    Raises
    ------
    ValueError
        `by` is not a key of `SORT_KEYS`.
    """
    if by not in SORT_KEYS:
        raise ValueError(f"{by!r}: one of {', '.join(SORT_KEYS)}")
    col = SORT_KEYS[by]

    def key(r: dict[str, Any]) -> tuple[Any, ...]:
        value = r[col]
        return (value is None, -(value or 0), r["thread"] != THREAD_GROUP_MAIN, r["thread"], r["tool"])

    tops = sorted((r for r in rows if r["parent"] is None), key=key)
    children: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r["parent"] is not None:
            children.setdefault((r["thread"], r["parent"]), []).append(r)
    out = []
    for r in tops:
        out.append(r)
        out.extend(sorted(children.get((r["thread"], r["tool"]), []), key=key))
    return out
