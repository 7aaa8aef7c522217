"""How small a change a comparison over processes can see, from the spread of their medians.

Welch's test on log process medians flags a change once the log ratio exceeds (t for alpha + t for
the power) standard errors; with K processes a side whose log medians scatter by s, that standard
error is s·√(2/K).  ``calibrate`` quotes the ratio this gives for a machine's A/A runs;
``run --target-ratio`` adds rounds of processes to a cell until the ratio its processes so far give
is small enough.  Both read the spread *within* each side, pooled, so neither depends on how far the
sides' levels are apart.

Which comparisons of sides measured together are still open (``open_comparison``): what the runner
asks before another look.  The design and its levels are ``harness.analysis.spending``'s.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence

from harness.analysis.metrics import ProcessSamples, process_samples
from harness.analysis.processes import process_medians
from harness.analysis.rank_test import smallest_p
from harness.analysis.shapes import compare_counts, shape_of
from harness.analysis.significance import (
    DEFAULT_THRESHOLDS,
    DETECTION_POWER,
    Comparison,
    Shape,
    Thresholds,
    Verdict,
    two_sided_z,
)
from harness.analysis.spending import ALL, at_level
from harness.analysis.statuses import compare_endings, summary_of
from harness.analysis.t_test import t_quantile
from harness.metric_names import MetricKey, names_ending
from harness.store.schema import ProcessRun, RunStatus, Settings
from harness.units import format_p


def detectable_ratio(
    spread: float,
    processes: int,
    thresholds: Thresholds,
    power: float = DETECTION_POWER,
    between: float = 0.0,
) -> float:
    """The smallest ratio flagged in ``power`` of comparisons of two sides of ``processes``
    processes each, whose log process medians scatter with standard deviation ``spread``: Welch's
    test at ``thresholds.alpha`` needs the log ratio to exceed (t for alpha + t for power) standard
    errors; never below the rule's factor. The t quantiles take ``processes`` degrees of freedom,
    not the 2K - 2 of a pooled test: Welch's are estimated from the samples and fall below that, and
    with 2K - 2 a simulated change of this ratio was flagged in only 73 % of comparisons (5
    processes a side), with K in 93 % (5) and 92 % (10).  Too few processes for the rank guard
    (``rank_test.smallest_p`` not below the level) see no change at all: inf. ``between``: the
    log standard deviation of a release's level from one run to the next (shared by its processes,
    so no test inside one run sees it): the ratio another run would flag ``power`` of the time,
    its own ratio scattering by that too."""
    if thresholds.rank_guard and smallest_p(processes, processes) >= thresholds.alpha:
        # sides measured together pass the rank guard from 7 processes a side at 0.002
        return math.inf
    if processes < 2 or not spread > 0:
        return thresholds.factor
    standard_error = spread * math.sqrt(2 / processes)
    bar = t_quantile(1 - thresholds.alpha / 2, processes) * standard_error
    if between > 0:  # another run's ratio scatters by it too, and must still pass the factor
        bar = max(bar, math.log(thresholds.factor))
    scatter = math.sqrt(standard_error**2 + 2 * between**2)
    return max(thresholds.factor, math.exp(bar + t_quantile(power, processes) * scatter))


def log_medians(samples: ProcessSamples) -> list[float]:
    """The logs of a metric's positive process medians: the scale its spreads are measured on."""
    return [math.log(m) for m in process_medians(samples.processes) if m > 0]


def pooled_spreads(
    groups: Iterable[Mapping[MetricKey, ProcessSamples]], kinds: Collection[str] = ()
) -> dict[MetricKey, float]:
    """Per metric (of ``kinds``, or every metric), the standard deviation of log process medians
    within each group (a run, a side), pooled."""
    variances: dict[MetricKey, list[float]] = {}
    for series in groups:
        for key, samples in series.items():
            if kinds and key.kind not in kinds:
                continue
            logs = log_medians(samples)
            if len(logs) >= 2:
                variances.setdefault(key, []).append(statistics.variance(logs))
    return {key: math.sqrt(sum(found) / len(found)) for key, found in variances.items()}


def detectable_in_records(
    sides: Sequence[Sequence[ProcessRun]], kinds: Collection[str] = ()
) -> float | None:
    """The ratio a comparison of the processes a cell in progress has finished ok on each side (the
    runner's view) would flag reliably, median over the metrics (of ``kinds``, e.g. only wall times,
    or all); a cell of one side will be compared with another run's, where the rank guard does not
    apply. None while any side has fewer than two finished processes (no spread to read yet), or no
    metric is of ``kinds``."""
    thresholds = dataclasses.replace(DEFAULT_THRESHOLDS, rank_guard=len(sides) > 1)
    fewest = min((len(processes) for processes in sides), default=0)
    spreads = pooled_spreads((process_samples(processes) for processes in sides), kinds)
    if fewest < 2 or not spreads:
        return None
    return statistics.median(
        detectable_ratio(spread, fewest, thresholds) for spread in spreads.values()
    )


