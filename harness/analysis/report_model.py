"""What a report shows, decided once: the runs chosen, the comparison groups, and their comparisons.

``build_model`` selects the newest run of every cell once (``groups.latest_runs``),
forms the comparison groups once from that selection, and compares each once; the
renderers (``harness.render``) only turn the model into text and plots.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.groups import ComparisonGroup, comparison_groups, latest_runs, ordered_releases
from harness.analysis.metrics import GroupComparison, compare_group
from harness.analysis.significance import DEFAULT_THRESHOLDS, Thresholds
from harness.store.results import LoadProblem, Newest, StoredResult

# The size source of a measurement taken by ``harness search``: at a size of the search's choosing.
SEARCHED = "search"


@dataclass(frozen=True)
class CaseModel:
    """One case's share of the report."""

    case: str
    runs: list[Newest]  # the newest run of each of its cells
    comparisons: list[GroupComparison]  # timings, one machine per group
    structures: list[ComparisonGroup]  # compiled facts, groups across machines


@dataclass(frozen=True)
class ReportModel:
    stored: int  # results of sweeps the report is built from
    searched: int  # results of size searches, left out
    problems: list[LoadProblem]
    latest: list[Newest]  # the newest run of every cell, in report order
    order: list[str]  # releases, oldest first
    groups: list[ComparisonGroup]
    comparisons: list[GroupComparison]  # one per group, in the same order
    structures: list[ComparisonGroup]
    thresholds: Thresholds

    @property
    def machines(self) -> list[str]:
        return sorted({item.result.machine for item in self.latest})

    def cases(self) -> list[CaseModel]:
        names = list(dict.fromkeys(item.result.case for item in self.latest))
        return [
            CaseModel(
                name,
                [item for item in self.latest if item.result.case == name],
                [c for c in self.comparisons if c.group.key.case == name],
                [g for g in self.structures if g.key.case == name],
            )
            for name in names
        ]


def build_model(
    results: Sequence[StoredResult],
    problems: Sequence[LoadProblem] = (),
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> ReportModel:
    """The report's content.  Measurements taken by ``harness search`` are left out (and counted): each sits at
    a size of the search's choosing and would crowd the sweep's comparisons."""
    swept = [r for r in results if r.result.size_source != SEARCHED]
    latest = latest_runs(swept)
    groups = comparison_groups(latest)
    return ReportModel(
        stored=len(swept),
        searched=len(results) - len(swept),
        problems=list(problems),
        latest=latest,
        order=ordered_releases(item.result for item in latest),
        groups=groups,
        comparisons=[compare_group(group, baseline, thresholds) for group in groups],
        structures=comparison_groups(latest, across_machines=True),
        thresholds=thresholds,
    )
