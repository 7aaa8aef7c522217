"""A machine's noise floor from the runs ``harness calibrate`` made: how often A/A pairs of separate
runs of one release got a verdict (the false-positive rate), how far a whole run's level moves
between invocations, the smallest change the spread between processes lets the rule see, and what a
real slowdown (one size raised) got.  Pure: stored results in, one
``store.calibrations.CalibrationRun`` out.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from harness.analysis.metrics import MetricComparison, compare_runs, metric_samples
from harness.analysis.power import detectable_ratio, log_medians, pooled_spreads
from harness.analysis.significance import MOVED, CostDetail, Thresholds, Verdict
from harness.store.calibrations import CalibrationRun
from harness.store.results import StoredResult


class Calibrated(Protocol):
    """What a calibration measured (``harness.cli.calibrate.CalibrationPlan``): a case at its sizes,
    and the size raised for the real slowdown."""

    @property
    def case(self) -> str: ...
    @property
    def sizes(self) -> dict[str, int]: ...
    @property
    def raised(self) -> str: ...
    @property
    def raised_to(self) -> int: ...
    @property
    def run_options(self) -> tuple[str, ...]: ...


def _described(found: MetricComparison) -> str:
    return f"{found.key.metric_name} {found.comparison.ratio_cell or 'n/a'} {found.comparison.said}"


def invocation_spread(pairs: Sequence[tuple[StoredResult, StoredResult]]) -> float | None:
    """The log standard deviation of a whole invocation's level, from A/A pairs of separate
    invocations. Per metric of a pair, the squared difference of the sides' mean log process medians
    exceeds what their processes' spread predicts (s²/K a side) by twice the invocation variance, on
    average; the metrics of one pair share its two levels, so each pair's excess is averaged over
    its metrics first, then over pairs.  Negative estimates (the levels agreed better than chance)
    count as none.  None without any metric measured in two or more processes on both sides."""
    excesses = []
    for a, b in pairs:
        first, second = metric_samples(a), metric_samples(b)
        found = []
        for key in first.keys() & second.keys():
            logs = [log_medians(first[key]), log_medians(second[key])]
            if min(map(len, logs)) >= 2:
                difference = statistics.fmean(logs[1]) - statistics.fmean(logs[0])
                expected = sum(statistics.variance(side) / len(side) for side in logs)
                found.append(difference**2 - expected)
        if found:
            excesses.append(statistics.fmean(found))
    return math.sqrt(max(0.0, statistics.fmean(excesses)) / 2) if excesses else None


def summarize_calibration(
    plan: Calibrated,
    thresholds: Thresholds,
    aa_pairs: Sequence[tuple[StoredResult, StoredResult]],
    slowdowns: Sequence[tuple[StoredResult, StoredResult]],
    created_at: datetime,
) -> CalibrationRun:
    """One calibration's figures from its runs: A/A pairs, then (unchanged, raised) pairs."""
    per_pair = []
    comparisons = flagged = 0
    processes: list[int] = []
    for a, b in aa_pairs:
        compared = compare_runs(a, b, thresholds)[0]
        processes += [min(m.comparison.processes) for m in compared]
        found = [m for m in compared if m.comparison.verdict in MOVED]
        comparisons += len(compared)
        flagged += len(found)
        per_pair.append({"comparisons": len(compared), "flagged": [_described(m) for m in found]})
    raised = [
        found
        for unchanged, more in slowdowns
        for found in compare_runs(unchanged, more, thresholds)[0]
    ]
    processes += [min(m.comparison.processes) for m in raised]
    costs = [(m.comparison.verdict, m.comparison.cost) for m in raised if m.comparison.cost]
    slower = [cost.ratio for verdict, cost in costs if verdict == Verdict.SLOWER]
    others = [
        c.ratio for verdict, c in costs if verdict != Verdict.SLOWER and not math.isnan(c.ratio)
    ]
    first = aa_pairs[0][0]
    # per metric, the pooled spread of log process medians within each run
    spreads = pooled_spreads(metric_samples(run) for pair in aa_pairs for run in pair)
    fewest = min(processes, default=0)
    # Too few processes for the rank guard see no change (inf), which no file can hold: left out.
    ratios = {k.metric_name: detectable_ratio(s, fewest, thresholds) for k, s in spreads.items()}
    detectable = {name: ratio for name, ratio in ratios.items() if math.isfinite(ratio)}
    return CalibrationRun(
        created_at=created_at.isoformat(timespec="seconds"),
        machine=first.result.machine,
        release=first.result.release,
        profile=first.result.profile,
        case=plan.case,
        sizes=dict(plan.sizes),
        pairs=len(aa_pairs),
        comparisons=comparisons,
        flagged=flagged,
        raised=plan.raised,
        raised_from=plan.sizes[plan.raised],
        raised_to=plan.raised_to,
        slowdown_comparisons=len(raised),
        slowdown_flagged=len(slower),
        smallest_flagged_ratio=min(slower) if slower else None,
        largest_unflagged_ratio=max(others) if others else None,
        processes=fewest,
        min_processes=thresholds.min_processes,
        settings={
            "run_options": list(plan.run_options),
            "factor": thresholds.factor,
            "alpha": thresholds.alpha,
            "min_processes": thresholds.min_processes,
            "invocation_spread": thresholds.invocation_spread,
        },
        slowdown_runs=len(slowdowns),
        detectable_ratio=statistics.median(detectable.values())
        if detectable and fewest >= 2
        else None,
        invocation_spread=invocation_spread(aa_pairs),
        aa_loaded=any(
            p.load is not None and p.load.loaded
            for pair in aa_pairs
            for r in pair
            for p in r.result.processes
        ),
        details={
            "per_pair": per_pair,
            "detectable": {name: round(ratio, 4) for name, ratio in sorted(detectable.items())},
            "metrics": [
                {
                    "metric": m.key.metric_name,
                    "ratio": None if math.isnan(cost.ratio) else cost.ratio,
                    "p_value": None if math.isnan(m.comparison.p_value) else m.comparison.p_value,
                    "verdict": str(m.comparison.verdict),
                    "processes": list(m.comparison.processes),
                }
                for m in raised
                for cost in [m.comparison.cost or CostDetail(math.nan)]
            ],
        },
    )
