"""The statistics of a comparison: the runs' spread, the noise a difference is held against, a rank test
and a bootstrap interval of the difference of medians (spec 004, "Comparing context layers").

Pure functions over lists of numbers (one value per run). The rank test and the interval come from scipy,
imported only when both sides have `MIN_RUNS_FOR_TEST` runs, so no other command pays for the import
(about 0.8 s). Every resampling is seeded (`SEED`): the same runs give the same p-values and intervals.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Any

#: Runs needed on each side before the rank test and the bootstrap interval are given. With 4 + 4 runs
#: the smallest two-sided p a rank test can reach is 2/70 = 0.029, with 3 + 3 it is 0.1: below 5 + 5
#: (2/252 = 0.008) a p-value says more about N than about the conditions.
MIN_RUNS_FOR_TEST = 5

#: Resamples of the bootstrap interval, and the most splits the rank test enumerates exactly.
RESAMPLES = 9_999

#: Seed of every resampling, so the same runs give the same p-values and intervals.
SEED = 20_260_501

#: Coverage of the bootstrap interval of the median difference.
CI_LEVEL = 0.95

#: The p-value below which a rank test's difference is beyond the noise (`verdict`).
ALPHA = 0.05

#: The verdicts a difference can get (`verdict`), as the JSON writes them.
VERDICTS = ("beyond_noise", "within_noise", "same", "same_median")


Number = float | int


def spread(values: Sequence[Number]) -> Number | None:
    """The runs' own spread: the interquartile range, Q3 − Q1, the width of the middle half of the runs
    (quartiles interpolated linearly between runs, `statistics.quantiles(method="inclusive")`, numpy's
    default). None with fewer than two runs: no spread was measured.

    Not max − min: the range widens with every run added (an outlier run sets it alone), so with 20 runs
    a side a shift of three standard deviations would still sit "within" it; the interquartile range
    stays about 1.35 standard deviations whatever the number of runs.

    >>> spread([3, 4, 4, 4, 44]), spread([10, 20]), spread([7])
    (0, 5, None)
    """
    if len(values) < 2:
        return None
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return plain(q3 - q1)


def noise_of(baseline: Sequence[Number], values: Sequence[Number]) -> Number | None:
    """The noise a difference of medians is held against: the wider of the two conditions' spreads
    (`spread`), over the sides with two runs or more; None when neither side has two.

    >>> noise_of([10, 12, 20], [30]), noise_of([10], [30])
    (5, None)
    """
    spreads = [s for s in (spread(baseline), spread(values)) if s is not None]
    return max(spreads) if spreads else None


def within_noise(delta: Number, noise: Number | None) -> bool | None:
    """True when a difference of medians is not larger than the noise: ``|delta| <= noise`` (floats
    compared with a relative tolerance of 1e-9, so a cost's rounding never decides); None without noise.

    >>> within_noise(5, 5), within_noise(-6, 5), within_noise(0, 0), within_noise(3, None)
    (True, False, True, None)
    """
    if noise is None:
        return None
    return abs(delta) <= noise or math.isclose(abs(delta), noise, rel_tol=1e-9, abs_tol=1e-12)


def verdict(delta: Number | None, noise: Number | None, p: float | None) -> str | None:
    """One verdict per difference of medians, from the figures printed beside it, by one rule.

    With a rank test (`p` not None: `MIN_RUNS_FOR_TEST` runs a side) the test decides: the difference is
    ``beyond_noise`` when p < `ALPHA`, else ``within_noise``. Without one, Δ is held against the noise band
    (`within_noise`: ``|delta| <= noise``). A Δ of 0 is ``same`` whatever the band, or ``same_median`` when
    the test still finds the runs shifted (p < `ALPHA`: the medians tie, the rest of the runs do not). None
    when there is no Δ, or Δ ≠ 0 with one run a side (no noise, no test: nothing to judge it by).

    >>> verdict(15.5, 20, 0.03), verdict(2, 4, None), verdict(6, 4, None), verdict(0, 0, 0.006)
    ('beyond_noise', 'within_noise', 'beyond_noise', 'same_median')
    >>> verdict(0, None, None), verdict(3, None, None), verdict(40, 4, 0.2)
    ('same', None, 'within_noise')
    """
    if delta is None:
        return None
    if abs(delta) <= 1e-12:  # a cost's float rounding is no difference
        return "same_median" if p is not None and p < ALPHA else "same"
    if p is not None:
        return "beyond_noise" if p < ALPHA else "within_noise"
    flag = within_noise(delta, noise)
    return None if flag is None else "within_noise" if flag else "beyond_noise"


def rank_test(baseline: Sequence[Number], values: Sequence[Number]) -> float | None:
    """Two-sided Mann–Whitney U p-value of `values` against `baseline` (scipy.stats.mannwhitneyu).

    Exact when the two samples can be split in at most `RESAMPLES` ways (up to 7 + 7 runs): every split
    is enumerated (a permutation test of U, which treats ties exactly). Larger samples use the normal
    approximation with the tie correction, scipy's own choice for them.

    Returns
    -------
    float or None
        The p-value (0–1); None with fewer than `MIN_RUNS_FOR_TEST` runs on either side.

    Examples
    --------
    >>> round(rank_test([1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12]), 6)  # exact: 2 of C(12, 6) = 924 splits
    0.002165
    """
    if min(len(baseline), len(values)) < MIN_RUNS_FOR_TEST:
        return None
    import numpy as np
    from scipy.stats import PermutationMethod, mannwhitneyu

    if math.comb(len(baseline) + len(values), len(values)) <= RESAMPLES:
        method: Any = PermutationMethod(n_resamples=RESAMPLES, rng=np.random.default_rng(SEED))
    else:
        method = "asymptotic"
    p = float(mannwhitneyu(values, baseline, alternative="two-sided", method=method).pvalue)
    return None if math.isnan(p) else min(p, 1.0)


def median_difference_ci(baseline: Sequence[Number], values: Sequence[Number]) -> tuple[float, float] | None:
    """A `CI_LEVEL` bootstrap interval of median(values) − median(baseline) (scipy.stats.bootstrap).

    Each side is resampled apart (`RESAMPLES` times, seeded with `SEED`: the same runs give the same
    interval); percentile method, which stays defined when every resample gives the same median (counts
    often do), where BCa does not.

    Returns
    -------
    (float, float) or None
        (low, high) in the metric's unit; None with fewer than `MIN_RUNS_FOR_TEST` runs on either side.

    Examples
    --------
    >>> median_difference_ci([4, 4, 4, 4, 4], [6, 6, 6, 6, 6])
    (2.0, 2.0)
    """
    if min(len(baseline), len(values)) < MIN_RUNS_FOR_TEST:
        return None
    import warnings

    import numpy as np
    from scipy.stats import bootstrap

    def difference(base: Any, other: Any, axis: int = -1) -> Any:
        return np.median(other, axis=axis) - np.median(base, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning when every resample agrees: the interval is exact
        result = bootstrap(
            (np.asarray(baseline, dtype=float), np.asarray(values, dtype=float)),
            difference,
            n_resamples=RESAMPLES,
            confidence_level=CI_LEVEL,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(SEED),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return None if math.isnan(low) or math.isnan(high) else (low, high)


def plain(value: Number) -> Number:
    """Return a whole float as an int (the median of an even count of runs, a bootstrap bound are floats),
    so JSON and CSV write ``3000``, not ``3000.0``; other values unchanged.

    >>> plain(3000.0), plain(2.5), plain(7)
    (3000, 2.5, 7)
    """
    return int(value) if isinstance(value, float) and value.is_integer() else value
