"""The ratio targets of issue 5, checked after the timed benchmarks (only with `--bench-enforce`)."""

from __future__ import annotations

import pytest
from conftest import FIGURES, MEDIANS

TARGETS = [("e2e-directory", "baseline-directory", 0.8), ("e2e-single", "baseline-single", 1.2)]


@pytest.mark.parametrize(("ours", "base", "limit"), TARGETS)
def test_ratio_target(pytestconfig, ours, base, limit):
    if not pytestconfig.getoption("--bench-enforce"):
        pytest.skip("ratios are reported, not enforced (pass --bench-enforce)")
    if ours not in MEDIANS or base not in MEDIANS:
        pytest.skip("not timed in this run")
    assert MEDIANS[ours] / MEDIANS[base] <= limit


def test_scaling_target(pytestconfig):
    if not pytestconfig.getoption("--bench-enforce"):
        pytest.skip("ratios are reported, not enforced (pass --bench-enforce)")
    if "e2e-directory" not in MEDIANS or "e2e-half" not in MEDIANS:
        pytest.skip("not timed in this run")
    bytes_ratio = FIGURES["bytes-directory"] / FIGURES["bytes-half"]
    assert MEDIANS["e2e-directory"] / MEDIANS["e2e-half"] <= bytes_ratio * 1.05
