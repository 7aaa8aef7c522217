"""How small a change a comparison over processes can see, from the spread of their medians.

Welch's test on log process medians flags a change once the log ratio exceeds (t for alpha + t for
the power) standard errors; with K processes a side whose log medians scatter by s, that standard
error is s·√(2/K).  ``calibrate`` quotes the ratio this gives for a machine's A/A runs;
``run --target-ratio`` adds rounds of processes to a cell until the ratio its processes so far give
is small enough.  Both read the spread *within* each side, pooled, so neither depends on how far the
sides' levels are apart.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence

from harness.analysis.metrics import ProcessSamples, process_samples
from harness.analysis.processes import process_medians
from harness.analysis.rank_test import smallest_p
from harness.analysis.significance import DEFAULT_THRESHOLDS, DETECTION_POWER, Thresholds
from harness.analysis.t_test import t_quantile
from harness.metric_names import MetricKey
from harness.store.schema import ProcessRun


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
