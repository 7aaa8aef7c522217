"""The verdict over processes, on hand-made numbers and on simulated cells with known truth.

The simulations model what separate runs of one release show: each process sits at a
level of its own (log-normal around the cell's true time), its samples tight around
that level.  No JAX, no timing: a seeded generator makes the data.
"""

import math
import random
import statistics
from dataclasses import replace

import pytest

from harness.analysis import processes as processes_module
from harness.analysis.processes import (
    DIRECT_MEDIAN_ABOVE,
    UPPER_ESTIMATE,
    compare_processes,
    for_resampling,
    hierarchical_bootstrap_interval,
    percentile_ratio_interval,
    process_medians,
    resampled_median,
    side_spread,
)
from harness.analysis.significance import WELCH_LOG_MEDIANS, Thresholds, Verdict, past_factor
from harness.analysis.t_test import t_quantile, welch_t_test
from tests.analysis.simulated_runs import binomial_upper

# The verdict does not use the interval: keep the simulations quick.
FAST = Thresholds(resamples=10)
FASTER, SLOWER, UNCHANGED, UNDECIDED = (
    Verdict.FASTER,
    Verdict.SLOWER,
    Verdict.UNCHANGED,
    Verdict.UNDECIDED,
)
VERDICTS = (SLOWER, FASTER)


def pooled_test(a: list[float], b: list[float]) -> tuple[float, Verdict | None]:
    """What a rule that pools every sample of a side would say (the rule this harness does not use):
    the two-sided Mann–Whitney p-value of the pooled samples, and the verdict once past the factor
    and significant."""
    from scipy.stats import mannwhitneyu

    p_value = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    direction = past_factor(statistics.median(b) / statistics.median(a), FAST)
    return p_value, direction if p_value < FAST.alpha else None


def pooled_interval(a: list[float], b: list[float], resamples: int = 2000) -> tuple[float, float]:
    """The percentile bootstrap interval of the ratio of pooled medians."""
    rng_a, rng_b = random.Random(1), random.Random(2)
    base = [resampled_median(a, rng_a) for _ in range(resamples)]
    cand = [resampled_median(b, rng_b) for _ in range(resamples)]
    return percentile_ratio_interval(base, cand, Thresholds().confidence)


def simulated_side(
    rng: random.Random,
    processes: int,
    between: float,
    *,
    within: float = 0.01,
    samples: int = 10,
    scale: float = 1.0,
) -> list[list[float]]:
    """One side of a cell: per process a log-normal level (sd ``between``), then tight samples
    around it."""
    side = []
    for _ in range(processes):
        level = 1e6 * scale * rng.lognormvariate(0, between)
        side.append([level * rng.lognormvariate(0, within) for _ in range(samples)])
    return side


def pooled(side: list[list[float]]) -> list[float]:
    return [x for process in side for x in process]


def steady(level: float, n: int = 7) -> list[float]:
    return [level * (1 + 0.001 * i) for i in range(n)]


# --- the rule on numbers worked out by hand ---


def test_the_figure_is_the_median_of_process_medians():
    a = [[10, 11, 12], [20, 21, 22, 23], [30]]
    b = [[12, 13, 14], [25, 26], [40, 41, 42], [50]]
    result = compare_processes(a, b, FAST)
    assert process_medians(a) == [11, 21.5, 30]
    # B's process medians 13, 25.5, 41, 50: an even count, so the figure is (25.5 + 41) / 2.
    assert (result.baseline.median, result.candidate.median) == (21.5, 33.25)
    assert result.cost.ratio == pytest.approx(33.25 / 21.5)
    assert result.processes == (3, 4) and result.baseline.n == 3
    expected = welch_t_test(
        [math.log(m) for m in (11, 21.5, 30)], [math.log(m) for m in (13, 25.5, 41, 50)]
    )
    assert result.p_value == pytest.approx(expected.p_value)
    assert result.test == WELCH_LOG_MEDIANS


