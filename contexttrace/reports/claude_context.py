"""The rows of `context sources` in Claude Code's `/context` words and order (`context sources --view claude`).

Claude Code's `/context` prints a header ``model · 51k/200k tokens (26%)`` and then the categories System
prompt, System tools (and deferred), MCP tools, Custom agents, Memory files, Skills, Messages, Free space
and Autocompact buffer. A recorded trace gives the total exactly, the free space against a known window,
the prefix as one lump (the system prompt and the tool schemas are not written) and the listings only
where the harness wrote their text (`reports.sources.ATTACHMENT_ROWS`). `claude_categories` maps the rows
onto those categories; pure, nothing here prints.

The autocompact buffer is not in any trace: it is the CLI's constant (`autocompact_buffer`), as `/context`
shows it — ≈45,000 tokens (22.5 % of 200k) in CLI 2.0.x (anthropics/claude-code issues #9286, #10266),
≈33,000 from 2.1 (issue #23409: 20,000 reserved for the output plus the 13,000 margin of the autocompact
threshold, issue #12004).
"""

from __future__ import annotations

import re
from typing import Any

#: `/context` categories in its order, each with the `reports.sources.ROWS` it sums (None: the rest, the
#: messages). The first is one lump: a trace does not write the system prompt nor the tool schemas.
CATEGORIES: tuple[tuple[str, tuple[str, ...] | None], ...] = (
    ("System prompt + System tools", ("prefix",)),
    ("System tools (deferred)", ("deferred_tools",)),
    ("MCP tools (instructions)", ("mcp_instructions",)),
    ("Custom agents", ("custom_agents",)),
    ("Memory files", ("memory",)),
    ("Skills", ("skills",)),
    ("Messages", None),
)
#: `/context`'s autocompact buffer in tokens, by the CLI's (major, minor) from which it holds, newest first (≈).
AUTOCOMPACT_BUFFER_TOKENS: tuple[tuple[tuple[int, int], int], ...] = (((2, 1), 33_000), ((0, 0), 45_000))
#: The buffer assumed when the trace names no CLI version: the newest one's.
UNKNOWN_VERSION_BUFFER_TOKENS = 33_000
#: Trace formats written by Claude Code (the others have no `/context` and no autocompact buffer).
CLAUDE_FORMATS = frozenset({"transcript", "stream-json"})

_VERSION = re.compile(r"^(\d+)\.(\d+)")


def autocompact_buffer(cli_version: str | None) -> int:
    """The tokens `/context` shows as its autocompact buffer for a Claude Code version (≈; module docstring).

    >>> autocompact_buffer("2.0.42"), autocompact_buffer("2.1.114"), autocompact_buffer(None)
    (45000, 33000, 33000)
    """
    m = _VERSION.match(cli_version or "")
    if m is None:
        return UNKNOWN_VERSION_BUFFER_TOKENS
    version = (int(m.group(1)), int(m.group(2)))
    return next(tokens for since, tokens in AUTOCOMPACT_BUFFER_TOKENS if version >= since)


def claude_categories(
    rows: dict[str, int],
    size: int,
    window: tuple[int, str],
    fmt: str,
    cli_version: str | None,
    model: str | None,
) -> dict[str, Any]:
    """One call's rows as `/context`'s categories, with the free space and the autocompact buffer.

    Parameters
    ----------
    rows
        Row key (`reports.sources.ROWS`) → tokens at the call; they sum to `size`.
    size
        The call's exact prompt tokens.
    window
        (tokens, source) of the effective window (`analysis.window.window_choice`).
    fmt
        The trace's format: the buffer is Claude Code's, so only `CLAUDE_FORMATS` have one.
    cli_version, model
        As the trace writes them (None when it does not).

    Returns
    -------
    dict
        `model`, `cli_version`, `window_tokens`, `window_source`, `context_tokens` (= `size`, exact),
        `autocompact_buffer_tokens` (≈ what is left of the buffer: the CLI's constant, or window − size
        when the context is already inside it, at least 0; None for another agent's trace),
        `autocompact_buffer_constant_tokens` (≈ the CLI's constant, `autocompact_buffer`; None likewise),
        `free_tokens` (window − size − buffer, at least 0), and `categories`: one dict per `CATEGORIES`
        entry then ``Free space`` and ``Autocompact buffer`` (the latter only with a buffer): `category`,
        `tokens`, `share` (of the window, 0–1), `estimated` (every category; Free space only when a
        buffer is taken off it; Messages holds `other`, named in `other_tokens`).
    """
    claimed: set[str] = set()
    sizes: list[tuple[str, int]] = []
    for name, keys in CATEGORIES:
        if keys is not None:
            claimed.update(keys)
            sizes.append((name, sum(rows.get(k, 0) for k in keys)))
        else:
            sizes.append((name, sum(v for k, v in rows.items() if k not in claimed)))
    tokens_w, source = window
    constant = autocompact_buffer(cli_version) if fmt in CLAUDE_FORMATS else None
    # A context already past the compaction point (window − constant) is inside the buffer: the buffer shows
    # what is left of it, so the categories add to the window at most and never to more.
    buffer = None if constant is None else min(constant, max(0, tokens_w - size))
    free = max(0, tokens_w - size - (buffer or 0))
    sizes.append(("Free space", free))
    if buffer is not None:
        sizes.append(("Autocompact buffer", buffer))
    cats = [
        {"category": name, "tokens": tokens, "share": tokens / tokens_w if tokens_w else None,
         "estimated": name != "Free space" or buffer is not None}
        for name, tokens in sizes
    ]  # fmt: skip
    return {
        "model": model,
        "cli_version": cli_version,
        "window_tokens": tokens_w,
        "window_source": source,
        "context_tokens": size,
        "autocompact_buffer_tokens": buffer,
        "autocompact_buffer_constant_tokens": constant,
        "free_tokens": free,
        "other_tokens": rows.get("other", 0),
        "categories": cats,
    }
