"""The statistics behind every faster/slower verdict, against values worked out by hand.

Reference p-values were also checked against scipy 1.18.1's ``mannwhitneyu``
(``method="exact"`` / ``"asymptotic"``), quoted beside each case; scipy itself is
not a dependency.
"""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.analysis.significance import (
    FASTER,
    MANN_WHITNEY_POOLED,
    SLOWER,
    UNCHANGED,
    Thresholds,
    Verdict,
    bootstrap_ratio_interval,
    compare_samples,
    decide,
    mann_whitney_u,
    smallest_p_value,
    u_distribution,
    what_would_decide,
)
from tests.conftest import v1_result

MALES = [19, 22, 16, 29, 24]
FEMALES = [20, 11, 17, 12]  # scipy's documented example (from Conover)


def test_exact_test_on_the_textbook_example():
    # U(males) counts pairs with male > female: 19→3, 22→4, 16→2, 29→4, 24→4 = 17 of 20.
    # P(U >= 17) = P(U <= 3) = (1 + 1 + 2 + 3) / C(9, 4) = 7/126; two-sided 14/126 = 1/9.
    result = mann_whitney_u(MALES, FEMALES)
    assert (result.u, result.method) == (17, "exact")
    assert result.p_value == pytest.approx(1 / 9)  # scipy exact: 0.1111111111111111


def test_u_distribution_counts_orderings():
    counts = u_distribution(5, 4)
    assert counts[:4] == (1, 1, 2, 3)  # partitions of 0..3 into at most 4 parts of size <= 5
    assert sum(counts) == math.comb(9, 4)
    assert counts == counts[::-1], "U and m·n − U are equally likely"
    assert u_distribution(1, 1) == (1, 1)


def test_normal_approximation_with_ties_by_hand():
    # Pooled 1 2 3 3 4 4 5 6 → ranks 1 2 3.5 3.5 5.5 5.5 7 8; R(a) = 12, U(a) = 12 − 10 = 2.
    # Two ties of 2: Σ(t³ − t) = 12; variance = 4·4/12 · (9 − 12/(8·7)) = 82/7.
    # z = (|2 − 8| − ½) / √(82/7).
    result = mann_whitney_u([1, 2, 3, 4], [3, 4, 5, 6])
    assert (result.u, result.method) == (2, "normal")
    z = 5.5 / math.sqrt(82 / 7)
    assert result.p_value == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert result.p_value == pytest.approx(0.10806337293756858)  # scipy asymptotic


SHIFTED = ([float(x) for x in range(1, 26)], [x + 7.5 for x in range(1, 26)])


@pytest.mark.parametrize(
    ("a", "b", "method", "u", "p"),
    [
        # 25 a side, no ties: exact p is under 0.002 where the approximation is above it.
        (*SHIFTED, "auto", 153, 0.0016129849141765253),
        (*SHIFTED, "normal", 153, 0.002035157807278379),
        ([3, 1, 4, 1, 5, 9, 2, 6, 5, 3], [2, 7, 1, 8, 2, 8, 1, 8, 2, 8], "auto", 45.5, 0.7595466927122063),
        (list(range(10, 17)), list(range(17, 24)), "auto", 0, 0.0005827505827505828),  # 2 / C(14, 7)
    ],
)
def test_matches_scipy(a, b, method, u, p):
    result = mann_whitney_u(a, b, method=method)
    assert result.u == u
    assert result.p_value == pytest.approx(p, rel=1e-9)


def test_identical_constant_samples_are_not_different():
    assert mann_whitney_u([5, 5, 5], [5, 5, 5]).p_value == 1.0


def test_exact_and_normal_agree_and_the_approximation_errs_on_the_safe_side():
    rng = random.Random(3)
    for _ in range(50):
        a = [rng.gauss(0, 1) for _ in range(30)]
        b = [rng.gauss(rng.choice([0, 0.5, 1]), 1) for _ in range(30)]
        exact, normal = mann_whitney_u(a, b), mann_whitney_u(a, b, method="normal")
        assert (exact.method, normal.method) == ("exact", "normal")
        assert exact.u == normal.u
        assert abs(exact.p_value - normal.p_value) < 0.01
        if exact.p_value < 0.01:
            assert normal.p_value > exact.p_value, "the approximation must not invent significance"
    assert mann_whitney_u(list(range(51)), list(range(51, 102))).method == "normal", "beyond 50 a side"


