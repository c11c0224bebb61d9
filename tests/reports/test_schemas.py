"""The JSON contract: every JSON output validates against its shipped JSON Schema (draft 2020-12,
checked with `jsonschema`), the schemas are closed, and a schema cannot change without its version."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.cli.app import app
from contexttrace.reports.schemas import DRAFT, SCHEMA_NAMES, SCHEMA_VERSIONS, schema_of, schema_text
from contexttrace.reports.usage import build_usage
from contexttrace.select.filters import GROUP_BY, group_usage, parse_timezone
from contexttrace.select.views import build_report_with_cost
from contexttrace.storage.history import history_rows, load_runs, record_run

from ..conftest import CASES, SAMPLES

runner = CliRunner()

#: Fingerprint of each schema per version (`fingerprint`): what a version promises. A schema that changes
#: must bump its version in `schemas.SCHEMA_VERSIONS` and add a line here; never edit an existing line.
FINGERPRINTS = {
    ("trace", 1): "1795cfb54fed",
    ("usage", 1): "642bf2ce7fb4",
    ("usage-group", 1): "6505cc761a19",
    ("history", 1): "893e5e2d1b50",
    ("compare", 1): "47423e6fca9a",
    ("trace", 2): "0155a12c62e3",  # spikes: 1-based call numbers (were 0-based indexes)
    ("usage", 2): "beb02f9ed54c",  # lower_bound_reasons gains unreadable_usage
    ("usage-group", 2): "683a3222f4c9",  # lower_bound_reasons gains unreadable_usage
    ("tools", 1): "e96e900f3e7e",
    ("sources", 1): "4762256e0657",
    ("files", 1): "eadc57c55d2e",
    ("tools", 2): "e9abbe18a72e",  # top_consumers gain capped (⊘ for a result cut at a cap)
    ("tools", 3): "e0ad0cefec93",  # server_tools (server_tool_use blocks apart from tools); format gains codex, gemini;
    # top_consumers[].target
    ("files", 2): "7db4d03432b7",  # at.ts_ms may be negative (an --at TIME before 1970, warned)
    ("sources", 2): "0dd6cd1f2261",  # output_lower_bound_calls, hidden_thinking_calls
    # format gains codex and gemini; health.signals[]: has_data replaces abstained and effective_weight; window
    # always set, window_source
    ("trace", 3): "cfb3b0a13e7e",
    ("usage", 3): "e18908625135",  # format gains codex and gemini; subagent_threads, compaction_threads
    ("sources", 3): "b25ea8962d8e",  # format gains codex and gemini; rows split the prefix (memory, skills,
    # custom_agents, deferred_tools, mcp_instructions); netted, calibration, other_parts, surface, claude_context
    # (with autocompact_buffer_constant_tokens)
    ("compare", 2): "589c58f4ad9a",  # rows[].verdict (one rule over delta, noise and p); statistics.alpha
    ("files", 3): "9d8acc4dd306",  # format gains codex and gemini
    ("compare", 3): "e1ebaeb5d483",  # startup (start-up by source: the first call's rows per condition and their
    # differences); conditions[].runs[].first_sources; readings[].kind gains startup_sources
}

#: Schema keywords that document and do not constrain: a change to them is not a change of the contract.
_PROSE = {"description", "title", "$comment", "examples"}


def _structure(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _structure(v) for k, v in node.items() if k not in _PROSE}
    if isinstance(node, list):
        return [_structure(v) for v in node]
    return node


def fingerprint(schema: dict[str, Any]) -> str:
    """12 hex digits of the SHA-256 of the schema's structure (keys, types, enums, required, nesting), its
    prose left out."""
    canonical = json.dumps(_structure(schema), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def _inputs() -> list[str]:
    paths = sorted(str(p) for p in SAMPLES.iterdir() if p.suffix == ".jsonl" or p.is_dir())
    return paths + sorted(str(p) for p in CASES.rglob("*.jsonl"))


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema_of(name), format_checker=Draft202012Validator.FORMAT_CHECKER)


def _errors(name: str, objects: list[dict[str, Any]]) -> list[str]:
    v = _validator(name)
    return [f"{o.get('trace', o.get('group'))}: {list(e.absolute_path)}: {e.message[:160]}" for o in objects
            for e in v.iter_errors(o)]  # fmt: skip


@pytest.fixture(scope="module")
def trace_objects() -> list[dict[str, Any]]:
    """`context trace --json` objects of every sample and case: without a window, and with a window,
    `--calls` and a cost (every optional key present)."""
    plain = analyze(_inputs())
    full = analyze(_inputs(), window=200_000, build=build_report_with_cost)
    objects = [r.to_dict() for r in plain.reports] + [r.to_dict(with_calls=True) for r in full.reports]
    return orjson.loads(orjson.dumps(objects))  # as printed: through JSON


@pytest.fixture(scope="module")
def usage_objects() -> list[dict[str, Any]]:
    """`context usage --json` objects of every sample and case."""
    run = analyze(_inputs(), build=build_usage)
    return orjson.loads(orjson.dumps([r.to_dict() for r in run.reports]))


def test_schemas_are_valid_draft_2020_12_and_carry_their_version():
    """Each shipped schema is a valid draft 2020-12 schema whose `schema_version` is the current version."""
    for name in SCHEMA_NAMES:
        schema = schema_of(name)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == DRAFT
        assert schema["properties"]["schema_version"] == {**schema["properties"]["schema_version"],
                                                          "const": SCHEMA_VERSIONS[name]}  # fmt: skip
        assert schema["$id"].endswith(f"/{name}-{SCHEMA_VERSIONS[name]}.json")


def test_schema_fingerprints_match_their_versions():
    """A schema whose structure changed without a bump of its version fails here (prose may change freely)."""
    for name in SCHEMA_NAMES:
        key = (name, SCHEMA_VERSIONS[name])
        assert key in FINGERPRINTS, f"add {key}: {fingerprint(schema_of(name))!r} to FINGERPRINTS"
        assert fingerprint(schema_of(name)) == FINGERPRINTS[key], (
            f"schema-{name}.json changed: bump SCHEMA_VERSIONS[{name!r}] (contexttrace/schemas.py), its const and "
            f"$id, then add ({name!r}, <new version>): {fingerprint(schema_of(name))!r} to FINGERPRINTS"
        )


def test_fingerprint_ignores_prose_and_sees_structure():
    """A description edit keeps the fingerprint; a new key, or a type made nullable, changes it."""
    base = schema_of("trace")
    prose = json.loads(json.dumps(base))
    prose["properties"]["peak"]["description"] = "reworded"
    added = json.loads(json.dumps(base))
    added["properties"]["new_key"] = {"type": "integer"}
    retyped = json.loads(json.dumps(base))
    retyped["properties"]["peak"]["type"] = ["integer", "null"]
    assert fingerprint(prose) == fingerprint(base)
    assert len({fingerprint(base), fingerprint(added), fingerprint(retyped)}) == 3


def test_trace_json_of_every_sample_validates(trace_objects):
    """Every `context trace --json` object (all samples and cases; with and without window, calls, cost)
    validates against `contexttrace schema trace`."""
    assert len(trace_objects) > 60
    assert any("cost_usd" in o and "prompt_tokens" in o for o in trace_objects)
    assert _errors("trace", trace_objects) == []


def test_usage_json_of_every_sample_validates(usage_objects):
    """Every `context usage --json` object validates against `contexttrace schema usage`."""
    assert _errors("usage", usage_objects) == []


def test_usage_groups_of_every_sample_validate(usage_objects):
    """`context usage --group-by` rows, for every grouping, validate against `schema usage-group`."""
    rows = [
        row
        for by in GROUP_BY
        for row in group_usage(usage_objects, by, parse_timezone("UTC"), SCHEMA_VERSIONS["usage-group"])
    ]
    assert {r["group_by"] for r in rows} == set(GROUP_BY)
    assert _errors("usage-group", orjson.loads(orjson.dumps(rows))) == []


def test_history_rows_validate(tmp_path, trace_objects, usage_objects):
    """`context history --json` rows (trace and usage runs, two labels, a change) validate against `schema
    history`."""
    db = tmp_path / "h.sqlite"
    record_run(db, "trace", trace_objects[:3], label="a")
    record_run(db, "trace", trace_objects[3:5], label="a")
    record_run(db, "trace", trace_objects[5:6], label="b")
    record_run(db, "usage", usage_objects[:2], label="a")
    rows = history_rows(load_runs(db, "trace"))[0] + history_rows(load_runs(db, "usage"))[0]
    assert len(rows) == 4
    assert _errors("history", orjson.loads(orjson.dumps(rows))) == []


@pytest.mark.parametrize(
    ("change", "path"),
    [
        pytest.param(lambda o: o.update(surprise=1), [], id="key-added"),
        pytest.param(lambda o: o.pop("peak"), [], id="key-removed"),
        pytest.param(lambda o: o.update(peak="164831"), ["peak"], id="key-retyped"),
        pytest.param(lambda o: o["health"].update(extra=True), ["health"], id="nested-key-added"),
        pytest.param(lambda o: o.update(schema_version=1), ["schema_version"], id="other-version"),
    ],
)
def test_schema_is_closed_so_an_output_change_fails_validation(trace_objects, change, path):
    """The schema is closed: an output that gains, loses or retypes a key (at any level) fails validation,
    so a change to the output forces a change to the schema, and so (fingerprint) to the version."""
    obj = json.loads(json.dumps(trace_objects[0]))
    change(obj)
    errors = list(_validator("trace").iter_errors(obj))
    assert errors and list(errors[0].absolute_path) == path


def test_cli_json_objects_carry_schema_version():
    """`--json` keeps spec 004's list (one object per trace) and each object carries `schema_version`."""
    good = str(SAMPLES / "b-ccl-thinking-sonnet45.jsonl")
    for command, name in (("trace", "trace"), ("usage", "usage")):
        out = runner.invoke(app, ["context", command, good, "--json"], catch_exceptions=False)
        [obj] = orjson.loads(out.stdout)
        assert obj["schema_version"] == SCHEMA_VERSIONS[name]
        assert _errors(name, [obj]) == []


