"""Per-file readings of one trace: spec 001's Files panel and spec 003's file relevance (`context files`).

`build_files` turns a read `Trace` into a `FilesReport`: one row per file the main thread touched (its
path resolved against the session's `cwd`, Windows paths normalised: `placement.file_of_tool_use`), and
the drop events of the main thread's window. Pure functions over the tables read through `Trace.view`
(plain lists, no Polars); nothing here prints or formats numbers. docs/files.md states every rule with
its source; the rules in short:

* a touch is a Read / Edit / Write / MultiEdit / NotebookEdit call of the file, or a Bash `cat` / `sed -n`
  / `head` / `tail` of exactly that one path (`tool_uses.read_path`), counted when its result arrives
  (spec 001); a read is a touch by Read or a Bash reader whose result is no error, a write one by the
  others. A Bash command of two paths reads no file here (it stays in bash output).
* re-reads (spec 001): a whole-file read after another whole-file read with no write in between; ranged
  reads (Read's `offset` / `limit`; `sed -n`, `head`, `tail`) and `file_unchanged` answers do not count;
  the counter's memory resets when the file changed under the model (an IDE edit, `edited_text_file`;
  an edit refused with "modified since read") and at every context boundary that removed the file's
  content (`placement.boundaries`; a compaction, a clear or a drop removes every file's).
* references (spec 003): every appearance of the path in a tool input or in the assistant's text, word
  by word (`reading.text.path_words`); last seen: the time of the last reference.
* relevance (spec 003, constants unchanged): min(1, exp(−0.693·age/20 min) + 0.3·ln(1 + references)),
  levels HIGH ≥ 0.7, MED ≥ 0.4, LOW ≥ 0.15, else DROP; since 0.3·ln 2 ≈ 0.208 > 0.15, a file referenced
  once can never reach DROP by score alone (tests/reports/test_files.py proves it with hypothesis).
* in the window (exact, not a decay guess): the file's last read content is in the main thread's window
  when no boundary removed it since (`placement.removed_by`); a file whose content left it shows DROPPED.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from contexttrace.analysis.paths import PathIndex, path_key, resolve_path, strings
from contexttrace.analysis.placement import FILE_TOOLS, Boundary, boundaries, removed_by, touched_path
from contexttrace.analysis.tokens import CHARS_PER_TOKEN, result_tokens
from contexttrace.reading.contract import SHELL_TOOLS, THREAD_MAIN
from contexttrace.reading.text import path_words
from contexttrace.reports.results import ReadingDiagnostics
from contexttrace.reports.tools import error_class
from contexttrace.reports.trace import reading_diagnostics

if TYPE_CHECKING:
    from contexttrace.reading import Trace

#: The version of each `context files --json` object (a change of its keys or their types bumps it).
SCHEMA_VERSION = 3

#: Spec 003's relevance: the half-life of the decay (20 minutes, in ms), its constant (ln 2 ≈ 0.693 as the
#: spec writes it), and the weight of the log-scaled reference boost.
HALF_LIFE_MS = 20 * 60 * 1000
DECAY = 0.693
REFERENCE_BOOST = 0.3
#: Spec 003's levels, highest first: (level, lowest score of it); below the last: DROP.
LEVELS: tuple[tuple[str, float], ...] = (("HIGH", 0.7), ("MED", 0.4), ("LOW", 0.15))
DROP = "DROP"
#: The level of a file whose last read content left the window at a boundary.
DROPPED = "DROPPED"
#: Spec 001: re-reads are flagged ⚠ from this many.
REREAD_WARN = 3

#: Tools that read a file (Claude Code's Read, Gemini CLI's read_file; with a shell tool when its command is
#: a reader: `tool_uses.read_path`).
READ_TOOLS = frozenset({"Read", "read_file"})
#: Tools that write a file; the input key whose text is written (≈ tokens written). Codex CLI's apply_patch
#: writes the added lines of its patch (its input is the patch text).
WRITE_TOOLS: dict[str, str] = {
    "Edit": "new_string",
    "Write": "content",
    "MultiEdit": "edits",
    "NotebookEdit": "new_source",
    "write_file": "content",
    "replace": "new_string",
    "apply_patch": "input",
}
#: Writes that need the file's old content (an edit from memory is spec 003's "forgot what I told it").
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit", "replace", "apply_patch"})
#: Bash readers that print part of a file (a ranged read); `cat` prints it whole.
_RANGED_SHELL = re.compile(r"^\s*(?:sed|head|tail)\b")


def relevance(age_ms: float, references: int) -> float:
    """Spec 003's relevance of a file: min(1, exp(−0.693 · age / 20 min) + 0.3 · ln(1 + references)).

    `age_ms`: ms since the file was last seen (≥ 0); `references`: how many times its path appeared.
    Returns a score in (0, 1].

    >>> round(relevance(0, 0), 4), round(relevance(20 * 60_000, 0), 4), round(relevance(40 * 60_000, 1), 4)
    (1.0, 0.5001, 0.458)
    """
    return min(1.0, math.exp(-DECAY * (age_ms / HALF_LIFE_MS)) + math.log1p(references) * REFERENCE_BOOST)


def relevance_level(score: float) -> str:
    """Spec 003's level of a score: HIGH ≥ 0.7, MED ≥ 0.4, LOW ≥ 0.15, else DROP.

    >>> relevance_level(0.7), relevance_level(0.6999), relevance_level(0.15), relevance_level(0.1499)
    ('HIGH', 'MED', 'LOW', 'DROP')
    """
    for level, lowest in LEVELS:
        if score >= lowest:
            return level
    return DROP


@dataclass(frozen=True)
class At:
    """The moment the readings are taken at (`--at`): ``last`` (the trace's last line), ``call`` (call
    `value` of the main thread: what its prompt held) or ``time`` (`value`: Unix epoch ms)."""

    kind: str = "last"
    value: int | None = None


def parse_at(text: str) -> At:
    """`--at`'s value: ``last``, a call number N ≥ 1, or an ISO 8601 time (no zone: UTC).

    Raises
    ------
    ValueError
        Anything else, a call number below 1, or a time whose UTC date is outside the years 1 to 9999
        (`9999-12-31T23:59:59-14:00`: it could not be shown).

    >>> parse_at("last"), parse_at("62"), parse_at("2026-02-12T16:02:25Z").value
    (At(kind='last', value=None), At(kind='call', value=62), 1770912145000)
    """
    text = text.strip()
    if text == "last":
        return At()
    if text.isdigit():
        if int(text) < 1:
            raise ValueError(f"{text!r}: call numbers start at 1")
        return At("call", int(text))
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r}: last, a call number or an ISO 8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    ms = round(moment.timestamp() * 1000)
    try:
        datetime.fromtimestamp(ms / 1000, UTC)
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"{text!r}: outside the years 1 to 9999 in UTC, which a moment can be shown in") from None
    return At("time", ms)


@dataclass(frozen=True)
class FilesReport(ReadingDiagnostics):
    """The `context files` readings of one trace (plain values). `rows`: one dict per file, by relevance
    descending; `drop_events`: one dict per file whose content left the window at a boundary; keys as
    docs/files.md."""

    trace: str
    path: str
    format: str
    session_id: str | None
    at: dict[str, Any]
    relevance_known: bool
    rows: list[dict[str, Any]]
    drop_events: list[dict[str, Any]]
    boundaries: list[dict[str, Any]]
    subagent_touches: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this trace."""
        return {
            "schema_version": SCHEMA_VERSION,
            **self.facts,
            "trace": self.trace,
            "path": self.path,
            "format": self.format,
            "session_id": self.session_id,
            "at": self.at,
            "relevance_known": self.relevance_known,
            "files": self.rows,
            "drop_events": self.drop_events,
            "boundaries": self.boundaries,
            "subagent_touches": self.subagent_touches,
            "skipped_lines": self.skipped_lines,
            "warnings": self.warnings,
        }


