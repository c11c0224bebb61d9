"""The ratio targets of issue 5, checked after the timed benchmarks (only with `--bench-enforce`)."""

from __future__ import annotations

import pytest
from conftest import FIGURES, MEDIANS, PAIRED

TARGETS = [("directory", 0.8), ("single", 1.2)]


@pytest.mark.parametrize(("corpus", "limit"), TARGETS)
def test_ratio_target(pytestconfig, corpus, limit):
    """The median of the paired rounds' ratios (`test_bench_e2e.test_paired`)."""
    if not pytestconfig.getoption("--bench-enforce"):
        pytest.skip("ratios are reported, not enforced (pass --bench-enforce)")
    if corpus not in PAIRED:
        pytest.skip("not timed in this run")
    assert PAIRED[corpus] <= limit


def test_scaling_target(pytestconfig):
    if not pytestconfig.getoption("--bench-enforce"):
        pytest.skip("ratios are reported, not enforced (pass --bench-enforce)")
    if "e2e-directory" not in MEDIANS or "e2e-half" not in MEDIANS:
        pytest.skip("not timed in this run")
    bytes_ratio = FIGURES["bytes-directory"] / FIGURES["bytes-half"]
    assert MEDIANS["e2e-directory"] / MEDIANS["e2e-half"] <= bytes_ratio * 1.05
