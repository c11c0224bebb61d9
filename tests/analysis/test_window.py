"""The context window a trace is measured against (`analysis/window.py`): the trace's own statement and
its bounds, a `[1m]` model id, the peak rule."""

from __future__ import annotations

from types import SimpleNamespace

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from contexttrace import analyze
from contexttrace.analysis import metrics
from contexttrace.analysis import window as window_rules
from contexttrace.analysis.metrics import is_spike
from contexttrace.analysis.window import DEFAULT_WINDOW_TOKENS, LARGE_WINDOW_TOKENS, WindowChoice, window_choice_of
from contexttrace.cli.app import app
from contexttrace.cli.options import MAX_WINDOW_TOKENS
from contexttrace.reading import read_trace
from contexttrace.render.trace import render_json

from ..conftest import (
    HUGE,
    MODEL,
    assistant,
    stream_run,
    write_file,
)

runner = CliRunner()


def test_b26_one_m_suffix_in_init_model_sets_the_window(write):
    """B26: a stream-json init naming `claude-opus-4-6[1m]` means a 1M window, even with a peak under 200K."""
    from contexttrace.analysis.window import window_choice

    init = {"type": "system", "subtype": "init", "session_id": "s", "model": "claude-opus-4-6[1m]"}
    [t] = read_trace(write("r.jsonl", init, assistant("m1", 0, 0, 185000, parent="", model="claude-opus-4-6")))
    assert window_choice(t) == (1_000_000, "model [1m]")
    [plain] = read_trace(write("p.jsonl", assistant("m1", 0, 0, 185000, parent="", model="claude-opus-4-6")))
    assert window_choice(plain) == (200_000, "default")
    [big] = read_trace(write("b.jsonl", assistant("m1", 0, 0, 310000, model="claude-opus-4-6")))
    assert window_choice(big) == (1_000_000, "peak")


# prompts around the spike factor's edges and the 200,000 default window; 0 is an unmeasured call
_PROMPTS = st.lists(
    st.one_of(st.sampled_from([0, 0, 1_000, 1_800, 1_801, 100_000, 180_000, 200_000, 200_001, 360_000, 400_000]),
              st.integers(0, 600_000)),
    max_size=30,
)  # fmt: skip


def _choice_by_the_rule(prompts: list[int]) -> WindowChoice:
    """The last step of `window_choice` as first written: the largest prompt that is no spike."""
    series = [p for p in prompts if metrics.measured(p)]
    steady = [v for i, v in enumerate(series) if not is_spike(series, i)]
    if max(steady, default=0) > DEFAULT_WINDOW_TOKENS:
        return WindowChoice(LARGE_WINDOW_TOKENS, "peak")
    return WindowChoice(DEFAULT_WINDOW_TOKENS, "default")


@settings(max_examples=500, deadline=None)
@given(series=_PROMPTS)
def test_window_choice_peak_rule_is_the_rule(series):
    """The peak rule of `window_choice_of` (spikes looked for only past 200,000) equals the rule per index."""
    trace = SimpleNamespace(result=None, surface=None)
    got = window_choice_of(trace, ["m"] * len(series), series, None)  # type: ignore[arg-type]
    assert got == _choice_by_the_rule(series)


def test_huge_context_window_is_not_the_window_and_json_still_prints(tmp_path):
    """A `contextWindow` of 10**400 (read by the lenient JSON fallback) was taken as the window: `--json`
    crashed ("Integer exceeds 64-bit range") and `--explain` printed a 130-digit window. It is no window:
    the next rule decides (200,000, the default), a warning names it, JSON and --explain print."""
    path = write_file(tmp_path, stream_run(calls=(40_000,), model_usage={"contextWindow": "<w>"}, w=HUGE))
    [t] = read_trace(path)
    assert t.result["modelUsage"][MODEL]["contextWindow"] == 10**400  # the reader keeps it as written
    assert window_rules.window_choice(t) == (200_000, "default")
    run = analyze([path])
    [r] = run.reports
    assert (r.extra["health"]["window"], r.extra["health"]["window_source"]) == (200_000, "default")
    assert r.extra["health"]["fill_percent"] == 20.0
    note = (
        f"result line: modelUsage[{MODEL!r}] contextWindow is not a window of 1 to 10,000,000 tokens "
        "(100000000000000000000000000000000000000…); not used"
    )
    assert note in r.warnings
    assert orjson.loads(render_json(run))[0]["health"]["window"] == 200_000
    out = runner.invoke(app, ["context", "trace", path, "--json"])
    assert out.exit_code == 0, out.output
    assert orjson.loads(out.stdout)[0]["warnings"] == [note]
    explained = runner.invoke(app, ["context", "trace", path, "--explain"])
    assert "fill 20%: peak 40,000 of a 200,000-token window (inferred: Claude Code's default" in explained.stdout
    usage = runner.invoke(app, ["context", "usage", path, "--json"])
    assert usage.exit_code == 0, usage.output
    [u] = orjson.loads(usage.stdout)
    assert u["window"] == 200_000 and u["reported"]["reported_model_usage"][0]["context_window_tokens"] is None
    assert u["reported"]["reported_model_usage"][0]["implausible_fields"] == ["contextWindow"]
    assert u["warnings"].count(note) == 1


@pytest.mark.parametrize(
    ("written", "window", "source"),
    [
        pytest.param("10000000", 10_000_000, "modelUsage", id="at-the-maximum"),
        pytest.param("10000001", 200_000, "default", id="above-the-maximum"),
        pytest.param("0", 200_000, "default", id="zero"),
        pytest.param("-200000", 200_000, "default", id="negative"),
        pytest.param("200000.0", 200_000, "default", id="float"),
        pytest.param('"1000000"', 200_000, "default", id="string"),
        pytest.param("1000000", 1_000_000, "modelUsage", id="a-window"),
    ],
)
def test_context_window_from_the_trace_is_bounded_like_the_option(tmp_path, written, window, source):
    """A window the trace states must be one `--window` would accept (1 to 10,000,000 tokens): the CLI's
    maximum and the trace's are one constant."""
    path = write_file(tmp_path, stream_run(model_usage={"contextWindow": "<w>"}, w=written))
    [t] = read_trace(path)
    assert window_rules.window_choice(t) == (window, source)
    [r] = analyze([path]).reports
    assert any("contextWindow is not a window" in w for w in r.warnings) is (source == "default")
    assert MAX_WINDOW_TOKENS is window_rules.MAX_WINDOW_TOKENS == 10_000_000
    too_big = runner.invoke(app, ["context", "trace", path, "--window", "10000001"])
    assert too_big.exit_code == 2 and "1 to 10,000,000 tokens" in too_big.output