# -- the moment ---------------------------------------------------------------------------------------


def _columns(trace: Trace, table: str, names: tuple[str, ...]) -> Any:
    """The rows of one of the trace's tables as tuples of the columns `names`, in table order."""
    view = trace.view(table)
    return zip(*(view.get_column(c).to_list() for c in names), strict=True)


def _main_calls(trace: Trace) -> tuple[list[int], list[int | None], list[str | None]]:
    """(seq, ts_ms, path_words) of the main thread's calls, by seq (seqs are unique: the sort compares them
    only)."""
    names = ("seq", "ts_ms", "path_words", "thread_kind")
    rows = sorted(r[:3] for r in _columns(trace, "calls", names) if r[3] == THREAD_MAIN)
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def _first_seq_after(trace: Trace, ms: int) -> int | None:
    """The smallest seq of a row (any table) timestamped after `ms`, None when none is."""
    seqs = [
        seq
        for table in ("calls", "tool_uses", "tool_results", "events")
        for seq, ts in _columns(trace, table, ("seq", "ts_ms"))
        if ts is not None and ts > ms
    ]
    return min(seqs) if seqs else None


def _moment(
    trace: Trace, at: At, seqs: list[int], stamps: list[int | None], warnings: list[str]
) -> tuple[int | None, int | None, dict[str, Any]]:
    """(cut: rows with seq ≥ it are after the moment, None: none; now_ms; the JSON `at` object)."""
    last_ms = trace.timestamps_ms[-1] if trace.timestamps_ms else None
    n = at.value
    if at.kind == "call" and n is not None:
        if n <= len(seqs):
            return seqs[n - 1], stamps[n - 1], {"moment": "call", "call": n, "ts_ms": stamps[n - 1]}
        warnings.append(f"--at {n}: the main thread has {len(seqs)} calls; read at the trace's last line")
    elif at.kind == "time" and n is not None:
        if last_ms is not None:
            _time_warnings(n, trace.timestamps_ms[0], last_ms, warnings)
            cut = _first_seq_after(trace, n)
            call = bisect_left(seqs, cut) if cut is not None else len(seqs)
            return cut, n, {"moment": "time", "call": call or None, "ts_ms": n}
        warnings.append("--at TIME: the trace has no timestamps (stream-json writes none); read at its last line")
    return None, last_ms, {"moment": "last", "call": len(seqs) or None, "ts_ms": last_ms}


