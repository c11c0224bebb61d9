"""The other commands over the directory corpus: `context usage` and `context health` (when present).

Target: each adds at most 15 % to `context trace`'s time (ratio in the summary). A command not yet in
the CLI is skipped.
"""

from __future__ import annotations

import pytest
from conftest import run_cli


def _has_command(name: str) -> bool:
    from contexttrace.cli import context_app

    return any((c.name or (c.callback.__name__ if c.callback else "")) == name for c in context_app.registered_commands)


@pytest.mark.parametrize("command", ["usage", "health"])
def test_command(timed, corpora, command):
    if not _has_command(command):
        pytest.skip(f"`context {command}` is not in the CLI yet")
    corpus = corpora["directory"]
    out = timed(f"e2e-{command}-directory", run_cli, ["context", command, *corpus.paths, "--json"])
    assert out.strip().startswith("[")
