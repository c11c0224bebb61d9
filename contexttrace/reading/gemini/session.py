"""A Gemini CLI saved session (`~/.gemini/tmp/<project>/chats/session-*.json` or `.jsonl`) → one `Trace`.

Two shapes, told apart by their content: a whole JSON document ``{sessionId, projectHash, startTime,
lastUpdated, messages: [...]}`` (CLIs before 0.39), and JSON lines (0.39 and later): a metadata line, then
message records that replace an earlier record of the same ``id`` (a message is written again whole when
its tool calls or tokens change), ``{"$set": {...}}`` updates (``messages`` among them rewrites the list: a
checkpoint, written after a compression or a masking), and ``{"$rewindTo": id}`` (that message and every
later one cut from what the CLI resumes). The trace keeps every message ever written, each as last written:
a rewound or rewritten call was made and held what it held. What the rules rest on is in docs/formats.md
("Gemini CLI").

* **A model call** is a ``gemini`` message with ``tokens``: ``input`` is the whole prompt with
  ``cached`` a part of it, ``output`` leaves out ``thoughts`` (billed as output, so counted in the
  call's output here), ``tool`` counts server-side tool results apart. All exact.
* **Tool calls** are the message's ``toolCalls``: the use (id, name, args) and its result
  (``result``: function-response parts; ``status`` ``error`` or ``cancelled`` is a failure, a cancel a
  person's refusal). The result is dated by the call's ``timestamp`` (its completion).
* **The window** is not recorded: it is the CLI's model table (`GEMINI_WINDOW_TOKENS` for every Gemini
  model), with that source.
* **A compression** is the CLI's own notice, an ``info`` message ("compressed from: X to Y tokens" gives
  both sizes as the CLI states them), or a ``$set.messages`` checkpoint that brings new message ids (the
  summary), its sizes the calls' around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import IO, Any

import orjson

from contexttrace.errors import EmptyTraceError, TraceFormatError, TraceReadError
from contexttrace.reading.contract import FORMAT_GEMINI, THREAD_MAIN
from contexttrace.reading.model import TABLES, LineNote, SourceFile, Trace
from contexttrace.reading.text import path_words, shell_read_path
from contexttrace.reading.values import cached_prompt_call, epoch_ms, token_count

#: Gemini CLI's `tokenLimit` for the Gemini models (2.x and 3.x, and its default for any other model).
GEMINI_WINDOW_TOKENS = 1_048_576
#: The models Gemini CLI's table gives another window (`tokenLimit`; any other model: `GEMINI_WINDOW_TOKENS`).
MODEL_WINDOWS = {
    "gemini-1.5-pro": 2_097_152,
    "gemini-2.0-flash-preview-image-generation": 32_000,
    "gemma-4-31b-it": 256_000,
    "gemma-4-26b-a4b-it": 256_000,
}
#: `Trace.window_source` of that window (`render.explain.WINDOW_SOURCES` gives its words).
WINDOW_SOURCE = "model table"
#: How many skipped lines are named one by one.
MAX_LINE_NOTES = 20
#: Tools whose `args` name one file they read or write.
_PATH_ARGS = ("file_path", "absolute_path", "path")
#: User-role messages Gemini CLI writes itself (start-up context), told from a person's prompt by their start.
INJECTED_STARTS = ("<session_context>",)
#: The mark `_messages` leaves where a checkpoint compressed the history (no message id has it).
COMPACTION = "$compaction"
_COMPRESSED = re.compile(r"compressed from:?\s*([\d,]+)\s*to\s*([\d,]+)\s*tokens", re.I)
_SESSION_HEAD = re.compile(rb'^\s*\{\s*"(?:sessionId|projectHash)"\s*:')


def is_session(head: bytes) -> bool:
    """Whether a file starting with `head` is a Gemini CLI session: a JSON object (a whole document, or
    the metadata line of the JSON-lines form) that opens with its ``sessionId`` or ``projectHash``.

    >>> is_session(b'{\\n  "sessionId": "7c76",\\n  "projectHash": "c2d2",\\n  "messages": [')
    True
    >>> is_session(b'{"type":"assistant","sessionId":"s"}')
    False
    """
    return _SESSION_HEAD.match(head.lstrip(b"\xef\xbb\xbf")) is not None and b'"projectHash"' in head


def _text(content: Any) -> str:
    """The text of a message's content: a string, or the ``text`` of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content["text"] if isinstance(content.get("text"), str) else ""
    if isinstance(content, list):
        return "".join(_text(part) for part in content)
    return ""