def _time_warnings(ms: int, first_ms: int, last_ms: int, warnings: list[str]) -> None:
    """Warn of an --at TIME before 1970, before the trace's first line (no file yet) or after its last."""
    if ms < 0:
        warnings.append("--at TIME: before 1970 (a negative Unix time)")
    if ms < first_ms:
        warnings.append(
            f"--at TIME: {_minutes(first_ms - ms)} before the trace's first line: nothing had happened yet, no files"
        )
    elif ms > last_ms:
        warnings.append(f"--at TIME: {_minutes(ms - last_ms)} after the trace's last line: files aged to that time")


def _minutes(ms: int) -> str:
    """A span in whole minutes, or in days past two days (a warning's words, not a figure)."""
    minutes = ms // 60_000
    return f"{minutes:,} min" if minutes < 2880 else f"{minutes // 1440:,} days"


def _written_chars(name: str, inp: dict[str, Any]) -> int:
    """Characters a write's input puts in the file: Write's content, Edit's new_string, MultiEdit's
    edits' new_strings, NotebookEdit's new_source."""
    if name == "apply_patch":  # the patch text: its added lines, each without its "+"
        text = inp.get("input")
        lines = text.splitlines() if isinstance(text, str) else []
        return sum(len(line) - 1 for line in lines if line.startswith("+"))
    value = inp.get(WRITE_TOOLS[name])
    if name == "MultiEdit" and isinstance(value, list):
        return sum(len(e["new_string"]) for e in value if isinstance(e, dict) and isinstance(e.get("new_string"), str))
    return len(value) if isinstance(value, str) else 0


# -- the rows -----------------------------------------------------------------------------------------


def _new_row(path: str) -> dict[str, Any]:
    return {
        "path": path,
        "touches": 0,
        "reads": 0,
        "ranged_reads": 0,
        "unchanged_reads": 0,
        "writes": 0,
        "failed": 0,
        "rereads": 0,
        "tokens_read": 0,
        "tokens_written": 0,
        "references": 0,
        "last_seen_ms": None,
        "last_seen_call": None,
        "age_ms": None,
        "relevance": None,
        "level": None,
        "in_window": None,
        "drops": 0,
        "_steps": [],
    }


@dataclass(frozen=True)
class _Use:
    """A main-thread tool use of the moment: what `_touches` and `_references` read. `path`: its file
    resolved (`file_paths.resolve_path`), `key`: that file's key (`file_paths.path_key`), `field`: the input
    key its path came from (None for Bash), `cwd`: the directory its relative paths resolve against."""

    seq: int
    tid: str | None
    name: str
    inp: Any
    path: str | None
    key: str | None
    field: str | None
    cwd: str | None
    ts: int | None


