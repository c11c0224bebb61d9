"""Records → rows: the builder of one trace's four tables.

`Builder.add` routes each decoded record (`records.MessageLine` or `records.Line`) to the handler of its line
type (assistant, user, system, attachment, result: a method each), which appends rows to the trace's tables.
The two formats share the handlers (they write the same message shapes); what differs comes from `dialects`.
The builder's state is a handful of small classes that merge themselves (`state`, `dialects.Evidence`,
`dialects.Threads`, `calls.Calls`), so a file read in two parts merges every field (`merge_tail`).

It never prints nor reads files; `build` turns the rows into a `model.Trace` once.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from typing import Any, cast

from msgspec import UNSET

from contexttrace.reading.claude.calls import (
    C_COMPACTION_PROMPT,
    CALL_ROW,
    NO_CONTENT,
    Calls,
    input_side,
    kept_line,
)
from contexttrace.reading.claude.content import (
    ERROR_HEAD_CHARS,
    MAX_TOKENS,
    PART_READ,
    attachment_chars,
    attachment_text,
    canonical,
    cap_of,
    command_name,
    first_text,
    is_denial,
    is_task_notification,
    measure,
    notification_report,
    persisted_bytes,
    read_caps,
)
from contexttrace.reading.claude.dialects import (
    COMPACT_KEYS,
    MICROCOMPACT_KEYS,
    TIMED_TYPES,
    Evidence,
    Threads,
    compact_metadata,
    denied_ids,
    microcompact_metadata,
    result_copy,
    run_totals,
    spelled,
    surface,
)
from contexttrace.reading.claude.records import Block, Line, MessageLine, ResultCopy, raw_value
from contexttrace.reading.claude.state import (
    RESULT_ROW,
    USE_ROW,
    Diagnostics,
    Events,
    Facts,
    Seen,
    Stamps,
    ToolResults,
    ToolUses,
    columns,
    epoch_ms,
)
from contexttrace.reading.contract import (
    AGENT_TOOLS,
    CALL_SCHEMA,
    EVENT_SCHEMA,
    FORMAT_STREAM_JSON,
    THREAD_MAIN,
    TOOL_RESULT_SCHEMA,
    TOOL_USE_SCHEMA,
)
from contexttrace.reading.model import SourceFile, Trace
from contexttrace.reading.text import path_words, shell_read_path

_COMMAND_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
)
_INTERRUPT_PREFIX = "[Request interrupted"
#: A `parent_tool_use_id` that names no thread (absent: a transcript's line; null: a stream-json main line).
_NO_THREAD = (UNSET, None)


class Builder:
    """Accumulates one trace's rows (one Python list or tuple per row, in its table's column order), then
    turns them into the trace's column tables once (`build`).

    `name` is the trace's name in output, `path` the file it is read from. Each record goes through `add`;
    a record that raises there costs its line only (`feed.feed` counts and names it).
    """

    def __init__(self, name: str, path: str, words: bool = True, inputs: bool = True) -> None:
        self.name = name
        self.path = path
        #: the reading profile: calls keep their text's path-like words (`path_words`: `context files` reads
        #: them) and Bash tool uses the path they print (`read_path`: `context sources` and `files`); both null
        #: without (`context trace` and `usage` read neither)
        self.words = words
        #: tool uses keep their input as canonical JSON (`input_json`, its lengths), results their text's hash
        #: (`content_hash`) and part reads whether they were capped: all null without (`context usage` reads
        #: none of them; a tool input is then decoded only for the columns of an agent's, or `read_path`)
        self.inputs = inputs
        self.seq = 0  # records routed so far (a row's `seq`)
        #: the last timestamp of a user/assistant/system line in the file being read (a call's `prev_ts_ms`)
        self.prev_ts: str | None = None
        #: how `content_hash` is computed: Python's `hash` (seeded per process), or `split.stable_text_hash`
        #: when a file's two parts are read by processes that do not share the seed
        self.text_hash: Callable[[str], int] = hash
        self.seen = Seen()
        self.diag = Diagnostics()
        self.facts = Facts()
        self.evidence = Evidence()
        self.threads = Threads()
        self.calls = Calls()
        self.uses = ToolUses()
        self.results = ToolResults()
        self.events = Events()
        self.stamps = Stamps()

    def has_rows(self) -> bool:
        """Whether any call, tool result or event row was made."""
        return bool(self.calls.rows or self.events.rows or self.results.rows)

    # -- records -----------------------------------------------------------------------------------
    def add(self, rec: MessageLine, kind: str | None, line: int, src: SourceFile) -> None:
        """Route one decoded record (its top-level `type` is `kind`) to its rows: its handler by kind (the
        commonest first), then the trace's facts and the line's timestamp (after the handler: a call's
        `prev_ts_ms` is the line before it; a record whose handler raises sets neither)."""
        self.seq += 1
        facts = self.facts
        main_file = src.thread_kind == THREAD_MAIN
        evidence = self.evidence
        if (kind == "assistant" or kind == "user") and rec.session_id is UNSET and rec.parent_tool_use_id is UNSET:
            # `Evidence.count` of the common line inline: a message line without stream-json keys
            evidence.records += 1
            evidence.claude_lines += 1
            sid = rec.sessionId
            if sid is not UNSET:
                evidence.seen_transcript = True
                evidence.transcript_lines += 1
                if main_file and type(sid) is str and facts.session_id is None:
                    facts.session_id = sid
        else:
            sid = evidence.count(rec, kind, main_file)
            if sid is not None and facts.session_id is None:
                facts.session_id = sid
        if kind == "assistant":
            self._assistant(rec, line, src)
        elif kind == "user":
            self._user(rec, line, src)
        elif kind == "system":  # (a line of any type but a message's is a `Line`: `records.decode`)
            self._system(cast(Line, rec), line, src)
        elif kind == "attachment":
            self._attachment(cast(Line, rec), line, src)
        elif kind == "result":
            self._result(cast(Line, rec), line, src)
        if facts.cli_version is None and main_file and rec.version is not None:  # (a string or None: `records`)
            facts.cli_version = rec.version
        if facts.cwd is None and rec.cwd is not None:
            facts.cwd = rec.cwd
        ts = rec.timestamp
        if ts is not None:
            if ts < "1" or ts >= "3":  # not a year 1000 to 2999: text, or a date that may name no moment
                self.diag.odd_stamp(ts, src.path, line)
            if kind in TIMED_TYPES:
                self.prev_ts = ts
                self.stamps.stamps.append(ts)

    # Over 80 lines: the per-record hot path in one function (equivalence: test_claude_fast_paths, test_samples).
    def _assistant(self, rec: MessageLine, line: int, src: SourceFile) -> None:
        msg = rec.message
        if msg is None:
            return
        if rec.parent_tool_use_id in _NO_THREAD and rec.isSidechain is not True and src.thread_kind == THREAD_MAIN:
            thread = thread_kind = THREAD_MAIN  # `Threads.thread_of` of the common line, inline
        else:
            thread, thread_kind = self.threads.thread_of(rec, src)
        model = msg.model
        ts = rec.timestamp
        if model == "<synthetic>" or rec.isApiErrorMessage is True:
            self.facts.synthetic += 1
            self._event(line, thread, thread_kind, "synthetic", ts=ts)
            return
        usage = msg.usage
        if usage is None:
            return
        mid = msg.id or None  # (an empty id is none)
        inp = usage.input_tokens
        cw = usage.cache_creation_input_tokens
        cr = usage.cache_read_input_tokens
        out = usage.output_tokens
        if not (  # `calls.input_side`, its common case inline: four plausible ints (in range when their OR is)
            type(inp) is int and type(cw) is int and type(cr) is int and type(out) is int
            and 0 <= inp | cw | cr | out < MAX_TOKENS
        ):  # fmt: skip
            inp, cw, cr, out, bad = input_side(usage)
            self.diag.bad_usage += bad
        # What the line writes: thinking, prose and tool uses (one block per line as Claude Code writes them).
        thinking = text = 0
        has_thinking = False
        tool_uses = None
        said = None  # the path-like words of its text (`text.path_words`), when the profile keeps them
        content = msg.content
        if type(content) is list:
            words: list[str] | None = [] if self.words else None
            for block in content:
                if type(block) is not Block:
                    continue
                kind = block.type
                if kind == "tool_use" or kind == "server_tool_use":
                    if tool_uses is None:
                        tool_uses = [block]
                    else:
                        tool_uses.append(block)
                elif kind == "text":
                    prose = block.text
                    if prose is not None:
                        text += len(prose)
                        if words is not None:
                            words += path_words(prose)
                elif kind == "thinking":
                    has_thinking = True
                    if block.thinking is not None:
                        thinking += len(block.thinking)
                elif kind == "redacted_thinking":
                    has_thinking = True
            if words:
                said = " ".join(words) or None
        # A call's identity: its message id and input-side usage (a line without an id is a call of its own).
        key: Any = (mid, inp, cw, cr) if mid is not None else self.seq
        calls = self.calls
        at = calls.find(key, mid)
        if at is None:
            values, bad, passes = kept_line(rec, msg, usage, model, out)
            if bad:
                self.diag.bad_usage += bad
            if passes:
                self._compactions(passes, line, thread, thread_kind, ts)
            at = calls.add(key, [  # (`calls.CALL_ROW` order: the kept line's values last)
                self.seq, line, src.path, mid, thread, thread_kind, inp, cw, cr, inp + cw + cr, ts, ts, self.prev_ts,
                1, has_thinking, thinking, text, said, *values,
            ], bad)  # fmt: skip
        else:
            # a placeholder line (input side all zero) of a call that has its real lines adds nothing to it
            placeholder = not (inp or cw or cr) and mid is not None and not calls.is_placeholder(at)
            wrote = NO_CONTENT if placeholder else (thinking, text, has_thinking, said)
            if calls.another_line(at, thread, thread_kind, ts, out, wrote):
                had = calls.rows[at][C_COMPACTION_PROMPT]
                values, bad, passes = kept_line(rec, msg, usage, model, out)
                if bad:
                    self.diag.bad_usage += bad
                calls.keep(at, values, bad)
                if passes and not had:
                    self._compactions(passes, line, thread, thread_kind, ts)
        if tool_uses is not None:
            cwd = sys.intern(rec.cwd) if rec.cwd is not None else None  # (one string per directory)
            for block in tool_uses:
                self._tool_use(block, line, at, mid, ts, cwd)

    def _compactions(self, prompts: Sequence[int], line: int, thread: str, thread_kind: str, ts: str | None) -> None:
        """A `compact_boundary` event per compaction pass inside a response (`calls.compaction_passes`), its
        `pre_tokens` the pass's prompt (the history it summarised), each with a seq of its own just before the
        call's (when the call's first line states them): the answer was computed on the summary."""
        for pre in prompts:
            self._event(line, thread, thread_kind, "compact_boundary", ts=ts, trigger="auto", pre_tokens=pre)
            self.seq += 1

    def _tool_use(self, block: Block, line: int, at: int, mid: str | None, ts: str | None, cwd: str | None) -> None:
        tid = block.id
        uses = self.uses
        if not tid:
            tid = None
        else:
            if tid in uses.ids:
                return  # the same tool use on another line of the call, or a replayed copy
            uses.ids.add(tid)
        name = block.name
        inp = input_json = None
        if self.inputs or name in AGENT_TOOLS or (name == "Bash" and self.words):
            inp = raw_value(block.input)
            input_json = canonical(inp, line, tid) if self.inputs else None
        path = agent_type = description = prompt_chars = read_path = None  # (each: a string, else None)
        if type(inp) is dict:
            if self.inputs:
                path = inp.get("file_path")
                if not (type(path) is str and path):
                    path = None
            if name in AGENT_TOOLS:
                agent_type, description, prompt = inp.get("subagent_type"), inp.get("description"), inp.get("prompt")
                agent_type = agent_type if type(agent_type) is str else None
                description = description if type(description) is str else None
                prompt_chars = len(prompt) if type(prompt) is str else None
            elif name == "Bash" and self.words:  # (`read_path`: read by `context sources` and `files` only)
                read_path = shell_read_path(inp.get("command"))
        uses.rows.append((
            self.seq, line, tid, mid, at, name if name is not None else "?", input_json, path, ts, agent_type,
            description, prompt_chars, read_path, cwd, block.type == "server_tool_use",
        ))  # fmt: skip

    def _user(self, rec: MessageLine, line: int, src: SourceFile) -> None:
        msg = rec.message
        if msg is None:
            return
        if rec.parent_tool_use_id in _NO_THREAD and rec.isSidechain is not True and src.thread_kind == THREAD_MAIN:
            thread = thread_kind = THREAD_MAIN  # `Threads.thread_of` of the common line, inline
        else:
            thread, thread_kind = self.threads.thread_of(rec, src)
        content = msg.content
        ts = rec.timestamp
        if type(content) is list and self._tool_results(rec, content, line, thread, thread_kind, ts):
            return
        text = first_text(content)
        if rec.isCompactSummary is True:
            kind = "compact_summary"
        elif rec.isMeta is True:
            kind = "meta"
        elif thread_kind != THREAD_MAIN:
            kind = "subagent_prompt"
        elif text.startswith(_INTERRUPT_PREFIX):
            kind = "interrupt"
        elif text.lstrip().startswith(_COMMAND_PREFIXES):
            kind = "command"
        elif is_task_notification(rec.origin, text):
            kind = "task_notification"
        else:
            kind = "prompt"
        chars, images = (len(content), 0) if type(content) is str else measure(content)[:2]
        name = command_name(text) if kind == "command" else None  # (`/clear` empties the window)
        tid, report = notification_report(text) if kind == "task_notification" else (None, None)
        self._event(
            line, thread, thread_kind, kind, ts=ts, text_chars=chars, images=images, command_name=name,
            tool_use_id=tid, report_chars=report,
        )  # fmt: skip

    def _tool_results(
        self, rec: MessageLine, content: list[Any], line: int, thread: str, thread_kind: str, ts: Any
    ) -> bool:
        """Add the rows of a user line's tool_result blocks; whether it had any."""
        has_result = False
        denial_kind = rec.toolDenialKind
        structured = result_copy(rec)
        agent_id = agent_ms = None
        capped: bool | str = False
        unchanged = is_async = False
        if type(structured) is ResultCopy:
            agent_id = structured.agentId
            if type(agent_id) is not str:
                agent_id = None
            agent_ms = structured.totalDurationMs
            if agent_ms is not None:  # (`Diagnostics.number` of None is None, uncounted)
                agent_ms = self.diag.number(agent_ms)
            capped = cap_of(structured)
            unchanged = structured.type == "file_unchanged"
            is_async = structured.isAsync is True or structured.status == "async_launched"
        results = self.results
        hashed = self.inputs
        for block in content:
            if not (type(block) is Block and block.type == "tool_result"):
                continue
            has_result = True
            tid = block.tool_use_id
            if not tid:
                tid = None
            else:
                if tid in results.ids:
                    continue  # a replayed copy of a result already counted
                results.ids.add(tid)
            text = block.content
            if type(text) is str:  # the common case: one text
                chars = len(text)
                images = image_bytes = unknown = pixels = sized = 0
            else:
                chars, images, image_bytes, unknown, pixels, sized = measure(text)
                text = first_text(text)
            content_hash = (self.text_hash(text) if chars else 0) if hashed else None  # no text: 0
            is_error = block.is_error is True
            persisted = text.startswith("<persisted-output>")
            # fmt: off
            results.rows.append((
                self.seq, line, tid, thread, thread_kind, is_error,
                bool(denial_kind) or (is_error and is_denial(text)),
                chars, images, image_bytes, unknown, persisted,
                persisted_bytes(text) if persisted else None,
                content_hash, agent_id, agent_ms, ts,
                pixels, sized, text[:ERROR_HEAD_CHARS] if is_error else None, capped, unchanged, is_async,
            ))
            # fmt: on
        return has_result

    def _system(self, rec: Line, line: int, src: SourceFile) -> None:
        subtype = rec.subtype
        ts = rec.timestamp
        thread, thread_kind = self.threads.thread_of(rec, src)
        number = self.diag.number
        if subtype == "compact_boundary":
            meta = compact_metadata(rec)
            trigger = spelled(meta, COMPACT_KEYS["trigger"])
            self._event(
                line,
                thread,
                thread_kind,
                "compact_boundary",
                ts=ts,
                trigger=trigger if isinstance(trigger, str) else None,
                pre_tokens=number(spelled(meta, COMPACT_KEYS["pre_tokens"])),
                post_tokens=number(spelled(meta, COMPACT_KEYS["post_tokens"])),
                duration_ms=number(spelled(meta, COMPACT_KEYS["duration_ms"])),
            )
        elif subtype == "microcompact_boundary":
            meta = microcompact_metadata(rec)
            trigger = spelled(meta, MICROCOMPACT_KEYS["trigger"])
            ids = spelled(meta, MICROCOMPACT_KEYS["compacted_tool_ids"])
            ids = [i for i in ids if type(i) is str and i] if isinstance(ids, list) else []
            for tid in ids:
                self.results.cleared.setdefault(tid, self.seq)
            self._event(
                line,
                thread,
                thread_kind,
                "microcompact_boundary",
                ts=ts,
                trigger=trigger if isinstance(trigger, str) else None,
                pre_tokens=number(spelled(meta, MICROCOMPACT_KEYS["pre_tokens"])),
                tokens_saved=number(spelled(meta, MICROCOMPACT_KEYS["tokens_saved"])),
                cleared_results=len(ids),
            )
        elif subtype == "init":
            if thread_kind == THREAD_MAIN:
                self.facts.inits.append((self.seq, line, ts))
            if src.thread_kind == THREAD_MAIN and self.facts.surface is None:
                self.facts.surface = surface(rec)
                if isinstance(rec.claude_code_version, str):
                    self.facts.cli_version = rec.claude_code_version
        elif subtype == "turn_duration":
            self._event(line, thread, thread_kind, "turn_duration", ts=ts, duration_ms=number(rec.durationMs))
        elif subtype == "api_error":
            self._event(line, thread, thread_kind, "api_error", ts=ts)

    def _result(self, rec: Line, line: int, src: SourceFile) -> None:
        self.facts.result = run_totals(rec)
        self.facts.denied_ids.update(denied_ids(rec))

    def _attachment(self, rec: Line, line: int, src: SourceFile) -> None:
        attachment = rec.attachment
        if attachment is None:
            return
        thread, thread_kind = self.threads.thread_of(rec, src)
        kind = attachment.type
        self._event(
            line,
            thread,
            thread_kind,
            "attachment",
            ts=rec.timestamp,
            text_chars=attachment_chars(attachment_text(attachment)),
            attachment_type=kind if type(kind) is str else None,
            attachment_path=attachment.filename if type(attachment.filename) is str else None,
        )

    def _event(self, line: int, thread: str, thread_kind: str, kind: str, **fields: Any) -> None:
        """An event row of the current record (`state.Events.add`)."""
        self.events.add(self.seq, line, thread, thread_kind, kind, **fields)

    # -- a tail read elsewhere -----------------------------------------------------------------------
    def merge_tail(
        self, tail: Builder, head_lines: int, main_rows: tuple[int, int, int, int], with_subagents: bool
    ) -> None:
        """Add the rows and state of the end of this builder's file (read by `tail`) as if one builder
        had read both parts in order: each state merges itself; `main_rows` are how many rows of each
        table (calls, tool uses, results, events) came from the main file (their lines continue this
        part's `head_lines`; rows of the subagent files read after it keep their own)."""
        n_calls, n_uses, n_results, n_events = main_rows if with_subagents else (1 << 62,) * 4
        seq0, line0 = self.seq, head_lines
        prev_ts = self.stamps.stamps[-1] if self.stamps.stamps else None
        rename = self.threads.merge(tail.threads)
        moved, uncounted = self.calls.merge(tail.calls, seq0, line0, n_calls, rename, prev_ts)
        self.uses.merge(tail.uses, seq0, line0, n_uses, moved)
        self.results.merge(tail.results, seq0, line0, n_results, rename)
        self.events.merge(tail.events, seq0, line0, n_events, rename)
        self.seen.merge(tail.seen)
        self.diag.merge(tail.diag, self.path, line0, uncounted)
        self.facts.merge(tail.facts, with_subagents)
        self.evidence.merge(tail.evidence)
        self.stamps.merge(tail.stamps)
        self.seq += tail.seq

    # -- tables ------------------------------------------------------------------------------------
    def warnings(self, ms: dict[str | None, int | None] | None = None) -> list[str]:
        """The trace's warnings: unreadable subagent files, then each kind of doubtful value counted (`ms`:
        the trace's stamps parsed, `state.epoch_ms`, to warn of those that name no moment)."""
        diag = self.diag
        out = [*diag.warnings, *diag.moment_warnings(ms or {})]
        if self.calls.clashing_ids:
            out.append(
                f"message ids not unique: {len(self.calls.clashing_ids)} message id(s) carry different input-side "
                "usage; counted as separate calls"
            )
        out += diag.count_warnings()
        if self.seen.repeated:
            out.append(
                f"{self.seen.repeated} repeated record(s) dropped: the same uuid written again in the file "
                "(a re-appended stretch of the session)"
            )
        stray = self.evidence.stray_warning()
        return [*out, stray] if stray else out

    def build(self, fmt: str) -> Trace:
        """The trace read into this builder, in format `fmt`, with its tables as column lists.

        Timestamps become Unix epoch ms here (each distinct one parsed once), the columns that need the
        whole trace are filled (`tool_input_chars`, a tool use's thread, `cleared_seq`, `capped` of part
        reads, denials a result line lists), and the warnings are written (`warnings`). Raises nothing.
        """
        if fmt == FORMAT_STREAM_JSON:
            self.events.input_prompts(self.facts.inits)
        calls = self.calls.rows
        c = columns(calls, CALL_ROW)
        r = columns(self.results.rows, RESULT_ROW)
        e = columns(self.events.rows, EVENT_SCHEMA)
        u = columns(self.uses.rows, USE_ROW)
        # The thread of a tool use is the thread of its (merged) call: a main call replayed in a sidechain
        # keeps its tool uses on the main thread.
        at = u.pop("call_row")
        u["thread"] = list(map(c["thread"].__getitem__, at))
        u["thread_kind"] = list(map(c["thread_kind"].__getitem__, at))
        if self.inputs:
            u["input_chars"] = list(map(len, u["input_json"]))
            input_chars: list[int | None] = [0] * len(calls)
            for i, n in zip(at, u["input_chars"], strict=True):
                input_chars[i] += n  # type: ignore[operator]
        else:  # (read without the inputs: unknown)
            u["input_chars"], input_chars = [None] * len(at), [None] * len(calls)
        c["tool_input_chars"] = input_chars
        # Every distinct timestamp of the trace is parsed once (every timestamp of a row is a
        # user/assistant/system line's, so it is in `stamps`, but an attachment's: events).
        stamps = self.stamps.stamps
        ms = epoch_ms(dict.fromkeys(itertools.chain(stamps, e["ts_ms"])), self.stamps.ms)
        for column in (c["ts_ms"], c["end_ts_ms"], c["prev_ts_ms"], u["ts_ms"], r["ts_ms"], e["ts_ms"]):
            column[:] = map(ms.__getitem__, column)
        if PART_READ in r["capped"]:  # (decided by the Read's input: unknown when read without the inputs)
            capped = r["capped"]
            if self.inputs:
                r["capped"] = read_caps(capped, r["tool_use_id"], u)
            else:
                r["capped"] = [None if c == PART_READ else c is True for c in capped]
        cwd = self.facts.cwd
        u["cwd"] = [None if c == cwd else c for c in u["cwd"]]  # a tool use's cwd only where it differs
        cleared = self.results.cleared
        r["cleared_seq"] = [cleared.get(tid) for tid in r["tool_use_id"]] if cleared else [None] * len(r["tool_use_id"])
        denied = self.facts.denied_ids
        if denied:
            r["denied"] = [
                d or (err and tid in denied)
                for d, err, tid in zip(r["denied"], r["is_error"], r["tool_use_id"], strict=True)
            ]
        tables = {
            "calls": {k: c[k] for k in CALL_SCHEMA},
            "tool_uses": {k: u[k] for k in TOOL_USE_SCHEMA},
            "tool_results": {k: r[k] for k in TOOL_RESULT_SCHEMA},
            "events": e,
        }
        times = sorted([v for v in map(ms.__getitem__, stamps) if v is not None])
        facts, diag = self.facts, self.diag
        return Trace(
            name=self.name,
            path=self.path,
            format=fmt,
            session_id=facts.session_id,
            tables=tables,
            skipped_lines=diag.skipped,
            oversized_lines=diag.oversized,
            truncated_last_line=diag.truncated_last,
            line_notes=diag.notes,
            skipped_by_file=dict(diag.notes_per_file),
            warnings=self.warnings(ms),
            surface=facts.surface if fmt == FORMAT_STREAM_JSON else None,  # (an init in a transcript is stray)
            result=facts.result,
            result_count=self.evidence.result_count,
            cli_version=facts.cli_version,
            cwd=facts.cwd,
            files=facts.files,
            agents=facts.agents,
            synthetic_errors=facts.synthetic,
            timestamps_ms=times,
        )
