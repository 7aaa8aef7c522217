"""Is B faster or slower than A, when each side was measured in several processes?  The process is
the unit (each sets a level no sample within it can reveal): each counts as the median of its
samples; the test is Welch's t on the log process medians (with ``invocation_spread``, the level
of a whole run, where the sides come from separate runs), the interval a hierarchical bootstrap
(processes, then samples within each).  docs/statistics.md is the rule as users read it, with the
measurements behind each choice.  Pure Python and deterministic (the bootstrap is seeded).
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.rank_test import mann_whitney_p, smallest_p
from harness.analysis.significance import (
    DEFAULT_THRESHOLDS,
    WELCH_LOG_MEDIANS,
    Comparison,
    CostDetail,
    SideSpread,
    Thresholds,
    Verdict,
    past_factor,
)
from harness.analysis.t_test import WelchTest, t_quantile, welch_t_test
from harness.stats import Summary, summarize

Processes = Sequence[Sequence[float]]  # one inner sequence of raw samples per process


def _measured(processes: Processes, side: str) -> list[Sequence[float]]:
    """The processes that took samples: one that crashed before its first has nothing to say."""
    measured = [samples for samples in processes if len(samples)]
    if not measured:
        raise ValueError(f"{side} has no samples in any process")
    return measured


def process_medians(processes: Processes) -> list[float]:
    return [statistics.median(samples) for samples in processes if len(samples)]


def side_spread(processes: Processes, loaded: int = 0) -> SideSpread:
    """Process count, sample count, spread between process medians and within processes."""
    measured = _measured(processes, "the side")
    if not 0 <= loaded <= len(measured):
        raise ValueError(f"{loaded} loaded processes out of {len(measured)}")
    medians = process_medians(measured)
    centre = statistics.fmean(medians)
    between = statistics.stdev(medians) / centre if len(medians) > 1 and centre > 0 else math.nan
    within = statistics.median(summarize(samples).relative_iqr for samples in measured)
    return SideSpread(len(measured), sum(map(len, measured)), between, within, loaded)


# Above this many samples, a resample's median is drawn directly rather than by drawing every
# sample: the cost of a bootstrap stays linear in the samples (one sort), and below it every
# interval is what it always was.
DIRECT_MEDIAN_ABOVE = 1000


def resampled_median(values: Sequence[float], rng: random.Random) -> float:
    """The median of ``len(values)`` draws with replacement from ``values`` (sorted already, when
    over ``DIRECT_MEDIAN_ABOVE``: see ``for_resampling``).

    For many values it is drawn in one step: the median of n draws from the values is their
    empirical quantile at the median of n uniform draws, which is Beta((n+1)/2, (n+1)/2) distributed
    (exactly so for odd n)."""
    n = len(values)
    if n <= DIRECT_MEDIAN_ABOVE:
        return statistics.median(rng.choices(values, k=n))
    u = rng.betavariate((n + 1) / 2, (n + 1) / 2)
    return values[min(n - 1, max(0, math.ceil(u * n) - 1))]


def for_resampling(values: Sequence[float]) -> Sequence[float]:
    """``values`` as ``resampled_median`` takes them: sorted once if it draws medians directly."""
    return sorted(values) if len(values) > DIRECT_MEDIAN_ABOVE else values


def percentile_ratio_interval(
    base: Sequence[float], cand: Sequence[float], confidence: float
) -> tuple[float, float]:
    """The central ``confidence`` share of paired bootstrap figures' ratios; nan if a base is 0."""
    if min(base) <= 0:
        return math.nan, math.nan
    ratios = sorted(c / b for b, c in zip(base, cand, strict=True))
    tail = (1 - confidence) / 2
    low = ratios[int(tail * (len(ratios) - 1))]
    high = ratios[math.ceil((1 - tail) * (len(ratios) - 1))]
    return low, high


def _bootstrap_figures(
    processes: Sequence[Sequence[float]], resamples: int, rng: random.Random
) -> list[float]:
    """Each resample's figure: the median of the drawn processes' resampled medians.

    ``rng.choices`` and each process's ``statistics.median`` written out (the same draws from
    ``rng.random``, in the same order, and the same arithmetic, so the same figures): for a few
    samples a process their calls cost more than the draws, and a sweep bootstraps hundreds of
    comparisons."""
    figures = []
    draw, floor = rng.random, math.floor
    prepared = [for_resampling(p) for p in processes]
    count = len(prepared)
    for _ in range(resamples):
        chosen = [prepared[floor(draw() * count)] for _ in range(count)]
        medians = []
        for values in chosen:
            n = len(values)
            if n > DIRECT_MEDIAN_ABOVE:
                medians.append(resampled_median(values, rng))
                continue
            drawn = sorted([values[floor(draw() * n)] for _ in range(n)])
            half = n // 2
            medians.append(drawn[half] if n % 2 else (drawn[half - 1] + drawn[half]) / 2)
        figures.append(statistics.median(medians))  # once a resample: not where the time goes
    return figures


