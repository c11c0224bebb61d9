"""A Codex CLI rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) → one `Trace`.

Each line is ``{timestamp, type, payload}``: `session_meta` (id, cwd, cli_version, instructions),
`turn_context` (the model of the requests that follow), `response_item` (messages, reasoning, tool calls
and their outputs), `event_msg` (token counts, compaction, aborted turns, ...) and `compacted`. What the
rules below rest on is in docs/formats.md ("Codex CLI").

* **A model call** is a `token_count` event whose `info.total_token_usage` grew and whose
  `info.last_token_usage` counted input or output: Codex writes the event again with the same totals on a
  rate-limit refresh, and writes an estimate with zero input and output after a compaction or a full
  window; neither is a call. Summing every `token_count` counts calls twice.
* **Its usage** is `last_token_usage`: `input_tokens` is the whole prompt with `cached_input_tokens` a part
  of it (so the uncached tail is their difference), and `output_tokens` holds `reasoning_output_tokens`.
  The prompt is exact; nothing is added twice.
* **What it wrote** (reasoning, text, tool calls) is the run of model-written items next to its
  `token_count`: CLIs up to 0.65 write the count before the items, later ones after them, and tool
  outputs or messages end a run.
* **Its model** is the last `turn_context.model` before it (CLIs before 0.35 write none: unknown).
* **The window** is `token_count.info.model_context_window`: the usable window Codex states (95 % of
  the model's window from CLI 0.48), kept as the trace states it, with that source.
* **A compaction** is a `compacted` line; the size before it is the last call's prompt (exact), the size
  after it the next call's (the estimate Codex writes in between is not a call).
* **A fork** (``forked_from_id``, or a second `session_meta` of another id) starts with its parent's lines,
  copied in one burst: until the first gap of `REPLAY_GAP_MS` between two lines, its calls, items and
  events are the parent's and left out (`Trace.inherited_calls`, with a warning).
* **Start-up text** Codex writes as user messages (guidance files, their skills listing, the environment)
  is recorded as attachments, the other texts it injects as `meta`, the rest as the person's prompts
  (`injected.content_parts`).
* **A tool result's failure** is read from its text, since Codex records no success flag: a non-zero exit
  code (``"exit_code": N`` in JSON output, ``Exit code: N``, ``Process exited with code N``) or a sandbox
  refusal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import IO, Any

import orjson

from contexttrace.errors import EmptyTraceError, TraceFormatError, TraceReadError
from contexttrace.reading.codex.injected import content_parts
from contexttrace.reading.contract import FORMAT_CODEX, THREAD_MAIN
from contexttrace.reading.model import TABLES, LineNote, SourceFile, Trace
from contexttrace.reading.text import path_words, shell_read_path
from contexttrace.reading.values import cached_prompt_call, epoch_ms, token_count

#: Line types of the envelope (CLI 0.32 and later).
ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: Model-written items: a run of them, next to its `token_count`, is what one call wrote.
MODEL_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"})
#: How many skipped lines are named one by one.
MAX_LINE_NOTES = 20
#: Why a rollout of a CLI before 0.32 gives no token figure and no compaction.
LEGACY_NO_TOKENS = "a Codex CLI before 0.32 wrote no token counts and no compaction"

_EXIT_CODE = re.compile(r"^(?:Exit code: |.*?Process exited with code )(-?\d+)", re.S)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_REFUSALS = ("failed in sandbox", "exec command rejected", "patch rejected", "aborted by user")


#: A fork's copy of its parent's history is written in one burst at its start: the first gap between two
#: lines' write times longer than this (ms) ends it (the person's next prompt comes later).
REPLAY_GAP_MS = 2_000

#: How many of a file's first lines `is_rollout` looks at: one damaged line must not hide a rollout.
SNIFF_LINES = 8


def is_rollout(head: bytes) -> bool:
    """Whether a file starting with `head` is a Codex CLI rollout: of its first `SNIFF_LINES` lines that
    decode to objects, the first rollout-shaped one comes before any line of another shape. A rollout line is
    an envelope (``{"timestamp", "type", "payload"}`` with a rollout type and an object payload; a damaged
    stamp does not unmake it) or the bare session line CLIs before 0.32 wrote (``{"id", "timestamp",
    "instructions"}``, or a bare ``{"record_type": ...}`` line of theirs). Lines that do not decode (a
    damaged line, the cut end of `head`) are passed over.

    >>> is_rollout(b'{"timestamp":"2025-11-01T17:34:37.9Z","type":"session_meta","payload":{"id":"x"}}\\n')
    True
    >>> is_rollout(b'{"id":"x","timestamp":"2025-08-01T10:00:00Z","instructions":null}\\n')
    True
    >>> is_rollout(b'{"type":"session_meta","payload":{}}\\n{"type":"user"}'), is_rollout(b'{"type":"user"}')
    (True, False)
    """
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    start = 0
    for _ in range(SNIFF_LINES):  # the lines one by one: splitting the whole head cost more than the decode
        end = text.find(b"\n", start)
        end = len(text) if end < 0 else end
        try:
            line = orjson.loads(text[start:end])
        except orjson.JSONDecodeError:
            line = None
        if isinstance(line, dict):
            return _is_rollout_line(line)
        if end >= len(text):
            break
        start = end + 1
    return False


def _is_rollout_line(line: dict[str, Any]) -> bool:
    kind = line.get("type")
    if type(kind) is str and kind in ENVELOPE_TYPES:
        return isinstance(line.get("payload"), dict)
    return "type" not in line and (("id" in line and "instructions" in line) or "record_type" in line)


def _text_of(content: Any, kinds: tuple[str, ...]) -> str:
    """The text of a message's content items of the given kinds, joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        item.get("text", "")
        for item in content
        if isinstance(item, dict) and item.get("type") in kinds
        if isinstance(item.get("text"), str)
    )