def test_compare_json_validates_and_its_version_is_compare_s_own():
    """`context compare --json` (three conditions over the samples: runs, a folder, a multi-run file) validates
    against `schema compare`, whose version is `compare.SCHEMA_VERSION`."""
    from contexttrace.reports.compare import SCHEMA_VERSION

    assert SCHEMA_VERSIONS["compare"] == SCHEMA_VERSION
    args = ["context", "compare", "--json", "--condition", f"loop={SAMPLES / 'a-ralph-27runs-with-separators.jsonl'}",
            "--condition", f"print={SAMPLES / 'b-ccl-print-mode-sessions'}",
            "--condition", f"sub={SAMPLES / 'a-ralph-subagent-opus45-haiku45.jsonl'}"]  # fmt: skip
    out = runner.invoke(app, args, catch_exceptions=False)
    obj = orjson.loads(out.stdout)
    assert obj["schema_version"] == SCHEMA_VERSION and obj["surface"]["between"]
    v = _validator("compare")
    assert [f"{list(e.absolute_path)}: {e.message[:160]}" for e in v.iter_errors(obj)] == []


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_cli_schema_prints_each_schema(name):
    """`contexttrace schema NAME` prints the shipped schema, as JSON."""
    out = runner.invoke(app, ["schema", name], catch_exceptions=False)
    assert out.exit_code == 0
    assert json.loads(out.stdout) == schema_of(name)
    assert out.stdout == schema_text(name)