def hierarchical_bootstrap_interval(
    baseline: Processes,
    candidate: Processes,
    *,
    confidence: float = Thresholds.confidence,
    resamples: int = Thresholds.resamples,
    seed: int = Thresholds.seed,
) -> tuple[float, float]:
    """Percentile interval of the ratio of figures (median of process medians), B over A.

    Each resample draws a side's processes with replacement, then within each drawn process its
    samples with replacement.  Each side has its own seeded generator, so the interval is the same
    on every run and the sides are never drawn in lockstep.
    """
    base = _seeded_figures(_measured(baseline, "side A"), resamples, seed)
    cand = _seeded_figures(_measured(candidate, "side B"), resamples, seed + 1)
    return percentile_ratio_interval(base, cand, confidence)


# A side's figures are a function of its samples, the resamples and the seed: where the same samples
# are compared again as the same side (a triage confirming a step on stored results, a report of
# what a sweep compared, releases whose results are the same), they are drawn once.  Keyed by a
# digest of the samples' exact repr, so an entry keeps its figures alone; the last 128 are kept.
_KEPT_FIGURES = 128
_figures_by_samples: OrderedDict[tuple[bytes, int, int], tuple[float, ...]] = OrderedDict()


def _seeded_figures(
    processes: Sequence[Sequence[float]], resamples: int, seed: int
) -> tuple[float, ...]:
    """``_bootstrap_figures`` drawn with ``random.Random(seed)``, once for the same samples."""
    key = (hashlib.blake2b(repr([list(p) for p in processes]).encode()).digest(), resamples, seed)
    figures = _figures_by_samples.get(key)
    if figures is None:
        figures = tuple(_bootstrap_figures(processes, resamples, random.Random(seed)))
        _figures_by_samples[key] = figures
        if len(_figures_by_samples) > _KEPT_FIGURES:
            _figures_by_samples.popitem(last=False)
    else:
        _figures_by_samples.move_to_end(key)
    return figures


def process_flags(spread: SideSpread, side: str, thresholds: Thresholds) -> list[str]:
    flags = []
    if spread.between > thresholds.max_between_cv:
        flags.append(f"{side}: process medians vary by {spread.between:.0%}")
    if spread.within > thresholds.max_relative_iqr:
        flags.append(f"{side}: IQR {spread.within:.0%} of median within processes")
    if spread.loaded:
        flags.append(f"{side}: {spread.loaded} of {spread.processes} processes measured under load")
    return flags


def _widened(
    ratio: float, interval: tuple[float, float], spread: float, confidence: float
) -> tuple[float, float]:
    """The interval with a level difference (log standard deviation ``spread``) in quadrature."""
    low, high = interval
    if not spread or math.isnan(low) or min(low, high, ratio) <= 0:
        return interval
    extra = statistics.NormalDist().inv_cdf((1 + confidence) / 2) * spread
    below, above = math.log(ratio / low), math.log(high / ratio)
    low = ratio / math.exp(math.hypot(max(below, 0.0), extra))
    return low, ratio * math.exp(math.hypot(max(above, 0.0), extra))


# A change that barely passed its test reads larger than it is: of all the runs of a change its
# processes can only just see, those that pass are the ones whose estimate came out high (and
# measuring until decided stops on them).
UPPER_ESTIMATE = "the ratio is an upper estimate: it barely passed the test"
# How far past the test's critical t a change must be for its ratio to stand as measured: at 2
# standard errors the test would pass in about 98 % of runs of the effect read, so passing says
# little about which came out high.
CLEAR_MARGIN = 2.0


def _barely(test: WelchTest, level: float) -> bool:
    """Whether a change that passed at ``level`` passed near its limit (``UPPER_ESTIMATE``), on the
    test's t scale (with 10 processes a side a t of 9 is clear, its p only 1e-7)."""
    if not math.isfinite(test.t) or not test.df > 0:
        return False
    return abs(test.t) < t_quantile(1 - level / 2, test.df) + CLEAR_MARGIN


def welch_margin(test: WelchTest, confidence: float) -> float:
    """The factor Welch's ``confidence`` interval of the log-median shift reaches either way."""
    if math.isnan(test.difference) or not test.df > 0:
        return math.nan
    if not test.error:  # no spread on either side: the shift is known exactly
        return math.exp(abs(test.difference))
    return math.exp(abs(test.difference) + t_quantile((1 + confidence) / 2, test.df) * test.error)


def _one_value(processes: Sequence[Sequence[float]]) -> bool:
    return len({value for samples in processes for value in samples}) == 1


def _from_zero(base: Summary, cand: Summary) -> bool:
    """0 on side A and above 0 on side B: no ratio, the clearest change there is."""
    return base.median == 0 and cand.median > 0


