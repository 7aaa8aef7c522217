"""When a cell needs another round: its planned rounds, then, with a target ratio, while its sides
could not yet see that ratio, or, until decided, while a comparison of its sides is open.

The target ratio is read from the spread within each side, never from how far the sides are apart:
stopping when a difference showed would make every difference look real. Measuring until decided
stops on the difference, so its test's level is spent over the looks (``analysis.spending``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.measure.cells import Cell, CellRun, next_look, pair_name
from harness.metric_names import MetricKey
from harness.store.schema import COUNT_SECONDS, ProcessRun, RunStatus, Settings, look_number

# The ratio a comparison of each side's ok processes could detect, on metrics of the given kinds
# (all when empty); None: no spread yet (``harness.analysis.power.detectable_in_records``).
DetectableRatio = Callable[[list[list[ProcessRun]], tuple[str, ...]], float | None]


# The metrics the caller has already settled from each side's processes (by label), open or not
# (``harness.explain.held_library``): not looked at again.
SettledCell = Callable[[dict[str, list[ProcessRun]]], set[MetricKey]]


class OpenComparison(Protocol):
    """Two sides' comparisons another look could still decide (``sequential.open_comparison``)."""

    def __call__(
        self,
        a_runs: list[ProcessRun],
        b_runs: list[ProcessRun],
        settings: Settings,
        *,
        name: str,
        metrics: Sequence[str],
        counts_only: bool = False,
    ) -> list[str]: ...


