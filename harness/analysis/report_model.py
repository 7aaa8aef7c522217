"""What a report shows, decided once: the runs chosen, the claims by release, the comparison groups
and their comparisons, how the machines behind them differ, the exact compiled facts, the plots'
points (and ``metric_series``, the triage report's) and each machine's noise floor.

``build_model`` selects the newest run of every cell once (``groups.latest_runs``),
forms the comparison groups once from that selection, and compares each once; the
renderers (``harness.render``) only turn the model into text and plots, so they need
nothing from analysis but this module's types.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.claims import (
    ClaimVerdict,
    claim_evidence,
    claim_rows,
    claim_verdict,
    mark,
    outcome,
    process_claims,
    ranges_text,
)
from harness.analysis.groups import (
    DEVICE_FACT,
    ComparisonGroup,
    GroupKey,
    comparison_groups,
    differences,
    host_differences,
    latest_runs,
    ordered_releases,
)
from harness.analysis.metrics import (
    GroupComparison,
    compare_group,
    hlo_fact_names,
    hlo_facts,
    metric_samples,
    program_names,
)
from harness.analysis.significance import DEFAULT_THRESHOLDS, MOVED, Comparison, Thresholds, Verdict
from harness.measure.hlo import COST_FIGURES, known_cost
from harness.metric_names import MetricKey
from harness.stats import Summary
from harness.store.calibrations import CalibrationRun
from harness.store.results import LoadProblem, Newest, StoredResult
from harness.store.schema import RunStatus
from harness.units import sizes_text

# The size source of a measurement taken by ``harness search``: at a size of the search's choosing.
SEARCHED = "search"
_ABSENT = object()  # "no previous release had this fact", distinct from a fact whose value is None


@dataclass(frozen=True)
class RunView:
    """The newest run of one cell, with its claim decided."""

    stored: StoredResult
    older: int  # earlier runs of its cell, not shown
    outcome: str  # holds / does not hold / unsettled, or the run's status
    mark: str  # the outcome as ✓, ✗, ? or the status
    claim: ClaimVerdict | None  # over its processes; None unless it finished ok with verdicts
    evidence: str  # what the case measured for that verdict


def run_view(newest: Newest) -> RunView:
    stored, older = newest
    found = outcome(stored)
    return RunView(stored, older, found, mark(found), claim_verdict(stored), claim_evidence(stored))


@dataclass(frozen=True)
class ClaimLine:
    """One (case, profile, backend, sizes) across the releases of its table."""

    case: str
    profile: str
    backend: str
    sizes: str
    marks: list[str]  # one per release of the table: ✓, ✗, ?, a status, or – where it did not run
    in_words: str  # the release ranges of each outcome


@dataclass(frozen=True)
class SourceFigure:
    """At sizes the case's discussion ran: what it printed (quoted), beside what we measured there
    on the newest release that ran them."""

    profile: str
    backend: str
    sizes: str
    theirs: str  # the call, the device and what the discussion printed
    release: str
    devices: str  # ours: the device kinds the run found
    ours: str  # one process's evidence for the claim, or the run's status where it gave none


@dataclass(frozen=True)
class ClaimTable:
    releases: list[str]  # the columns
    lines: list[ClaimLine]
    # skipped on every release: named, not tabled
    skipped: list[ClaimLine] = field(default_factory=list)
    figures: list[SourceFigure] = field(default_factory=list)  # at the discussion's own sizes


def _claim_line(
    row: tuple[str, str, str, str], outcomes: dict[str, str], releases: Sequence[str]
) -> ClaimLine:
    case, profile, backend, sizes = row
    marks = [mark(outcomes.get(r)) for r in releases]
    return ClaimLine(case, profile, backend, sizes, marks, ranges_text(outcomes, releases))


def index_claims(results: Iterable[StoredResult], order: Sequence[str]) -> ClaimTable:
    """Every row over every release of the report; a row skipped on every release (too few devices,
    a one-device case under cpu8) says nothing per release, so it is set apart."""
    rows = claim_rows(results)
    skipped = {
        row for row, outcomes in rows.items() if set(outcomes.values()) == {RunStatus.SKIPPED.value}
    }
    return ClaimTable(
        list(order),
        [_claim_line(row, outcomes, order) for row, outcomes in rows.items() if row not in skipped],
        [_claim_line(row, outcomes, order) for row, outcomes in rows.items() if row in skipped],
    )


def case_claims(results: Iterable[StoredResult], order: Sequence[str]) -> ClaimTable:
    """One case's rows, over the releases it ran on, and the discussion's figures beside ours."""
    results = list(results)
    rows = claim_rows(results)
    releases = [r for r in order if any(r in outcomes for outcomes in rows.values())]
    return ClaimTable(
        releases,
        [_claim_line(row, outcomes, releases) for row, outcomes in rows.items()],
        figures=source_figures(results, releases),
    )


def source_figures(results: Sequence[StoredResult], releases: Sequence[str]) -> list[SourceFigure]:
    """A row for each (profile, backend, sizes) the discussion ran at: its figure and ours, from
    the newest release that ran there."""
    newest: dict[tuple[str, str, str], StoredResult] = {}
    for result in sorted(results, key=lambda r: releases.index(r.result.release)):
        r = result.result
        if r.source_figure:
            newest[(r.profile, r.backend, sizes_text(r.sizes))] = result
    figures = []
    for (profile, backend, sizes), result in newest.items():
        claims, r = process_claims(result), result.result
        ours = claims[0].evidence if claims else f"no verdict: {r.status}"
        kinds = ", ".join(r.device_kinds) or backend
        figures.append(
            SourceFigure(profile, backend, sizes, r.source_figure, r.release, kinds, ours)
        )
    return figures


# The plots' points, drawn by ``harness.render``: per comparison group, each program's wall time by
# release and, for programs named ``<method>_d<devices>``, by device count.  A point is a result's
# ``ProcessSamples.summary``: its median is the figure comparisons judge, its quartiles the spread
# between processes.
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
    """A metric over a run of releases (the triage report's plot): per metric, (release, its point)
    for each ok result that has it, in the given order; a value no figure holds (a string, NaN:
    ``ProcessSamples.printed``) has no point."""
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


@dataclass(frozen=True)
class TimingGroup:
    """One group's timings (one machine), how its runs' hosts differ, and its plots' points."""

    comparison: GroupComparison
    # host facts that differ between its runs, e.g. "CPU: A (jax 0.4.26); B (jax 0.5.3)"
    hosts: list[str]
    wall: WallLines
    scaling: ScalingLines

    @property
    def key(self) -> GroupKey:
        return self.comparison.group.key

    @property
    def tallies(self) -> tuple[int, int, int, int] | None:
        """(slower, faster, inconclusive, noisy) over its comparisons; None when there are none."""
        if not self.comparison.comparisons:
            return None
        found = [c for by_key in self.comparison.comparisons.values() for c in by_key.values()]
        counts = Counter(c.verdict for c in found)
        noisy = sum(c.noisy for c in found)
        return (counts[Verdict.SLOWER], counts[Verdict.FASTER], counts[Verdict.UNDECIDED], noisy)


def timing_group(
    group: ComparisonGroup, baseline: str | None, thresholds: Thresholds
) -> TimingGroup:
    comparison = compare_group(group, baseline, thresholds)
    hosts = host_differences([(f"jax {run.result.release}", run) for run in group.runs])
    return TimingGroup(
        comparison, hosts, wall_by_release(comparison), wall_by_device_count(comparison)
    )


@dataclass(frozen=True)
class TimingChange:
    """One metric a release changed against its group's baseline: a *slower* or *faster* verdict."""

    key: GroupKey
    metric: MetricKey
    baseline: str
    release: str
    comparison: Comparison

    @property
    def slower(self) -> bool:
        return self.comparison.verdict == Verdict.SLOWER


def timing_changes(timings: Iterable[TimingGroup]) -> list[TimingChange]:
    """Every slower or faster verdict: slowdowns first, each the largest change first (by the size
    of the log ratio: ×0.5 and ×2 alike), ties in report order."""
    found = [
        TimingChange(t.key, metric, t.comparison.baseline, release, comparison)
        for t in timings
        for release, by_key in t.comparison.comparisons.items()
        for metric, comparison in by_key.items()
        if comparison.verdict in MOVED
    ]
    return sorted(found, key=_first_shown)


def _first_shown(change: TimingChange) -> tuple[bool, float]:
    cost = change.comparison.cost
    return not change.slower, -abs(math.log(cost.ratio)) if cost and cost.ratio > 0 else 0.0


@dataclass(frozen=True)
class FactCell:
    value: Any
    changed: bool  # differs from the previous run that has the fact


@dataclass(frozen=True)
class FactRow:
    function: str
    fact: str
    cells: list[FactCell | None]  # one per run of the group; None where the run lacks the fact


@dataclass(frozen=True)
class StructureGroup:
    """One group's exact compiled facts across machines (counted, not timed)."""

    key: GroupKey
    releases: list[str]  # the columns, one per run
    machines: int
    devices: list[str]  # how the devices compiled for differ between its runs
    rows: list[FactRow]


def fact_rows(runs: Sequence[StoredResult]) -> list[FactRow]:
    """Each compiled function's exact facts, run by run."""
    facts = {run.result.release: hlo_facts(run) for run in runs}
    functions = list(dict.fromkeys(name for by_name in facts.values() for name in by_name))
    rows = []
    for function in functions:
        for fact in hlo_fact_names(
            by_name[function] for by_name in facts.values() if function in by_name
        ):
            cells: list[FactCell | None] = []
            previous: Any = _ABSENT
            for run in runs:
                record = facts[run.result.release].get(function)
                if record is None or fact not in record:
                    cells.append(None)
                    continue
                # A result stored before the harness knew XLA's sentinel holds it as a number.
                value = known_cost(record[fact]) if fact in COST_FIGURES else record[fact]
                cells.append(FactCell(value, previous is not _ABSENT and value != previous))
                previous = value
            rows.append(FactRow(function, fact, cells))
    return rows


def structure_group(group: ComparisonGroup) -> StructureGroup:
    devices = host_differences(
        [(f"jax {run.result.release}", run) for run in group.runs], [DEVICE_FACT]
    )
    machines = len({run.result.machine for run in group.runs})
    return StructureGroup(group.key, group.releases, machines, devices, fact_rows(group.runs))


@dataclass(frozen=True)
class CaseModel:
    """One case's share of the report."""

    case: str
    runs: list[RunView]  # the newest run of each of its cells
    claims: ClaimTable
    timings: list[TimingGroup]  # one machine per group
    differ: list[str]  # what its timing groups differ in (nothing with one group)
    structures: list[StructureGroup]  # groups across machines that recorded compiled facts


@dataclass(frozen=True)
class ReportModel:
    stored: int  # results of sweeps the report is built from
    searched: int  # results of size searches, left out
    problems: list[LoadProblem]
    runs: list[RunView]  # the newest run of every cell, in report order, its claim decided
    order: list[str]  # releases, oldest first
    claims: ClaimTable
    timings: list[TimingGroup]  # one per comparison group, in report order
    # what changed, the index's first list: every slower or faster verdict
    changes: list[TimingChange]
    cases: list[CaseModel]
    noise_floors: list[CalibrationRun]  # the latest calibration of each machine that has one
    thresholds: Thresholds

    @property
    def machines(self) -> list[str]:
        return sorted({run.stored.result.machine for run in self.runs})


def case_models(
    runs: Sequence[RunView],
    order: Sequence[str],
    timings: Sequence[TimingGroup],
    structures: Sequence[StructureGroup],
) -> list[CaseModel]:
    models = []
    for name in dict.fromkeys(run.stored.result.case for run in runs):
        mine = [run for run in runs if run.stored.result.case == name]
        groups = [t for t in timings if t.key.case == name]
        models.append(
            CaseModel(
                name,
                mine,
                case_claims([run.stored for run in mine], order),
                groups,
                differences([t.key for t in groups]),
                [s for s in structures if s.key.case == name and s.rows],
            )
        )
    return models


def build_model(
    results: Sequence[StoredResult],
    problems: Sequence[LoadProblem] = (),
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    calibrations: Mapping[str, CalibrationRun] | None = None,
) -> ReportModel:
    """The report's content; ``calibrations``: machine id → its latest (``store.calibrations``).
    Measurements taken by ``harness search`` are left out (and counted): each sits at a size of the
    search's choosing and would crowd the sweep's comparisons."""
    swept = [r for r in results if r.result.size_source != SEARCHED]
    latest = latest_runs(swept)
    runs = [run_view(item) for item in latest]
    order = ordered_releases(item.result for item in latest)
    timings = [timing_group(group, baseline, thresholds) for group in comparison_groups(latest)]
    structures = [structure_group(g) for g in comparison_groups(latest, across_machines=True)]
    machines = sorted({item.result.result.machine for item in latest})
    found = calibrations or {}
    return ReportModel(
        stored=len(swept),
        searched=len(results) - len(swept),
        problems=list(problems),
        runs=runs,
        order=order,
        claims=index_claims((run.stored for run in runs), order),
        timings=timings,
        changes=timing_changes(timings),
        cases=case_models(runs, order, timings, structures),
        noise_floors=[found[m] for m in machines if m in found],
        thresholds=thresholds,
    )