def _file_of(name: str, fpath: str | None, rpath: str | None, inp: Any) -> tuple[str | None, str | None]:
    """(the path a tool use touches as written, the input key it came from): `file_path` of a file tool
    (NotebookEdit: else `notebook_path`), a Bash reader's `read_path`; (None, None) for other tools."""
    if fpath is None and name == "NotebookEdit" and isinstance(inp, dict):
        book = inp.get("notebook_path")
        return (book, "notebook_path") if isinstance(book, str) and book else (None, None)
    if name in SHELL_TOOLS:  # a shell reader's one path (Claude Code's Bash, Codex's and Gemini's shells)
        return rpath or None, None
    if name in READ_TOOLS or name in WRITE_TOOLS:
        return fpath or None, ("file_path" if fpath else None)
    path = touched_path(name, fpath, rpath)  # (the rule `context sources` classifies by: placement)
    return path, (None if path is None else "file_path")


def _uses(trace: Trace, cut: int | None) -> tuple[list[_Use], list[str | None]]:
    """The main thread's tool uses before `cut` (inputs decoded, each one's file resolved against its own
    line's cwd, else the session's), and the tool_use_ids of other threads' tool uses that name a file."""
    names = ("seq", "tool_use_id", "name", "thread_kind", "input_json", "file_path", "read_path", "ts_ms", "cwd")
    out, others = [], []
    for seq, tid, name, kind, text, fpath, rpath, ts, cwd in _columns(trace, "tool_uses", names):
        if cut is not None and seq >= cut:
            continue
        if kind != THREAD_MAIN:
            if (name in SHELL_TOOLS and rpath) or ((name in FILE_TOOLS or name in WRITE_TOOLS) and fpath):
                others.append(tid)
            continue
        try:
            inp = orjson.loads(text)
        except orjson.JSONDecodeError:
            inp = None
        cwd = cwd or trace.cwd
        written, field_ = _file_of(name, fpath, rpath, inp)
        path = resolve_path(written, cwd) if written else None
        out.append(_Use(seq, tid, name, inp, path, path_key(path) if path else None, field_, cwd, ts))
    return out, others


def _results(trace: Trace, cut: int | None) -> dict[str, tuple[Any, ...]]:
    """tool_use_id → (seq, is_error, tokens, unchanged, error class) of the results landed before `cut`."""
    cols = ("tool_use_id", "seq", "is_error", "denied", "result_chars", "result_images", "result_image_pixels",
            "result_images_sized", "unchanged", "error_head")  # fmt: skip
    out = {}
    for tid, seq, err, den, chars, images, pixels, sized, unchanged, head in _columns(trace, "tool_results", cols):
        if tid is None or (cut is not None and seq >= cut):
            continue
        cls = error_class(head, den is True) if err is True else None
        out[tid] = (seq, err is True, result_tokens(chars, images, pixels, sized), unchanged is True, cls)
    return out


def _touches(uses: list[_Use], results: dict[str, tuple[Any, ...]], rows: dict[str, dict[str, Any]]) -> None:
    """Count each file's touches, reads, writes and tokens, and queue its steps (seq, what, tool_use_id,
    ranged) for `_walk`: "read", "write", "edit" (a write that needs the old content), "changed"."""
    for use in uses:
        res = results.get(use.tid) if use.tid is not None else None
        if use.key is None or use.path is None or res is None:
            continue
        seq, err, tokens, unchanged, cls = res
        row = rows.setdefault(use.key, _new_row(use.path))  # (shown as first written)
        row["touches"] += 1
        steps = row["_steps"]
        if err:
            row["failed"] += 1
            if cls == "file_changed":
                steps.append((seq, "changed", None, False))
            continue
        inp = use.inp if isinstance(use.inp, dict) else {"input": use.inp}
        if use.name in WRITE_TOOLS:
            row["writes"] += 1
            row["tokens_written"] += _written_chars(use.name, inp) // CHARS_PER_TOKEN
            steps.append((use.seq, "edit" if use.name in EDIT_TOOLS else "write", use.tid, False))
            continue
        row["reads"] += 1
        row["tokens_read"] += tokens
        if unchanged:
            row["unchanged_reads"] += 1
            continue
        if use.name in READ_TOOLS:
            ranged = inp.get("offset") is not None or inp.get("limit") is not None
        else:
            command = inp.get("command", inp.get("cmd", ""))
            if isinstance(command, list):  # Codex CLI's argv, ["bash", "-lc", script]
                command = command[-1] if command else ""
            ranged = _RANGED_SHELL.match(str(command)) is not None
        row["ranged_reads"] += ranged
        steps.append((seq, "read", use.tid, ranged))