def test_spread_between_and_within_processes():
    side = [[90, 100, 110, 120, 130], [190, 200, 210], [300]]
    spread = side_spread(side, loaded=1)
    medians = [110, 200, 300]
    assert spread.between == pytest.approx(statistics.stdev(medians) / statistics.fmean(medians))
    # Relative IQR per process: 20/110 (inclusive quartiles 100, 120), 10/200, 0 for one sample.
    assert spread.within == pytest.approx(10 / 200)
    assert (spread.processes, spread.samples, spread.loaded) == (3, 9, 1)
    assert math.isnan(side_spread([[1.0, 2.0]]).between), (
        "one process has no spread between processes"
    )


def test_a_clear_change_over_enough_processes_is_a_verdict():
    a = [
        steady(100),
        steady(102),
        steady(99),
        steady(101),
        steady(100.5),
        steady(99.5),
        steady(101.5),
        steady(100.2),
    ]
    b = [
        steady(130),
        steady(129),
        steady(133),
        steady(131),
        steady(128),
        steady(130.5),
        steady(132),
        steady(129.5),
    ]
    assert compare_processes(a, b, FAST).verdict == SLOWER
    assert compare_processes(b, a, FAST).verdict == FASTER
    assert compare_processes(a, a, FAST).verdict == UNCHANGED
    assert compare_processes(a, b, FAST).flags == ()


def test_too_few_processes_is_undecided_never_a_verdict():
    one = [steady(100)]
    five = [steady(200), steady(201), steady(199), steady(202), steady(198)]
    result = compare_processes(one, five, FAST)
    assert result.verdict == UNDECIDED
    assert result.flags[0] == "too few processes (1 and 5) for a verdict"
    assert math.isnan(result.p_value), "one process has no spread to test against"
    close = compare_processes(one, [steady(101)] * 5, FAST)
    assert close.verdict == UNDECIDED and close.noisy, (
        "one process cannot show the absence of a change either"
    )
    two = [steady(100), steady(100.1)]
    assert compare_processes(two, five[:2], FAST).verdict == UNDECIDED, "min_processes is 3"
    unguarded = Thresholds(resamples=10, min_processes=2, rank_guard=False)
    assert compare_processes(two, five[:2], unguarded).verdict == SLOWER, (
        "Welch's test alone passes"
    )
    guarded = compare_processes(two, five[:2], Thresholds(resamples=10, min_processes=2))
    assert guarded.verdict == UNDECIDED, "two and two processes never pass the rank guard"
    assert "2 and 2 processes cannot go below 0.33" in guarded.flags[-1]


def test_a_large_ratio_without_significance_is_undecided_never_unchanged():
    a = [steady(100), steady(180), steady(60)]
    b = [steady(130), steady(70), steady(220)]
    result = compare_processes(a, b, FAST)
    assert result.cost.ratio == pytest.approx(1.3) and result.p_value > 0.1
    assert result.verdict == UNDECIDED, "its interval reaches far beyond the no-change band"
    # Process medians 100.3, 180.54, 60.18: sd 60.5 around a mean of 113.7.
    assert result.flags == ("A: process medians vary by 54%", "B: process medians vary by 54%")


def test_noisy_processes_and_load_are_flagged():
    noisy = [[50, 100, 150, 200, 100, 60, 170, 90]] * 3
    tight = [steady(100)] * 5
    result = compare_processes(tight, noisy, FAST, loaded=(0, 3))
    # Sorted 50 60 90 100 100 150 170 200: inclusive quartiles 82.5 and 155 around a median of 100.
    assert "B: IQR 72% of median within processes" in result.flags
    assert "B: 3 of 3 processes measured under load" in result.flags
    assert not any(flag.startswith("A:") for flag in result.flags)
    assert compare_processes(tight, tight, FAST, loaded=(3, 0)).flags == (
        "A: 3 of 5 processes measured under load",
    )
    with pytest.raises(ValueError):
        compare_processes(tight, tight, FAST, loaded=(6, 0))


