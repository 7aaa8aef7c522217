"""The pieces every comparison shares: the factor and the no-change band, the bootstrap of a median,
the ratio's percentile interval, and what an undecided comparison says would decide it."""

import math
import random
import statistics

import pytest

from harness.analysis.processes import compare_processes
from harness.analysis.significance import (
    DIRECT_MEDIAN_ABOVE,
    Thresholds,
    Verdict,
    format_margin,
    past_factor,
    percentile_ratio_interval,
    resampled_median,
    what_would_decide,
)


@pytest.mark.parametrize(
    ("ratio", "direction"),
    [
        (1.20, Verdict.SLOWER),
        (0.80, Verdict.FASTER),
        (1.04, None),
        (1.05, Verdict.SLOWER),
        (1 / 1.05, Verdict.FASTER),
    ],
)
def test_a_ratio_points_somewhere_only_past_the_factor_which_is_inclusive_both_ways(
    ratio, direction
):
    assert past_factor(ratio, Thresholds()) == direction


def test_nan_points_nowhere_and_a_margin_reads_as_the_change_it_allows_either_way():
    assert past_factor(math.nan, Thresholds()) is None
    assert format_margin(1.09) == "within ±9.0%" and format_margin(1.234) == "within ±23%"
    assert format_margin(math.nan) == "" and format_margin(math.inf) == "", (
        "no test: no margin to state"
    )


def test_the_percentile_interval_pairs_the_figures_and_refuses_a_zero_base():
    base = [1.0] * 100
    cand = [1.0 + i / 100 for i in range(100)]
    low, high = percentile_ratio_interval(base, cand, 0.9)
    assert (low, high) == pytest.approx((1.04, 1.95))
    assert all(math.isnan(x) for x in percentile_ratio_interval([0.0, 1.0], [1.0, 1.0], 0.9))


@pytest.mark.parametrize("count", [9, DIRECT_MEDIAN_ABOVE + 501])
def test_a_resampled_median_is_seeded_and_near_the_median(count):
    values = sorted(random.Random(1).lognormvariate(0, 0.2) for _ in range(count))
    draws = [resampled_median(values, random.Random(seed)) for seed in range(200)]
    assert draws == [resampled_median(values, random.Random(seed)) for seed in range(200)], (
        "the seed repeats it"
    )
    assert statistics.median(draws) == pytest.approx(statistics.median(values), rel=0.1)
    assert set(draws) <= set(values), "a median of draws is one of the values (odd counts)"


def test_an_undecided_comparison_says_what_would_decide_it():
    rng = random.Random(3)
    a = [
        [rng.lognormvariate(0, 0.01) * rng.lognormvariate(0, 0.2) for _ in range(5)]
        for _ in range(3)
    ]
    b = [[x * 1.03 for x in process] for process in a]
    undecided = compare_processes(a, b)
    assert undecided.verdict == Verdict.UNDECIDED
    assert "beyond the no-change band ×0.952–×1.05" in what_would_decide(undecided, Thresholds())
    assert f"up to ×{undecided.margin:.3g} either way" in what_would_decide(undecided, Thresholds())
    two = compare_processes(a[:2], b[:2])
    assert "2 and 2 processes, fewer than the 3 a side a verdict needs" in what_would_decide(
        two, Thresholds()
    )
    steady = [[1.0 + 0.001 * i for i in range(5)] for _ in range(10)]
    same = compare_processes(steady, steady)
    assert same.verdict == Verdict.UNCHANGED and what_would_decide(same, Thresholds()) == "", (
        "decided"
    )