def _output_measure(output: Any) -> tuple[str, int, int]:
    """A tool output's text, image items and their decoded bytes: a string, or a list of content items."""
    if isinstance(output, str):
        return output, 0, 0
    if isinstance(output, dict):  # {content, success}, the TypeScript CLI's shape
        return _output_measure(output.get("content"))
    if not isinstance(output, list):
        return "", 0, 0
    texts: list[str] = []
    images = image_bytes = 0
    for item in output:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            texts.append(item["text"])
        elif item.get("type") == "input_image":
            images += 1
            url = item.get("image_url")
            if isinstance(url, str) and "," in url:
                data = url.split(",", 1)[1]
                image_bytes += len(data) * 3 // 4 - data[-2:].count("=")
    return "".join(texts), images, image_bytes


def failed(text: str) -> tuple[bool, bool]:
    """(failed, refused) from a tool output's text: a non-zero exit code, or a sandbox or person's refusal.

    >>> failed("Exit code: 1\\nWall time: 0.2 seconds\\nOutput:\\n")
    (True, False)
    >>> failed('{"output":"x","metadata":{"exit_code":0}}'), failed("failed in sandbox: ...")
    ((False, False), (True, True))
    """
    head = text[:400]
    if head.startswith("{") and '"exit_code"' in text:
        try:
            meta = orjson.loads(text).get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
        except (orjson.JSONDecodeError, AttributeError):
            code = None
        if type(code) is int:
            return code != 0, False
    match = _EXIT_CODE.match(head)
    if match:
        return int(match.group(1)) != 0, False
    lowered = head.lower()
    if any(r in lowered for r in _REFUSALS):
        return True, True
    return False, False


