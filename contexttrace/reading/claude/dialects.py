"""The one place that knows stream-json from session transcripts.

Both formats write the same message shapes (an `assistant` line per content block, `user` lines with tool
results, `system` lines), so the builder handles them alike; what differs is kept here, as data where it
can be:

* **Evidence** (`Evidence`): which keys and line types each format writes, counted per line, and the
  decision on their weight (`dialect_of`: a stray line of the other format decides nothing); another agent's
  trace named (Codex CLI, Gemini CLI).
* **Threads** (`Threads.thread_of`): stream-json names a subagent's thread by `parent_tool_use_id`;
  transcripts mark sidechain lines with `isSidechain` and `agentId`, or (CLI 1.0.x) only by the chain of
  `parentUuid`s from a sidechain root.
* **Key spellings**: compaction metadata (`compact_metadata.pre_tokens` / `compactMetadata.preTokens`, ...)
  and the tool result's copy (`tool_use_result` / `toolUseResult`).
* **Runs**: a stream-json file holds one run per session: an init with a new `session_id` starts one, an
  init with the run's own continues it (`starts_run`).
* **Lines with no figure** (`SKIP_TYPES`), recognised by their bytes in `lines`, counted here as evidence.

It makes no rows (the builder does) and reads no file; the only errors it raises are `dialect_of`'s, for a
file that is no Claude Code trace.
"""

from __future__ import annotations

from typing import Any, cast

from msgspec import UNSET

from contexttrace.errors import EmptyTraceError, TraceFormatError, TraceReadError
from contexttrace.reading.claude.records import Line, MessageLine, raw_value
from contexttrace.reading.contract import FORMAT_STREAM_JSON, FORMAT_TRANSCRIPT, THREAD_MAIN, THREAD_SUBAGENT
from contexttrace.reading.model import SourceFile

#: Top-level line types that hold no figure: skipped undecoded, by their bytes (`lines.Lines`).
#: `progress` lines embed subagent messages whose usage the subagent files hold too (counted there once).
SKIP_TYPES = frozenset({b"progress", b"file-history-snapshot", b"queue-operation", b"last-prompt", b"stream_event"})
#: Of those, the types stream-json writes (the rest are transcript-only).
_STREAM_SKIP_TYPES = frozenset({b"stream_event"})
#: Line types only transcripts write.
TRANSCRIPT_ONLY_TYPES = frozenset(
    {"summary", "file-history-snapshot", "progress", "queue-operation", "attachment", "last-prompt", "permission-mode"}
)
#: Claude Code's own record types (a file with none of them and another agent's types is that agent's).
CLAUDE_TYPES = frozenset({"assistant", "user", "system"})
#: Top-level line types of other agents' traces: the agent they name.
FOREIGN_TYPES = {
    "session_meta": "Codex CLI rollout",
    "response_item": "Codex CLI rollout",
    "event_msg": "Codex CLI rollout",
    "turn_context": "Codex CLI rollout",
    "init": "Gemini CLI stream-json",
    "message": "Gemini CLI stream-json",
    "tool_use": "Gemini CLI stream-json",
    "tool_result": "Gemini CLI stream-json",
}


def foreign_reason(agent: str) -> str:
    """Why a file of another agent's lines that no other reader recognised is not read: Gemini CLI's
    stream-json is not read (it carries only the session's token sums, no model call's prompt); a Codex CLI
    rollout reaches here only when its first lines are no rollout's (the Codex reader recognises it by them).

    >>> foreign_reason("Codex CLI rollout")
    "Codex CLI rollout lines, but none of the first lines is a rollout's (damaged start?): not read"
    """
    if agent.startswith("Codex"):
        return f"{agent} lines, but none of the first lines is a rollout's (damaged start?): not read"
    return (
        f"a {agent} trace, not Claude Code's: not read (it records only session token sums, no model call's "
        "prompt; read its saved session under ~/.gemini/tmp)"
    )


#: Line types whose timestamp dates the trace (durations) and the call after it (`prev_ts_ms`).
TIMED_TYPES = frozenset({"user", "assistant", "system"})