# Below this chance that the last look would decide, at the effect read now, a comparison is not
# worth more looks. Chosen by simulation (benchmarks/verdict_simulation.py): 0.1, with comparisons
# whose ratio fell inside the factor closed as well (the rule before), lost a true ×1.10 at 10 %
# spread at the first look in over a third of runs.
MIN_POWER = 0.01


def is_open(
    comparison: Comparison,
    mode: str,
    thresholds: Thresholds,
    last_look: tuple[int, float] | None = None,
) -> bool:
    """Whether more processes could still decide what this comparison has not.

    In "changes" mode a comparison is open while it is undecided and its trend could still get
    there: were the effect what it reads now, the test at the last look (``last_look``: processes a
    side, and its level) would pass in at least ``MIN_POWER`` of runs (the test's z grows as the
    square root of the processes).  A trend that even the most processes would likely leave
    insignificant is noise more looks would only pay for (stopping for futility can only lower the
    false-alarm rate).  A ratio inside the factor is no reason to stop: a true ×1.10 reads below
    ×1.05 at a first look of 5 processes a side in a quarter of runs at 10 % spread."""
    if comparison.verdict != Verdict.UNDECIDED:
        return False
    if mode == ALL:
        return True
    fewest = min(comparison.processes)
    if last_look is None or fewest < 2 or math.isnan(comparison.p_value):
        return True  # no trend to read yet: too few processes for a test
    most, level = last_look
    projected = two_sided_z(comparison.p_value) * math.sqrt(max(most, fewest) / fewest)
    return projected >= two_sided_z(level) - statistics.NormalDist().inv_cdf(1 - MIN_POWER)


def open_comparison(
    a_runs: Sequence[ProcessRun],
    b_runs: Sequence[ProcessRun],
    settings: Settings,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    *,
    name: str = "A → B",
    metrics: Sequence[str] = (),
    counts_only: bool = False,
) -> list[str]:
    """The comparisons between two sides (A, B: processes in the order they ran; those finished ok
    count) that another look could still decide, each described after ``name``; empty when every one
    is decided (or ``settings`` is not sequential).  ``metrics``: the metrics judged (empty:
    ``settings.decide_metrics``, or every metric); ``counts_only``: presences and endings, whose
    looks go on past the last of the rest (``Settings.max_count_processes``), which are left out
    there anyway."""
    mode = settings.decide
    if mode is None:
        return []
    most = settings.most_processes
    last_look = most, at_level(thresholds, settings, most).alpha
    wanted = set(metrics or settings.decide_metrics or ())
    a_ok, b_ok = ([p for p in runs if p.status is RunStatus.OK] for runs in (a_runs, b_runs))
    common = min(len(a_ok), len(b_ok))  # as the stored pair will be judged (``spending.judged_on``)
    a, b = process_samples(a_ok[:common]), process_samples(b_ok[:common])
    level = at_level(thresholds, settings, common)  # the look these processes reached
    found = []
    ends = [summary_of(runs) for runs in (a_runs, b_runs)]
    if any(map(names_ending, wanted)) and (ends[0].dead_counts[0] or ends[1].dead_counts[0]):
        # Every process counts for how processes end: the look is theirs, not the ok ones'.
        at_look = at_level(thresholds, settings, min(len(a_runs), len(b_runs)), counts=True)
        ending = compare_endings(ends[0], ends[1], at_look)
        found += [f"{name} {ending.said}"] if ending.verdict is Verdict.UNDECIDED else []
    for key in a.keys() | b.keys():
        if wanted and key.metric_name not in wanted:
            continue
        if a.of(key).missing or b.of(key).missing:
            counts = (len(a.of(key).processes), common), (len(b.of(key).processes), common)
            at_look = at_level(thresholds, settings, common, counts=True)
            presence = compare_counts(Shape.PRESENCE, *counts, at_look)
            if presence.verdict is Verdict.UNDECIDED:
                found.append(f"{name} {key.metric_name} {presence.said}")
            if presence.verdict is Verdict.UNDECIDED or not (a.get(key) and b.get(key)):
                continue
        if counts_only or common > settings.most_processes:
            continue  # past the last look only counts are looked at: the rest was judged there
        sa, sb = (side.first(len(side.processes)) for side in (a[key], b[key]))  # figures alone
        look = dataclasses.replace(level, resamples=0)
        try:
            comparison = shape_of(key, sa, sb, look).compare(sa, sb, look, key)
        except ValueError:  # a side without samples: nothing more rounds could add to
            continue
        # known exactly, or varying within a side: more processes decide nothing
        if comparison.shape.ratio and is_open(comparison, mode, level, last_look):
            found.append(
                f"{name} {key.metric_name} {comparison.ratio_cell}, "
                f"p={format_p(comparison.p_value)} (needs < {level.alpha:.2g})"
            )
    return sorted(found)