class _Rollout:
    """The state of one rollout being read: rows per table, the open call, the facts."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.tables: dict[str, dict[str, list[Any]]] = {t: {c: [] for c in cols} for t, cols in TABLES.items()}
        self.seq = 0
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.cli_version: str | None = None
        self.model: str | None = None
        self.turn_cwd: str | None = None
        self.window: int | None = None
        self.prev_total: int | None = None
        self.calls = 0
        self.block: list[tuple[int, int, int | None, dict[str, Any]]] = []  # (seq, line, ts, payload)
        self.block_call: dict[str, Any] | None = None  # a call whose items may follow it
        self.last_prompt: int | None = None
        self.prev_ts: int | None = None
        self.stamps: list[int] = []
        self.warnings: list[str] = []
        self.notes: list[LineNote] = []
        self.skipped = 0
        self.legacy = False
        self.fork_of: str | None = None  # the parent session a fork replays at its start
        self.replaying = False
        self.inherited = 0  # the parent's calls the replay held

    def add(self, table: str, row: dict[str, Any]) -> None:
        """Append `row` (column → value) to `table`'s columns, null where it has none (KeyError: no such table)."""
        for col, values in self.tables[table].items():
            values.append(row.get(col))

    # -- calls -------------------------------------------------------------------------------------------

    def token_count(self, payload: dict[str, Any], seq: int, line: int, ts: int | None) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        window = token_count(info.get("model_context_window"))
        if window:
            self.window = window
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not isinstance(total, dict) or not isinstance(last, dict):
            return
        grand = token_count(total.get("total_tokens"))
        prompt, output = token_count(last.get("input_tokens")), token_count(last.get("output_tokens"))
        if grand is not None and grand == self.prev_total:
            return  # written again with the same totals (a rate-limit refresh)
        self.prev_total = grand
        if not prompt and not output:
            return  # an estimate after a compaction or a full window: no call
        if self.replaying:
            self.inherited += 1  # a call of the parent's, copied by the fork: the parent's own
            return
        cached = token_count(last.get("cached_input_tokens")) or 0
        call = cached_prompt_call(prompt, cached, ts, self.prev_ts) | {
            "seq": seq,
            "line": line,
            "file": self.path,
            "message_id": f"{self.session_id or self.path}:{self.calls}",
            "model": self.model,
            "output_tokens": output,
            "has_thinking": False,
            "thinking_chars": 0,
            "text_chars": 0,
            "tool_input_chars": 0,
            "path_words": None,
        }
        self.calls += 1
        if prompt is not None:
            self.last_prompt = prompt
        if self.block and self.block_call is None:
            self._close(call)  # the items were written before their count (CLIs after 0.65)
            self._emit(call)
        else:
            self._flush()
            self.block_call = call

    def item(self, payload: dict[str, Any], seq: int, line: int, ts: int | None) -> None:
        """A model-written item: part of the open run (of the call counted before it, or the next count)."""
        self.block.append((seq, line, ts, payload))

    def boundary(self) -> None:
        """A tool output, a message or a compaction ends the run of model-written items."""
        if self.block_call is not None:
            self._close(self.block_call)
            self._emit(self.block_call)
            self.block_call = None
        elif self.block:
            self._close(None)  # items no count claims (an aborted turn, a rollout without counts)

    def _flush(self) -> None:
        self.boundary()

    def _close(self, call: dict[str, Any] | None) -> None:
        words: list[str] = []
        for seq, line, ts, payload in self.block:
            kind = payload.get("type")
            if kind == "reasoning" and call is not None:
                call["has_thinking"] = True
                call["thinking_chars"] += len(_text_of(payload.get("summary"), ("summary_text",)))
            elif kind == "message":
                text = _text_of(payload.get("content"), ("output_text",))
                if call is not None:
                    call["text_chars"] += len(text)
                words.extend(path_words(text))
            elif kind == "web_search_call":
                if call is not None:
                    call["web_search_requests"] += 1
            elif kind in MODEL_ITEMS:
                chars = self._tool_use(payload, seq, line, ts, call)
                if call is not None:
                    call["tool_input_chars"] += chars
            if call is not None:
                call["n_lines"] += 1
                if call["seq"] > seq:
                    call["seq"], call["line"], call["ts_ms"] = seq, line, ts
                if ts is not None and (call["end_ts_ms"] is None or ts > call["end_ts_ms"]):
                    call["end_ts_ms"] = ts
        if call is not None and words:
            call["path_words"] = " ".join(words)
        self.block = []

    def _emit(self, call: dict[str, Any]) -> None:
        self.add("calls", call)

    def _tool_use(self, payload: dict[str, Any], seq: int, line: int, ts: int | None, call: Any) -> int:
        kind = payload.get("type")
        name = payload.get("name") if isinstance(payload.get("name"), str) else kind
        if kind == "function_call":
            raw = payload.get("arguments")
            try:
                value = orjson.loads(raw) if isinstance(raw, str) else raw
            except orjson.JSONDecodeError:
                value = raw
        elif kind == "custom_tool_call":
            value = payload.get("input")
        else:  # local_shell_call
            name = "local_shell"
            value = payload.get("action")
        try:
            input_json = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:
            input_json = orjson.dumps(str(value)).decode()
        file_path = read_path = None
        if isinstance(value, dict):
            for key in ("path", "file_path"):
                if isinstance(value.get(key), str) and value[key]:
                    file_path = value[key]
            command = value.get("cmd", value.get("command"))
            if isinstance(command, list) and len(command) == 3 and command[:2] in (["bash", "-lc"], ["bash", "-c"]):
                command = command[2]
            read_path = shell_read_path(command) if isinstance(command, str) else None
        elif isinstance(value, str) and name == "apply_patch":
            found = _PATCH_FILE.search(value)
            file_path = found.group(1).strip() if found else None
        self.add(
            "tool_uses",
            {
                "seq": seq,
                "line": line,
                "tool_use_id": payload.get("call_id") if isinstance(payload.get("call_id"), str) else None,
                "message_id": call["message_id"] if call is not None else None,
                "thread": THREAD_MAIN,
                "thread_kind": THREAD_MAIN,
                "name": name,
                "input_json": input_json,
                "file_path": file_path,
                "ts_ms": ts,
                "read_path": read_path,
                "input_chars": len(input_json),
                "cwd": self.turn_cwd if self.turn_cwd and self.turn_cwd != self.cwd else None,
            },
        )
        return len(input_json)

    # -- the rest ----------------------------------------------------------------------------------------

    def tool_output(self, payload: dict[str, Any], seq: int, line: int, ts: int | None) -> None:
        text, images, image_bytes = _output_measure(payload.get("output"))
        is_error, denied = failed(text)
        self.add(
            "tool_results",
            {
                "seq": seq,
                "line": line,
                "tool_use_id": payload.get("call_id") if isinstance(payload.get("call_id"), str) else None,
                "thread": THREAD_MAIN,
                "thread_kind": THREAD_MAIN,
                "is_error": is_error,
                "denied": denied,
                "result_chars": len(text),
                "result_images": images,
                "result_image_bytes": image_bytes,
                "unknown_blocks": 0,
                "persisted": False,
                "content_hash": hash(text),
                "ts_ms": ts,
                "result_image_pixels": 0,
                "result_images_sized": 0,
                "error_head": text[:300] if is_error else None,
                "capped": False,
                "unchanged": False,
            },
        )

    def event(self, kind: str, seq: int, line: int, ts: int | None, **values: Any) -> None:
        row = {"seq": seq, "line": line, "thread": THREAD_MAIN, "thread_kind": THREAD_MAIN, "kind": kind, "ts_ms": ts}
        self.add("events", row | values)

    def message(self, payload: dict[str, Any], seq: int, line: int, ts: int | None, replayed: bool = False) -> None:
        """A user or developer message's events (an assistant's is a model-written item); `replayed`: one a
        compaction writes back, whose prompt is ``meta`` (in the window again, not a new turn)."""
        role = payload.get("role")
        if role == "assistant":
            self.item(payload, seq, line, ts)
            return
        self.boundary()
        content = payload.get("content")
        attached, kind, chars = content_parts(role, content)
        for attachment_type, size in attached:
            self.event("attachment", seq, line, ts, text_chars=size, attachment_type=attachment_type)
        if kind is not None:
            kind = "meta" if replayed else kind
            images = (
                sum(1 for c in content if isinstance(c, dict) and c.get("type") == "input_image")
                if isinstance(content, list)
                else 0
            )
            self.event(kind, seq, line, ts, text_chars=chars, images=images)

    def compacted(self, payload: dict[str, Any], seq: int, line: int, ts: int | None) -> None:
        """The boundary, then the user and developer messages of its `replacement_history` (guidance files,
        environment, the person's prompts) one seq after it, as what the new window holds. Its
        `compaction_summary` is encrypted: no event (its size in tokens is unknown; `other` holds it)."""
        self.boundary()
        self.event("compact_boundary", seq, line, ts, pre_tokens=self.last_prompt)
        history = payload.get("replacement_history")
        items = [i for i in history if isinstance(i, dict)] if isinstance(history, list) else []
        kept = [i for i in items if i.get("type") == "message" and i.get("role") in ("user", "developer")]
        if kept:
            self.seq += 1  # after the boundary: what lands at its own seq is cut from the new window
            for item in kept:
                self.message(item, self.seq, line, ts, replayed=True)

    def skip(self, line: int, reason: str) -> None:
        self.skipped += 1
        if len(self.notes) < MAX_LINE_NOTES:
            self.notes.append(LineNote(self.path, line, reason))