def test_processes_without_samples_are_left_out():
    a = [steady(100), [], steady(101), steady(99)]
    result = compare_processes(a, a, FAST)
    assert result.processes == (3, 3)
    with pytest.raises(ValueError, match="side B has no samples"):
        compare_processes(a, [[], []], FAST)


def test_a_cost_that_fell_to_zero_is_judged_by_its_ranks_alone():
    """No log of 0 for Welch's test: the rank test decides a change where it can, never a "no
    change" (no margin), and a side starting at 0 stays undecided."""
    assert compare_processes([[0, 0]] * 3, [steady(5)] * 3, FAST).verdict == UNDECIDED
    few = compare_processes([steady(5)] * 3, [[0, 0, 0]] * 3, FAST)
    assert few.verdict == UNDECIDED and few.p_value > FAST.alpha, "3 and 3 ranks cannot decide"
    assert "a process median is not positive: the ranks alone decide" in few.flags
    gone = [[0.0, 0.0, 0.0]] * 10
    assert compare_processes([steady(5 + i / 10) for i in range(10)], gone).verdict == FASTER
    half = [steady(5)] * 5 + [[0.0, 0.0]] * 5
    assert compare_processes([steady(5)] * 10, half).verdict == UNDECIDED


# --- the interval ---


def test_hierarchical_interval_is_deterministic_and_sees_the_spread_between_processes():
    rng = random.Random(7)
    a = simulated_side(rng, 5, 0.05)
    b = simulated_side(rng, 5, 0.05, scale=1.3)
    first = hierarchical_bootstrap_interval(a, b)
    processes_module._figures_by_samples.clear()  # drawn afresh, not remembered
    assert first == hierarchical_bootstrap_interval(a, b)
    assert hierarchical_bootstrap_interval(a, b, seed=1) != first
    low, high = first
    figure_ratio = compare_processes(a, b, FAST).cost.ratio
    assert low < figure_ratio < high
    # Pooling the samples hides the spread between processes: its interval is less than half as
    # wide.
    pooled_low, pooled_high = pooled_interval(pooled(a), pooled(b))
    assert math.log(high / low) > 2 * math.log(pooled_high / pooled_low)


def plain_figures(processes, resamples, rng):
    """The bootstrap written with ``rng.choices`` and ``statistics.median``."""
    prepared = [for_resampling(p) for p in processes]
    return [
        statistics.median(resampled_median(p, rng) for p in rng.choices(prepared, k=len(prepared)))
        for _ in range(resamples)
    ]


def test_the_bootstrap_draws_and_figures_as_choices_and_median_would():
    rng = random.Random(21)
    for _ in range(60):
        sizes = rng.choices(
            [1, 2, 3, 9, 10, DIRECT_MEDIAN_ABOVE, DIRECT_MEDIAN_ABOVE + 1], k=rng.randint(1, 11)
        )
        whole = rng.random() < 0.3  # integers too: an even count's median of two is a float
        processes = [
            [rng.randint(1, 40) if whole else rng.lognormvariate(0, 0.3) for _ in range(n)]
            for n in sizes
        ]
        seed = rng.randrange(1000)
        plain = plain_figures(processes, 30, random.Random(seed))
        figures = processes_module._bootstrap_figures(processes, 30, random.Random(seed))
        assert figures == plain and list(map(type, figures)) == list(map(type, plain))


def test_the_same_samples_as_the_same_side_are_drawn_once(monkeypatch):
    drawn = []
    bootstrap = processes_module._bootstrap_figures
    monkeypatch.setattr(
        processes_module,
        "_bootstrap_figures",
        lambda processes, *rest: drawn.append(processes) or bootstrap(processes, *rest),
    )
    rng = random.Random(8)
    a, b = simulated_side(rng, 5, 0.05), simulated_side(rng, 5, 0.05, scale=1.3)
    first = hierarchical_bootstrap_interval(a, b)
    assert len(drawn) == 2
    assert hierarchical_bootstrap_interval([list(p) for p in a], b) == first and len(drawn) == 2
    hierarchical_bootstrap_interval(b, a)
    assert len(drawn) == 4, "as the other side, with that side's seed: drawn again"
    hierarchical_bootstrap_interval(a, b, resamples=100)
    assert len(drawn) == 6


