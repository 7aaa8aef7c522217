"""Is B faster or slower than A?  The verdict's vocabulary, thresholds and result, and
the rule for two sets of raw samples from one process each.

Cells measured in several processes are judged by ``processes.compare_processes``
(Welch's t-test on log process medians), which accounts for the level each process
sets; the rule below treats every sample as an independent draw, which samples of one
process are not.

The rule is asv's: a change is reported only when the ratio of medians passes a
minimum effect size (asv's ×1.10; here ×1.05, see ``Thresholds``) AND a two-sided Mann–Whitney U test rejects
"same distribution" at p < 0.002.  The test has no distributional assumptions,
which suits timings (skewed, with outliers).  A bootstrap confidence interval of
the ratio of medians says how precisely the ratio is known.  Everything here is
pure Python (no numpy, no scipy) so that the report needs nothing beyond the
standard library; results are deterministic (the bootstrap is seeded).
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from harness.stats import Summary, summarize


class Verdict(StrEnum):
    """What a comparison of B against A says (lower is better): three outcomes, never confused.

    *changed* (FASTER, SLOWER): the ratio is beyond the factor and the test rejects "no
    difference" at the significance level; *unchanged*: the whole confidence interval of
    the ratio lies inside the no-change band ×1/factor…×factor, positive evidence of no
    change; *undecided*: neither, so more measurement could still decide (too few
    processes, a wide interval, separate runs measured under load).
    """

    FASTER = "faster"
    SLOWER = "slower"
    UNCHANGED = "unchanged"
    UNDECIDED = "undecided"
    INCONCLUSIVE = "undecided"  # the older name of UNDECIDED


# Up to this many values a side (and without ties) the exact distribution of U is
# used.  The normal approximation is conservative in the tail that matters: at 20 a
# side it overstates p-values near 0.002 by 10–60 %.
EXACT_MAX_N = 50

# The test behind a comparison's p-value, as reports name it.
MANN_WHITNEY_POOLED = "Mann–Whitney U on pooled samples"
WELCH_LOG_MEDIANS = "Welch's t on log process medians"


@dataclass(frozen=True)
class Thresholds:
    # Minimum effect size: half asv's ×1.10.  The test over processes (with the spread between invocations
    # where the sides were measured apart) carries the burden of proof; a true ×1.10 change measures
    # below ×1.10 about half the time, so a gate at ×1.10 could never flag it reliably.
    factor: float = 1.05
    alpha: float = 0.002  # significance level of the test (as asv's for Mann–Whitney U)
    max_relative_iqr: float = 0.2  # above it a side is flagged noisy (within its processes)
    min_samples: int = 5  # below it a side is flagged as too short
    min_processes: int = 3  # below it, on either side, the process rule gives no faster/slower verdict
    max_between_cv: float = 0.1  # above it a side's process medians are flagged as spread apart
    # Log standard deviation of a whole invocation's level, allowed for between separate invocations
    # (``--invocation-spread``; ``calibrate`` estimates a machine's): see docs/statistics.md, "Separate runs".  0.10:
    # A/A runs of the quick catalogue on a 2-core VM estimated 0.04–0.06 one day and 0.10–0.12 the next.
    invocation_spread: float = 0.10
    confidence: float = 0.99  # of the bootstrap interval of the ratio
    # Metric names (a script's own numbers, ``json.items_per_s``) where a higher figure is the better one.
    higher_is_better: tuple[str, ...] = ()
    resamples: int = 2000
    seed: int = 20261129


DEFAULT_THRESHOLDS = Thresholds()


@dataclass(frozen=True)
class MannWhitney:
    u: float  # U of the first sample: how many (a, b) pairs have a > b, ties counting ½
    p_value: float  # two-sided
    method: str  # "exact" or "normal"


@dataclass(frozen=True)
class SideSpread:
    """How one side of a comparison was measured and how much it scatters."""

    processes: int
    samples: int  # over all its processes
    between: float  # coefficient of variation of the process medians; nan with one process
    within: float  # median over its processes of each process's IQR / median
    loaded: int = 0  # processes measured while other work loaded the machine


@dataclass(frozen=True)
class Comparison:
    """B against A.  ``baseline``/``candidate`` summarise what the test compared: the pooled samples
    (``compare_samples``) or the process medians (``compare_processes``); their median is the side's figure."""

    baseline: Summary
    candidate: Summary
    ratio: float  # candidate figure / baseline figure: above 1 is slower
    ci_low: float
    ci_high: float
    p_value: float
    verdict: Verdict
    flags: tuple[str, ...]  # reasons to distrust the numbers (noise, too few samples)
    # Set by the rule over processes; a comparison of pooled samples counts as one process a side.
    baseline_spread: SideSpread | None = None
    candidate_spread: SideSpread | None = None
    test: str = MANN_WHITNEY_POOLED
    # The log standard deviation of a whole invocation's level the test allowed for: 0 when the sides were
    # interleaved in one run (or pooled), above 0 when they come from separate invocations.
    invocation_spread: float = 0.0
    # The level the test was held to: the thresholds' alpha, or a look's share of it where the sides were
    # measured until decided (``harness.analysis.spending``).
    level: float = math.nan

    @property
    def noisy(self) -> bool:
        return bool(self.flags)

    @property
    def spreads(self) -> tuple[SideSpread, SideSpread]:
        """How each side (A, B) was measured and scatters; pooled samples count as one process."""
        return (
            self.baseline_spread or SideSpread(1, self.baseline.n, math.nan, self.baseline.relative_iqr),
            self.candidate_spread or SideSpread(1, self.candidate.n, math.nan, self.candidate.relative_iqr),
        )

    @property
    def processes(self) -> tuple[int, int]:
        """Processes measured on each side (A, B)."""
        a, b = self.spreads
        return a.processes, b.processes