def _route(r: _Rollout, kind: Any, payload: Any, seq: int, line: int, ts: int | None) -> None:
    """Hand one envelope line to the reader's state by its type."""
    if not isinstance(payload, dict):
        return
    if kind == "response_item":
        item = payload.get("type")
        item = item if type(item) is str else None
        if item == "message":
            r.message(payload, seq, line, ts)
        elif item in MODEL_ITEMS:
            r.item(payload, seq, line, ts)
        elif item in ("function_call_output", "custom_tool_call_output"):
            r.boundary()
            r.tool_output(payload, seq, line, ts)
    elif kind == "event_msg":
        event = payload.get("type")
        if event == "token_count":
            r.token_count(payload, seq, line, ts)
        elif event == "turn_aborted":
            r.boundary()
            r.event("interrupt", seq, line, ts)
        elif event == "task_complete" and token_count(payload.get("duration_ms")) is not None:
            r.event("turn_duration", seq, line, ts, duration_ms=payload["duration_ms"])
    elif kind == "turn_context":
        if isinstance(payload.get("model"), str):
            r.model = payload["model"]
        if isinstance(payload.get("cwd"), str):
            r.turn_cwd = payload["cwd"]
    elif kind == "compacted":
        r.compacted(payload, seq, line, ts)
    elif kind == "session_meta":
        _session_meta(r, payload)


