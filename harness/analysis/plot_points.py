"""The points of every plot, decided here and drawn by ``harness.render``: per comparison group,
each program's wall time by release and, for programs named ``<method>_d<devices>``, by device
count; and a metric over a run of releases (the triage report).

A point is a result's ``ProcessSamples.summary``: its median is the figure comparisons
judge, its quartiles the spread between processes.  Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from harness.analysis.metrics import GroupComparison, metric_samples, program_names
from harness.metric_names import MetricKey
from harness.stats import Summary
from harness.store.results import StoredResult
from harness.store.schema import RunStatus

WALL = "wall"
DEVICE_SUFFIX = re.compile(r"^(?P<method>.+)_d(?P<devices>\d+)$")

WallLines = dict[str, list[tuple[str, Summary]]]  # program → (release, its point)
# (release, method) → (devices, point)
ScalingLines = dict[tuple[str, str], list[tuple[int, Summary]]]
Series = dict[MetricKey, list[tuple[str, Summary]]]  # metric → (release, its point)


def wall_by_release(comparison: GroupComparison) -> WallLines:
    """Per program, its wall-time point in each release of the group that ran it."""
    lines: WallLines = {}
    for release, by_key in comparison.series.items():
        for key, samples in by_key.items():
            if key.kind == WALL:
                lines.setdefault(key.name, []).append((release, samples.summary))
    return lines


def split_device_suffix(program: str) -> tuple[str, int] | None:
    """``jit_d4`` → ``("jit", 4)``; None for a name without a device-count suffix."""
    match = DEVICE_SUFFIX.match(program)
    return (match["method"], int(match["devices"])) if match else None


def wall_by_device_count(comparison: GroupComparison) -> ScalingLines:
    """Per (release, method), wall time by device count, for methods run at two counts or more."""
    lines: ScalingLines = {}
    for run in comparison.group.runs:
        series = comparison.series[run.result.release]
        for name in program_names(run):
            parsed = split_device_suffix(name)
            samples = series.get(MetricKey(name, WALL))
            if parsed and samples:
                method, devices = parsed
                lines.setdefault((run.result.release, method), []).append(
                    (devices, samples.summary)
                )
    return {key: sorted(points) for key, points in lines.items() if len(points) >= 2}


def metric_series(results: Sequence[StoredResult], keys: Sequence[MetricKey]) -> Series:
    """Per metric, (release, its point) for each ok result that has it, in the given order; a
    value no figure holds (a string, NaN: ``ProcessSamples.printed``) has no point."""
    series: Series = {}
    for result in results:
        if result.result.status is not RunStatus.OK:
            continue
        samples = metric_samples(result)
        for key in keys:
            point = samples[key].summary if key in samples else None
            if point is not None and math.isfinite(point.median):
                series.setdefault(key, []).append((result.result.release, point))
    return series