def _ranks(values: Sequence[float]) -> list[float]:
    """Ranks 1..n in the order given, ties sharing the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in range(start, end + 1):
            ranks[order[i]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


@functools.lru_cache(maxsize=64)
def u_distribution(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m+n, m) orderings of two tie-free samples give U = 0, 1, ..., m·n.

    These are the coefficients of the Gaussian binomial [m+n choose m](q), the product
    over i = 1..m of (1 - q^(n+i)) / (1 - q^i); truncating at degree m·n is exact.
    """
    top = m * n
    counts = [1] + [0] * top
    for i in range(1, m + 1):
        shift = n + i
        for k in range(top, shift - 1, -1):  # multiply by (1 - q^shift)
            counts[k] -= counts[k - shift]
        for k in range(i, top + 1):  # divide by (1 - q^i)
            counts[k] += counts[k - i]
    return tuple(counts)


def mann_whitney_u(a: Sequence[float], b: Sequence[float], method: str = "auto") -> MannWhitney:
    """Two-sided Mann–Whitney U test of ``a`` against ``b``.

    ``auto`` is exact when both samples are small and have no ties; otherwise the
    normal approximation with the tie correction of the variance and a continuity
    correction (what scipy.stats.mannwhitneyu does with ``method="asymptotic"``).
    ``exact`` ignores ties; ``normal`` forces the approximation.
    """
    if method not in ("auto", "exact", "normal"):
        raise ValueError(f"unknown method {method!r}")
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        raise ValueError("the Mann–Whitney U test needs two non-empty samples")
    pooled = [*a, *b]
    ranks = _ranks(pooled)
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u_big = max(u1, n1 * n2 - u1)
    tie_sizes = [t for t in Counter(pooled).values() if t > 1]
    if method == "exact" or (method == "auto" and not tie_sizes and max(n1, n2) <= EXACT_MAX_N):
        counts = u_distribution(n1, n2)
        # P(U >= u_big) = P(U <= n1·n2 - u_big) by symmetry; doubled for two sides.
        tail = sum(counts[: int(n1 * n2 - u_big) + 1])
        return MannWhitney(u1, min(1.0, 2 * tail / math.comb(n1 + n2, n1)), "exact")
    n = n1 + n2
    tie_term = sum(t**3 - t for t in tie_sizes) / (n * (n - 1)) if n > 1 else 0.0
    variance = n1 * n2 / 12 * ((n + 1) - tie_term)
    if variance <= 0:  # every value equal: nothing distinguishes the samples
        return MannWhitney(u1, 1.0, "normal")
    z = (u_big - n1 * n2 / 2 - 0.5) / math.sqrt(variance)
    return MannWhitney(u1, min(1.0, math.erfc(z / math.sqrt(2))), "normal")


def smallest_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p the test can give for these sample sizes (no ties, full separation)."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


# Above this many samples, a resample's median is drawn directly rather than by drawing every sample: the cost
# of a bootstrap stays linear in the samples (one sort), and below it every interval is what it always was.
DIRECT_MEDIAN_ABOVE = 1000


def resampled_median(values: Sequence[float], rng: random.Random) -> float:
    """The median of ``len(values)`` draws with replacement from ``values`` (sorted already, when over
    ``DIRECT_MEDIAN_ABOVE``: see ``for_resampling``).

    For many values it is drawn in one step: the median of n draws from the values is their empirical quantile
    at the median of n uniform draws, which is Beta((n+1)/2, (n+1)/2) distributed (exactly so for odd n)."""
    n = len(values)
    if n <= DIRECT_MEDIAN_ABOVE:
        return statistics.median(rng.choices(values, k=n))
    u = rng.betavariate((n + 1) / 2, (n + 1) / 2)
    return values[min(n - 1, max(0, math.ceil(u * n) - 1))]


def for_resampling(values: Sequence[float]) -> Sequence[float]:
    """``values`` as ``resampled_median`` takes them: sorted once where it draws medians directly, else as they are."""
    return sorted(values) if len(values) > DIRECT_MEDIAN_ABOVE else values


def _bootstrap_medians(values: Sequence[float], resamples: int, rng: random.Random) -> list[float]:
    prepared = for_resampling(values)
    return [resampled_median(prepared, rng) for _ in range(resamples)]