def _constant(found: Comparison, thresholds: Thresholds) -> Comparison:
    """Each side gave one value in every sample of every process: what changed is known exactly, so
    no test, interval or allowance for separate runs applies (a Welch margin of an invocation spread
    would read "within ±44 %" for a number printed as 30.5 in all six processes).  Past the factor
    it is a change, else unchanged; from zero or to zero, always a change."""
    base, cand = found.baseline, found.candidate
    # From zero the ratio is infinite: past any factor, shown as "from 0" (``units.format_ratio``).
    if base.median == cand.median:
        ratio = 1.0
    else:
        ratio = math.inf if _from_zero(base, cand) else cand.median / base.median
    margin = max(ratio, 1 / ratio) if 0 < ratio < math.inf else math.inf
    return replace(
        found,
        p_value=1.0 if ratio == 1 else 0.0,
        verdict=past_factor(ratio, thresholds) or Verdict.UNCHANGED,
        level=thresholds.alpha,
        constant=True,
        cost=CostDetail(ratio, ratio, ratio, margin),
    )


def compare_processes(
    baseline: Processes,
    candidate: Processes,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    *,
    loaded: tuple[int, int] = (0, 0),
    invocation_spread: float = 0.0,
    interval: bool = True,
) -> Comparison:
    """Ratio, interval, test and verdict of ``candidate`` against ``baseline`` (lower is better),
    each a list of processes' raw samples (a process without any left out).  ``loaded``: processes
    measured under load, per side, kept and flagged.  The verdict never depends on the bootstrap
    interval: without ``interval`` (a look of the runner, a simulation) it is left out (nan)."""
    if not invocation_spread >= 0:
        raise ValueError(
            f"the spread between invocations cannot be negative, not {invocation_spread}"
        )
    a, b = _measured(baseline, "side A"), _measured(candidate, "side B")
    a_medians, b_medians = process_medians(a), process_medians(b)
    base, cand = summarize(a_medians), summarize(b_medians)
    a_spread, b_spread = side_spread(a, loaded[0]), side_spread(b, loaded[1])
    flags = process_flags(a_spread, "A", thresholds) + process_flags(b_spread, "B", thresholds)
    enough = min(len(a), len(b)) >= max(2, thresholds.min_processes)
    if not enough:
        flags.insert(0, f"too few processes ({len(a)} and {len(b)}) for a verdict")
    spreads = (a_spread, b_spread, WELCH_LOG_MEDIANS, invocation_spread)
    # what every outcome shares: each fills in its figures
    undecided = Comparison(
        base, cand, math.nan, Verdict.UNDECIDED, tuple(flags), *spreads, cost=CostDetail(math.nan)
    )
    if (
        enough
        and _one_value(a)
        and _one_value(b)
        and (base.median > 0 or base.median == cand.median or _from_zero(base, cand))
    ):
        return _constant(undecided, thresholds)
    if base.median <= 0:
        flag = "A: zero median" if base.median == 0 else "A: negative median"
        return replace(undecided, flags=(*flags, flag))
    ratio = cand.median / base.median
    low = high = math.nan
    if interval:
        bootstrap = hierarchical_bootstrap_interval(
            a,
            b,
            confidence=thresholds.confidence,
            resamples=thresholds.resamples,
            seed=thresholds.seed,
        )
        low, high = _widened(
            ratio, bootstrap, math.sqrt(2) * invocation_spread, thresholds.confidence
        )
    positive = min(a_medians) > 0 and min(b_medians) > 0
    p_value = margin = rank_p = math.nan
    test = None
    if positive and min(len(a), len(b)) >= 2:
        test = welch_t_test(
            [math.log(m) for m in a_medians],
            [math.log(m) for m in b_medians],
            known_variance=2 * invocation_spread**2,
        )
        p_value, margin = test.p_value, welch_margin(test, thresholds.confidence)
    if (thresholds.rank_guard or not positive) and not invocation_spread:
        rank_p = mann_whitney_p(a_medians, b_medians)
    if not positive:
        # A cost that fell to 0 on B (a loop no longer run) has no log for Welch's test: its ranks
        # alone decide a change, and nothing says "unchanged" (no margin).
        flags.append("a process median is not positive: the ranks alone decide")
        p_value = rank_p
    # testable: enough processes, every median positive
    testable = enough and not math.isnan(p_value)
    direction = past_factor(ratio, thresholds)
    tested = direction is not None and testable and p_value < thresholds.alpha
    if direction is not None and tested and not rank_p >= thresholds.alpha:
        verdict = direction
        if test is not None and _barely(test, thresholds.alpha):
            flags.append(UPPER_ESTIMATE)
    elif testable and margin <= thresholds.factor:
        verdict = Verdict.UNCHANGED  # no change beyond the factor either way: positive evidence
    else:
        verdict = Verdict.UNDECIDED
    if tested and verdict is Verdict.UNDECIDED:  # why a change past the factor is still undecided
        floor = smallest_p(len(a), len(b))
        below = ""
        if floor >= thresholds.alpha:
            below = f"; {len(a)} and {len(b)} processes cannot go below {floor:.2g}"
        flags.append(
            f"the ranks of the process medians do not pass (Mann–Whitney p={rank_p:.2g}{below})"
        )
    return replace(
        undecided,
        p_value=p_value,
        verdict=verdict,
        flags=tuple(flags),
        level=thresholds.alpha,
        cost=CostDetail(ratio, low, high, margin, rank_p),
    )
