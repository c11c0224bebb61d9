"""The normalised-frame contract between reading and metrics.

The reader (`reading/`) produces, per trace, four Polars frames with exactly these columns and dtypes (named here;
`polars_schema` turns a table's names into a `polars.Schema`); every metric reads only these. Units are
in the column names' suffixes (`_tokens`, `_chars`, `_bytes`, `_ms`).

Threads: `thread_kind` is one of `THREAD_MAIN` (the conversation whose prompt is the context window we
report), `THREAD_SUBAGENT` (a Task/Agent subagent, a warmup or `/btw` sidechain: its own window) and
`THREAD_COMPACTION` (the compaction summariser's own calls, `agent-acompact-*` files). `thread` names the
thread: `"main"`, or the subagent's id (`agentId`, the agent file's id, or in stream-json the
`parent_tool_use_id` of the Task/Agent call that started it).

`seq` is the record's position in the trace's reading order (main file first, then each subagent file),
so sorting by `seq` gives file order with stable ties; timestamps are never used to reorder
(many lines share one timestamp, and some are written out of order).

This module only names: it imports nothing of the package and never imports Polars at import time. A
column added here is filled by every reader and bumps `READER_VERSION`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

THREAD_MAIN = "main"
THREAD_SUBAGENT = "subagent"
THREAD_COMPACTION = "compaction"

#: Tool names whose call starts a subagent (Claude Code's Task, renamed Agent in CLI 2.1.x).
AGENT_TOOLS = frozenset({"Task", "Agent"})

# Tool names by what the tool does, for every agent read here (`tool_uses.name` as each agent writes it;
# the agents' names do not collide). Code above `reading/` asks these sets, never an agent's name.
#: Tools that run a shell command (which may change any file).
SHELL_TOOLS = frozenset({
    "Bash",  # Claude Code
    "shell", "shell_command", "exec_command", "write_stdin", "local_shell", "container.exec", "exec",  # Codex CLI
    "run_shell_command",  # Gemini CLI
})  # fmt: skip
#: Tools that write or edit files (spec 000's "productive" Write, Edit, MultiEdit and their counterparts).
EDIT_TOOLS = frozenset({
    "Write", "Edit", "MultiEdit",  # Claude Code
    "apply_patch",  # Codex CLI
    "write_file", "replace",  # Gemini CLI
})  # fmt: skip
#: Tools that read one file by its path (spec 000's Read; its path is `tool_uses.file_path`).
READ_TOOLS = frozenset({"Read", "read_file"})  # Claude Code; Gemini CLI

FORMAT_STREAM_JSON = "stream-json"
FORMAT_TRANSCRIPT = "transcript"


@dataclass(frozen=True)
class Capabilities:
    """What a trace records, for code above `reading/` to ask instead of which format the trace came from.

    Each reader sets these on the `Trace` it builds; a figure that needs what a trace does not record is
    shown as unknown, never as zero.
    """

    #: Every line carries its moment (`ts_ms` on calls and events): a time axis, durations, a start.
    timestamps: bool
    #: A closing line carries the run's totals (tokens per model, cost, duration): the stream-json `result`.
    #: When it is missing, totals summed from the calls are a lower bound.
    run_totals: bool
    #: A run with no prompt line is one turn (a `claude -p` run states its task on the command line).
    prompt_outside_trace: bool
    #: The file's folder names its project (`~/.claude/projects/<project>/<session>.jsonl`).
    project_folder: bool
    #: The API whose usage fields the calls carry (`PROVIDER_*`); None when the format does not say. Spec 002
    #: scores cache health on Anthropic's alone: other APIs count cached tokens differently.
    provider: str | None = None


FORMAT_CODEX = "codex"
FORMAT_GEMINI = "gemini"

PROVIDER_ANTHROPIC = "anthropic"
PROVIDER_OPENAI = "openai"
PROVIDER_GOOGLE = "google"

#: Each format's capabilities, by the name a `Trace` (and its JSON record's ``format``) carries. A new
#: format adds its entry here, beside its reader.
CAPABILITIES_BY_FORMAT: dict[str, Capabilities] = {
    FORMAT_CODEX: Capabilities(
        timestamps=True, run_totals=False, prompt_outside_trace=False, project_folder=False, provider=PROVIDER_OPENAI
    ),
    FORMAT_GEMINI: Capabilities(
        timestamps=True, run_totals=False, prompt_outside_trace=False, project_folder=False, provider=PROVIDER_GOOGLE
    ),
    FORMAT_STREAM_JSON: Capabilities(
        timestamps=False, run_totals=True, prompt_outside_trace=True, project_folder=False, provider=PROVIDER_ANTHROPIC
    ),
    FORMAT_TRANSCRIPT: Capabilities(
        timestamps=True, run_totals=False, prompt_outside_trace=False, project_folder=True, provider=PROVIDER_ANTHROPIC
    ),
}

#: The version of what the reader extracts. The result store (`store.py`) keeps each file's `Trace` under
#: it and never serves an entry of another version. Any change to what the reader extracts (a value, a
#: column, a skipped-line rule, a warning's text) must bump it; a change to the tables' columns or to the
#: `Trace` fields also changes the store's layout fingerprint, but a changed value only this number catches.
READER_VERSION = 13  # 8: server_tool_use blocks are tool uses (`tool_uses.server_side`); compaction passes inside a
#    response, async agents' notifications, placeholder lines; 9: an attachment with no `content` counts the
#    characters of its `addedLines` / `addedBlocks` (deferred tools, agent listing, MCP instructions); 10: the
#    repeated-records warning names no tracker case; 11: an `instructions` attachment counts its memory files'
#    text (`files[].content`), a `nested_memory` one the text inside its `content` object; 12: a Codex
#    rollout's guidance files, the skills listing appended to them and its `<environment_context>` are
#    `attachment` events (`instructions`, `skill_listing`, `environment_context`), not `meta`; 13: its developer
#    messages are `developer_instructions` attachments (harness), and a compaction's `replacement_history`
#    messages are events again after the boundary (its prompts as `meta`)

#: One row per model call (one API response), deduplicated: `claude.calls` states the identity rule.
CALL_SCHEMA: dict[str, str] = {
    "seq": "Int64",  # reading-order position of the call's first line
    "line": "Int64",  # 1-based line of the call's first line in `file`
    "file": "String",  # file the call's first line is in
    "message_id": "String",  # message.id (null when the line has none)
    "request_id": "String",  # requestId of the kept line (transcripts; null in stream-json)
    "thread": "String",
    "thread_kind": "String",
    "model": "String",  # message.model as written (not normalised)
    "input_tokens": "Int64",  # usage.input_tokens: the uncached tail of the prompt
    "cache_write_tokens": "Int64",  # usage.cache_creation_input_tokens
    "cache_read_tokens": "Int64",  # usage.cache_read_input_tokens
    "output_tokens": "Int64",  # usage.output_tokens of the kept line (the highest)
    "prompt_tokens": "Int64",  # input + cache write + cache read: the call's whole prompt
    "cache_write_5m_tokens": "Int64",  # usage.cache_creation.ephemeral_5m_input_tokens (0 when absent)
    "cache_write_1h_tokens": "Int64",  # usage.cache_creation.ephemeral_1h_input_tokens
    "cache_split_known": "Boolean",  # False when usage.cache_creation is absent
    "web_search_requests": "Int64",  # usage.server_tool_use.web_search_requests
    "stop_reason": "String",  # message.stop_reason of the kept line (null: output is a lower bound)
    "speed": "String",  # usage.speed ("fast" in fast mode), null when absent
    "ts_ms": "Int64",  # Unix epoch ms of the call's first line (null in stream-json)
    "end_ts_ms": "Int64",  # Unix epoch ms of the call's last line
    "prev_ts_ms": "Int64",  # Unix epoch ms of the last timestamped line before the call, same file
    "n_lines": "Int64",  # how many lines the call was written as
    # What the call wrote, from its lines' message.content blocks (one block per line as Claude Code writes
    # them); a call replayed in a sidechain (a `/btw` aside) counts its main-thread lines only.
    "has_thinking": "Boolean",  # a `thinking` or `redacted_thinking` block
    "thinking_chars": "Int64",  # characters of its thinking blocks' `thinking` text (0 when redacted)
    "text_chars": "Int64",  # characters of its `text` blocks (prose)
    "tool_input_chars": "Int64",  # characters of its tool uses' inputs (`tool_uses.input_chars`, summed)
    # the path-like words of its `text` blocks, which `context files` reads as references (`text.path_words`:
    # runs of path characters holding a / or a .), space-separated in order; null when none
    "path_words": "String",
    # Server-side compaction passes inside this response (`usage.iterations[]` entries of type "compaction",
    # from its kept line): the API summarised the history, then answered over the summary. The top-level usage
    # (the columns above) is the answer's alone; these are the passes' usage, summed: tokens billed that are
    # in no prompt of the window. 0 when there is none (null: a reader that cannot tell).
    "compaction_input_tokens": "Int64",
    "compaction_cache_write_tokens": "Int64",
    "compaction_cache_write_1h_tokens": "Int64",  # of which its cache_creation split states as 1-hour writes
    "compaction_cache_read_tokens": "Int64",
    "compaction_output_tokens": "Int64",  # the summaries written
    "compaction_prompt_tokens": "Int64",  # the largest pass's prompt (input + cache write + cache read)
}

#: One row per tool_use block (and server_tool_use block), deduplicated by tool_use.id, in reading order.
TOOL_USE_SCHEMA: dict[str, str] = {
    "seq": "Int64",
    "line": "Int64",
    "tool_use_id": "String",
    "message_id": "String",  # the call that asked for it
    "thread": "String",
    "thread_kind": "String",
    "name": "String",  # tool name as written (full MCP name, e.g. mcp__server__tool)
    "input_json": "String",  # the input as canonical JSON: sorted keys, no spaces
    "file_path": "String",  # input.file_path when it is a non-empty string (Read, Edit, Write, ...), else null
    "ts_ms": "Int64",
    "agent_type": "String",  # input.subagent_type when a string (Task/Agent calls), else null
    "agent_description": "String",  # input.description when a string (Task/Agent calls), else null
    "agent_prompt_chars": "Int64",  # characters of input.prompt when a string (Task/Agent calls), else null
    "read_path": "String",  # Bash: the one path input.command prints with cat / sed -n / head / tail, else null
    "input_chars": "Int64",  # characters of input_json (the input as canonical JSON)
    # the `cwd` of the line carrying the tool use when it differs from the trace's (`Trace.cwd`,
    # the first line's), else null: the directory its relative paths resolve against
    "cwd": "String",
    # True for a `server_tool_use` block (a tool the API ran inside the call: web_search, web_fetch,
    # code_execution; its result comes back in the same response, never as a tool_result), False for a
    # `tool_use` block (a tool the harness ran); null when the format does not say
    "server_side": "Boolean",
}

#: One row per tool_result block, deduplicated by tool_use_id, in reading order.
TOOL_RESULT_SCHEMA: dict[str, str] = {
    "seq": "Int64",
    "line": "Int64",
    "tool_use_id": "String",
    "thread": "String",
    "thread_kind": "String",
    "is_error": "Boolean",  # tool_result.is_error is true (absent means success)
    "denied": "Boolean",  # a person's or a rule's refusal, not a failure of the tool
    "result_chars": "Int64",  # characters of text: a string's length or the sum of text blocks
    "result_images": "Int64",  # image blocks, never counted as characters
    "result_image_bytes": "Int64",  # decoded size of those images (from the base64 length)
    "unknown_blocks": "Int64",  # content blocks of another type, skipped
    "persisted": "Boolean",  # a <persisted-output> preview: the full output went to a file
    "persisted_bytes": "Int64",  # ≈ the full output's size as the preview states it (null if unknown)
    "content_hash": "Int64",  # hash of the result's text, to tell identical results apart (within one trace)
    "agent_id": "String",  # Task/Agent results: toolUseResult.agentId (the subagent's file id)
    "agent_duration_ms": "Int64",  # Task/Agent results: toolUseResult.totalDurationMs
    "ts_ms": "Int64",
    "cleared_seq": "Int64",  # seq of the microcompact_boundary whose compactedToolIds cleared it, else null
    "result_image_pixels": "Int64",  # width × height summed over the images whose header states it (PNG, GIF,
    # WebP, JPEG: `image.source.data`); 0 without images
    "result_images_sized": "Int64",  # how many of `result_images` that is
    "error_head": "String",  # is_error results: the first 300 characters of the text (error classes), else null
    # the tool cut its result at a cap (toolUseResult.truncated or .truncatedByTokenCap is true, a Grep at its
    # appliedLimit, a Read without `limit` that returned part of the file: `content.cap_of`)
    "capped": "Boolean",
    "unchanged": "Boolean",  # toolUseResult.type is "file_unchanged" (a Read answered "unchanged since read")
    # Task/Agent results: toolUseResult.isAsync is true or its status is "async_launched": a launch receipt,
    # the agent runs on and its report comes in a task notification (`events.tool_use_id`)
    "agent_async": "Boolean",
}

#: One row per event that is not a call or a tool block: compactions, prompts, errors, durations.
EVENT_SCHEMA: dict[str, str] = {
    "seq": "Int64",
    "line": "Int64",
    "thread": "String",
    "thread_kind": "String",
    "kind": "String",  # one of EVENT_KINDS
    "trigger": "String",  # compact_boundary: "auto" or "manual" (a pass inside a response: "auto")
    # compact_boundary: context size the harness states before it (a pass inside a response: the pass's prompt)
    "pre_tokens": "Int64",
    "post_tokens": "Int64",  # compact_boundary: context size after it (newer CLIs only)
    "duration_ms": "Int64",  # turn_duration: durationMs; compact_boundary: durationMs when written
    # prompt kinds: characters of the text; attachment: of the text it carries (`claude.content.attachment_text`)
    "text_chars": "Int64",
    "ts_ms": "Int64",
    "tokens_saved": "Int64",  # microcompact_boundary: microcompactMetadata.tokensSaved (the harness's figure)
    "cleared_results": "Int64",  # microcompact_boundary: how many tool results compactedToolIds names
    "images": "Int64",  # user-line kinds (prompt, meta, command, ...): image blocks in message.content (pasted)
    # attachment: attachment.type (hook_success, skill_listing, todo_reminder, ...); Codex: `codex.injected`
    "attachment_type": "String",
    "attachment_path": "String",  # attachment: attachment.filename when a string (edited_text_file: an IDE edit)
    "command_name": "String",  # command: the slash command in its <command-name> tag as written ("/clear"), else null
    "tool_use_id": "String",  # task_notification: the Task/Agent call its <tool-use-id> tag names, else null
    "report_chars": "Int64",  # task_notification: characters of its <result> text (the agent's report), else null
}


def polars_schema(columns: dict[str, str]) -> pl.Schema:
    """The Polars schema of one of the tables above (`CALL_SCHEMA`, ...): its column names and dtypes.

    The tables name their dtypes (`"Int64"`, `"String"`, `"Boolean"`) so that reading a trace never
    imports Polars; frames are built with this schema when they are asked for. An unknown dtype name raises
    AttributeError.

    >>> polars_schema({"seq": "Int64", "model": "String"})
    Schema([('seq', Int64), ('model', String)])
    """
    import polars as pl

    return pl.Schema({name: getattr(pl, dtype) for name, dtype in columns.items()})


EVENT_KINDS = (
    "compact_boundary",  # system/compact_boundary, or a compaction pass inside a response (`usage.iterations`)
    "microcompact_boundary",  # system/microcompact_boundary: old tool results cleared, no full compaction
    "task_notification",  # a background task's <task-notification> user line: not a turn
    "prompt",  # a prompt the person typed (user line that is not a tool result nor injected)
    "meta",  # user line with isMeta (skill bodies, command expansions, caveats)
    "command",  # slash-command input or local-command output written as a user line
    "interrupt",  # "[Request interrupted by user...]"
    "compact_summary",  # user line with isCompactSummary: the summary after a compaction
    "subagent_prompt",  # stream-json: the prompt a subagent starts with (parent_tool_use_id set)
    "api_error",  # system/api_error (a retried API attempt)
    "synthetic",  # assistant line with model <synthetic> or isApiErrorMessage: not a call
    "turn_duration",  # system/turn_duration
    "attachment",  # an `attachment` line: context the harness added (hook output, reminders, listings)
)
