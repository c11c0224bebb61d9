"""Every `context trace` figure is wired everywhere it belongs: a `TraceReport` field is a JSON key, in the
JSON Schema, in docs/definitions.md, a `--fail-on`/`--sort` metric and a table or CSV column, or named
below with the reason it is not. Adding a field without deciding each place fails here (docs/architecture.md
"How to add a figure" lists the files)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from contexttrace import analyze
from contexttrace.render.trace import COLUMNS, EXTRA_COLUMNS
from contexttrace.render.views import CSV_COLUMNS
from contexttrace.reports.results import TraceReport
from contexttrace.select.thresholds import TRACE_METRICS

from .conftest import ROOT, SAMPLES

#: `TraceReport` fields that are no JSON key of their own, and where what they hold goes instead.
NOT_JSON = {
    "line_notes": "stderr: each skipped line named (`path:line: reason`)",
    "skipped_by_file": "stderr: skipped lines counted per file",
    "extra": "its `health` and `weather` are JSON keys",
    "facts": "its `label`, `project`, `cwd`, `start` and `start_source` are JSON keys",
    "unmeasured_calls": "stderr: a warning names the calls whose prompt size is unknown",
    "unrecorded": "stderr (under a table): a note names the figures the trace cannot give, their cells `–`",
}
#: JSON keys no `TraceReport` field holds under the same name, and where they come from.
NOT_FIELDS = {
    "schema_version": "the record's version (`reports.schemas.SCHEMA_VERSIONS`)",
    "microcompact": "len(microcompaction_events)",
    "microcompact_tokens_saved": "the sum of microcompaction_events' tokens_saved",
    "label": "facts",
    "cwd": "facts",
    "project": "facts",
    "start": "facts",
    "start_source": "facts",
    "health": "extra",
    "weather": "extra",
}
#: Keys the schema lists that a record carries only when asked (`--fail-on cost`, `--sort cost`).
OPTIONAL_KEYS = {"cost_usd", "cost_is_lower_bound"}
#: Numeric keys that are no `--fail-on` / `--sort` metric, and why.
NOT_THRESHOLDS = {
    "schema_version": "a version, not a figure",
    "window": "the window measured against (`window_source`), not a reading",
    "repeat_same_result": "a part of `repeat` (which is a metric)",
    "result_images": "a detail of `result_chars`",
    "result_image_bytes": "a detail of `result_chars`",
    "orphan_results": "a reading diagnostic",
    "persisted_results": "a detail of the tool results",
    "persisted_bytes": "≈, from the preview's stated size",
    "duration_ms": "wall time: not comparable across machines",
    "active_duration_ms": "wall time: not comparable across machines",
    "compaction_calls": "the summariser's calls, a part of `subagent_calls`'s neighbours",
    "microcompact": "a detail of `compact`",
    "microcompact_tokens_saved": "the harness's figure, not ours",
    "skipped_lines": "a reading diagnostic (exit code 1 covers a bad file)",
    "oversized_lines": "a reading diagnostic",
    "peak_without_spikes": "a detail of `peak`",
    "synthetic_errors": "a reading diagnostic",
    "inherited_calls": "a reading diagnostic",
}
#: Numeric keys that neither the table nor the CSV shows (JSON only), and why.
JSON_ONLY = {k for k in NOT_THRESHOLDS if k not in {"window"}} | {"subagent_calls"}


@pytest.fixture(scope="module")
def record() -> dict:
    """The JSON record of a real trace with every kind of figure (compaction, subagents, a window)."""
    run = analyze([str(SAMPLES / "b-spotter-compaction")], window=200_000)
    return run.reports[0].to_dict(with_calls=True)


def _numeric(record: dict) -> set[str]:
    return {k for k, v in record.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def test_every_field_is_a_json_key_or_says_where_it_goes(record):
    """A new `TraceReport` field is a JSON key, or is named in `NOT_JSON` with where its figure goes."""
    fields = {f.name for f in dataclasses.fields(TraceReport)}
    assert sorted(fields - record.keys() - NOT_JSON.keys()) == []
    assert sorted(record.keys() - fields - NOT_FIELDS.keys()) == []
    assert sorted(NOT_JSON.keys() - fields) == [], "NOT_JSON names a field that no longer exists"


def test_every_json_key_is_in_the_schema_and_back(record):
    """data/schema-trace.json lists exactly the keys a record carries (and the optional ones)."""
    schema = json.loads((ROOT / "contexttrace" / "data" / "schema-trace.json").read_text())
    props = schema["properties"]
    assert sorted(record.keys() - props.keys()) == []
    assert sorted(props.keys() - record.keys() - OPTIONAL_KEYS) == []


def test_every_json_key_is_documented(record):
    """docs/definitions.md names every key (health and weather: docs/health-weather.md)."""
    docs = (ROOT / "docs" / "definitions.md").read_text() + (ROOT / "docs" / "health-weather.md").read_text()
    assert sorted(k for k in record if f"`{k}`" not in docs) == []


def test_every_numeric_key_is_a_metric_or_says_why_not(record):
    """A numeric key is a `--fail-on` / `--sort` metric (`select.thresholds.TRACE_METRICS`) or named in
    `NOT_THRESHOLDS` with the reason; every metric reads a key a record carries."""
    numeric = _numeric(record)
    assert sorted(numeric - TRACE_METRICS.keys() - NOT_THRESHOLDS.keys()) == []
    assert sorted(NOT_THRESHOLDS.keys() - numeric) == [], "NOT_THRESHOLDS names a key that is not numeric"
    # every metric reads a value from the record (cost only when it was asked for: OPTIONAL_KEYS)
    assert sorted(n for n, m in TRACE_METRICS.items() if m.get(record) is None and n != "cost") == []


def test_every_numeric_key_is_shown_or_json_only(record):
    """A numeric key is a table column (spec 004's), a CSV column, or in `JSON_ONLY`."""
    table = {name.replace(" ", "_") for name, _ in COLUMNS + EXTRA_COLUMNS}
    csv = {c if isinstance(c, str) else c[0] for c in CSV_COLUMNS["trace"]}
    assert sorted(_numeric(record) - table - csv - JSON_ONLY) == []


def test_architecture_names_every_file_a_figure_touches():
    """docs/architecture.md "How to add a figure" names each file this module checks."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("## How to add a figure") :]
    for path in (
        "reports/results.py",
        "reports/trace.py",
        "data/schema-trace.json",
        "docs/definitions.md",
        "select/thresholds.py",
        "render/trace.py",
        "render/views.py",
        "tests/test_figures.py",
    ):
        assert path in section, path