def test_interval_covers_the_truth_as_often_as_it_claims():
    # 80 % intervals over 200 cells with a true ratio of 1.2: coverage far below 80 % would
    # mean the interval ignores a source of spread.  Five processes a side make the
    # percentile bootstrap somewhat narrow, hence the margin.
    rng = random.Random(13)
    thresholds = Thresholds(confidence=0.8, resamples=200)
    covered = 0
    for _ in range(200):
        a, b = simulated_side(rng, 5, 0.05), simulated_side(rng, 5, 0.05, scale=1.2)
        low, high = hierarchical_bootstrap_interval(
            a, b, confidence=thresholds.confidence, resamples=thresholds.resamples
        )
        covered += low <= 1.2 <= high
    assert 0.6 * 200 < covered < 0.95 * 200


# --- is it honest?  A/A cells and real changes, simulated ---


def test_aa_over_processes_gives_almost_no_verdicts_where_pooling_gives_many():
    # 2000 A/A cells, 5 processes a side, process levels scattered by 5 %, samples by 1 %.
    rng = random.Random(2026)
    new_verdicts = new_rejections = pooled_rejections = one_process_verdicts = 0
    trials = 2000
    for _ in range(trials):
        a, b = simulated_side(rng, 5, 0.05), simulated_side(rng, 5, 0.05)
        result = compare_processes(a, b, FAST)
        new_verdicts += result.verdict in VERDICTS
        new_rejections += result.p_value < FAST.alpha
        pooled_rejections += pooled_test(pooled(a), pooled(b))[0] < FAST.alpha
        one_process_verdicts += pooled_test(a[0], b[0])[1] is not None
    assert new_verdicts <= binomial_upper(FAST.alpha, trials), (
        "0.2 %, beyond which 2000 cells show a breach"
    )
    assert new_rejections <= binomial_upper(FAST.alpha, trials), (
        "the test on process medians holds its level"
    )
    # Why: Mann–Whitney on pooled samples takes 50 draws a side where there are 5
    # levels, and rejects "same distribution" in about a third of identical cells
    # (nominally 0.2 %); only the ×1.1 gate keeps most of those from being verdicts.
    assert pooled_rejections >= 0.2 * trials
    # One process a side, as every stored result was measured before processes: the
    # ratio is one level over another, and about a sixth of A/A pairs become verdicts.
    assert one_process_verdicts >= 0.1 * trials


def test_aa_under_load_pooling_gives_verdicts_and_processes_do_not():
    # Another program on the machine scatters process levels by 20 %: the ×1.1 gate no
    # longer protects the pooled rule, and a third of identical cells get a verdict.
    rng = random.Random(2027)
    trials = 300
    new_verdicts = pooled_verdicts = 0
    for _ in range(trials):
        a, b = simulated_side(rng, 5, 0.2), simulated_side(rng, 5, 0.2)
        new_verdicts += compare_processes(a, b, FAST).verdict in VERDICTS
        pooled_verdicts += pooled_test(pooled(a), pooled(b))[1] is not None
    assert new_verdicts <= 0.01 * trials
    assert pooled_verdicts >= 0.15 * trials


def test_a_true_fifteen_percent_slowdown_is_flagged():
    rng = random.Random(5)
    trials = 200
    flagged = sum(
        compare_processes(
            simulated_side(rng, 8, 0.02), simulated_side(rng, 8, 0.02, scale=1.15), FAST
        ).verdict
        == SLOWER
        for _ in range(trials)
    )
    assert flagged >= 0.9 * trials