class Evidence:
    """What the lines read so far say about the format: counted per line, merged across a split read.

    The format is decided on the weight of evidence: lines with stream-json keys (`session_id`,
    `parent_tool_use_id`, init and result lines, `stream_event` lines) against lines with transcript keys
    (`sessionId`, transcript-only line types). A line may carry both (it counts for both).
    """

    __slots__ = (
        "claude_lines",
        "foreign",
        "has_init",
        "records",
        "result_count",
        "seen_stream",
        "seen_transcript",
        "stream_lines",
        "transcript_lines",
    )

    #: Fields a tail's merge leaves as the head's: a part that shows stream-json is never merged
    #: (`split.read_tail` gives None), so a merged tail's are False / 0.
    NOT_MERGED = frozenset({"seen_stream", "has_init", "result_count"})

    def __init__(self) -> None:
        self.records = 0  # decoded records and lines skipped by their type (not bad lines)
        self.stream_lines = 0
        self.transcript_lines = 0
        self.claude_lines = 0  # assistant / user / system lines
        self.foreign: dict[str, int] = {}  # another agent's line types seen (its name -> lines)
        self.seen_stream = False
        self.seen_transcript = False
        self.has_init = False  # a system/init line (stream-json)
        self.result_count = 0  # result lines (stream-json)

    def count(self, rec: MessageLine, kind: str | None, main_file: bool) -> str | None:
        """Count one decoded record's evidence; return the session id it names, if any (a transcript's
        `sessionId` in the main file, else stream-json's `session_id`). `builder.Builder.add` counts the
        common message line itself, by these rules."""
        self.records += 1
        sid = None
        if rec.sessionId is not UNSET:
            self.seen_transcript = True
            self.transcript_lines += 1
            if main_file and type(rec.sessionId) is str:
                sid = rec.sessionId
        stream = rec.session_id is not UNSET or rec.parent_tool_use_id is not UNSET
        if stream and sid is None and type(rec.session_id) is str:
            sid = rec.session_id
        if kind in CLAUDE_TYPES:
            self.claude_lines += 1
            if kind == "system" and cast(Line, rec).subtype == "init":  # (a system line is a `Line`)
                stream = True
                self.has_init = True
        elif kind in FOREIGN_TYPES:
            agent = FOREIGN_TYPES[kind]
            self.foreign[agent] = self.foreign.get(agent, 0) + 1
        elif kind == "result":
            stream = True
            self.result_count += 1
        if stream:  # a line counts once, whatever number of stream-json keys it carries
            self.seen_stream = True
            self.stream_lines += 1
        elif kind in TRANSCRIPT_ONLY_TYPES:
            self.seen_transcript = True
            self.transcript_lines += 1
        return sid

    def count_skipped(self, types: list[bytes]) -> None:
        """Count lines skipped undecoded (their top-level types, `SKIP_TYPES`) as records."""
        self.records += len(types)
        streamed = sum(1 for t in types if t in _STREAM_SKIP_TYPES)
        if streamed:
            self.seen_stream = True
            self.stream_lines += streamed
        if len(types) > streamed:
            self.seen_transcript = True
            self.transcript_lines += len(types) - streamed

    def shows_stream(self) -> bool:
        """Whether any line showed stream-json (such a file is never read in two parts)."""
        return self.seen_stream or self.has_init or bool(self.result_count)

    def stray_warning(self) -> str | None:
        """The warning for a file whose lines carry both formats' keys (the fewer are stray lines), or None."""
        if not (self.stream_lines and self.transcript_lines):
            return None
        few, many = sorted(
            (("stream-json", self.stream_lines), ("session transcript", self.transcript_lines)), key=lambda x: x[1]
        )
        return (
            f"{few[1]} line(s) carry {few[0]} keys in a file read as a {many[0]} ({many[1]} line(s)): "
            "stray lines, read as the file's format"
        )

    def merge(self, tail: Evidence) -> None:
        """Add a transcript tail's evidence (`NOT_MERGED`: see there)."""
        self.records += tail.records
        self.stream_lines += tail.stream_lines
        self.transcript_lines += tail.transcript_lines
        self.claude_lines += tail.claude_lines
        for agent, n in tail.foreign.items():
            self.foreign[agent] = self.foreign.get(agent, 0) + n
        self.seen_transcript = self.seen_transcript or tail.seen_transcript


