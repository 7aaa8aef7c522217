"""The pieces every comparison shares: the factor and the no-change band, and what an undecided
comparison says would decide it."""

import math
import random

import pytest

from harness.analysis.processes import compare_processes
from harness.analysis.significance import (
    Thresholds,
    Verdict,
    format_margin,
    past_factor,
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
    assert f"up to ×{undecided.cost.margin:.3g} either way" in what_would_decide(
        undecided, Thresholds()
    )
    two = compare_processes(a[:2], b[:2])
    assert "2 and 2 processes, fewer than the 3 a side a verdict needs" in what_would_decide(
        two, Thresholds()
    )
    steady = [[1.0 + 0.001 * i for i in range(5)] for _ in range(10)]
    same = compare_processes(steady, steady)
    assert same.verdict == Verdict.UNCHANGED and what_would_decide(same, Thresholds()) == "", (
        "decided"
    )