samples = st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=25)


@given(samples, samples)
def test_the_test_is_symmetric(a, b):
    forward, backward = mann_whitney_u(a, b), mann_whitney_u(b, a)
    assert forward.p_value == pytest.approx(backward.p_value)
    assert forward.u + backward.u == len(a) * len(b)
    assert 0 < forward.p_value <= 1


@given(samples, samples)
def test_ranks_not_values_matter(a, b):
    squashed = mann_whitney_u([math.log1p(x) for x in a], [math.log1p(x) for x in b])
    assert squashed.p_value == pytest.approx(mann_whitney_u(a, b).p_value)


def test_smallest_reachable_p_decides_when_a_verdict_is_possible():
    assert smallest_p_value(7, 7) < 0.002 <= smallest_p_value(6, 6)
    assert smallest_p_value(3, 3) == pytest.approx(0.1), "three compile timings a side can never be significant"


@pytest.mark.parametrize(
    ("ratio", "p", "interval", "verdict"),
    [
        (1.20, 1e-5, (1.1, 1.3), Verdict.SLOWER),
        (0.80, 1e-5, (0.7, 0.9), Verdict.FASTER),
        (1.04, 1e-9, (1.03, 1.045), Verdict.UNCHANGED),  # significant but too small to matter, and known to be
        (1.02, 0.3, (0.9, 1.15), Verdict.UNDECIDED),  # small, but its interval reaches beyond the band: not known
        (1.50, 0.01, (0.9, 2.5), Verdict.UNDECIDED),  # large but not significant: never "unchanged"
        (1.50, 0.1, (math.nan, math.nan), Verdict.UNDECIDED),  # too few samples to ever tell
        (1 / 1.05, 1e-4, (0.93, 0.97), Verdict.FASTER),  # the effect size threshold is inclusive both ways
    ],
)
def test_a_verdict_needs_effect_size_and_significance_and_no_change_needs_its_interval(ratio, p, interval, verdict):
    assert decide(ratio, p, Thresholds(), interval) == verdict


def test_an_undecided_comparison_says_what_would_decide_it():
    rng = random.Random(3)
    a = [rng.lognormvariate(0, 0.3) for _ in range(8)]
    b = [rng.lognormvariate(0, 0.3) * 1.03 for _ in range(8)]
    undecided = compare_samples(a, b)
    assert undecided.verdict == Verdict.UNDECIDED
    assert "reaches beyond the no-change band ×0.952–×1.05" in what_would_decide(undecided, Thresholds())
    steady = [1.0 + 0.001 * i for i in range(30)]
    same = compare_samples(steady, steady)
    assert same.verdict == Verdict.UNCHANGED and what_would_decide(same, Thresholds()) == "", "decided"


def test_bootstrap_interval_is_deterministic_and_brackets_the_shift():
    rng = random.Random(7)
    a = [rng.lognormvariate(0, 0.05) for _ in range(30)]
    b = [rng.lognormvariate(0, 0.05) * 1.3 for _ in range(30)]
    first = bootstrap_ratio_interval(a, b)
    assert first == bootstrap_ratio_interval(a, b)
    low, high = first
    assert low < 1.3 < high and high / low < 1.15
    assert bootstrap_ratio_interval(a, b, seed=1) != first, "the seed is what makes it repeatable"


def test_noisy_and_short_series_are_flagged_not_hidden():
    steady = [100, 101, 99, 100, 102, 98, 100, 101]
    noisy = [50, 100, 150, 200, 100, 60, 170, 90]
    result = compare_samples(steady, noisy)
    assert result.noisy and any("B: IQR" in flag for flag in result.flags)
    short = compare_samples([1, 2, 3], [1, 2, 3])
    assert "A: only 3 samples" in short.flags and "B: only 3 samples" in short.flags


def test_few_samples_with_a_big_ratio_are_inconclusive():
    result = compare_samples([10, 11, 12], [20, 21, 22])
    assert result.ratio == pytest.approx(21 / 11)
    assert result.verdict == Verdict.INCONCLUSIVE and result.p_value == pytest.approx(0.1)