@dataclass(frozen=True)
class StopRules:
    """Whether a cell gets another round, and the note each side's result keeps of how far."""

    settings: Settings
    progress: Callable[[str], None]
    detectable: DetectableRatio | None = None  # with ``settings.target_ratio``
    undecided: OpenComparison | None = None  # with ``settings.decide``
    settled: SettledCell | None = None  # with ``settings.decide``: ends the looks once it says so

    def another_round(self, cell: Cell, runs: list[CellRun], done: int) -> bool:
        """After ``done`` rounds of ``cell`` (``runs``: its sides still going), whether one more."""
        if done < self.settings.processes:
            return True
        if self.settings.decide is not None and self.undecided is not None and len(cell.runs) > 1:
            return self._until_decided(cell, done)
        if self.settings.target_ratio is None or self.detectable is None:
            return False
        return self._toward_target(cell.head, runs, done)

    def _toward_target(self, head: str, runs: list[CellRun], done: int) -> bool:
        settings = self.settings
        assert self.detectable is not None and settings.target_ratio is not None
        kinds = settings.target_kinds or ()
        ok = [[p for p in run.processes if p.status is RunStatus.OK] for run in runs]
        ratio = self.detectable(ok, kinds)
        target = f"×{settings.target_ratio:.3g}" + (f" on {'/'.join(kinds)} times" if kinds else "")
        met = ratio is not None and ratio <= settings.target_ratio
        if ratio is None:
            judged = "no side has 2 processes finished ok with a metric it judges"
            extent = f"target {target} not judged: {judged}"
        elif met:
            extent = f"{done} processes a side can detect ×{ratio:.3f}, within the target {target}"
        elif done >= settings.most_processes:
            only = f"can detect only ×{ratio:.3f}, not the target {target}"
            extent = f"{done} processes a side (the most allowed) {only}"
        else:
            can = f"{done} processes a side can detect ×{ratio:.3f}, not the target {target}"
            self.progress(f"{head} · {can}: round {done + 1} (at most {settings.most_processes})")
            return True
        # a target the planned rounds met needs no line of its own
        if done > settings.processes or not met:
            self.progress(f"{head} · {extent}")
        for run in runs:
            run.extent = extent
        return False

    def _open_comparisons(
        self, pairs: list[tuple[CellRun, CellRun]], settled: set[str], counts_only: bool = False
    ) -> list[list[str]]:
        """Each pair's open comparisons, ``settled`` ones aside (``counts_only``: counts alone)."""
        assert self.undecided is not None
        found: list[list[str]] = []
        for a, b in pairs:
            metrics = a.side.compare_metrics or self.settings.decide_metrics or ()
            left = tuple(metric for metric in metrics if metric not in settled)
            if settled and metrics and not left:
                found.append([])
                continue
            found.append(
                self.undecided(
                    a.processes,
                    b.processes,
                    self.settings,
                    name=pair_name(a.side, b.side),
                    metrics=left if settled else a.side.compare_metrics,
                    **({"counts_only": True} if counts_only else {}),
                )
            )
        return found

    def _settled(self, cell: Cell) -> set[str]:
        """The metrics the caller has settled on the cell's processes so far (none without one)."""
        if self.settled is None:
            return set()
        ok = {r.side.label: [p for p in r.processes if p.status is RunStatus.OK] for r in cell.runs}
        return {key.metric_name for key in self.settled(ok)}

    def _counts_ceiling(self, cell: Cell, seconds: float) -> int:
        """How far counts still open at the last look may go: ``max_count_processes`` a side while
        a side's processes have taken less than the time budget (``COUNT_SECONDS`` without one);
        the last look where they may not."""
        settings, most = self.settings, self.settings.most_processes
        budget = settings.decide_budget_s or COUNT_SECONDS
        if settings.count_looks == settings.looks or seconds / len(cell.runs) >= budget:
            return most
        return settings.count_looks[-1]

    def _until_decided(self, cell: Cell, done: int) -> bool:
        """Up to the next look, then another while a comparison is open, within ``max_processes``
        and the time budget, and past them while counts are open (``_counts_ceiling``); the
        results say how far it went and why it stopped."""
        settings, most = self.settings, self.settings.most_processes
        # its own processes: cells take turns in rounds
        seconds = sum(run.duration_s for run in cell.runs)
        spent = settings.decide_budget_s is not None and seconds >= settings.decide_budget_s
        ceiling = self._counts_ceiling(cell, seconds)
        looks = settings.count_looks if ceiling > most else settings.looks
        if done not in looks and done < max(most, ceiling) and not spent:
            return True  # between looks: the look's rounds are measured whole
        # A pair with a side settled at an earlier look keeps what that look decided.
        pairs = [(a, b) for a, b in cell.pairs() if not (a.settled or b.settled)]
        settled = self._settled(cell)
        open_by_pair = self._open_comparisons(pairs, settled)
        still = [line for lines in open_by_pair for line in lines]
        counting: list[str] = []
        if still and most <= done < ceiling and not spent:
            # past the last look of the rest, only open counts go on
            open_by_pair = self._open_comparisons(pairs, settled, counts_only=True)
            counting = [line for lines in open_by_pair for line in lines]
        look = f"look {look_number(looks, done)} of {len(looks)}"
        going = [run for run in cell.runs if not run.settled]
        shared = f"; {len(settled)} settled by the caller" if settled else ""
        decided = f"decided at {done} processes a side ({look}, {seconds:.0f} s{shared})"
        if not still:
            extent = decided
        elif (done >= most and not counting) or spent:
            why = "the most allowed"
            if spent:  # before the most, or past it where open counts went on
                why = f"the time budget of {settings.decide_budget_s:.3g} s spent"
            elif ceiling < settings.count_looks[-1]:
                budget = settings.decide_budget_s or COUNT_SECONDS
                why = f"the most allowed, and the counts' time budget of {budget:g} s a side spent"
            shown = "; ".join(still[:3]) + (f"; {len(still) - 3} more" if len(still) > 3 else "")
            took = f"({why}, {look}, {seconds:.0f} s)"
            extent = f"undecided after {done} processes a side {took}: {shown}"
        else:
            # Only the sides of open comparisons go on: a decided pair's would measure for nothing.
            open_pairs = [pair for pair, lines in zip(pairs, open_by_pair, strict=True) if lines]
            open_runs = [run for pair in open_pairs for run in pair]
            for run in going:
                if all(run is not other for other in open_runs):
                    run.settled = run.extent = decided
            left = sum(not run.settled for run in cell.runs)
            sides = f" for {left} of {len(cell.runs)} sides" if left < len(cell.runs) else ""
            most = max(most, ceiling)
            rounds = f"{next_look(looks, done) - done} more rounds{sides} (at most {most} a side)"
            opened = f"{len(still)} comparison(s) open ({still[0]})"
            self.progress(f"{cell.head} · {look}: {opened}: {rounds}")
            return True
        if done > settings.processes or still:
            self.progress(f"{cell.head} · {extent}")
        for run in going:
            run.extent = extent
        return False