def _changed_outside(trace: Trace, cut: int | None, cwd: str | None, rows: dict[str, dict[str, Any]]) -> None:
    """Queue a "changed" step for each IDE edit of a file (`edited_text_file` attachments, main thread)."""
    names = ("seq", "thread_kind", "attachment_type", "attachment_path")
    for seq, kind, atype, apath in _columns(trace, "events", names):
        if atype == "edited_text_file" and kind == THREAD_MAIN and apath and (cut is None or seq < cut):
            row = rows.get(path_key(resolve_path(apath, cwd)))
            if row is not None:
                row["_steps"].append((seq, "changed", None, False))


def _references(
    uses: list[_Use], calls: tuple[list[int], list[int | None], list[str | None]], cut: int | None,
    rows: dict[str, dict[str, Any]], cwd: str | None,
) -> None:  # fmt: skip
    """Count each file's references and its last seen: a tool use's own path (its file, whatever characters
    its path holds), the words of its other input strings, and the words of the assistant's text."""
    paths = PathIndex(list(rows))
    seqs, stamps, words = calls

    def seen(key: str, seq: int, ts: int | None) -> None:
        row = rows[key]
        row["references"] += 1
        row["last_seen_call"] = max(row["last_seen_call"] or 0, bisect_right(seqs, seq))
        if ts is not None and (row["last_seen_ms"] is None or ts > row["last_seen_ms"]):
            row["last_seen_ms"] = ts

    for use in uses:
        if use.key in rows:
            seen(use.key, use.seq, use.ts)
        for text in strings(use.inp, skip=use.field):
            for word in path_words(text):
                for found in paths.named(word, use.cwd):
                    if not (found == use.key and use.field is None):  # (a Bash reader's path: counted above)
                        seen(found, use.seq, use.ts)
    for seq, ts, said in zip(seqs, stamps, words, strict=True):
        if said is not None and (cut is None or seq < cut):
            for word in said.split(" "):
                for found in paths.named(word, cwd):
                    seen(found, seq, ts)


def _call_after(seqs: list[int], seq: int) -> int | None:
    """The 1-based number of the first main call after `seq` (the one whose prompt first held it)."""
    i = bisect_right(seqs, seq)
    return i + 1 if i < len(seqs) else None


def _walk(row: dict[str, Any], bounds: list[Boundary], seqs: list[int]) -> list[dict[str, Any]]:
    """Walk one file's steps and the window's boundaries in seq order: count its re-reads, set `in_window`
    (its last read not removed since: `placement.removed_by`), and return its drop events (a boundary that
    removed its last read; each open until the file is read again)."""
    steps = sorted(row.pop("_steps"), key=lambda s: (s[0], s[1]))
    merged = [(b.seq, "boundary", b) for b in bounds] + [(s[0], s[1], s) for s in steps]
    merged.sort(key=lambda m: (m[0], m[1] != "boundary"))  # a boundary at a seq acts before the step there
    whole_seen = False
    last: tuple[Any, int] | None = None  # (tool_use_id, seq) of the last read while its content is in the window
    ever_read = False
    drops: list[dict[str, Any]] = []
    for seq, what, item in merged:
        if what == "boundary":
            b: Boundary = item
            removed = last is not None and removed_by(last[0], last[1], [b]) is b
            if b.cleared is None or removed:
                whole_seen = False
            if removed:
                last = None
                drops.append(_drop(row["path"], b))
            continue
        _, _, tid, ranged = item
        if what == "read":
            ever_read, last = True, (tid, seq)
            if not ranged:
                row["rereads"] += whole_seen
                whole_seen = True
            for d in drops:
                if not d["read_again"]:
                    d["read_again"], d["read_again_call"] = True, _call_after(seqs, seq)
                    if d["read_again_call"] is not None and d["call"] is not None:
                        d["calls_until_read"] = d["read_again_call"] - d["call"]
        else:  # a write, an edit or a change under the model
            whole_seen = False
            for d in drops if what == "edit" else ():
                if not d["read_again"] and d["edit_call"] is None:
                    d["edited_without_reading"], d["edit_call"] = True, bisect_right(seqs, seq) or None
    row["in_window"] = (last is not None) if ever_read else None
    row["drops"] = len(drops)
    return drops