def _result_text(result: Any) -> tuple[str, int]:
    """A tool result's text as the model read it (each function response's JSON `response`, and text
    parts), and its inline images."""
    if isinstance(result, str):
        return result, 0
    if not isinstance(result, list):
        return "", 0
    texts: list[str] = []
    images = 0
    for part in result:
        if not isinstance(part, dict):
            continue
        response = part.get("functionResponse")
        if isinstance(response, dict):
            inner = response.get("response")
            output = inner.get("output") if isinstance(inner, dict) else None
            texts.append(output if isinstance(output, str) else orjson.dumps(inner).decode())
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif "inlineData" in part:
            images += 1
    return "".join(texts), images


def _messages(data: bytes, path: str, notes: list[LineNote]) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The session's metadata and its messages, folded: (metadata, messages in order, skipped lines)."""
    stripped = data.lstrip(b"\xef\xbb\xbf")
    try:
        whole = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return whole, [m for m in whole["messages"] if isinstance(m, dict)], 0
    meta: dict[str, Any] = {}
    order: list[str] = []  # message ids by first appearance, and `COMPACTION` where a checkpoint compressed
    by_id: dict[str, dict[str, Any]] = {}
    skipped = 0
    for number, raw in enumerate(stripped.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            skipped += 1
            if len(notes) < MAX_LINE_NOTES:
                notes.append(LineNote(path, number, "not JSON"))
            continue
        if not isinstance(rec, dict):
            skipped += 1
            continue
        if "$rewindTo" in rec:
            meta["$rewound"] = meta.get("$rewound", 0) + 1  # the calls it cut were made: kept
        elif isinstance(rec.get("$set"), dict):
            update = rec["$set"]
            if isinstance(update.get("messages"), list):
                _checkpoint(update["messages"], order, by_id)
            meta |= {k: v for k, v in update.items() if k != "messages"}
        elif isinstance(rec.get("id"), str) and "type" in rec:
            if rec["id"] not in by_id:
                order.append(rec["id"])
            by_id[rec["id"]] = rec
        elif "sessionId" in rec:
            meta |= rec
    return meta, [by_id[i] if i != COMPACTION else {"type": COMPACTION} for i in order], skipped


def _checkpoint(messages: list[Any], order: list[str], by_id: dict[str, dict[str, Any]]) -> None:
    """A ``$set.messages`` checkpoint: its messages replace those of their ids; one of a new id (the
    summary a compression writes) marks a compression before the first of them. The messages it leaves
    out stay: their calls were made, and held what they held."""
    fresh = [m for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"] not in by_id]
    if fresh:
        order.append(COMPACTION)
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("id"), str):
            if m["id"] not in by_id:
                order.append(m["id"])
            by_id[m["id"]] = m


_BASE = {"thread": THREAD_MAIN, "thread_kind": THREAD_MAIN}


class _Session:
    """The rows of one session being built, message by message, in reading order (`seq`)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tables: dict[str, dict[str, list[Any]]] = {t: {c: [] for c in cols} for t, cols in TABLES.items()}
        self.seq = 0
        self.prev_ts: int | None = None
        self.stamps: list[int] = []

    def add(self, table: str, row: dict[str, Any]) -> None:
        """Append `row` (column → value) to `table`'s columns, null where it has none (KeyError: no such table)."""
        for col, values in self.tables[table].items():
            values.append(row.get(col))

    def message(self, index: int, msg: dict[str, Any]) -> None:
        """One message: a model call with its tool uses and results, or an event."""
        self.seq += 1
        ts = epoch_ms(msg.get("timestamp"))
        if ts is not None:
            self.stamps.append(ts)
        if msg.get("type") == "gemini":
            self._model(index, msg, ts)
        else:
            self._event(index, msg, ts)
        if ts is not None:
            self.prev_ts = ts

    def _model(self, index: int, msg: dict[str, Any], ts: int | None) -> None:
        call_seq = self.seq
        uses = [t for t in msg.get("toolCalls") or () if isinstance(t, dict)]
        use_rows = [self._use(index, msg, t, ts) for t in uses]
        if isinstance(msg.get("tokens"), dict):
            self.add("calls", self._call(index, msg, call_seq, ts, use_rows))
        for row in use_rows:
            self.add("tool_uses", row)
        for t in uses:
            self._result(index, t, ts)

    def _call(
        self, index: int, msg: dict[str, Any], seq: int, ts: int | None, use_rows: list[dict[str, Any]]
    ) -> dict[str, Any]:
        tokens = msg["tokens"]
        text = _text(msg.get("content"))
        prompt = token_count(tokens.get("input"))
        cached = token_count(tokens.get("cached")) or 0
        out, thoughts = token_count(tokens.get("output")), token_count(tokens.get("thoughts")) or 0
        thinking: list[Any] = msg["thoughts"] if isinstance(msg.get("thoughts"), list) else []
        return cached_prompt_call(prompt, cached, ts, self.prev_ts) | {
            "seq": seq,
            "line": index + 1,
            "file": self.path,
            "message_id": msg.get("id"),
            "model": msg.get("model") if isinstance(msg.get("model"), str) else None,
            "output_tokens": None if out is None else out + thoughts,
            "has_thinking": bool(thoughts or thinking),
            "thinking_chars": sum(len(_text(t.get("description"))) for t in thinking if isinstance(t, dict)),
            "text_chars": len(text),
            "tool_input_chars": sum(len(r["input_json"]) for r in use_rows),
            "path_words": " ".join(path_words(text)) or None,
        }

    def _use(self, index: int, msg: dict[str, Any], t: dict[str, Any], ts: int | None) -> dict[str, Any]:
        self.seq += 1
        args = t.get("args")
        try:
            input_json = orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:
            input_json = orjson.dumps(str(args)).decode()
        paths = [args[k] for k in _PATH_ARGS if isinstance(args, dict) and isinstance(args.get(k), str)]
        command = args.get("command") if isinstance(args, dict) else None
        return _BASE | {
            "seq": self.seq,
            "line": index + 1,
            "tool_use_id": t.get("id") if isinstance(t.get("id"), str) else None,
            "message_id": msg.get("id"),
            "name": t.get("name") if isinstance(t.get("name"), str) else None,
            "input_json": input_json,
            "file_path": paths[0] if paths else None,
            "ts_ms": ts,
            "read_path": shell_read_path(command) if isinstance(command, str) else None,
            "input_chars": len(input_json),
        }

    def _result(self, index: int, t: dict[str, Any], ts: int | None) -> None:
        self.seq += 1
        text, images = _result_text(t.get("result"))
        status = t.get("status")
        is_error = status in ("error", "cancelled")
        self.add(
            "tool_results",
            _BASE
            | {
                "seq": self.seq,
                "line": index + 1,
                "tool_use_id": t.get("id") if isinstance(t.get("id"), str) else None,
                "is_error": is_error,
                "denied": status == "cancelled",
                "result_chars": len(text),
                "result_images": images,
                "result_image_bytes": 0,
                "unknown_blocks": 0,
                "persisted": False,
                "content_hash": hash(text),
                "ts_ms": epoch_ms(t.get("timestamp")) or ts,
                "result_image_pixels": 0,
                "result_images_sized": 0,
                "error_head": text[:300] if is_error else None,
                "capped": False,
                "unchanged": False,
            },
        )

    def _event(self, index: int, msg: dict[str, Any], ts: int | None) -> None:
        kind = msg.get("type")
        text = _text(msg.get("content"))
        row = _BASE | {"seq": self.seq, "line": index + 1, "ts_ms": ts, "text_chars": len(text)}
        compressed = _COMPRESSED.search(text) if kind == "info" else None
        if kind == COMPACTION:  # a checkpoint's compression: its sizes are the calls' around it
            self.add("events", row | {"kind": "compact_boundary", "trigger": None})
        elif kind == "user":  # the context the CLI injects itself (newer CLIs) is no person's prompt
            injected = text.lstrip().startswith(INJECTED_STARTS)
            self.add("events", row | {"kind": "meta" if injected else "prompt", "images": 0})
        elif kind == "error":
            self.add("events", row | {"kind": "api_error"})
        elif compressed:
            pre, post = (int(g.replace(",", "")) for g in compressed.groups())
            self.add(
                "events", row | {"kind": "compact_boundary", "trigger": "auto", "pre_tokens": pre, "post_tokens": post}
            )
        elif kind == "info" and text.strip() == "Request cancelled.":
            self.add("events", row | {"kind": "interrupt"})


def read_session(path: str, fh: IO[bytes], companions: Sequence[SourceFile] = ()) -> list[Trace]:
    """Read a Gemini CLI saved session into one trace.

    Parameters
    ----------
    path
        The file's name (a path, a URL or ``"-"``), used in the trace's name and in messages.
    fh
        The open file (UTF-8).
    companions
        Ignored: subagent sessions are read as sessions of their own.

    Returns
    -------
    list of Trace
        One trace, format ``"gemini"``: a call row per ``gemini`` message with tokens (prompt, cache read
        and output exact), tool-use and result rows from its ``toolCalls``, events for prompts, errors,
        cancelled requests and compressions. `Trace.window_tokens` is the CLI's model table's window.

    Raises
    ------
    EmptyTraceError
        The file holds no JSON.
    TraceFormatError
        It holds no Gemini CLI session.
    TraceReadError
        It cannot be read.
    """
    del companions
    try:
        data = fh.read()
    except OSError as exc:
        raise TraceReadError(path, f"read failed: {exc.strerror or exc}") from None
    if not data.strip():
        raise EmptyTraceError(path, "no JSON record")
    notes: list[LineNote] = []
    meta, messages, skipped = _messages(data, path, notes)
    if not meta and not messages:
        raise TraceFormatError(path, "no Gemini CLI session record")
    session = _Session(path)
    for index, msg in enumerate(messages):
        try:
            session.message(index, msg)
        except Exception as exc:  # the message firewall: a value no rule expected costs this message only
            skipped += 1
            if len(notes) < MAX_LINE_NOTES:
                why = " ".join(str(exc).split())[:120]
                notes.append(LineNote(path, index + 1, f"message not read ({type(exc).__name__}: {why})"))
    session_id = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None
    models = [m for m in session.tables["calls"]["model"] if m is not None]  # the window of the last one's
    warnings = []
    if meta.get("$rewound"):
        warnings.append(
            f"{meta['$rewound']} rewind(s) ($rewindTo) cut messages from the session: their calls were made "
            "and are counted"
        )
    trace = Trace(
        name=path,
        path=path,
        format=FORMAT_GEMINI,
        session_id=session_id,
        tables=session.tables,
        skipped_lines=skipped,
        line_notes=notes,
        skipped_by_file={path: skipped} if skipped else {},
        files=[path],
        warnings=warnings,
        timestamps_ms=sorted(session.stamps),
        window_tokens=MODEL_WINDOWS.get(models[-1] if models else "", GEMINI_WINDOW_TOKENS),
        window_source=WINDOW_SOURCE,
    )
    return [trace]
