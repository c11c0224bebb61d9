"""contexttrace.analysis.estimator: spec 003's 3.5 chars/token rule against exact prompt tokens, and the fitted chars
per token, on hand-built traces whose errors the docstrings compute, and on the bundled samples."""

from __future__ import annotations

import pytest

from contexttrace.analysis.estimator import MIN_STEPS, RULE_CHARS_PER_TOKEN, estimate_trace
from contexttrace.reading import read_trace
from contexttrace.run.runner import analyze

from ..conftest import SAMPLES, assistant, result


def _estimate(write, *records):
    (trace,) = read_trace(write("t.jsonl", *records))
    return estimate_trace(trace)


def _read(n, chars):
    """Call `n` asks for a Read; its result has `chars` characters (prompt sizes set by the caller)."""
    return [result(f"t{n}", "x" * chars)]


def test_rule_and_calibration_on_two_steps(write):
    """Call 1: 1,000 (the anchor). A 698-char result and the call's `{}` input (2 chars): 700 chars; call 2:
    1,200 (rule 1,000 + 700 / 3.5 = 1,200: 0 %). 348 + 2 chars; call 3: 1,250 (rule 1,300: 50 / 1,250 =
    4 %). Median 2 %, worst 4 %. Fit: 1,050 chars / 250 tokens = 4.2 chars/token; with it call 2 is
    1,166.67 (33.33 / 1,200 = 2.78 %), call 3 1,250 (0 %): median 1.39 %, worst 2.78 %."""
    e = _estimate(
        write,
        assistant("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {})]),
        *_read(1, 698),
        assistant("m2", 0, 0, 1200, 0, tools=[("t2", "Read", {})]),
        *_read(2, 348),
        assistant("m3", 0, 0, 1250, 0),
    )
    assert e["rule_chars_per_token"] == RULE_CHARS_PER_TOKEN
    assert (e["calls_compared"], e["fit_steps"]) == (2, 2)
    assert (e["rule_median_error"], e["rule_worst_error"]) == (0.02, 0.04)
    assert e["chars_per_token"] == 4.2
    assert (e["calibrated_median_error"], e["calibrated_worst_error"]) == (0.0139, 0.0278)
    assert e["results_chars_per_token"] is None  # 2 steps: fewer than MIN_STEPS


def test_per_kind_fit_needs_enough_steps(write):
    """Five steps, each a 400-char result and a 2-char input (`{}`), each growing 100 tokens: overall
    402 / 100 = 4.02 chars/token; results (each step ≥ 80 % results) 2,000 / (5 · (100 − 2 / 4.02)) =
    4.02 as well; no prompt nor input step."""
    records = []
    for n in range(1, MIN_STEPS + 2):
        records.append(assistant(f"m{n}", 0, 0, 1000 + 100 * (n - 1), 0, tools=[(f"t{n}", "Read", {})]))
        records += _read(n, 400)
    e = _estimate(write, *records)
    assert e["fit_steps"] == MIN_STEPS
    assert e["chars_per_token"] == 4.02
    assert e["results_chars_per_token"] == round(400 / (100 - 2 / 4.02), 4) == 4.02
    assert e["prompts_chars_per_token"] is None and e["inputs_chars_per_token"] is None
    assert e["calibrated_worst_error"] == 0


def test_compaction_restarts_the_rule(write):
    """The first call after a compaction is a new anchor (left out); the rule counts from it."""
    e = _estimate(
        write,
        assistant("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {})]),
        *_read(1, 698),
        assistant("m2", 0, 0, 1200, 0),
        {"type": "system", "subtype": "compact_boundary", "sessionId": "s", "compactMetadata": {"preTokens": 1}},
        assistant("m3", 0, 0, 500, 0, tools=[("t3", "Read", {})]),
        *_read(3, 348),
        assistant("m4", 0, 0, 600, 0),
    )
    assert e["calls_compared"] == 2
    assert e["rule_worst_error"] == 0 and e["fit_steps"] == 2


def test_images_count_in_tokens_not_chars(write):
    """An unsized image in a result is 1,500 tokens: call 2 (2,500) is exact by the rule, and the step has
    no growth left for characters (not fitted)."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    e = _estimate(
        write,
        assistant("m1", 0, 0, 1000, 0, tools=[("t1", "Read", {})]),
        result("t1", [image]),
        assistant("m2", 0, 0, 2500, 0),
    )
    assert e["rule_worst_error"] == pytest.approx(2 / 3.5 / 2500, abs=1e-4)
    assert e["fit_steps"] == 0 and e["chars_per_token"] is None and e["calibrated_median_error"] is None


def test_no_calls(write):
    e = _estimate(write, {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}})
    assert e["calls_compared"] == 0 and e["rule_median_error"] is None and e["chars_per_token"] is None


#: Per sample: calls compared, rule median and worst error, fitted chars/token, calibrated median and worst.
SAMPLE_ESTIMATES = {
    "b-spotter-compaction/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (137, 0.1446, 0.2315, 2.614, 0.0573, 0.1037),
    "b-ccl-thinking-sonnet45.jsonl": (35, 0.1689, 0.2195, 2.5217, 0.0211, 0.0791),
    "b-ccl-image-and-errors.jsonl": (100, 0.077, 0.2358, 2.6812, 0.1185, 0.2525),
    "a-ralph-subagent-opus45-haiku45.jsonl#1": (67, 0.1072, 0.1382, 2.8942, 0.027, 0.046),
}


@pytest.mark.parametrize(("name", "figures"), SAMPLE_ESTIMATES.items())
def test_sample_estimates(name, figures):
    path = str(SAMPLES / name.split("/")[0].split("#")[0])
    run = analyze([path], build=lambda t, w: (t.name, estimate_trace(t)), workers=1)
    (e,) = [e for trace, e in run.reports if trace.endswith(name)]
    got = (e["calls_compared"], e["rule_median_error"], e["rule_worst_error"], e["chars_per_token"],
           e["calibrated_median_error"], e["calibrated_worst_error"])  # fmt: skip
    assert got == figures
