"""One measurement of a case at fixed sizes on given sides, as ``run`` measures, and several sides
interleaved.

A measurement is ``harness.measure.runner.measure``: the same case process and measurement lock, the
result stored as any run's.  Its settings say how far it goes: ``processes`` case processes a side,
then, where sides are compared and a most is given, looks until the comparison is decided.  Several
releases measured in one run take turns in rounds, so that load and drift fall on all of them alike.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analysis.sequential import open_comparison
from harness.analysis.spending import CHANGES
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.errors import HarnessError, WriteRefused
from harness.measure import runner
from harness.measure.cells import PlannedRun
from harness.measure.runner import Reuse
from harness.measure.sides import Side
from harness.measure.stopping import SettledCell
from harness.metric_names import Criterion, MetricKey
from harness.pins import HOST
from harness.store.results import StoredResult
from harness.store.schema import COUNT_CEILING, Settings

# The measurement itself (``harness.measure.runner.measure``), as a test may stand in for it.
Measure = Callable[..., list[runner.Measured]]

Pair = tuple[str, str]  # the two releases around a step, older first


@dataclass(frozen=True)
class SideMeasurement:
    """Measures one case at one set of sizes on the sides given, and says what settles each one."""

    case: CaseInfo  # or a plain script in its place (``--script``)
    sizes: dict[str, int]
    results_dir: Path
    # How each case process samples, and ``processes`` of them a measurement: the statistics' unit.
    settings: Settings
    progress: Callable[[str], None]
    # Sides compared get looks while a comparison is open (until decided), up to ``max_processes``
    # each and ``time_budget`` seconds a measurement, on ``decide_on`` (empty: every metric).
    max_processes: int | None = None  # None: ``processes`` only
    time_budget: float | None = None
    decide_on: tuple[Criterion, ...] = ()
    measure: Measure = runner.measure
    device: str = HOST  # the device class of the sides' profile: its flops budget

    def settings_for(
        self, processes: int, decide: str, sides: int, metrics: Sequence[MetricKey] = ()
    ) -> Settings:
        """The settings of one measurement of ``sides`` sides in ``processes`` processes each; with
        ``decide`` (and sides to compare, and a most to go to), measured until decided: on
        ``metrics``, else on the measurement's own."""
        deciding = decide != "off" and self.max_processes is not None and sides > 1
        judged = tuple(Criterion.of(key) for key in metrics) or self.decide_on
        names = tuple(criterion.name for criterion in judged)  # as the settings store them
        return dataclasses.replace(
            self.settings,
            processes=processes,
            # With several processes the spread of cold compiles shows between them; one each does.
            compile_repeats=1 if processes >= 3 else Settings.compile_repeats,
            decide=decide if deciding else None,
            max_processes=max(processes, self.max_processes or 0) if deciding else None,
            decide_metrics=(names or None) if deciding else None,
            decide_budget_s=self.time_budget if deciding else None,
            max_count_processes=COUNT_CEILING if deciding else None,
        )

    def plan(self, settings: Settings) -> list[PlannedRun]:
        """The cells a measurement of ``settings`` runs."""
        points = self.case.plan(
            settings.effort,
            self.sizes,
            seed=DEFAULT_SEED,
            budget=Budget.for_this_machine((), self.device),
        )
        return [PlannedRun(self.case, point) for point in points]

    def sides(
        self,
        sides: list[Side],
        settings: Settings,
        results_dir: Path | None = None,
        reuse: Reuse | None = None,
        settled: SettledCell | None = None,
    ) -> list[tuple[Side, StoredResult | None]]:
        """One measurement of ``sides`` (stored under ``results_dir``, by default this one's): each
        side with its stored result (``reuse``: one taken instead, decided under the folder
        lock; ``settled``: what else ends its looks).  A measurement the harness cannot carry out (a
        worker that does not start) says why, and stores nothing."""
        more: dict[str, Any] = {} if reuse is None else {"reuse": reuse}
        if settled is not None:
            more["settled"] = settled
        try:
            outcomes = self.measure(
                self.plan(settings),
                sides,
                settings,
                results_dir or self.results_dir,
                progress=self.progress,
                undecided=open_comparison,
                **more,
            )
        except WriteRefused:  # no release could be stored: the command stops, saying why
            raise
        except HarnessError as exc:
            self.progress(f"  not measured: {exc}")
            return [(side, None) for side in sides]
        return [(outcome.side, outcome.stored) for outcome in outcomes]

    def by_release(
        self, sides: list[Side], settings: Settings, reuse: Reuse | None = None
    ) -> dict[str, StoredResult | None]:
        """``sides``' measurement: each side's stored result, by release (None: it stored none)."""
        return {side.release: stored for side, stored in self.sides(sides, settings, None, reuse)}


def interleaved(
    measurement: SideMeasurement,
    sides: list[Side],
    processes: int,
    decide: str = CHANGES,
    pairs: Mapping[Pair, tuple[Criterion, ...]] | None = None,
    endpoints: bool = False,
    reuse: Reuse | None = None,
) -> dict[str, StoredResult | None]:
    """One measurement of ``sides``, ``processes`` each (then until decided: ``decide``, each side
    against the next, or only within ``pairs``); what it stored, by release (none unless there are
    at least two sides). ``endpoints``: the first and last sides are a bisect's endpoints, compared
    with each other as well, so that neither stops before their own comparison is decided (a resumed
    bisect judges them by this run's results)."""
    if len(sides) < 2:
        return {}
    if endpoints and len(sides) > 2:
        sides = [*sides[:-1], dataclasses.replace(sides[-1], compare_with=sides[0].label)]
    if pairs is not None:  # a gap between two steps is no step: its looks would measure for nothing
        compared = [
            _compared(side, following, pairs) for side, following in itertools.pairwise(sides)
        ]
        sides = [*compared, sides[-1]]
    settings = measurement.settings_for(processes, decide, len(sides))
    until = f", then until decided (at most {settings.max_processes})" if settings.decide else ""
    measurement.progress(
        f"  {len(sides)} releases measured together, {processes} processes each{until}, interleaved"
    )
    return measurement.by_release(sides, settings, reuse)


def _compared(side: Side, following: Side, pairs: Mapping[Pair, tuple[Criterion, ...]]) -> Side:
    """``side`` compared with ``following`` on the metrics its step moved, if the two make one."""
    moved = pairs.get((side.release, following.release), ())
    names = tuple(criterion.name for criterion in moved)  # as the side's settings store them
    return dataclasses.replace(side, compare_next=bool(moved), compare_metrics=names)
