"""Every key `context trace --json` emits is snake_case and documented (issue 10: one naming style, no key
a user must guess). Keys are collected from the output over every bundled sample and case file."""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from contexttrace import analyze
from contexttrace.render.trace import render_json

from .conftest import CASES, ROOT, SAMPLES

DOCS = (ROOT / "docs" / "definitions.md", ROOT / "docs" / "health-weather.md")
#: Objects whose keys are data (tool names, MCP server names), not names of figures.
DATA_KEYED = {"by_tool", "by_mcp_server"}
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _inputs() -> list[str]:
    paths = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())
    return paths + sorted(str(p) for p in CASES.rglob("*.jsonl"))


def _keys(value: object, path: str, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            out.setdefault(key, f"{path}.{key}")
            if key not in DATA_KEYED:
                _keys(item, f"{path}.{key}", out)
    elif isinstance(value, list):
        for item in value:
            _keys(item, f"{path}[]", out)


def emitted_keys() -> dict[str, str]:
    """key -> the first path it was seen at, over `--json --calls` of every sample and case."""
    run = analyze(_inputs())
    out: dict[str, str] = {}
    for obj in orjson.loads(render_json(run, with_calls=True)):
        _keys(obj, "", out)
    return out


def test_every_trace_json_key_is_snake_case_and_documented():
    keys = emitted_keys()
    assert len(keys) > 60  # the walk saw the nested objects (health, weather, events), not just the top
    docs = "".join(Path(p).read_text() for p in DOCS)
    not_snake = sorted(path for key, path in keys.items() if not SNAKE.match(key))
    undocumented = sorted(path for key, path in keys.items() if f"`{key}`" not in docs)
    assert not_snake == []
    assert undocumented == []