def _drop(path: str, b: Boundary) -> dict[str, Any]:
    return {
        "path": path,
        "call": b.call,
        "ts_ms": b.ts_ms,
        "kind": b.kind,
        "read_again": False,
        "read_again_call": None,
        "calls_until_read": None,
        "edited_without_reading": False,
        "edit_call": None,
    }


def _score(row: dict[str, Any], now_ms: int | None) -> None:
    """Set the row's age, relevance and level at `now_ms` (None without a time: relevance unknown)."""
    if now_ms is not None and row["last_seen_ms"] is not None:
        row["age_ms"] = max(0, now_ms - row["last_seen_ms"])
        score = relevance(row["age_ms"], row["references"])
        row["relevance"] = round(score, 6)  # (for display: the level is the unrounded score's)
        row["level"] = relevance_level(score)
    if row["in_window"] is False:
        row["level"] = DROPPED


def sort_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as spec 003's panel lists them: by relevance, highest first (unknown last), then by path; the
    DROPPED rows (files the model lost) after all the others, ordered the same way among themselves."""
    return sorted(
        rows, key=lambda r: (r["level"] == DROPPED, r["relevance"] is None, -(r["relevance"] or 0), r["path"])
    )


def build_files(trace: Trace, window: int | None = None, at: At | None = None) -> FilesReport:
    """Compute every `context files` reading of one trace at one moment.

    Parameters
    ----------
    trace
        A trace from `read_trace`.
    window
        Unused (the runner passes `--window` to every build); kept for `runner.analyze`'s signature.
    at
        The moment (`parse_at`); None: the trace's last line. Only what happened before it counts.

    Returns
    -------
    FilesReport
        One row per file the main thread touched (a result arrived before the moment), sorted by
        `sort_rows`; the drop events in seq order; the main thread's boundaries. Figures as the module
        docstring and docs/files.md say: counts exact, tokens ≈ (chars / 4), relevance spec 003's decay
        (None without timestamps: stream-json).

    Never raises on missing values: a trace with no calls, no tool uses or no timestamps gives empty or
    None readings, and says why in `warnings`.
    """
    del window
    warnings = list(trace.warnings)
    calls = _main_calls(trace)
    cut, now_ms, moment = _moment(trace, at or At(), calls[0], calls[1], warnings)
    cwd = trace.cwd
    uses, others = _uses(trace, cut)
    results = _results(trace, cut)
    rows: dict[str, dict[str, Any]] = {}
    _touches(uses, results, rows)
    _changed_outside(trace, cut, cwd, rows)
    _references(uses, calls, cut, rows, cwd)
    # A boundary at call N's own seq (a /clear or a drop is placed at the first call after it) took effect
    # before call N's prompt: --at N includes it.
    upto = cut + 1 if cut is not None and moment["moment"] == "call" else cut
    bounds = [b for b in boundaries(trace, THREAD_MAIN) if upto is None or b.seq < upto]
    drops: list[dict[str, Any]] = []
    for row in rows.values():
        drops += _walk(row, bounds, calls[0])
        _score(row, now_ms)
    drops.sort(key=lambda d: (d["call"] is None, d["call"] or 0, d["path"]))  # "after the last call" last
    known = any(r["relevance"] is not None for r in rows.values())
    if rows and not known:
        warnings.append("relevance unknown: the trace has no timestamps to age its files by (stream-json writes none)")
    return FilesReport(
        trace=trace.name,
        path=trace.path,
        format=trace.format,
        session_id=trace.session_id,
        at=moment,
        relevance_known=known,
        rows=sort_rows(list(rows.values())),
        drop_events=drops,
        boundaries=[{"kind": b.kind, "call": b.call, "ts_ms": b.ts_ms} for b in bounds],
        subagent_touches=sum(tid is not None and tid in results for tid in others),
        **reading_diagnostics(trace, warnings),
    )