# --- A/A and injected slowdowns: does the rule hold up on data with known truth? ---

FAST = Thresholds(resamples=200)  # the verdict does not use the interval; keep these tests quick


def lognormal(rng: random.Random, n: int, sigma: float) -> list[float]:
    return [1e6 * rng.lognormvariate(0, sigma) for _ in range(n)]


def test_aa_same_distribution_gives_no_verdicts():
    # One report's worth of metrics (40), each an A/A pair at the noise of a quiet
    # (relative IQR ≈ 7 %) or a busy machine (≈ 27 %, as eager wall times in the fixtures).
    rng = random.Random(2026)
    trials = [
        compare_samples(lognormal(rng, 30, sigma), lognormal(rng, 30, sigma), FAST)
        for sigma in (0.05, 0.2)
        for _ in range(20)
    ]
    assert any(abs(math.log(t.ratio)) >= math.log(1.1) for t in trials), "the effect-size gate alone would fail"
    assert [t.verdict for t in trials if t.verdict in (Verdict.FASTER, Verdict.SLOWER)] == []


def test_aa_false_positive_rate_stays_near_alpha_even_in_heavy_noise():
    # Relative IQR ≈ 40 %: a third of the ratios pass ×1.1.  At p < 0.002 about 2 in
    # 1000 A/A comparisons pass both gates by construction of the test (6 is the 99th
    # percentile of Poisson(2)); p-values computed too small are caught more sharply
    # by the uniformity test below.
    rng = random.Random(2027)
    trials = [compare_samples(lognormal(rng, 30, 0.3), lognormal(rng, 30, 0.3), FAST) for _ in range(1000)]
    assert sum(abs(math.log(t.ratio)) >= math.log(1.1) for t in trials) > 250
    assert sum(t.verdict in (Verdict.FASTER, Verdict.SLOWER) for t in trials) <= 6


def test_aa_p_values_are_roughly_uniform():
    # A mis-computed p (wrong variance, no continuity correction, one-sided) shows up here.
    rng = random.Random(11)
    p_values = [mann_whitney_u(lognormal(rng, 30, 0.3), lognormal(rng, 30, 0.3)).p_value for _ in range(1000)]
    below = sum(p < 0.05 for p in p_values) / len(p_values)
    assert 0.025 < below < 0.075
    assert 0.4 < sum(p < 0.5 for p in p_values) / len(p_values) < 0.6


def test_injected_twenty_percent_slowdown_is_flagged():
    # Noise of a quiet machine (relative IQR ≈ 7 %), 30 samples a side, as a default run takes.
    rng = random.Random(5)
    verdicts = []
    for _ in range(100):
        a, b = lognormal(rng, 30, 0.05), lognormal(rng, 30, 0.05)
        verdicts.append(compare_samples(a, [x * 1.2 for x in b], FAST).verdict)
    assert verdicts.count(Verdict.SLOWER) == 100


def test_injected_slowdown_on_real_samples():
    # compare_samples is the rule for the samples of one process: those of a result measured in one process.
    wall = [s["wall_ns"] for s in v1_result("async_dispatch-0.12.0.1")["programs"]["jit"]["samples"]]
    assert compare_samples(wall, wall).verdict == Verdict.UNCHANGED
    assert compare_samples(wall, [x * 1.2 for x in wall]).verdict == Verdict.SLOWER
    assert compare_samples(wall, [x / 1.2 for x in wall]).verdict == Verdict.FASTER
    assert compare_samples(wall, wall).verdict == UNCHANGED
    assert compare_samples(wall, [x * 1.2 for x in wall]).verdict == SLOWER
    assert compare_samples(wall, [x / 1.2 for x in wall]).verdict == FASTER


def test_pooled_samples_count_as_one_process_a_side():
    result = compare_samples([100.0, 110.0, 120.0, 130.0, 140.0], [100.0, 101.0, 102.0])
    assert result.processes == (1, 1) and result.test == MANN_WHITNEY_POOLED
    a, b = result.spreads
    assert (a.samples, b.samples) == (5, 3)
    assert a.within == pytest.approx(20 / 120) and math.isnan(a.between)