def _session_meta(r: _Rollout, payload: dict[str, Any]) -> None:
    """The rollout's own session line, or (in a fork) its parent's, copied: the replay starts there."""
    own = payload.get("id") if isinstance(payload.get("id"), str) else None
    if r.session_id is None:
        r.session_id = own
        r.cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        r.cli_version = payload.get("cli_version") if isinstance(payload.get("cli_version"), str) else None
        parent = payload.get("forked_from_id")
        if isinstance(parent, str) and parent:
            r.fork_of, r.replaying = parent, True
    elif own is not None and own != r.session_id and r.fork_of is None and r.calls == 0:
        r.fork_of, r.replaying = own, True


def _record(r: _Rollout, rec: dict[str, Any], number: int, ts: int | None) -> None:
    """Hand one record to the reader's state: an envelope line, the bare first line or a bare item."""
    kind = rec.get("type")
    kind = kind if type(kind) is str else None
    if "payload" in rec:
        _route(r, kind, rec.get("payload"), r.seq, number, ts)
    elif "instructions" in rec and "id" in rec and r.session_id is None:
        r.legacy = True
        r.session_id = rec["id"] if isinstance(rec["id"], str) else None
    elif kind == "message" or kind in MODEL_ITEMS:
        _route(r, "response_item", rec, r.seq, number, ts)  # a bare item (CLIs before 0.32)


def _copied(rec: dict[str, Any]) -> bool:
    """Whether a line of a fork's replay is left out: the parent's items, events and compactions are; its
    session, turn-context and token-count lines are read (the model, the window, the running totals)."""
    kind = rec.get("type")
    if kind == "event_msg":
        payload = rec.get("payload")
        return not (isinstance(payload, dict) and payload.get("type") == "token_count")
    return kind in ("response_item", "compacted")