def dialect_of(ev: Evidence, has_rows: bool, skipped: int, nul_seen: bool, path: str) -> str:
    """The format of a file (or run) on the weight of evidence: a session transcript when its lines with
    transcript keys outnumber those with stream-json keys, stream-json when those do or an init / result
    line was seen (one stray `parent_tool_use_id` must not make a transcript stream-json and lose
    its subagent files). `has_rows`: any call, tool result or event row was made.

    Raises
    ------
    TraceReadError
        Nothing decoded and the file held NUL bytes (binary).
    TraceFormatError
        Another agent's trace (Codex CLI, Gemini CLI), or no record of either format.
    EmptyTraceError
        No JSON record at all.
    """
    if ev.foreign and not ev.claude_lines:
        agent = max(ev.foreign, key=lambda name: ev.foreign[name])
        raise TraceFormatError(path, foreign_reason(agent))
    if ev.seen_stream and ev.stream_lines >= ev.transcript_lines:
        return FORMAT_STREAM_JSON
    if ev.seen_transcript or has_rows:
        return FORMAT_TRANSCRIPT
    if ev.seen_stream:
        return FORMAT_STREAM_JSON
    if ev.records == 0 and nul_seen:
        raise TraceReadError(path, "binary file (NUL bytes), not a JSONL trace")
    if ev.records == 0 and skipped == 0:
        raise EmptyTraceError(path, "empty file: no JSON record")
    raise TraceFormatError(path, "no record of either format (stream-json or session transcript)")


def starts_run(rec: MessageLine, kind: str | None, run_started: bool, run: Evidence, session_id: str | None) -> bool:
    """Whether a record starts a new stream-json run: a `system/init` line after the current run's init or
    calls (`run_started`), when the run so far reads as stream-json on the weight of its evidence (`run`: an
    init pasted into a transcript is a stray line, not a run) and the init names another session than the
    run's `session_id` (with `--input-format stream-json`, Claude Code writes an init with the same
    `session_id` for each message it reads on standard input: one process, one run). An init that names no
    session starts a run."""
    if not (run_started and kind == "system" and cast(Line, rec).subtype == "init"):  # (a system line: a `Line`)
        return False
    if run.transcript_lines > run.stream_lines:
        return False
    sid = rec.session_id
    return not (type(sid) is str and sid == session_id)


class Threads:
    """The thread of each line: the main thread, or a subagent's (`contract.THREAD_*`).

    Inline sidechains of CLI 1.0.x carry no `agentId`: each Task's chain starts at a sidechain line whose
    parent is not a sidechain line, and that first line's uuid names the thread (`sidechain-<uuid>`).
    """

    __slots__ = ("chain_roots", "chains", "chains_ambiguous")
    #: a tail whose chains are ambiguous is never merged (`split.read_head` reads the whole file instead)
    NOT_MERGED = frozenset({"chains_ambiguous"})

    def __init__(self) -> None:
        self.chains: dict[str, str] = {}  # inline sidechain line uuid -> its thread
        # thread -> the parent uuid of the line that started it here, for a merge across a cut: a thread
        # started in a tail from a parent line the tail did not see keeps the head's name (`merge`)
        self.chain_roots: dict[str, str] = {}
        self.chains_ambiguous = False  # a thread name with two roots: a merge could not rename it

    def thread_of(self, rec: MessageLine, src: SourceFile) -> tuple[str, str]:
        """(thread, thread kind) of a record read from `src`.

        A subagent file's lines are its agent's thread; in the main file, a stream-json line's
        `parent_tool_use_id`, a sidechain line's `agentId`, or (no `agentId`) its chain's first uuid names
        the subagent's thread; every other line is the main thread. Thread kinds: `contract.THREAD_*`.
        """
        if src.thread_kind != THREAD_MAIN:
            return src.agent_id or src.thread_kind, src.thread_kind
        parent = rec.parent_tool_use_id
        if isinstance(parent, str) and parent:
            return parent, THREAD_SUBAGENT
        if rec.isSidechain is True:
            agent = rec.agentId
            if isinstance(agent, str) and agent:
                return agent, THREAD_SUBAGENT
            uuid, parent_uuid = rec.uuid, rec.parentUuid
            thread = self.chains.get(parent_uuid) if isinstance(parent_uuid, str) else None
            if thread is None:
                thread = f"sidechain-{uuid}" if isinstance(uuid, str) else "sidechain"
                roots = self.chain_roots
                if isinstance(parent_uuid, str) and (
                    not isinstance(uuid, str) or roots.setdefault(thread, parent_uuid) != parent_uuid
                ):
                    self.chains_ambiguous = True
            if isinstance(uuid, str):
                self.chains[uuid] = thread
            return thread, THREAD_SUBAGENT
        return THREAD_MAIN, THREAD_MAIN

    def merge(self, tail: Threads) -> dict[str, str]:
        """Take a tail's chains; return the renames of its threads whose chain began in this part (a
        tail that is `chains_ambiguous` is never merged: `split.read_head`)."""
        rename = {t: self.chains[p] for t, p in tail.chain_roots.items() if p in self.chains}
        for uuid, thread in tail.chains.items():
            self.chains[uuid] = rename.get(thread, thread)
        for thread, parent in tail.chain_roots.items():
            if thread not in rename:
                self.chain_roots.setdefault(thread, parent)
        return rename