def test_a_true_speedup_is_flagged_as_faster():
    rng = random.Random(6)
    trials = 100
    flagged = sum(
        compare_processes(
            simulated_side(rng, 8, 0.02), simulated_side(rng, 8, 0.02, scale=1 / 1.15), FAST
        ).verdict
        == FASTER
        for _ in range(trials)
    )
    assert flagged >= 0.9 * trials


# --- separate invocations: each side's whole run sits at a level of its own ---


def test_unchanged_needs_the_margin_the_test_allows_inside_the_factor():
    levels = (1.00, 1.01, 0.99, 1.00, 1.005)
    a = [steady(1e6 * level) for level in levels]
    same = compare_processes(a, [steady(1.005e6 * level) for level in levels], FAST)
    assert (
        same.verdict == UNCHANGED
        and 1 < same.cost.margin < 1.05
        and same.said.startswith("unchanged (within ±")
    )
    spread = [steady(1.005e6 * level) for level in (1.0, 1.2, 0.85, 1.1, 0.9)]
    wide = compare_processes(a, spread, FAST)
    assert wide.verdict == UNDECIDED and wide.cost.margin > 1.05, (
        "the same median, too spread to show no change"
    )
    logs = [[math.log(m) for m in process_medians(side)] for side in (a, spread)]
    test = welch_t_test(*logs)
    shift = abs(test.difference) + t_quantile(0.995, test.df) * test.error
    assert wide.cost.margin == pytest.approx(math.exp(shift)), (
        "the far end of Welch's 99 % interval of the log shift"
    )
    assert wide.said == f"within ±{wide.cost.margin - 1:.0%}", (
        "how much change the data still allow"
    )


def test_the_rank_guard_holds_back_sides_a_two_level_host_split_and_flags_a_barely_passed_ratio():
    fast, slow = (
        [steady(100 * (1 + i / 500)) for i in range(5)],
        [steady(136 * (1 + i / 500)) for i in range(5)],
    )
    split = compare_processes(fast, slow, FAST)
    assert split.p_value < 1e-6 and split.cost.rank_p == pytest.approx(2 / 252), (
        "Welch sees a change; the ranks cannot"
    )
    assert (
        split.verdict == UNDECIDED and "5 and 5 processes cannot go below 0.0079" in split.flags[-1]
    )
    apart = compare_processes(fast, slow, FAST, invocation_spread=0.01)
    assert math.isnan(apart.cost.rank_p), (
        "separate runs are not exchangeable: no guard, their own allowance instead"
    )
    rng = random.Random(4)
    near = [
        compare_processes(
            simulated_side(rng, 20, 0.1), simulated_side(rng, 20, 0.1, scale=1.1), FAST
        )
        for _ in range(60)
    ]
    barely = [c for c in near if c.verdict == SLOWER]
    assert barely and all(UPPER_ESTIMATE in c.flags for c in barely), (
        "a ×1.10 at 10 % spread only passes when it reads high"
    )


def test_a_spread_between_invocations_widens_the_test_and_the_interval():
    levels = (1.00, 1.01, 0.99, 1.00, 1.005, 0.995, 1.002, 1.008)
    a = [steady(1e6 * level) for level in levels]
    b = [steady(1.08e6 * level) for level in levels]
    interleaved = compare_processes(a, b, FAST)
    separate = compare_processes(a, b, FAST, invocation_spread=0.05)
    assert interleaved.verdict == SLOWER and interleaved.invocation_spread == 0.0
    assert separate.verdict == UNDECIDED and separate.invocation_spread == 0.05
    assert separate.cost.ratio == interleaved.cost.ratio and separate.p_value > 0.05
    assert (
        separate.cost.ci_low
        < interleaved.cost.ci_low
        < interleaved.cost.ci_high
        < separate.cost.ci_high
    )
    with pytest.raises(ValueError, match="negative"):
        compare_processes(a, b, FAST, invocation_spread=-0.1)