def _feed(r: _Rollout, fh: IO[bytes]) -> int:
    """Read every line of `fh` into `r`; return how many JSON records it held. Raises TraceReadError."""
    records = number = 0
    try:
        for number, raw in enumerate(fh, start=1):
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark (at the file's start, or where files were joined)
            if not raw.strip():
                continue
            try:
                rec = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if raw.endswith(b"\n"):
                    r.skip(number, "not JSON")
                else:
                    r.skipped += 1  # a truncated last line: a file still being written
                continue
            if not isinstance(rec, dict):
                r.skip(number, f"not a JSON object ({type(rec).__name__})")
                continue
            records += 1
            r.seq += 1
            ts = epoch_ms(rec.get("timestamp"))
            if ts is not None:
                r.stamps.append(ts)
            if r.replaying and ts is not None and r.prev_ts is not None and ts - r.prev_ts > REPLAY_GAP_MS:
                r.replaying = False  # the fork's own lines begin after the burst that copied its parent's
            try:
                if not (r.replaying and _copied(rec)):  # the parent's items and events, copied: the parent's
                    _record(r, rec, number, ts)
            except Exception as exc:  # the line firewall: a value no rule expected costs this line only
                r.skip(number, f"not read ({type(exc).__name__}: {' '.join(str(exc).split())[:120]})")
            if ts is not None:
                r.prev_ts = ts
    except OSError as exc:
        raise TraceReadError(r.path, f"read failed at line {number + 1}: {exc.strerror or exc}") from None
    return records


def read_rollout(path: str, fh: IO[bytes], companions: Sequence[SourceFile] = ()) -> list[Trace]:
    """Read a Codex CLI rollout into one trace (Codex writes a subagent's rollout as a session of its own).

    Parameters
    ----------
    path
        The file's name (a path, a URL or ``"-"``), used in the trace's name and in messages.
    fh
        The open file, its bytes UTF-8 (`files.open_trace` decodes UTF-16).
    companions
        Ignored: a rollout has no companion files.

    Returns
    -------
    list of Trace
        One trace, format ``"codex"``: one call row per model call (prompt, cache read and output exact
        from `last_token_usage`), one tool-use row per function, custom or local-shell call, one result
        row per output, events for prompts, injected context, compactions and aborted turns. The window
        Codex states is `Trace.window_tokens` (source `Trace.window_source`).

    Raises
    ------
    EmptyTraceError
        The file holds no JSON record.
    TraceReadError
        The file cannot be read to its end.
    """
    del companions
    r = _Rollout(path)
    records = _feed(r, fh)
    if not records:
        raise EmptyTraceError(path, "no JSON record")
    if r.session_id is None and not r.tables["calls"]["seq"]:
        raise TraceFormatError(path, "no Codex CLI rollout record")
    r.boundary()
    if r.fork_of is not None:
        r.warnings.append(
            f"a fork of session {r.fork_of}: the {r.inherited} call(s) it copied from it at its start are the "
            "parent's, left out here"
        )
    unrecorded: dict[str, str] = {}
    if r.legacy:
        r.warnings.append("a rollout of a CLI before 0.32: it records no token counts, so no call is measured")
        unrecorded = {"tokens": LEGACY_NO_TOKENS, "compactions": LEGACY_NO_TOKENS}
    trace = Trace(
        name=path,
        path=path,
        format=FORMAT_CODEX,
        session_id=r.session_id,
        tables=r.tables,
        skipped_lines=r.skipped,
        line_notes=r.notes,
        skipped_by_file={path: r.skipped} if r.skipped else {},
        warnings=r.warnings,
        cli_version=r.cli_version,
        cwd=r.cwd,
        files=[path],
        timestamps_ms=sorted(r.stamps),
        window_tokens=r.window,
        window_source="model_context_window" if r.window else None,
        unrecorded=unrecorded,
        inherited_calls=r.inherited,
    )
    return [trace]