def test_cli_schema_unknown_name_is_a_usage_error():
    """An unknown output name exits 2 and lists the names."""
    out = runner.invoke(app, ["schema", "nope"])
    assert out.exit_code == 2
    assert all(n in out.stderr for n in SCHEMA_NAMES)


def test_tools_json_of_every_sample_validates():
    """`context tools --json` (with `--by-tool`, so the per-MCP-tool rows are in) of every sample and case
    validates against `schema tools`, whose version is `tools.SCHEMA_VERSION`."""
    from contexttrace.reports.tools import SCHEMA_VERSION, build_tools

    assert SCHEMA_VERSIONS["tools"] == SCHEMA_VERSION
    run = analyze(_inputs(), build=build_tools)
    objects = orjson.loads(orjson.dumps([r.to_dict(by_tool=True) for r in run.reports]))
    assert len(objects) > 30 and any(row["parent"] for o in objects for row in o["tools"])
    assert _errors("tools", objects) == []


def test_sources_json_of_every_sample_validates():
    """`context sources --json` of every sample and case (at the last call, and at call 1) validates against
    `schema sources`, whose version is `context_sources.SCHEMA_VERSION`."""
    from functools import partial

    from contexttrace.reports.sources import SCHEMA_VERSION, build_sources

    assert SCHEMA_VERSIONS["sources"] == SCHEMA_VERSION
    objects = []
    for at in ("last", "1"):
        run = analyze(_inputs(), build=partial(build_sources, at=at))
        objects += orjson.loads(orjson.dumps([r.to_dict() for r in run.reports]))
    assert len(objects) > 60 and any(o["reference"]["kind"] == "compaction" for o in objects)
    assert _errors("sources", objects) == []


def test_files_json_of_every_sample_validates():
    """`context files --json` of every sample and case (at the last line, and at call 1) validates against
    `schema files`, whose version is `files.SCHEMA_VERSION`."""
    from functools import partial

    from contexttrace.reports.files import SCHEMA_VERSION, At, build_files

    assert SCHEMA_VERSIONS["files"] == SCHEMA_VERSION
    objects = []
    for at in (At(), At("call", 1)):
        run = analyze(_inputs(), build=partial(build_files, at=at))
        objects += orjson.loads(orjson.dumps([r.to_dict() for r in run.reports]))
    assert len(objects) > 60 and any(o["drop_events"] for o in objects)
    assert _errors("files", objects) == []


def test_the_ci_doc_lists_every_schema_at_its_version():
    """docs/ci.md's table of JSON outputs names every schema `contexttrace schema` prints, at the version the
    package writes (the table went stale once: compare 1 while the package wrote 3)."""
    import re

    doc = (Path(__file__).parents[2] / "docs" / "ci.md").read_text(encoding="utf-8")
    listed = {m[1]: int(m[2]) for m in re.finditer(r"^\| `context [^|]+\| `([a-z-]+)` \| (\d+)", doc, re.M)}
    assert listed == SCHEMA_VERSIONS