def test_aa_between_separate_invocations_holds_its_level_only_when_the_spread_is_allowed_for():
    # Each invocation's level drawn with sd 5 %, its processes around it with 2 %: without the
    # allowance many identical pairs get a verdict; with it, almost none.
    rng = random.Random(2028)
    trials = 400
    allowed = ignored = 0
    for _ in range(trials):
        a_level, b_level = rng.lognormvariate(0, 0.05), rng.lognormvariate(0, 0.05)
        a, b = (
            simulated_side(rng, 5, 0.02, scale=a_level),
            simulated_side(rng, 5, 0.02, scale=b_level),
        )
        ignored += compare_processes(a, b, replace(FAST, rank_guard=False)).verdict in VERDICTS
        allowed += compare_processes(a, b, FAST, invocation_spread=0.05).verdict in VERDICTS
    assert ignored >= 0.15 * trials
    assert allowed <= 0.01 * trials


def test_a_large_change_between_separate_invocations_is_still_flagged():
    rng = random.Random(8)
    trials = 100
    flagged = sum(
        compare_processes(
            simulated_side(rng, 5, 0.02, scale=rng.lognormvariate(0, 0.05)),
            simulated_side(rng, 5, 0.02, scale=1.5 * rng.lognormvariate(0, 0.05)),
            FAST,
            invocation_spread=0.05,
        ).verdict
        == SLOWER
        for _ in range(trials)
    )
    assert flagged >= 0.9 * trials


def test_a_number_the_same_in_every_process_is_said_so_not_given_a_margin():
    same = compare_processes([[30.5]] * 3, [[30.5]] * 3, invocation_spread=0.1)
    assert same.constant and same.verdict == UNCHANGED
    assert (same.cost.ratio, same.cost.ci_low, same.cost.ci_high, same.cost.margin) == (
        1.0,
        1.0,
        1.0,
        1.0,
    )
    assert same.said == "the same in all 6 processes"


def test_a_number_that_changed_in_every_process_is_said_from_and_to():
    moved = compare_processes([[12.0, 12.0]] * 3, [[14.0, 14.0]] * 4, invocation_spread=0.1)
    assert moved.constant and moved.verdict == SLOWER and moved.cost.ratio == pytest.approx(14 / 12)
    assert moved.said == "changed from 12 ns to 14 ns in every process"
    small = compare_processes([[100.0]] * 3, [[101.0]] * 3)
    assert small.verdict == UNCHANGED, "inside the factor: no change beyond it, known exactly"
    assert small.said == "changed from 100 ns to 101 ns in every process"


def test_a_number_that_varies_on_one_side_or_too_few_processes_keeps_the_test():
    varies = compare_processes([[30.5]] * 3, [[30.5], [30.6], [30.5]], invocation_spread=0.1)
    assert not varies.constant and varies.said.startswith("within ±")
    few = compare_processes([[30.5]] * 2, [[30.5]] * 2)
    assert not few.constant and few.verdict == UNDECIDED, (
        "two processes cannot show a number never varies"
    )


def test_a_number_from_zero_or_to_zero_in_every_process_is_a_change_with_no_ratio_shown():
    from harness.units import format_ratio

    up = compare_processes([[0.0]] * 5, [[64.0 * 2**20]] * 5)
    assert up.constant and up.verdict == SLOWER and math.isinf(up.cost.ratio)
    assert up.said == "changed from 0 ns to 67.1 ms in every process"
    assert format_ratio(up.cost.ratio) == "from 0"
    down = compare_processes([[64.0]] * 5, [[0.0]] * 5)
    assert down.constant and down.verdict == FASTER and format_ratio(down.cost.ratio) == "to 0"
    still = compare_processes([[0.0]] * 5, [[0.0]] * 5)
    assert still.constant and still.verdict == UNCHANGED
    varies = compare_processes([[0.0]] * 5, [[60.0], [64.0], [61.0], [63.0], [62.0]])
    assert varies.verdict == UNDECIDED and not varies.constant, (
        "from zero to a spread: no test applies"
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
