"""The metrics a stored result carries, as raw sample series, and its exact compiled facts.

Per program: *wall* (until ``block_until_ready`` returned) and *dispatch* (until Python regained
control after the last step).  Per jitted function: cold *lower* and *compile* times.  Comparisons
use the raw samples, never the stored summaries.

A result holds the samples of each case process apart (``metric_samples``: one list per process that
finished ok); a result measured in one process gives one list. Comparisons are over processes
(``compare_metric``): each process's median is one draw, so the level a process sets is inside the
statistics, not hidden by them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.analysis.groups import ComparisonGroup, choose_baseline
from harness.analysis.shapes import ProcessSamples, shape_of
from harness.analysis.significance import DEFAULT_THRESHOLDS, Comparison, Thresholds
from harness.errors import UsageError
from harness.metric_names import JSON, PROCESS, MetricKey, parse_metric_name
from harness.store.results import StoredResult
from harness.store.schema import ProcessRun, Result

# The facts another engineer's HLO inspection records; shown first, in this order.
KNOWN_HLO_FACTS = (
    "while_loops",
    "known_trip_counts",
    "fusions",
    "flops",
    "bytes_accessed",
    "temp_bytes",
)


@dataclass(frozen=True)
class MetricComparison:
    key: MetricKey
    comparison: Comparison


class MetricSeries(dict[MetricKey, ProcessSamples]):
    """Per metric, its samples; ``of`` also answers for a metric no process of the result gave (a
    number that went missing is evidence too)."""

    def __init__(self, ran: int, source: Result | None) -> None:
        super().__init__()
        self.ran, self.source = ran, source

    def of(self, key: MetricKey) -> ProcessSamples:
        return self.get(key) or ProcessSamples(source=self.source, ran=self.ran)


def metric_samples(result: StoredResult) -> MetricSeries:
    """Per metric, the raw samples of each process that finished ok (in the order they ran):
    programs first, in the order the case lists them, then the jitted functions."""
    return process_samples(result.result.finished(), result.result)


def process_samples(processes: Sequence[ProcessRun], source: Result | None = None) -> MetricSeries:
    """``metric_samples`` of these finished processes, before a result holds them (measuring)."""
    series = MetricSeries(len(processes), source)

    def add(key: MetricKey, values: list[float], loaded: bool) -> None:
        found = series.setdefault(key, ProcessSamples(source=source, ran=len(processes)))
        found.processes.append(values)
        found.loaded += loaded

    loads = [bool(process.load and process.load.loaded) for process in processes]
    for process, loaded in zip(processes, loads, strict=True):
        for name, program in process.programs.items():
            if program.samples and "wall" in program.kinds:
                add(MetricKey(name, "wall"), [s.wall_ns for s in program.samples], loaded)
            if program.samples and "dispatch" in program.kinds:
                add(MetricKey(name, "dispatch"), [s.dispatch_ns for s in program.samples], loaded)
    for process, loaded in zip(processes, loads, strict=True):
        for name, function in process.compiled.items():
            for kind, values in (("lower", function.lower_ns), ("compile", function.compile_ns)):
                if values:
                    add(MetricKey(name, kind), list(values), loaded)
    # a plain script's phases and own numbers: one figure a process, and its values as printed
    versions: set[MetricKey] = set()
    for process, loaded in zip(processes, loads, strict=True):
        for metric in dict.fromkeys([*process.figures, *process.printed]):
            try:
                key = parse_metric_name(metric)
            except UsageError:  # a name no reader knows (a newer harness's): left out
                continue
            value, printed = process.figures.get(metric), process.printed.get(metric)
            written = printed or (repr(value) if isinstance(value, float) else str(value),)
            versions.update([key] if _names_version(written, process, source) else [])
            add(key, [_figure(written) if value is None else value], loaded)
            if key.name == JSON:
                series[key].printed.append(written)
    for key in versions:  # ``jax.__version__``: a different string on every release, by design
        series.pop(key, None)
    for process, loaded in zip(processes, loads, strict=True):  # memory: the process's peak
        # host_rss on an accelerator, whose resident memory is mostly the runtime's mapping of it
        backend = process.jax.backend if process.jax is not None else None
        rss = "peak_rss" if backend in (None, "cpu") else "host_rss"
        if (peak := peak_rss(process)) is not None:
            add(MetricKey(PROCESS, rss), [float(peak)], loaded)
        if process.device_peak_bytes is not None:
            add(MetricKey(PROCESS, "device_peak"), [float(process.device_peak_bytes)], loaded)
    return series


def _figure(printed: tuple[str, ...]) -> float:
    """A figure for a value a result holds only as written (a number's float, ``inf`` past range,
    else NaN): never compared nor shown, a value is compared and shown as printed."""
    try:
        return float(printed[0])
    except ValueError:  # a string, a flag, null
        return math.nan


def _names_version(printed: tuple[str, ...], process: ProcessRun, source: Result | None) -> bool:
    """Whether a printed string names the process's JAX version (``"0.4.31"``, ``"jax 0.4.31"``)."""
    found = {process.jax.jax_version if process.jax else None, getattr(source, "release", None)}
    versions = [v for v in found if v and re.fullmatch(r"\d+(\.\d+)+\S*", v)]
    return any(
        text.startswith('"') and re.search(rf"(?<![\w.]){re.escape(v)}(?![\w]|\.\d)", text)
        for text in printed
        for v in versions
    )