# -- key spellings ---------------------------------------------------------------------------------------

#: Where a `system/compact_boundary` line keeps its metadata (stream-json, transcripts), and the spellings
#: of each figure in it, the first present wins.
COMPACT_KEYS = {
    "trigger": ("trigger",),
    "pre_tokens": ("pre_tokens", "preTokens"),
    "post_tokens": ("post_tokens", "postTokens"),
    "duration_ms": ("duration_ms", "durationMs"),
}
#: The same for `system/microcompact_boundary` (transcripts write camel case).
MICROCOMPACT_KEYS = {
    "trigger": ("trigger",),
    "compacted_tool_ids": ("compactedToolIds", "compacted_tool_ids"),
    "pre_tokens": ("preTokens", "pre_tokens"),
    "tokens_saved": ("tokensSaved", "tokens_saved"),
}


def compact_metadata(rec: Line) -> dict[str, Any]:
    """A compaction boundary's metadata object (`compact_metadata`, else `compactMetadata`), or {}."""
    meta = rec.compact_metadata
    if not isinstance(meta, dict):
        meta = rec.compactMetadata
    return meta if isinstance(meta, dict) else {}


def microcompact_metadata(rec: Line) -> dict[str, Any]:
    """A microcompaction boundary's metadata (`microcompactMetadata`, else `microcompact_metadata`), or {}."""
    meta = rec.microcompactMetadata
    if not isinstance(meta, dict):
        meta = rec.microcompact_metadata
    return meta if isinstance(meta, dict) else {}


def spelled(meta: dict[str, Any], names: tuple[str, ...]) -> Any:
    """The value of the first of `names` present in `meta` (even when null), else None."""
    for name in names:
        if name in meta:
            return meta[name]
    return None


def result_copy(rec: MessageLine) -> Any:
    """The structured copy of a tool result: `toolUseResult` when present (even null), else
    `tool_use_result`, else None."""
    copy = rec.toolUseResult
    if copy is UNSET:
        copy = rec.tool_use_result
    return None if copy is UNSET else copy


# -- stream-json's init and result lines ----------------------------------------------------------------


def surface(rec: Line) -> dict[str, Any]:
    """What start-up offered, from a stream-json `system/init` line (`Trace.surface`).

    Keys: `tools`, `skills`, `agents`, `slash_commands` (how many each list held, or None when not a list),
    `mcp_servers`, `plugins` (their names, or None), `model`, `permission_mode`, `api_key_source` (strings
    as written, or None).
    """

    def count(value: Any) -> int | None:
        return len(value) if isinstance(value, list) else None

    def names(value: Any) -> list[str] | None:
        if not isinstance(value, list):
            return None
        out = []
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                out.append(item["name"])
            elif isinstance(item, str):
                out.append(item)
        return out

    return {
        "tools": count(rec.tools),
        "skills": count(rec.skills),
        "agents": count(rec.agents),
        "slash_commands": count(rec.slash_commands),
        "mcp_servers": names(rec.mcp_servers),
        "plugins": names(rec.plugins),
        "model": rec.model if isinstance(rec.model, str) else None,
        "permission_mode": rec.permissionMode if isinstance(rec.permissionMode, str) else None,
        "api_key_source": rec.apiKeySource if isinstance(rec.apiKeySource, str) else None,
    }


def run_totals(rec: Line) -> dict[str, Any]:
    """The fields of a stream-json `result` line that `Trace.result` keeps, as written (numbers as orjson
    reads them: an integer past 64 bits is a float)."""
    subtype = rec.subtype
    if type(subtype) is int and not -(2**63) <= subtype < 2**64:
        subtype = float(subtype)
    return {
        "subtype": subtype,
        "is_error": raw_value(rec.is_error),
        "total_cost_usd": raw_value(rec.total_cost_usd),
        "usage": raw_value(rec.usage),
        "modelUsage": raw_value(rec.modelUsage),
        "duration_ms": raw_value(rec.duration_ms),
        "duration_api_ms": raw_value(rec.duration_api_ms),
        "num_turns": raw_value(rec.num_turns),
    }


def denied_ids(rec: Line) -> list[str]:
    """Tool use ids a stream-json `result` lists in `permission_denials`: refusals, counted as denials."""
    denials = rec.permission_denials
    if not isinstance(denials, list):
        return []
    return [d["tool_use_id"] for d in denials if isinstance(d, dict) and isinstance(d.get("tool_use_id"), str)]