def bootstrap_ratio_interval(
    baseline: Sequence[float],
    candidate: Sequence[float],
    *,
    confidence: float = Thresholds.confidence,
    resamples: int = Thresholds.resamples,
    seed: int = Thresholds.seed,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(candidate) / median(baseline).

    Each side is resampled with its own seeded generator, so the interval is the same
    on every run and the two sides are never resampled in lockstep.
    """
    base = _bootstrap_medians(baseline, resamples, random.Random(seed))
    cand = _bootstrap_medians(candidate, resamples, random.Random(seed + 1))
    return percentile_ratio_interval(base, cand, confidence)


def percentile_ratio_interval(base: Sequence[float], cand: Sequence[float], confidence: float) -> tuple[float, float]:
    """The central ``confidence`` share of the ratios of paired bootstrap figures; nan where a base figure is 0."""
    if min(base) <= 0:
        return math.nan, math.nan
    ratios = sorted(c / b for b, c in zip(base, cand, strict=True))
    tail = (1 - confidence) / 2
    low = ratios[int(tail * (len(ratios) - 1))]
    high = ratios[math.ceil((1 - tail) * (len(ratios) - 1))]
    return low, high


def noise_flags(summary: Summary, side: str, thresholds: Thresholds) -> list[str]:
    flags = []
    if summary.n < thresholds.min_samples:
        flags.append(f"{side}: only {summary.n} sample{'s' if summary.n != 1 else ''}")
    if summary.relative_iqr > thresholds.max_relative_iqr:
        flags.append(f"{side}: IQR {summary.relative_iqr:.0%} of median")
    return flags


def within_band(low: float, high: float, thresholds: Thresholds) -> bool:
    """Whether an interval of the ratio lies inside the no-change band ×1/factor…×factor (positive evidence)."""
    return 1 / thresholds.factor <= low and high <= thresholds.factor


def past_factor(ratio: float, thresholds: Thresholds) -> Verdict | None:
    """Which way a ratio points once it is past the factor (above 1 is slower), or None inside the band (or NaN)."""
    if ratio >= thresholds.factor:
        return Verdict.SLOWER
    if ratio <= 1 / thresholds.factor:
        return Verdict.FASTER
    return None


def decide(
    ratio: float, p_value: float, thresholds: Thresholds, interval: tuple[float, float] = (math.nan, math.nan)
) -> Verdict:
    """Changed when beyond the factor and significant; unchanged when the interval lies inside the band;
    undecided otherwise."""
    direction = past_factor(ratio, thresholds)
    if direction is not None and p_value < thresholds.alpha:
        return direction
    return Verdict.UNCHANGED if within_band(*interval, thresholds) else Verdict.UNDECIDED


def what_would_decide(comparison: Comparison, thresholds: Thresholds) -> str:
    """Why a comparison is undecided, and what would decide it; empty when it is decided."""
    if comparison.verdict != Verdict.UNDECIDED:
        return ""
    a, b = comparison.processes
    if comparison.test == WELCH_LOG_MEDIANS and min(a, b) < thresholds.min_processes:
        return f"undecided: {a} and {b} processes, fewer than the {thresholds.min_processes} a side a verdict needs"
    if math.isnan(comparison.ci_low):
        return "undecided: no interval of the ratio could be formed"
    band = f"×{1 / thresholds.factor:.3g}–×{thresholds.factor:.3g}"
    return (
        f"undecided: the {thresholds.confidence:.0%} interval ×{comparison.ci_low:.3g}–×{comparison.ci_high:.3g} "
        f"reaches beyond the no-change band {band} and the test does not reject 'no change'; more processes of "
        "both sides, measured together, would narrow it"
    )


def compare_samples(
    baseline: Sequence[float], candidate: Sequence[float], thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> Comparison:
    """Ratio, interval, test and verdict of ``candidate`` against ``baseline`` (lower is better)."""
    base, cand = summarize(baseline), summarize(candidate)
    flags = noise_flags(base, "A", thresholds) + noise_flags(cand, "B", thresholds)
    if base.median <= 0:
        return Comparison(
            base, cand, math.nan, math.nan, math.nan, math.nan, Verdict.UNDECIDED, (*flags, "A: zero median")
        )
    ratio = cand.median / base.median
    low, high = bootstrap_ratio_interval(
        baseline, candidate, confidence=thresholds.confidence, resamples=thresholds.resamples, seed=thresholds.seed
    )
    p_value = mann_whitney_u(baseline, candidate).p_value
    verdict = decide(ratio, p_value, thresholds, (low, high))
    return Comparison(base, cand, ratio, low, high, p_value, verdict, tuple(flags), level=thresholds.alpha)


# The names (and type) callers used before the Verdict enum.
FASTER: str = Verdict.FASTER
SLOWER: str = Verdict.SLOWER
UNCHANGED: str = Verdict.UNCHANGED
UNDECIDED: str = Verdict.UNDECIDED
INCONCLUSIVE: str = Verdict.UNDECIDED