def peak_rss(process: ProcessRun) -> int | None:
    """The peak resident memory of what a process measured: a plain script's own process (the case
    process waited for it), else the case process."""
    script = process.script or {}
    measured = script.get("maxrss_bytes") if isinstance(script, dict) else None
    if isinstance(measured, int) and not isinstance(measured, bool) and measured > 0:
        return measured
    return process.peak_rss_bytes


def compare_metric(
    a: ProcessSamples,
    b: ProcessSamples,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    key: MetricKey | None = None,
) -> Comparison:
    """B against A over processes, by the rule of the metric's shape (``shapes.shape_of``): a metric
    missing from some processes that finished ok is first a presence, a value is compared by
    equality, a cost by its ratio."""
    return shape_of(key, a, b, thresholds).compare(a, b, thresholds, key)


def program_names(result: StoredResult) -> list[str]:
    """The programs any process of the result timed, in the order the case lists them."""
    return list(
        dict.fromkeys(name for process in result.result.processes for name in process.programs)
    )


def union_keys(all_series: Iterable[Mapping[MetricKey, object]]) -> list[MetricKey]:
    """Every metric of several results, in order of first appearance."""
    return list(dict.fromkeys(key for series in all_series for key in series))


def compare_runs(
    baseline: StoredResult, candidate: StoredResult, thresholds: Thresholds = DEFAULT_THRESHOLDS
) -> tuple[list[MetricComparison], list[MetricKey], list[MetricKey]]:
    """Every metric both runs have, compared; then the metrics only A, and only B, has."""
    a, b = metric_samples(baseline), metric_samples(candidate)
    compared = [
        MetricComparison(key, compare_metric(a[key], b[key], thresholds, key))
        for key in a
        if key in b
    ]
    return compared, [k for k in a if k not in b], [k for k in b if k not in a]


def compare_results(
    baseline: StoredResult | None,
    candidate: StoredResult | None,
    key: MetricKey,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> Comparison | None:
    """``key`` of two stored results compared; None where either is missing, not ok, or lacks it."""
    if not (baseline and candidate) or {baseline.result.status, candidate.result.status} != {"ok"}:
        return None
    a, b = metric_samples(baseline).get(key), metric_samples(candidate).get(key)
    return None if a is None or b is None else compare_metric(a, b, thresholds, key)


def hlo_facts(result: StoredResult) -> dict[str, dict[str, Any]]:
    """The exact facts of each compiled function's HLO, where recorded: counted, not timed, so
    every process compiles to the same and the first that has them speaks."""
    facts: dict[str, dict[str, Any]] = {}
    for process in result.result.processes:
        for name, function in process.compiled.items():
            if function.hlo is not None and name not in facts:
                facts[name] = dict(function.hlo)
    return facts


def hlo_fact_names(facts: Iterable[dict[str, Any]]) -> list[str]:
    seen = dict.fromkeys(name for fact in facts for name in fact)
    return [n for n in KNOWN_HLO_FACTS if n in seen] + [n for n in seen if n not in KNOWN_HLO_FACTS]


@dataclass(frozen=True)
class GroupComparison:
    """Every release of a comparison group against its baseline release, metric by metric."""

    group: ComparisonGroup
    baseline: str
    baseline_reason: str
    keys: list[MetricKey]
    series: dict[str, MetricSeries]  # release → metric → raw samples by process
    comparisons: dict[str, dict[MetricKey, Comparison]]  # release other than the baseline → ...


def compare_group(
    group: ComparisonGroup,
    requested_baseline: str | None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> GroupComparison:
    baseline, reason = choose_baseline(group.releases, requested_baseline)
    series = {run.result.release: metric_samples(run) for run in group.runs}
    base = series[baseline]
    comparisons = {
        release: {
            key: compare_metric(base[key], values, thresholds, key)
            for key, values in by_key.items()
            if key in base
        }
        for release, by_key in series.items()
        if release != baseline
    }
    return GroupComparison(
        group, baseline, reason, union_keys(series.values()), series, comparisons
    )
